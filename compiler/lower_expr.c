/* Expression codegen: integer index arithmetic kept lane-affine (so a vectorized loop's
 * accesses become contiguous vector loads where the stride is 1 and gathers otherwise),
 * float arithmetic, conditions, masked loads under lane-varying selects, inlining. */
#include <stdio.h>
#include <string.h>

#include "lower_internal.h"

bool lw_ival_varies(lw_ival a) { return a.v != NULL || a.step != 0 || (a.period > 0 && a.qstep != 0); }
static bool varies(lw_ival a) { return lw_ival_varies(a); }
bool lw_ival_contiguous(lw_ival a) { return !a.v && a.step == 1 && a.period == 0; }

/* The periodic form with period p of a plain lane-affine value (lane l = s + step * l). */
static lw_ival with_period(lw_ival a, int64_t p) {
  if (a.period == 0 && !a.v) {
    a.period = p;
    a.qstep = a.step * p;
  }
  return a;
}

/* Back to the plain form where one step describes every lane. */
static lw_ival normalized(lw_ival a) {
  if (a.period > 0 && a.qstep == a.step * a.period) a.period = a.qstep = 0;
  return a;
}

/* Multiply-add pairs may fuse (fp-contract=fast, as TVM's LLVM targets set): a permission
 * each backend uses if it has FMA, so the IR stays target-neutral. */
LLVMValueRef lw_contract(LLVMValueRef inst) {
  if (LLVMIsAInstruction(inst)) LLVMSetFastMathFlags(inst, LLVMFastMathAllowContract);
  return inst;
}

LLVMValueRef lw_intrinsic(lw *L, const char *name, LLVMTypeRef *overloads, unsigned n_overloads,
                          LLVMValueRef *args, unsigned n) {
  unsigned id = LLVMLookupIntrinsicID(name, strlen(name));
  LLVMValueRef fn = LLVMGetIntrinsicDeclaration(L->mod, id, overloads, n_overloads);
  LLVMTypeRef ty = LLVMIntrinsicGetType(L->ctx, id, overloads, n_overloads);
  return LLVMBuildCall2(L->b, ty, fn, args, n, "");
}


/* Constants are kept as the last addend of an index (x + c), so accesses that differ by a
 * constant are visibly base + offset: alias analysis then separates the rows of a register
 * tile and the middle end keeps them in registers across a reduction loop. */
static void split_const(LLVMValueRef v, LLVMValueRef *rest, int64_t *c) {
  *rest = v;
  *c = 0;
  if (LLVMIsAConstantInt(v)) {
    *rest = NULL;
    *c = LLVMConstIntGetSExtValue(v);
    return;
  }
  if (LLVMIsAInstruction(v) && LLVMGetInstructionOpcode(v) == LLVMAdd && LLVMIsAConstantInt(LLVMGetOperand(v, 1))) {
    *rest = LLVMGetOperand(v, 0);
    *c = LLVMConstIntGetSExtValue(LLVMGetOperand(v, 1));
  }
}

static LLVMValueRef with_const(lw *L, LLVMValueRef rest, int64_t c) {
  LLVMValueRef k = LLVMConstInt(L->i64, (unsigned long long)c, true);
  if (!rest) return k;
  return c ? LLVMBuildAdd(L->b, rest, k, "") : rest;
}

/* a + sign * b with the constant parts of both summed into one trailing constant. */
static LLVMValueRef add_const_last(lw *L, LLVMValueRef a, LLVMValueRef b, int sign) {
  LLVMValueRef ra, rb;
  int64_t ca, cb;
  split_const(a, &ra, &ca);
  split_const(b, &rb, &cb);
  LLVMValueRef rest = ra;
  if (rb) rest = ra ? (sign > 0 ? LLVMBuildAdd(L->b, ra, rb, "") : LLVMBuildSub(L->b, ra, rb, ""))
                    : (sign > 0 ? rb : LLVMBuildNeg(L->b, rb, ""));
  return with_const(L, rest, ca + sign * cb);
}

