/* The address step between a gather's (or scatter's) consecutive lanes, when the IR fixes it:
 * the pointer vector is a getelementptr of one base and a vector index that is a constant
 * vector, or a splat plus a constant vector (how the lowering writes a vectorized axis whose
 * elements are not adjacent: `add <splat of i>, <0, 12544, 25088, ...>`). The predictor prices
 * lanes a page or more apart with the target's page-apart rows. The same form gives the first
 * lane's address as a scalar (the base, the splat's scalar and the first constant), whose walk
 * over the loops access.c follows as a load's. */
#include <string.h>

#include "internal.h"

/* Bytes of one element of a scalar type; 0 when not a plain integer or float. */
static int64_t scalar_bytes(LLVMTypeRef t) {
  switch (LLVMGetTypeKind(t)) {
  case LLVMIntegerTypeKind: return LLVMGetIntTypeWidth(t) % 8 ? 0 : LLVMGetIntTypeWidth(t) / 8;
  case LLVMHalfTypeKind:
  case LLVMBFloatTypeKind: return 2;
  case LLVMFloatTypeKind: return 4;
  case LLVMDoubleTypeKind: return 8;
  default: return 0;
  }
}

/* The common difference of a constant integer vector's lanes; *ok false when there is none. */
static int64_t constant_step(LLVMValueRef c, bool *ok) {
  *ok = false;
  if (!LLVMIsAConstant(c) || LLVMGetTypeKind(LLVMTypeOf(c)) != LLVMVectorTypeKind) return 0;
  unsigned lanes = LLVMGetVectorSize(LLVMTypeOf(c));
  int64_t prev = 0, step = 0;
  for (unsigned k = 0; k < lanes; k++) {
    LLVMValueRef e = LLVMGetAggregateElement(c, k);
    if (!e || !LLVMIsAConstantInt(e)) return 0;
    int64_t v = LLVMConstIntGetSExtValue(e);
    if (k == 1) step = v - prev;
    else if (k > 1 && v - prev != step) return 0;
    prev = v;
  }
  *ok = lanes > 1;
  return step;
}

/* Whether every lane of v holds one value: a shufflevector whose mask picks one lane. */
static bool is_splat(LLVMValueRef v) {
  if (!LLVMIsAShuffleVectorInst(v)) return false;
  unsigned n = LLVMGetNumMaskElements(v);
  int first = LLVMGetMaskValue(v, 0);
  for (unsigned k = 1; k < n; k++)
    if (LLVMGetMaskValue(v, k) != first) return false;
  return first != LLVMGetUndefMaskElem();
}

/* An index vector as splat + constant vector (*splat NULL for a constant vector alone). */
static bool split_index(LLVMValueRef idx, LLVMValueRef *splat, LLVMValueRef *constant) {
  bool ok;
  *splat = NULL, *constant = idx;
  constant_step(idx, &ok);
  if (ok || !LLVMIsAInstruction(idx)) return ok;
  LLVMOpcode op = LLVMGetInstructionOpcode(idx);
  if (op != LLVMAdd && op != LLVMOr) return false; /* `or disjoint` is how LLVM sometimes writes the add */
  for (int k = 0; k < 2; k++) {
    LLVMValueRef c = LLVMGetOperand(idx, (unsigned)k), other = LLVMGetOperand(idx, (unsigned)(1 - k));
    constant_step(c, &ok);
    if (ok && is_splat(other)) {
      *splat = other, *constant = c;
      return true;
    }
  }
  return false;
}

/* A getelementptr of one base by a vector index, over a plain scalar type: its index and the
 * element's bytes; NULL otherwise. */
static LLVMValueRef lanes_index(LLVMValueRef ptrs, int64_t *elem) {
  if (!LLVMIsAGetElementPtrInst(ptrs) || LLVMGetNumOperands(ptrs) != 2) return NULL;
  if (LLVMGetTypeKind(LLVMTypeOf(LLVMGetOperand(ptrs, 0))) == LLVMVectorTypeKind) return NULL; /* a vector of bases */
  *elem = scalar_bytes(LLVMGetGEPSourceElementType(ptrs));
  return *elem ? LLVMGetOperand(ptrs, 1) : NULL;
}

int64_t pa_lane_step(LLVMValueRef ptrs) {
  int64_t elem;
  LLVMValueRef idx = lanes_index(ptrs, &elem), splat, constant;
  bool ok = idx && split_index(idx, &splat, &constant);
  int64_t step = ok ? constant_step(constant, &ok) : 0;
  return ok ? step * elem : 0;
}

bool pa_lanes_base(LLVMValueRef ptrs, LLVMValueRef *base, LLVMValueRef *scalar, int64_t *first, int64_t *elem) {
  LLVMValueRef idx = lanes_index(ptrs, elem), splat, constant;
  if (!idx || !split_index(idx, &splat, &constant)) return false;
  LLVMValueRef c0 = LLVMGetAggregateElement(constant, 0);
  if (!c0 || !LLVMIsAConstantInt(c0)) return false;
  *base = LLVMGetOperand(ptrs, 0), *first = LLVMConstIntGetSExtValue(c0), *scalar = NULL;
  if (!splat) return true;
  /* the splat's lane: an insertelement of the scalar at the lane the shuffle picks */
  LLVMValueRef ins = LLVMGetOperand(splat, 0), at = LLVMIsAInsertElementInst(ins) ? LLVMGetOperand(ins, 2) : NULL;
  if (!at || !LLVMIsAConstantInt(at) || LLVMConstIntGetZExtValue(at) != (unsigned long long)LLVMGetMaskValue(splat, 0))
    return false;
  *scalar = LLVMGetOperand(ins, 1);
  return true;
}
