/* Execution-unit classes and issue width. Two op classes compete for a unit when a kernel
 * running both (6 chains each) takes as long as running them one after the other rather
 * than side by side; groups whose classes all compete pairwise are merged into one unit. The issue
 * width is the most instructions per cycle seen in kernels mixing one class per unit. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

typedef struct {
  pmb_op op;
  double rtp, lat; /* from the instruction table */
  int parent;      /* union-find */
} rep;

static int find(rep *r, int i) {
  while (r[i].parent != i) i = r[i].parent = r[r[i].parent].parent;
  return i;
}

/* Representatives: each class on float and integer lanes at the widest width, plus scalar
 * integer add and multiply (the general-purpose ALUs). */
static int representatives(pmb_ctx *c, rep *out, int cap) {
  int w = c->t->max_vector_bits, n = 0;
  static const ptg_op fl_ops[] = {PTG_OP_ADD, PTG_OP_MUL, PTG_OP_FMA, PTG_OP_DIV, PTG_OP_SQRT, PTG_OP_MINMAX, PTG_OP_CMPSEL,
                                  PTG_OP_CONVERT, PTG_OP_SHUFFLE, PTG_OP_LOAD, PTG_OP_STORE, PTG_OP_GATHER};
  static const ptg_op int_ops[] = {PTG_OP_ADD, PTG_OP_MUL, PTG_OP_LOGIC, PTG_OP_SHIFT, PTG_OP_MINMAX};
  pmb_op all[32];
  int m = 0;
  for (size_t i = 0; i < PT_ARRAY_LEN(fl_ops); i++) all[m++] = (pmb_op){fl_ops[i], PTG_ELEM_F32, w};
  for (size_t i = 0; i < PT_ARRAY_LEN(int_ops); i++) all[m++] = (pmb_op){int_ops[i], PTG_ELEM_I32, w};
  all[m++] = (pmb_op){PTG_OP_ADD, PTG_ELEM_I64, 64};
  all[m++] = (pmb_op){PTG_OP_MUL, PTG_ELEM_I64, 64};
  for (int i = 0; i < m && n < cap; i++) {
    const ptg_inst *row = ptg_target_find_inst(c->t, all[i].op, all[i].elem, all[i].bits);
    if (!row || isnan(row->recip_throughput.value)) continue;
    /* per step of the kernel: a conversion step is two instructions (there and back) */
    double per_step = all[i].op == PTG_OP_CONVERT ? 2 : 1;
    out[n] = (rep){.op = all[i], .rtp = per_step * row->recip_throughput.value, .parent = n};
    out[n].lat = per_step * (isnan(row->latency.value) ? row->recip_throughput.value : row->latency.value);
    n++;
  }
  return n;
}

/* Cycles per iteration for 24 ops of each of a and b, if they run apart or on one unit. */
static void bounds(const rep *a, const rep *b, double *apart, double *together) {
  double ta = 24 * fmax(a->rtp, a->lat / 6), tb = 24 * fmax(b->rtp, b->lat / 6);
  *apart = fmax(ta, tb);
  *together = fmax(*apart, 24 * (a->rtp + b->rtp));
}

