/* The frame of a walk repeated by an outer loop, void NAME(i64 trips, ptr in, ptr out), that the
 * stride kernel (chase.c) and the L1 column kernel (set_loads.c) both are: the caller fills the
 * entry (its loads of `in`), the outer loop's head and the walk's body; the frame makes the
 * blocks, the counters and accumulator phis, the back edges and the store of the result. */
#include <stdio.h>

#include "internal.h"

pmb_nest pmb_nest_new(pmb_jit *j, LLVMModuleRef m, const char *name, const char *outer, LLVMTypeRef acc_type) {
  LLVMContextRef c = pmb_jit_context(j);
  LLVMTypeRef i64 = LLVMInt64TypeInContext(c), ptr = LLVMPointerTypeInContext(c, 0);
  LLVMTypeRef params[3] = {i64, ptr, ptr};
  char outer_end[64];
  snprintf(outer_end, sizeof outer_end, "%s_end", outer);
  pmb_nest f = {.acc_type = acc_type};
  f.fn = LLVMAddFunction(m, name, LLVMFunctionType(LLVMVoidTypeInContext(c), params, 3, 0));
  f.entry = LLVMAppendBasicBlockInContext(c, f.fn, "entry");
  f.outer = LLVMAppendBasicBlockInContext(c, f.fn, outer);
  f.walk = LLVMAppendBasicBlockInContext(c, f.fn, "walk");
  f.outer_end = LLVMAppendBasicBlockInContext(c, f.fn, outer_end);
  f.done = LLVMAppendBasicBlockInContext(c, f.fn, "done");
  f.b = LLVMCreateBuilderInContext(c);
  f.trips = LLVMGetParam(f.fn, 0), f.in = LLVMGetParam(f.fn, 1), f.out = LLVMGetParam(f.fn, 2);
  LLVMPositionBuilderAtEnd(f.b, f.entry);
  return f;
}

void pmb_nest_outer(pmb_nest *f) {
  LLVMBuildBr(f->b, f->outer);
  LLVMPositionBuilderAtEnd(f->b, f->outer);
  f->trip = LLVMBuildPhi(f->b, LLVMTypeOf(f->trips), "trip");
  f->acc_in = LLVMBuildPhi(f->b, f->acc_type, "acc_in");
}

void pmb_nest_walk(pmb_nest *f) {
  LLVMBuildBr(f->b, f->walk);
  LLVMPositionBuilderAtEnd(f->b, f->walk);
  f->index = LLVMBuildPhi(f->b, LLVMTypeOf(f->trips), "i");
  f->acc = LLVMBuildPhi(f->b, f->acc_type, "acc");
}

void pmb_nest_close(pmb_nest *f, LLVMValueRef next, LLVMValueRef limit, LLVMValueRef acc) {
  LLVMBuilderRef b = f->b;
  LLVMTypeRef i64 = LLVMTypeOf(f->trips);
  LLVMValueRef zero = LLVMConstInt(i64, 0, 0), acc_zero = LLVMConstNull(f->acc_type);
  LLVMBuildCondBr(b, LLVMBuildICmp(b, LLVMIntSLT, next, limit, ""), f->walk, f->outer_end);
  LLVMAddIncoming(f->index, &zero, &f->outer, 1);
  LLVMAddIncoming(f->index, &next, &f->walk, 1);
  LLVMAddIncoming(f->acc, &f->acc_in, &f->outer, 1);
  LLVMAddIncoming(f->acc, &acc, &f->walk, 1);

  LLVMPositionBuilderAtEnd(b, f->outer_end);
  LLVMValueRef trip_next = LLVMBuildAdd(b, f->trip, LLVMConstInt(i64, 1, 0), "");
  LLVMBuildCondBr(b, LLVMBuildICmp(b, LLVMIntSLT, trip_next, f->trips, ""), f->outer, f->done);
  LLVMAddIncoming(f->trip, &zero, &f->entry, 1);
  LLVMAddIncoming(f->trip, &trip_next, &f->outer_end, 1);
  LLVMAddIncoming(f->acc_in, &acc_zero, &f->entry, 1);
  LLVMAddIncoming(f->acc_in, &acc, &f->outer_end, 1);

  LLVMPositionBuilderAtEnd(b, f->done);
  LLVMBuildStore(b, acc, f->out);
  LLVMBuildRetVoid(b);
  LLVMDisposeBuilder(b);
}
