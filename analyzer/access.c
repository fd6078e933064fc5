/* Static address analysis of memory accesses: for each load and store (masked ones too, and the
 * first lane of a gather or scatter whose pointer vector is a base plus a splat and a constant
 * vector: analyzer/lanes.c) the byte stride of its address per iteration of each enclosing loop, innermost first, when the
 * address is affine in the loops' induction variables (getelementptr indices built from adds,
 * multiplies and shifts by constants, casts, and header phis stepping by a constant or taking
 * an affine value of the loop around: a derived induction), or splits such a value (a fused or
 * parallel loop's indices: a mask of one run of bits, urem, udiv or lshr by a constant: the step
 * between wraps, and the period after which the wrapping terms are back, so that a walk whose
 * lines come back only when a fused index wraps is told from one that never comes back); and its constant byte
 * offset from the object it is based on at the loops' first iterations, so that accesses of one
 * object walked alike (an unrolled loop's rows) are told apart. The predictor's memory model
 * reads them for what reuse distances cannot show: set conflicts of power-of-two strides and
 * page-crossing (TLB) walks. No run is needed. */
#include <stdlib.h>
#include <string.h>

#include <llvm-c/Target.h>

#include "internal.h"

#define MAX_DEPTH 40     /* expression depth followed; deeper is "not affine" */
#define MAX_VISITS 4096  /* values visited per address: a DAG of shared operands (add %x, %x ...)
                            would otherwise cost 2^depth; beyond it the address is "not affine" */
#define MAX_PERIOD ((int64_t)1 << 30) /* iterations; a longer common period is "not followed" */

typedef struct {
  const pa_function *f;
  pa_ptrmap *bbmap; /* LLVM block -> index */
  LLVMTargetDataRef td;
  int n_loops;
  int64_t *coef;   /* scratch per loop: bytes (or units) per iteration */
  bool *bad;       /* scratch per loop: the value varies in that loop in a way not followed */
  /* scratch per loop, for values that wrap in it (wrapped_step): the iterations after which
   * every wrapping term is back (0: none wraps; -1: not followed), and the bytes (units) the
   * value moves over that many iterations beyond period x coef */
  int64_t *period, *jump;
  /* The value at the loops' first iterations: offset + the sum of symbolic terms (values the
   * walk does not look into: the object's pointer, a parallel body's chunk start), kept as a
   * linear hash so that two addresses with the same terms compare by their offsets alone. */
  int64_t offset;
  uint64_t symbolic;
  bool offset_bad; /* some part of the value is not followed: no offset */
  int visits;      /* left for the current address */
  LLVMValueRef deriving[8]; /* header phis whose latch value is being walked (no recursion) */
  int n_deriving;
} walker;

/* A value the walk does not look into, as a symbolic term of scale x (its hash). */
static void add_symbolic(walker *w, LLVMValueRef v, int64_t scale) {
  uint64_t h = (uint64_t)(uintptr_t)v * 0x9e3779b97f4a7c15ull;
  w->symbolic += (h ^ (h >> 29)) * (uint64_t)scale; /* linear in scale: +x - x cancels */
}

/* Every loop containing the block of instruction v gets `bad`, and the offset is lost. */
static void mark_bad(walker *w, LLVMValueRef v) {
  w->offset_bad = true;
  if (!LLVMIsAInstruction(v)) return;
  int b = pa_ptrmap_get(w->bbmap, LLVMGetInstructionParent(v));
  for (int l = b >= 0 ? w->f->blocks[b].loop : -1; l >= 0; l = w->f->loops[l].parent) w->bad[l] = true;
}

/* The loop whose header holds phi v, or -1. */
static int header_loop(walker *w, LLVMValueRef v) {
  int b = pa_ptrmap_get(w->bbmap, LLVMGetInstructionParent(v));
  for (int l = 0; b >= 0 && l < w->f->n_loops; l++)
    if (w->f->loops[l].header == b) return l;
  return -1;
}

/* A header phi's value entering loop L (from outside it) and around it (from a latch); false
 * when the entering values differ, *next NULL when the latches' values differ. */