/* Address of element `idx` of a float buffer, as base + variable part + constant part. */
static LLVMValueRef element_ptr(lw *L, LLVMValueRef base, LLVMValueRef idx) {
  LLVMValueRef rest;
  int64_t c;
  split_const(idx, &rest, &c);
  LLVMValueRef p = base;
  if (rest) p = LLVMBuildGEP2(L->b, L->f32, p, &rest, 1, "");
  if (c || !rest) {
    LLVMValueRef k = LLVMConstInt(L->i64, (unsigned long long)c, true);
    p = LLVMBuildGEP2(L->b, L->f32, p, &k, 1, "");
  }
  return p;
}

lw_ival lw_const(lw *L, int64_t v) {
  lw_ival r = {LLVMConstInt(L->i64, (unsigned long long)v, true), 0, NULL, v >= 0};
  return r;
}

static LLVMValueRef splat_i64(lw *L, LLVMValueRef s) {
  LLVMTypeRef vt = LLVMVectorType(L->i64, (unsigned)L->lanes);
  LLVMValueRef undef = LLVMGetPoison(vt);
  LLVMValueRef v = LLVMBuildInsertElement(L->b, undef, s, LLVMConstInt(LLVMInt32TypeInContext(L->ctx), 0, 0), "");
  return LLVMBuildShuffleVector(L->b, v, undef, LLVMConstNull(LLVMVectorType(LLVMInt32TypeInContext(L->ctx), (unsigned)L->lanes)), "");
}

LLVMValueRef lw_ival_vector(lw *L, lw_ival a) {
  if (a.v) return a.v;
  if (L->lanes == 1) return a.s;
  LLVMValueRef lanes[LW_MAX_LANES];
  for (int l = 0; l < L->lanes; l++) {
    int64_t off = a.period > 0 ? a.step * (l % a.period) + a.qstep * (l / a.period) : a.step * l;
    lanes[l] = LLVMConstInt(L->i64, (unsigned long long)off, true);
  }
  return LLVMBuildAdd(L->b, splat_i64(L, a.s), LLVMConstVector(lanes, (unsigned)L->lanes), "");
}

lw_ival lw_add(lw *L, lw_ival a, lw_ival b) {
  lw_ival r = {0};
  r.nonneg = a.nonneg && b.nonneg;
  if (a.v || b.v) {
    r.v = LLVMBuildAdd(L->b, lw_ival_vector(L, a), lw_ival_vector(L, b), "");
    return r;
  }
  if (a.period != b.period) {
    if (a.period > 0 && b.period > 0) {
      r.v = LLVMBuildAdd(L->b, lw_ival_vector(L, a), lw_ival_vector(L, b), "");
      return r;
    }
    a = with_period(a, b.period), b = with_period(b, a.period);
  }
  r.s = add_const_last(L, a.s, b.s, 1);
  r.step = a.step + b.step;
  r.period = a.period;
  r.qstep = a.qstep + b.qstep;
  return normalized(r);
}

static lw_ival lw_sub(lw *L, lw_ival a, lw_ival b) {
  lw_ival r = {0};
  if (a.v || b.v) {
    r.v = LLVMBuildSub(L->b, lw_ival_vector(L, a), lw_ival_vector(L, b), "");
    return r;
  }
  if (a.period != b.period) {
    if (a.period > 0 && b.period > 0) {
      r.v = LLVMBuildSub(L->b, lw_ival_vector(L, a), lw_ival_vector(L, b), "");
      return r;
    }
    a = with_period(a, b.period), b = with_period(b, a.period);
  }
  r.s = add_const_last(L, a.s, b.s, -1);
  r.step = a.step - b.step;
  r.period = a.period;
  r.qstep = a.qstep - b.qstep;
  return normalized(r);
}

lw_ival lw_mul_const(lw *L, lw_ival a, int64_t c) {
  lw_ival r = {0};
  r.nonneg = a.nonneg && c >= 0;
  LLVMValueRef k = LLVMConstInt(L->i64, (unsigned long long)c, true);
  if (a.v) {
    r.v = LLVMBuildMul(L->b, a.v, splat_i64(L, k), "");
    return r;
  }
  LLVMValueRef rest;
  int64_t off;
  split_const(a.s, &rest, &off);
  r.s = rest ? LLVMBuildMul(L->b, rest, k, "") : NULL;
  r.s = with_const(L, r.s, off * c);
  r.step = a.step * c;
  r.period = c ? a.period : 0;
  r.qstep = a.qstep * c;
  return normalized(r);
}

