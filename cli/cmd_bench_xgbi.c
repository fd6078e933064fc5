/* portent bench xgbi: the second seed's protocol on a TVM log (docs/learning.md, "XGBoost with
 * feature importance"): importance pre-fitted offline on the first --start records, then xgb
 * and xgb-imp (pruned + redistributed) retrained as the training set grows by --step records,
 * tested on the last --test-fraction of the records: TOP-k, MAE, RMSE, time per round, and a
 * sweep of the pruning threshold with the two halves of the method apart. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "commands.h"
#include "compiler.h"
#include "learned.h"

static void usage(FILE *f) {
  fprintf(f, "usage: portent bench xgbi --data records.jsonl [--start 3840] [--step 128] [--test-fraction 0.2]\n"
             "       [--order record|interleave] [--threshold 0.01] [--thresholds 0,0.01,0.02,0.05,0.1,0.2]\n"
             "       [--boost-rounds 60] [--max-rounds N] [--json]\n\n"
             "  --data F          TVM auto_scheduler log (portent dataset collect); records whose workload\n"
             "                    portent cannot build or whose steps do not replay are skipped and counted\n"
             "  --start N         training records of the first round, also those the importance is\n"
             "                    pre-fitted on (default 3840, the seed's)\n"
             "  --step N          records added per round (default 128)\n"
             "  --test-fraction F the last F of the records are the test set (default 0.2)\n"
             "  --order O         record: file order (default); interleave: round-robin over workloads\n"
             "                    first, so every workload is in both training and test sets\n"
             "  --threshold T     pruning threshold of the per-round xgb-imp (default 0.01)\n"
             "  --thresholds L    thresholds swept at the final training size\n"
             "  --boost-rounds N  XGBoost rounds per training (default 60, as the tuner's xgb)\n"
             "  --max-rounds N    stop after N rounds (default: until the training records run out)\n"
             "  --json            print the results as JSON\n");
}

typedef struct {
  double top[3]; /* k = 32, 64, 128 */
  double mae, rmse;
} metrics;
static const int top_k[3] = {32, 64, 128};

typedef struct {
  const double *score;
  int i;
} ranked;

static int by_score(const void *a, const void *b) {
  const ranked *x = a, *y = b;
  double s = x->score[x->i], t = y->score[y->i];
  return s < t ? 1 : s > t ? -1 : x->i - y->i; /* best first; ties in record order */
}

/* Average-peak TOP-k per test workload, averaged over workloads; MAE/RMSE over programs that ran. */
static metrics evaluate(const pp_xgb_data *dd, int p0, const pp_xgb_view *test, const double *score) {
  metrics m = {0};
  int n = test->n_prog, n_ok = 0, n_w = 0;
  ranked *order = malloc(sizeof *order * (size_t)(n + 1));
  for (int w = 0; w < dd->n_keys; w++) {
    int c = 0;
    for (int i = 0; i < n; i++)
      if (dd->workload[p0 + i] == w) order[c++] = (ranked){score, i};
    double best = 0;
    for (int j = 0; j < c; j++) best = fmax(best, test->label[order[j].i]);
    if (c == 0 || best <= 0) continue;
    qsort(order, (size_t)c, sizeof *order, by_score);
    for (int t = 0; t < 3; t++) {
      int k = top_k[t] < c ? top_k[t] : c;
      double peak = 0, sum = 0;
      for (int j = 0; j < k; j++) {
        peak = fmax(peak, test->label[order[j].i]);
        sum += peak / best;
      }
      m.top[t] += sum / k;
    }
    n_w++;
  }
  for (int t = 0; t < 3; t++) m.top[t] = n_w ? m.top[t] / n_w : 0;
  for (int i = 0; i < n; i++)
    if (test->label[i] > 0) {
      double e = score[i] - test->label[i];
      m.mae += fabs(e), m.rmse += e * e, n_ok++;
    }
  m.mae = n_ok ? m.mae / n_ok : 0;
  m.rmse = n_ok ? sqrt(m.rmse / n_ok) : 0;
  free(order);
  return m;
}

/* CPU seconds of this process: training runs on one thread (pp_xgb_opts), and on a shared
 * machine CPU time says what the model costs where wall time says what else ran. */
