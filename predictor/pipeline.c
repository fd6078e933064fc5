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
 * and a younger one may fill an earlier gap an older one left. `next` skips full cycles
 * (union-find with path compression), so a saturated unit costs no rescans. A cell's fields
 * sit together: one cache line per visit. */
typedef struct {
  double used;
  int next;
  unsigned gen; /* a cell is live only when its gen is the current run's: no reset pass */
} tl_cell;

struct pp_timeline {
  tl_cell *cell;
  int len;
};
typedef struct pp_timeline timeline;

static void tl_grow(timeline *t, int c) {
  int len = t->len ? t->len : 256;
  while (len <= c) len *= 2;
  t->cell = realloc(t->cell, sizeof(tl_cell) * (size_t)len);
  for (int i = t->len; i < len; i++) t->cell[i].gen = 0;
  t->len = len;
}

static inline tl_cell *tl_touch(timeline *t, int c, unsigned g) {
  if (c >= t->len) tl_grow(t, c);
  tl_cell *x = &t->cell[c];
  if (x->gen != g) x->gen = g, x->used = 0, x->next = c;
  return x;
}

/* The root of c's chain of full cells: the first cell at or after c with room; compresses the
 * path. Out of line: most cells looked up have room. */
static __attribute__((noinline)) int tl_find(timeline *t, int c, unsigned g) {
  int root = c;
  for (tl_cell *x = tl_touch(t, c, g); x->next != root;) root = x->next, x = tl_touch(t, root, g);
  while (t->cell[c].next != root) {
    int n = t->cell[c].next;
    t->cell[c].next = root;
    c = n;
  }
  return root;
}

static inline int tl_open(timeline *t, int c, unsigned g) {
  if (c < t->len) {
    tl_cell *x = &t->cell[c];
    if (x->gen != g) {
      x->gen = g, x->used = 0, x->next = c;
      return c;
    }
    if (x->next == c) return c;
  }
  return tl_find(t, c, g);
}

/* Reserves `parts` slices of occ cycles of pipe time each, in order, at or after `ready`;
 * returns the last slice's start (the slices start in order). Each slice would begin its search
 * at `ready`, but every cell from there to where the previous slice ended is full, so it goes on
 * from that cell: the same starts as one reservation per slice, one lookup. (The cast truncates
 * as floor does for ready > 0.) */
static inline double tl_reserve(timeline *t, unsigned g, int pipes, double ready, double occ, int parts) {
  int c = tl_open(t, ready > 0 ? (int)ready : 0, g);
  for (;;) {
    double start = ready > c ? ready : c, left = occ;
    for (;;) {
      tl_cell *x = &t->cell[c];
      double room = pipes - x->used, take = room < left ? room : left;
      x->used += take;
      left -= take;
      if (x->used >= pipes - 1e-9) x->next = c + 1;
      if (left <= 1e-9) break;
      c = tl_open(t, c + 1, g);
    }
    if (--parts <= 0) return start;
    c = tl_open(t, c, g);
  }
}

/* Grows the predictor's scheduler scratch (kept across calls: no allocation per block). */
static void scratch_reserve(pp_predictor *pp, int n, int n_edges, int total) {
  if (n + 1 > pp->s_cap_nodes) {
    pp->s_cap_nodes = 2 * (n + 1);
    pp->s_pred_start = realloc(pp->s_pred_start, sizeof(int) * (size_t)pp->s_cap_nodes);
    pp->s_fill = realloc(pp->s_fill, sizeof(int) * (size_t)pp->s_cap_nodes);
    pp->s_slots = realloc(pp->s_slots, sizeof(int) * (size_t)pp->s_cap_nodes);
  }
  if (n_edges + 1 > pp->s_cap_edges) {
    pp->s_cap_edges = 2 * (n_edges + 1);
    pp->s_pred = realloc(pp->s_pred, sizeof(int) * (size_t)pp->s_cap_edges);
  }
  if (total + 1 > pp->s_cap_total) {
    pp->s_cap_total = 2 * (total + 1);
    pp->s_finish = realloc(pp->s_finish, sizeof(double) * (size_t)pp->s_cap_total);
    pp->s_retire = realloc(pp->s_retire, sizeof(double) * (size_t)pp->s_cap_total);
    pp->s_cum = realloc(pp->s_cum, sizeof(double) * (size_t)pp->s_cap_total);
  }
}

