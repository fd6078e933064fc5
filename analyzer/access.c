/* Static address analysis of memory accesses: for each load and store (masked ones too) the
 * byte stride of its address per iteration of each enclosing loop, innermost first, when the
 * address is affine in the loops' induction variables (getelementptr indices built from adds,
 * multiplies and shifts by constants, casts, and header phis stepping by a constant), or splits
 * such a value with a power-of-two mask (a fused loop's indices: the step between wraps). The
 * predictor's memory model reads them for what reuse distances cannot show: set conflicts of
 * power-of-two strides and page-crossing (TLB) walks. No run is needed. */
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
  int visits;      /* left for the current address */
} walker;

/* Every loop containing the block of instruction v gets `bad`. */
static void mark_bad(walker *w, LLVMValueRef v) {
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

/* Adds scale x wrapped_step(coefficients of x) to w: x walked into scratch of its own. */
static void affine_wrapped(walker *w, LLVMValueRef x, int64_t m, int64_t unit, bool low_bits, int64_t scale, int depth) {
  int64_t *coef = w->coef;
  bool *bad = w->bad;
  w->coef = calloc((size_t)w->n_loops, sizeof(int64_t));
  w->bad = calloc((size_t)w->n_loops, sizeof(bool));
  affine(w, x, 1, depth + 1);
  for (int l = 0; l < w->n_loops; l++) {
    bool ok = !w->bad[l];
    int64_t step = ok ? wrapped_step(w->coef[l], m, unit, low_bits, &ok) : 0;
    if (!ok) bad[l] = true;
    else coef[l] += scale * step;
  }
  free(w->coef), free(w->bad);
  w->coef = coef, w->bad = bad;
}

static bool power_of_two(int64_t m) { return m > 1 && (m & (m - 1)) == 0; }

/* `and x, mask` where the mask's bits are one run from bit a: up to bit b < 63, a low split
 * (x mod 2^b, bits below 2^a cleared); to the top (bit 62 or 63: the sign bit does not matter
 * for an index), x with its bits below 2^a cleared. False for any other mask. */
static bool affine_masked(walker *w, LLVMValueRef x, uint64_t mask, int64_t scale, int depth) {
  if (mask == 0) return true; /* always 0: invariant */
  uint64_t unit = mask & (~mask + 1), top = mask + unit; /* top: 2^b, or 0 past bit 63 */
  if ((top & (top - 1)) != 0) return false;             /* more than one run of bits */
  if (top == 0 || top == (uint64_t)1 << 63) affine_wrapped(w, x, (int64_t)unit, 1, false, scale, depth);
  else affine_wrapped(w, x, (int64_t)top, (int64_t)unit, true, scale, depth);
  return true;
}

/* A header phi: its value entering the loop (the preheader's incoming) plus step per
 * iteration, when the latch's incoming value is the phi plus a constant (integer add or a
 * getelementptr of the phi with constant indices). */
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
    return mark_bad(w, phi);
  }
  w->coef[l] += scale * step;
  affine(w, start, scale, depth + 1); /* how the start moves with the enclosing loops */
}

/* Adds scale x (coefficients of v per loop) to w. */
static void affine(walker *w, LLVMValueRef v, int64_t scale, int depth) {
  if (!v || scale == 0 || !LLVMIsAInstruction(v)) return; /* constants, arguments, globals: invariant */
  int b = pa_ptrmap_get(w->bbmap, LLVMGetInstructionParent(v));
  if (b < 0 || w->f->blocks[b].loop < 0) return; /* defined outside every loop: invariant */
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
      if (affine_masked(w, a, mask, scale, depth)) return;
    }
    return mark_bad(w, v);
  case LLVMURem: /* x mod 2^k */
    if (LLVMIsAConstantInt(c) && power_of_two(LLVMConstIntGetSExtValue(c)))
      return affine_wrapped(w, a, LLVMConstIntGetSExtValue(c), 1, true, scale, depth);
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
        t = LLVMStructGetTypeAtIndex(t, (unsigned)LLVMConstIntGetZExtValue(idx));
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
  LLVMValueRef *objects = NULL; /* distinct underlying objects, in order of first use */
  bi = 0;
  for (LLVMBasicBlockRef bb = LLVMGetFirstBasicBlock(fn); bb; bb = LLVMGetNextBasicBlock(bb), bi++) {
    pa_block *b = &f->blocks[bi];
    int depth = 0;
    for (int l = b->loop; l >= 0; l = f->loops[l].parent) depth++;
    if (depth == 0) continue;
    int i = 0;
    for (LLVMValueRef in = LLVMGetFirstInstruction(bb); in && i < b->n_nodes; in = LLVMGetNextInstruction(in), i++) {
      pa_node *n = &b->nodes[i];
      LLVMValueRef addr = n->is_memory ? pa_node_address(in, n) : NULL;
      if (!addr) continue;
      memset(w.coef, 0, sizeof(int64_t) * (size_t)f->n_loops);
      memset(w.bad, 0, sizeof(bool) * (size_t)f->n_loops);
      w.visits = MAX_VISITS;
      affine(&w, addr, 1, 0);
      n->n_strides = depth;
      n->strides = pt_alloc(a, sizeof(int64_t) * (size_t)depth);
      int k = 0;
      for (int l = b->loop; l >= 0; l = f->loops[l].parent, k++)
        n->strides[k] = w.bad[l] ? PA_STRIDE_UNKNOWN : w.coef[l];
      LLVMValueRef obj = underlying_object(&w, addr);
      if (!obj) continue;
      int o = 0;
      while (o < n_objects && objects[o] != obj) o++;
      if (o == n_objects) {
        if (n_objects == cap_objects) cap_objects = 2 * cap_objects + 8, objects = realloc(objects, sizeof *objects * (size_t)cap_objects);
        objects[n_objects++] = obj;
      }
      n->array = o + 1;
    }
  }
  LLVMDisposeTargetData(w.td);
  free(w.coef);
  free(w.bad);
  free(objects);
  pa_ptrmap_free(&bbmap);
}
