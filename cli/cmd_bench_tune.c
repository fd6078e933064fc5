/* portent bench tune: for every suite workload and a fixed seed, the best latency each cost
 * model reaches after 16, 64, 256 and 1000 measurements (configurable), beside oneDNN (with
 * its reorders, and native) and OpenBLAS measured in the same run; how many measurements and
 * how much wall time each model needs to reach the best the xgb model found; where the time
 * went (cost model, the rest of the search, compilation, measurement). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "blas_env.h"
#include "commands.h"
#include "compiler.h"
#include "tune_models.h"

#define MAX_MODELS 4
#define MAX_CHECKS 8


static bool listed(const char *list, const char *name) {
  if (!list) return true;
  size_t len = strlen(name);
  for (const char *hit = strstr(list, name); hit; hit = strstr(hit + 1, name))
    if ((hit == list || hit[-1] == ',') && (hit[len] == 0 || hit[len] == ',')) return true;
  return false;
}

static int split_list(const char *s, char out[][32], int cap) {
  int n = 0;
  while (s && *s && n < cap) {
    const char *e = strchr(s, ',');
    size_t len = e ? (size_t)(e - s) : strlen(s);
    if (len >= 32) len = 31;
    memcpy(out[n], s, len);
    out[n++][len] = 0;
    s = e ? e + 1 : NULL;
  }
  return n;
}

typedef struct {
  double at[MAX_CHECKS];
  double best;
  int n;
  double *curve, *wall;
  double t_model, t_search, t_compile, t_measure, t_total; /* t_search: excluding the model */
  int failed;
} model_run;

static void usage(FILE *f) {
  fprintf(f, "usage: portent bench tune [--workloads a,b,...] [--models random,xgb] [--checkpoints 16,64,256,1000]\n"
             "       [--population P] [--generations G] [--measure-per-round K] [--threads N] [--min-time SEC]\n"
             "       [--seed S] [--target T.json] [--svg-dir DIR] [--log-dir DIR] [--json]\n\n"
             "For each suite workload and model (seed fixed): best latency after each checkpoint's number of\n"
             "measurements; the ratio of the last to oneDNN (with reorders; native beside) and OpenBLAS measured\n"
             "in the same run; measurements and wall seconds each model needs to reach the best of xgb (or of\n"
             "the last model listed); the search's time split into cost model, other search work, compilation\n"
             "and measurement. --log-dir keeps each search's records (WORKLOAD_MODEL.jsonl).\n"
             "A model A+B is a cascade: B re-ranks A's 16 best each round.\n"
             "Defaults: models random,xgb; checkpoints 16,64,256,1000; population 2048.\n"
             "A quick run: --checkpoints 8,16,32 --population 256 --generations 2 --measure-per-round 8.\n");
}