static bool header_phi_values(walker *w, LLVMValueRef phi, const pa_loop *L, LLVMValueRef *start, LLVMValueRef *next) {
  *start = *next = NULL;
  bool next_ok = true;
  int n_in = (int)LLVMCountIncoming(phi);
  for (int j = 0; j < n_in; j++) {
    int from = pa_ptrmap_get(w->bbmap, LLVMGetIncomingBlock(phi, (unsigned)j));
    bool latch = false;
    for (int q = 0; q < L->n_latches; q++) latch |= L->latches[q] == from;
    LLVMValueRef x = LLVMGetIncomingValue(phi, (unsigned)j);
    if (latch) {
      next_ok &= !*next || *next == x;
      *next = x;
    } else {
      if (*start && *start != x) return false;
      *start = x;
    }
  }
  if (!next_ok) *next = NULL;
  return true;
}

static void affine(walker *w, LLVMValueRef v, int64_t scale, int depth);

/* What a walk of one value found: its coefficients per loop (which loops it fails in) and its
 * value at the loops' first iterations. */
typedef struct {
  int64_t *coef;
  bool *bad;
  int64_t *period, *jump;
  int64_t offset;
  uint64_t symbolic;
  bool offset_bad;
} sub_walk;

/* Walks x alone into scratch of its own (*r; sub_walk_free releases it), w's state untouched. */
static void sub_walk_run(walker *w, LLVMValueRef x, int depth, sub_walk *r) {
  int64_t *coef = w->coef, *period = w->period, *jump = w->jump, offset = w->offset;
  bool *bad = w->bad, offset_bad = w->offset_bad;
  uint64_t symbolic = w->symbolic;
  w->coef = calloc((size_t)w->n_loops, 3 * sizeof(int64_t));
  w->period = w->coef + w->n_loops, w->jump = w->period + w->n_loops;
  w->bad = calloc((size_t)w->n_loops, sizeof(bool));
  w->offset = 0, w->symbolic = 0, w->offset_bad = false;
  affine(w, x, 1, depth + 1);
  *r = (sub_walk){w->coef, w->bad, w->period, w->jump, w->offset, w->symbolic, w->offset_bad};
  w->coef = coef, w->period = period, w->jump = jump, w->bad = bad, w->offset = offset, w->symbolic = symbolic,
  w->offset_bad = offset_bad;
}

static void sub_walk_free(sub_walk *r) { free(r->coef), free(r->bad); }

/* Adds to loop l's wrap a term that is back where it was after p iterations (-1: not
 * followed), having moved j beyond p x its step: the common period is the least multiple. */
static void add_wrap(walker *w, int l, int64_t p, int64_t j) {
  if (w->period[l] < 0) return;
  if (p < 0) {
    w->period[l] = -1;
    return;
  }
  if (w->period[l] == 0) {
    w->period[l] = p, w->jump[l] = j;
    return;
  }
  int64_t lcm = w->period[l] / pt_gcd64(w->period[l], p) * p;
  if (lcm > MAX_PERIOD) {
    w->period[l] = -1;
    return;
  }
  w->jump[l] = w->jump[l] * (lcm / w->period[l]) + j * (lcm / p);
  w->period[l] = lcm;
}

/* Adds scale x a sub-walk's wraps to w (a value built from wrapping terms, walked alone). */
static void add_sub_wraps(walker *w, const sub_walk *r, int64_t scale) {
  for (int l = 0; l < w->n_loops; l++)
    if (r->period[l] != 0) add_wrap(w, l, r->period[l], r->period[l] < 0 ? 0 : scale * r->jump[l]);
}

/* How a fused loop's index is split: x mod m (its bits below m when m = 2^b, which may also
 * clear the bits below `unit`), x with its bits below m = 2^b cleared (m x (x / m)), or x / m. */
typedef enum { SPLIT_LOW, SPLIT_HIGH, SPLIT_QUOTIENT } split_kind;

