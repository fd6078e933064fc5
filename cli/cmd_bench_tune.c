/* portent bench tune: for every suite workload and a fixed seed, the best latency each cost
 * model reaches after 16, 64, 256 and 1000 measurements (configurable), beside oneDNN (with
 * its reorders, and native) and OpenBLAS measured in the same run; how many measurements and
 * how much wall time each model needs to reach xgb's best and random's best after 256; where
 * the time went. With --results DIR every search keeps its log and stats there and a rerun
 * continues it, so the hours-long full run can be split (--workloads, --models,
 * --max-measurements) and resumed; --report DIR prints the table from the files alone. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "bench_tune.h"
#include "blas_env.h"
#include "commands.h"
#include "tune_models.h"

#define MAX_MODELS 8

static bool listed(const char *list, const char *name) {
  if (!list) return true;
  size_t len = strlen(name);
  for (const char *hit = strstr(list, name); hit; hit = strstr(hit + 1, name))
    if ((hit == list || hit[-1] == ',') && (hit[len] == 0 || hit[len] == ',')) return true;
  return false;
}

#define NAME_LEN 256 /* a model (tlp:PATH), a checkpoint */

/* Splits "a,b" into out; -1 when an item is too long (a cut path would name another file). */
static int split_list(const char *s, char out[][NAME_LEN], int cap) {
  int n = 0;
  while (s && *s && n < cap) {
    const char *e = strchr(s, ',');
    size_t len = e ? (size_t)(e - s) : strlen(s);
    if (len >= NAME_LEN) return -1;
    memcpy(out[n], s, len);
    out[n++][len] = 0;
    s = e ? e + 1 : NULL;
  }
  return n;
}

/* The 1-minute load average (the VM is shared: figures taken under load are noisier). */
static double load_average(void) {
  FILE *f = fopen("/proc/loadavg", "r");
  double l = -1;
  if (f && fscanf(f, "%lf", &l) != 1) l = -1;
  if (f) fclose(f);
  return l;
}

static void usage(FILE *f) {
  fprintf(f, "usage: portent bench tune [--workloads a,b,...] [--models random,xgb] [--checkpoints 16,64,256,1000]\n"
             "       [--max-measurements N] [--results DIR] [--population P] [--generations G]\n"
             "       [--measure-per-round K] [--threads N] [--min-time SEC] [--wall-clock] [--seed S] [--target T.json]\n"
             "       [--svg-dir DIR] [--rerank-cold N] [--rerank-pool N] [--local-share F] [--cache-rule] [--min-reduction-tile N] [--baselines-only]\n"
             "       [--json]\n"
             "       portent bench tune --report DIR [--workloads ...] [--models ...] [--checkpoints ...] [--json]\n\n"
             "For each suite workload and model (seed fixed): best latency after each checkpoint's number of\n"
             "measurements; speed against oneDNN (with reorders; native beside) and OpenBLAS measured in the same\n"
             "run; measurements and wall seconds each model needs to reach xgb's best and random's best after 256;\n"
             "the search's time split (cost model, other search work, compilation, measurement); the geometric-mean\n"
             "speed against oneDNN over the matmul and 3x3 convolution workloads.\n"
             "  --results DIR          keep each search's records log and stats in DIR (WORKLOAD_MODEL.jsonl,\n"
             "                         .stats.json) and the library timings (WORKLOAD.baselines.json, median of the\n"
             "                         runs); a rerun continues every search from its log\n"
             "  --max-measurements N   stop each search at N measurements in all (rerun later with a larger N)\n"
             "  --wall-clock           with --threads 1, time candidates and libraries by the wall clock (default:\n"
             "                         the thread's CPU time, which other processes' time slices do not inflate)\n"
             "  --report DIR           tune nothing: print the table from DIR's files\n"
             "  --baselines-only       with --results: time the libraries once more (one more sample for the\n"
             "                         medians on a noisy machine), tune nothing, print the table\n"
             "  --log-dir DIR          as --results\n"
             "  --local-share F        share of each round measured among the unmeasured one-mutation neighbours of\n"
             "                         the 4 fastest measured candidates (default 0.5 when the search model is\n"
             "                         analytic, else 0)\n"
             "  --cache-rule           with --target: sample tile sizes with the cache rule (blocks fitting L1/L2;\n"
             "                         off by default: it did not help, docs/tuning.md)\n"
             "  --min-reduction-tile N sample tile sizes preferring an inner reduction tile (r1) of at least N\n"
             "                         (0 off, the default; docs/tuning.md)\n"
             "A model A+B is a cascade: B re-ranks the 2 x K candidates A ranks best each round (K per round);\n"
             "until 2 x K are measured, A's --rerank-cold N best (default 128; 0 off); after that A's --rerank-pool N\n"
             "best when N > 2 x K (default 128; 0 off).\n"
             "Defaults: models random,xgb; checkpoints 16,64,256,1000; population 2048, 4 generations, 16 measured\n"
             "per round (a learned model trains after each round).\n"
             "A quick run: --checkpoints 8,16,32 --population 256 --generations 2 --measure-per-round 8.\n");
}

