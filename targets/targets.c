/* The target description in memory: name tables for op classes and element types, the
 * instruction-cost lookup with its nearest-class fallback, and cache/runtime accessors the
 * predictor calls. JSON reading and writing live in json_read.c and json_write.c. */
#include <math.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

static const char *const op_names[] = {
#define PTG_X(e, name, doc) name,
    PTG_OP_CLASSES(PTG_X)
#undef PTG_X
};
_Static_assert(PT_ARRAY_LEN(op_names) == PTG_OP_COUNT, "op-class table");

static const struct {
  const char *name;
  int bits;
  bool is_float;
} elem_info[] = {
#define PTG_X(e, name, bits, fl) {name, bits, fl},
    PTG_ELEM_TYPES(PTG_X)
#undef PTG_X
};
_Static_assert(PT_ARRAY_LEN(elem_info) == PTG_ELEM_COUNT, "element-type table");

const char *ptg_op_name(ptg_op op) { return (unsigned)op < PTG_OP_COUNT ? op_names[op] : "?"; }
const char *ptg_elem_name(ptg_elem e) { return (unsigned)e < PTG_ELEM_COUNT ? elem_info[e].name : "?"; }
int ptg_elem_bits(ptg_elem e) { return (unsigned)e < PTG_ELEM_COUNT ? elem_info[e].bits : 0; }
bool ptg_elem_is_float(ptg_elem e) { return (unsigned)e < PTG_ELEM_COUNT && elem_info[e].is_float; }

ptg_op ptg_op_fallback(ptg_op op) {
  switch (op) {
  case PTG_OP_MASKLOAD: return PTG_OP_LOAD;
  case PTG_OP_MASKSTORE: return PTG_OP_STORE;
  case PTG_OP_SCATTER:
  case PTG_OP_GATHER_PAGE: return PTG_OP_GATHER;
  case PTG_OP_SCATTER_PAGE: return PTG_OP_SCATTER;
  default: return op;
  }
}

int ptg_op_from_name(const char *name) {
  for (int i = 0; i < PTG_OP_COUNT; i++)
    if (strcmp(name, op_names[i]) == 0) return i;
  return -1;
}

int ptg_elem_from_name(const char *name) {
  for (int i = 0; i < PTG_ELEM_COUNT; i++)
    if (strcmp(name, elem_info[i].name) == 0) return i;
  return -1;
}

ptg_figure ptg_fig(double value) { return (ptg_figure){.value = value, .spread = 0, .reps = 0, .source = NULL}; }

ptg_target *ptg_target_new(const char *name) {
  ptg_target *t = calloc(1, sizeof *t);
  if (!t) return NULL;
  t->arena = pt_arena_new();
  t->version = PTG_FORMAT_VERSION;
  t->name = pt_strdup(t->arena, name ? name : "unnamed");
  t->frequency_ghz = ptg_fig(NAN);
  t->issue_width = ptg_fig(NAN);
  t->store_forward_fail_cycles = ptg_fig(NAN);
  t->store_forward_cycles = ptg_fig(NAN);
  t->spill_update_cycles = ptg_fig(NAN);
  t->memory.latency_ns = t->memory.latency_cycles = t->memory.overlapping_misses = ptg_fig(NAN);
  t->gpu.clock_ghz = t->gpu.memory_clock_ghz = NAN;
#define PTG_X(field, key, lo, hi, doc) t->gpu.field = ptg_fig(NAN);
  PTG_GPU_FIGURES(PTG_X)
#undef PTG_X
  return t;
}

void ptg_target_free(ptg_target *t) {
  if (!t) return;
  free(t->insts);
  pt_arena_free(t->arena);
  free(t);
}

