/* Cache levels from a pointer-chase latency curve: which points form each level's plateau,
 * the level's latency, its effective capacity and memory latency. Pure functions of the
 * curve (memory.c times it), so synthetic curves test them. */
#include <math.h>
#include <stdlib.h>

#include "internal.h"

/* Memory latency: the median of the curve's last three points (all past the last level). */
double pmb_curve_memory_ns(const ptg_target *t) {
  int n = t->n_latency_curve;
  if (n < 3) return t->latency_curve[n - 1].ns;
  double a = t->latency_curve[n - 1].ns, b = t->latency_curve[n - 2].ns, c = t->latency_curve[n - 3].ns;
  return fmax(fmin(a, b), fmin(fmax(a, b), c));
}

static int by_value(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

/* Points of the curve that belong to level k's plateau: from twice the level below (clear of
 * it; 4 KiB for L1) to half the level's capacity (clear of conflict misses and the level
 * above). Quick sweeps may have none: then the largest point below half the capacity. */
int pmb_level_candidates(const ptg_target *t, int k, int *idx, int cap) {
  int64_t lo = k ? t->caches[k - 1].size_bytes : 0, hi = t->caches[k].size_bytes;
  int n = 0;
  for (int i = 0; i < t->n_latency_curve && n < cap; i++) {
    int64_t b = t->latency_curve[i].bytes;
    if (b >= 2 * lo && b <= hi / 2) idx[n++] = i;
  }
  if (n == 0)
    for (int i = 0; i < t->n_latency_curve; i++)
      if (t->latency_curve[i].bytes > lo && t->latency_curve[i].bytes <= hi / 2) idx[0] = i, n = 1;
  return n;
}

/* Level k's latency: the median of its plateau, where a point's latency is its best over the
 * sweep and the interleaved rounds, and a plateau point must be faster than the geometric
 * middle of the level below and memory. On a VM the last level is shared with other tenants:
 * when it holds nothing of ours (every candidate as slow as memory) there is no plateau, and
 * the figure is the fastest candidate, marked as such. */
pmb_level_fit pmb_fit_level(const ptg_target *t, int k, const double *best, const double *ghz, double below_ns, double mem_ns) {
  int idx[64];
  int n = pmb_level_candidates(t, k, idx, 64);
  pmb_level_fit f = {NAN, NAN, -1, false};
  if (n == 0) return f;
  double limit = k == 0 ? INFINITY : sqrt(below_ns * mem_ns);
  double v[64];
  int m = 0, fastest = idx[0];
  for (int i = 0; i < n; i++) {
    if (best[idx[i]] < best[fastest]) fastest = idx[i];
    if (best[idx[i]] < limit) v[m++] = best[idx[i]];
  }
  if (m == 0) return (pmb_level_fit){best[fastest], ghz[fastest], fastest, false};
  qsort(v, (size_t)m, sizeof *v, by_value);
  double med = v[m / 2];
  int at = idx[0];
  for (int i = 0; i < n; i++)
    if (fabs(best[idx[i]] - med) < fabs(best[at] - med)) at = idx[i];
  return (pmb_level_fit){med, ghz[at], at, true};
}

/* Effective capacity of level k: the last point before the curve stays above the geometric
 * middle of this level's latency and the next one's (two points in a row, so that one
 * disturbed point does not end a level). */
int64_t pmb_effective_bytes(const ptg_target *t, const double *best, int64_t from, double ns, double next_ns) {
  double limit = sqrt(ns * next_ns);
  int64_t last = 0;
  for (int i = 0; i < t->n_latency_curve; i++) {
    if (t->latency_curve[i].bytes < from) continue;
    bool above = best[i] > limit, next_above = i + 1 >= t->n_latency_curve || best[i + 1] > limit;
    if (above && next_above) break;
    if (!above) last = t->latency_curve[i].bytes;
  }
  return last;
}