typedef struct {
  const char *dir;
  bt_run *run;          /* the run being extended (prev: what the files held before) */
  double prev_total;    /* wall seconds of previous invocations */
  double base_total;    /* the tuner's t_total after resuming */
  pc_tuner *t;
  bt_run prev;
} saver;

/* Folds the tuner's statistics into the run (previous invocations' times added). */
static void fold(saver *s) {
  const pc_tune_stats *st = pc_tuner_stats(s->t);
  bt_run *r = s->run;
  int n_prev = s->prev.n;
  r->n = st->n_curve;
  r->curve = realloc(r->curve, sizeof(double) * (size_t)(r->n + 1));
  r->wall = realloc(r->wall, sizeof(double) * (size_t)(r->n + 1));
  memcpy(r->curve, st->curve, sizeof(double) * (size_t)r->n);
  for (int i = 0; i < r->n; i++) {
    if (i < n_prev) r->wall[i] = s->prev.wall[i];
    else if (i < st->n_resumed) r->wall[i] = s->prev_total; /* appended after the last stats write */
    else r->wall[i] = s->prev_total + st->curve_wall[i] - s->base_total;
  }
  r->t_model = s->prev.t_model + st->t_model;
  r->t_train = s->prev.t_train + st->t_train;
  r->t_rerank = s->prev.t_rerank + st->t_rerank;
  r->n_scored = s->prev.n_scored + (double)st->n_scored;
  r->n_reranked = s->prev.n_reranked + (double)st->n_reranked;
  r->t_search = s->prev.t_search + st->t_search;
  r->t_compile = s->prev.t_compile + st->t_compile;
  r->t_measure = s->prev.t_measure + st->t_measure;
  r->t_total = s->prev_total + st->t_total - s->base_total;
  r->failed = st->n_failed;
}

