/* The instruction table: for each op class x element type x vector width this host has,
 * latency (one dependent chain) and reciprocal throughput (12 independent chains) in core
 * cycles, with the machine instruction read back from the kernel's own assembly. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

static const ptg_elem measured_elems[] = {PTG_ELEM_I32, PTG_ELEM_I64, PTG_ELEM_F32, PTG_ELEM_F64, PTG_ELEM_BF16, PTG_ELEM_I8};
static const int widths[] = {0 /* scalar */, 128, 256, 512};

/* Conversions step there and back, two instructions per step. */
static int insns_per_step(pmb_op o) { return o.op == PTG_OP_CONVERT ? 2 : 1; }

/* Stores produce no value a chain could wait for: throughput only. */
static bool no_latency(pmb_op o) {
  return o.op == PTG_OP_STORE || o.op == PTG_OP_MASKSTORE || o.op == PTG_OP_SCATTER || o.op == PTG_OP_SCATTER_PAGE;
}

/* "add:f32,fma:f32:256" -> does it select o? */
static bool selected(const char *only, pmb_op o) {
  if (!only || !*only) return true;
  const char *p = only;
  while (*p) {
    char item[64];
    size_t n = strcspn(p, ",");
    snprintf(item, sizeof item, "%.*s", (int)(n < 63 ? n : 63), p);
    p += n + (p[n] == ',');
    char *type = strchr(item, ':'), *bits = NULL;
    if (type) *type++ = 0;
    if (type && (bits = strchr(type, ':'))) *bits++ = 0;
    if (strcmp(item, ptg_op_name(o.op))) continue;
    if (type && strcmp(type, ptg_elem_name(o.elem))) continue;
    if (bits && atoi(bits) != o.bits) continue;
    return true;
  }
  return false;
}

bool pmb_supported(ptg_op op, ptg_elem elem, int vector_bits) {
  pt_diag d = {0};
  pmb_jit *j = pmb_jit_new(&d);
  if (!j) return false;
  bool ok = pmb_op_supported(j, (pmb_op){op, elem, vector_bits});
  pmb_jit_free(j);
  return ok;
}

char *pmb_kernel_asm(ptg_op op, ptg_elem elem, int vector_bits, pt_diag *d) {
  pmb_jit *j = pmb_jit_new(d);
  if (!j) return NULL;
  char *text = NULL, *body = NULL;
  pmb_kernel k = pmb_kernel_throughput((pmb_op){op, elem, vector_bits});
  LLVMModuleRef m = pmb_jit_module(j, "check");
  if (pmb_kernel_build(j, m, &k, "pmb_check", d) == 0 && (text = pmb_jit_asm(j, m, d))) body = pmb_asm_function(text, "pmb_check");
  LLVMDisposeModule(m);
  free(text);
  pmb_jit_free(j);
  return body;
}

/* One figure's timing: the attempt taken with the least of the core shared (c->sentinel). */
typedef struct {
  pmb_stats s;
  double raw[2]; /* the sentinels' higher readings around the attempt (pmb_sentinel) */
  int tries;
} timing;

typedef struct {
  pmb_op op;
  char lat_name[48], tp_name[48], rt_name[48];
  pmb_kernel_fn lat, tp, rt; /* rt: vector/FP loads only, the lane move's round trip */
  timing t_lat, t_tp, t_rt;
} entry;

/* Times kernel k (already JIT'ed as fn) and returns cycles per instruction statistics. */
/* The clock is sampled just before and just after the kernel and the two averaged, so a
 * frequency change while it runs shows half, not whole, in its cycles. */
static pmb_stats time_cycles(pmb_ctx *c, const pmb_kernel *k, pmb_kernel_fn fn, void *in, void *out) {
  double before = pmb_recalibrate(c);
  pmb_kernel_fill(k, in);
  pmb_stats s = pmb_time_kernel(fn, in, out, c->min_seconds, c->reps);
  double ghz = 0.5 * (before + pmb_recalibrate(c));
  int ops = k->chains * k->unroll * insns_per_step(k->ops[0]);
  return pmb_stats_scale(s, ghz * 1e9 / ops);
}

/* One attempt at a figure, between two sentinel readings; it replaces the figure's earlier
 * attempt when less of the core was shared around it. */
static void attempt(pmb_ctx *c, const pmb_kernel *k, pmb_kernel_fn fn, void *in, void *out, timing *t) {
  double before[2], after[2];
  pmb_sentinel(c, before);
  pmb_stats s = time_cycles(c, k, fn, in, out);
  pmb_sentinel(c, after);
  double raw[2] = {fmax(before[0], after[0]), fmax(before[1], after[1])};
  if (t->tries++ == 0 || pmb_share(c, raw) < pmb_share(c, t->raw)) t->s = s, t->raw[0] = raw[0], t->raw[1] = raw[1];
}