ptg_inst *ptg_target_add_inst(ptg_target *t, ptg_op op, ptg_elem elem, int vector_bits) {
  if ((t->n_insts & (t->n_insts - 1)) == 0) { /* grow at powers of two */
    int cap = t->n_insts ? 2 * t->n_insts : 16;
    ptg_inst *grown = realloc(t->insts, (size_t)cap * sizeof *grown);
    if (!grown) abort();
    t->insts = grown;
  }
  ptg_inst *r = &t->insts[t->n_insts++];
  memset(r, 0, sizeof *r);
  r->op = op;
  r->elem = elem;
  r->vector_bits = vector_bits;
  r->latency = r->recip_throughput = ptg_fig(NAN);
  r->counter_cycles = r->counter_instructions = NAN;
  return r;
}

const ptg_inst *ptg_target_find_inst(const ptg_target *t, ptg_op op, ptg_elem elem, int vector_bits) {
  for (int i = 0; i < t->n_insts; i++) {
    const ptg_inst *r = &t->insts[i];
    if (r->op == op && r->elem == elem && r->vector_bits == vector_bits) return r;
  }
  return NULL;
}

/* Rule 2: among rows of (op, elem) with a usable throughput, the narrowest at least as wide
 * as asked, else the widest narrower one (the operation is split into several). */
static const ptg_inst *nearest_width(const ptg_target *t, ptg_op op, ptg_elem elem, int bits) {
  const ptg_inst *wider = NULL, *narrower = NULL;
  for (int i = 0; i < t->n_insts; i++) {
    const ptg_inst *r = &t->insts[i];
    if (r->op != op || r->elem != elem || isnan(r->recip_throughput.value)) continue;
    if (r->vector_bits >= bits) {
      if (!wider || r->vector_bits < wider->vector_bits) wider = r;
    } else if (!narrower || r->vector_bits > narrower->vector_bits) {
      narrower = r;
    }
  }
  return wider ? wider : narrower;
}

static ptg_inst_cost cost_of(const ptg_inst *r, int bits, int fallback) {
  ptg_inst_cost c = {.row = r, .fallback = fallback, .unit = r->unit, .split = 1};
  /* A row measured on wider elements stands for as many lanes of the asked width as fit. */
  if (bits > r->vector_bits) c.split = (bits + r->vector_bits - 1) / r->vector_bits;
  c.latency = isnan(r->latency.value) ? r->recip_throughput.value : r->latency.value;
  c.recip_throughput = r->recip_throughput.value * c.split;
  return c;
}

ptg_inst_cost ptg_target_inst(const ptg_target *t, ptg_op op, ptg_elem elem, int vector_bits) {
  const ptg_inst *r = ptg_target_find_inst(t, op, elem, vector_bits);
  if (r && !isnan(r->recip_throughput.value)) return cost_of(r, vector_bits, 1);
  if ((r = nearest_width(t, op, elem, vector_bits))) return cost_of(r, vector_bits, 2);
  if (ptg_op_fallback(op) != op) { /* the class missing: the one it was priced as before it existed */
    bool any = false;
    for (int i = 0; i < t->n_insts && !any; i++) any = t->insts[i].op == op;
    if (!any) {
      ptg_inst_cost c = ptg_target_inst(t, ptg_op_fallback(op), elem, vector_bits);
      if (c.fallback < 3) c.fallback = 3;
      return c;
    }
  }
  /* Rule 3: same kind and size, then same kind, then anything; keep the lane count. */
  int lanes = vector_bits / (ptg_elem_bits(elem) ? ptg_elem_bits(elem) : 32);
  if (lanes < 1) lanes = 1;
  for (int pass = 0; pass < 3; pass++) {
    for (int e = 0; e < PTG_ELEM_COUNT; e++) {
      if (e == (int)elem) continue;
      bool same_kind = ptg_elem_is_float(e) == ptg_elem_is_float(elem);
      bool same_size = ptg_elem_bits(e) == ptg_elem_bits(elem);
      if ((pass == 0 && !(same_kind && same_size)) || (pass == 1 && !same_kind)) continue;
      if ((r = nearest_width(t, op, e, lanes * ptg_elem_bits(e)))) return cost_of(r, lanes * ptg_elem_bits(e), 3);
    }
  }
  if ((r = nearest_width(t, PTG_OP_OTHER, elem, vector_bits))) return cost_of(r, vector_bits, 4);
  if ((r = nearest_width(t, PTG_OP_ADD, PTG_ELEM_I64, 64))) return cost_of(r, 64, 4);
  return (ptg_inst_cost){.latency = 1, .recip_throughput = 1, .unit = "alu", .split = 1, .fallback = 4};
}