static int run_search(const pc_program *p, const char *model, const ptg_target *target, pc_tune_opts o,
                      double local_share, int limit, const char *dir, bt_run *r, pt_diag *d) {
  memset(r, 0, sizeof *r);
  snprintf(r->workload, sizeof r->workload, "%.63s", p->name);
  snprintf(r->model, sizeof r->model, "%.255s", model);
  r->threads = o.measure.threads;
  pc_cost_model cm, rerank;
  bool has_rerank = false;
  o.local_share = local_share < 0 ? tune_model_local_share(model) : local_share;
  if (tune_models_new(model, target, o.measure.threads, o.seed, &cm, &rerank, &has_rerank, d)) return EXIT_USAGE;
  o.rerank = has_rerank ? &rerank : NULL;
  o.rerank_top = 0; /* the second model re-ranks all 2 x K candidates the search keeps */
  o.trials = limit;
  char log[1024];
  saver s = {dir, r, 0, 0, NULL, {{0}}};
  snprintf(s.prev.workload, sizeof s.prev.workload, "%.63s", p->name);
  snprintf(s.prev.model, sizeof s.prev.model, "%.255s", model);
  int rc = 0;
  if (dir) {
    bt_log_path(log, sizeof log, dir, p->name, model);
    o.log_path = log;
    if ((rc = bt_stats_load(dir, &s.prev, d)) == 0 && s.prev.threads && s.prev.threads != o.measure.threads)
      rc = pt_fail(d, PT_ERR_INVALID, "%s: %s was searched on %d threads, this run uses %d (use another results directory)",
                   dir, log, s.prev.threads, o.measure.threads);
    s.prev_total = s.prev.t_total;
  }
  pc_tuner *t = rc ? NULL : pc_tuner_new(p, &cm, &o, d);
  s.t = t;
  if (t && dir && access(log, F_OK) == 0) {
    int n = pc_tuner_resume(t, log, NULL, NULL, NULL, d);
    if (n < 0) rc = n;
    /* Training on the resumed records is a cost of resuming, not of the search. */
    const pc_tune_stats *st = pc_tuner_stats(t);
    s.prev.t_model -= st->t_model, s.prev.t_train -= st->t_train, s.prev.t_rerank -= st->t_rerank;
    s.prev.n_scored -= (double)st->n_scored, s.prev.n_reranked -= (double)st->n_reranked;
    s.base_total = st->t_total;
  }
  if (!t) rc = rc ? rc : d->err ? d->err : PT_ERR_INVALID;
  int empty = 0;
  while (rc == 0 && pc_tuner_stats(t)->n_measured < limit) {
    int n = pc_tuner_round(t, d);
    if (n < 0) {
      rc = n;
      break;
    }
    fold(&s);
    if (dir && (rc = bt_stats_save(dir, r, d))) break;
    if (n == 0 && ++empty > 1) break; /* nothing new twice: the space is exhausted */
    if (n > 0) empty = 0;
  }
  if (t) fold(&s);
  pc_tuner_free(t);
  bt_run_free(&s.prev);
  cm.free(cm.self);
  if (has_rerank) rerank.free(rerank.self);
  return rc ? EXIT_FAILED : EXIT_OK;
}