/* How far above the sentinels' references a figure's attempt may be and still count as alone
 * (the add sentinel alone: 0.19-0.20 cycles per add, +-3% between readings; shared: 0.21-0.31;
 * compare+select 0.60-0.65 alone, 0.75-0.92 shared). */
#define ALONE_TOL 0.10

static bool alone(const pmb_ctx *c, const timing *t) { return pmb_share(c, t->raw) <= 1 + ALONE_TOL; }

static ptg_figure figure_of(pmb_ctx *c, const timing *t) {
  ptg_figure f = pmb_figure(t->s);
  if (!alone(c, t))
    f.source = pt_sprintf(c->t->arena,
                          "timed while another thread shared the core (sentinels %+.0f%% over the core alone) in each of %d "
                          "attempts; the least shared attempt",
                          100 * (pmb_share(c, t->raw) - 1), t->tries);
  return f;
}

/* A vector or FP load can only feed the next address through a move of lane 0 to an integer
 * register, so the chase times load + move. The move's way back is timed too (vmovq both
 * ways, no load) and half that round trip is taken off: a dependent chain cannot split a
 * round trip between its two directions (uops.info reports such latencies as bounds for the
 * same reason), so the split is assumed even. The row's source names both numbers. */
static ptg_figure lane_move_removed(pmb_ctx *c, ptg_figure chase, const timing *rt) {
  double move = 0.5 * rt->s.value;
  if (!(move > 0) || move >= chase.value) return chase;
  chase.source = pt_sprintf(c->t->arena,
                            "chase through the load and a lane-0 move to an integer register (%.2f cycles), minus half "
                            "of the move's measured round trip (%.2f cycles)%s",
                            chase.value, rt->s.value, chase.source ? "; timed while the core was shared" : "");
  chase.value -= move;
  return chase;
}

/* Times every figure once, then again those whose attempt had the core shared, after waiting
 * (within a budget) for the sentinel to show the core alone: sharing comes in episodes of
 * seconds, so an immediate retry would fall in the same one. */
static void time_all(pmb_ctx *c, entry *es, int n, void *in, void *out) {
  int passes = c->o->quick ? 2 : 4;
  double wait_budget = c->o->quick ? 1 : 6, waited = 0, t0 = pt_now(), deadline = INFINITY;
  for (int pass = 0; pass < passes; pass++) {
    int retimed = 0;
    /* retiming may take half as long as the first pass (plus the waits): on a machine whose
     * core is shared most of the time, more attempts would not find it alone */
    if (pass == 1) deadline = pt_now() + 0.5 * (pt_now() - t0);
    for (int i = 0; i < n && pt_now() < deadline + waited; i++) {
      entry *e = &es[i];
      pmb_kernel lk = pmb_kernel_latency(e->op), tk = pmb_kernel_throughput(e->op), rk = pmb_kernel_lane_round_trip(e->op);
      const struct {
        const pmb_kernel *k;
        pmb_kernel_fn fn;
        timing *t;
      } figs[3] = {{&lk, e->lat, &e->t_lat}, {&rk, e->rt, &e->t_rt}, {&tk, e->tp, &e->t_tp}};
      for (int f = 0; f < 3; f++) {
        if (!figs[f].fn || (pass > 0 && alone(c, figs[f].t))) continue;
        if (pass > 0 && waited < wait_budget) {
          double t0 = pt_now();
          pmb_wait_alone(c, ALONE_TOL / 2, wait_budget - waited);
          waited += pt_now() - t0;
        }
        attempt(c, figs[f].k, figs[f].fn, in, out, figs[f].t);
        retimed += pass > 0;
      }
      if (pass == 0 && (i % 16 == 0 || i == n - 1))
        pmb_progress(c, "instructions %d/%d: %s %s %d-bit latency %.2f, recip. throughput %.2f cycles", i + 1, n,
                     ptg_op_name(e->op.op), ptg_elem_name(e->op.elem), e->op.bits, e->lat ? e->t_lat.s.value : NAN,
                     e->t_tp.s.value);
    }
    if (pass == 0)
      pmb_progress(c, "instructions timed");
    else if (retimed)
      pmb_progress(c, "pass %d: %d figures timed again (core shared), %.1f s waited for it alone", pass + 1, retimed, waited);
    else
      break;
  }
}

