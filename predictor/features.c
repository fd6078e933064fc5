/* Ansor's per-store features (TVM auto_scheduler/feature.cc), computed from a schedule
 * state instead of lowered TIR: each stage's store sits in the loops of its attach chain and
 * its own loops (fused loops counted as their constituents); attached stages get the region
 * their target's inner loops read (bound inference on affine indices); buffer indices are
 * affine forms over those loops, through inlined stages. The feed of the xgb cost model. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "learned.h"

#define MAXL 64
#define MAXACC 16 /* index vectors kept per buffer */
#define MAXBUF 16

typedef struct {
  double c[PC_MAX_AXES];
  double k;
  bool ok;
} axaff; /* affine in an op's axes */

typedef struct {
  double c[MAXL];
  double k;
  bool ok;
} laff; /* affine in the loops around a store */

typedef struct {
  int n, n_outer;
  int64_t ext[MAXL];
  int ann[MAXL];
  int root_stage[MAXL]; /* whose loop it is */
  int red_axis[MAXL];   /* reduce axis index of the owner op the loop derives from, -1 if spatial */
} loops;

typedef struct {
  bool done, busy;
  loops L;
  laff axis[PC_MAX_AXES];
  int64_t root_ext[PC_MAX_AXES];
  int unroll;
} stage_info;

typedef struct {
  const pc_state *s;
  stage_info *info;
} ctx;

static double slog(double x) { return x < 0 ? -log2(-x + 1) : log2(x + 1); }

/* ---------------------------------------------------------------- affine forms */

static axaff ax_const(double k) {
  axaff a;
  memset(&a, 0, sizeof a);
  a.k = k;
  a.ok = true;
  return a;
}

static axaff ax_of(const pc_expr *e) {
  axaff r = ax_const(0), x, y;
  switch (e->kind) {
  case PC_E_CONST_I: return ax_const((double)e->ival);
  case PC_E_AXIS:
    if (e->axis >= 0 && e->axis < PC_MAX_AXES) r.c[e->axis] = 1;
    else r.ok = false;
    return r;
  case PC_E_ADD:
  case PC_E_SUB:
    x = ax_of(e->args[0]), y = ax_of(e->args[1]);
    for (int i = 0; i < PC_MAX_AXES; i++) r.c[i] = x.c[i] + (e->kind == PC_E_ADD ? 1 : -1) * y.c[i];
    r.k = x.k + (e->kind == PC_E_ADD ? 1 : -1) * y.k;
    r.ok = x.ok && y.ok;
    return r;
  case PC_E_MUL:
    x = ax_of(e->args[0]), y = ax_of(e->args[1]);
    if (e->args[1]->kind == PC_E_CONST_I || e->args[0]->kind == PC_E_CONST_I) {
      const axaff *v = e->args[1]->kind == PC_E_CONST_I ? &x : &y;
      double m = e->args[1]->kind == PC_E_CONST_I ? y.k : x.k;
      for (int i = 0; i < PC_MAX_AXES; i++) r.c[i] = v->c[i] * m;
      r.k = v->k * m;
      r.ok = v->ok;
      return r;
    }
    r.ok = false;
    return r;
  default: r.ok = false; return r;
  }
}

/* f(inner axes) with inner axis j := sub[j] (affine in the outer op's axes). */
static axaff ax_compose(const axaff *f, const axaff *sub, int n_sub) {
  axaff r = ax_const(f->k);
  r.ok = f->ok;
  for (int j = 0; j < PC_MAX_AXES; j++) {
    if (f->c[j] == 0) continue;
    if (j >= n_sub || !sub[j].ok) {
      r.ok = false;
      continue;
    }
    for (int i = 0; i < PC_MAX_AXES; i++) r.c[i] += f->c[j] * sub[j].c[i];
    r.k += f->c[j] * sub[j].k;
  }
  return r;
}

/* ---------------------------------------------------------------- accesses */

