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
#include <stdlib.h>
#include <string.h>

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

/* Each log2 bin's miss probability in a level of `lines` lines and `ways` ways: the bin
 * evaluated at four points spread over it (geometrically). A level's bins are the same for
 * every histogram, and a prediction asks for a target's few levels thousands of times: the
 * last few levels' bins are kept, per thread (predictions may run in several). */
static const double *set_assoc_bins(int64_t lines, int ways) {
  enum { KEPT = 8 };
  static __thread struct {
    int64_t lines;
    int ways;
    double p[PA_REUSE_BINS];
  } kept[KEPT];
  static __thread int next;
  for (int i = 0; i < KEPT; i++)
    if (kept[i].lines == lines && kept[i].ways == ways) return kept[i].p;
  int i = next;
  next = (next + 1) % KEPT;
  double sets = (double)lines / ways;
  kept[i].lines = lines, kept[i].ways = ways, kept[i].p[0] = 0;
  for (int k = 1; k < PA_REUSE_BINS; k++) {
    double p = 0;
    for (int q = 0; q < 4; q++) p += set_miss(exp2(k - 1 + (q + 0.5) / 4), sets, ways);
    kept[i].p[k] = p / 4;
  }
  return kept[i].p;
}

/* Misses of a set-associative level: each log2 bin at its miss probability, cold accesses
 * always. */