/* A split of an x that moves by c per iteration of a loop: the step that all iterations but the
 * wrapping ones see (`and %f, 511` or `urem %f, 72` for j moves as f, `and %f, -512` or `udiv
 * %f, 72` for i does not), which is what a fused loop's split index does. *period gets the
 * iterations after which the split is back where it was plus that many steps (m / gcd(m, |c|);
 * 0 when it never wraps) and *jump what it moved over them beyond period x step. A low split
 * that clears the bits below `unit` (`and %4f, 508`) needs c a multiple of it. *ok false when
 * the steps themselves vary. */
static int64_t wrapped_step(int64_t c, int64_t m, int64_t unit, split_kind kind, int64_t *period, int64_t *jump, bool *ok) {
  int64_t a = c < 0 ? -c : c;
  *ok = true, *period = *jump = 0;
  if (a % m == 0) return kind == SPLIT_LOW ? 0 : kind == SPLIT_HIGH ? c : c / m;
  if (a < m && (kind != SPLIT_LOW || a % unit == 0)) {
    *period = m / pt_gcd64(m, a);
    /* over the period the low part comes back (moved 0), the high part moved period x c */
    *jump = kind == SPLIT_LOW ? -*period * c : kind == SPLIT_HIGH ? *period * c : *period * c / m;
    return kind == SPLIT_LOW ? c : 0;
  }
  *ok = false;
  return 0;
}

/* The split of a constant first value x (the IR's unsigned arithmetic). */
static int64_t split_value(int64_t x, int64_t m, int64_t unit, split_kind kind) {
  uint64_t u = (uint64_t)x, um = (uint64_t)m;
  if (kind == SPLIT_LOW) return (int64_t)(u % um / (uint64_t)unit * (uint64_t)unit);
  return kind == SPLIT_HIGH ? (int64_t)(u / um * um) : (int64_t)(u / um);
}

/* The wrap of a split of x in loop l when x wraps there itself (r: x's walk; own_period: the
 * split's own wrap of x's steps). x moving in whole multiples of m, steps and jumps, keeps its
 * period; a staircase (x still between its jumps, as `lshr %f, 5` is) splits at a multiple of
 * its period: after m / gcd(m, jump) jumps it has moved a multiple of m (`and (lshr %f, 5), -32`
 * moves 32 every 1024 iterations). Anything else: a period not followed. */
static void add_split_wrap(walker *w, int l, const sub_walk *r, int64_t m, int64_t unit, split_kind kind, int64_t own_period, int64_t scale) {
  int64_t p = r->period[l], c = r->coef[l], j = r->jump[l], aj = j < 0 ? -j : j;
  if (p < 0 || own_period != 0) return add_wrap(w, l, -1, 0);
  int64_t times = 0; /* x's periods after which it has moved a multiple of m */
  if (c % m == 0 && j % m == 0) times = 1;
  else if (c == 0 && aj < m && (kind != SPLIT_LOW || aj % unit == 0)) times = m / pt_gcd64(m, aj);
  if (times == 0 || p > MAX_PERIOD / times) return add_wrap(w, l, -1, 0);
  /* over times x p iterations x moved times x (p c + j) beyond them, a multiple of m: the low
   * part is back, the high part moved as x, the quotient by that over m */
  int64_t moved = times * (p * c + j), step = kind == SPLIT_LOW ? 0 : kind == SPLIT_HIGH ? c : c / m;
  int64_t over = kind == SPLIT_LOW ? 0 : kind == SPLIT_HIGH ? moved : moved / m;
  add_wrap(w, l, times * p, scale * (over - times * p * step));
}

/* Adds scale x wrapped_step(coefficients of x) to w, with its wraps, and scale x the split of
 * x's first value to its offset when that value is a constant; else the split value v itself is
 * a symbolic term (a parallel body's fused index starts at its chunk: the same term in all its
 * accesses). A split of a value that itself wraps in a loop wraps there at a period not
 * followed. */