static int stage_of_op(const pc_state *s, int op) {
  for (int i = 0; i < s->n_stages; i++)
    if (s->stages[i].op == op) return i;
  return -1;
}

static bool is_inlined(const pc_state *s, int op) {
  int st = stage_of_op(s, op);
  return st >= 0 && s->stages[st].at == PC_AT_INLINE;
}

typedef struct {
  int tensor;
  int n;                      /* index vectors */
  int ndim;
  axaff idx[MAXACC][PC_MAX_DIMS];
} buf_access;

typedef struct {
  int n;
  buf_access b[MAXBUF];
  /* operation counts per evaluation of the store's value (inlined bodies included) */
  double f_addsub, f_mul, f_divmod, f_cmp, f_math, f_mad, i_addsub, i_mul, i_divmod, i_cmp, bool_op, select_op;
} accesses;

static void add_access(accesses *A, int tensor, int ndim, const axaff *idx) {
  buf_access *b = NULL;
  for (int i = 0; i < A->n; i++)
    if (A->b[i].tensor == tensor) b = &A->b[i];
  if (!b) {
    if (A->n == MAXBUF) return;
    b = &A->b[A->n++];
    memset(b, 0, sizeof *b);
    b->tensor = tensor;
    b->ndim = ndim;
  }
  if (b->n == MAXACC) return;
  memcpy(b->idx[b->n++], idx, sizeof(axaff) * (size_t)ndim);
}

static void count_int(accesses *A, const pc_expr *e) {
  if (!e) return;
  switch (e->kind) {
  case PC_E_ADD:
  case PC_E_SUB: A->i_addsub++; break;
  case PC_E_MUL: A->i_mul++; break;
  case PC_E_DIV:
  case PC_E_MOD: A->i_divmod++; break;
  case PC_E_LT: case PC_E_LE: case PC_E_GT: case PC_E_GE: case PC_E_EQ: case PC_E_NE: A->i_cmp++; break;
  case PC_E_AND: case PC_E_OR: A->bool_op++; break;
  default: break;
  }
  for (int i = 0; i < e->n_args; i++) count_int(A, e->args[i]);
}

/* Walks a value expression of op `op` whose axes are `sub` (affine in the store's axes). */
static void walk(const pc_state *s, const pc_expr *e, const axaff *sub, int n_sub, accesses *A, int depth) {
  if (!e || depth > 16) return;
  if (e->kind == PC_E_LOAD) {
    axaff idx[PC_MAX_DIMS];
    for (int k = 0; k < e->n_args && k < PC_MAX_DIMS; k++) {
      axaff f = ax_of(e->args[k]);
      idx[k] = ax_compose(&f, sub, n_sub);
      count_int(A, e->args[k]);
    }
    const pc_op *src = &s->prog->ops[e->tensor];
    if (is_inlined(s, e->tensor)) walk(s, src->body, idx, e->n_args, A, depth + 1);
    else add_access(A, e->tensor, e->n_args, idx);
    return;
  }
  if (e->is_int) {
    count_int(A, e);
    return;
  }
  switch (e->kind) {
  case PC_E_ADD:
  case PC_E_SUB: A->f_addsub++; break;
  case PC_E_MUL: A->f_mul++; break;
  case PC_E_DIV:
  case PC_E_MOD: A->f_divmod++; break;
  case PC_E_MAX: case PC_E_MIN: A->f_cmp++; break;
  case PC_E_EXP: case PC_E_SQRT: A->f_math++; break;
  case PC_E_SELECT: A->select_op++; break;
  default: break;
  }
  for (int i = 0; i < e->n_args; i++) walk(s, e->args[i], sub, n_sub, A, depth + 1);
}