int ptg_target_cache_levels(const ptg_target *t) { return t->n_caches; }

const ptg_cache *ptg_target_cache(const ptg_target *t, int level) {
  for (int i = 0; i < t->n_caches; i++)
    if (t->caches[i].level == level) return &t->caches[i];
  return NULL;
}

const ptg_cache *ptg_target_llc(const ptg_target *t) { return t->n_caches ? &t->caches[t->n_caches - 1] : NULL; }

/* Closest entry not above n threads; beyond the largest, scaled by the thread ratio. */
static double runtime_ns(const ptg_target *t, int threads, bool barrier) {
  const ptg_runtime *best = NULL;
  for (int i = 0; i < t->n_runtime; i++) {
    const ptg_runtime *r = &t->runtime[i];
    if (r->threads <= threads && (!best || r->threads > best->threads)) best = r;
  }
  if (!best && t->n_runtime) best = &t->runtime[0];
  if (!best) return NAN;
  double v = barrier ? best->barrier_ns.value : best->fork_join_ns.value;
  return best->threads < threads ? v * threads / best->threads : v;
}

double ptg_target_fork_join_ns(const ptg_target *t, int threads) { return runtime_ns(t, threads, false); }
double ptg_target_barrier_ns(const ptg_target *t, int threads) { return runtime_ns(t, threads, true); }

double ptg_target_bandwidth(const ptg_target *t, int level, int threads, ptg_bw_kind kind) {
  const ptg_bandwidth *bw;
  int n;
  if (level == 0) {
    bw = t->memory.bandwidth;
    n = t->memory.n_bandwidth;
  } else {
    const ptg_cache *c = ptg_target_cache(t, level);
    if (!c) return NAN;
    bw = c->bandwidth;
    n = c->n_bandwidth;
  }
  const ptg_bandwidth *best = NULL;
  for (int i = 0; i < n; i++)
    if (bw[i].threads <= threads && (!best || bw[i].threads > best->threads)) best = &bw[i];
  if (!best) return NAN;
  switch (kind) {
  case PTG_BW_READ: return best->read.value;
  case PTG_BW_WRITE: return best->write.value;
  case PTG_BW_COPY: return best->copy.value;
  case PTG_BW_TRIAD: return best->triad.value;
  }
  return NAN;
}

double ptg_target_core_share(const ptg_target *t, int threads) {
  const ptg_cache *l1 = ptg_target_cache(t, 1);
  if (threads <= 1 || !l1) return 1;
  const ptg_bandwidth *one = NULL, *busy = NULL;
  for (int i = 0; i < l1->n_bandwidth; i++) {
    const ptg_bandwidth *b = &l1->bandwidth[i];
    if (b->threads == 1) one = b;
    if (b->threads <= threads && (!busy || b->threads > busy->threads)) busy = b;
  }
  if (!one || !busy || busy->threads <= 1) return 1;
  const ptg_figure *o[] = {&one->read, &one->write, &one->copy, &one->triad};
  const ptg_figure *n[] = {&busy->read, &busy->write, &busy->copy, &busy->triad};
  double log_sum = 0;
  int kinds = 0;
  for (int k = 0; k < 4; k++)
    if (o[k]->value > 0 && n[k]->value > 0) log_sum += log(n[k]->value / busy->threads / o[k]->value), kinds++;
  if (kinds == 0) return 1;
  double share = exp(log_sum / kinds);
  return share < 1 ? share : 1;
}

const char *ptg_shipped_dir(void) { return PTG_SHIPPED_DIR; }

