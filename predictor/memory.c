/* Memory analysis unit: from a reuse-distance histogram and the target's caches, the level
 * each access is expected to hit and the expected cost of one access (the latency the
 * pipeline simulator gives loads). A level of S sets of A ways is an LRU cache whose lines
 * land in sets at random (Hill & Smith, "Evaluating associativity in CPU caches", IEEE ToC
 * 1989): an access at reuse distance d misses when at least A of the d lines touched since
 * fall in its set, P(Poisson(d / S) >= A); a level without an associativity figure is fully
 * associative (a miss iff d >= its lines). A level shared by several cores is divided among
 * the threads that use it. Cold misses are charged as reuse at the program's footprint:
 * measurements repeat a kernel, so first touches find the previous run's data when it fits. */
#include <math.h>

#include "internal.h"

double pp_level_latency(const ptg_target *t, int level) {
  double f = t->frequency_ghz.value > 0 ? t->frequency_ghz.value : 3;
  if (level >= 1) {
    const ptg_cache *c = ptg_target_cache(t, level);
    if (!c) return NAN;
    if (isfinite(c->latency_cycles.value)) return c->latency_cycles.value;
    if (isfinite(c->latency_ns.value)) return c->latency_ns.value * f;
    return 4.0 * level * level; /* no figure: L1 4, L2 16, L3 36 cycles, typical orders */
  }
  if (isfinite(t->memory.latency_cycles.value)) return t->memory.latency_cycles.value;
  if (isfinite(t->memory.latency_ns.value)) return t->memory.latency_ns.value * f;
  return 100 * f; /* 100 ns, a typical DRAM latency */
}

/* Accesses at distance >= lines plus cold ones; a bin straddling `lines` is split
 * log-linearly (pa_reuse_misses counts whole bins only). */
static double misses_at(const pa_reuse_hist *h, int64_t lines) {
  double m = h->cold, l2 = log2((double)lines);
  for (int k = 1; k < PA_REUSE_BINS; k++) {
    double lo = k - 1, hi = k; /* bin k holds 2^(k-1) <= d < 2^k */
    if (lo >= l2) m += h->bins[k];
    else if (hi > l2) m += h->bins[k] * (hi - l2);
  }
  return m;
}

/* P(at least ways of the d other lines share a set of `sets`): the Poisson tail. */
static double set_miss(double d, double sets, int ways) {
  double lambda = d / sets;
  if (lambda > ways + 12 * sqrt(ways) + 30) return 1;
  double term = exp(-lambda), below = 0;
  for (int i = 0; i < ways; i++) below += term, term *= lambda / (i + 1);
  return below >= 1 ? 0 : 1 - below;
}

/* Misses of a set-associative level: each log2 bin of distances evaluated at four points
 * spread over it (geometrically), cold accesses always. */
static double misses_assoc(const pa_reuse_hist *h, int64_t lines, int ways) {
  double sets = (double)lines / ways, m = h->cold;
  for (int k = 1; k < PA_REUSE_BINS; k++) {
    if (h->bins[k] <= 0) continue;
    double p = 0;
    for (int q = 0; q < 4; q++) p += set_miss(exp2(k - 1 + (q + 0.5) / 4), sets, ways);
    m += h->bins[k] * p / 4;
  }
  return m;
}

static double model(const ptg_target *t, const pa_reuse_hist *h, double footprint_lines, int sharers,
                    bool fully_assoc, double *hit) {
  int levels = ptg_target_cache_levels(t);
  if (levels > PP_MAX_LEVELS) levels = PP_MAX_LEVELS;
  for (int i = 0; i <= PP_MAX_LEVELS; i++) hit[i] = 0;
  double l1 = pp_level_latency(t, 1);
  if (!isfinite(l1)) l1 = 4;
  if (!h || !(h->accesses > 0) || levels == 0) {
    hit[0] = 1;
    return l1;
  }
  double prev = h->accesses, lat = 0;
  for (int L = 1; L <= levels; L++) {
    const ptg_cache *c = ptg_target_cache(t, L);
    int share = c->shared_by > 1 ? (sharers < c->shared_by ? sharers : c->shared_by) : 1;
    if (share < 1) share = 1;
    int64_t lines = c->size_bytes / (c->line_bytes > 0 ? c->line_bytes : PA_LINE_BYTES) / share;
    int ways = fully_assoc ? 0 : c->associativity;
    double misses = ways > 0 && lines >= 2 * ways ? misses_assoc(h, lines, ways) : misses_at(h, lines > 0 ? lines : 1);
    if (footprint_lines <= (double)lines) misses -= h->cold; /* warm from the previous run */
    if (misses < 0) misses = 0;
    if (misses > prev) misses = prev;
    hit[L - 1] = (prev - misses) / h->accesses;
    lat += hit[L - 1] * pp_level_latency(t, L);
    prev = misses;
  }
  hit[PP_MAX_LEVELS] = prev / h->accesses;
  lat += hit[PP_MAX_LEVELS] * pp_level_latency(t, 0);
  return lat;
}

double pp_memory_model(const ptg_target *t, const pa_reuse_hist *h, int sharers, double *hit_fraction) {
  return model(t, h, h ? h->cold : 0, sharers, false, hit_fraction);
}

double pp_memory_model_footprint(const ptg_target *t, const pa_reuse_hist *h, double footprint, int sharers,
                                 bool fully_assoc, double *hit_fraction) {
  return model(t, h, footprint, sharers, fully_assoc, hit_fraction);
}