static void stage_accesses(const pc_state *s, int sid, accesses *A) {
  memset(A, 0, sizeof *A);
  const pc_op *op = &s->prog->ops[s->stages[sid].op];
  axaff id[PC_MAX_AXES];
  int n_axes = op->ndim + op->n_reduce;
  for (int i = 0; i < n_axes; i++) {
    id[i] = ax_const(0);
    id[i].c[i] = 1;
  }
  walk(s, op->body, id, n_axes, A, 0);
  /* A sum of products is one multiply-add per point (TVM counts FMA-able pairs the same way). */
  if (op->reduce == PC_REDUCE_SUM && op->body && op->body->kind == PC_E_MUL) {
    A->f_mul--;
    A->f_mad++;
  } else if (op->reduce == PC_REDUCE_SUM) A->f_addsub++;
  else if (op->reduce == PC_REDUCE_MAX) A->f_cmp++;
}

/* ---------------------------------------------------------------- loop nests */

/* Coefficient of node n in its root axis (and which axis). */
static int64_t node_stride(const pc_stage *st, int n, int *root_axis) {
  int64_t stride = 1;
  while (st->nodes[n].rel == PC_REL_SPLIT) {
    int p = st->nodes[n].split_parent;
    const pc_iter *pi = &st->nodes[p];
    bool after = false;
    for (int c = 0; c < pi->n_children; c++) {
      if (after) stride *= st->nodes[pi->children[c]].extent;
      if (pi->children[c] == n) after = true;
    }
    n = p;
  }
  *root_axis = st->nodes[n].rel == PC_REL_ROOT ? st->nodes[n].root_axis : -1;
  return stride;
}

/* Appends node n's loops (constituents of fused nodes, recursively). */
static void push_loops(const pc_state *s, int sid, const pc_stage *st, int n, int ann, stage_info *si, int depth) {
  const pc_iter *it = &st->nodes[n];
  if (it->rel == PC_REL_FUSE && depth < 8) {
    for (int k = 0; k < it->n_fused; k++) push_loops(s, sid, st, it->fused[k], ann, si, depth + 1);
    return;
  }
  loops *L = &si->L;
  if (L->n == MAXL) return;
  int axis;
  int64_t stride = node_stride(st, n, &axis);
  const pc_op *op = &s->prog->ops[st->op];
  int l = L->n++;
  L->ext[l] = it->extent > 0 ? it->extent : 1;
  L->ann[l] = ann;
  L->root_stage[l] = sid;
  L->red_axis[l] = axis >= op->ndim ? axis - op->ndim : -1;
  if (axis >= 0 && axis < PC_MAX_AXES) si->axis[axis].c[l] = (double)stride;
}

/* The buffer index forms of `target`'s reads of op `op`, in target's axes. */
static int reads_of(const pc_state *s, int target, int op, axaff (*out)[PC_MAX_DIMS], int cap) {
  accesses *A = malloc(sizeof *A);
  stage_accesses(s, target, A);
  int n = 0;
  for (int i = 0; i < A->n; i++)
    if (A->b[i].tensor == op)
      for (int k = 0; k < A->b[i].n && n < cap; k++) memcpy(out[n++], A->b[i].idx[k], sizeof(axaff) * PC_MAX_DIMS);
  free(A);
  return n;
}

static stage_info *info_of(ctx *c, int sid);

