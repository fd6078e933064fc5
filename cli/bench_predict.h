/* `portent bench predict` internals shared by its files: the candidate set (measured time,
 * profile and steps per candidate, grouped by workload), the report of predicted against
 * measured, the saved sets that cross-generation validation reads, and the llvm-mca comparison. */
#ifndef PORTENT_CLI_BENCH_PREDICT_H
#define PORTENT_CLI_BENCH_PREDICT_H

#include <stdbool.h>

#include "analyzer.h"
#include "common.h"
#include "compiler.h"
#include "targets.h"

#define BP_PRESETS 31
#define BP_HEADLINE 30 /* steady+bw+overlap+strides+lanes+sets+carried+shared+far+busy+forward+dirty+llcwalk+regs+memchain+setsum+streams+setloads: the default model */
const char *bp_preset_name(int k);

typedef struct {
  const char *name;   /* workload spec (owned by the set's arena) */
  int n, cap;
  double *meas;       /* measured seconds: the median of the repeats */
  double *meas_min;   /* the fastest repeat (NAN when the record does not say) */
  int *repeats;
  pa_profile **prof;  /* owned unless the set borrows them (cross) */
  const char **steps; /* steps JSON in record encoding */
  const char **record;/* the TVM record line with portent's extras (NULL when loaded for cross) */
  int *candidate;     /* position in the bench's sequence of attempts (0 = the default schedule) */
  double *pred[BP_PRESETS];
} bp_workload;

typedef struct {
  pt_arena *arena;
  int nw;
  bp_workload w[64];
  int threads;
  bool borrowed;      /* profiles belong to another set */
  bool cpu_clock;     /* one-thread runs timed by the thread's CPU time ("clock": "cpu" in the records) */
} bp_set;

bp_set *bp_set_new(void);
void bp_set_free(bp_set *s);
bp_workload *bp_set_workload(bp_set *s, const char *name); /* finds or adds */
void bp_set_add(bp_set *s, bp_workload *w, int candidate, double meas, pa_profile *p, const char *steps,
                const char *record);
/* The fastest repeat and the repeat count of the candidate just added. */
void bp_set_add_spread(bp_workload *w, double min_s, int repeats);
/* Replaces each median by the fastest repeat where the records give it (--truth min);
 * returns how many candidates had one. */
int bp_set_use_min(bp_set *s);

/* Writes DIR/target.json (a copy of target_path), DIR/records.jsonl (one TVM record per
 * candidate, with "portent": {platform, workload, candidate, threads}) and
 * (and min_s, repeats when measured); DIR/profiles.jsonl.gz (one {"workload","candidate","profile"} line per candidate). */
int bp_save(const bp_set *s, const char *dir, const char *platform, const char *target_path, pt_diag *d);
/* A record line (TVM layout) with "portent": {platform, workload, candidate, threads[, min_s,
 * repeats]} added before its closing brace, then `more` (", \"key\": value ..." or NULL) inside
 * it; the caller frees it (NULL when the line has no closing brace). */
char *bp_record_line(const char *line, const char *platform, const char *workload, int candidate, int threads,
                     double min_s, int repeats, const char *more);
/* mkdir -p. */
int bp_mkdir_p(const char *dir, pt_diag *d);
/* --merge-rounds: the comma-separated saved sets DIRS are rounds of one set's schedules; writes to
 * SAVE a set whose records hold each candidate's median over the rounds (each round's figure
 * under "portent": {"rounds": [...]}), the rounds' target.json and each candidate's profile from
 * the first round that has it (every round keeps the replayed set's own, --measure-only),
 * and prints the round-to-round Spearman within each workload. Returns an exit code. */
int bp_merge_rounds(const char *dirs, const char *save, const char *platform, bool json);
/* Rewrites only DIR/profiles.jsonl.gz (atomically): after --restatic, the measured side stays. */
int bp_save_profiles(const bp_set *s, const char *dir, pt_diag *d);
/* Reads a saved set; with profiles false only records (the measured side). */
bp_set *bp_load(const char *dir, bool profiles, pt_diag *d);
/* Applies a saved schedule (steps JSON, record encoding) to a fresh state of its workload; 0 or an
 * error code with d set. */
int bp_apply_steps(pc_state *s, const char *steps_json, pt_diag *d);
/* Gives each saved profile today's static per-access fields (strides) without running: from
 * ir_dir/WORKLOAD_CANDIDATE.ll when ir_dir has it (the module as the set's portent version
 * lowered it), else by lowering the schedule again; only where the code is the same as the
 * profile's (functions, blocks, opcodes). Returns how many profiles were updated. */
int bp_restatic(bp_set *s, const char *ir_dir, bool verbose);
/* Profiles each saved schedule again with today's analyzer (the set's threads, each old profile's
 * SHARDS rate and line filter) in place of its saved profile; a schedule that fails keeps its own.
 * Returns how many profiles were made. */
int bp_reprofile(bp_set *s, bool verbose);
/* The k fastest distinct valid schedules (steps JSON, caller frees each and the array) of the
 * workload with this key in the comma-separated tuning logs; *n may be less than k. NULL with
 * d set when a log cannot be read. */
#define BP_TUNED_FIRST 1000 /* candidate number of the first tuned schedule of a workload */
char **bp_tuned_steps(const char *logs, const char *key, int k, int *n, pt_diag *d);
/* A saved set's directory from a name (data/predict/NAME in the source tree) or a path. */
void bp_set_dir(const char *name, char *buf, size_t cap);

typedef struct {
  bool json;
  const char *svg;
  int worst;               /* print the K candidates with the largest |log(pred/meas)| */
  const char *tsv;         /* per-candidate measured and predicted seconds of every preset (NULL: none) */
  const char *split;       /* comma-separated workloads: every preset on them and on the others (NULL: none) */
  const char *pairs;       /* a workload whose misordered pairs and tie groups to print (NULL: none) */
  double prof_seconds;     /* profiling figures of the collecting run (0: none) */
  int n_profiled;
  double counts_seconds;
  int counts_n;
  int failed;
  const char *title;       /* first line (text output) */
} bp_report_opts;
/* Predicts every candidate with every preset on target t and prints the metrics; returns
 * an exit code. */
int bp_report(const ptg_target *t, bp_set *s, const bp_report_opts *o);

/* --pairs W (bench_predict_pairs.c): workload W's pairs that the default model orders against the
 * measured times, by class (measured within 5%, predicted within 3%, the rest), the candidates in
 * most of them, and its tie groups with the Spearman that keeping them tied allows at best. Needs
 * the set's default predictions (bp_report fills them); EXIT_USAGE when W is not in the set. */
int bp_print_pairs(const bp_set *s, const char *name);

/* llvm-mca-19 against the pipeline simulator on the innermost loop bodies of each workload's
 * first `per_workload` candidates; prints a table and a summary. */
int bp_mca(const ptg_target *t, const bp_set *s, int per_workload, bool json);

#endif
