/* The address step between a gather's (or scatter's) consecutive lanes, when the IR fixes it:
 * the pointer vector is a getelementptr of one base and a vector index that is a constant
 * vector, or a splat plus a constant vector (how the lowering writes a vectorized axis whose
 * elements are not adjacent: `add <splat of i>, <0, 12544, 25088, ...>`). The predictor prices
 * lanes a page or more apart with the target's page-apart rows. */
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

/* Lanes of an index vector apart, in elements: a constant vector, or splat + constant vector. */
static int64_t index_step(LLVMValueRef idx, bool *ok) {
  int64_t s = constant_step(idx, ok);
  if (*ok || !LLVMIsAInstruction(idx)) return s;
  LLVMOpcode op = LLVMGetInstructionOpcode(idx);
  if (op != LLVMAdd && op != LLVMOr) return 0; /* `or disjoint` is how LLVM sometimes writes the add */
  for (int k = 0; k < 2; k++) {
    LLVMValueRef c = LLVMGetOperand(idx, (unsigned)k), other = LLVMGetOperand(idx, (unsigned)(1 - k));
    s = constant_step(c, ok);
    if (*ok && is_splat(other)) return s;
  }
  *ok = false;
  return 0;
}

int64_t pa_lane_step(LLVMValueRef ptrs) {
  if (!LLVMIsAGetElementPtrInst(ptrs) || LLVMGetNumOperands(ptrs) != 2) return 0;
  LLVMValueRef base = LLVMGetOperand(ptrs, 0), idx = LLVMGetOperand(ptrs, 1);
  if (LLVMGetTypeKind(LLVMTypeOf(base)) == LLVMVectorTypeKind) return 0; /* a vector of bases */
  int64_t elem = scalar_bytes(LLVMGetGEPSourceElementType(ptrs));
  bool ok;
  int64_t step = index_step(idx, &ok);
  return ok && elem ? step * elem : 0;
}