static void build_info(ctx *c, int sid, stage_info *si) {
  const pc_state *s = c->s;
  const pc_stage *orig = &s->stages[sid];
  const pc_op *op = &s->prog->ops[orig->op];
  int n_axes = op->ndim + op->n_reduce;
  for (int a = 0; a < PC_MAX_AXES; a++) {
    memset(&si->axis[a], 0, sizeof(laff));
    si->axis[a].ok = true;
  }
  for (int a = 0; a < n_axes; a++) si->root_ext[a] = a < op->ndim ? op->shape[a] : op->reduce_extent[a - op->ndim];
  si->unroll = orig->auto_unroll_max_step;
  if (orig->at == PC_AT_ITER) {
    int t = orig->attach_stage;
    stage_info *ti = info_of(c, t);
    const pc_stage *ts = &s->stages[t];
    /* Target loops up to and including the attach leaf. */
    stage_info tmp;
    memset(&tmp, 0, sizeof tmp);
    int n_outer = ti->L.n_outer;
    for (int l = 0; l < ts->n_leaves; l++) {
      /* count target loops of leaf l by re-expanding it */
      memset(&tmp.L, 0, sizeof tmp.L);
      push_loops(s, t, ts, ts->leaves[l], 0, &tmp, 0);
      n_outer += tmp.L.n;
      if (ts->leaves[l] == orig->attach_node) break;
    }
    if (n_outer > ti->L.n) n_outer = ti->L.n;
    si->L.n = n_outer;
    memcpy(si->L.ext, ti->L.ext, sizeof(int64_t) * (size_t)n_outer);
    memcpy(si->L.ann, ti->L.ann, sizeof(int) * (size_t)n_outer);
    memcpy(si->L.root_stage, ti->L.root_stage, sizeof(int) * (size_t)n_outer);
    for (int l = 0; l < n_outer; l++) si->L.red_axis[l] = -1;
    si->L.n_outer = n_outer;
    if (ti->unroll > si->unroll) si->unroll = ti->unroll;
    /* Region of each spatial axis read by the target's inner loops; origin moves with the outer ones. */
    axaff rd[MAXACC][PC_MAX_DIMS];
    int nr = reads_of(s, t, orig->op, rd, MAXACC);
    for (int p = 0; p < op->ndim; p++) {
      bool ok = nr > 0;
      double lo = INFINITY, hi = -INFINITY, span = 0;
      double oc[MAXL] = {0};
      for (int r = 0; r < nr && ok; r++) {
        if (!rd[r][p].ok) {
          ok = false;
          break;
        }
        lo = fmin(lo, rd[r][p].k), hi = fmax(hi, rd[r][p].k);
        double sp = 0;
        for (int l = 0; l < ti->L.n; l++) {
          double coef = 0;
          for (int a = 0; a < PC_MAX_AXES; a++) coef += rd[r][p].c[a] * ti->axis[a].c[l];
          if (l < n_outer) oc[l] = coef;
          else sp += fabs(coef) * (double)(ti->L.ext[l] - 1);
        }
        span = fmax(span, sp);
      }
      if (ok) {
        double ext = span + (hi - lo) + 1;
        si->root_ext[p] = ext < (double)op->shape[p] ? (int64_t)ext : op->shape[p];
        for (int l = 0; l < n_outer; l++) si->axis[p].c[l] = oc[l];
      }
    }
  }
  pc_stage *eff = malloc(sizeof *eff);
  *eff = *orig;
  /* The extents lowering gives the loops: an attached stage's splits tightened to its region. */
  if (orig->at == PC_AT_ITER) pc_stage_bound_region(eff, n_axes, si->root_ext);
  else pc_stage_propagate_extents(eff);
  for (int l = 0; l < eff->n_leaves; l++)
    push_loops(s, sid, eff, eff->leaves[l], eff->nodes[eff->leaves[l]].annotation, si, 0);
  free(eff);
}

static stage_info *info_of(ctx *c, int sid) {
  stage_info *si = &c->info[sid];
  if (!si->done && !si->busy) {
    si->busy = true;
    build_info(c, sid, si);
    si->done = true;
  }
  return si;
}

/* ---------------------------------------------------------------- one store's features */

typedef struct {
  double type, bytes, unique_bytes, lines, unique_lines, reuse_type, reuse_dis_iter, reuse_dis_bytes, reuse_ct, stride;
} buf_feat;