static LLVMValueRef const_like(lw *L, LLVMValueRef x, int64_t c) {
  LLVMValueRef k = LLVMConstInt(L->i64, (unsigned long long)c, true);
  return LLVMGetTypeKind(LLVMTypeOf(x)) == LLVMVectorTypeKind ? splat_i64(L, k) : k;
}

/* Floor division and modulo by a positive constant, as TVM's floordiv/floormod. */
static LLVMValueRef floordiv(lw *L, LLVMValueRef x, int64_t c, bool nonneg) {
  LLVMValueRef k = const_like(L, x, c);
  if (nonneg) return LLVMBuildUDiv(L->b, x, k, "");
  LLVMValueRef q = LLVMBuildSDiv(L->b, x, k, "");
  LLVMValueRef r = LLVMBuildSRem(L->b, x, k, "");
  LLVMValueRef neg = LLVMBuildICmp(L->b, LLVMIntSLT, r, const_like(L, x, 0), "");
  return LLVMBuildSub(L->b, q, LLVMBuildZExt(L->b, neg, LLVMTypeOf(x), ""), "");
}

static LLVMValueRef floormod(lw *L, LLVMValueRef x, int64_t c, bool nonneg) {
  LLVMValueRef k = const_like(L, x, c);
  if (nonneg) return LLVMBuildURem(L->b, x, k, "");
  LLVMValueRef r = LLVMBuildSRem(L->b, x, k, "");
  LLVMValueRef neg = LLVMBuildICmp(L->b, LLVMIntSLT, r, const_like(L, x, 0), "");
  return LLVMBuildAdd(L->b, r, LLVMBuildSelect(L->b, neg, k, const_like(L, x, 0), ""), "");
}

/* A fused vector loop's value, s + l with s a constant multiple of c, splits exactly into
 * quotient and remainder lanes when c divides the lane count (or covers it): the row and
 * column of a vectorized (y, x) tile stay lane-affine, so a row-major access through both
 * is again s' + l, one contiguous vector. */
static bool splits_evenly(const lw *L, lw_ival a, int64_t c, int64_t *s) {
  if (a.v || a.period != 0 || a.step != 1 || !LLVMIsAConstantInt(a.s)) return false;
  *s = LLVMConstIntGetSExtValue(a.s);
  return *s >= 0 && *s % c == 0 && (L->lanes % c == 0 || L->lanes <= c);
}

lw_ival lw_floordiv_const(lw *L, lw_ival a, int64_t c) {
  if (c == 1) return a;
  lw_ival r = {0};
  r.nonneg = a.nonneg;
  int64_t s0;
  if (L->lanes > 1 && splits_evenly(L, a, c, &s0)) {
    r.s = LLVMConstInt(L->i64, (unsigned long long)(s0 / c), true);
    if (L->lanes > c) r.period = c, r.qstep = 1;
    return r;
  }
  if (varies(a)) r.v = floordiv(L, lw_ival_vector(L, a), c, a.nonneg);
  else r.s = floordiv(L, a.s, c, a.nonneg);
  return r;
}

lw_ival lw_floormod_const(lw *L, lw_ival a, int64_t c) {
  lw_ival r = {0};
  r.nonneg = true;
  if (c == 1) return lw_const(L, 0);
  int64_t s0;
  if (L->lanes > 1 && splits_evenly(L, a, c, &s0)) {
    r.s = LLVMConstInt(L->i64, 0, true);
    r.step = 1;
    if (L->lanes > c) r.period = c;
    return r;
  }
  if (varies(a)) r.v = floormod(L, lw_ival_vector(L, a), c, a.nonneg);
  else r.s = floormod(L, a.s, c, a.nonneg);
  return r;
}

static int fail(lw *L, int err, const char *msg) {
  if (!L->err) L->err = pt_fail(L->d, err, "lowering %s: %s", L->name, msg);
  return L->err;
}

static bool const_int(const pc_expr *e, int64_t *v) {
  if (e->kind == PC_E_CONST_I) {
    *v = e->ival;
    return true;
  }
  return false;
}