static void affine_wrapped(walker *w, LLVMValueRef v, LLVMValueRef x, int64_t m, int64_t unit, split_kind kind, int64_t scale, int depth) {
  sub_walk r;
  sub_walk_run(w, x, depth, &r);
  for (int l = 0; l < w->n_loops; l++) {
    bool ok = !r.bad[l];
    int64_t period = 0, jump = 0;
    int64_t step = ok ? wrapped_step(r.coef[l], m, unit, kind, &period, &jump, &ok) : 0;
    if (!ok) {
      w->bad[l] = true;
      continue;
    }
    w->coef[l] += scale * step;
    if (r.period[l] != 0) add_split_wrap(w, l, &r, m, unit, kind, period, scale);
    if (period != 0) add_wrap(w, l, period, scale * jump);
  }
  if (r.offset_bad) w->offset_bad = true;
  else if (r.symbolic != 0) add_symbolic(w, v, scale);
  else w->offset += scale * split_value(r.offset, m, unit, kind);
  sub_walk_free(&r);
}

/* `and x, mask` where the mask's bits are one run from bit a: up to bit b < 40, a low split
 * (x mod 2^b, bits below 2^a cleared); to bit 40 or beyond (an index never reaches 2^40 bytes,
 * and LLVM stops the run where x's top bits are known zero: `and (lshr %f, 5), 0x7ffffffffffffe0`),
 * x with its bits below 2^a cleared. False for any other mask. */
static bool affine_masked(walker *w, LLVMValueRef v, LLVMValueRef x, uint64_t mask, int64_t scale, int depth) {
  if (mask == 0) return true; /* always 0: invariant */
  uint64_t unit = mask & (~mask + 1), top = mask + unit; /* top: 2^b, or 0 past bit 63 */
  if ((top & (top - 1)) != 0) return false;             /* more than one run of bits */
  if (top == 0 || top >= (uint64_t)1 << 40) affine_wrapped(w, v, x, (int64_t)unit, 1, SPLIT_HIGH, scale, depth);
  else affine_wrapped(w, v, x, (int64_t)top, (int64_t)unit, SPLIT_LOW, scale, depth);
  return true;
}

static bool encloses(const pa_function *f, int outer, int l) {
  for (; l >= 0; l = f->loops[l].parent)
    if (l == outer) return true;
  return false;
}

/* A header phi of loop l whose latch value is affine in l's other inductions (an unrolled
 * loop's index recomputed from the counter: %n = mul (%k + 1), 5): from the second iteration on
 * the phi is that value one iteration late, so it moves as the latch value does, and its first
 * value is the latch value's less one step of l. False (nothing added) when the latch value
 * does not follow, depends on the phi itself, or moves in a loop that does not enclose l. */
static bool derived_induction(walker *w, LLVMValueRef phi, LLVMValueRef next, int l, int64_t scale, int depth) {
  for (int k = 0; k < w->n_deriving; k++)
    if (w->deriving[k] == phi) return false;
  if (w->n_deriving == (int)PT_ARRAY_LEN(w->deriving)) return false;
  w->deriving[w->n_deriving++] = phi;
  sub_walk r;
  sub_walk_run(w, next, depth, &r);
  w->n_deriving--;
  bool ok = !r.bad[l];
  for (int m = 0; m < w->n_loops && ok; m++)
    if (!encloses(w->f, m, l)) ok = !r.bad[m] && r.coef[m] == 0;
  if (ok) {
    for (int m = 0; m < w->n_loops; m++) {
      if (r.bad[m]) w->bad[m] = true;
      else w->coef[m] += scale * r.coef[m];
    }
    add_sub_wraps(w, &r, scale);
    if (r.offset_bad) w->offset_bad = true;
    w->offset += scale * (r.offset - r.coef[l]);
    w->symbolic += r.symbolic * (uint64_t)scale;
  }
  sub_walk_free(&r);
  return ok;
}

/* A header phi: its value entering the loop (the preheader's incoming) plus step per
 * iteration, when the latch's incoming value is the phi plus a constant (integer add or a
 * getelementptr of the phi with constant indices), or a derived induction. */