static const char *unit_of(const ptg_target *t, const rep *r, int n, const ptg_inst *row, const char **names) {
  bool fl = ptg_elem_is_float(row->elem), scalar = row->vector_bits == ptg_elem_bits(row->elem);
  int best = -1;
  /* masked loads and stores are loads and stores with a mask operand: the same pipes; scatters
   * and the page-apart classes are given the gather's (ptg_op_fallback) */
  ptg_op mem = row->op;
  while (ptg_op_fallback(mem) != mem) mem = ptg_op_fallback(mem);
  for (int i = 0; i < n; i++) {
    bool rfl = ptg_elem_is_float(r[i].op.elem), rscalar = r[i].op.bits == ptg_elem_bits(r[i].op.elem);
    /* memory ops and permutes use the same units whatever the lanes hold */
    bool any_kind = mem == PTG_OP_LOAD || mem == PTG_OP_STORE || mem == PTG_OP_GATHER || mem == PTG_OP_SHUFFLE;
    if (any_kind && r[i].op.op == mem) return names[find((rep *)r, i)];
    if (rfl != fl) continue;
    if (!fl && rscalar != scalar) continue; /* integer scalar ops run on the ALUs */
    if (r[i].op.op == row->op) return names[find((rep *)r, i)];
    if (row->op == PTG_OP_SUB && r[i].op.op == PTG_OP_ADD) best = i;
    bool alu_op = row->op == PTG_OP_SUB || row->op == PTG_OP_LOGIC || row->op == PTG_OP_SHIFT;
    if (best < 0 && !fl && scalar && alu_op && r[i].op.op == PTG_OP_ADD) best = i; /* simple ALU ops */
  }
  (void)t;
  if (best >= 0) return names[find((rep *)r, best)];
  for (int i = 0; i < n && row->op == PTG_OP_FMA; i++) /* integer dot products: the FMA unit */
    if (r[i].op.op == row->op) return names[find((rep *)r, i)];
  return NULL;
}