double pp_misses_set_assoc(const pa_reuse_hist *h, int64_t lines, int ways) {
  const double *p = set_assoc_bins(lines, ways);
  double m = h->cold;
  for (int k = 1; k < PA_REUSE_BINS; k++)
    if (h->bins[k] > 0) m += h->bins[k] * p[k];
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
    double misses = ways > 0 && lines >= 2 * ways ? pp_misses_set_assoc(h, lines, ways) : misses_at(h, lines > 0 ? lines : 1);
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

/* ------------------------------------------------------------------ per-access strides */

/* Data TLB reach by microarchitecture (entries of the first- and second-level data TLBs for
 * 4 KiB pages), the cycles an L1-DTLB miss that hits the L2 TLB adds, and how many page-table
 * walks run at once. Published figures: Zen 4: 72 / 3072 entries, 7 cycles (AMD Software
 * Optimization Guide for Family 19h, 57647, sec. 2.11.1; Chips and Cheese, "AMD's Zen 4 Part
 * 2"); Zen 5: 96 / 4096 (AMD Software Optimization Guide for Family 1Ah, 58455, sec. 2.11.1),
 * 7 cycles assumed as Zen 4; Zen 2/3: 64 / 2048 (Family 17h/19h guides), 7 cycles; walkers:
 * 2 on Zen 2, 6 from Zen 3 on (AMD, "Zen 3", Hot Chips 33, 2021); Skylake(-SP): 64 / 1536, 9
 * cycles, 2 walkers (Intel 64 and IA-32 Optimization Reference Manual, table 2-x "TLB
 * parameters"; two page walkers since Broadwell); Neoverse N1: 48 / 1280, 5 cycles assumed, 2
 * walkers assumed (Arm Neoverse N1 TRM, sec. 5.2). Unknown: 64 / 2048 / 7 / 2, the middle. */
void pp_tlb_figures(const ptg_target *t, double *l1_entries, double *l2_entries, double *l2_hit, double *walkers) {
  static const struct {
    const char *uarch;
    double l1, l2, hit, walkers;
  } tlb[] = {{"zen2", 64, 2048, 7, 2},           {"zen3", 64, 2048, 7, 6},        {"zen4", 72, 3072, 7, 6},
             {"zen5", 96, 4096, 7, 6},           {"skylake-sp", 64, 1536, 9, 2}, {"skylake", 64, 1536, 9, 2},
             {"cascadelake", 64, 1536, 9, 2},    {"neoverse-n1", 48, 1280, 5, 2}};
  *l1_entries = 64, *l2_entries = 2048, *l2_hit = 7, *walkers = 2;
  const char *u = t->microarchitecture ? t->microarchitecture : "";
  for (size_t i = 0; i < PT_ARRAY_LEN(tlb); i++)
    if (strcmp(u, tlb[i].uarch) == 0)
      *l1_entries = tlb[i].l1, *l2_entries = tlb[i].l2, *l2_hit = tlb[i].hit, *walkers = tlb[i].walkers;
}

/* Fraction of a strided walk's lines (`trip` lines, `step` lines apart, `streams` walks
 * alike) that a level of `sets` sets of `ways` ways cannot keep until the walk comes back.
 * The set index is the line number modulo sets. Within a 4 KiB page the index follows the
 * virtual address, so the walk lands on page_sets / gcd(step, page_sets) positions of a page
 * (page_sets = the sets a page spans); the index bits above the page come from the physical
 * frame, which the OS picks with no relation to the virtual one (no huge pages: transparent
 * huge pages are madvise-only on the measuring machine and portent does not madvise), so the
 * lines of one position spread at random over the level's sets / page_sets page colours:
 * a line is lost when at least `ways` others share its set, P(Poisson >= ways) as in
 * pp_misses_set_assoc. A level no larger than a page (L1 here) is deterministic: all lost
 * when a position holds more lines than ways. */
#define PAGE_BYTES 4096 /* x86-64 and AArch64 base page */
/* The sets of a level (`sets` of them) that one page spans: its lines, or all the sets. */
static int64_t page_sets_of(int64_t sets) { return PAGE_BYTES / PA_LINE_BYTES < sets ? PAGE_BYTES / PA_LINE_BYTES : sets; }

/* The sets of a level (`sets` of them) that a walk `step` lines apart falls in within a page
 * (the index bits a page holds are virtual), at most `trip`. */
static double walk_positions(double trip, int64_t step, int64_t sets) {
  int64_t page_sets = page_sets_of(sets);
  int64_t g = pt_gcd64(step % page_sets, page_sets);
  double positions = (double)(page_sets / (g > 0 ? g : page_sets));
  return positions > trip ? trip : positions;
}

static int64_t floor_div(int64_t a, int64_t b) { return a / b - (a % b != 0 && (a < 0) != (b < 0)); }

/* m's low `bits` bits as a ring, rotated r places up. */
static uint64_t rotate_ring(uint64_t m, int64_t r, int64_t bits) {
  if (r == 0) return m;
  uint64_t all = bits >= 64 ? ~(uint64_t)0 : ((uint64_t)1 << bits) - 1;
  return ((m << r) | (m >> (bits - r))) & all;
}

/* The positions within a page (of a level with `sets` sets) that n walks of one object at one
 * stride (`step` lines, at most `trip` of them each) touch together: each walk from the line its
 * offset puts it on relative to the group's first walk with an offset (relative, so the count
 * does not depend on where the object starts, and a block's schedule memo may key on offset
 * differences); a walk without one starts there too, where walks without offsets were all taken
 * to be. One walk's positions (walk_positions) when no walk has an offset. A page holds at most
 * 64 lines, so the positions are bits of one word. */
static double union_positions(const pa_node *const *walks, int n, double trip, int64_t step, int64_t sets) {
  int first = 0;
  while (first < n && !walks[first]->has_offset) first++;
  if (first == n || n == 1) return walk_positions(trip, step, sets); /* one start: one walk's positions */
  int64_t page_sets = page_sets_of(sets);
  /* one walk's positions from line 0, then each walk's as that ring rotated to its start line
   * (this runs for every walk of every predicted block: no division per line) */
  uint64_t from0 = 0;
  double reach = trip < (double)page_sets ? trip : (double)page_sets;
  int64_t stride = ((step % page_sets) + page_sets) % page_sets;
  for (int64_t i = 0, at = 0; i < reach; i++) {
    from0 |= (uint64_t)1 << at;
    at += stride;
    if (at >= page_sets) at -= page_sets;
  }
  uint64_t touched = 0;
  for (int v = 0; v < n; v++) {
    int64_t line = walks[v]->has_offset ? floor_div(walks[v]->offset - walks[first]->offset, PA_LINE_BYTES) : 0;
    touched |= rotate_ring(from0, ((line % page_sets) + page_sets) % page_sets, page_sets);
  }
  return (double)__builtin_popcountll(touched);
}

/* The walks of a group (one object, one stride) as walk_lost's `streams` for one of them: the
 * group's lines over the positions they touch together, in units of one walk's positions. */
static double group_streams(const pa_node *const *group, int n, double trip, int64_t step, int64_t sets) {
  double together = union_positions(group, n, trip, step, sets);
  return together > 0 ? n * walk_positions(trip, step, sets) / together : n;
}

static double walk_lost(double trip, int64_t step, int64_t sets, int ways, double streams) {
  if (sets < 1 || ways < 1) return 0;
  int64_t page_sets = page_sets_of(sets);
  double positions = walk_positions(trip, step, sets);
  double per_position = streams * trip / positions, colours = (double)(sets / page_sets);
  if (colours <= 1) return per_position > ways ? 1 : 0;
  return set_miss(per_position - 1, colours, ways);
}

/* Whether two accesses walk one stream of lines: the same object (pa_node array) and stride
 * vector, and offsets (where both are known) that put them on the same line, or on the line the
 * other reads some iterations apart (a difference within a line of a multiple of an innermost
 * stride of a line or more). A load and a store of the same element (read-modify-write) walk one
 * stream, whose second access hits the line the first brought; neighbouring elements too; rows
 * of an unrolled loop (offsets a row apart, the stride several rows) are separate walks. */
static inline bool same_stream(const pa_node *a, const pa_node *b) {
  if (a->array != b->array || a->n_strides != b->n_strides) return false;
  /* offsets first: the rows of an unrolled loop, one object and one stride vector, differ there */
  if (a->has_offset && b->has_offset) { /* unknown: taken as one stream, as before offsets */
    int64_t d = a->offset - b->offset, s = a->n_strides > 0 ? a->strides[0] : 0;
    if (s < 0) s = -s;
    if (s >= PA_LINE_BYTES && s != PA_STRIDE_UNKNOWN) {
      d %= s;
      if (d > s / 2) d -= s;
      if (d < -s / 2) d += s;
    }
    if (d <= -PA_LINE_BYTES || d >= PA_LINE_BYTES) return false;
  }
  for (int k = 0; k < a->n_strides; k++) /* a few strides: no memcmp call */
    if (a->strides[k] != b->strides[k]) return false;
  return true;
}

bool pp_same_stream(const pa_node *a, const pa_node *b) { return same_stream(a, b); }

/* Whether a node's strides walk its own bytes: a gather's or scatter's are its first lane's,
 * the others lane_step apart (pp_gather_lanes_missing_l1 prices those). */
static bool walks_own_bytes(const pa_node *n) { return n->n_strides > 0 && n->op != PA_OP_GATHER; }

/* The distinct walks of a block: memory nodes with a known, non-zero innermost stride, one
 * per stream (same_stream). Nodes whose object is unknown (array 0, older profiles) count as
 * one object. Linear: a hash of each (object, stride vector). Returns how many, in walks[]
 * (b->n_nodes entries). */
static uint64_t strides_hash(const pa_node *n) {
  uint64_t h = (1469598103934665603ull ^ (uint64_t)n->n_strides) * 1099511628211ull;
  h = (h ^ (uint64_t)n->array) * 1099511628211ull;
  for (int k = 0; k < n->n_strides; k++) h = (h ^ (uint64_t)n->strides[k]) * 1099511628211ull;
  return h;
}

static int distinct_walks(pp_predictor *pp, const pa_block *b, int *walks) {
  int cap = 16;
  while (cap < 2 * b->n_nodes) cap *= 2;
  if (cap > pp->s_cap_table) {
    pp->s_cap_table = cap;
    pp->s_table = realloc(pp->s_table, sizeof(int) * (size_t)cap);
    pp->s_table_hash = realloc(pp->s_table_hash, sizeof(uint64_t) * (size_t)cap);
  }
  int *table = pp->s_table, m = 0;
  uint64_t *hashes = pp->s_table_hash;
  for (int k = 0; k < cap; k++) table[k] = -1;
  for (int i = 0; i < b->n_nodes; i++) {
    const pa_node *n = &b->nodes[i];
    if (!walks_own_bytes(n) || n->strides[0] == PA_STRIDE_UNKNOWN || n->strides[0] == 0 || pp_wraps_in_loop(n)) continue;
    uint64_t h = strides_hash(n);
    bool seen = false;
    size_t k = h & (size_t)(cap - 1);
    /* walks of one stream share the hash: the others in the probe chain are skipped unread */
    for (; table[k] >= 0 && !seen; k = (k + 1) & (size_t)(cap - 1))
      seen = hashes[k] == h && same_stream(&b->nodes[table[k]], n);
    if (seen) continue;
    table[k] = i, hashes[k] = h; /* the probe ended on the first free slot */
    walks[m++] = i;
  }
  return m;
}

static int64_t abs_stride(const pa_node *n) { return n->strides[0] < 0 ? -n->strides[0] : n->strides[0]; }

/* Whether two walks are of one group: one object at one stride, competing for the sets their
 * offsets put them in. */
static bool same_group(const pa_node *a, const pa_node *b) { return abs_stride(a) == abs_stride(b) && a->array == b->array; }

/* Whether the sweep of a walk comes back: the enclosing loop's next iteration reuses its lines. */
static bool sweep_reused(const pa_node *n) {
  return n->n_strides >= 2 && n->strides[1] != PA_STRIDE_UNKNOWN && n->strides[1] > -PA_LINE_BYTES &&
         n->strides[1] < PA_LINE_BYTES;
}

/* Misses in flight out of the level above `serving` (1-based; levels + 1 = memory): the
 * overlapping_misses measured by random chases over `serving` (microbench: caches[].
 * overlapping_misses; L2's figure is how many L1 misses are outstanding at once); for memory, or
 * a level without the figure (these VMs' last level, which other tenants hold), the strided walk
 * measured with the nearest stride in 4 KiB pages (TLB misses and the prefetchers' limits
 * included), else memory's random-chase figure. 0: the target has none. */
const ptg_strided_walk *pp_nearest_strided_walk(const ptg_target *t, int64_t stride) {
  const ptg_strided_walk *best = NULL;
  double best_d = INFINITY;
  for (int i = 0; i < t->memory.n_strided; i++) {
    const ptg_strided_walk *w = &t->memory.strided[i];
    if (w->page_bytes != PAGE_BYTES || !(w->overlapping_misses.value >= 1) || !(w->ns_per_access.value > 0) ||
        w->stride_bytes <= 0)
      continue;
    double d = fabs(log((double)w->stride_bytes / (double)(stride > 0 ? stride : 1)));
    if (d < best_d) best_d = d, best = w;
  }
  return best;
}

static double serving_inflight(const ptg_target *t, int serving, int levels, int64_t stride) {
  if (serving <= levels) {
    const ptg_cache *c = ptg_target_cache(t, serving);
    if (c && c->overlapping_misses.value >= 1) return c->overlapping_misses.value;
  }
  const ptg_strided_walk *best = pp_nearest_strided_walk(t, stride);
  if (best) return best->overlapping_misses.value;
  return t->memory.overlapping_misses.value >= 1 ? t->memory.overlapping_misses.value : 0;
}

/* Stall cycles per execution of block b from what the reuse histograms cannot show: walks
 * whose stride (pa_node strides) maps a loop's sweep onto too few cache sets to survive until
 * the enclosing loop comes back to the same lines (set conflicts: those accesses are served
 * by the first level whose sets hold the sweep), and walks that touch more pages per sweep
 * than the first-level data TLB holds (a TLB miss per page). `trip` is the block's iterations
 * per entry into its loop, `window_iterations` how many of them the reorder window spans.
 * Returns, per iteration, the latency beyond an L1 hit that independent loads overlap (misses
 * and L2-TLB hits; the caller divides it by the target's overlapping misses) in *miss; in
 * *miss_inflight the same latency held by each level's miss buffers (a line lost at L holds one
 * from L's miss until the level serving it answers) over the misses in flight out of that level
 * (serving_inflight), the largest over the levels (Little's law per level); page-walk cycles
 * already divided among the walkers in *tlb; and in *longest the latency beyond L1 of the
 * longest miss that comes at least once per reorder window (the one the window waits on). */
void pp_stride_stalls(pp_predictor *pp, const pa_block *b, double trip, double window_iterations, double *miss,
                      double *miss_inflight, double *tlb, double *longest) {
  *miss = *miss_inflight = *tlb = *longest = 0;
  if (!(trip >= 2)) return;
  const ptg_target *t = pp->t;
  int levels = ptg_target_cache_levels(t);
  if (levels > PP_MAX_LEVELS) levels = PP_MAX_LEVELS;
  double pages = 0, page_accesses = 0;
  bool any = false;
  for (int i = 0; i < b->n_nodes && !any; i++) any = walks_own_bytes(&b->nodes[i]);
  if (!any) return;
  if (b->n_nodes + 1 > pp->s_cap_walks)
    pp->s_cap_walks = 2 * (b->n_nodes + 1), pp->s_walks = realloc(pp->s_walks, sizeof(int) * (size_t)pp->s_cap_walks);
  int *walks = pp->s_walks;
  int m = distinct_walks(pp, b, walks);
  double held_by_level[PP_MAX_LEVELS + 1] = {0}; /* per iteration, over the misses in flight */
  for (int w = 0; w < m; w++) {
    const pa_node *n = &b->nodes[walks[w]];
    int64_t s = abs_stride(n);
    /* walks of the same object with the same stride compete for the sets their offsets put them
     * in (group_streams); walks of different objects (separate allocations, placed at unrelated
     * physical pages) do not; few walks per block in practice, so the group is a scan */
    /* an earlier walk of the group opens the same pages: its offset on the same page, counted
     * from the group's first walk with an offset (relative, as union_positions) */
    bool page_seen = false;
    const pa_node *base = NULL;
    for (int v = 0; v < w && !page_seen && n->has_offset; v++) {
      const pa_node *o = &b->nodes[walks[v]];
      if (!same_group(o, n) || !o->has_offset) continue;
      if (!base) base = o;
      page_seen = floor_div(o->offset - base->offset, PAGE_BYTES) == floor_div(n->offset - base->offset, PAGE_BYTES);
    }
    /* pages one sweep of this walk touches, and how many of its accesses open a new page */
    double span = s >= 4096 ? trip : trip * (double)s / 4096.0;
    if (!page_seen) pages += span > 1 ? span : 1, page_accesses += span;
    if (s < PA_LINE_BYTES) continue;
    if (!sweep_reused(n)) continue; /* the reuse histograms see the rest */
    const pa_node *group[m];
    int g = 0;
    for (int v = 0; v < m; v++) {
      const pa_node *o = &b->nodes[walks[v]];
      if (same_group(o, n)) group[g++] = o;
    }
    /* the expected latency beyond L1 of one access: the fraction each level loses goes on
     * to the next (a level loses at least what the one above it lost). `worst` is the latency
     * of the deepest level that serves this walk at least once per reorder window: a rarer miss
     * seldom finds the window waiting on it, so it does not set the window's pace (its cycles
     * still count in `extra`). A 16- or 20-way level keeps almost all of a sweep (mm512's
     * column walk loses 0.8% of its lines in a 2 MiB 16-way L2 and ~1e-16, a Poisson tail
     * rounded, in the L3): with any loss > 0 setting it, every iteration waited for DRAM and
     * mm512 was predicted 2.3x slow on Emerald Rapids (docs/validation.md). */
    double parts = n->bytes > PA_LINE_BYTES ? (n->bytes + PA_LINE_BYTES - 1) / PA_LINE_BYTES : 1;
    double reach = 1, extra = 0, worst = 0, level_extra[PP_MAX_LEVELS + 1] = {0};
    double streams = g, streams_page_sets = 0; /* group_streams depends on a level's sets only up to a page's */
    for (int L = 1; L <= levels && reach > 0; L++) {
      const ptg_cache *c = ptg_target_cache(t, L);
      int ways = c->associativity;
      int64_t lines = c->size_bytes / (c->line_bytes > 0 ? c->line_bytes : PA_LINE_BYTES);
      int64_t step = s % PA_LINE_BYTES ? 1 : s / PA_LINE_BYTES, sets = ways > 0 ? lines / ways : 0;
      double page_sets = (double)page_sets_of(sets);
      if (ways > 0 && lines >= ways && page_sets != streams_page_sets)
        streams = group_streams(group, g, trip, step, sets), streams_page_sets = page_sets;
      double lost = ways > 0 && lines >= ways ? walk_lost(trip, step, sets, ways, streams)
                                              : 0; /* no associativity figure: the reuse model decides */
      if (lost > reach) lost = reach;
      double next = L < levels ? pp_level_latency(t, L + 1) : pp_level_latency(t, 0);
      if (lost > 0) {
        level_extra[L] = lost * (next - pp_level_latency(t, L));
        extra += level_extra[L];
        if (lost * parts * window_iterations >= 1) worst = next - pp->l1_latency;
      }
      reach = lost;
    }
    if (extra > 0) *miss += extra * parts;
    /* a line lost at level L holds one of L's miss buffers until the level that finally serves
     * it answers: level_extra of L and of every level below it; those buffers number the misses
     * in flight measured at L + 1 (serving_inflight) */
    for (int L = 1; L <= levels && extra > 0; L++) {
      double from_here = 0;
      for (int M = L; M <= levels; M++) from_here += level_extra[M];
      double inflight = serving_inflight(t, L + 1, levels, s);
      held_by_level[L] += from_here * parts / (inflight >= 1 ? inflight : pp->mlp);
    }
    if (worst > *longest) *longest = worst;
  }
  for (int L = 1; L <= levels; L++)
    if (held_by_level[L] > *miss_inflight) *miss_inflight = held_by_level[L];
  double l2e = pp->tlb_l2_entries, hit = pp->tlb_l2_hit, walkers = pp->tlb_walkers;
  if (pages > pp->tlb_l1_entries) {
    /* an L1-DTLB miss that hits the L2 TLB adds its cycles to that load's latency: independent
     * loads overlap it like a cache miss (*miss, divided by the caller); beyond the L2 TLB each
     * miss walks the page table, whose entries (8 bytes a page) are read like data, at the
     * level that holds pages x 8 bytes, with at most `walkers` walks at once (*tlb) */
    *miss += page_accesses / trip * hit; /* per iteration of the block */
    *miss_inflight += page_accesses / trip * hit / pp->mlp;
    if (hit > *longest) *longest = hit;
    if (pages > l2e) {
      int L = 1;
      while (L < levels && ptg_target_cache(t, L)->size_bytes < pages * 8) L++;
      *tlb = page_accesses / trip * pp_level_latency(t, L) / walkers;
    }
  }
}

/* Whether a walk that its next enclosing loop moves by a line or more (not sweep_reused) comes
 * back, if at all, only after more lines than L1 holds: its sweep (`lines`) times the
 * iterations of each enclosing loop that moves it a line or more, up to the first that moves it
 * less (which brings its lines back) or the outermost. Such a walk misses L1 on every access:
 * the reuse histogram's misses, which fall in the walk's few sets as a set-conflicting walk's
 * lost lines do (mm512 #10: B's column, 2 of 64 sets, back only after a 1 MiB sweep). False when
 * a stride on the way is unknown before the lines exceed L1. trip[j]: block j's iterations per
 * entry into its loop. */
static bool far_walk(const pa_function *f, int loop, const pa_node *n, double lines, const double *trip, double l1_lines) {
  int q = f->loops[loop].parent;
  for (int k = 1; k < n->n_strides && q >= 0; k++, q = f->loops[q].parent) {
    int64_t s = n->strides[k];
    if (lines > l1_lines) return true;
    if (s == PA_STRIDE_UNKNOWN) return false;
    if (s > -PA_LINE_BYTES && s < PA_LINE_BYTES) return false;
    double outer = trip[f->loops[q].header];
    lines *= outer >= 1 ? outer : 1;
  }
  return lines > l1_lines;
}

/* Bytes between a gather's or scatter's neighbouring lanes, either direction. */
static int64_t abs_lane_step(const pa_node *n) { return n->lane_step < 0 ? -n->lane_step : n->lane_step; }

/* Whether a gather or scatter before node `node` of b reads the same lanes (one stream, one lane
 * step): the scatter that writes a gathered output back. */
static bool same_lanes_earlier(const pa_block *b, int node) {
  const pa_node *n = &b->nodes[node];
  for (int k = 0; k < node; k++)
    if (b->nodes[k].op == PA_OP_GATHER && b->nodes[k].lane_step == n->lane_step && same_stream(&b->nodes[k], n)) return true;
  return false;
}

double pp_gather_lanes_missing_l1(const pp_predictor *pp, const pa_function *f, const pa_block *b, int node,
                                  const double *trip) {
  const pa_node *n = &b->nodes[node];
  const ptg_cache *l1 = ptg_target_cache(pp->t, 1);
  int64_t step = abs_lane_step(n);
  if (n->op != PA_OP_GATHER || step < PAGE_BYTES || n->lanes < 2 || n->n_strides < 1 || !l1 || b->loop < 0) return 0;
  int64_t s = abs_stride(n);
  if (n->strides[0] == PA_STRIDE_UNKNOWN || s == 0) return 0;
  if (same_lanes_earlier(b, node)) return 0; /* they brought the lines */
  double line = l1->line_bytes > 0 ? l1->line_bytes : PA_LINE_BYTES, l1_lines = (double)l1->size_bytes / line;
  double t = trip[f->loops[b->loop].header], moved = s < line ? s / line : 1; /* new lines per lane per iteration */
  double lines = n->lanes * (t * moved > 1 ? t * moved : 1);
  double span = ((n->lanes - 1) * (double)step + t * (double)s) / line + 1; /* lanes that walk into each other's lines */
  if (span < lines) lines = span;
  return far_walk(f, b->loop, n, lines, trip, l1_lines) ? n->lanes * moved : 0;
}

/* Whether gathers g and h read the same lanes' pages: one object and lane step, first lanes on
 * one page. */
static bool same_lane_pages(const pa_node *g, const pa_node *h) {
  return g->lane_step == h->lane_step && g->array == h->array && g->array > 0 && g->has_offset && h->has_offset &&
         floor_div(g->offset, PAGE_BYTES) == floor_div(h->offset, PAGE_BYTES);
}

double pp_loop_gather_pages(const pa_function *f, int loop) {
  const pa_loop *L = &f->loops[loop];
  const pa_node *seen[64];
  int n_seen = 0;
  double pages = 0;
  for (int q = 0; q < L->n_blocks; q++) {
    const pa_block *c = &f->blocks[L->blocks[q]];
    for (int i = 0; c->loop == loop && i < c->n_nodes; i++) {
      const pa_node *g = &c->nodes[i];
      if (g->op != PA_OP_GATHER || g->lane_step == 0) continue;
      bool again = false;
      for (int k = 0; k < n_seen && !again; k++) again = same_lane_pages(seen[k], g);
      if (again) continue;
      if (n_seen < (int)PT_ARRAY_LEN(seen)) seen[n_seen++] = g; /* past 64 sets of lanes: counted, not matched */
      int64_t step = abs_lane_step(g);
      pages += step >= PAGE_BYTES ? g->lanes : ceil((double)g->lanes * (double)step / PAGE_BYTES);
    }
  }
  return pages;
}

double pp_gather_lanes_tlb_cycles(const pp_predictor *pp, const pa_block *b, int node, double loop_pages) {
  const pa_node *n = &b->nodes[node];
  int64_t step = abs_lane_step(n);
  if (n->op != PA_OP_GATHER || step < PAGE_BYTES || n->lanes < 2) return 0;
  if (!(loop_pages > pp->tlb_l1_entries)) return 0;
  if (same_lanes_earlier(b, node)) return 0; /* their entries are fresh */
  return n->lanes * pp->tlb_l2_hit / pp->mlp;
}

/* Whether two accesses of one stream (pp_same_stream) meet within one sweep of `trip` iterations:
 * the rows of an unrolled loop a whole number of strides apart are one stream only if the later
 * row reaches the earlier one's lines before the loop ends (bert_ffn1 #13: twelve rows of B 16
 * strides apart in a loop of 16 iterations are twelve walks, 192 lines in one L1 set position,
 * not six of 32). Unknown offsets: one stream, as pp_same_stream takes them. */
static bool meets_in_sweep(const pa_node *a, const pa_node *b, double trip) {
  if (!a->has_offset || !b->has_offset) return true;
  int64_t d = a->offset - b->offset;
  if (d < 0) d = -d;
  return (double)d < (trip - 1) * (double)abs_stride(a) + PA_LINE_BYTES; /* the first walk's last line */
}

/* A walk pp_loop_l1_sets prices: one stream of the loop, its busiest block's trip and executions. */
typedef struct {
  const pa_node *n;
  double trip, execs;
  bool far;            /* every access misses L1 (far_walk) */
  bool loaded, stored; /* the stream is read, written: both, a read-modify-write walk */
} pp_l1_walk;

/* Cycles loop `loop` of f takes at least for the L1 fills of its set-conflicting walks: a walk
 * whose sweep comes back (sweep_reused) but falls in fewer of L1's sets than its lines need
 * misses L1 on the lost fraction of its accesses (walk_lost), and those misses all fall in the
 * walk's few sets, which hold only so many fills at once (the target's set walks,
 * ptg_target_set_inflight; Zen 4 about one per set), each for an L2 round trip. Walks are taken
 * over all the loop's own blocks: a loop body split by guards into blocks reads the neighbouring
 * elements of one walk in several of them (conv_r50_5 #23: the nine weights of a 3x3 window, one
 * line, in nine blocks), one stream as within a block (distinct_walks); walks of one object at one
 * stride (an unrolled loop's rows, told apart by their offsets) fill the sets they touch together
 * (union_positions), so their misses add up over that many sets. trip[j] and
 * ecount[j] are block j's iterations per entry into its loop and its executions per thread. 0
 * when the target has no set walks. */
double pp_loop_l1_sets(pp_predictor *pp, const pa_function *f, int loop, const double *trip, const double *ecount, bool *one_set) {
  *one_set = false;
  const ptg_target *t = pp->t;
  const ptg_cache *l1 = ptg_target_cache(t, 1);
  if (!l1 || l1->n_set_walks == 0 || l1->associativity < 1 || loop < 0 || loop >= f->n_loops) return 0;
  int64_t sets = l1->size_bytes / (l1->line_bytes > 0 ? l1->line_bytes : PA_LINE_BYTES) / l1->associativity;
  const pa_loop *L = &f->loops[loop];
  int cap = pp_loop_nodes(f, L);
  if (cap == 0) return 0;
  /* the walks, then their groups' nodes: scratch kept in pp (a prediction asks per loop) */
  size_t need_bytes = (sizeof(pp_l1_walk) + sizeof(const pa_node *)) * (size_t)cap;
  if (need_bytes > pp->s_l1_bytes) pp->s_l1_bytes = 2 * need_bytes, pp->s_l1 = realloc(pp->s_l1, pp->s_l1_bytes);
  pp_l1_walk *w = pp->s_l1;
  double l1_lines = (double)(sets * l1->associativity);
  int m = 0;
  for (int k = 0; k < L->n_blocks; k++) {
    int j = L->blocks[k];
    if (!pp_loop_walk_block(f, loop, j, trip, ecount)) continue;
    const pa_block *b = &f->blocks[j];
    for (int i = 0; i < b->n_nodes; i++) {
      const pa_node *n = &b->nodes[i];
      if (!walks_own_bytes(n) || n->strides[0] == PA_STRIDE_UNKNOWN || abs_stride(n) < PA_LINE_BYTES || pp_wraps_in_loop(n)) continue;
      if (!sweep_reused(n) && !pp->o.far_sets) continue;
      int at = 0;
      while (at < m && !(same_stream(w[at].n, n) && meets_in_sweep(w[at].n, n, trip[j]))) at++;
      if (at == m) w[m++] = (pp_l1_walk){n, trip[j], ecount[j], false, false, false};
      else if (ecount[j] > w[at].execs) w[at].trip = trip[j], w[at].execs = ecount[j];
      w[at].loaded |= n->op == PA_OP_LOAD, w[at].stored |= n->op == PA_OP_STORE;
    }
  }
  /* +far: a walk that does not come back at the next iteration of its loop's parent misses L1 on
   * every access when its group (one object at one stride: an unrolled loop's rows, told apart by
   * their offsets) sweeps more lines than L1 holds before it comes back; the group's lines, not
   * one walk's (mm1024 #93: 32 rows of B's block, 4 lines each per sweep of the k loop, 2048 by
   * the time the fused loop brings them back, one walk's 64 fitting L1). Walks neither reused
   * nor far leave the list. */
  int kept = 0;
  for (int a = 0; a < m; a++) {
    if (!sweep_reused(w[a].n)) {
      double lines = 0;
      for (int v = 0; v < m; v++)
        if (!sweep_reused(w[v].n) && same_group(w[v].n, w[a].n)) lines += w[v].trip;
      w[a].far = far_walk(f, loop, w[a].n, lines, trip, l1_lines);
      if (!w[a].far) continue;
    }
    w[kept++] = w[a];
  }
  m = kept;
  double worst = 0;
  const pa_node **group = (const pa_node **)(w + cap);
  for (int a = 0; a < m; a++) {
    int64_t s = abs_stride(w[a].n), step = s % PA_LINE_BYTES ? 1 : s / PA_LINE_BYTES;
    bool done = false; /* an earlier walk of the group with the same trip gave the same bound */
    for (int v = 0; v < a && !done; v++)
      done = same_group(w[v].n, w[a].n) && w[v].trip == w[a].trip;
    if (done) continue;
    int g = 0;
    for (int v = 0; v < m; v++)
      if (same_group(w[v].n, w[a].n)) group[g++] = w[v].n;
    double streams = group_streams(group, g, w[a].trip, step, sets), misses = 0, rmw_misses = 0;
    bool wide = false; /* an access of the group spans more than a line (+setsum leaves it) */
    for (int v = 0; v < m; v++) {
      if (!same_group(w[v].n, w[a].n)) continue;
      const pa_node *n = w[v].n;
      double parts = n->bytes > PA_LINE_BYTES ? (n->bytes + PA_LINE_BYTES - 1) / PA_LINE_BYTES : 1;
      wide |= parts > 1;
      double lost = w[v].far ? 1 : walk_lost(w[v].trip, step, sets, l1->associativity, streams);
      misses += lost * parts * w[v].execs;
      if (w[v].loaded && w[v].stored && !w[v].far) rmw_misses += lost * parts * w[v].execs;
    }
    /* the group's misses fall in the sets its walks touch together */
    double positions = union_positions(group, g, w[a].trip, step, sets);
    double inflight = ptg_target_set_inflight(t, positions), need = 0;
    if (inflight > 0) need = misses * pp_level_latency(t, 2) / inflight;
    /* +setns: the set walks' own time per access at that many positions, not L2's latency over
     * the misses in flight that their chase (slower than L2's, Zen 3 1.27x at 4 sets) gives */
    double ns = pp->o.set_ns ? ptg_target_set_ns(t, positions) : NAN;
    if (ns > 0) need = misses * ns * pp->freq_ghz;
    /* +dirty: a read-modify-write walk's misses each write a dirty line back as well, at the
     * target's measured time per access of such a walk in that many sets (the other misses of
     * the group as before) */
    double rmw_ns = pp->o.dirty_sets && rmw_misses > 0 ? ptg_target_set_rmw_ns(t, positions) : NAN;
    if (rmw_ns > 0 && inflight > 0)
      need = fmax(need, rmw_misses * rmw_ns * pp->freq_ghz + (misses - rmw_misses) * pp_level_latency(t, 2) / inflight);
    /* +setloads: the group's walks are g load instructions reading one column at once (an
     * unrolled loop's rows), which the target serves slower than one load walking alone */
    if (pp->o.set_loads && g > 1) need *= ptg_target_set_loads_ratio(t, positions, g);
    if (need > worst) worst = need, *one_set = positions <= 1 && !(rmw_ns > 0) && !wide;
  }
  return worst;
}
