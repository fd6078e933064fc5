/* portent bench predict: the predictor against measurements on this machine. For each suite
 * workload, the default schedule and random valid schedules are measured (pc_measure) and
 * predicted from the host's target description; prints MAPE, Spearman, pairwise accuracy,
 * TLP's top-k, prediction rates, the ablation of the extensions and an SVG scatter. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "commands.h"
#include "compiler.h"
#include "predictor.h"
#include "targets.h"

#define N_PRESETS 6
static const char *const presets[N_PRESETS] = {"patent", "patent+bw", "steady", "steady+mlp", "steady+bw", "full"};
#define HEADLINE 4 /* steady+bw: portent's default model */

static void usage(FILE *f) {
  fprintf(f,
          "usage: portent bench predict [--target T.json] [--workloads a,b,...] [--candidates N] [--seed S]\n"
          "       [--sample RATE] [--min-time SEC] [--threads N] [--svg FILE] [--cache DIR] [--json]\n\n"
          "  --target T.json   target description of this machine (default targets/zen5-epyc-2c.json)\n"
          "  --workloads LIST  suite workloads (default: all of `portent workloads`)\n"
          "  --candidates N    random schedules per workload besides the default one (default 30)\n"
          "  --seed S          seed of the random schedules (default 1)\n"
          "  --sample RATE     SHARDS rate of the reuse profiles (default 0.01)\n"
          "  --min-time SEC    minimum timed seconds per measurement (default 0.05)\n"
          "  --threads N       threads for measurement and prediction (default 1)\n"
          "  --svg FILE        scatter of predicted vs measured (default predict-scatter.svg)\n"
          "  --cache DIR       keep each candidate's measured time and profile in DIR and reuse them on\n"
          "                    the next run with the same seed (re-evaluates model changes without measuring)\n"
          "  --json            print the summary as JSON\n");
}

typedef struct {
  const char *name;
  int n;
  double *meas;
  double *pred[N_PRESETS];
} wl_result;

typedef struct {
  double mape, spearman, pairwise, top1, top5;
} metrics;

static metrics compute(int n, const double *pred, const double *meas) {
  metrics m = {pp_mape(n, pred, meas), pp_spearman(n, pred, meas), pp_pairwise_accuracy(n, pred, meas),
               pp_topk(n, pred, meas, 1), pp_topk(n, pred, meas, 5)};
  return m;
}

static void write_svg(const char *path, int nw, const wl_result *w, int preset) {
  double lo = INFINITY, hi = 0;
  for (int i = 0; i < nw; i++)
    for (int j = 0; j < w[i].n; j++) {
      double a = w[i].meas[j], b = w[i].pred[preset][j];
      if (a > 0) lo = fmin(lo, a), hi = fmax(hi, a);
      if (b > 0) lo = fmin(lo, b), hi = fmax(hi, b);
    }
  if (!(hi > 0)) return;
  double l0 = floor(log10(lo)), l1 = ceil(log10(hi));
  if (l1 <= l0) l1 = l0 + 1;
  const int S = 520, M = 60;
  FILE *f = fopen(path, "w");
  if (!f) return;
  fprintf(f, "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" font-family=\"sans-serif\" "
             "font-size=\"11\">\n<rect width=\"100%%\" height=\"100%%\" fill=\"white\"/>\n", S + 2 * M + 120, S + 2 * M);
#define PX(v) (M + (log10(v) - l0) / (l1 - l0) * S)
#define PY(v) (M + S - (log10(v) - l0) / (l1 - l0) * S)
  fprintf(f, "<rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" fill=\"none\" stroke=\"black\"/>\n", M, M, S, S);
  fprintf(f, "<line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\" stroke=\"gray\" stroke-dasharray=\"4\"/>\n", M, M + S, M + S, M);
  for (double e = l0; e <= l1; e++) {
    double v = pow(10, e);
    fprintf(f, "<text x=\"%.1f\" y=\"%d\" text-anchor=\"middle\">1e%d s</text>\n", PX(v), M + S + 16, (int)e);
    fprintf(f, "<text x=\"%d\" y=\"%.1f\" text-anchor=\"end\">1e%d s</text>\n", M - 4, PY(v) + 4, (int)e);
  }
  fprintf(f, "<text x=\"%d\" y=\"%d\" text-anchor=\"middle\">measured</text>\n", M + S / 2, M + S + 34);
  fprintf(f, "<text x=\"16\" y=\"%d\" transform=\"rotate(-90 16 %d)\" text-anchor=\"middle\">predicted (%s)</text>\n",
          M + S / 2, M + S / 2, presets[preset]);
  for (int i = 0; i < nw; i++) {
    int hue = (i * 360) / (nw > 0 ? nw : 1);
    for (int j = 0; j < w[i].n; j++)
      if (w[i].meas[j] > 0 && w[i].pred[preset][j] > 0)
        fprintf(f, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"3\" fill=\"hsl(%d,70%%,45%%)\" fill-opacity=\"0.7\"/>\n",
                PX(w[i].meas[j]), PY(w[i].pred[preset][j]), hue);
    fprintf(f, "<circle cx=\"%d\" cy=\"%d\" r=\"4\" fill=\"hsl(%d,70%%,45%%)\"/><text x=\"%d\" y=\"%d\">%s</text>\n",
            M + S + 16, M + 10 + 16 * i, hue, M + S + 24, M + 14 + 16 * i, w[i].name);
  }
#undef PX
#undef PY
  fprintf(f, "</svg>\n");
  fclose(f);
}

