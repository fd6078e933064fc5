/* The table `portent bench tune` prints (also from a results directory alone, --report):
 * best latency per checkpoint, speed against oneDNN and OpenBLAS, search efficiency (the
 * measurements and wall seconds to reach xgb's best and random's 256-measurement best, as the
 * TLP paper counts them), the time split, and the geometric-mean speed against oneDNN over
 * the matmul and 3x3 convolution workloads that issue 14's target is stated on. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "bench_tune.h"

/* Issue 14's target set: the matmul and 3x3 convolution workloads of the suite. */
static const char *const target_set[] = {"mm512",      "mm1024",     "bert_qkv",   "bert_ffn1",
                                         "conv_r50_2", "conv_r50_3", "conv_r50_4", "conv_r50_5"};
#define N_TARGET_SET (int)(sizeof target_set / sizeof target_set[0])

static bool in_target_set(const char *w) {
  for (int i = 0; i < N_TARGET_SET; i++)
    if (strcmp(w, target_set[i]) == 0) return true;
  return false;
}

/* Best after `k` measurements, 0 when the run has fewer or nothing ran correctly yet. */
static double at(const bt_run *r, int k) { return k >= 1 && k <= r->n ? r->curve[k - 1] : 0; }

/* The largest checkpoint the run reached (index), -1 if none. */
static int last_check(const bt_run *r, int n_checks, const int *checks) {
  int k = -1;
  for (int i = 0; i < n_checks; i++)
    if (checks[i] <= r->n) k = i;
  return k;
}

/* First measurement (1-based) whose best is at or below goal; -1 if never. */
static int reach(const bt_run *r, double goal) {
  if (goal <= 0) return -1;
  for (int i = 0; i < r->n; i++)
    if (r->curve[i] > 0 && r->curve[i] <= goal * (1 + 1e-9)) return i + 1;
  return -1;
}

typedef struct {
  double goal;
  int n; /* measurements the goal was taken at */
} goal_t;

/* xgb's best at its last measurement, and random's best at 256 measurements (or at its
 * last, when it has fewer). */
static void goals(int n_runs, const bt_run *runs, const char *w, goal_t *xgb, goal_t *rnd) {
  xgb->goal = rnd->goal = 0, xgb->n = rnd->n = 0;
  for (int i = 0; i < n_runs; i++) {
    const bt_run *r = &runs[i];
    if (strcmp(r->workload, w) != 0 || r->n == 0) continue;
    if (strcmp(r->model, "xgb") == 0) xgb->goal = r->curve[r->n - 1], xgb->n = r->n;
    if (strcmp(r->model, "random") == 0) {
      rnd->n = r->n < 256 ? r->n : 256;
      rnd->goal = r->curve[rnd->n - 1];
    }
  }
}

static const bt_libs *libs_of(int n_runs, const bt_libs *libs, const char *w) {
  for (int i = 0; i < n_runs; i++)
    if (libs[i].workload && strcmp(libs[i].workload, w) == 0) return &libs[i];
  return NULL;
}

/* Candidates scored per second of prediction (both models of a cascade); 0 unknown. */
static double ranked_per_s(const bt_run *r) {
  double t = r->t_model - r->t_train;
  return t > 0 ? (r->n_scored + r->n_reranked) / t : 0;
}

static double ratio(double lib, double ours) { return lib > 0 && ours > 0 ? lib / ours : 0; }

static void print_reach(const bt_run *r, double goal) {
  int k = reach(r, goal);
  if (k > 0) printf(" %5d %7.1f", k, r->wall[k - 1]);
  else printf(" %5s %7s", "-", "-");
}

static void json_reach(const char *key, const bt_run *r, const goal_t *g) {
  int k = reach(r, g->goal);
  printf(", \"%s\": {\"goal_ms\": %.6g, \"goal_measurements\": %d, \"measurements\": %d, \"seconds\": %.3f}", key,
         g->goal * 1e3, g->n, k, k > 0 ? r->wall[k - 1] : -1.0);
}

/* Geometric mean of oneDNN's time over ours at checkpoint k, per model, over the target set. */
static void geomeans(int n_checks, const int *checks, int n_runs, const bt_run *runs, const bt_libs *libs, bool json) {
  const char *models[16];
  int n_models = 0;
  for (int i = 0; i < n_runs; i++) {
    bool seen = false;
    for (int m = 0; m < n_models; m++) seen |= strcmp(models[m], runs[i].model) == 0;
    if (!seen && n_models < 16) models[n_models++] = runs[i].model;
  }
  if (!json) printf("geometric-mean speed against oneDNN over the matmul and 3x3 conv workloads run (x, higher is faster;\n"
                    "with reorders / native layout; [workloads counted]):\n");
  for (int m = 0; m < n_models; m++) {
    if (!json) printf("  %-14s", models[m]);
    else printf("%s\"%s\": [", m ? ", " : "", models[m]);
    for (int c = 0; c < n_checks; c++) {
      double lg = 0, lgn = 0;
      int cnt = 0;
      for (int i = 0; i < n_runs; i++) {
        const bt_run *r = &runs[i];
        const bt_libs *l = libs_of(n_runs, libs, r->workload);
        if (strcmp(r->model, models[m]) != 0 || !in_target_set(r->workload) || !l || l->dnnl <= 0 || at(r, checks[c]) <= 0)
          continue;
        lg += log(l->dnnl / at(r, checks[c]));
        lgn += log((l->dnnl_native > 0 ? l->dnnl_native : l->dnnl) / at(r, checks[c]));
        cnt++;
      }
      if (json)
        printf("%s{\"checkpoint\": %d, \"workloads\": %d, \"speed\": %.4f, \"speed_native\": %.4f}", c ? ", " : "", checks[c],
               cnt, cnt ? exp(lg / cnt) : 0.0, cnt ? exp(lgn / cnt) : 0.0);
      else if (cnt) printf("  @%d %.3f / %.3f [%d]", checks[c], exp(lg / cnt), exp(lgn / cnt), cnt);
      else printf("  @%d -", checks[c]);
    }
    if (json) printf("]");
    else printf("\n");
  }
}

