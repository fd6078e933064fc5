/* Bound inference for compute_at: the region of an attached stage that one iteration of its
 * target's attach loop reads. Iterator values are linear forms over the loop variables
 * already bound (outer loops), with inner loops as constant-width intervals; accesses are
 * unioned when they differ by constants; anything else falls back to the whole tensor. */
#include <string.h>

#include "lower_internal.h"

#define LIN_TERMS 12

typedef struct {
  int64_t c;
  int n;
  LLVMValueRef atom[LIN_TERMS];
  int64_t coef[LIN_TERMS];
  int64_t atom_max[LIN_TERMS]; /* largest value of the atom, -1 if unknown */
} lin;

typedef struct {
  lin lo;
  int64_t ext;
  bool ok;
} ivl;

static ivl point_const(int64_t c) {
  ivl r = {0};
  r.lo.c = c;
  r.ext = 1;
  r.ok = true;
  return r;
}

static bool lin_add_term(lin *l, LLVMValueRef atom, int64_t coef, int64_t max) {
  for (int i = 0; i < l->n; i++)
    if (l->atom[i] == atom) {
      l->coef[i] += coef;
      return true;
    }
  if (l->n == LIN_TERMS) return false;
  l->atom[l->n] = atom;
  l->coef[l->n] = coef;
  l->atom_max[l->n] = max;
  l->n++;
  return true;
}

static bool lin_axpy(lin *dst, const lin *src, int64_t k) {
  dst->c += k * src->c;
  for (int i = 0; i < src->n; i++)
    if (!lin_add_term(dst, src->atom[i], k * src->coef[i], src->atom_max[i])) return false;
  return true;
}

/* True and the constant difference a - b if the two forms differ by a constant. */
static bool lin_diff(const lin *a, const lin *b, int64_t *diff) {
  lin t = *a;
  if (!lin_axpy(&t, b, -1)) return false;
  for (int i = 0; i < t.n; i++)
    if (t.coef[i] != 0) return false;
  *diff = t.c;
  return true;
}

static LLVMValueRef lin_value(lw *L, const lin *l) {
  LLVMValueRef v = LLVMConstInt(L->i64, (unsigned long long)l->c, true);
  for (int i = 0; i < l->n; i++)
    if (l->coef[i] != 0)
      v = LLVMBuildAdd(L->b, v, LLVMBuildMul(L->b, l->atom[i], LLVMConstInt(L->i64, (unsigned long long)l->coef[i], true), ""), "");
  return v;
}

/* Range of a linear form over its atoms' ranges; false if an atom's range is unknown. */
static bool lin_range(const lin *l, int64_t *min, int64_t *max) {
  *min = *max = l->c;
  for (int i = 0; i < l->n; i++) {
    if (l->coef[i] == 0) continue;
    if (l->atom_max[i] < 0) return false;
    int64_t span = l->coef[i] * l->atom_max[i];
    if (span > 0) *max += span;
    else *min += span;
  }
  return true;
}

typedef struct {
  lw *L;
  int sid;           /* the target stage */
  ivl node[PC_MAX_NODES];
  bool done[PC_MAX_NODES];
} node_ctx;

static ivl node_interval(node_ctx *c, int n);

static ivl whole(int64_t extent) {
  ivl r = {0};
  r.ext = extent;
  r.ok = true;
  return r;
}

static ivl node_interval(node_ctx *c, int n) {
  if (c->done[n]) return c->node[n];
  lw *L = c->L;
  const pc_stage *st = &L->eff[c->sid];
  const pc_iter *it = &st->nodes[n];
  ivl r = whole(it->extent);
  if (L->leaf_set[c->sid][n]) {
    lw_ival v = L->leafv[c->sid][n];
    r = point_const(0);
    r.ok = lin_add_term(&r.lo, v.s, 1, it->extent - 1);
  } else if (it->n_children > 0) {
    r = point_const(0);
    int64_t stride = 1;
    for (int k = it->n_children - 1; k >= 0; k--) {
      ivl ch = node_interval(c, it->children[k]);
      if (!ch.ok || !lin_axpy(&r.lo, &ch.lo, stride)) {
        r = whole(it->extent);
        break;
      }
      r.ext += (ch.ext - 1) * stride;
      stride *= st->nodes[it->children[k]].extent;
    }
  } else if (it->fused_into >= 0) {
    ivl f = node_interval(c, it->fused_into);
    if (f.ok && f.ext == 1) {
      /* The fused loop is bound: this iterator is one opaque point. */
      lw_ival v = lw_node_value(L, c->sid, n);
      r = point_const(0);
      r.ok = lin_add_term(&r.lo, v.v ? v.v : v.s, 1, it->extent - 1);
      if (v.v) r = whole(it->extent);
    }
  }
  c->node[n] = r;
  c->done[n] = true;
  return r;
}

typedef struct {
  int op;
  ivl axis[PC_MAX_AXES];
} ienv;

typedef struct {
  int n;
  ivl dims[8][PC_MAX_DIMS];
} accesses;