const ptg_strided_walk *ptg_target_strided_walk(const ptg_target *t, int64_t stride_bytes, int64_t page_bytes) {
  for (int i = 0; i < t->memory.n_strided; i++)
    if (t->memory.strided[i].stride_bytes == stride_bytes && t->memory.strided[i].page_bytes == page_bytes)
      return &t->memory.strided[i];
  return NULL;
}

/* A figure of L1's set walks at `sets` sets: the row with that many, else interpolated in
 * log(sets) between the nearest two that have it (the nearest one beyond them); NaN: none has it. */
static double walk_value(const ptg_set_walk *w, size_t offset) { return ((const ptg_figure *)((const char *)w + offset))->value; }

static double set_walk_figure(const ptg_target *t, double sets, size_t offset) {
  const ptg_cache *l1 = ptg_target_cache(t, 1);
  const ptg_set_walk *lo = NULL, *hi = NULL; /* the rows nearest below and above `sets` */
  for (int i = 0; l1 && i < l1->n_set_walks; i++) {
    const ptg_set_walk *w = &l1->set_walks[i];
    if (!(walk_value(w, offset) > 0)) continue;
    if (w->sets <= sets && (!lo || w->sets > lo->sets)) lo = w;
    if (w->sets >= sets && (!hi || w->sets < hi->sets)) hi = w;
  }
  if (!lo || !hi) return lo ? walk_value(lo, offset) : hi ? walk_value(hi, offset) : NAN;
  if (lo->sets == hi->sets) return walk_value(lo, offset);
  double f = log(sets / lo->sets) / log((double)hi->sets / lo->sets);
  return walk_value(lo, offset) + f * (walk_value(hi, offset) - walk_value(lo, offset));
}

double ptg_target_set_inflight(const ptg_target *t, double sets) {
  return set_walk_figure(t, sets, offsetof(ptg_set_walk, overlapping_misses));
}

double ptg_target_set_ns(const ptg_target *t, double sets) {
  return set_walk_figure(t, sets, offsetof(ptg_set_walk, ns_per_access));
}

/* ns per access of L1's set_loads rows with `sets` sets at `loads` loads: linear in log2(loads)
 * between the nearest measured counts (the nearest beyond them); NaN: no row with that many sets. */
static double loads_ns(const ptg_cache *l1, int sets, double loads) {
  const ptg_set_load *lo = NULL, *hi = NULL;
  for (int i = 0; i < l1->n_set_loads; i++) {
    const ptg_set_load *w = &l1->set_loads[i];
    if (w->sets != sets || !(w->ns_per_access.value > 0) || w->loads < 1) continue;
    if (w->loads <= loads && (!lo || w->loads > lo->loads)) lo = w;
    if (w->loads >= loads && (!hi || w->loads < hi->loads)) hi = w;
  }
  if (!lo || !hi) return lo ? lo->ns_per_access.value : hi ? hi->ns_per_access.value : NAN;
  if (lo->loads == hi->loads) return lo->ns_per_access.value;
  double f = log2(loads / lo->loads) / log2((double)hi->loads / lo->loads);
  return lo->ns_per_access.value + f * (hi->ns_per_access.value - lo->ns_per_access.value);
}

double ptg_target_set_loads_ratio(const ptg_target *t, double sets, double loads) {
  const ptg_cache *l1 = ptg_target_cache(t, 1);
  if (!l1 || l1->n_set_loads == 0 || !(loads >= 1)) return 1;
  int lo = 0, hi = 0; /* the measured set counts nearest below and above `sets` */
  for (int i = 0; i < l1->n_set_loads; i++) {
    int s = l1->set_loads[i].sets;
    if (s <= sets && s > lo) lo = s;
    if (s >= sets && (hi == 0 || s < hi)) hi = s;
  }
  if (!lo) lo = hi;
  if (!hi) hi = lo;
  if (!lo) return 1;
  double r_lo = loads_ns(l1, lo, loads) / loads_ns(l1, lo, 1), r_hi = loads_ns(l1, hi, loads) / loads_ns(l1, hi, 1);
  if (!(r_lo > 0) || !(r_hi > 0)) return 1;
  if (lo == hi) return r_lo;
  double f = log(sets / lo) / log((double)hi / lo);
  return r_lo + f * (r_hi - r_lo);
}