int cmd_bench_tune(int argc, char **argv) {
  restart_without_forced_blas_core("bench", argc, argv);
  const char *only = NULL, *models_arg = "random,xgb", *checks_arg = "16,64,256,1000", *svg_dir = NULL, *target_path = NULL;
  const char *dir = NULL, *report_dir = NULL;
  bool json = false, baselines_only = false, cache_rule = false;
  int max_meas = 0;
  double local_share = -1; /* -1: each model's default (tune_model_local_share) */
  pc_tune_opts o;
  pc_tune_opts_default(&o);
  o.measure.threads = (int)sysconf(_SC_NPROCESSORS_ONLN);
  o.sketch.num_cores = o.measure.threads;
  /* 16 per round, not Ansor's 64: with 64 a learned model's first 64 measurements are
   * ranked before it has seen any, and the 16 and 64 checkpoints would show random picks. */
  o.measure_per_round = 16;
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i];
    bool v = i + 1 < argc;
    if (strcmp(a, "--help") == 0) {
      usage(stdout);
      return EXIT_OK;
    } else if (strcmp(a, "--workloads") == 0 && v) only = argv[++i];
    else if (strcmp(a, "--models") == 0 && v) models_arg = argv[++i];
    else if (strcmp(a, "--checkpoints") == 0 && v) checks_arg = argv[++i];
    else if (strcmp(a, "--max-measurements") == 0 && v) max_meas = atoi(argv[++i]);
    else if (strcmp(a, "--population") == 0 && v) o.population = atoi(argv[++i]);
    else if (strcmp(a, "--generations") == 0 && v) o.generations = atoi(argv[++i]);
    else if (strcmp(a, "--measure-per-round") == 0 && v) o.measure_per_round = atoi(argv[++i]);
    else if (strcmp(a, "--threads") == 0 && v) o.measure.threads = o.sketch.num_cores = atoi(argv[++i]);
    else if (strcmp(a, "--min-time") == 0 && v) o.measure.min_time_s = atof(argv[++i]);
    else if (strcmp(a, "--wall-clock") == 0) o.measure.cpu_clock = false;
    else if (strcmp(a, "--seed") == 0 && v) o.seed = strtoull(argv[++i], NULL, 10);
    else if (strcmp(a, "--rerank-cold") == 0 && v) o.rerank_cold = atoi(argv[++i]);
    else if (strcmp(a, "--rerank-pool") == 0 && v) o.rerank_pool = atoi(argv[++i]);
    else if (strcmp(a, "--local-share") == 0 && v) local_share = atof(argv[++i]);
    else if (strcmp(a, "--cache-rule") == 0) cache_rule = true;
    else if (strcmp(a, "--min-reduction-tile") == 0 && v) o.sketch.min_reduction_tile = atoi(argv[++i]);
    else if (strcmp(a, "--target") == 0 && v) target_path = argv[++i];
    else if (strcmp(a, "--svg-dir") == 0 && v) svg_dir = argv[++i];
    else if ((strcmp(a, "--results") == 0 || strcmp(a, "--log-dir") == 0) && v) dir = argv[++i];
    else if (strcmp(a, "--report") == 0 && v) report_dir = argv[++i];
    else if (strcmp(a, "--baselines-only") == 0) baselines_only = true;
    else if (strcmp(a, "--json") == 0) json = true;
    else {
      fprintf(stderr, "portent bench tune: unexpected argument '%s'\n", a);
      usage(stderr);
      return EXIT_USAGE;
    }
  }
  char models[MAX_MODELS][NAME_LEN], checks_s[BT_MAX_CHECKS][NAME_LEN];
  int n_models = split_list(models_arg, models, MAX_MODELS), n_checks = split_list(checks_arg, checks_s, BT_MAX_CHECKS);
  int checks[BT_MAX_CHECKS];
  for (int k = 0; k < n_checks; k++) {
    checks[k] = atoi(checks_s[k]);
    if (checks[k] < 1 || (k > 0 && checks[k] <= checks[k - 1])) {
      fprintf(stderr, "portent bench tune: --checkpoints must be increasing positive counts\n");
      return EXIT_USAGE;
    }
  }
  if (n_models < 1 || n_checks < 1 || o.population < 2 || o.measure.threads < 1 || max_meas < 0 ||
      o.sketch.min_reduction_tile < 0) {
    usage(stderr);
    return EXIT_USAGE;
  }
  if (report_dir) dir = report_dir;
  if (baselines_only && (!dir || report_dir)) {
    fprintf(stderr, "portent bench tune: --baselines-only needs --results DIR\n");
    return EXIT_USAGE;
  }
  if (dir && !report_dir && mkdir(dir, 0777) != 0 && access(dir, W_OK) != 0) {
    fprintf(stderr, "portent bench tune: cannot create or write %s\n", dir);
    return EXIT_USAGE;
  }
  pt_diag d = {0};
  ptg_target *target = NULL;
  if (target_path && !(target = ptg_target_load(target_path, &d))) {
    fprintf(stderr, "portent bench tune: %s\n", d.msg);
    return EXIT_USAGE;
  }
  if (target) tune_sketch_opts_from_target(target, cache_rule, &o.sketch);
  int limit = checks[n_checks - 1];
  if (max_meas > 0 && max_meas < limit) limit = max_meas;
  if (!json && !report_dir) {
    printf("seed %llu, %d threads, population %d, %d generations, %d measured per round, up to %d measurements; "
           "timed by %s; load average %.1f; OpenBLAS core %s\n",
           (unsigned long long)o.seed, o.measure.threads, o.population, o.generations, o.measure_per_round, limit,
           pc_measure_clock(o.measure.cpu_clock, o.measure.threads) == pt_cpu_now ? "CPU time" : "the wall clock",
           load_average(),
           pc_baseline_openblas_core());
    if (o.sketch.min_reduction_tile > 1 || o.sketch.cache_bytes[0] > 0 || o.sketch.cache_bytes[1] > 0)
      printf("tile rules: reduction tile >= %d, cache blocks %lld / %lld bytes\n", o.sketch.min_reduction_tile,
             (long long)o.sketch.cache_bytes[0], (long long)o.sketch.cache_bytes[1]);
    fflush(stdout);
  }
  int cap = pc_suite_count() * n_models, n_runs = 0, failures = 0;
  bt_run *runs = calloc((size_t)cap, sizeof(bt_run));
  bt_libs *libs = calloc((size_t)cap, sizeof(bt_libs));
  for (int w = 0; w < pc_suite_count(); w++) {
    const char *name = pc_suite_name(w);
    if (!listed(only, name)) continue;
    pc_program *p = pc_workload_build(name, &d);
    if (!p) {
      fprintf(stderr, "%s: %s\n", name, d.msg);
      failures++;
      continue;
    }
    double blas = 0, dnnl = 0, dnnl_native = 0;
    int n_samples = 0;
    if (!report_dir) {
      pt_diag bd = {0};
      if (pc_baseline_openblas(p, o.measure.threads, 0.3, o.measure.cpu_clock, &blas, &bd)) blas = 0;
      if (pc_baseline_onednn(p, o.measure.threads, 0.3, o.measure.cpu_clock, &dnnl, &dnnl_native, &bd)) dnnl = dnnl_native = 0;
      n_samples = 1;
      if (dir && bt_baselines_add(dir, name, o.measure.threads, dnnl, dnnl_native, blas, &d)) {
        fprintf(stderr, "portent bench tune: %s\n", d.msg);
        failures++;
      }
    }
    if (dir) {
      bt_baselines b;
      pt_diag_clear(&d);
      if (bt_baselines_load(dir, name, &b, &d) == 0 && b.n > 0) {
        bt_baselines_median(&b, &dnnl, &dnnl_native, &blas);
        n_samples = b.n;
      }
    }
    int first = n_runs;
    for (int m = 0; m < n_models; m++) {
      bt_run *r = &runs[n_runs];
      pt_diag_clear(&d);
      int rc = report_dir || baselines_only ? (bt_run_load(dir, p, models[m], r, &d) < 0 ? EXIT_FAILED : EXIT_OK)
                                            : run_search(p, models[m], target, o, local_share, limit, dir, r, &d);
      if (rc == EXIT_USAGE) {
        fprintf(stderr, "portent bench tune: %s\n", d.msg);
        pc_program_free(p);
        ptg_target_free(target);
        for (int i = 0; i < n_runs; i++) bt_run_free(&runs[i]);
        free(runs), free(libs);
        return EXIT_USAGE;
      }
      if (rc) {
        fprintf(stderr, "%s (%s): %s\n", name, models[m], d.msg);
        failures++;
      }
      if ((report_dir || baselines_only) && r->n == 0) {
        bt_run_free(r);
        continue;
      }
      libs[n_runs] = (bt_libs){pc_suite_name(w), dnnl, dnnl_native, blas, n_samples};
      n_runs++;
      if (!json && !report_dir && !baselines_only) {
        fprintf(stderr, "bench tune %s %s: %d measured, best %.4f ms\n", name, models[m], r->n,
                r->n ? r->curve[r->n - 1] * 1e3 : 0.0);
      }
    }
    if (svg_dir && n_runs > first) {
      char path[1024], title[128];
      snprintf(path, sizeof path, "%s/tune_%s.svg", svg_dir, name);
      snprintf(title, sizeof title, "%s: best latency against measurements", name);
      const char *names[MAX_MODELS];
      const double *series[MAX_MODELS];
      int n_points[MAX_MODELS];
      for (int m = first; m < n_runs; m++)
        names[m - first] = runs[m].model, series[m - first] = runs[m].curve, n_points[m - first] = runs[m].n;
      if (pc_tune_curve_svg(path, title, n_runs - first, names, n_points, series, &d)) {
        fprintf(stderr, "%s\n", d.msg);
        failures++;
      }
    }
    pc_program_free(p);
  }
  bt_report(json, n_checks, checks, n_runs, runs, libs);
  if (!json && !report_dir) printf("load average at the end: %.1f\n", load_average());
  for (int i = 0; i < n_runs; i++) bt_run_free(&runs[i]);
  free(runs), free(libs);
  ptg_target_free(target);
  return failures ? EXIT_FAILED : EXIT_OK;
}
