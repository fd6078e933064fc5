/* A small synthetic target and task-graph builders shared by the predictor tests, and the fixture
 * of the model-switch tests (+sets, +dirty, +llcwalk, ...): a shipped target, the switch's place in
 * the defaults and presets, and a profile priced with the switch on and off. */
#ifndef PORTENT_TESTS_PREDICTOR_SYNTHETIC_H
#define PORTENT_TESTS_PREDICTOR_SYNTHETIC_H

#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "predictor.h"
#include "test.h"

/* f32 add: latency 4, recip throughput 0.5 on unit "fp" (2 pipes), rows at 32..native bits;
 * mul latency 3; fma latency 4; load/store rows; L1 32 KiB 4 cycles, L2 1 MiB 14 cycles,
 * DRAM 200 cycles; issue width 4; 1 GHz. */
static inline ptg_target *synthetic_target(int native_bits, int cores) {
  ptg_target *t = ptg_target_new("synthetic");
  t->cores = cores;
  t->threads_per_core = 1;
  t->frequency_ghz.value = 1;
  t->issue_width.value = 4;
  t->native_vector_bits = t->max_vector_bits = native_bits;
  t->n_units = 3;
  t->units = pt_alloc(t->arena, sizeof *t->units * 3);
  t->units[0] = (ptg_unit){"fp", 2, "add,mul,fma"};
  t->units[1] = (ptg_unit){"ld", 2, "load"};
  t->units[2] = (ptg_unit){"st", 1, "store"};
  const struct { ptg_op op; double lat, rt; const char *unit; } rows[] = {
      {PTG_OP_ADD, 4, 0.5, "fp"}, {PTG_OP_MUL, 3, 0.5, "fp"}, {PTG_OP_FMA, 4, 0.5, "fp"},
      {PTG_OP_LOAD, 4, 0.5, "ld"}, {PTG_OP_STORE, 1, 1, "st"}};
  for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++)
    for (int bits = 32; bits <= native_bits; bits = bits == 32 ? 128 : 2 * bits) {
      ptg_inst *r = ptg_target_add_inst(t, rows[i].op, PTG_ELEM_F32, bits);
      r->latency.value = rows[i].lat;
      r->recip_throughput.value = rows[i].rt;
      r->unit = rows[i].unit;
    }
  ptg_inst *r = ptg_target_add_inst(t, PTG_OP_ADD, PTG_ELEM_I64, 64);
  r->latency.value = 1, r->recip_throughput.value = 0.25, r->unit = NULL;
  t->n_caches = 2;
  t->caches = pt_alloc(t->arena, sizeof *t->caches * 2);
  t->caches[0] = (ptg_cache){.level = 1, .size_bytes = 32768, .line_bytes = 64, .shared_by = 1};
  t->caches[0].latency_cycles.value = 4;
  t->caches[0].latency_ns.value = NAN;
  t->caches[1] = (ptg_cache){.level = 2, .size_bytes = 1 << 20, .line_bytes = 64, .shared_by = cores};
  t->caches[1].latency_cycles.value = 14;
  t->caches[1].latency_ns.value = NAN;
  t->memory.latency_cycles.value = 200;
  t->memory.overlapping_misses.value = 10;
  return t;
}

/* The static-count profile of LLVM IR text (through a temporary .ll file): function `entry`,
 * one call, counted without running. NULL (d filled where the analyzer failed) on error. */
static inline pa_profile *synthetic_profile_ir(const char *ir, const char *entry, pt_diag *d) {
  char path[] = "/tmp/portent_synthetic_XXXXXX.ll";
  int fd = mkstemps(path, 3);
  if (fd < 0) return NULL;
  bool written = write(fd, ir, strlen(ir)) == (ssize_t)strlen(ir);
  close(fd);
  pa_module *m = written ? pa_module_load(path, d) : NULL;
  pa_static_opts so = {entry, 1};
  pa_profile *p = m ? pa_profile_static_counts(m, &so, d) : NULL;
  pa_module_free(m);
  unlink(path);
  return p;
}

/* The static-count profile of a column walk: for j < 512: for i < 512: acc += a[i * row + j];
 * c[j] = acc (rows `row` floats apart: 1024 puts every line in one L1 set position, 512 in two). */