static double cpu_now(void) {
  struct timespec t;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
  return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* Trains on programs [0, n_train), predicts the test set; *train_s gets the training time. */
static int run_model(const pp_xgb_opts *o, const pp_xgb_data *dd, int n_train, int p0, const pp_xgb_view *test,
                     const pp_xgb_fit_opts *f, metrics *m, double *train_s, pt_diag *d) {
  pp_xgb_view v;
  pp_xgb_data_view(dd, 0, n_train, &v);
  pp_xgb_booster *b = NULL;
  double t0 = cpu_now();
  int rc = pp_xgb_fit(o, &v, f, &b, d);
  *train_s = cpu_now() - t0;
  pp_xgb_view_release(&v);
  if (!rc && !b) rc = pt_fail(d, PT_ERR_INPUT, "no training record ran (no positive label)");
  double *score = calloc((size_t)test->n_prog + 1, sizeof(double));
  if (!rc) rc = pp_xgb_booster_predict(b, test->X, test->row_prog, test->n_rows, test->n_prog, score, d);
  if (!rc) *m = evaluate(dd, p0, test, score);
  free(score);
  pp_xgb_booster_free(b);
  return rc;
}

static void print_metrics(FILE *f, const metrics *m, bool json) {
  if (json) fprintf(f, "\"top32\": %.4f, \"top64\": %.4f, \"top128\": %.4f, \"mae\": %.4f, \"rmse\": %.4f", m->top[0], m->top[1],
                    m->top[2], m->mae, m->rmse);
  else fprintf(f, "%7.3f %7.3f %7.3f %7.3f %7.3f", m->top[0], m->top[1], m->top[2], m->mae, m->rmse);
}

/* One row of the sweep: a model trained on the first n_train records. */
static int sweep_row(FILE *out, bool json, const pp_xgb_opts *o, const pp_xgb_data *dd, int n_train, int pool,
                     const pp_xgb_view *test, const char *name, const char *threshold, const unsigned char *keep,
                     const double *share, bool first, pt_diag *d) {
  pp_xgb_fit_opts fo = {keep, share};
  int kept = 0;
  for (int f = 0; f < PP_FEATURES_PER_STORE; f++) kept += !keep || keep[f];
  metrics m;
  double ts;
  int rc = run_model(o, dd, n_train, pool, test, &fo, &m, &ts, d);
  if (rc) return rc;
  if (json) {
    char t[32] = "null";
    if (strcmp(threshold, "-") != 0) snprintf(t, sizeof t, "%g", atof(threshold));
    fprintf(out, "%s\n  {\"model\": \"%s\", \"threshold\": %s, \"kept\": %d, ", first ? "" : ",", name, t, kept);
    print_metrics(out, &m, true);
    fprintf(out, ", \"train_s\": %.4f}", ts);
  } else {
    fprintf(out, "%-26s %9s %4d | ", name, threshold, kept);
    print_metrics(out, &m, false);
    fprintf(out, " %7.3f\n", ts);
  }
  fflush(out);
  return 0;
}

/* Records reordered round-robin over workloads (in order of first appearance). */
static void interleave(pp_xgb_data *dd) {
  int *order = malloc(sizeof(int) * (size_t)(dd->n_prog + 1)), *next = calloc((size_t)dd->n_keys + 1, sizeof(int));
  int n = 0;
  while (n < dd->n_prog)
    for (int w = 0; w < dd->n_keys; w++) {
      while (next[w] < dd->n_prog && dd->workload[next[w]] != w) next[w]++;
      if (next[w] < dd->n_prog) order[n++] = next[w]++;
    }
  pp_xgb_data out = {0};
  pp_xgb_data_append_programs(&out, dd, order, n);
  pp_xgb_data_free(dd);
  *dd = out;
  free(order), free(next);
}

int cmd_bench_xgbi(int argc, char **argv) {
  const char *data = NULL, *order = "record", *sweep = "0,0.01,0.02,0.05,0.1,0.2";
  int start = 3840, step = 128, max_rounds = 0;
  double frac = 0.2, threshold = 0.01;
  bool json = false;
  pp_xgb_opts o;
  pp_xgb_opts_default(&o);
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i];
    bool v = i + 1 < argc;
    if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
      usage(stdout);
      return EXIT_OK;
    } else if (strcmp(a, "--data") == 0 && v) data = argv[++i];
    else if (strcmp(a, "--start") == 0 && v) start = atoi(argv[++i]);
    else if (strcmp(a, "--step") == 0 && v) step = atoi(argv[++i]);
    else if (strcmp(a, "--test-fraction") == 0 && v) frac = atof(argv[++i]);
    else if (strcmp(a, "--order") == 0 && v) order = argv[++i];
    else if (strcmp(a, "--threshold") == 0 && v) threshold = atof(argv[++i]);
    else if (strcmp(a, "--thresholds") == 0 && v) sweep = argv[++i];
    else if (strcmp(a, "--boost-rounds") == 0 && v) o.rounds = atoi(argv[++i]);
    else if (strcmp(a, "--max-rounds") == 0 && v) max_rounds = atoi(argv[++i]);
    else if (strcmp(a, "--json") == 0) json = true;
    else {
      fprintf(stderr, "portent bench xgbi: unexpected argument '%s'\n", a);
      usage(stderr);
      return EXIT_USAGE;
    }
  }
  if (!data || start < 1 || step < 1 || !(frac > 0 && frac < 1) || o.rounds < 1 || threshold < 0 ||
      (strcmp(order, "record") != 0 && strcmp(order, "interleave") != 0)) {
    fprintf(stderr, "portent bench xgbi: --data is required; --start, --step, --boost-rounds >= 1; 0 < --test-fraction < 1; "
                    "--order record|interleave\n");
    return EXIT_USAGE;
  }
  pt_diag d = {0};
  pp_xgb_data dd = {0};
  int skipped = 0;
  double t0 = pt_now();
  if (pp_xgb_data_read(&dd, data, o.cache_line_bytes, &skipped, &d) < 0) {
    fprintf(stderr, "portent bench xgbi: %s\n", d.msg);
    pp_xgb_data_free(&dd);
    return EXIT_USAGE;
  }
  double read_s = pt_now() - t0;
  if (strcmp(order, "interleave") == 0) interleave(&dd);
  int n = dd.n_prog, n_test = (int)lround(frac * n), pool = n - n_test;
  if (n_test < 1 || start > pool) {
    fprintf(stderr, "portent bench xgbi: %s: %d usable records (%d skipped): %d for testing leaves %d to train on, fewer than --start %d\n",
            data, n, skipped, n_test, pool, start);
    pp_xgb_data_free(&dd);
    return EXIT_USAGE;
  }
  FILE *out = stdout;
  int rc = 0;
  pp_xgb_view test;
  pp_xgb_data_view(&dd, pool, n, &test);
  /* The offline pre-fit: a full pack-sum model on the first `start` records gives the importance. */
  pp_xgb_view pre;
  pp_xgb_data_view(&dd, 0, start, &pre);
  pp_xgb_booster *full = NULL;
  pp_xgb_importance imp;
  t0 = cpu_now();
  rc = pp_xgb_fit(&o, &pre, NULL, &full, &d);
  if (!rc && !full) rc = pt_fail(&d, PT_ERR_INPUT, "no record of the first %d ran", start);
  if (!rc) rc = pp_xgb_importance_compute(full, &pre, &imp, &d);
  double prefit_s = cpu_now() - t0;
  pp_xgb_booster_free(full);
  pp_xgb_view_release(&pre);
  unsigned char keep[PP_FEATURES_PER_STORE];
  int kept = rc ? 0 : pp_xgb_prune(&imp, threshold, keep);
  if (!rc && kept == 0) rc = pt_fail(&d, PT_ERR_INPUT, "--threshold %g prunes every feature", threshold);
  if (rc) goto done;
  int used = 0;
  for (int f = 0; f < PP_FEATURES_PER_STORE; f++) used += imp.weight[f] > 0;
  if (json) fprintf(out, "{\"data\": \"%s\", \"records\": %d, \"skipped\": %d, \"test\": %d, \"order\": \"%s\", \"read_s\": %.3f, "
                         "\"prefit_s\": %.3f, \"features_used\": %d, \"threshold\": %g, \"kept\": %d,\n \"importance\": [",
                    data, n, skipped, n_test, order, read_s, prefit_s, used, threshold, kept);
  else {
    fprintf(out, "%s: %d records (%d skipped), %d workloads; read + features %.2f s; order %s\n", data, n, skipped, dd.n_keys,
            read_s, order);
    fprintf(out, "test: the last %d records; training: %d to %d records, %d per round\n", n_test, start, pool, step);
    fprintf(out, "pre-fit on %d records: %.2f CPU s; %d of %d features used by a split; threshold %g keeps %d\n", start, prefit_s, used,
            PP_FEATURES_PER_STORE, threshold, kept);
    fprintf(out, "most important features (signed: Spearman with the label):\n");
  }
  /* The ten most important features by |score|. */
  bool shown[PP_FEATURES_PER_STORE] = {0};
  for (int t = 0; t < 10; t++) {
    int bf = -1;
    for (int f = 0; f < PP_FEATURES_PER_STORE; f++)
      if (!shown[f] && (bf < 0 || fabs(imp.score[f]) > fabs(imp.score[bf]))) bf = f;
    shown[bf] = true;
    char name[64];
    const char *fname = pp_feature_name(bf, name, sizeof name);
    if (json) fprintf(out, "%s{\"feature\": \"%s\", \"score\": %.4f, \"weight\": %g, \"gain\": %g, \"cover\": %g, \"rho\": %.3f}",
                      t ? ", " : "", fname, imp.score[bf], imp.weight[bf], imp.gain[bf], imp.cover[bf], imp.rho[bf]);
    else fprintf(out, "  %-28s %+.3f  (weight %g, gain %.3g, cover %.3g, rho %+.3f)\n", fname, imp.score[bf], imp.weight[bf],
                 imp.gain[bf], imp.cover[bf], imp.rho[bf]);
  }
  if (json) fprintf(out, "],\n \"rounds\": [");
  else fprintf(out, "\nround  train | xgb: top32  top64 top128    MAE   RMSE feat_s train_s | xgb-imp: top32  top64 top128    MAE   RMSE train_s\n");
  pp_xgb_fit_opts plain = {0}, method = {keep, imp.score};
  int round = 0, prev = 0;
  double total[2] = {0};
  for (int n_train = start;; round++) {
    if (max_rounds > 0 && round >= max_rounds) break;
    double feat_s = 0;
    for (int p = prev; p < n_train; p++) feat_s += dd.extract_s[p];
    metrics m[2];
    double ts[2];
    if ((rc = run_model(&o, &dd, n_train, pool, &test, &plain, &m[0], &ts[0], &d)) ||
        (rc = run_model(&o, &dd, n_train, pool, &test, &method, &m[1], &ts[1], &d)))
      goto done;
    total[0] += ts[0], total[1] += ts[1];
    if (json) {
      fprintf(out, "%s\n  {\"round\": %d, \"train\": %d, \"features_s\": %.4f, \"xgb\": {", round ? "," : "", round, n_train, feat_s);
      print_metrics(out, &m[0], true);
      fprintf(out, ", \"train_s\": %.4f}, \"xgb_imp\": {", ts[0]);
      print_metrics(out, &m[1], true);
      fprintf(out, ", \"train_s\": %.4f}}", ts[1]);
    } else {
      fprintf(out, "%5d %6d |     ", round, n_train);
      print_metrics(out, &m[0], false);
      fprintf(out, " %6.3f %7.3f |         ", feat_s, ts[0]);
      print_metrics(out, &m[1], false);
      fprintf(out, " %7.3f\n", ts[1]);
    }
    fflush(out);
    prev = n_train;
    if (n_train == pool) break;
    n_train = n_train + step < pool ? n_train + step : pool;
  }
  if (json) fprintf(out, "],\n \"train_s_total\": {\"xgb\": %.3f, \"xgb_imp\": %.3f},\n \"sweep\": [", total[0], total[1]);
  else {
    fprintf(out, "training CPU time over %d rounds: xgb %.2f s, xgb-imp %.2f s\n", round + 1, total[0], total[1]);
    fprintf(out, "\nat %d training records (importance from the pre-fit):\n", prev);
    fprintf(out, "model                      threshold kept |  top32  top64 top128    MAE   RMSE train_s\n");
  }
  /* The sweep: each half of the method alone and both together, at each threshold. */
  if (!rc) rc = sweep_row(out, json, &o, &dd, prev, pool, &test, "xgb (pack-sum, all)", "-", NULL, NULL, true, &d);
  if (!rc) rc = sweep_row(out, json, &o, &dd, prev, pool, &test, "redistribute, all", "-", NULL, imp.score, false, &d);
  char *list = strdup(sweep), *save = NULL;
  for (char *tok = strtok_r(list, ",", &save); tok && !rc; tok = strtok_r(NULL, ",", &save)) {
    unsigned char k2[PP_FEATURES_PER_STORE];
    if (pp_xgb_prune(&imp, atof(tok), k2) == 0) continue;
    rc = sweep_row(out, json, &o, &dd, prev, pool, &test, "prune (pack-sum)", tok, k2, NULL, false, &d);
    if (!rc) rc = sweep_row(out, json, &o, &dd, prev, pool, &test, "prune + redistribute", tok, k2, imp.score, false, &d);
  }
  free(list);
  if (!rc && json) fprintf(out, "]}\n");
done:
  pp_xgb_view_release(&test);
  pp_xgb_data_free(&dd);
  if (rc) {
    fprintf(stderr, "portent bench xgbi: %s\n", d.msg);
    return rc == PT_ERR_INPUT ? EXIT_USAGE : EXIT_FAILED; /* bad data or options, or a failure */
  }
  return EXIT_OK;
}