void bt_report(bool json, int n_checks, const int *checks, int n_runs, const bt_run *runs, const bt_libs *libs) {
  if (json) printf("{\"runs\": [\n");
  else {
    printf("%-11s %-13s", "workload", "model");
    for (int k = 0; k < n_checks; k++) printf(" %7s@%-4d", "ms", checks[k]);
    printf(" %6s %7s %6s %5s %7s %5s %7s %7s %7s %7s %7s %8s\n", "xdnnl", "xdnnl-n", "xblas", "rX", "rX-s", "rR", "rR-s",
           "model-s", "search-s", "comp-s", "meas-s", "ranked/s");
  }
  for (int i = 0; i < n_runs; i++) {
    const bt_run *r = &runs[i];
    const bt_libs *l = libs_of(n_runs, libs, r->workload);
    bt_libs none = {0};
    if (!l) l = &none;
    goal_t gx, gr;
    goals(n_runs, runs, r->workload, &gx, &gr);
    int lc = last_check(r, n_checks, checks);
    double last = lc >= 0 ? at(r, checks[lc]) : (r->n ? r->curve[r->n - 1] : 0);
    bool first = i == 0 || strcmp(runs[i - 1].workload, r->workload) != 0;
    if (json) {
      printf("%s {\"workload\": \"%s\", \"model\": \"%s\", \"measured\": %d, \"failed\": %d, \"best_ms\": [", i ? "," : "",
             r->workload, r->model, r->n, r->failed);
      for (int k = 0; k < n_checks; k++) printf("%s%.6g", k ? ", " : "", at(r, checks[k]) * 1e3);
      printf("], \"checkpoints\": [");
      for (int k = 0; k < n_checks; k++) printf("%s%d", k ? ", " : "", checks[k]);
      printf("], \"onednn_ms\": %.6g, \"onednn_native_ms\": %.6g, \"openblas_ms\": %.6g", l->dnnl * 1e3,
             l->dnnl_native * 1e3, l->blas * 1e3);
      json_reach("reach_xgb_best", r, &gx);
      json_reach("reach_random_256", r, &gr);
      printf(",\n  \"scored\": %.0f, \"reranked\": %.0f, \"ranked_per_second\": %.1f, \"rerank_per_second\": %.2f,\n"
             "  \"seconds\": {\"model\": %.3f, \"train\": %.3f, \"rerank\": %.3f, \"search\": %.3f, \"compile\": %.3f, "
             "\"measure\": %.3f, \"total\": %.3f}}\n",
             r->n_scored, r->n_reranked, ranked_per_s(r), r->t_rerank > 0 ? r->n_reranked / r->t_rerank : 0.0, r->t_model,
             r->t_train, r->t_rerank, r->t_search - (r->t_model - r->t_train), r->t_compile, r->t_measure, r->t_total);
      continue;
    }
    printf("%-11s %-13s", first ? r->workload : "", r->model);
    for (int k = 0; k < n_checks; k++) {
      if (at(r, checks[k]) > 0) printf(" %11.4f", at(r, checks[k]) * 1e3);
      else printf(" %11s", "-");
    }
    printf(" %6.2f %7.2f %6.2f", ratio(l->dnnl, last), ratio(l->dnnl_native, last), ratio(l->blas, last));
    print_reach(r, gx.goal);
    print_reach(r, gr.goal);
    printf(" %7.1f %7.1f %7.1f %7.1f %8.0f\n", r->t_model, r->t_search - (r->t_model - r->t_train), r->t_compile, r->t_measure,
           ranked_per_s(r));
    if (r->n_reranked > 0)
      printf("%-11s   the cascade's second model re-ranked %.0f candidates in %.1f s: %.2f per second\n", "", r->n_reranked,
             r->t_rerank, r->t_rerank > 0 ? r->n_reranked / r->t_rerank : 0.0);
    bool last_of_w = i + 1 == n_runs || strcmp(runs[i + 1].workload, r->workload) != 0;
    if (last_of_w)
      printf("%-11s oneDNN %.4f ms (native %.4f), OpenBLAS %.4f ms [median of %d]; rX: xgb@%d %.4f ms, rR: random@%d %.4f ms\n",
             "", l->dnnl * 1e3, l->dnnl_native * 1e3, l->blas * 1e3, l->n_baseline_samples, gx.n, gx.goal * 1e3, gr.n,
             gr.goal * 1e3);
  }
  if (json) {
    printf("],\n\"geomean_speed_vs_onednn\": {");
    geomeans(n_checks, checks, n_runs, runs, libs, true);
    printf("}}\n");
    return;
  }
  printf("columns: ms@N = best latency after N measurements (- not reached); xdnnl, xdnnl-n, xblas = speed against\n"
         "oneDNN with its reorders, oneDNN native, OpenBLAS at the last checkpoint reached (library time / ours, above 1\n"
         "= faster); rX, rR = measurements (and search wall s) to reach xgb's best / random's best after 256; model-s =\n"
         "cost model (predict + train), search-s = the rest of the search, comp-s = lowering + JIT, meas-s = running;\n"
         "ranked/s = candidates the model(s) scored per second of prediction.\n");
  geomeans(n_checks, checks, n_runs, runs, libs, false);
}