lw_ival lw_eval_int(lw *L, const pc_expr *e, const lw_env *env) {
  int64_t c;
  switch (e->kind) {
  case PC_E_CONST_I: return lw_const(L, e->ival);
  case PC_E_AXIS: return env->axis[e->axis];
  case PC_E_ADD: return lw_add(L, lw_eval_int(L, e->args[0], env), lw_eval_int(L, e->args[1], env));
  case PC_E_SUB: return lw_sub(L, lw_eval_int(L, e->args[0], env), lw_eval_int(L, e->args[1], env));
  case PC_E_NEG: return lw_sub(L, lw_const(L, 0), lw_eval_int(L, e->args[0], env));
  case PC_E_MUL:
    if (const_int(e->args[1], &c)) return lw_mul_const(L, lw_eval_int(L, e->args[0], env), c);
    if (const_int(e->args[0], &c)) return lw_mul_const(L, lw_eval_int(L, e->args[1], env), c);
    {
      lw_ival a = lw_eval_int(L, e->args[0], env), b = lw_eval_int(L, e->args[1], env), r = {0};
      r.nonneg = a.nonneg && b.nonneg;
      if (varies(a) || varies(b)) r.v = LLVMBuildMul(L->b, lw_ival_vector(L, a), lw_ival_vector(L, b), "");
      else r.s = LLVMBuildMul(L->b, a.s, b.s, "");
      return r;
    }
  case PC_E_DIV:
  case PC_E_MOD:
    if (!const_int(e->args[1], &c) || c <= 0) {
      fail(L, PT_ERR_UNSUPPORTED, "integer / and % need a positive constant divisor");
      return lw_const(L, 0);
    }
    return e->kind == PC_E_DIV ? lw_floordiv_const(L, lw_eval_int(L, e->args[0], env), c)
                               : lw_floormod_const(L, lw_eval_int(L, e->args[0], env), c);
  case PC_E_MAX:
  case PC_E_MIN: {
    lw_ival a = lw_eval_int(L, e->args[0], env), b = lw_eval_int(L, e->args[1], env), r = {0};
    r.nonneg = e->kind == PC_E_MAX ? (a.nonneg || b.nonneg) : (a.nonneg && b.nonneg);
    bool vec = varies(a) || varies(b);
    LLVMValueRef x = vec ? lw_ival_vector(L, a) : a.s, y = vec ? lw_ival_vector(L, b) : b.s;
    LLVMValueRef gt = LLVMBuildICmp(L->b, LLVMIntSGT, x, y, "");
    LLVMValueRef m = e->kind == PC_E_MAX ? LLVMBuildSelect(L->b, gt, x, y, "") : LLVMBuildSelect(L->b, gt, y, x, "");
    if (vec) r.v = m;
    else r.s = m;
    return r;
  }
  case PC_E_SELECT: {
    lw_val cond = lw_eval_cond(L, e->args[0], env);
    lw_ival a = lw_eval_int(L, e->args[1], env), b = lw_eval_int(L, e->args[2], env), r = {0};
    bool vec = cond.vec || varies(a) || varies(b);
    LLVMValueRef x = vec ? lw_ival_vector(L, a) : a.s, y = vec ? lw_ival_vector(L, b) : b.s;
    LLVMValueRef cv = cond.x;
    if (vec && !cond.vec && L->lanes > 1) {
      LLVMTypeRef vt = LLVMVectorType(L->i1, (unsigned)L->lanes);
      cv = LLVMBuildInsertElement(L->b, LLVMGetPoison(vt), cond.x, LLVMConstInt(LLVMInt32TypeInContext(L->ctx), 0, 0), "");
      cv = LLVMBuildShuffleVector(L->b, cv, LLVMGetPoison(vt), LLVMConstNull(LLVMVectorType(LLVMInt32TypeInContext(L->ctx), (unsigned)L->lanes)), "");
    }
    LLVMValueRef m = LLVMBuildSelect(L->b, cv, x, y, "");
    r.nonneg = a.nonneg && b.nonneg;
    if (vec) r.v = m;
    else r.s = m;
    return r;
  }
  default:
    fail(L, PT_ERR_UNSUPPORTED, "unsupported integer expression");
    return lw_const(L, 0);
  }
}