/* Forms of a buffer's index vectors over the loops of a store. */
static void to_loops(const stage_info *si, const axaff *idx, laff *out) {
  memset(out, 0, sizeof *out);
  out->ok = idx->ok;
  out->k = idx->k;
  for (int a = 0; a < PC_MAX_AXES; a++) {
    if (idx->c[a] == 0) continue;
    for (int l = 0; l < si->L.n; l++) out->c[l] += idx->c[a] * si->axis[a].c[l];
  }
}

/* Elements of the buffer touched by loops from..n-1 (per dimension, union over index vectors). */
static double touched(const stage_info *si, laff (*f)[PC_MAX_DIMS], int nv, int ndim, const int64_t *shape, int from,
                      int64_t *region) {
  double total = 1;
  for (int d = 0; d < ndim; d++) {
    double lo = INFINITY, hi = -INFINITY, span = 0;
    bool ok = true;
    for (int v = 0; v < nv; v++) {
      if (!f[v][d].ok) ok = false;
      lo = fmin(lo, f[v][d].k), hi = fmax(hi, f[v][d].k);
      double sp = 0;
      for (int l = from; l < si->L.n; l++) sp += fabs(f[v][d].c[l]) * (double)(si->L.ext[l] - 1);
      span = fmax(span, sp);
    }
    double e = ok ? span + (hi - lo) + 1 : (double)shape[d];
    if (e > (double)shape[d] && shape[d] > 0) e = (double)shape[d];
    region[d] = (int64_t)e;
    total *= e;
  }
  return total;
}

static int pos_type(const stage_info *si, const pc_op *op, int l) {
  if (l < 0) return 0;
  int found = 0, which = -1;
  for (int a = 0; a < op->ndim; a++)
    if (si->axis[a].c[l] != 0) found++, which = a;
  if (found == 0) {
    int r = si->L.red_axis[l];
    if (r < 0) return 3; /* a loop of the attach chain: outer spatial (TVM's assumption) */
    return r == 0 ? 4 : r == op->n_reduce - 1 ? 6 : 5;
  }
  if (found > 1) return 7;
  return which == op->ndim - 1 ? 1 : which == 0 ? 3 : 2;
}

static void ann_feats(const stage_info *si, const pc_op *op, int ann, float **w) {
  double num = 0, prod = 1, len = 0;
  int inner = -1;
  for (int l = 0; l < si->L.n; l++)
    if (si->L.ann[l] == ann) num++, prod *= (double)si->L.ext[l], len = (double)si->L.ext[l], inner = l;
  *(*w)++ = (float)slog(num);
  *(*w)++ = (float)slog(num ? prod : 0);
  *(*w)++ = (float)slog(len);
  int pt = inner >= 0 ? pos_type(si, op, inner) : 0;
  for (int k = 0; k <= 7; k++) *(*w)++ = k == pt;
}

static int cmp_buf(const void *a, const void *b) {
  const buf_feat *x = a, *y = b;
  if (x->lines != y->lines) return x->lines > y->lines ? -1 : 1;
  return x->bytes > y->bytes ? -1 : x->bytes < y->bytes;
}