double ptg_target_set_rmw_ns(const ptg_target *t, double sets) {
  return set_walk_figure(t, sets, offsetof(ptg_set_walk, rmw_ns_per_access));
}

/* The figure at `rmw` of the rows measured with `streams` streams: linear in the read-modify-write
 * share between the two nearest shares measured (the nearest beyond them); NaN: no such row. */
static double stream_row_ns(const ptg_cache *l1, int streams, double share) {
  const ptg_set_stream *lo = NULL, *hi = NULL;
  for (int i = 0; i < l1->n_set_streams; i++) {
    const ptg_set_stream *w = &l1->set_streams[i];
    if (w->streams != streams || !(w->ns_per_access.value > 0)) continue;
    double s = (double)w->rmw_streams / w->streams;
    if (s <= share && (!lo || s > (double)lo->rmw_streams / lo->streams)) lo = w;
    if (s >= share && (!hi || s < (double)hi->rmw_streams / hi->streams)) hi = w;
  }
  if (!lo || !hi) return lo ? lo->ns_per_access.value : hi ? hi->ns_per_access.value : NAN;
  double a = (double)lo->rmw_streams / lo->streams, b = (double)hi->rmw_streams / hi->streams;
  if (b <= a) return lo->ns_per_access.value;
  return lo->ns_per_access.value + (share - a) / (b - a) * (hi->ns_per_access.value - lo->ns_per_access.value);
}

double ptg_target_set_stream_ns(const ptg_target *t, double streams, double rmw) {
  const ptg_cache *l1 = ptg_target_cache(t, 1);
  if (!l1 || !(streams > 0)) return NAN;
  int lo = 0, hi = 0; /* the measured stream counts nearest below and above */
  for (int i = 0; i < l1->n_set_streams; i++) {
    int n = l1->set_streams[i].streams;
    if (n <= streams && n > lo) lo = n;
    if (n >= streams && (hi == 0 || n < hi)) hi = n;
  }
  double share = rmw / streams;
  if (!lo || !hi) return stream_row_ns(l1, lo ? lo : hi, share);
  double a = stream_row_ns(l1, lo, share), b = stream_row_ns(l1, hi, share);
  if (hi == lo) return a;
  return a + (streams - lo) / (hi - lo) * (b - a);
}

int ptg_target_vector_registers(const ptg_target *t) {
  if (t->isa && strcmp(t->isa, "aarch64") == 0) return 32;
  if (t->isa && strcmp(t->isa, "x86_64") == 0)
    for (int i = 0; i < t->n_features; i++)
      if (t->features[i] && strcmp(t->features[i], "avx512f") == 0) return 32;
  return 16;
}

const char *ptg_target_llvm_cpu(const ptg_target *t) {
  /* the names pmb_uarch_name gives (microbench/topology.c) and the published files use */
  static const struct {
    const char *uarch, *cpu;
  } names[] = {{"zen1", "znver1"},          {"zen2", "znver2"},           {"zen3", "znver3"},
               {"zen4", "znver4"},          {"zen5", "znver5"},           {"skylake-sp", "skylake-avx512"},
               {"skylake", "skylake"},      {"kabylake", "skylake"},      {"icelake-sp", "icelake-server"},
               {"sapphirerapids", "sapphirerapids"}, {"emeraldrapids", "emeraldrapids"}};
  const char *u = t ? t->microarchitecture : NULL;
  for (size_t i = 0; u && i < PT_ARRAY_LEN(names); i++)
    if (strcmp(u, names[i].uarch) == 0) return names[i].cpu;
  return NULL;
}