lw_val lw_splat(lw *L, lw_val v) {
  if (v.vec || L->lanes == 1) return v;
  LLVMTypeRef vt = LLVMVectorType(LLVMTypeOf(v.x), (unsigned)L->lanes);
  LLVMValueRef x = LLVMBuildInsertElement(L->b, LLVMGetPoison(vt), v.x, LLVMConstInt(LLVMInt32TypeInContext(L->ctx), 0, 0), "");
  x = LLVMBuildShuffleVector(L->b, x, LLVMGetPoison(vt), LLVMConstNull(LLVMVectorType(LLVMInt32TypeInContext(L->ctx), (unsigned)L->lanes)), "");
  lw_val r = {x, true};
  return r;
}

LLVMValueRef lw_and_mask(lw *L, LLVMValueRef a, LLVMValueRef b) {
  if (!a) return b;
  if (!b) return a;
  return LLVMBuildAnd(L->b, a, b, "");
}

static LLVMIntPredicate icmp_pred(pc_expr_kind k) {
  switch (k) {
  case PC_E_LT: return LLVMIntSLT;
  case PC_E_LE: return LLVMIntSLE;
  case PC_E_GT: return LLVMIntSGT;
  case PC_E_GE: return LLVMIntSGE;
  case PC_E_EQ: return LLVMIntEQ;
  default: return LLVMIntNE;
  }
}

static LLVMRealPredicate fcmp_pred(pc_expr_kind k) {
  switch (k) {
  case PC_E_LT: return LLVMRealOLT;
  case PC_E_LE: return LLVMRealOLE;
  case PC_E_GT: return LLVMRealOGT;
  case PC_E_GE: return LLVMRealOGE;
  case PC_E_EQ: return LLVMRealOEQ;
  default: return LLVMRealUNE;
  }
}

lw_val lw_eval_cond(lw *L, const pc_expr *e, const lw_env *env) {
  lw_val r = {0};
  switch (e->kind) {
  case PC_E_AND:
  case PC_E_OR: {
    lw_val a = lw_eval_cond(L, e->args[0], env), b = lw_eval_cond(L, e->args[1], env);
    if (a.vec != b.vec) a = lw_splat(L, a), b = lw_splat(L, b);
    r.vec = a.vec;
    r.x = e->kind == PC_E_AND ? LLVMBuildAnd(L->b, a.x, b.x, "") : LLVMBuildOr(L->b, a.x, b.x, "");
    return r;
  }
  case PC_E_LT: case PC_E_LE: case PC_E_GT: case PC_E_GE: case PC_E_EQ: case PC_E_NE:
    if (e->args[0]->is_int && e->args[1]->is_int) {
      lw_ival a = lw_eval_int(L, e->args[0], env), b = lw_eval_int(L, e->args[1], env);
      r.vec = varies(a) || varies(b);
      LLVMValueRef x = r.vec ? lw_ival_vector(L, a) : a.s, y = r.vec ? lw_ival_vector(L, b) : b.s;
      r.x = LLVMBuildICmp(L->b, icmp_pred(e->kind), x, y, "");
      if (L->lanes == 1) r.vec = false;
      return r;
    } else {
      lw_val a = lw_eval(L, e->args[0], env), b = lw_eval(L, e->args[1], env);
      if (a.vec != b.vec) a = lw_splat(L, a), b = lw_splat(L, b);
      r.vec = a.vec;
      r.x = LLVMBuildFCmp(L->b, fcmp_pred(e->kind), a.x, b.x, "");
      return r;
    }
  default: {
    /* A non-comparison used as a condition: non-zero is true. */
    if (e->is_int) {
      lw_ival a = lw_eval_int(L, e, env);
      r.vec = varies(a) && L->lanes > 1;
      LLVMValueRef x = r.vec ? lw_ival_vector(L, a) : a.s;
      r.x = LLVMBuildICmp(L->b, LLVMIntNE, x, const_like(L, x, 0), "");
      return r;
    }
    lw_val a = lw_eval(L, e, env);
    r.vec = a.vec;
    r.x = LLVMBuildFCmp(L->b, LLVMRealUNE, a.x, LLVMConstNull(LLVMTypeOf(a.x)), "");
    return r;
  }
  }
}

