/* Static address analysis of memory accesses: for each load and store (masked ones too, and the
 * first lane of a gather or scatter whose pointer vector is a base plus a splat and a constant
 * vector: analyzer/lanes.c) the byte stride of its address per iteration of each enclosing loop, innermost first, when the
 * address is affine in the loops' induction variables (getelementptr indices built from adds,
 * multiplies and shifts by constants, casts, and header phis stepping by a constant or taking
 * an affine value of the loop around: a derived induction), or splits such a value with a
 * power-of-two mask (a fused loop's indices: the step between wraps); and its constant byte
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

typedef struct {
  const pa_function *f;
  pa_ptrmap *bbmap; /* LLVM block -> index */
  LLVMTargetDataRef td;
  int n_loops;
  int64_t *coef;   /* scratch per loop: bytes (or units) per iteration */
  bool *bad;       /* scratch per loop: the value varies in that loop in a way not followed */
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
  int64_t offset;
  uint64_t symbolic;
  bool offset_bad;
} sub_walk;

/* Walks x alone into scratch of its own (*r; sub_walk_free releases it), w's state untouched. */
static void sub_walk_run(walker *w, LLVMValueRef x, int depth, sub_walk *r) {
  int64_t *coef = w->coef, offset = w->offset;
  bool *bad = w->bad, offset_bad = w->offset_bad;
  uint64_t symbolic = w->symbolic;
  w->coef = calloc((size_t)w->n_loops, sizeof(int64_t));
  w->bad = calloc((size_t)w->n_loops, sizeof(bool));
  w->offset = 0, w->symbolic = 0, w->offset_bad = false;
  affine(w, x, 1, depth + 1);
  *r = (sub_walk){w->coef, w->bad, w->offset, w->symbolic, w->offset_bad};
  w->coef = coef, w->bad = bad, w->offset = offset, w->symbolic = symbolic, w->offset_bad = offset_bad;
}

static void sub_walk_free(sub_walk *r) { free(r->coef), free(r->bad); }

/* x mod m (its bits below m, m = 2^b) or x with its bits below m cleared, for an x that moves
 * by c per iteration of a loop: the step that all iterations but the wrapping ones see (one in
 * m / |c|), which is what a fused loop's split index does (`and %f, 511` for j, `and %f, -512`
 * for 512 i). A low split may also clear the bits below `unit` (`and %4f, 508`), which must then
 * not move. *ok false when the steps themselves vary. */
static int64_t wrapped_step(int64_t c, int64_t m, int64_t unit, bool low_bits, bool *ok) {
  int64_t a = c < 0 ? -c : c;
  *ok = true;
  if (a % m == 0) return low_bits ? 0 : c;
  if (a < m && (!low_bits || a % unit == 0)) return low_bits ? c : 0;
  *ok = false;
  return 0;
}

/* Adds scale x wrapped_step(coefficients of x) to w, and scale x (x's first value & mask) to
 * its offset when that value is a constant; else the split value v itself is a symbolic term
 * (a parallel body's fused index starts at its chunk: the same term in all its accesses). */
static void affine_wrapped(walker *w, LLVMValueRef v, LLVMValueRef x, int64_t m, int64_t unit, bool low_bits, int64_t scale, int depth) {
  sub_walk r;
  sub_walk_run(w, x, depth, &r);
  for (int l = 0; l < w->n_loops; l++) {
    bool ok = !r.bad[l];
    int64_t step = ok ? wrapped_step(r.coef[l], m, unit, low_bits, &ok) : 0;
    if (!ok) w->bad[l] = true;
    else w->coef[l] += scale * step;
  }
  uint64_t mask = low_bits ? ((uint64_t)m - 1) & ~((uint64_t)unit - 1) : ~((uint64_t)m - 1);
  if (r.offset_bad) w->offset_bad = true;
  else if (r.symbolic != 0) add_symbolic(w, v, scale);
  else w->offset += scale * (int64_t)((uint64_t)r.offset & mask);
  sub_walk_free(&r);
}

static bool power_of_two(int64_t m) { return m > 1 && (m & (m - 1)) == 0; }

/* `and x, mask` where the mask's bits are one run from bit a: up to bit b < 63, a low split
 * (x mod 2^b, bits below 2^a cleared); to the top (bit 62 or 63: the sign bit does not matter
 * for an index), x with its bits below 2^a cleared. False for any other mask. */
static bool affine_masked(walker *w, LLVMValueRef v, LLVMValueRef x, uint64_t mask, int64_t scale, int depth) {
  if (mask == 0) return true; /* always 0: invariant */
  uint64_t unit = mask & (~mask + 1), top = mask + unit; /* top: 2^b, or 0 past bit 63 */
  if ((top & (top - 1)) != 0) return false;             /* more than one run of bits */
  if (top == 0 || top == (uint64_t)1 << 63) affine_wrapped(w, v, x, (int64_t)unit, 1, false, scale, depth);
  else affine_wrapped(w, v, x, (int64_t)top, (int64_t)unit, true, scale, depth);
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
  case LLVMURem: /* x mod 2^k */
    if (LLVMIsAConstantInt(c) && power_of_two(LLVMConstIntGetSExtValue(c)))
      return affine_wrapped(w, v, a, LLVMConstIntGetSExtValue(c), 1, true, scale, depth);
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
  w.coef = malloc(sizeof(int64_t) * (size_t)f->n_loops);
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
      memset(w.coef, 0, sizeof(int64_t) * (size_t)f->n_loops);
      memset(w.bad, 0, sizeof(bool) * (size_t)f->n_loops);
      w.offset = 0, w.symbolic = 0, w.offset_bad = false, w.n_deriving = 0;
      w.visits = MAX_VISITS;
      affine(&w, addr, 1, 0);
      if (scalar) affine(&w, scalar, elem, 0);
      w.offset += elem * first;
      n->n_strides = depth;
      n->strides = pt_alloc(a, sizeof(int64_t) * (size_t)depth);
      int k = 0;
      for (int l = b->loop; l >= 0; l = f->loops[l].parent, k++)
        n->strides[k] = w.bad[l] ? PA_STRIDE_UNKNOWN : w.coef[l];
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
