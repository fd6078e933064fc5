/* What `portent bench tune`'s files share: one search's results (its curve, wall clock and
 * time split), the results directory that makes the benchmark resumable and splittable
 * (records log, stats and library baselines per workload), and the report table. */
#ifndef PORTENT_CLI_BENCH_TUNE_H
#define PORTENT_CLI_BENCH_TUNE_H

#include <stdbool.h>

#include "compiler.h"

#define BT_MAX_CHECKS 8

/* One (workload, model) search, possibly collected over several invocations. */
typedef struct {
  char workload[64], model[256]; /* model: as --models names it (tlp:PATH included) */
  int n;              /* measurements */
  double *curve;      /* best seconds after each measurement (0 before the first success) */
  double *wall;       /* search wall seconds at each measurement, summed over invocations */
  double t_model, t_train, t_search, t_compile, t_measure, t_total; /* t_search includes predictions */
  double t_rerank;         /* a cascade's second model (inside t_model) */
  double n_scored, n_reranked; /* candidates the model scored; the second model re-ranked */
  int failed, threads;
} bt_run;

void bt_run_free(bt_run *r);

/* Files of a results directory: DIR/WORKLOAD_MODEL.jsonl (TVM records, appended at once),
 * DIR/WORKLOAD_MODEL.stats.json (times and the wall clock per measurement, rewritten
 * atomically after every round), DIR/WORKLOAD.baselines.json (library timings, one sample per
 * invocation that tuned the workload). */
void bt_log_path(char *out, size_t cap, const char *dir, const char *workload, const char *model);
/* Reads a stats file into r (times, wall clock, threads); absent file: 0 and r untouched. */
int bt_stats_load(const char *dir, bt_run *r, pt_diag *d);
int bt_stats_save(const char *dir, const bt_run *r, pt_diag *d);

/* Library baselines: samples of oneDNN (with reorders, native) and OpenBLAS seconds. */
typedef struct {
  int n;
  double dnnl[64], dnnl_native[64], blas[64];
  int threads;
} bt_baselines;
int bt_baselines_load(const char *dir, const char *workload, bt_baselines *b, pt_diag *d);
int bt_baselines_add(const char *dir, const char *workload, int threads, double dnnl, double dnnl_native, double blas,
                     pt_diag *d);
/* Medians (0 where no sample). */
void bt_baselines_median(const bt_baselines *b, double *dnnl, double *dnnl_native, double *blas);

/* Rebuilds a search's curve from its log (records in file order, this workload's only) and
 * its stats file; 1 when found, 0 when there is no log. */
int bt_run_load(const char *dir, const pc_program *p, const char *model, bt_run *r, pt_diag *d);

/* The report: one table row per run, grouped by workload (runs of one workload adjacent),
 * the efficiency columns (reach xgb's best, reach random@256), the time split, and the
 * geometric-mean speed against oneDNN per model and checkpoint over the matmul and 3x3
 * convolution workloads. */
typedef struct {
  const char *workload;
  double dnnl, dnnl_native, blas; /* seconds, 0 unknown */
  int n_baseline_samples;
} bt_libs;
void bt_report(bool json, int n_checks, const int *checks, int n_runs, const bt_run *runs, const bt_libs *libs);

#endif