int lw_op_stage(const lw *L, int op) {
  for (int i = 0; i < L->s->n_stages; i++)
    if (L->s->stages[i].op == op) return i;
  return -1;
}

lw_ival lw_flat_index(lw *L, int op, const lw_ival *coords) {
  const lw_buffer *bf = &L->buf[op];
  lw_ival flat = lw_const(L, 0);
  for (int d = bf->ndim - 1; d >= 0; d--) {
    lw_ival c = coords[d];
    if (bf->origin[d]) {
      lw_ival o = {bf->origin[d], 0, NULL, false};
      c = lw_sub(L, c, o);
      c.nonneg = true; /* coordinates inside the region are >= its origin */
    }
    flat = lw_add(L, flat, lw_mul_const(L, c, bf->stride[d]));
  }
  return flat;
}

static LLVMValueRef all_true(lw *L) {
  LLVMTypeRef vt = LLVMVectorType(L->i1, (unsigned)L->lanes);
  return LLVMConstAllOnes(vt);
}

lw_val lw_load(lw *L, int op, lw_ival flat) {
  LLVMValueRef base = L->buf[op].base;
  lw_val r = {0};
  if (L->lanes == 1 || (!varies(flat) && !L->mask)) {
    LLVMValueRef ptr = element_ptr(L, base, flat.s);
    r.x = LLVMBuildLoad2(L->b, L->f32, ptr, "");
    LLVMSetAlignment(r.x, 4);
    lw_tag_access(L, op, r.x);
    return r;
  }
  LLVMTypeRef vt = LLVMVectorType(L->f32, (unsigned)L->lanes);
  LLVMValueRef align = LLVMConstInt(LLVMInt32TypeInContext(L->ctx), 4, 0);
  r.vec = true;
  if (lw_ival_contiguous(flat)) {
    LLVMValueRef ptr = element_ptr(L, base, flat.s);
    if (!L->mask) {
      r.x = LLVMBuildLoad2(L->b, vt, ptr, "");
      LLVMSetAlignment(r.x, 4);
      lw_tag_access(L, op, r.x);
      return r;
    }
    LLVMTypeRef ov[2] = {vt, L->ptr};
    LLVMValueRef args[4] = {ptr, align, L->mask, LLVMConstNull(vt)};
    r.x = lw_intrinsic(L, "llvm.masked.load", ov, 2, args, 4);
    lw_tag_access(L, op, r.x);
    return r;
  }
  LLVMValueRef idx = lw_ival_vector(L, flat);
  LLVMValueRef ptrs = LLVMBuildGEP2(L->b, L->f32, base, &idx, 1, "");
  LLVMTypeRef ov[2] = {vt, LLVMTypeOf(ptrs)};
  LLVMValueRef args[4] = {ptrs, align, L->mask ? L->mask : all_true(L), LLVMConstNull(vt)};
  r.x = lw_intrinsic(L, "llvm.masked.gather", ov, 2, args, 4);
  lw_tag_access(L, op, r.x);
  return r;
}

void lw_store(lw *L, int op, lw_ival flat, lw_val v) {
  LLVMValueRef base = L->buf[op].base;
  if (L->lanes == 1) {
    LLVMValueRef ptr = element_ptr(L, base, flat.s);
    LLVMValueRef st = LLVMBuildStore(L->b, v.x, ptr);
    LLVMSetAlignment(st, 4);
    lw_tag_access(L, op, st);
    return;
  }
  if (!varies(flat)) {
    fail(L, PT_ERR_UNSUPPORTED, "a vectorized loop does not index the stage's output");
    return;
  }
  v = lw_splat(L, v);
  LLVMTypeRef vt = LLVMVectorType(L->f32, (unsigned)L->lanes);
  LLVMValueRef align = LLVMConstInt(LLVMInt32TypeInContext(L->ctx), 4, 0);
  if (lw_ival_contiguous(flat)) {
    LLVMValueRef ptr = element_ptr(L, base, flat.s);
    if (!L->mask) {
      LLVMValueRef st = LLVMBuildStore(L->b, v.x, ptr);
      LLVMSetAlignment(st, 4);
      lw_tag_access(L, op, st);
      return;
    }
    LLVMTypeRef ov[2] = {vt, L->ptr};
    LLVMValueRef args[4] = {v.x, ptr, align, L->mask};
    lw_tag_access(L, op, lw_intrinsic(L, "llvm.masked.store", ov, 2, args, 4));
    return;
  }
  LLVMValueRef idx = lw_ival_vector(L, flat);
  LLVMValueRef ptrs = LLVMBuildGEP2(L->b, L->f32, base, &idx, 1, "");
  LLVMTypeRef ov[2] = {vt, LLVMTypeOf(ptrs)};
  LLVMValueRef args[4] = {v.x, ptrs, align, L->mask ? L->mask : all_true(L)};
  lw_tag_access(L, op, lw_intrinsic(L, "llvm.masked.scatter", ov, 2, args, 4));
}