static void induction(walker *w, LLVMValueRef phi, int l, int64_t scale, int depth) {
  LLVMValueRef start, next;
  if (!header_phi_values(w, phi, &w->f->loops[l], &start, &next) || !next || !start) return mark_bad(w, phi);
  int64_t step = 0;
  if (pa_as_increment(next, &step) == phi) {
  } else if (LLVMIsAGetElementPtrInst(next) && LLVMGetOperand(next, 0) == phi) {
    /* the phi walks a pointer: the stride is the constant offset of the increment */
    LLVMTypeRef t = LLVMGetGEPSourceElementType(next);
    int nops = LLVMGetNumOperands(next);
    for (int k = 1; k < nops; k++) {
      LLVMValueRef idx = LLVMGetOperand(next, (unsigned)k);
      if (!LLVMIsAConstantInt(idx)) return mark_bad(w, phi);
      int64_t c = LLVMConstIntGetSExtValue(idx);
      if (k == 1) step += c * (int64_t)LLVMABISizeOfType(w->td, t);
      else if (LLVMGetTypeKind(t) == LLVMStructTypeKind) {
        step += (int64_t)LLVMOffsetOfElement(w->td, t, (unsigned)c);
        t = LLVMStructGetTypeAtIndex(t, (unsigned)c);
        continue;
      } else {
        t = LLVMGetElementType(t);
        step += c * (int64_t)LLVMABISizeOfType(w->td, t);
      }
    }
  } else {
    if (!derived_induction(w, phi, next, l, scale, depth)) mark_bad(w, phi);
    return;
  }
  w->coef[l] += scale * step;
  affine(w, start, scale, depth + 1); /* how the start moves with the enclosing loops */
}

/* A value defined outside every loop (or a constant): only its part of the first value,
 * through the same linear operations as affine; anything else is a symbolic term. */
static void invariant(walker *w, LLVMValueRef v, int64_t scale, int depth) {
  if (!v || scale == 0) return;
  if (LLVMIsAConstantInt(v)) {
    if (LLVMGetIntTypeWidth(LLVMTypeOf(v)) <= 64) w->offset += scale * LLVMConstIntGetSExtValue(v);
    else w->offset_bad = true;
    return;
  }
  if (!LLVMIsAInstruction(v) || depth > MAX_DEPTH || --w->visits < 0) return add_symbolic(w, v, scale);
  LLVMValueRef a = LLVMGetNumOperands(v) > 0 ? LLVMGetOperand(v, 0) : NULL;
  LLVMValueRef c = LLVMGetNumOperands(v) > 1 ? LLVMGetOperand(v, 1) : NULL;
  switch (LLVMGetInstructionOpcode(v)) {
  case LLVMOr: /* `or disjoint` is an add */
  case LLVMAdd:
    if (LLVMGetInstructionOpcode(v) == LLVMOr && !LLVMGetIsDisjoint(v)) break;
    invariant(w, a, scale, depth + 1);
    invariant(w, c, scale, depth + 1);
    return;
  case LLVMSub:
    invariant(w, a, scale, depth + 1);
    invariant(w, c, -scale, depth + 1);
    return;
  case LLVMMul:
    if (LLVMIsAConstantInt(c)) return invariant(w, a, scale * LLVMConstIntGetSExtValue(c), depth + 1);
    break;
  case LLVMShl:
    if (LLVMIsAConstantInt(c) && LLVMConstIntGetZExtValue(c) < 40)
      return invariant(w, a, scale * ((int64_t)1 << LLVMConstIntGetZExtValue(c)), depth + 1);
    break;
  case LLVMSExt:
  case LLVMZExt:
  case LLVMTrunc:
  case LLVMBitCast:
  case LLVMFreeze:
    return invariant(w, a, scale, depth + 1);
  case LLVMGetElementPtr: {
    LLVMTypeRef t = LLVMGetGEPSourceElementType(v);
    int nops = LLVMGetNumOperands(v);
    int64_t offset = w->offset;
    uint64_t symbolic = w->symbolic;
    bool ok = true;
    for (int k = 1; k < nops && ok; k++) {
      LLVMValueRef idx = LLVMGetOperand(v, (unsigned)k);
      if (LLVMGetTypeKind(LLVMTypeOf(idx)) == LLVMVectorTypeKind) ok = false;
      else if (k > 1 && LLVMGetTypeKind(t) == LLVMStructTypeKind) {
        if (!LLVMIsAConstantInt(idx)) ok = false;
        else {
          w->offset += scale * (int64_t)LLVMOffsetOfElement(w->td, t, (unsigned)LLVMConstIntGetZExtValue(idx));
          t = LLVMStructGetTypeAtIndex(t, (unsigned)LLVMConstIntGetZExtValue(idx));
        }
      } else {
        if (k > 1) t = LLVMGetElementType(t);
        invariant(w, idx, scale * (int64_t)LLVMABISizeOfType(w->td, t), depth + 1);
      }
    }
    if (ok) return invariant(w, a, scale, depth + 1);
    w->offset = offset, w->symbolic = symbolic; /* the whole pointer as one term */
    break;
  }
  default:
    break;
  }
  add_symbolic(w, v, scale);
}

