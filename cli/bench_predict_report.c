/* The report of `portent bench predict`: every candidate predicted with every ablation
 * preset on one target, then MAPE, Spearman, pairwise accuracy and TLP's top-k per workload and
 * overall, the worst candidates, prediction rates, and an SVG scatter of predicted vs measured. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_predict.h"
#include "commands.h"
#include "predictor.h"

typedef struct {
  double mape, spearman, pairwise, top1, top5, distinct; /* distinct: Spearman over distinct programs */
} metrics;

static metrics compute(int n, const double *pred, const double *meas) {
  metrics m = {pp_mape(n, pred, meas), pp_spearman(n, pred, meas), pp_pairwise_accuracy(n, pred, meas),
               pp_topk(n, pred, meas, 1), pp_topk(n, pred, meas, 5)};
  return m;
}

/* Spearman over distinct programs: candidates whose profiles have one module id (FNV-1a 64 of
 * the printed target-neutral IR, analyzer/profile.c) are one program and count once, at the
 * median of their measured times and of their predictions. A figure about the set (copies of
 * one program measured apart cap every model's ranking), beside the headline, not instead. */
static double distinct_spearman(const bp_workload *w, int preset, int *programs) {
  const char **id = malloc(sizeof *id * (size_t)w->n + 1);
  double *p = malloc(sizeof *p * (size_t)w->n + 1), *m = malloc(sizeof *m * (size_t)w->n + 1);
  for (int j = 0; id && j < w->n; j++) id[j] = w->prof[j] ? w->prof[j]->module_id : NULL;
  int g = id && p && m ? pp_distinct_programs(w->n, id, w->pred[preset], w->meas, p, m) : -1;
  double rho = g < 0 ? NAN : pp_spearman(g, p, m);
  if (programs) *programs = g;
  free(id), free(p), free(m);
  return rho;
}

static void write_svg(const char *path, int nw, const bp_workload *w, int preset) {
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
          M + S / 2, M + S / 2, bp_preset_name(preset));
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

typedef struct {
  double err; /* |log(pred / meas)| */
  int w, j;
} miss;

static int by_err(const void *a, const void *b) {
  double x = ((const miss *)a)->err, y = ((const miss *)b)->err;
  return x > y ? -1 : x < y ? 1 : 0;
}

/* The candidates the default model misses most, with what bound their prediction and the
 * costliest block: where to look for the model's error. */
static void print_worst(const ptg_target *t, const bp_set *s, int k) {
  int total = 0;
  for (int i = 0; i < s->nw; i++) total += s->w[i].n;
  miss *m = malloc(sizeof *m * (total ? total : 1));
  int n = 0;
  for (int i = 0; i < s->nw; i++)
    for (int j = 0; j < s->w[i].n; j++) {
      double p = s->w[i].pred[BP_HEADLINE][j], me = s->w[i].meas[j];
      if (p > 0 && me > 0) m[n++] = (miss){fabs(log(p / me)), i, j};
    }
  qsort(m, n, sizeof *m, by_err);
  pp_options o = {0};
  pp_options_preset(&o, bp_preset_name(BP_HEADLINE));
  o.threads = s->threads;
  pt_diag d = {0};
  printf("\nworst %d candidates (%s):\n", k < n ? k : n, bp_preset_name(BP_HEADLINE));
  printf("%-12s %4s %10s %10s %6s %-9s %s\n", "workload", "cand", "meas ms", "pred ms", "ratio", "bound",
         "costliest block: cycles/exec x executions, bound");
  for (int q = 0; q < k && q < n; q++) {
    const bp_workload *w = &s->w[m[q].w];
    int j = m[q].j;
    pp_prediction *r = pp_predict_profile(w->prof[j], t, &o, &d);
    const pp_block_pred *top = NULL;
    for (int b = 0; r && b < r->n_blocks; b++)
      if (!top || r->blocks[b].total_cycles > top->total_cycles) top = &r->blocks[b];
    printf("%-12s %4d %10.4g %10.4g %6.2f %-9s", w->name, w->candidate[j], w->meas[j] * 1e3,
           w->pred[BP_HEADLINE][j] * 1e3, w->pred[BP_HEADLINE][j] / w->meas[j], r ? pp_bound_name(r->bound) : "?");
    if (top)
      printf(" %s/%s: %.1f x %.4g, %s%s%s (%d uops)", top->function_name, top->name, top->cycles, top->ecount,
             pp_bound_name(top->bound), top->unit ? " " : "", top->unit ? top->unit : "", top->uops);
    printf("\n");
    pp_prediction_free(r);
    pt_diag_clear(&d);
  }
  free(m);
}

