/* Pipeline simulator: resource-constrained list scheduling of a block's legalized task graph.
 * Instructions dispatch in program order at the issue width, start when their operands are
 * ready and a pipe of their unit is free, and occupy it for recip_throughput x pipes cycles.
 * A loop body is repeated with its loop-carried edges until the cycles per iteration settle. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

/* Per-unit occupancy timeline in whole cycles: each cycle holds `pipes` cycles of pipe time.
 * Instructions reserve in program order (oldest first, as an out-of-order scheduler picks),
 * and a younger one may fill an earlier gap an older one left. */
typedef struct {
  double *used;
  int len, first_open;
} timeline;

static void tl_grow(timeline *t, int c) {
  if (c < t->len) return;
  int len = t->len ? t->len : 256;
  while (len <= c) len *= 2;
  t->used = realloc(t->used, sizeof(double) * (size_t)len);
  for (int i = t->len; i < len; i++) t->used[i] = 0;
  t->len = len;
}

/* Reserves occ cycles of pipe time at or after `ready`; returns the start time. */
static double tl_reserve(timeline *t, int pipes, double ready, double occ) {
  int c = (int)floor(ready);
  if (c < t->first_open) c = t->first_open;
  double start = -1;
  for (;;) {
    tl_grow(t, c);
    double spare = pipes - t->used[c];
    if (spare > 1e-9) {
      double take = spare < occ ? spare : occ;
      if (start < 0) start = ready > c ? ready : c;
      t->used[c] += take;
      occ -= take;
    }
    if (t->used[c] >= pipes - 1e-9 && c == t->first_open) t->first_open++;
    if (occ <= 1e-9) return start;
    c++;
  }
}

/* Schedules `iters` copies in program order; fills finish[k] = last finish of copy k.
 * Returns the makespan. */
static double run(pp_predictor *pp, int n, const pp_op *ops, int n_edges, const pa_edge *edges, int iters,
                  double *iter_finish) {
  int total = n * iters;
  int *pred_start = calloc((size_t)n + 1, sizeof(int));
  int *pred = malloc(sizeof(int) * (n_edges > 0 ? n_edges : 1));
  bool *pred_prev = malloc(sizeof(bool) * (n_edges > 0 ? n_edges : 1));
  int *fill = calloc((size_t)n, sizeof(int));
  for (int e = 0; e < n_edges; e++) {
    int s = edges[e].src, t = edges[e].dst;
    if (s < 0 || s >= n || t < 0 || t >= n) continue;
    if (edges[e].kind != PA_EDGE_LOOP_CARRIED && s >= t) continue; /* not a forward edge: ignore */
    pred_start[t + 1]++;
  }
  for (int j = 0; j < n; j++) pred_start[j + 1] += pred_start[j];
  for (int e = 0; e < n_edges; e++) {
    int s = edges[e].src, t = edges[e].dst;
    if (s < 0 || s >= n || t < 0 || t >= n) continue;
    bool carried = edges[e].kind == PA_EDGE_LOOP_CARRIED;
    if (!carried && s >= t) continue;
    int k = pred_start[t] + fill[t]++;
    pred[k] = s, pred_prev[k] = carried;
  }
  double *finish = malloc(sizeof(double) * (size_t)total);
  timeline *tl = calloc((size_t)(pp->n_units > 0 ? pp->n_units : 1), sizeof(timeline));
  double uops = 0, w = pp->issue_width > 0 ? pp->issue_width : 4, makespan = 0;
  for (int k = 0; k < iters; k++) {
    iter_finish[k] = 0;
    for (int j = 0; j < n; j++) {
      int g = k * n + j;
      const pp_op *o = &ops[j];
      double r = uops / w; /* in-order dispatch at the issue width */
      uops += o->parts;
      for (int q = pred_start[j]; q < pred_start[j + 1]; q++) {
        if (pred_prev[q] && k == 0) continue;
        double f = finish[(pred_prev[q] ? k - 1 : k) * n + pred[q]];
        if (f > r) r = f;
      }
      double fin = r + o->latency;
      if (o->parts > 0 && o->unit >= 0) {
        fin = r;
        for (int part = 0; part < o->parts; part++) {
          double s = tl_reserve(&tl[o->unit], pp->unit_pipes[o->unit], r, o->occupancy > 0 ? o->occupancy : 1e-6);
          if (s + o->latency > fin) fin = s + o->latency;
          if (s + o->occupancy > fin && o->latency <= 0) fin = s; /* value-less ops end at issue */
        }
      }
      finish[g] = fin;
      if (fin > iter_finish[k]) iter_finish[k] = fin;
      if (fin > makespan) makespan = fin;
    }
  }
  if (uops / w > makespan) makespan = uops / w;
  for (int u = 0; u < pp->n_units; u++) free(tl[u].used);
  free(tl), free(pred_start), free(pred), free(pred_prev), free(fill), free(finish);
  return makespan;
}

double pp_schedule(pp_predictor *pp, int n, const pp_op *ops, int n_edges, const pa_edge *edges, bool repeat) {
  if (n <= 0) return 0;
  if (!repeat) {
    double f;
    return run(pp, n, ops, n_edges, edges, 1, &f);
  }
  /* Repeat until the slope over the second quarter and the second half agree within 2%. */
  double prev = -1;
  for (int iters = 8; iters <= 64; iters *= 2) {
    double finish[64];
    run(pp, n, ops, n_edges, edges, iters, finish);
    /* finish times need not be monotone (a later copy may end first): use running maxima */
    for (int k = 1; k < iters; k++)
      if (finish[k] < finish[k - 1]) finish[k] = finish[k - 1];
    double half = (finish[iters - 1] - finish[iters / 2 - 1]) / (iters / 2);
    double quarter = (finish[iters / 2 - 1] - finish[iters / 4 - 1]) / (iters / 4);
    if (fabs(half - quarter) <= 0.02 * half || (prev >= 0 && fabs(half - prev) <= 0.02 * half) || iters == 64)
      return half;
    prev = half;
  }
  return prev;
}

double pp_resource_bound(pp_predictor *pp, int n, const pp_op *ops, bool *issue_bound, int *unit) {
  double busy[PP_MAX_UNITS] = {0}, uops = 0;
  for (int j = 0; j < n; j++) {
    uops += ops[j].parts;
    if (ops[j].parts > 0 && ops[j].unit >= 0) busy[ops[j].unit] += ops[j].parts * ops[j].occupancy;
  }
  double best = uops / (pp->issue_width > 0 ? pp->issue_width : 4);
  *issue_bound = true, *unit = -1;
  for (int u = 0; u < pp->n_units; u++) {
    double b = busy[u] / pp->unit_pipes[u];
    if (b > best) best = b, *issue_bound = false, *unit = u;
  }
  return best;
}