/* Adds scale x (coefficients of v per loop) to w, and scale x v's first value to its offset. */
static void affine(walker *w, LLVMValueRef v, int64_t scale, int depth) {
  if (!v || scale == 0) return;
  int b = LLVMIsAInstruction(v) ? pa_ptrmap_get(w->bbmap, LLVMGetInstructionParent(v)) : -1;
  if (b < 0 || w->f->blocks[b].loop < 0) return invariant(w, v, scale, depth); /* the same in every loop */
  if (depth > MAX_DEPTH || --w->visits < 0) return mark_bad(w, v);
  LLVMOpcode op = LLVMGetInstructionOpcode(v);
  LLVMValueRef a = LLVMGetNumOperands(v) > 0 ? LLVMGetOperand(v, 0) : NULL;
  LLVMValueRef c = LLVMGetNumOperands(v) > 1 ? LLVMGetOperand(v, 1) : NULL;
  switch (op) {
  case LLVMAdd:
    affine(w, a, scale, depth + 1);
    affine(w, c, scale, depth + 1);
    return;
  case LLVMOr: /* `or disjoint` is an add of bits that do not overlap */
    if (!LLVMGetIsDisjoint(v)) return mark_bad(w, v);
    affine(w, a, scale, depth + 1);
    affine(w, c, scale, depth + 1);
    return;
  case LLVMSub:
    affine(w, a, scale, depth + 1);
    affine(w, c, -scale, depth + 1);
    return;
  case LLVMMul:
    if (LLVMIsAConstantInt(c)) return affine(w, a, scale * LLVMConstIntGetSExtValue(c), depth + 1);
    if (LLVMIsAConstantInt(a)) return affine(w, c, scale * LLVMConstIntGetSExtValue(a), depth + 1);
    return mark_bad(w, v);
  case LLVMShl:
    if (LLVMIsAConstantInt(c) && LLVMConstIntGetZExtValue(c) < 40)
      return affine(w, a, scale * ((int64_t)1 << LLVMConstIntGetZExtValue(c)), depth + 1);
    return mark_bad(w, v);
  case LLVMAnd: /* a split of a fused index: low bits (x mod 2^k) or high bits */
    if (LLVMIsAConstantInt(c) && LLVMGetIntTypeWidth(LLVMTypeOf(c)) <= 64) {
      uint64_t mask = (uint64_t)LLVMConstIntGetSExtValue(c); /* a narrower -2^k stays a top run */
      if (affine_masked(w, v, a, mask, scale, depth)) return;
    }
    return mark_bad(w, v);
  case LLVMURem: /* x mod m: a fused loop's inner index (m a power of two or not) */
    if (LLVMIsAConstantInt(c) && LLVMConstIntGetSExtValue(c) > 1)
      return affine_wrapped(w, v, a, LLVMConstIntGetSExtValue(c), 1, SPLIT_LOW, scale, depth);
    return mark_bad(w, v);
  case LLVMUDiv: /* x / m: a fused loop's outer index */
    if (LLVMIsAConstantInt(c) && LLVMConstIntGetSExtValue(c) > 1)
      return affine_wrapped(w, v, a, LLVMConstIntGetSExtValue(c), 1, SPLIT_QUOTIENT, scale, depth);
    return mark_bad(w, v);
  case LLVMLShr: /* x / 2^k */
    if (LLVMIsAConstantInt(c) && LLVMConstIntGetZExtValue(c) >= 1 && LLVMConstIntGetZExtValue(c) < 40)
      return affine_wrapped(w, v, a, (int64_t)1 << LLVMConstIntGetZExtValue(c), 1, SPLIT_QUOTIENT, scale, depth);
    return mark_bad(w, v);
  case LLVMSExt:
  case LLVMZExt:
  case LLVMTrunc:
  case LLVMBitCast:
  case LLVMFreeze:
    return affine(w, a, scale, depth + 1);
  case LLVMGetElementPtr: {
    affine(w, a, scale, depth + 1);
    LLVMTypeRef t = LLVMGetGEPSourceElementType(v);
    int nops = LLVMGetNumOperands(v);
    for (int k = 1; k < nops; k++) {
      LLVMValueRef idx = LLVMGetOperand(v, (unsigned)k);
      if (LLVMGetTypeKind(LLVMTypeOf(idx)) == LLVMVectorTypeKind) return mark_bad(w, v);
      if (k > 1 && LLVMGetTypeKind(t) == LLVMStructTypeKind) { /* a field: a constant offset */
        if (!LLVMIsAConstantInt(idx)) return mark_bad(w, v);
        unsigned field = (unsigned)LLVMConstIntGetZExtValue(idx);
        w->offset += scale * (int64_t)LLVMOffsetOfElement(w->td, t, field);
        t = LLVMStructGetTypeAtIndex(t, field);
        continue;
      }
      if (k > 1) t = LLVMGetElementType(t);
      affine(w, idx, scale * (int64_t)LLVMABISizeOfType(w->td, t), depth + 1);
    }
    return;
  }
  case LLVMPHI: {
    int l = header_loop(w, v);
    if (l < 0) return mark_bad(w, v);
    return induction(w, v, l, scale, depth);
  }
  default:
    return mark_bad(w, v);
  }
}