/* --tsv: one row per candidate (workload, candidate, measured, then every preset), so that
 * splits and per-candidate comparisons need no second run. */
static int write_tsv(const char *path, const bp_set *s) {
  size_t rows = 1;
  for (int i = 0; i < s->nw; i++) rows += (size_t)s->w[i].n;
  pt_sbuf b = {.cap = rows * (96 + 16 * BP_PRESETS) + 1024}; /* names < 64, numbers %.6g < 14 */
  b.buf = malloc(b.cap);
  pt_sbuf_printf(&b, "workload\tcandidate\tmeasured_s");
  for (int k = 0; k < BP_PRESETS; k++) pt_sbuf_printf(&b, "\t%s", bp_preset_name(k));
  pt_sbuf_printf(&b, "\n");
  for (int i = 0; i < s->nw; i++)
    for (int j = 0; j < s->w[i].n; j++) {
      pt_sbuf_printf(&b, "%s\t%d\t%.6g", s->w[i].name, s->w[i].candidate[j], s->w[i].meas[j]);
      for (int k = 0; k < BP_PRESETS; k++) pt_sbuf_printf(&b, "\t%.6g", s->w[i].pred[k][j]);
      pt_sbuf_printf(&b, "\n");
    }
  pt_diag d = {0};
  int rc = pt_write_file_atomic(path, b.buf, b.len, &d);
  if (rc < 0) fprintf(stderr, "portent bench predict: %s\n", d.msg);
  free(b.buf);
  return rc;
}

/* Length of the first name of a comma-separated list; a comma followed by a digit continues
 * an operator spec ("mm512,matmul:32,24,40" names two workloads), as --workloads reads it. */
static size_t name_len(const char *p) {
  size_t n = 0;
  while (p[n] && !(p[n] == ',' && !(p[n + 1] >= '0' && p[n + 1] <= '9'))) n++;
  return n;
}

static bool in_list(const char *list, const char *name) {
  size_t len = strlen(name);
  for (const char *p = list; *p;) {
    size_t n = name_len(p);
    if (n == len && strncmp(p, name, n) == 0) return true;
    p += p[n] ? n + 1 : n;
  }
  return false;
}

/* --split LIST: every preset's metrics on the workloads named (where a model is chosen) and
 * on the others (where it is reported), so that a default chosen on one half is judged on
 * workloads it was not chosen on. MAPE over the half's candidates; Spearman, pairwise and
 * top-k averaged over its workloads, as in the ablation table. */
static int print_split(const bp_set *s, const char *list) {
  for (const char *p = list; *p;) { /* every name must be a workload of the set */
    size_t n = name_len(p);
    bool found = false;
    for (int i = 0; i < s->nw && !found; i++) found = strlen(s->w[i].name) == n && strncmp(s->w[i].name, p, n) == 0;
    if (!found) {
      fprintf(stderr, "portent bench predict: --split: '%.*s' is not a workload of the set\n", (int)n, p);
      return EXIT_USAGE;
    }
    p += p[n] ? n + 1 : n;
  }
  printf("\nsplit: chosen on %s, reported on the other workloads\n", list);
  printf("%-34s %7s %8s %8s %6s | %7s %8s %8s %6s\n", "model", "MAPE", "Spearman", "pairwise", "top-1", "MAPE",
         "Spearman", "pairwise", "top-1");
  for (int k = 0; k < BP_PRESETS; k++) {
    double err[2] = {0}, n[2] = {0}, sp[2] = {0}, pw[2] = {0}, t1[2] = {0}, nw[2] = {0};
    for (int i = 0; i < s->nw; i++) {
      const bp_workload *w = &s->w[i];
      int h = in_list(list, w->name) ? 0 : 1;
      for (int j = 0; j < w->n; j++)
        if (w->meas[j] > 0) err[h] += fabs(w->pred[k][j] - w->meas[j]) / w->meas[j], n[h]++;
      if (w->n < 2) continue;
      metrics m = compute(w->n, w->pred[k], w->meas);
      sp[h] += isfinite(m.spearman) ? m.spearman : 0, pw[h] += isfinite(m.pairwise) ? m.pairwise : 0;
      t1[h] += m.top1, nw[h]++;
    }
    printf("%-34s", bp_preset_name(k));
    for (int h = 0; h < 2; h++)
      printf("%s %6.1f%% %8.3f %8.3f %6.3f", h ? " |" : "", n[h] ? 100 * err[h] / n[h] : NAN,
             nw[h] ? sp[h] / nw[h] : NAN, nw[h] ? pw[h] / nw[h] : NAN, nw[h] ? t1[h] / nw[h] : NAN);
    printf("\n");
  }
  return EXIT_OK;
}