static inline pa_profile *synthetic_column_walk(int row, pt_diag *d) {
  static const char *fmt =
      "define void @walk(ptr %%a, ptr %%c) {\n"
      "entry:\n  br label %%j\n"
      "j:\n  %%jv = phi i64 [0, %%entry], [%%jn, %%jl]\n  br label %%i\n"
      "i:\n  %%iv = phi i64 [0, %%j], [%%in, %%i]\n  %%acc = phi float [0.0, %%j], [%%s, %%i]\n"
      "  %%row = mul i64 %%iv, %d\n  %%idx = add i64 %%row, %%jv\n"
      "  %%p = getelementptr float, ptr %%a, i64 %%idx\n  %%x = load float, ptr %%p\n"
      "  %%s = fadd float %%acc, %%x\n"
      "  %%in = add i64 %%iv, 1\n  %%d = icmp eq i64 %%in, 512\n"
      "  br i1 %%d, label %%jl, label %%i\n"
      "jl:\n  %%q = getelementptr float, ptr %%c, i64 %%jv\n  store float %%s, ptr %%q\n"
      "  %%jn = add i64 %%jv, 1\n  %%e = icmp eq i64 %%jn, 512\n  br i1 %%e, label %%exit, label %%j\n"
      "exit:\n  ret void\n}\n";
  char ir[4096];
  snprintf(ir, sizeof ir, fmt, row);
  return synthetic_profile_ir(ir, "walk", d);
}

/* A target file shipped in targets/ ("zen4-epyc-2c"); NULL with d filled on error. */
static inline ptg_target *synthetic_shipped_target(const char *name, pt_diag *d) {
  char path[1024];
  snprintf(path, sizeof path, "%s/%s.json", ptg_shipped_dir(), name);
  return ptg_target_load(path, d);
}

/* The same in a test's main, where a target that does not load is a failed check. */
static inline ptg_target *synthetic_test_target(const char *name, pt_diag *d) {
  ptg_target *t = synthetic_shipped_target(name, d);
  CHECK_MSG(t, "%s", d->msg);
  return t;
}

/* The default options, and those a preset name gives (a name pp_options_preset refuses is a
 * failed check): what each switch's test checks the switch's place in. */
static inline pp_options synthetic_defaults(void) {
  pp_options o;
  pp_options_default(&o);
  return o;
}
static inline pp_options synthetic_preset(const char *name) {
  pp_options o = {0};
  CHECK_MSG(pp_options_preset(&o, name) == 0, "preset \"%s\" refused", name);
  return o;
}

/* Cycles per iteration the default model predicts for a profile on one thread of t:
 * predicted cycles over `iterations`; NAN (d filled) when the prediction fails. */
static inline double synthetic_cycles_per_iteration(const pa_profile *p, const ptg_target *t, double iterations,
                                                    pt_diag *d) {
  pp_options o;
  pp_options_default(&o);
  o.threads = 1;
  pp_prediction *r = pp_predict_profile(p, t, &o, d);
  double c = r ? r->seconds * r->frequency_ghz * 1e9 / iterations : NAN;
  pp_prediction_free(r);
  return c;
}

/* Profile p's predicted seconds on t with options o (NAN when the prediction fails). */
static inline double synthetic_seconds(const pa_profile *p, const ptg_target *t, const pp_options *o, pt_diag *d) {
  pp_prediction *r = pp_predict_profile(p, t, o, d);
  double s = r ? r->seconds : NAN;
  pp_prediction_free(r);
  return s;
}

/* Profile p's predicted seconds on one thread of t with the default options but one model
 * switch (a bool of pp_options, e.g. l1_sets) set to `on`: the pair each switch's test compares.
 * The _Generic refuses a field that is not a bool. */
#define SYNTHETIC_SWITCH_SECONDS(p, t, field, on, d) \
  synthetic_switch_seconds(p, t, _Generic(((pp_options *)0)->field, bool: offsetof(pp_options, field)), on, d)
static inline double synthetic_switch_seconds(const pa_profile *p, const ptg_target *t, size_t field, bool on, pt_diag *d) {
  pp_options o;
  pp_options_default(&o);
  o.threads = 1;
  *(bool *)((char *)&o + field) = on;
  return synthetic_seconds(p, t, &o, d);
}