/* Schedules up to `iters` copies in program order; fills finish[k] = last finish of copy k
 * (a running maximum). With settle, stops at the first power of two k >= min(8, iters) where the cycles
 * per iteration over the last half and the quarter before agree within 2%, and returns
 * them; otherwise returns the makespan. Before that, from k = 2 on, a body whose cycles per
 * iteration over both windows are within 2% of its resource bound `res` (from k = 16, 2% plus
 * one cycle per window) stops with `res`:
 * no schedule runs faster than its resources, and a resource-bound body's whole-cycle
 * timeline steps by whole cycles (e.g. 2,2,1,2,2,1,...: 1.67 per copy), so its windows agree
 * with each other within 2% only after 32-64 copies, though they agree with `res` early. */
static double run(pp_predictor *pp, int n, const pp_op *ops, int n_edges, const pa_edge *edges, int iters,
                  double *iter_finish, bool settle, double res) {
  int total = n * iters;
  scratch_reserve(pp, n, n_edges, total);
  /* each op's predecessors as distances back in the simulated sequence: d for a forward edge
   * of the copy, n + d for a loop-carried one (from the previous copy; none in the first) */
  int *pred_start = pp->s_pred_start, *pred_back = pp->s_pred, *fill = pp->s_fill, *slots = pp->s_slots;
  for (int j = 0; j < n; j++) slots[j] = ops[j].fused ? 0 : ops[j].parts; /* a fused op rides in its macro-op */
  memset(pred_start, 0, sizeof(int) * ((size_t)n + 1));
  memset(fill, 0, sizeof(int) * (size_t)n);
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
    pred_back[pred_start[t] + fill[t]++] = t - s + (carried ? n : 0);
  }
  /* per simulated op: finish, in-order retire, and the uops dispatched up to and including it */
  double *finish = pp->s_finish, *retire = pp->s_retire, *uops_through = pp->s_cum;
  timeline *tl = pp->timelines; /* reused across calls */
  unsigned gen = ++pp->generation;
  double uops = 0, w = pp->issue_width > 0 ? pp->issue_width : 4, makespan = 0, window = pp->window;
  double last_retire = -INFINITY;
  int oldest = 0; /* the youngest op that must have retired before the current one dispatches */
  bool window_cannot_bind = true;
  for (int k = 0; k < iters; k++) {
    double copy_finish = 0;
    for (int j = 0, g = k * n; j < n; j++, g++) {
      const pp_op *o = &ops[j];
      double r = uops / w; /* in-order dispatch at the issue width */
      /* ...into a reorder buffer of `window` uops that retires in order: an op dispatches only
       * once the ops more than `window` uops older than it have retired */
      double through = uops + slots[j];
      uops_through[g] = through;
      if (window > 0 && through > window) {
        double retired = through - window;
        while (oldest + 1 < g && uops_through[oldest + 1] <= retired) oldest++;
        if (uops_through[oldest] <= retired && retire[oldest] > r) r = retire[oldest];
      }
      uops = through;
      for (int q = pred_start[j]; q < pred_start[j + 1]; q++) {
        int from = g - pred_back[q];
        if (from >= 0 && finish[from] > r) r = finish[from];
      }
      double fin = r + o->latency;
      if (o->parts > 0 && o->unit >= 0) {
        /* the parts start in order, so the last one finishes last; value-less ops end at issue */
        double s = tl_reserve(&tl[o->unit], gen, pp->unit_pipes[o->unit], r, o->occupancy > 0 ? o->occupancy : 1e-6,
                              o->parts);
        fin = o->latency > 0 ? s + o->latency : s;
      }
      finish[g] = fin;
      if (fin > last_retire) last_retire = fin;
      retire[g] = last_retire;
      if (fin > copy_finish) copy_finish = fin;
    }
    /* a running maximum: the last finish of copies 0..k */
    iter_finish[k] = k > 0 && copy_finish < iter_finish[k - 1] ? iter_finish[k - 1] : copy_finish;
    makespan = iter_finish[k];
    /* The stop at the resource bound assumes that the reorder window never holds the copies
     * back. It can only when a copy lives (first dispatch to last finish) longer than the
     * window takes to fill at the issue width: then the first copies, still free of it, start
     * one dispatch time apart, which looks like the resource bound (a 311-uop body with a
     * 147-FMA chain under a 320-entry window: 80 cycles apart for 2 copies, ~290 once the
     * third waits for the first to retire). Such bodies settle by the agreement test. */
    if (k == 0) window_cannot_bind = !(window > 0) || iter_finish[0] <= window / w;
    int done = k + 1;
    if (settle && done >= 2 && (done & (done - 1)) == 0) {
      double half = (iter_finish[done - 1] - iter_finish[done / 2 - 1]) / (done / 2);
      double quarter = done >= 4 ? (iter_finish[done / 2 - 1] - iter_finish[done / 4 - 1]) / (done / 4) : half;
      if (done >= (iters < 8 ? iters : 8) && (fabs(half - quarter) <= 0.02 * half || done == iters)) {
        makespan = half;
        break;
      }
      /* from 16 copies, a window may also miss res x copies by one cycle: the granularity of
       * the timeline, within which the 32-copy window of the agreement test is read too */
      double slack = done >= 16 ? 1 : 0, qn = done >= 4 ? done / 4 : 1;
      if (res > 0 && window_cannot_bind && fabs(half - res) * (done / 2) <= slack + 0.02 * res * (done / 2) &&
          fabs(quarter - res) * qn <= slack + 0.02 * res * qn) {
        makespan = res;
        break;
      }
    }
  }
  if (!settle && uops / w > makespan) makespan = uops / w;
  return makespan;
}

