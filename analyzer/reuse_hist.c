/* Reuse histograms as caches see them: misses of a fully associative LRU cache of any size
 * (log2 bins, or their quarters where the profile has them), of a 64-set LRU cache of any
 * associativity (per-set bins) and of the larger set counts a profile asked for (llc bins), the
 * miss-ratio curves' distance, and sums over threads. */
#include <math.h>

#include "internal.h"

/* The same set counts in the same order. */
static bool same_llc(const pa_reuse_hist *a, const pa_reuse_hist *b) {
  if (a->n_llc != b->n_llc) return false;
  for (int i = 0; i < a->n_llc; i++)
    if (a->llc[i].sets != b->llc[i].sets) return false;
  return true;
}

void pa_reuse_hist_add(pa_reuse_hist *sum, const pa_reuse_hist *x) {
  if (x->accesses == 0 && !x->has_quarters && !x->has_sets && !x->n_llc) return;
  bool empty = sum->accesses == 0 && !sum->has_quarters && !sum->has_sets && !sum->n_llc;
  sum->has_quarters = x->has_quarters && (empty || sum->has_quarters);
  sum->has_sets = x->has_sets && (empty || sum->has_sets);
  if (empty)
    for (int i = 0; i < x->n_llc; i++) sum->llc[i].sets = x->llc[i].sets;
  sum->n_llc = empty || same_llc(sum, x) ? x->n_llc : 0;
  for (int i = 0; i < sum->n_llc; i++)
    for (int k = 0; k < PA_SET_BINS; k++) sum->llc[i].bins[k] += x->llc[i].bins[k];
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

double pa_reuse_misses_llc(const pa_reuse_hist *h, int sets, int ways) {
  for (int i = 0; i < h->n_llc; i++) {
    if (h->llc[i].sets != sets) continue;
    if (ways > PA_SET_EXACT) return -1;
    double m = h->cold;
    for (int k = ways > 0 ? ways : 0; k < PA_SET_BINS; k++) m += h->llc[i].bins[k];
    return m;
  }
  return -1;
}

const char *pa_llc_sets_invalid(int n, const int *sets) {
  if (n < 0 || n > PA_LLC_COUNTS) return "at most 4 set counts";
  for (int i = 0; i < n; i++) {
    if (sets[i] < PA_LLC_SETS_MIN || sets[i] > PA_LLC_SETS_MAX || (sets[i] & (sets[i] - 1)))
      return "each set count a power of two in 128..32768";
    for (int j = 0; j < i; j++)
      if (sets[j] == sets[i]) return "each set count once";
  }
  return NULL;
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