/* Predictions per second given profiles, on this one core: the set's profiles in turn for
 * half a second of this thread's CPU time (time slices other processes take on a shared machine
 * are not counted), in whole passes (so each profile weighs the same). Its own function so that
 * `valgrind --tool=callgrind --toggle-collect=prediction_rate` counts the instructions of exactly
 * these predictions. */
__attribute__((noinline)) static double prediction_rate(pp_predictor *pp, int n_all, pa_profile **all) {
  pt_diag d = {0};
  long done = 0;
  double t0 = pt_cpu_now(), dt = 0;
  while ((dt = pt_cpu_now() - t0) < 0.5 || done % n_all != 0) { /* whole passes over the set */
    pp_prediction *r = pp_predict(pp, all[done % n_all], &d);
    pp_prediction_free(r);
    pt_diag_clear(&d);
    done++;
  }
  return done / dt;
}

int bp_report(const ptg_target *t, bp_set *s, const bp_report_opts *o) {
  pt_diag d = {0};
  pp_predictor *pps[BP_PRESETS];
  for (int k = 0; k < BP_PRESETS; k++) {
    pp_options po = {.threads = s->threads, .no_breakdown = true};
    pp_options_preset(&po, bp_preset_name(k));
    pps[k] = pp_predictor_new(t, &po, &d);
    if (!pps[k]) {
      fprintf(stderr, "portent bench predict: %s\n", d.msg);
      for (int q = 0; q < k; q++) pp_predictor_free(pps[q]);
      return EXIT_USAGE;
    }
  }
  int total = 0, n_all = 0;
  double pred_seconds = 0;
  for (int i = 0; i < s->nw; i++) total += s->w[i].n;
  pa_profile **all = malloc(sizeof *all * (total ? total : 1));
  for (int i = 0; i < s->nw; i++)
    for (int j = 0; j < s->w[i].n; j++) {
      bp_workload *w = &s->w[i];
      all[n_all++] = w->prof[j];
      for (int k = 0; k < BP_PRESETS; k++) {
        double t1 = pt_now();
        pp_prediction *r = pp_predict(pps[k], w->prof[j], &d);
        if (k == BP_HEADLINE) pred_seconds += pt_now() - t1;
        w->pred[k][j] = r ? r->seconds : NAN;
        if (!r) fprintf(stderr, "  %s #%d: %s\n", w->name, w->candidate[j], d.msg), pt_diag_clear(&d);
        pp_prediction_free(r);
      }
    }
  double rate = n_all > 0 ? prediction_rate(pps[BP_HEADLINE], n_all, all) : 0;
  double scratch_rate =
      o->n_profiled > 0 && n_all > 0 ? o->n_profiled / (o->prof_seconds + pred_seconds * o->n_profiled / n_all) : 0;
  double *allp[BP_PRESETS], *allm = calloc(total ? total : 1, sizeof(double));
  for (int k = 0; k < BP_PRESETS; k++) allp[k] = calloc(total ? total : 1, sizeof(double));
  int at = 0;
  for (int i = 0; i < s->nw; i++)
    for (int j = 0; j < s->w[i].n; j++, at++) {
      allm[at] = s->w[i].meas[j];
      for (int k = 0; k < BP_PRESETS; k++) allp[k][at] = s->w[i].pred[k][j];
    }
  metrics avg[BP_PRESETS] = {0};
  int counted[BP_PRESETS] = {0}, rc = EXIT_OK;
  if (!o->json) {
    if (o->title) printf("%s\n", o->title);
    printf("target %s, %d thread(s), %d candidates (%d failed), model: %s\n", t->name, s->threads, total, o->failed,
           bp_preset_name(BP_HEADLINE));
    printf("%-12s %4s %8s %8s %9s %9s %9s %7s %7s\n", "workload", "n", "programs", "MAPE", "Spearman", "distinct",
           "pairwise", "top-1", "top-5");
  }
  for (int i = 0; i < s->nw; i++) {
    const bp_workload *w = &s->w[i];
    if (w->n < 2) continue;
    for (int k = 0; k < BP_PRESETS; k++) {
      metrics m = compute(w->n, w->pred[k], w->meas);
      int programs = 0;
      m.distinct = distinct_spearman(w, k, &programs);
      avg[k].spearman += isfinite(m.spearman) ? m.spearman : 0;
      avg[k].distinct += isfinite(m.distinct) ? m.distinct : 0;
      avg[k].pairwise += isfinite(m.pairwise) ? m.pairwise : 0;
      avg[k].top1 += m.top1, avg[k].top5 += m.top5;
      counted[k]++;
      if (k == BP_HEADLINE && !o->json)
        printf("%-12s %4d %8d %7.1f%% %9.3f %9.3f %9.3f %7.3f %7.3f\n", w->name, w->n, programs, 100 * m.mape,
               m.spearman, m.distinct, m.pairwise, m.top1, m.top5);
    }
  }
  for (int k = 0; k < BP_PRESETS; k++) {
    avg[k].mape = pp_mape(total, allp[k], allm);
    if (counted[k]) {
      avg[k].spearman /= counted[k], avg[k].pairwise /= counted[k], avg[k].distinct /= counted[k];
      avg[k].top1 /= counted[k], avg[k].top5 /= counted[k];
    }
  }
  double counts_rate = o->counts_n && o->counts_seconds > 0 ? o->counts_n / o->counts_seconds : 0;
  if (o->json) {
    printf("{\"target\": \"%s\", \"threads\": %d, \"candidates\": %d, \"failed\": %d, \"predictions_per_second\": %.1f, "
           "\"from_scratch_per_second\": %.3f, \"counts_only_per_second\": %.3f, \"models\": {",
           t->name, s->threads, total, o->failed, rate, scratch_rate, counts_rate);
    for (int k = 0; k < BP_PRESETS; k++)
      printf("%s\"%s\": {\"mape\": %.4f, \"spearman\": %.4f, \"pairwise\": %.4f, \"top1\": %.4f, \"top5\": %.4f, "
             "\"spearman_distinct\": %.4f}",
             k ? ", " : "", bp_preset_name(k), avg[k].mape, avg[k].spearman, avg[k].pairwise, avg[k].top1,
             avg[k].top5, avg[k].distinct);
    printf("}}\n");
  } else {
    printf("\nablation (MAPE over all candidates; Spearman, pairwise, top-k averaged over workloads; distinct: "
           "Spearman over distinct programs):\n");
    printf("%-12s %8s %9s %9s %7s %7s %9s\n", "model", "MAPE", "Spearman", "pairwise", "top-1", "top-5", "distinct");
    for (int k = 0; k < BP_PRESETS; k++)
      printf("%-12s %7.1f%% %9.3f %9.3f %7.3f %7.3f %9.3f\n", bp_preset_name(k), 100 * avg[k].mape, avg[k].spearman,
             avg[k].pairwise, avg[k].top1, avg[k].top5, avg[k].distinct);
    if (o->split && print_split(s, o->split) != EXIT_OK) rc = EXIT_USAGE;
    if (o->worst > 0) print_worst(t, s, o->worst);
    if (o->pairs && bp_print_pairs(s, o->pairs) != EXIT_OK) rc = EXIT_USAGE;
    if (o->tsv && write_tsv(o->tsv, s) < 0) return EXIT_FAILED;
    printf("\npredictions per second given profiles (one core, %s): %.0f\n", bp_preset_name(BP_HEADLINE), rate);
    if (o->n_profiled > 0)
      printf("profiling (sampled reuse) + prediction per second from scratch: %.3f (%d profiled in this run, %.2f s)\n",
             scratch_rate, o->n_profiled, o->prof_seconds);
    if (o->counts_n > 0)
      printf("counts-only profiling + prediction per second (the analytic cost model): %.2f (%d candidates)\n",
             counts_rate, o->counts_n);
  }
  if (o->svg) {
    write_svg(o->svg, s->nw, s->w, BP_HEADLINE);
    if (!o->json) printf("scatter: %s\n", o->svg);
  }
  free(all), free(allm);
  for (int k = 0; k < BP_PRESETS; k++) free(allp[k]), pp_predictor_free(pps[k]);
  return rc != EXIT_OK ? rc : total > 0 ? EXIT_OK : EXIT_FAILED;
}
