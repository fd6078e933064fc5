/* Bandwidth kernels (STREAM's read/write/copy/triad at the widest vector width), generated
 * with the LLVM C API like the instruction kernels, so they use the host's full registers
 * whatever flags portent itself was built with: void f(i64 vectors, ptr a, ptr b, ptr c). */
#include <string.h>

#include "internal.h"

#define UNROLL 8

typedef enum { BW_READ, BW_WRITE, BW_COPY, BW_TRIAD } bw_kind;

static LLVMValueRef vec_at(LLVMBuilderRef b, LLVMTypeRef vt, LLVMValueRef base, LLVMValueRef idx) {
  return LLVMBuildGEP2(b, vt, base, &idx, 1, "");
}

static void build_one(pmb_jit *j, LLVMModuleRef m, bw_kind kind, int bits, const char *name) {
  LLVMContextRef c = pmb_jit_context(j);
  LLVMTypeRef i64 = LLVMInt64TypeInContext(c);
  bool fl = kind == BW_TRIAD;
  LLVMTypeRef vt = LLVMVectorType(fl ? LLVMFloatTypeInContext(c) : LLVMInt32TypeInContext(c), (unsigned)bits / 32);
  pmb_loop_frame f = pmb_loop_frame_new(j, m, name, 3);
  LLVMBasicBlockRef entry = f.entry, loop = f.loop, done = f.done;
  LLVMBuilderRef b = f.b;
  LLVMValueRef n = LLVMGetParam(f.fn, 0), pa = LLVMGetParam(f.fn, 1), pb = LLVMGetParam(f.fn, 2), pc = LLVMGetParam(f.fn, 3);
  /* a value from memory, so stores cannot be turned into memset */
  LLVMValueRef fill = LLVMBuildLoad2(b, vt, pc, "");
  LLVMSetAlignment(fill, 16);
  LLVMValueRef zero = LLVMConstNull(vt);
  LLVMBuildBr(b, loop);
  LLVMPositionBuilderAtEnd(b, loop);
  LLVMValueRef i = LLVMBuildPhi(b, i64, "i"), acc[UNROLL], phi[UNROLL];
  for (int u = 0; u < UNROLL; u++) acc[u] = phi[u] = LLVMBuildPhi(b, vt, "");
  unsigned align = (unsigned)bits / 8;
  for (int u = 0; u < UNROLL; u++) {
    LLVMValueRef idx = LLVMBuildAdd(b, i, LLVMConstInt(i64, (unsigned long long)u, 0), "");
    LLVMValueRef v, s;
    switch (kind) {
    case BW_READ:
      v = LLVMBuildLoad2(b, vt, vec_at(b, vt, pa, idx), "");
      LLVMSetAlignment(v, align);
      acc[u] = LLVMBuildXor(b, acc[u], v, "");
      break;
    case BW_WRITE:
      s = LLVMBuildStore(b, fill, vec_at(b, vt, pa, idx));
      LLVMSetAlignment(s, align);
      break;
    case BW_COPY:
      v = LLVMBuildLoad2(b, vt, vec_at(b, vt, pb, idx), "");
      LLVMSetAlignment(v, align);
      s = LLVMBuildStore(b, v, vec_at(b, vt, pa, idx));
      LLVMSetAlignment(s, align);
      break;
    case BW_TRIAD: { /* a = b + fill * c, STREAM's triad with the scalar in every lane */
      LLVMValueRef x = LLVMBuildLoad2(b, vt, vec_at(b, vt, pb, idx), "");
      LLVMValueRef y = LLVMBuildLoad2(b, vt, vec_at(b, vt, pc, idx), "");
      LLVMSetAlignment(x, align);
      LLVMSetAlignment(y, align);
      s = LLVMBuildStore(b, LLVMBuildFAdd(b, x, LLVMBuildFMul(b, fill, y, ""), ""), vec_at(b, vt, pa, idx));
      LLVMSetAlignment(s, align);
      break;
    }
    }
  }
  LLVMValueRef next = LLVMBuildAdd(b, i, LLVMConstInt(i64, UNROLL, 0), "");
  LLVMBuildCondBr(b, LLVMBuildICmp(b, LLVMIntSLT, next, n, ""), loop, done);
  LLVMValueRef z64 = LLVMConstInt(i64, 0, 0);
  LLVMAddIncoming(i, &z64, &entry, 1);
  LLVMAddIncoming(i, &next, &loop, 1);
  for (int u = 0; u < UNROLL; u++) {
    LLVMAddIncoming(phi[u], &zero, &entry, 1);
    LLVMAddIncoming(phi[u], &acc[u], &loop, 1);
  }
  LLVMPositionBuilderAtEnd(b, done);
  if (kind == BW_READ) { /* keep the loads: their sum is the result */
    LLVMValueRef sum = acc[0];
    for (int u = 1; u < UNROLL; u++) sum = LLVMBuildXor(b, sum, acc[u], "");
    LLVMValueRef s = LLVMBuildStore(b, sum, pc);
    LLVMSetAlignment(s, 16);
  }
  LLVMBuildRetVoid(b);
  LLVMDisposeBuilder(b);
}

static const char *const kernel_names[4] = {"bw_read", "bw_write", "bw_copy", "bw_triad"};

int pmb_bandwidth_kernels(pmb_jit *j, int bits, pmb_bw_fn fns[4], pt_diag *d) {
  LLVMModuleRef m = pmb_jit_module(j, "bandwidth");
  for (int k = 0; k < 4; k++) build_one(j, m, (bw_kind)k, bits, kernel_names[k]);
  int err = pmb_jit_add(j, m, d);
  for (int k = 0; k < 4 && err == 0; k++)
    if (!(fns[k] = (pmb_bw_fn)pmb_jit_lookup(j, kernel_names[k], d))) err = d->err;
  return err;
}

int pmb_bandwidth_unroll(void) { return UNROLL; }