int cmd_bench_tune(int argc, char **argv) {
  restart_without_forced_blas_core("bench", argc, argv);
  const char *only = NULL, *models_arg = "random,xgb", *checks_arg = "16,64,256,1000", *svg_dir = NULL, *target_path = NULL;
  const char *log_dir = NULL;
  bool json = false;
  pc_tune_opts o;
  pc_tune_opts_default(&o);
  o.measure.threads = (int)sysconf(_SC_NPROCESSORS_ONLN);
  o.sketch.num_cores = o.measure.threads;
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i];
    bool v = i + 1 < argc;
    if (strcmp(a, "--help") == 0) {
      usage(stdout);
      return EXIT_OK;
    } else if (strcmp(a, "--workloads") == 0 && v) only = argv[++i];
    else if (strcmp(a, "--models") == 0 && v) models_arg = argv[++i];
    else if (strcmp(a, "--checkpoints") == 0 && v) checks_arg = argv[++i];
    else if (strcmp(a, "--population") == 0 && v) o.population = atoi(argv[++i]);
    else if (strcmp(a, "--generations") == 0 && v) o.generations = atoi(argv[++i]);
    else if (strcmp(a, "--measure-per-round") == 0 && v) o.measure_per_round = atoi(argv[++i]);
    else if (strcmp(a, "--threads") == 0 && v) o.measure.threads = o.sketch.num_cores = atoi(argv[++i]);
    else if (strcmp(a, "--min-time") == 0 && v) o.measure.min_time_s = atof(argv[++i]);
    else if (strcmp(a, "--seed") == 0 && v) o.seed = strtoull(argv[++i], NULL, 10);
    else if (strcmp(a, "--target") == 0 && v) target_path = argv[++i];
    else if (strcmp(a, "--svg-dir") == 0 && v) svg_dir = argv[++i];
    else if (strcmp(a, "--log-dir") == 0 && v) log_dir = argv[++i];
    else if (strcmp(a, "--json") == 0) json = true;
    else {
      fprintf(stderr, "portent bench tune: unexpected argument '%s'\n", a);
      usage(stderr);
      return EXIT_USAGE;
    }
  }
  char models[MAX_MODELS][32], checks_s[MAX_CHECKS][32];
  int n_models = split_list(models_arg, models, MAX_MODELS), n_checks = split_list(checks_arg, checks_s, MAX_CHECKS);
  int checks[MAX_CHECKS];
  for (int k = 0; k < n_checks; k++) {
    checks[k] = atoi(checks_s[k]);
    if (checks[k] < 1 || (k > 0 && checks[k] <= checks[k - 1])) {
      fprintf(stderr, "portent bench tune: --checkpoints must be increasing positive counts\n");
      return EXIT_USAGE;
    }
  }
  if (n_models < 1 || n_checks < 1 || o.population < 2 || o.measure.threads < 1) {
    usage(stderr);
    return EXIT_USAGE;
  }
  pt_diag d = {0};
  ptg_target *target = NULL;
  if (target_path && !(target = ptg_target_load(target_path, &d))) {
    fprintf(stderr, "portent bench tune: %s\n", d.msg);
    return EXIT_USAGE;
  }
  if (target && target->native_vector_bits >= 64) o.sketch.vector_lanes = target->native_vector_bits / 32;
  o.trials = checks[n_checks - 1];
  int ref_model = n_models - 1; /* "reach" is measured against xgb's best, else the last model's */
  for (int m = 0; m < n_models; m++)
    if (strcmp(models[m], "xgb") == 0) ref_model = m;
  if (!json) {
    printf("seed %llu, %d threads, population %d, %d generations, %d measured per round\n", (unsigned long long)o.seed,
           o.measure.threads, o.population, o.generations, o.measure_per_round);
    printf("%-11s %-8s", "workload", "model");
    for (int k = 0; k < n_checks; k++) printf(" %8s@%-4d", "ms", checks[k]);
    printf(" %7s %7s %7s %6s %8s %7s %7s %7s %7s\n", "/dnnl", "/dnnl-n", "/blas", "reach", "reach-s", "model-s",
           "search-s", "comp-s", "meas-s");
  } else
    printf("[\n");
  int failures = 0, first_json = 1;
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
    pt_diag bd = {0};
    if (pc_baseline_openblas(p, o.measure.threads, 0.3, &blas, &bd)) blas = 0;
    if (pc_baseline_onednn(p, o.measure.threads, 0.3, &dnnl, &dnnl_native, &bd)) dnnl = dnnl_native = 0;
    model_run runs[MAX_MODELS];
    memset(runs, 0, sizeof runs);
    for (int m = 0; m < n_models; m++) {
      pc_cost_model cm, rerank;
      bool has_rerank = false;
      pt_diag_clear(&d);
      if (tune_models_new(models[m], target, o.seed, &cm, &rerank, &has_rerank, &d)) {
        fprintf(stderr, "portent bench tune: %s\n", d.msg);
        pc_program_free(p);
        ptg_target_free(target);
        return EXIT_USAGE;
      }
      o.rerank = has_rerank ? &rerank : NULL;
      char log_path[1024];
      if (log_dir) {
        snprintf(log_path, sizeof log_path, "%s/%s_%s.jsonl", log_dir, name, models[m]);
        unlink(log_path); /* a fresh search per run: the figures assume nothing resumed */
        o.log_path = log_path;
      }
      if (o.rerank_top <= 0) o.rerank_top = 16;
      pc_tuner *t = pc_tuner_new(p, &cm, &o, &d);
      if (!t || pc_tuner_run(t, &d)) {
        fprintf(stderr, "%s (%s): %s\n", name, models[m], d.msg);
        failures++;
      }
      if (t) {
        const pc_tune_stats *st = pc_tuner_stats(t);
        model_run *r = &runs[m];
        r->n = st->n_curve;
        r->curve = malloc(sizeof(double) * (size_t)(r->n + 1));
        r->wall = malloc(sizeof(double) * (size_t)(r->n + 1));
        memcpy(r->curve, st->curve, sizeof(double) * (size_t)r->n);
        memcpy(r->wall, st->curve_wall, sizeof(double) * (size_t)r->n);
        for (int k = 0; k < n_checks; k++) r->at[k] = checks[k] <= r->n ? r->curve[checks[k] - 1] : (r->n ? r->curve[r->n - 1] : 0);
        r->best = st->best_s;
        r->t_model = st->t_model, r->t_search = st->t_search - (st->t_model - st->t_train), r->t_compile = st->t_compile, r->t_measure = st->t_measure;
        r->t_total = st->t_total;
        r->failed = st->n_failed;
      }
      pc_tuner_free(t);
      cm.free(cm.self);
      if (has_rerank) rerank.free(rerank.self);
    }
    double goal = runs[ref_model].best;
    for (int m = 0; m < n_models; m++) {
      model_run *r = &runs[m];
      int reach = -1;
      for (int i = 0; i < r->n && goal > 0; i++)
        if (r->curve[i] > 0 && r->curve[i] <= goal) {
          reach = i;
          break;
        }
      double last = r->at[n_checks - 1];
      if (json) {
        printf("%s {\"workload\": \"%s\", \"model\": \"%s\", \"best_ms\": [", first_json ? "" : ",", name, models[m]);
        for (int k = 0; k < n_checks; k++) printf("%s%.6g", k ? ", " : "", r->at[k] * 1e3);
        printf("], \"checkpoints\": [");
        for (int k = 0; k < n_checks; k++) printf("%s%d", k ? ", " : "", checks[k]);
        printf("], \"onednn_ms\": %.6g, \"onednn_native_ms\": %.6g, \"openblas_ms\": %.6g, \"failed\": %d,\n"
               "  \"reach_measurements\": %d, \"reach_seconds\": %.3f, \"seconds\": {\"model\": %.3f, \"search\": %.3f, "
               "\"compile\": %.3f, \"measure\": %.3f, \"total\": %.3f}}\n",
               dnnl * 1e3, dnnl_native * 1e3, blas * 1e3, r->failed, reach >= 0 ? reach + 1 : -1,
               reach >= 0 ? r->wall[reach] : -1.0, r->t_model, r->t_search, r->t_compile, r->t_measure, r->t_total);
        first_json = 0;
      } else {
        printf("%-11s %-8s", m == 0 ? name : "", models[m]);
        for (int k = 0; k < n_checks; k++) printf(" %13.4f", r->at[k] * 1e3);
        printf(" %7.2f %7.2f %7.2f", last > 0 && dnnl > 0 ? last / dnnl : 0, last > 0 && dnnl_native > 0 ? last / dnnl_native : 0,
               last > 0 && blas > 0 ? last / blas : 0);
        if (reach >= 0) printf(" %6d %8.1f", reach + 1, r->wall[reach]);
        else printf(" %6s %8s", "-", "-");
        printf(" %7.1f %7.1f %7.1f %7.1f\n", r->t_model, r->t_search, r->t_compile, r->t_measure);
      }
    }
    if (!json)
      printf("%-11s %-8s oneDNN %.4f ms (native %.4f), OpenBLAS %.4f ms\n", "", "", dnnl * 1e3, dnnl_native * 1e3, blas * 1e3);
    fflush(stdout);
    if (svg_dir) {
      char path[1024], title[128];
      snprintf(path, sizeof path, "%s/tune_%s.svg", svg_dir, name);
      snprintf(title, sizeof title, "%s: best latency against measurements", name);
      const char *names[MAX_MODELS];
      const double *series[MAX_MODELS];
      int n_points[MAX_MODELS];
      for (int m = 0; m < n_models; m++) names[m] = models[m], series[m] = runs[m].curve, n_points[m] = runs[m].n;
      if (pc_tune_curve_svg(path, title, n_models, names, n_points, series, &d)) {
        fprintf(stderr, "%s\n", d.msg);
        failures++;
      }
    }
    for (int m = 0; m < n_models; m++) free(runs[m].curve), free(runs[m].wall);
    pc_program_free(p);
  }
  if (json) printf("]\n");
  else
    printf("columns: ms@N = best latency after N measurements; /dnnl, /dnnl-n, /blas = last checkpoint's latency\n"
           "over oneDNN with reorders, oneDNN native, OpenBLAS (below 1 = faster); reach = measurements (and wall s)\n"
           "to reach %s's best; model-s = cost model (predict + train), search-s = the rest of the search,\n"
           "comp-s = lowering + JIT, meas-s = running the candidates.\n", models[ref_model]);
  ptg_target_free(target);
  return failures ? EXIT_FAILED : EXIT_OK;
}