/* The object an address is based on: through getelementptrs (their pointer operand), casts
 * and loop header phis (their value entering the loop), to an argument, a global or another
 * pointer (a load, a call) whose offsets from it are unknown; NULL when a phi merges
 * different objects or the chain is too long. */
static LLVMValueRef underlying_object(walker *w, LLVMValueRef v) {
  for (int depth = 0; v && depth < MAX_DEPTH; depth++) {
    if (LLVMIsAGetElementPtrInst(v) || LLVMIsABitCastInst(v) || LLVMIsAAddrSpaceCastInst(v)) {
      v = LLVMGetOperand(v, 0);
    } else if (LLVMIsAPHINode(v) && header_loop(w, v) >= 0) {
      LLVMValueRef start, next;
      if (!header_phi_values(w, v, &w->f->loops[header_loop(w, v)], &start, &next)) return NULL;
      v = start;
    } else if (LLVMIsAConstantExpr(v) && (LLVMGetConstOpcode(v) == LLVMGetElementPtr || LLVMGetConstOpcode(v) == LLVMBitCast)) {
      v = LLVMGetOperand(v, 0);
    } else {
      return LLVMIsAPHINode(v) || LLVMIsASelectInst(v) ? NULL : v;
    }
  }
  return NULL;
}

void pa_access_strides(pt_arena *a, LLVMValueRef fn, pa_function *f) {
  if (f->n_loops == 0) return;
  pa_ptrmap bbmap;
  pa_ptrmap_init(&bbmap, (size_t)f->n_blocks);
  int bi = 0;
  for (LLVMBasicBlockRef bb = LLVMGetFirstBasicBlock(fn); bb; bb = LLVMGetNextBasicBlock(bb), bi++)
    pa_ptrmap_put(&bbmap, bb, bi);
  LLVMModuleRef mod = LLVMGetGlobalParent(fn);
  walker w = {.f = f, .bbmap = &bbmap, .n_loops = f->n_loops};
  w.td = LLVMCreateTargetData(LLVMGetDataLayoutStr(mod));
  w.coef = malloc(3 * sizeof(int64_t) * (size_t)f->n_loops);
  w.period = w.coef + f->n_loops, w.jump = w.period + f->n_loops;
  w.bad = malloc(sizeof(bool) * (size_t)f->n_loops);
  int n_objects = 0, cap_objects = 0;
  /* distinct underlying objects, in order of first use, and the symbolic part (add_symbolic) of
   * the first address of each with an offset: offsets are recorded relative to it */
  struct object {
    LLVMValueRef v;
    uint64_t symbolic;
    bool has_symbolic;
  } *objects = NULL;
  bi = 0;
  for (LLVMBasicBlockRef bb = LLVMGetFirstBasicBlock(fn); bb; bb = LLVMGetNextBasicBlock(bb), bi++) {
    pa_block *b = &f->blocks[bi];
    int depth = 0;
    for (int l = b->loop; l >= 0; l = f->loops[l].parent) depth++;
    if (depth == 0) continue;
    int i = 0;
    for (LLVMValueRef in = LLVMGetFirstInstruction(bb); in && i < b->n_nodes; in = LLVMGetNextInstruction(in), i++) {
      pa_node *n = &b->nodes[i];
      LLVMValueRef addr = n->is_memory ? pa_node_address(in, n) : NULL, scalar = NULL;
      int64_t first = 0, elem = 0;
      /* a gather or scatter: its first lane, base + elem x (splat scalar + first constant) */
      if (!addr && n->is_memory && n->op == PA_OP_GATHER && !pa_lanes_base(pa_lanes_address(in, n), &addr, &scalar, &first, &elem))
        addr = NULL;
      if (!addr) continue;
      memset(w.coef, 0, 3 * sizeof(int64_t) * (size_t)f->n_loops);
      memset(w.bad, 0, sizeof(bool) * (size_t)f->n_loops);
      w.offset = 0, w.symbolic = 0, w.offset_bad = false, w.n_deriving = 0;
      w.visits = MAX_VISITS;
      affine(&w, addr, 1, 0);
      if (scalar) affine(&w, scalar, elem, 0);
      w.offset += elem * first;
      n->n_strides = depth;
      n->strides = pt_alloc(a, sizeof(int64_t) * (size_t)depth);
      int k = 0;
      bool wraps = false;
      for (int l = b->loop; l >= 0; l = f->loops[l].parent, k++) {
        w.bad[l] |= w.period[l] < 0; /* the step between wraps says little when their period is unknown */
        n->strides[k] = w.bad[l] ? PA_STRIDE_UNKNOWN : w.coef[l];
        wraps |= !w.bad[l] && w.period[l] > 0;
      }
      if (wraps) {
        n->periods = pt_alloc(a, 2 * sizeof(int64_t) * (size_t)depth);
        n->period_strides = n->periods + depth;
        k = 0;
        for (int l = b->loop; l >= 0; l = f->loops[l].parent, k++) {
          n->periods[k] = w.bad[l] ? 0 : w.period[l];
          n->period_strides[k] = w.bad[l] || w.period[l] == 0 ? 0 : w.period[l] * w.coef[l] + w.jump[l];
        }
      }
      LLVMValueRef obj = underlying_object(&w, addr);
      if (!obj) continue;
      int o = 0;
      while (o < n_objects && objects[o].v != obj) o++;
      if (o == n_objects) {
        if (n_objects == cap_objects) cap_objects = 2 * cap_objects + 8, objects = realloc(objects, sizeof *objects * (size_t)cap_objects);
        objects[n_objects++] = (struct object){obj, 0, false};
      }
      n->array = o + 1;
      if (w.offset_bad) continue;
      if (!objects[o].has_symbolic) objects[o].symbolic = w.symbolic, objects[o].has_symbolic = true;
      if (w.symbolic == objects[o].symbolic) n->has_offset = true, n->offset = w.offset;
    }
  }
  LLVMDisposeTargetData(w.td);
  free(w.coef);
  free(w.bad);
  free(objects);
  pa_ptrmap_free(&bbmap);
}