double pp_schedule_copies(pp_predictor *pp, int n, const pp_op *ops, int n_edges, const pa_edge *edges,
                          double executions, double res) {
  if (n <= 0) return 0;
  double finish[64];
  /* Large bodies settle within few copies; bound the work at ~2048 simulated instructions. */
  int iters = 64;
  while (iters > 4 && iters * n > 2048) iters /= 2;
  if (executions >= 1 && executions < 8) { /* too few executions for a steady state: all of them */
    int k = (int)executions;
    return run(pp, n, ops, n_edges, edges, k, finish, false, 0) / k;
  }
  return run(pp, n, ops, n_edges, edges, iters, finish, true, res);
}

double pp_schedule(pp_predictor *pp, int n, const pp_op *ops, int n_edges, const pa_edge *edges, bool repeat) {
  double finish[1];
  if (!repeat) return n > 0 ? run(pp, n, ops, n_edges, edges, 1, finish, false, 0) : 0;
  bool issue;
  int unit;
  return pp_schedule_copies(pp, n, ops, n_edges, edges, 1e18, pp_resource_bound(pp, n, ops, &issue, &unit));
}

size_t pp_timeline_size(void) { return sizeof(timeline); }

void pp_timelines_free(pp_predictor *pp) {
  for (int u = 0; u < PP_MAX_UNITS; u++) free(pp->timelines[u].cell);
  free(pp->s_pred_start), free(pp->s_pred), free(pp->s_fill), free(pp->s_slots), free(pp->s_finish);
  free(pp->s_retire), free(pp->s_cum);
  free(pp->s_walks), free(pp->s_table), free(pp->s_table_hash), free(pp->s_l1);
}

double pp_resource_bound(pp_predictor *pp, int n, const pp_op *ops, bool *issue_bound, int *unit) {
  double busy[PP_MAX_UNITS] = {0}, uops = 0;
  for (int j = 0; j < n; j++) {
    if (!ops[j].fused) uops += ops[j].parts;
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

/* Reorder-buffer entries by microarchitecture: how many instructions an out-of-order core
 * holds in flight, which bounds how far consecutive instances of a latency-bound loop overlap.
 * Zen 2 224, Zen 3 256 (AMD, Hot Chips 31 and 33); Zen 4 320 (AMD, Hot Chips 35); Zen 5 448
 * (AMD Tech Day 2024; Chips and Cheese, "Zen 5's 2-ahead branch predictor and a giant ROB");
 * Skylake(-SP) 224 (Intel 64 and IA-32 Optimization Reference Manual, table 2-x); Ice Lake /
 * Sapphire Rapids 352 and 512 (same manual); Neoverse N1 128 (Arm, Hot Chips 31). Unknown: 224,
 * the middle of that range. */
double pp_reorder_window(const ptg_target *t) {
  static const struct {
    const char *uarch;
    int entries;
  } rob[] = {{"zen2", 224},         {"zen3", 256},       {"zen4", 320},  {"zen5", 448},
             {"skylake-sp", 224},   {"skylake", 224},    {"cascadelake", 224},
             {"icelake", 352},      {"sapphirerapids", 512}, {"neoverse-n1", 128},
             {"neoverse-v1", 256},  {"neoverse-v2", 320}};
  const char *u = t->microarchitecture ? t->microarchitecture : "";
  for (size_t i = 0; i < PT_ARRAY_LEN(rob); i++)
    if (strcmp(u, rob[i].uarch) == 0) return rob[i].entries;
  return 224;
}