static void store_features(ctx *c, int sid, int line, float *row) {
  const pc_state *s = c->s;
  const pc_op *op = &s->prog->ops[s->stages[sid].op];
  stage_info *si = info_of(c, sid);
  accesses *A = malloc(sizeof *A);
  stage_accesses(s, sid, A);
  /* The store itself: written (read too for a reduction) at its spatial axes. */
  axaff wr[PC_MAX_DIMS];
  for (int a = 0; a < op->ndim; a++) {
    wr[a] = ax_const(0);
    wr[a].c[a] = 1;
  }
  int wbuf = A->n < MAXBUF ? A->n : MAXBUF - 1;
  A->n = wbuf;
  add_access(A, s->stages[sid].op, op->ndim, wr);
  double outer_prod = 1;
  for (int l = 0; l < si->L.n; l++) outer_prod *= (double)si->L.ext[l];
  float *w = row;
  /* Group 1: computation. */
  double ops[16] = {A->f_mad, A->f_addsub, A->f_mul, A->f_divmod, A->f_cmp, A->f_math, 0,
                    0,        A->i_addsub, A->i_mul, A->i_divmod, A->i_cmp, 0,         0, A->bool_op, A->select_op};
  for (int k = 0; k < 16; k++) *w++ = (float)slog(ops[k] * outer_prod);
  ann_feats(si, op, PC_ANN_VECTORIZE, &w);
  ann_feats(si, op, PC_ANN_UNROLL, &w);
  ann_feats(si, op, PC_ANN_PARALLEL, &w);
  for (int k = 0; k < 8; k++) *w++ = 0; /* is_gpu, blockIdx.xyz, threadIdx.xyz, vthread */
  /* Group 2: buffer accesses. */
  buf_feat bf[MAXBUF];
  int nb = A->n;
  laff(*forms)[MAXACC][PC_MAX_DIMS] = malloc(sizeof(laff) * MAXBUF * MAXACC * PC_MAX_DIMS);
  double mem_bytes[MAXL + 1];
  int64_t region[PC_MAX_DIMS];
  for (int b = 0; b < nb; b++)
    for (int v = 0; v < A->b[b].n; v++)
      for (int d = 0; d < A->b[b].ndim; d++) to_loops(si, &A->b[b].idx[v][d], &forms[b][v][d]);
  /* Bytes touched by all buffers inside each loop (for reuse distances and intensity). */
  for (int l = 0; l <= si->L.n; l++) {
    mem_bytes[l] = 0;
    for (int b = 0; b < nb; b++)
      mem_bytes[l] += 4 * touched(si, forms[b], A->b[b].n, A->b[b].ndim, s->prog->ops[A->b[b].tensor].shape, l, region);
  }
  for (int b = 0; b < nb; b++) {
    buf_access *ba = &A->b[b];
    const int64_t *shape = s->prog->ops[ba->tensor].shape;
    buf_feat *f = &bf[b];
    memset(f, 0, sizeof *f);
    f->type = b == wbuf ? (op->n_reduce > 0 ? 2 : 1) : 0;
    f->bytes = outer_prod * 4;
    int n = si->L.n;
    if (n == 0) {
      f->unique_bytes = 4, f->lines = f->unique_lines = 1;
    } else {
      f->unique_bytes = 4 * touched(si, forms[b], ba->n, ba->ndim, shape, 0, region);
      /* Stride of the innermost loop that moves the buffer (ComputeStride). */
      double stride = 0, reduce_ratio = 1;
      int i;
      for (i = n - 1; i >= 0; i--) {
        double best = INFINITY;
        for (int v = 0; v < ba->n; v++) {
          double ss = 1;
          for (int d = ba->ndim - 1; d >= 0; d--) {
            if (forms[b][v][d].c[i] != 0) {
              best = fmin(best, fabs(forms[b][v][d].c[i]) * ss);
              break;
            }
            ss *= (double)shape[d];
          }
        }
        stride = isfinite(best) ? best : 0;
        if (stride != 0) break;
        reduce_ratio *= (double)si->L.ext[n - 1]; /* as feature.cc: the innermost loop's extent */
      }
      f->lines = fmax(outer_prod / reduce_ratio * fmin(1.0, stride * 4 / line), 1.0);
      f->stride = i == n - 1 ? stride : 0;
      double n_cont = 4;
      for (int d = ba->ndim - 1; d >= 0; d--)
        if (region[d] == shape[d]) {
          n_cont *= (double)region[d];
          break;
        }
      f->unique_lines = fmax(f->unique_bytes / fmin(n_cont, line), 1.0);
    }
    /* Reuse (ComputeReuse): the innermost loop the buffer does not move with. Serial reuse
     * (several statements of one loop body touching the buffer) is not modelled. */
    f->reuse_type = 2;
    double dis_iter = 1, dis_bytes = -1;
    for (int l = n - 1; l >= 0; l--) {
      bool moves = false;
      for (int v = 0; v < ba->n && !moves; v++)
        for (int d = 0; d < ba->ndim; d++)
          if (forms[b][v][d].c[l] != 0) moves = true;
      if (moves) {
        dis_iter *= (double)si->L.ext[l];
        dis_bytes = mem_bytes[l];
      } else {
        if (dis_bytes < 0) dis_bytes = 4.0 * nb;
        f->reuse_type = 0, f->reuse_dis_iter = dis_iter, f->reuse_dis_bytes = dis_bytes, f->reuse_ct = (double)si->L.ext[l];
        break;
      }
    }
  }
  buf_feat sorted[MAXBUF];
  memcpy(sorted, bf, sizeof(buf_feat) * (size_t)nb);
  if (nb > 1) qsort(sorted, (size_t)nb, sizeof(buf_feat), cmp_buf);
  for (int b = 0; b < PP_FEATURE_BUFFERS; b++) {
    if (b >= nb) {
      for (int k = 0; k < 18; k++) *w++ = 0;
      continue;
    }
    const buf_feat *f = &sorted[b];
    for (int k = 0; k < 3; k++) *w++ = (int)f->type == k;
    *w++ = (float)slog(f->bytes), *w++ = (float)slog(f->unique_bytes), *w++ = (float)slog(f->lines),
    *w++ = (float)slog(f->unique_lines);
    for (int k = 0; k < 3; k++) *w++ = (int)f->reuse_type == k;
    double div = f->reuse_ct > 0.5 ? f->reuse_ct : 0.5; /* no reuse: feature.cc's magic factor 2 */
    *w++ = (float)slog(f->reuse_dis_iter), *w++ = (float)slog(f->reuse_dis_bytes), *w++ = (float)slog(f->reuse_ct);
    *w++ = (float)slog(f->bytes / div), *w++ = (float)slog(f->unique_bytes / div), *w++ = (float)slog(f->lines / div),
    *w++ = (float)slog(f->unique_lines / div), *w++ = (float)slog(f->stride);
  }
  /* Group 3: arithmetic intensity curve, flops against bytes from the innermost loop out. */
  double flops_per = A->f_mad * 2 + A->f_addsub + A->f_mul + A->f_divmod + A->f_cmp + A->f_math;
  double cops[MAXL], mbytes[MAXL];
  int nl = si->L.n;
  double acc = flops_per;
  for (int k = 0; k < nl; k++) {
    int l = nl - 1 - k;
    acc *= (double)si->L.ext[l];
    cops[k] = acc;
    mbytes[k] = fmax(mem_bytes[l], 1);
  }
  int pt = 0;
  for (int k = 0; k < 10; k++) {
    double v = 0;
    if (flops_per > 0 && nl > 0) {
      double want = cops[nl - 1] * (k + 1) / 10.0;
      while (pt < nl - 1 && cops[pt] < want - 1e-4) pt++;
      if (pt == 0) v = cops[0] / mbytes[0];
      else {
        double base = cops[pt - 1] / mbytes[pt - 1];
        double slope = (cops[pt] / mbytes[pt] - base) / fmax(cops[pt] - cops[pt - 1], 1e-9);
        v = base + slope * (want - cops[pt - 1]);
      }
    }
    *w++ = (float)slog(v);
  }
  /* Group 4: allocation (intermediate buffers only). */
  if (!op->is_output) {
    double size = 1, out_prod = 1;
    for (int a = 0; a < op->ndim; a++) size *= (double)si->root_ext[a];
    for (int l = 0; l < si->L.n_outer; l++) out_prod *= (double)si->L.ext[l];
    *w++ = (float)slog(size * 4), *w++ = (float)slog(size * out_prod), *w++ = (float)slog(out_prod),
    *w++ = (float)slog(outer_prod / out_prod);
  } else
    for (int k = 0; k < 4; k++) *w++ = 0;
  /* Group 5: outer scope. */
  *w++ = (float)slog(outer_prod);
  *w++ = (float)slog(si->L.n);
  *w++ = (float)slog(si->unroll);
  free(forms);
  free(A);
}

