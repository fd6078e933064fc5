/* Kernels for misses in flight (mlp.c), generated with the LLVM C API so that every chase
 * pointer lives in a register (up to what the register file holds: the allocator spills the
 * rest, which the L1 floor of mlp.c measures) and no compiler flag changes what runs:
 *   chase:  void f(i64 iters, ptr in, ptr out), `chains` independent pointer chases started at
 *           in[0..chains), `steps` dependent loads each per iteration, positions written back;
 *   stride: void f(i64 passes, ptr in, ptr out), in = {ptr base, i64 bytes, i64 stride}: volatile
 *           8-byte loads at base + i x stride for i x stride < bytes, once per pass. */
#include "internal.h"

int pmb_chase_steps(int chains) {
  int s = 64 / chains; /* about 64 loads per iteration: loop overhead stays off the figure */
  return s < 1 ? 1 : s;
}

int pmb_chase_kernel_build(pmb_jit *j, LLVMModuleRef m, int chains, const char *name, pt_diag *d) {
  if (chains < 1 || chains > PMB_MAX_CHASES)
    return pt_fail(d, PT_ERR_INVALID, "chase kernel: %d chains (1..%d)", chains, PMB_MAX_CHASES);
  LLVMContextRef c = pmb_jit_context(j);
  LLVMTypeRef i64 = LLVMInt64TypeInContext(c), ptr = LLVMPointerTypeInContext(c, 0);
  pmb_loop_frame f = pmb_loop_frame_new(j, m, name, 2);
  LLVMBasicBlockRef entry = f.entry, loop = f.loop, done = f.done;
  LLVMBuilderRef b = f.b;
  LLVMValueRef iters = LLVMGetParam(f.fn, 0), in = LLVMGetParam(f.fn, 1), out = LLVMGetParam(f.fn, 2);
  LLVMValueRef start[PMB_MAX_CHASES], phi[PMB_MAX_CHASES], cur[PMB_MAX_CHASES], slot[PMB_MAX_CHASES];
  for (int k = 0; k < chains; k++) {
    LLVMValueRef idx = LLVMConstInt(i64, (unsigned long long)k, 0);
    slot[k] = LLVMBuildGEP2(b, ptr, in, &idx, 1, "");
    start[k] = LLVMBuildLoad2(b, ptr, slot[k], "");
  }
  LLVMBuildBr(b, loop);
  LLVMPositionBuilderAtEnd(b, loop);
  LLVMValueRef i = LLVMBuildPhi(b, i64, "i");
  for (int k = 0; k < chains; k++) cur[k] = phi[k] = LLVMBuildPhi(b, ptr, "");
  /* round-robin over the chains: each chain's next load waits only for its own last one */
  for (int s = 0; s < pmb_chase_steps(chains); s++)
    for (int k = 0; k < chains; k++) cur[k] = LLVMBuildLoad2(b, ptr, cur[k], "");
  LLVMValueRef next = LLVMBuildAdd(b, i, LLVMConstInt(i64, 1, 0), "");
  LLVMBuildCondBr(b, LLVMBuildICmp(b, LLVMIntSLT, next, iters, ""), loop, done);
  LLVMValueRef zero = LLVMConstInt(i64, 0, 0);
  LLVMAddIncoming(i, &zero, &entry, 1);
  LLVMAddIncoming(i, &next, &loop, 1);
  for (int k = 0; k < chains; k++) {
    LLVMAddIncoming(phi[k], &start[k], &entry, 1);
    LLVMAddIncoming(phi[k], &cur[k], &loop, 1);
  }
  LLVMPositionBuilderAtEnd(b, done);
  for (int k = 0; k < chains; k++) LLVMBuildStore(b, cur[k], slot[k]); /* the next call goes on from here */
  LLVMBuildStore(b, cur[0], out);
  LLVMBuildRetVoid(b);
  LLVMDisposeBuilder(b);
  return PT_OK;
}

#define STRIDE_UNROLL 4
int pmb_stride_kernel_build(pmb_jit *j, LLVMModuleRef m, const char *name, bool store_back, pt_diag *d) {
  (void)d;
  LLVMContextRef c = pmb_jit_context(j);
  LLVMTypeRef i64 = LLVMInt64TypeInContext(c), i8 = LLVMInt8TypeInContext(c), ptr = LLVMPointerTypeInContext(c, 0);
  pmb_nest f = pmb_nest_new(j, m, name, "pass", i64); /* passes over the buffer, each a walk */
  LLVMBuilderRef b = f.b;
  LLVMValueRef one = LLVMConstInt(i64, 1, 0), two = LLVMConstInt(i64, 2, 0);
  LLVMValueRef base = LLVMBuildLoad2(b, ptr, f.in, "base");
  LLVMValueRef bytes = LLVMBuildLoad2(b, i64, LLVMBuildGEP2(b, i64, f.in, &one, 1, ""), "bytes");
  LLVMValueRef stride = LLVMBuildLoad2(b, i64, LLVMBuildGEP2(b, i64, f.in, &two, 1, ""), "stride");
  /* the walk stops before an unrolled group would pass the end */
  LLVMValueRef group = LLVMBuildMul(b, stride, LLVMConstInt(i64, STRIDE_UNROLL, 0), "");
  LLVMValueRef limit = LLVMBuildSub(b, bytes, LLVMBuildSub(b, group, LLVMConstInt(i64, 8, 0), ""), "");
  pmb_nest_outer(&f);
  pmb_nest_walk(&f); /* the walk's index is the byte offset; its accumulator the xor of the loads */
  LLVMValueRef a = f.acc, o = f.index;
  for (int u = 0; u < STRIDE_UNROLL; u++) { /* independent loads: only the offset chains them */
    LLVMValueRef v = LLVMBuildLoad2(b, i64, LLVMBuildGEP2(b, i8, base, &o, 1, ""), "");
    LLVMSetVolatile(v, 1);
    if (store_back) /* read-modify-write: the line goes back dirty; nothing waits on the store */
      LLVMSetVolatile(LLVMBuildStore(b, LLVMBuildAdd(b, v, one, ""), LLVMBuildGEP2(b, i8, base, &o, 1, "")), 1);
    a = LLVMBuildXor(b, a, v, "");
    o = LLVMBuildAdd(b, o, stride, "");
  }
  pmb_nest_close(&f, o, limit, a);
  return PT_OK;
}

/* Accesses one pass of the stride kernel makes over `bytes` (what mlp.c divides by). */
int64_t pmb_stride_accesses(int64_t bytes, int64_t stride) {
  int64_t limit = bytes - (STRIDE_UNROLL * stride - 8), n = 0;
  for (int64_t off = 0;; off += STRIDE_UNROLL * stride) {
    n += STRIDE_UNROLL;
    if (off + STRIDE_UNROLL * stride >= limit) break;
  }
  return n;
}