/* The same for LLVM IR text (synthetic_profile_ir's function `entry`). */
static inline double synthetic_ir_cycles_per_iteration(const char *ir, const char *entry, const ptg_target *t,
                                                       double iterations, pt_diag *d) {
  pa_profile *p = synthetic_profile_ir(ir, entry, d);
  double c = p ? synthetic_cycles_per_iteration(p, t, iterations, d) : NAN;
  pa_profile_free(p);
  return c;
}

static inline pa_node synthetic_node(pa_opclass op, const char *opcode, int lanes) {
  pa_node n = {.op = op, .opcode = opcode, .elem = "f32", .lanes = lanes, .bits = 32 * lanes};
  if (op == PA_OP_LOAD || op == PA_OP_STORE) n.is_memory = true, n.bytes = 4 * lanes;
  return n;
}

/* A counted profile of one function whose only block is a loop body run `iterations` times:
 * the caller's nodes and edges (kept, not copied), the block's load and store bytes from its
 * nodes, and reuse histogram h as the function's and the program's (its cold lines the
 * footprint; NULL: no histogram, every access an L1 hit). Everything lives in *s. */
typedef struct {
  pa_block block;
  pa_loop loop;
  int loop_blocks[1];
  pa_function function;
  pa_reuse_hist hist;
  pa_profile profile;
} synthetic_loop;

static inline pa_profile *synthetic_loop_profile(synthetic_loop *s, pa_node *nodes, int n_nodes, pa_edge *edges,
                                                 int n_edges, uint64_t iterations, const pa_reuse_hist *h) {
  memset(s, 0, sizeof *s);
  s->block = (pa_block){.name = "body", .idom = -1, .loop = 0, .count = iterations, .count_per_call = (double)iterations,
                        .n_nodes = n_nodes, .nodes = nodes, .n_edges = n_edges, .edges = edges};
  for (int i = 0; i < n_nodes; i++) {
    pa_features *f = &s->block.features;
    if (nodes[i].op == PA_OP_LOAD) f->loads++, f->load_bytes += nodes[i].bytes;
    if (nodes[i].op == PA_OP_STORE) f->stores++, f->store_bytes += nodes[i].bytes;
  }
  s->loop = (pa_loop){.header = 0, .parent = -1, .depth = 1, .preheader = -1, .n_blocks = 1, .blocks = s->loop_blocks,
                      .trip_count = (int64_t)iterations};
  s->function = (pa_function){.name = "body_loop", .calls = 1, .threads = 1, .n_blocks = 1, .blocks = &s->block,
                              .n_loops = 1, .loops = &s->loop};
  s->profile = (pa_profile){.version = PA_PROFILE_VERSION, .source = "synthetic", .counts_source = "instrumented",
                            .n_functions = 1, .functions = &s->function};
  if (h) s->hist = *h, s->profile.reuse_by_function = &s->hist, s->profile.reuse_total = *h;
  return &s->profile;
}

/* n independent 64-byte loads (<16 x float>, one line each) and the loop's branch: n + 1 nodes. */
static inline int synthetic_line_loads(pa_node *nodes, int n) {
  for (int i = 0; i < n; i++) nodes[i] = synthetic_node(PA_OP_LOAD, "load", 16);
  nodes[n] = (pa_node){.op = PA_OP_OTHER, .opcode = "br", .elem = "void", .lanes = 1};
  return n + 1;
}

/* Target t's read bandwidth at `level` (0: memory) with one thread and up: one row, gbs GB/s. */
static inline void synthetic_read_bandwidth(ptg_target *t, int level, double gbs) {
  ptg_bandwidth *bw = pt_alloc(t->arena, sizeof *bw);
  *bw = (ptg_bandwidth){.threads = 1};
  bw->read.value = gbs;
  bw->write.value = bw->copy.value = bw->triad.value = NAN;
  if (level == 0) t->memory.n_bandwidth = 1, t->memory.bandwidth = bw;
  else t->caches[level - 1].n_bandwidth = 1, t->caches[level - 1].bandwidth = bw;
}

#endif