static ivl expr_interval(lw *L, const pc_expr *e, const ienv *env) {
  ivl a, b, r = {0};
  switch (e->kind) {
  case PC_E_CONST_I: return point_const(e->ival);
  case PC_E_AXIS: return env->axis[e->axis];
  case PC_E_ADD:
  case PC_E_SUB:
    a = expr_interval(L, e->args[0], env);
    b = expr_interval(L, e->args[1], env);
    if (!a.ok || !b.ok) return r;
    r.lo = a.lo;
    r.ok = lin_axpy(&r.lo, &b.lo, e->kind == PC_E_ADD ? 1 : -1);
    if (e->kind == PC_E_SUB) r.lo.c -= b.ext - 1;
    r.ext = a.ext + b.ext - 1;
    return r;
  case PC_E_MUL: {
    const pc_expr *k = e->args[1], *x = e->args[0];
    if (x->kind == PC_E_CONST_I) k = e->args[0], x = e->args[1];
    if (k->kind != PC_E_CONST_I) return r;
    a = expr_interval(L, x, env);
    if (!a.ok) return r;
    int64_t m = k->ival;
    r.ok = lin_axpy(&r.lo, &a.lo, m);
    if (m < 0) r.lo.c += (a.ext - 1) * m;
    r.ext = (a.ext - 1) * (m < 0 ? -m : m) + 1;
    return r;
  }
  default: return r; /* non-linear: caller falls back to the whole dimension */
  }
}

static void collect(lw *L, const pc_expr *e, const ienv *env, int target_op, accesses *acc, bool *overflow) {
  if (e->kind == PC_E_LOAD) {
    int st = lw_op_stage(L, e->tensor);
    if (e->tensor == target_op) {
      if (acc->n == 8) {
        *overflow = true;
        return;
      }
      for (int i = 0; i < e->n_args; i++) acc->dims[acc->n][i] = expr_interval(L, e->args[i], env);
      acc->n++;
    } else if (st >= 0 && L->s->stages[st].at == PC_AT_INLINE) {
      ienv inner = {.op = e->tensor};
      for (int i = 0; i < e->n_args; i++) inner.axis[i] = expr_interval(L, e->args[i], env);
      collect(L, L->p->ops[e->tensor].body, &inner, target_op, acc, overflow);
    }
  }
  for (int i = 0; i < e->n_args; i++) collect(L, e->args[i], env, target_op, acc, overflow);
}

int lw_infer_region(lw *L, int sid, LLVMValueRef *origin, int64_t *extent, bool *need_guard) {
  const pc_stage *S = &L->s->stages[sid];
  const pc_op *op = &L->p->ops[S->op];
  int tid = S->attach_stage;
  const pc_op *top = &L->p->ops[L->s->stages[tid].op];
  node_ctx nc = {.L = L, .sid = tid};
  ienv env = {.op = L->s->stages[tid].op};
  const pc_stage *T = &L->eff[tid];
  for (int n = 0; n < T->n_nodes; n++) {
    if (T->nodes[n].rel != PC_REL_ROOT) continue;
    int a = T->nodes[n].root_axis;
    env.axis[a] = node_interval(&nc, n);
    /* A target that is itself attached iterates its region: add the region's origin. */
    LLVMValueRef o = a < top->ndim ? L->buf[L->s->stages[tid].op].origin[a] : NULL;
    if (o && env.axis[a].ok) env.axis[a].ok = lin_add_term(&env.axis[a].lo, o, 1, -1);
  }
  accesses acc = {0};
  bool overflow = false;
  collect(L, top->body, &env, S->op, &acc, &overflow);
  for (int d = 0; d < op->ndim; d++) {
    need_guard[d] = false;
    bool ok = acc.n > 0 && !overflow;
    int64_t lo_off = 0, hi_off = 0;
    for (int a = 0; ok && a < acc.n; a++) {
      ivl *v = &acc.dims[a][d];
      int64_t diff = 0;
      if (!v->ok || !lin_diff(&v->lo, &acc.dims[0][d].lo, &diff)) {
        ok = false;
        break;
      }
      if (a == 0 || diff < lo_off) lo_off = diff;
      if (a == 0 || diff + v->ext > hi_off) hi_off = diff + v->ext;
    }
    int64_t ext = hi_off - lo_off;
    if (!ok || ext >= op->shape[d]) {
      origin[d] = NULL;
      extent[d] = op->shape[d];
      continue;
    }
    lin lo = acc.dims[0][d].lo;
    lo.c += lo_off;
    int64_t mn, mx;
    need_guard[d] = !lin_range(&lo, &mn, &mx) || mn < 0 || mx + ext > op->shape[d];
    origin[d] = lin_value(L, &lo);
    extent[d] = ext;
  }
  return 0;
}

lw_ival lw_node_value(lw *L, int sid, int n) {
  if (L->leaf_set[sid][n]) return L->leafv[sid][n];
  const pc_stage *st = &L->eff[sid];
  const pc_iter *it = &st->nodes[n];
  if (it->n_children > 0) {
    lw_ival v = lw_const(L, 0);
    int64_t stride = 1;
    for (int k = it->n_children - 1; k >= 0; k--) {
      v = lw_add(L, v, lw_mul_const(L, lw_node_value(L, sid, it->children[k]), stride));
      stride *= st->nodes[it->children[k]].extent;
    }
    return v;
  }
  if (it->fused_into >= 0) {
    const pc_iter *f = &st->nodes[it->fused_into];
    int pos = 0;
    int64_t inner = 1;
    for (int k = 0; k < f->n_fused; k++)
      if (f->fused[k] == n) pos = k;
    for (int k = pos + 1; k < f->n_fused; k++) inner *= st->nodes[f->fused[k]].extent;
    lw_ival v = lw_floordiv_const(L, lw_node_value(L, sid, it->fused_into), inner);
    return pos == 0 ? v : lw_floormod_const(L, v, it->extent);
  }
  /* An undefined leaf: only reachable through a lowering bug; keep the IR valid. */
  return lw_const(L, 0);
}