int cmd_bench_predict(int argc, char **argv) {
  const char *target_path = NULL, *workloads = NULL, *svg = "predict-scatter.svg", *cache = NULL;
  int candidates = 30, threads = 1;
  unsigned long long seed = 1;
  double sample = 0.01, min_time = 0.05;
  bool json = false;
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i];
    bool has_val = i + 1 < argc;
    if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
      usage(stdout);
      return EXIT_OK;
    } else if (strcmp(a, "--json") == 0) json = true;
    else if (strcmp(a, "--target") == 0 && has_val) target_path = argv[++i];
    else if (strcmp(a, "--workloads") == 0 && has_val) workloads = argv[++i];
    else if (strcmp(a, "--candidates") == 0 && has_val) candidates = atoi(argv[++i]);
    else if (strcmp(a, "--seed") == 0 && has_val) seed = strtoull(argv[++i], NULL, 10);
    else if (strcmp(a, "--sample") == 0 && has_val) sample = atof(argv[++i]);
    else if (strcmp(a, "--min-time") == 0 && has_val) min_time = atof(argv[++i]);
    else if (strcmp(a, "--threads") == 0 && has_val) threads = atoi(argv[++i]);
    else if (strcmp(a, "--svg") == 0 && has_val) svg = argv[++i];
    else if (strcmp(a, "--cache") == 0 && has_val) cache = argv[++i];
    else {
      fprintf(stderr, "portent bench predict: unexpected argument '%s'\n", a);
      usage(stderr);
      return EXIT_USAGE;
    }
  }
  if (candidates < 0 || threads < 1 || !(sample > 0 && sample <= 1) || !(min_time > 0)) {
    fprintf(stderr, "portent bench predict: --candidates >= 0, --threads >= 1, --sample in (0,1], --min-time > 0\n");
    return EXIT_USAGE;
  }
  pt_diag d = {0};
  char path[1024];
  if (!target_path) snprintf(path, sizeof path, "%s/zen5-epyc-2c.json", ptg_shipped_dir()), target_path = path;
  ptg_target *t = ptg_target_load(target_path, &d);
  if (!t) {
    fprintf(stderr, "portent bench predict: %s\n", d.msg);
    return EXIT_USAGE;
  }
  if (threads > t->cores) {
    fprintf(stderr, "portent bench predict: --threads %d: target %s has %d cores\n", threads, t->name, t->cores);
    ptg_target_free(t);
    return EXIT_USAGE;
  }
  /* the workload list */
  int nw = 0;
  const char *names[64];
  char *list = workloads ? strdup(workloads) : NULL;
  if (list) {
    for (char *tok = strtok(list, ","); tok && nw < 64; tok = strtok(NULL, ",")) names[nw++] = tok;
  } else
    for (int i = 0; i < pc_suite_count() && nw < 64; i++) names[nw++] = pc_suite_name(i);
  pp_predictor *pps[N_PRESETS];
  for (int k = 0; k < N_PRESETS; k++) {
    pp_options o = {.threads = threads, .no_breakdown = true};
    pp_options_preset(&o, presets[k]);
    pps[k] = pp_predictor_new(t, &o, &d);
  }
  wl_result *res = calloc(nw, sizeof *res);
  pa_profile **all_profiles = NULL;
  int n_all = 0, cap_all = 0, failed = 0;
  double prof_seconds = 0, pred_seconds = 0, counts_seconds = 0;
  int counts_n = 0, n_profiled = 0; /* profiles made in this run (not from --cache) */
  pt_rng rng = {seed};
  for (int w = 0; w < nw; w++) {
    res[w].name = names[w];
    pc_program *prog = pc_workload_build(names[w], &d);
    if (!prog) {
      fprintf(stderr, "portent bench predict: %s\n", d.msg);
      pt_diag_clear(&d);
      continue;
    }
    pc_measure_opts mo;
    pc_measure_opts_default(&mo);
    mo.threads = threads, mo.min_time_s = min_time, mo.seed = 1;
    pc_reference *ref = pc_reference_new(prog, &mo, &d);
    if (!ref) {
      fprintf(stderr, "portent bench predict: %s: %s\n", names[w], d.msg);
      pt_diag_clear(&d);
      pc_program_free(prog);
      continue;
    }
    int cap = candidates + 1;
    res[w].meas = calloc(cap, sizeof(double));
    for (int k = 0; k < N_PRESETS; k++) res[w].pred[k] = calloc(cap, sizeof(double));
    int attempts = 0;
    for (int c = 0; c < cap && attempts < 4 * cap; attempts++) {
      pt_diag dc = {0};
      pc_state *s = pc_state_new(prog);
      int rc = attempts == 0 ? pc_schedule_default(s, 16, &dc) : pc_schedule_random(s, &rng, &dc);
      pc_measure_result mr = {0};
      char cpath[1200], ppath[1200];
      pa_profile *p = NULL;
      bool cached = false;
      if (cache) {
        snprintf(cpath, sizeof cpath, "%s/%s_s%llu_t%d_%d.time", cache, names[w], seed, threads, attempts);
        snprintf(ppath, sizeof ppath, "%s/%s_s%llu_t%d_%d.profile.json", cache, names[w], seed, threads, attempts);
        FILE *cf = fopen(cpath, "r");
        if (cf) {
          double v = 0;
          cached = fscanf(cf, "%lf", &v) == 1;
          fclose(cf);
          if (cached && !(v > 0)) { /* a candidate that failed before */
            failed++;
            pc_state_free(s);
            continue;
          }
          if (cached && (p = pa_profile_load(ppath, &dc))) mr.median_s = v;
          else cached = false, p = NULL;
        }
      }
      if (!cached) {
        if (rc == 0) rc = pc_measure(s, ref, &mo, &mr, &dc);
        if (rc != 0 || mr.error != PC_MEASURE_OK || !(mr.median_s > 0)) {
          failed++;
          if (cache) pt_write_file_atomic(cpath, "0\n", 2, &dc);
          pc_state_free(s);
          continue;
        }
        double t0 = pt_now();
        pa_options po = {.sample_rate = sample};
        p = pp_profile_state(s, threads, &po, 30, &dc);
        prof_seconds += pt_now() - t0;
        n_profiled += p != NULL;
        if (!p && cache) pt_write_file_atomic(cpath, "0\n", 2, &dc); /* too slow to profile: skip next time */
        if (p && cache) {
          char line[64];
          int len = snprintf(line, sizeof line, "%.9g\n", mr.median_s);
          if (pa_profile_save(p, ppath, &dc) == 0) pt_write_file_atomic(cpath, line, (size_t)len, &dc);
        }
      }
      if (c < 5) { /* the analytic cost model's way: counts only, no reuse */
        double t0 = pt_now();
        pa_options po = {.no_reuse = true};
        pa_profile *q = pp_profile_state(s, threads, &po, 5, &dc);
        pp_prediction *r = q && pps[HEADLINE] ? pp_predict(pps[HEADLINE], q, &dc) : NULL;
        counts_seconds += pt_now() - t0, counts_n++; /* a timed-out one is scored too (last) */
        pp_prediction_free(r);
        pa_profile_free(q);
      }
      pc_state_free(s);
      if (!p) {
        fprintf(stderr, "  %s: profile failed: %s\n", names[w], dc.msg);
        failed++;
        continue;
      }
      res[w].meas[c] = mr.median_s;
      for (int k = 0; k < N_PRESETS; k++) {
        double t1 = pt_now();
        pp_prediction *r = pps[k] ? pp_predict(pps[k], p, &dc) : NULL;
        if (k == HEADLINE) pred_seconds += pt_now() - t1;
        res[w].pred[k][c] = r ? r->seconds : NAN;
        pp_prediction_free(r);
      }
      fprintf(stderr, "  %s #%d%s: measured %.4g ms, predicted %.4g ms (patent %.4g)\n", names[w], c,
              c == 0 && attempts == 0 ? " (default)" : "", mr.median_s * 1e3, res[w].pred[HEADLINE][c] * 1e3,
              res[w].pred[0][c] * 1e3);
      if (n_all == cap_all) {
        cap_all = cap_all ? 2 * cap_all : 64;
        all_profiles = realloc(all_profiles, sizeof *all_profiles * cap_all);
      }
      all_profiles[n_all++] = p;
      c++, res[w].n = c;
    }
    pc_reference_free(ref);
    pc_program_free(prog);
  }
  /* predictions per second given profiles, on this one core */
  double rate = 0;
  if (n_all > 0 && pps[HEADLINE]) {
    long done = 0;
    double t0 = pt_now(), dt = 0;
    while ((dt = pt_now() - t0) < 0.5) {
      pp_prediction *r = pp_predict(pps[HEADLINE], all_profiles[done % n_all], &d);
      pp_prediction_free(r);
      done++;
    }
    rate = done / dt;
  }
  double scratch_rate = n_profiled > 0 ? n_profiled / (prof_seconds + pred_seconds * n_profiled / n_all) : 0;
  /* report */
  int total = 0;
  for (int w = 0; w < nw; w++) total += res[w].n;
  double *allp[N_PRESETS], *allm = calloc(total ? total : 1, sizeof(double));
  for (int k = 0; k < N_PRESETS; k++) allp[k] = calloc(total ? total : 1, sizeof(double));
  int at = 0;
  for (int w = 0; w < nw; w++)
    for (int j = 0; j < res[w].n; j++, at++) {
      allm[at] = res[w].meas[j];
      for (int k = 0; k < N_PRESETS; k++) allp[k][at] = res[w].pred[k][j];
    }
  metrics avg[N_PRESETS] = {0};
  int counted[N_PRESETS] = {0};
  if (!json) {
    printf("target %s, %d thread(s), %d candidates measured (%d failed), model: %s\n", t->name, threads, total, failed,
           presets[HEADLINE]);
    printf("%-12s %4s %8s %9s %9s %7s %7s\n", "workload", "n", "MAPE", "Spearman", "pairwise", "top-1", "top-5");
  }
  for (int w = 0; w < nw; w++) {
    if (res[w].n < 2) continue;
    for (int k = 0; k < N_PRESETS; k++) {
      metrics m = compute(res[w].n, res[w].pred[k], res[w].meas);
      avg[k].spearman += isfinite(m.spearman) ? m.spearman : 0;
      avg[k].pairwise += isfinite(m.pairwise) ? m.pairwise : 0;
      avg[k].top1 += m.top1, avg[k].top5 += m.top5;
      counted[k]++;
      if (k == HEADLINE && !json)
        printf("%-12s %4d %7.1f%% %9.3f %9.3f %7.3f %7.3f\n", res[w].name, res[w].n, 100 * m.mape, m.spearman,
               m.pairwise, m.top1, m.top5);
    }
  }
  for (int k = 0; k < N_PRESETS; k++) {
    avg[k].mape = pp_mape(total, allp[k], allm);
    if (counted[k]) {
      avg[k].spearman /= counted[k], avg[k].pairwise /= counted[k];
      avg[k].top1 /= counted[k], avg[k].top5 /= counted[k];
    }
  }
  if (json) {
    printf("{\"target\": \"%s\", \"threads\": %d, \"candidates\": %d, \"failed\": %d, \"predictions_per_second\": %.1f, "
           "\"from_scratch_per_second\": %.3f, \"counts_only_per_second\": %.3f, \"models\": {",
           t->name, threads, total, failed, rate, scratch_rate, counts_n ? counts_n / counts_seconds : 0);
    for (int k = 0; k < N_PRESETS; k++)
      printf("%s\"%s\": {\"mape\": %.4f, \"spearman\": %.4f, \"pairwise\": %.4f, \"top1\": %.4f, \"top5\": %.4f}",
             k ? ", " : "", presets[k], avg[k].mape, avg[k].spearman, avg[k].pairwise, avg[k].top1, avg[k].top5);
    printf("}}\n");
  } else {
    printf("\nablation (MAPE over all candidates; Spearman, pairwise, top-k averaged over workloads):\n");
    printf("%-12s %8s %9s %9s %7s %7s\n", "model", "MAPE", "Spearman", "pairwise", "top-1", "top-5");
    for (int k = 0; k < N_PRESETS; k++)
      printf("%-12s %7.1f%% %9.3f %9.3f %7.3f %7.3f\n", presets[k], 100 * avg[k].mape, avg[k].spearman,
             avg[k].pairwise, avg[k].top1, avg[k].top5);
    printf("\npredictions per second given profiles (one core, %s): %.0f\n", presets[HEADLINE], rate);
    printf("profiling (sampled reuse) + prediction per second from scratch: %.3f (%d profiled in this run, %.2f s)\n",
           scratch_rate, n_profiled, prof_seconds);
    printf("counts-only profiling + prediction per second (the analytic cost model): %.2f (%d candidates)\n",
           counts_n ? counts_n / counts_seconds : 0, counts_n);
  }
  write_svg(svg, nw, res, HEADLINE);
  if (!json) printf("scatter: %s\n", svg);
  for (int i = 0; i < n_all; i++) pa_profile_free(all_profiles[i]);
  free(all_profiles);
  for (int w = 0; w < nw; w++) {
    free(res[w].meas);
    for (int k = 0; k < N_PRESETS; k++) free(res[w].pred[k]);
  }
  free(res), free(allm);
  for (int k = 0; k < N_PRESETS; k++) free(allp[k]), pp_predictor_free(pps[k]);
  free(list);
  ptg_target_free(t);
  return total > 0 ? EXIT_OK : EXIT_FAILED;
}