static bool has_load(const pc_expr *e) {
  if (e->kind == PC_E_LOAD) return true;
  for (int i = 0; i < e->n_args; i++)
    if (has_load(e->args[i])) return true;
  return false;
}

static lw_val float_of_int(lw *L, lw_ival a) {
  lw_val r = {0};
  r.vec = varies(a) && L->lanes > 1;
  LLVMValueRef x = r.vec ? lw_ival_vector(L, a) : a.s;
  r.x = LLVMBuildSIToFP(L->b, x, r.vec ? LLVMVectorType(L->f32, (unsigned)L->lanes) : L->f32, "");
  return r;
}

static lw_val eval_load(lw *L, const pc_expr *e, const lw_env *env) {
  int op = e->tensor;
  lw_ival idx[PC_MAX_DIMS];
  for (int i = 0; i < e->n_args; i++) idx[i] = lw_eval_int(L, e->args[i], env);
  int st = lw_op_stage(L, op);
  if (st >= 0 && L->s->stages[st].at == PC_AT_INLINE) {
    /* compute_inline: evaluate the producer's body at these coordinates. */
    lw_env inner = {.op = op};
    for (int i = 0; i < e->n_args; i++) inner.axis[i] = idx[i];
    return lw_eval(L, L->p->ops[op].body, &inner);
  }
  if (!L->buf[op].base) {
    fail(L, PT_ERR_INVALID, "a stage reads a tensor that has no storage here");
    lw_val z = {LLVMConstReal(L->f32, 0), false};
    return z;
  }
  return lw_load(L, op, lw_flat_index(L, op, idx));
}

/* select with a uniform condition whose branches load: branch, so that the untaken side's
 * (possibly out-of-bounds) load never executes. */
static lw_val select_branch(lw *L, LLVMValueRef cond, const pc_expr *t, const pc_expr *f, const lw_env *env) {
  LLVMBasicBlockRef bt = LLVMAppendBasicBlockInContext(L->ctx, L->fn, "sel.t");
  LLVMBasicBlockRef bf = LLVMAppendBasicBlockInContext(L->ctx, L->fn, "sel.f");
  LLVMBasicBlockRef bj = LLVMAppendBasicBlockInContext(L->ctx, L->fn, "sel.j");
  LLVMBuildCondBr(L->b, cond, bt, bf);
  LLVMPositionBuilderAtEnd(L->b, bt);
  lw_val a = lw_splat(L, lw_eval(L, t, env));
  LLVMBasicBlockRef et = LLVMGetInsertBlock(L->b);
  LLVMBuildBr(L->b, bj);
  LLVMPositionBuilderAtEnd(L->b, bf);
  lw_val c = lw_splat(L, lw_eval(L, f, env));
  LLVMBasicBlockRef ef = LLVMGetInsertBlock(L->b);
  LLVMBuildBr(L->b, bj);
  LLVMPositionBuilderAtEnd(L->b, bj);
  LLVMValueRef phi = LLVMBuildPhi(L->b, LLVMTypeOf(a.x), "");
  LLVMValueRef vals[2] = {a.x, c.x};
  LLVMBasicBlockRef blocks[2] = {et, ef};
  LLVMAddIncoming(phi, vals, blocks, 2);
  lw_val r = {phi, a.vec};
  return r;
}