int pmb_measure_instructions(pmb_ctx *c, pt_diag *d) {
  int cap = (int)(PT_ARRAY_LEN(measured_elems) * PT_ARRAY_LEN(widths)) * PTG_OP_COUNT;
  entry *es = calloc((size_t)cap, sizeof *es);
  int n = 0, err = PT_OK;
  int widest = pmb_jit_has(c->jit, "avx512f") ? 512 : pmb_jit_has(c->jit, "avx") ? 256 : 128;
  for (int op = 0; op < PTG_OP_COUNT; op++)
    for (size_t e = 0; e < PT_ARRAY_LEN(measured_elems); e++)
      for (size_t w = 0; w < PT_ARRAY_LEN(widths); w++) {
        int bits = widths[w] ? widths[w] : ptg_elem_bits(measured_elems[e]);
        pmb_op o = {op, measured_elems[e], bits};
        /* quick: scalar and the widest vector only */
        if (c->o->quick && widths[w] && bits != widest) continue;
        if (!selected(c->o->only, o) || !pmb_op_supported(c->jit, o)) continue;
        es[n].op = o;
        snprintf(es[n].lat_name, sizeof es[n].lat_name, "lat_%s_%s_%d", ptg_op_name(op), ptg_elem_name(o.elem), bits);
        snprintf(es[n].tp_name, sizeof es[n].tp_name, "tp_%s_%s_%d", ptg_op_name(op), ptg_elem_name(o.elem), bits);
        if ((op == PTG_OP_LOAD || op == PTG_OP_MASKLOAD) && pmb_load_in_vector_reg(o))
          snprintf(es[n].rt_name, sizeof es[n].rt_name, "rt_%s_%s_%d", ptg_op_name(op), ptg_elem_name(o.elem), bits);
        n++;
      }
  pmb_progress(c, "generating %d instruction kernels (latency and throughput)", 2 * n);
  LLVMModuleRef m = pmb_jit_module(c->jit, "instructions");
  for (int i = 0; i < n && err == 0; i++) {
    pmb_kernel lk = pmb_kernel_latency(es[i].op), tk = pmb_kernel_throughput(es[i].op);
    if (!no_latency(es[i].op)) err = pmb_kernel_build(c->jit, m, &lk, es[i].lat_name, d);
    if (err == 0) err = pmb_kernel_build(c->jit, m, &tk, es[i].tp_name, d);
    pmb_kernel rk = pmb_kernel_lane_round_trip(es[i].op);
    if (err == 0 && es[i].rt_name[0]) err = pmb_kernel_build(c->jit, m, &rk, es[i].rt_name, d);
  }
  char *text = err == 0 ? pmb_jit_asm(c->jit, m, d) : NULL;
  if (!text || (err = pmb_jit_add(c->jit, m, d)) < 0) {
    if (!text) LLVMDisposeModule(m);
    free(text);
    free(es);
    return err < 0 ? err : d->err;
  }
  void *in = pmb_kernel_input_new(), *out = aligned_alloc(64, 64 * PMB_MAX_CHAINS);
  if (!in || !out) {
    pmb_kernel_input_free(in);
    free(out);
    free(text);
    free(es);
    return pt_fail(d, PT_ERR_NOMEM, "instruction kernels: no memory for their input");
  }
  for (int i = 0; i < n; i++) {
    entry *e = &es[i];
    if (!no_latency(e->op) && !(e->lat = (pmb_kernel_fn)pmb_jit_lookup(c->jit, e->lat_name, d))) break;
    if (!(e->tp = (pmb_kernel_fn)pmb_jit_lookup(c->jit, e->tp_name, d))) break;
    if (e->rt_name[0] && !(e->rt = (pmb_kernel_fn)pmb_jit_lookup(c->jit, e->rt_name, d))) break;
  }
  if (!d->err) time_all(c, es, n, in, out);
  for (int i = 0; i < n && !d->err; i++) {
    entry *e = &es[i];
    ptg_inst *r = ptg_target_add_inst(c->t, e->op.op, e->op.elem, e->op.bits);
    if (e->lat) {
      r->latency = figure_of(c, &e->t_lat);
      if (e->rt) r->latency = lane_move_removed(c, r->latency, &e->t_rt);
    }
    pmb_kernel k = pmb_kernel_throughput(e->op);
    r->recip_throughput = figure_of(c, &e->t_tp);
    if (c->counters) { /* beside the timings: what the core itself counted */
      const int64_t iters = 20000;
      double cyc, ins;
      pmb_kernel lk = pmb_kernel_latency(e->op);
      pmb_kernel_fill(&lk, in);
      if (e->lat && pmb_counters_measure(c->counters, e->lat, iters, in, out, &cyc, &ins) == 0)
        r->counter_cycles = cyc / ((double)iters * lk.unroll * insns_per_step(e->op));
      pmb_kernel_fill(&k, in);
      if (pmb_counters_measure(c->counters, e->tp, iters, in, out, &cyc, &ins) == 0)
        r->counter_instructions = ins / ((double)iters * k.chains * k.unroll * insns_per_step(e->op));
    }
    char insn[64];
    pmb_asm_main_instruction(text, e->tp_name, insn, sizeof insn);
    r->instruction = pt_strdup(c->t->arena, insn);
    r->source = "measured";
  }
  pmb_kernel_input_free(in);
  free(out);
  free(text);
  free(es);
  return d->err ? d->err : PT_OK;
}
