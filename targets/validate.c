/* Range and consistency checks of a target description, run on every load and save so a
 * predictor never sees a negative latency or a cache smaller than its line. Messages name
 * the JSON path of the offending value. */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "internal.h"

typedef struct {
  pt_diag *d;
  const char *what;
  int err;
} checker;

static void bad(checker *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void bad(checker *c, const char *fmt, ...) {
  if (c->err) return;
  char msg[512];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  c->err = pt_fail(c->d, PT_ERR_INVALID, "%s: %s", c->what, msg);
}

/* NaN is allowed (unknown); otherwise the value must lie in [lo, hi]. */
static void range(checker *c, const char *path, const char *key, ptg_figure f, double lo, double hi) {
  if (isnan(f.value)) return;
  if (f.value < lo || f.value > hi || isinf(f.value))
    bad(c, "%s%s%s: %g is out of range [%g, %g]", path, *path ? "." : "", key, f.value, lo, hi);
  else if (f.spread < 0 || f.reps < 0)
    bad(c, "%s%s%s: negative spread or repetitions", path, *path ? "." : "", key);
}

/* Checks rows[0..n) of path.key[] (row_size bytes each) with check_row, up to the first error. */
typedef void row_check(checker *c, const char *path, const void *row);
static void check_rows(checker *c, const char *path, const char *key, const void *rows, int n, size_t row_size, row_check *check_row) {
  for (int i = 0; i < n && !c->err; i++) {
    char p[128];
    snprintf(p, sizeof p, "%s.%s[%d]", path, key, i);
    check_row(c, p, (const char *)rows + row_size * (size_t)i);
  }
}

/* The set walks, streams and loads measure L1's sets: another level has none. */
static void check_l1_rows(checker *c, const ptg_cache *k, const char *path, const char *key, const void *rows, int n, size_t row_size,
                    row_check *check_row) {
  if (n && k->level != 1) bad(c, "%s.%s: only L1 has them (its sets are what they measure)", path, key);
  check_rows(c, path, key, rows, n, row_size, check_row);
}

static void bandwidth_row(checker *c, const char *p, const void *row) {
  const ptg_bandwidth *bw = row;
  if (bw->threads < 1 || bw->threads > 4096) bad(c, "%s.threads: must be 1..4096", p);
  range(c, p, "read", bw->read, 0, 1e5);
  range(c, p, "write", bw->write, 0, 1e5);
  range(c, p, "copy", bw->copy, 0, 1e5);
  range(c, p, "triad", bw->triad, 0, 1e5);
}

/* A set walk's and a set load row's column: `lines` lines `stride` bytes apart in `sets` sets. */
static void set_geometry(checker *c, const char *q, int64_t stride_bytes, int sets, int64_t lines) {
  if (stride_bytes < 1 || stride_bytes > ((int64_t)1 << 30)) bad(c, "%s.stride: must be 1..2^30 bytes", q);
  if (sets < 1 || sets > 1 << 20) bad(c, "%s.sets: must be 1..2^20", q);
  if (lines < 1) bad(c, "%s.lines: must be at least 1", q);
}

static void set_walk_row(checker *c, const char *q, const void *row) {
  const ptg_set_walk *w = row;
  set_geometry(c, q, w->stride_bytes, w->sets, w->lines);
  range(c, q, "latency_ns", w->latency_ns, 0, 1e5);
  range(c, q, "ns_per_access", w->ns_per_access, 0, 1e5);
  range(c, q, "overlapping_misses", w->overlapping_misses, 0, 1000);
  range(c, q, "rmw_ns_per_access", w->rmw_ns_per_access, 0, 1e5);
}

static void set_stream_row(checker *c, const char *q, const void *row) {
  const ptg_set_stream *w = row;
  if (w->streams < 1 || w->streams > 1024) bad(c, "%s.streams: must be 1..1024", q);
  if (w->rmw_streams < 0 || w->rmw_streams > w->streams) bad(c, "%s.rmw_streams: must be 0..streams", q);
  range(c, q, "ns_per_access", w->ns_per_access, 0, 1e5);
}

static void set_load_row(checker *c, const char *q, const void *row) {
  const ptg_set_load *w = row;
  set_geometry(c, q, w->stride_bytes, w->sets, w->lines);
  if (w->loads < 1 || w->loads > 1024) bad(c, "%s.loads: must be 1..1024", q);
  range(c, q, "ns_per_access", w->ns_per_access, 0, 1e5);
}

int ptg_target_validate(const ptg_target *t, const char *what, pt_diag *d) {
  checker c = {.d = d, .what = what ? what : t->name};
  if (t->version != PTG_FORMAT_VERSION) bad(&c, "version: unsupported version %d", t->version);
  if (!t->name || !*t->name) bad(&c, "name: must not be empty");
  if (!t->provenance || (strcmp(t->provenance, "measured") && strcmp(t->provenance, "published")))
    bad(&c, "provenance.kind: must be \"measured\" or \"published\"");
  if (t->cores < 1 || t->cores > 100000) bad(&c, "cpu.cores: must be at least 1");
  range(&c, "cpu", "frequency_ghz", t->frequency_ghz, 0.1, 10);
  range(&c, "cpu", "issue_width", t->issue_width, 0.5, 64);
  range(&c, "cpu", "store_forward_fail_cycles", t->store_forward_fail_cycles, 0, 1000);
  range(&c, "cpu", "store_forward_cycles", t->store_forward_cycles, 0, 1000);
  range(&c, "cpu", "spill_update_cycles", t->spill_update_cycles, 0, 1000);
  int vb = t->native_vector_bits;
  if (vb < 32 || vb > 2048 || (vb & (vb - 1))) bad(&c, "cpu.native_vector_bits: must be a power of two in 32..2048");
  for (int i = 0; i < t->n_insts && !c.err; i++) {
    const ptg_inst *in = &t->insts[i];
    char p[64];
    snprintf(p, sizeof p, "instructions[%d]", i);
    int eb = ptg_elem_bits(in->elem);
    if (in->vector_bits < eb || in->vector_bits % eb || in->vector_bits > 2048)
      bad(&c, "%s.bits: %d is not a whole number of %s lanes (at most 2048 bits)", p, in->vector_bits, ptg_elem_name(in->elem));
    range(&c, p, "latency", in->latency, 0, 1000);
    range(&c, p, "recip_throughput", in->recip_throughput, 1e-3, 1000);
    range(&c, p, "counter_cycles", ptg_fig(in->counter_cycles), 0, 1e6);
    range(&c, p, "counter_instructions", ptg_fig(in->counter_instructions), 0, 1e6);
    if (in->unit && t->n_units) { /* a named unit must be one the file lists */
      bool listed = false;
      for (int u = 0; u < t->n_units; u++) listed |= t->units[u].name && strcmp(t->units[u].name, in->unit) == 0;
      if (!listed) bad(&c, "%s.unit: \"%s\" is not one of the file's units", p, in->unit);
    }
    if (isnan(in->recip_throughput.value) && isnan(in->latency.value))
      bad(&c, "%s: neither latency nor recip_throughput is known", p);
    for (int j = 0; j < i && !c.err; j++)
      if (t->insts[j].op == in->op && t->insts[j].elem == in->elem && t->insts[j].vector_bits == in->vector_bits)
        bad(&c, "%s: duplicate of instructions[%d] (%s %s %d)", p, j, ptg_op_name(in->op), ptg_elem_name(in->elem), in->vector_bits);
  }
  for (int i = 0; i < t->n_caches && !c.err; i++) {
    const ptg_cache *k = &t->caches[i];
    char p[64];
    snprintf(p, sizeof p, "caches[%d]", i);
    if (k->level != i + 1) bad(&c, "%s.level: expected %d (levels in order, starting at 1)", p, i + 1);
    if (k->line_bytes < 8 || k->line_bytes > 4096 || (k->line_bytes & (k->line_bytes - 1)))
      bad(&c, "%s.line: must be a power of two in 8..4096", p);
    if (k->size_bytes < k->line_bytes) bad(&c, "%s.size: smaller than a line", p);
    if (k->associativity < 0) bad(&c, "%s.associativity: negative", p);
    if (k->shared_by < 1) bad(&c, "%s.shared_by: must be at least 1", p);
    range(&c, p, "latency_cycles", k->latency_cycles, 0, 10000);
    range(&c, p, "latency_ns", k->latency_ns, 0, 10000);
    range(&c, p, "overlapping_misses", k->overlapping_misses, 0, 1000);
    if (k->detected_bytes < 0) bad(&c, "%s.detected_size: negative", p);
    check_l1_rows(&c, k, p, "set_walks", k->set_walks, k->n_set_walks, sizeof(ptg_set_walk), set_walk_row);
    check_l1_rows(&c, k, p, "set_streams", k->set_streams, k->n_set_streams, sizeof(ptg_set_stream), set_stream_row);
    check_l1_rows(&c, k, p, "set_loads", k->set_loads, k->n_set_loads, sizeof(ptg_set_load), set_load_row);
    check_rows(&c, p, "bandwidth_gbs", k->bandwidth, k->n_bandwidth, sizeof(ptg_bandwidth), bandwidth_row);
  }
  range(&c, "memory", "latency_ns", t->memory.latency_ns, 0, 1e5);
  range(&c, "memory", "latency_cycles", t->memory.latency_cycles, 0, 1e6);
  range(&c, "memory", "overlapping_misses", t->memory.overlapping_misses, 0, 1000);
  check_rows(&c, "memory", "bandwidth_gbs", t->memory.bandwidth, t->memory.n_bandwidth, sizeof(ptg_bandwidth), bandwidth_row);
  for (int i = 0; i < t->memory.n_strided && !c.err; i++) {
    const ptg_strided_walk *w = &t->memory.strided[i];
    char p[64];
    snprintf(p, sizeof p, "memory.strided_walks[%d]", i);
    if (w->stride_bytes < 1 || w->stride_bytes > ((int64_t)1 << 30)) bad(&c, "%s.stride: must be 1..2^30 bytes", p);
    if (w->page_bytes < 4096 || (w->page_bytes & (w->page_bytes - 1))) bad(&c, "%s.page: must be a power of two of at least 4096", p);
    range(&c, p, "ns_per_access", w->ns_per_access, 0, 1e5);
    range(&c, p, "overlapping_misses", w->overlapping_misses, 0, 1000);
    for (int j = 0; j < i && !c.err; j++)
      if (t->memory.strided[j].stride_bytes == w->stride_bytes && t->memory.strided[j].page_bytes == w->page_bytes)
        bad(&c, "%s: duplicate of memory.strided_walks[%d]", p, j);
  }
  for (int i = 0; i < t->n_runtime && !c.err; i++) {
    char p[64];
    snprintf(p, sizeof p, "runtime[%d]", i);
    if (t->runtime[i].threads < 1) bad(&c, "%s.threads: must be at least 1", p);
    range(&c, p, "fork_join_ns", t->runtime[i].fork_join_ns, 0, 1e9);
    range(&c, p, "barrier_ns", t->runtime[i].barrier_ns, 0, 1e9);
  }
  if (t->gpu.present) {
    const ptg_gpu *u = &t->gpu;
    if (!u->name || !*u->name) bad(&c, "gpu.name: must not be empty");
    if (u->sms < 1) bad(&c, "gpu.sms: must be at least 1");
    if (u->memory_bytes < 0 || u->l2_bytes < 0 || u->memory_bus_bits < 0) bad(&c, "gpu: negative memory size or width");
    range(&c, "gpu", "clock_ghz", ptg_fig(u->clock_ghz), 0.05, 10);
#define PTG_X(field, key, lo, hi, doc) range(&c, "gpu", key, u->field, lo, hi);
    PTG_GPU_FIGURES(PTG_X)
#undef PTG_X
  }
  return c.err;
}