int pp_features_state(const pc_state *s, int cache_line_bytes, float **rows, pt_diag *d) {
  *rows = NULL;
  if (cache_line_bytes <= 0) cache_line_bytes = 64;
  ctx c = {s, calloc((size_t)s->n_stages, sizeof(stage_info))};
  int n = 0;
  float *out = malloc(sizeof(float) * PP_FEATURES_PER_STORE * (size_t)(s->n_stages + 1));
  if (!c.info || !out) {
    free(c.info);
    free(out);
    return pt_fail(d, PT_ERR_NOMEM, "features: out of memory");
  }
  for (int sid = 0; sid < s->n_stages; sid++) {
    const pc_stage *st = &s->stages[sid];
    if (s->prog->ops[st->op].is_placeholder || st->at == PC_AT_INLINE) continue;
    store_features(&c, sid, cache_line_bytes, out + (size_t)n * PP_FEATURES_PER_STORE);
    n++;
  }
  free(c.info);
  *rows = out;
  return n;
}

const char *pp_feature_name(int i, char *name, size_t cap) {
  static const char *g1[] = {"float_mad", "float_addsub", "float_mul", "float_divmod", "float_cmp", "float_math_func",
                             "float_other_func", "int_mad", "int_addsub", "int_mul", "int_divmod", "int_cmp",
                             "int_math_func", "int_other_func", "bool_op", "select_op"};
  static const char *ann[] = {"vec", "unroll", "parallel"};
  static const char *pos[] = {"kPosNone", "kPosInnerSpatial", "kPosMiddleSpatial", "kPosOuterSpatial",
                              "kPosInnerReduce", "kPosMiddleReduce", "kPosOuterReduce", "kPosMixed"};
  static const char *gpu[] = {"is_gpu", "blockIdx_x_len", "blockIdx_y_len", "blockIdx_z_len", "threadIdx_x_len",
                              "threadIdx_y_len", "threadIdx_z_len", "vthread_len"};
  static const char *buf[] = {"acc_type.kRead", "acc_type.kWrite", "acc_type.kReadWrite", "bytes", "unique_bytes",
                              "lines", "unique_lines", "reuse_type.kLoopMultipleRead",
                              "reuse_type.kSerialMultipleReadWrite", "reuse_type.kNoReuse", "reuse_dis_iter",
                              "reuse_dis_bytes", "reuse_ct", "bytes_d_reuse_ct", "unique_bytes_d_reuse_ct",
                              "lines_d_reuse_ct", "unique_lines_d_reuse_ct", "stride"};
  static const char *tail[] = {"alloc_size", "alloc_prod", "alloc_outer_prod", "alloc_inner_prod", "outer_prod",
                               "num_loops", "auto_unroll_max_step"};
  if (i < 0 || i >= PP_FEATURES_PER_STORE) return "";
  if (i < 16) return g1[i];
  i -= 16;
  if (i < 33) {
    int a = i / 11, k = i % 11;
    if (k < 3) snprintf(name, cap, "%s_%s", ann[a], k == 0 ? "num" : k == 1 ? "prod" : "len");
    else snprintf(name, cap, "%s_type.%s", ann[a], pos[k - 3]);
    return name;
  }
  i -= 33;
  if (i < 8) return gpu[i];
  i -= 8;
  if (i < 90) {
    snprintf(name, cap, "B%d.%s", i / 18, buf[i % 18]);
    return name;
  }
  i -= 90;
  if (i < 10) {
    snprintf(name, cap, "arith_intensity_curve_%d", i);
    return name;
  }
  return tail[i - 10];
}