lw_val lw_eval(lw *L, const pc_expr *e, const lw_env *env) {
  lw_val r = {0};
  if (L->err) {
    r.x = LLVMConstReal(L->f32, 0);
    return r;
  }
  if (e->is_int) return float_of_int(L, lw_eval_int(L, e, env));
  switch (e->kind) {
  case PC_E_CONST_F: r.x = LLVMConstReal(L->f32, e->fval); return r;
  case PC_E_LOAD: return eval_load(L, e, env);
  case PC_E_CAST_F: return float_of_int(L, lw_eval_int(L, e->args[0], env));
  case PC_E_NEG: {
    lw_val a = lw_eval(L, e->args[0], env);
    a.x = LLVMBuildFNeg(L->b, a.x, "");
    return a;
  }
  case PC_E_EXP:
  case PC_E_SQRT: {
    lw_val a = lw_eval(L, e->args[0], env);
    LLVMTypeRef ty = LLVMTypeOf(a.x);
    a.x = lw_intrinsic(L, e->kind == PC_E_EXP ? "llvm.exp" : "llvm.sqrt", &ty, 1, &a.x, 1);
    return a;
  }
  case PC_E_ADD: case PC_E_SUB: case PC_E_MUL: case PC_E_DIV: case PC_E_MAX: case PC_E_MIN: {
    lw_val a = lw_eval(L, e->args[0], env), b = lw_eval(L, e->args[1], env);
    if (a.vec != b.vec) a = lw_splat(L, a), b = lw_splat(L, b);
    r.vec = a.vec;
    switch (e->kind) {
    case PC_E_ADD: r.x = lw_contract(LLVMBuildFAdd(L->b, a.x, b.x, "")); break;
    case PC_E_SUB: r.x = lw_contract(LLVMBuildFSub(L->b, a.x, b.x, "")); break;
    case PC_E_MUL: r.x = lw_contract(LLVMBuildFMul(L->b, a.x, b.x, "")); break;
    case PC_E_DIV: r.x = LLVMBuildFDiv(L->b, a.x, b.x, ""); break;
    default: {
      LLVMTypeRef ty = LLVMTypeOf(a.x);
      LLVMValueRef args[2] = {a.x, b.x};
      r.x = lw_intrinsic(L, e->kind == PC_E_MAX ? "llvm.maxnum" : "llvm.minnum", &ty, 1, args, 2);
    }
    }
    return r;
  }
  case PC_E_SELECT: {
    lw_val c = lw_eval_cond(L, e->args[0], env);
    bool loads = has_load(e->args[1]) || has_load(e->args[2]);
    if (!c.vec) {
      if (loads) return select_branch(L, c.x, e->args[1], e->args[2], env);
      lw_val a = lw_eval(L, e->args[1], env), b = lw_eval(L, e->args[2], env);
      if (a.vec != b.vec) a = lw_splat(L, a), b = lw_splat(L, b);
      r.vec = a.vec;
      r.x = LLVMBuildSelect(L->b, c.x, a.x, b.x, "");
      return r;
    }
    /* Lane-varying condition: each side loads only in the lanes that take it. */
    LLVMValueRef saved = L->mask;
    L->mask = lw_and_mask(L, saved, c.x);
    lw_val a = lw_splat(L, lw_eval(L, e->args[1], env));
    L->mask = lw_and_mask(L, saved, LLVMBuildNot(L->b, c.x, ""));
    lw_val b = lw_splat(L, lw_eval(L, e->args[2], env));
    L->mask = saved;
    r.vec = true;
    r.x = LLVMBuildSelect(L->b, c.x, a.x, b.x, "");
    return r;
  }
  default:
    if (e->kind >= PC_E_LT && e->kind <= PC_E_OR) {
      lw_val c = lw_eval_cond(L, e, env);
      r.vec = c.vec;
      r.x = LLVMBuildUIToFP(L->b, c.x, c.vec ? LLVMVectorType(L->f32, (unsigned)L->lanes) : L->f32, "");
      return r;
    }
    fail(L, PT_ERR_UNSUPPORTED, "unsupported float expression");
    r.x = LLVMConstReal(L->f32, 0);
    return r;
  }
}