int pmb_measure_units(pmb_ctx *c, pt_diag *d) {
  rep r[32];
  int n = representatives(c, r, 32);
  if (n == 0) return PT_OK;
  int n_pairs = n * (n - 1) / 2, p = 0, err = PT_OK;
  pmb_progress(c, "execution units: %d classes, %d pairs", n, n_pairs);
  LLVMModuleRef m = pmb_jit_module(c->jit, "units");
  for (int a = 0; a < n && !err; a++)
    for (int b = a + 1; b < n && !err; b++) {
      char name[32];
      snprintf(name, sizeof name, "pair_%d_%d", a, b);
      pmb_kernel k = pmb_kernel_pair(r[a].op, r[b].op);
      err = pmb_kernel_build(c->jit, m, &k, name, d);
    }
  if (err < 0) {
    LLVMDisposeModule(m);
    return err;
  }
  if ((err = pmb_jit_add(c->jit, m, d)) < 0) return err;
  void *in = pmb_kernel_input_new(), *out = aligned_alloc(64, 64 * PMB_MAX_CHAINS);
  if (!in || !out) {
    pmb_kernel_input_free(in);
    free(out);
    return pt_fail(d, PT_ERR_NOMEM, "execution units: no memory for the kernels' input");
  }
  double cyc = c->ghz * 1e9;
  double share[32][32]; /* 0: side by side, 1: one after the other, NaN: not measured */
  for (int a = 0; a < n; a++)
    for (int b = 0; b < n; b++) share[a][b] = NAN;
  for (int a = 0; a < n; a++)
    for (int b = a + 1; b < n; b++, p++) {
      char name[32];
      snprintf(name, sizeof name, "pair_%d_%d", a, b);
      pmb_kernel_fn fn = (pmb_kernel_fn)pmb_jit_lookup(c->jit, name, d);
      if (!fn) goto done;
      pmb_kernel k = pmb_kernel_pair(r[a].op, r[b].op);
      pmb_kernel_fill(&k, in);
      cyc = pmb_recalibrate(c) * 1e9;
      double t = pmb_time_kernel(fn, in, out, c->min_seconds, c->reps).value * cyc;
      double apart, together;
      bounds(&r[a], &r[b], &apart, &together);
      /* undecidable when one class is so cheap that sharing would hardly show */
      if (together - apart < 0.15 * apart) continue;
      share[a][b] = share[b][a] = (t - apart) / (together - apart);
    }
  /* Complete linkage: two groups merge only if every pair across them competes, so a class
   * that shares pipes with two otherwise separate units (integer vector adds run on all four
   * FP pipes of Zen) does not chain them into one. Most sharing pair first. */
  for (;;) {
    int best_a = -1, best_b = -1;
    double best_share = 0.6;
    for (int a = 0; a < n; a++)
      for (int b = 0; b < n; b++) {
        if (find(r, a) != a || find(r, b) != b || a >= b) continue;
        double worst = INFINITY;
        for (int i = 0; i < n; i++)
          for (int j = 0; j < n; j++)
            if (find(r, i) == a && find(r, j) == b && !isnan(share[i][j])) worst = fmin(worst, share[i][j]);
        if (worst != INFINITY && worst > best_share) best_share = worst, best_a = a, best_b = b;
      }
    if (best_a < 0) break;
    r[best_b].parent = best_a;
  }
  /* name units after their members */
  const char *names[32];
  c->t->units = pt_alloc(c->t->arena, sizeof(ptg_unit) * (size_t)n);
  for (int i = 0; i < n; i++) {
    int root = find(r, i);
    if (root != i) continue;
    ptg_unit *u = &c->t->units[c->t->n_units];
    u->name = names[i] = pt_sprintf(c->t->arena, "u%d", c->t->n_units);
    char *classes = pt_strdup(c->t->arena, "");
    double best = INFINITY;
    for (int j = 0; j < n; j++)
      if (find(r, j) == root) {
        classes = pt_sprintf(c->t->arena, "%s%s%s.%s.%d", classes, *classes ? "," : "", ptg_op_name(r[j].op.op),
                             ptg_elem_name(r[j].op.elem), r[j].op.bits);
        best = fmin(best, r[j].rtp);
      }
    u->classes = classes;
    u->pipes = best > 0 && best < 1 ? (int)lround(1 / best) : 1;
    c->t->n_units++;
  }
  for (int i = 0; i < n; i++) names[i] = names[find(r, i)];
  for (int i = 0; i < c->t->n_insts; i++) c->t->insts[i].unit = unit_of(c->t, r, n, &c->t->insts[i], names);
  pmb_progress(c, "execution units: %d unit classes", c->t->n_units);
  {
    /* the issue-width mix: the cheapest class (latency <= 6 cycles) of every unit, round
     * robin over 12 chains, so no unit and no dependency chain is the bottleneck */
    pmb_kernel mix = {.chains = 12, .unroll = 4};
    int picks[32], n_picks = 0;
    for (int i = 0; i < n; i++) {
      if (find(r, i) != i) continue;
      int best = -1;
      for (int j = 0; j < n; j++)
        if (find(r, j) == i && r[j].lat <= 6 && (best < 0 || r[j].rtp < r[best].rtp)) best = j;
      if (best >= 0) picks[n_picks++] = best;
    }
    if (n_picks == 0) picks[n_picks++] = 0; /* only slow classes measured: the first */
    for (int i = 0; i < 12; i++) mix.ops[i] = r[picks[i % n_picks]].op;
    LLVMModuleRef mm = pmb_jit_module(c->jit, "issue");
    if (pmb_kernel_build(c->jit, mm, &mix, "issue_mix", d) < 0) {
      LLVMDisposeModule(mm);
      goto done;
    }
    if (pmb_jit_add(c->jit, mm, d) < 0) goto done;
    pmb_kernel_fn fn = (pmb_kernel_fn)pmb_jit_lookup(c->jit, "issue_mix", d);
    if (!fn) goto done;
    pmb_kernel_fill(&mix, in);
    cyc = pmb_recalibrate(c) * 1e9;
    pmb_stats s = pmb_time_kernel(fn, in, out, c->min_seconds, c->reps);
    int insns = 12 * 4 + 2; /* plus the loop's increment and fused compare-and-branch */
    double ipc = insns / (s.value * cyc);
    const ptg_inst *alu = ptg_target_find_inst(c->t, PTG_OP_ADD, PTG_ELEM_I64, 64);
    double alu_ipc = alu ? 1 / alu->recip_throughput.value : 0;
    c->t->issue_width = (ptg_figure){.value = fmax(ipc, alu_ipc), .spread = s.spread, .reps = s.reps,
                                     .source = "most instructions per cycle: a mix of every unit class, or scalar adds"};
    pmb_progress(c, "issue width %.2f instructions/cycle (mix %.2f, scalar adds %.2f)", c->t->issue_width.value, ipc, alu_ipc);
  }
done:
  pmb_kernel_input_free(in);
  free(out);
  return d->err ? d->err : PT_OK;
}
