/* Reuse histograms as caches see them: misses of a fully associative LRU cache of any size
 * (log2 bins, or their quarters where the profile has them), of a 64-set LRU cache of any
 * associativity (per-set bins), the miss-ratio curves' distance, and sums over threads. */
#include <math.h>

#include "internal.h"

void pa_reuse_hist_add(pa_reuse_hist *sum, const pa_reuse_hist *x) {
  if (x->accesses == 0 && !x->has_quarters && !x->has_sets) return;
  bool empty = sum->accesses == 0 && !sum->has_quarters && !sum->has_sets;
  sum->has_quarters = x->has_quarters && (empty || sum->has_quarters);
  sum->has_sets = x->has_sets && (empty || sum->has_sets);
  for (int k = 0; k < PA_REUSE_BINS; k++) {
    sum->bins[k] += x->bins[k];
    for (int q = 0; q < 4; q++) sum->quarters[k][q] += x->quarters[k][q];
  }
  for (int k = 0; k < PA_SET_BINS; k++) sum->sets[k] += x->sets[k];
  sum->cold += x->cold;
  sum->accesses += x->accesses;
}

double pa_reuse_misses(const pa_reuse_hist *h, int64_t lines) {
  double m = h->cold;
  for (int k = 0; k < PA_REUSE_BINS; k++) {
    int64_t lower = k == 0 ? 0 : (int64_t)1 << (k - 1);
    if (lower >= lines) m += h->bins[k];
  }
  return m;
}

/* Accesses of `count` spread evenly over distances [lo, hi) that miss a cache of `lines`. */
static double share_beyond(double count, double lo, double hi, double lines) {
  if (lo >= lines) return count;
  return hi > lines ? count * (hi - lines) / (hi - lo) : 0;
}

double pa_reuse_misses_at(const pa_reuse_hist *h, double lines) {
  double m = h->cold + (lines <= 0 ? h->bins[0] : 0);
  for (int k = 1; k < PA_REUSE_BINS; k++) {
    double lo = ldexp(1, k - 1), hi = ldexp(1, k);
    if (!h->has_quarters) {
      m += share_beyond(h->bins[k], lo, hi, lines);
      continue;
    }
    for (int q = 0; q < 4; q++) m += share_beyond(h->quarters[k][q], lo + q * lo / 4, lo + (q + 1) * lo / 4, lines);
  }
  return m;
}

double pa_reuse_misses_sets(const pa_reuse_hist *h, int ways) {
  if (!h->has_sets || ways > PA_SET_EXACT) return -1;
  double m = h->cold;
  for (int k = ways > 0 ? ways : 0; k < PA_SET_BINS; k++) m += h->sets[k];
  return m;
}

double pa_reuse_mrc_distance(const pa_reuse_hist *a, const pa_reuse_hist *b, int64_t lo, int64_t hi) {
  double worst = 0;
  for (int64_t s = lo > 0 ? lo : 1; s <= hi; s *= 2) {
    double ra = a->accesses > 0 ? pa_reuse_misses(a, s) / a->accesses : 0;
    double rb = b->accesses > 0 ? pa_reuse_misses(b, s) / b->accesses : 0;
    if (fabs(ra - rb) > worst) worst = fabs(ra - rb);
  }
  return worst;
}
