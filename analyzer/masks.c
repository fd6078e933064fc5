/* The lanes of llvm.masked.{load,store,gather,scatter} that move data, as every part of the
 * analyzer that sizes an access counts them: the hooks (instrument.c: only the active lanes,
 * a load or store from its first active lane to its last), the line filter's bound on a loop
 * body's lines (line_filter.c) and the trace (trace.c), which fold a constant mask. */
#include <string.h>

#include "internal.h"

static unsigned intrinsic(const char *name) { return LLVMLookupIntrinsicID(name, strlen(name)); }

bool pa_masked_of(LLVMTargetDataRef td, LLVMValueRef in, pa_masked *m) {
  if (LLVMGetInstructionOpcode(in) != LLVMCall) return false;
  LLVMValueRef f = LLVMGetCalledValue(in);
  unsigned id = f && LLVMIsAFunction(f) ? LLVMGetIntrinsicID(f) : 0;
  if (!id) return false;
  /* operands: load (ptr, align, mask, passthru), store (value, ptr, align, mask); gather and
   * scatter the same with a vector of pointers */
  bool load = id == intrinsic("llvm.masked.load"), store = id == intrinsic("llvm.masked.store");
  bool gather = id == intrinsic("llvm.masked.gather"), scatter = id == intrinsic("llvm.masked.scatter");
  if (!load && !store && !gather && !scatter) return false;
  bool reads = load || gather;
  *m = (pa_masked){.ptr = LLVMGetOperand(in, reads ? 0 : 1), .mask = LLVMGetOperand(in, reads ? 2 : 3),
                   .lanes_apart = gather || scatter};
  LLVMTypeRef vec = LLVMTypeOf(reads ? in : LLVMGetOperand(in, 0));
  LLVMTypeRef elem = LLVMGetElementType(vec);
  m->lanes = LLVMGetVectorSize(vec);
  m->bytes = LLVMStoreSizeOfType(td, vec);
  m->lane_bytes = LLVMStoreSizeOfType(td, elem);
  /* lanes of whole bytes, packed: lane k at byte k x lane_bytes (<8 x float>, not <8 x i1>) */
  m->whole_lanes = LLVMSizeOfTypeInBits(td, elem) == 8 * m->lane_bytes && m->bytes == m->lanes * m->lane_bytes;
  return true;
}

int pa_mask_lane(LLVMValueRef mask, unsigned k) {
  if (!LLVMIsAConstant(mask)) return -1;
  if (LLVMIsAConstantAggregateZero(mask)) return 0;
  LLVMValueRef e = LLVMGetAggregateElement(mask, k);
  if (!e || !LLVMIsAConstantInt(e)) return -1; /* undef or poison lanes: not folded */
  return (int)(LLVMConstIntGetZExtValue(e) & 1);
}

int64_t pa_mask_span(const pa_masked *m, uint64_t *off) {
  *off = 0;
  if (m->lanes_apart || !m->whole_lanes) return -1;
  int64_t first = -1, last = -1;
  for (unsigned k = 0; k < m->lanes; k++) {
    int on = pa_mask_lane(m->mask, k);
    if (on < 0) return -1;
    if (on && first < 0) first = k;
    if (on) last = k;
  }
  if (first < 0) return 0;
  *off = (uint64_t)first * m->lane_bytes;
  return (last - first + 1) * (int64_t)m->lane_bytes;
}

int pa_masked_items(const pa_masked *m) {
  uint64_t off;
  if (!m->lanes_apart) return pa_mask_span(m, &off) != 0;
  int n = 0;
  for (unsigned l = 0; l < m->lanes; l++) n += pa_mask_lane(m->mask, l) != 0;
  return n;
}
