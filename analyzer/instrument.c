/* Instrumentation through the C API: one counter per block (atomicrmw add, so parallel
 * callers count correctly), a function-entry hook (which threads ran it) and a hook before
 * every memory access (the reuse tracker); and __pa_main(slots), which unpacks the run
 * spec's argument slots and calls the entry, so no FFI is needed to call any signature. */
#include <stdlib.h>
#include <string.h>

#include <llvm-c/Target.h>

#include "internal.h"

typedef struct {
  LLVMContextRef ctx;
  LLVMBuilderRef b;
  LLVMTargetDataRef td;
  LLVMTypeRef i32, i64, ptr, access_ty;
  LLVMValueRef rt, access;
} hooks;

static void call_access(hooks *h, LLVMValueRef addr, LLVMValueRef bytes, int fid) {
  LLVMValueRef args[4] = {h->rt, addr, bytes, LLVMConstInt(h->i32, (unsigned long long)fid, 0)};
  LLVMBuildCall2(h->b, h->access_ty, h->access, args, 4, "");
}

static const char *callee_of(LLVMValueRef call) {
  LLVMValueRef f = LLVMGetCalledValue(call);
  if (!f || !LLVMIsAFunction(f)) return "";
  size_t len;
  return LLVMGetValueName2(f, &len);
}

/* Per-lane accesses of a gather or scatter (mask ignored: every lane is counted). */
static void lanes_access(hooks *h, LLVMValueRef ptrs, LLVMTypeRef elem, int fid) {
  unsigned n = LLVMGetVectorSize(LLVMTypeOf(ptrs));
  LLVMValueRef bytes = LLVMConstInt(h->i64, LLVMStoreSizeOfType(h->td, elem), 0);
  for (unsigned l = 0; l < n; l++)
    call_access(h, LLVMBuildExtractElement(h->b, ptrs, LLVMConstInt(h->i32, l, 0), ""), bytes, fid);
}

static void instrument_memory(hooks *h, LLVMValueRef in, int fid) {
  LLVMOpcode op = LLVMGetInstructionOpcode(in);
  LLVMPositionBuilderBefore(h->b, in);
  if (op == LLVMLoad || op == LLVMAtomicRMW || op == LLVMAtomicCmpXchg) {
    LLVMTypeRef t = op == LLVMLoad ? LLVMTypeOf(in) : LLVMTypeOf(LLVMGetOperand(in, op == LLVMAtomicRMW ? 1 : 2));
    call_access(h, LLVMGetOperand(in, 0), LLVMConstInt(h->i64, LLVMStoreSizeOfType(h->td, t), 0), fid);
  } else if (op == LLVMStore) {
    LLVMTypeRef t = LLVMTypeOf(LLVMGetOperand(in, 0));
    call_access(h, LLVMGetOperand(in, 1), LLVMConstInt(h->i64, LLVMStoreSizeOfType(h->td, t), 0), fid);
  } else if (op == LLVMCall) {
    const char *c = callee_of(in);
    if (strncmp(c, "llvm.masked.load.", 17) == 0)
      call_access(h, LLVMGetOperand(in, 0), LLVMConstInt(h->i64, LLVMStoreSizeOfType(h->td, LLVMTypeOf(in)), 0), fid);
    else if (strncmp(c, "llvm.masked.store.", 18) == 0)
      call_access(h, LLVMGetOperand(in, 1),
                  LLVMConstInt(h->i64, LLVMStoreSizeOfType(h->td, LLVMTypeOf(LLVMGetOperand(in, 0))), 0), fid);
    else if (strncmp(c, "llvm.masked.gather.", 19) == 0)
      lanes_access(h, LLVMGetOperand(in, 0), LLVMGetElementType(LLVMTypeOf(in)), fid);
    else if (strncmp(c, "llvm.masked.scatter.", 20) == 0)
      lanes_access(h, LLVMGetOperand(in, 1), LLVMGetElementType(LLVMTypeOf(LLVMGetOperand(in, 0))), fid);
    else if (strncmp(c, "llvm.memcpy.", 12) == 0 || strncmp(c, "llvm.memmove.", 13) == 0 ||
             strncmp(c, "llvm.memset.", 12) == 0) {
      LLVMValueRef len = LLVMBuildZExtOrBitCast(h->b, LLVMGetOperand(in, 2), h->i64, "");
      if (c[6] != 's') call_access(h, LLVMGetOperand(in, 1), len, fid); /* source of a copy */
      call_access(h, LLVMGetOperand(in, 0), len, fid);
    }
  }
}

static bool is_memory(LLVMValueRef in) {
  LLVMOpcode op = LLVMGetInstructionOpcode(in);
  if (op == LLVMLoad || op == LLVMStore || op == LLVMAtomicRMW || op == LLVMAtomicCmpXchg) return true;
  if (op != LLVMCall) return false;
  const char *c = callee_of(in);
  return strncmp(c, "llvm.masked.", 12) == 0 || strncmp(c, "llvm.memcpy.", 12) == 0 ||
         strncmp(c, "llvm.memmove.", 13) == 0 || strncmp(c, "llvm.memset.", 12) == 0;
}

int pa_instrument(LLVMModuleRef mod, bool memory_hooks, pt_diag *d) {
  LLVMValueRef *fns;
  int nf = pa_defined_functions(mod, &fns);
  int total = 0;
  for (int i = 0; i < nf; i++) total += (int)LLVMCountBasicBlocks(fns[i]);
  hooks h = {0};
  h.ctx = LLVMGetModuleContext(mod);
  h.b = LLVMCreateBuilderInContext(h.ctx);
  h.td = LLVMGetModuleDataLayout(mod);
  h.i32 = LLVMInt32TypeInContext(h.ctx);
  h.i64 = LLVMInt64TypeInContext(h.ctx);
  h.ptr = LLVMPointerTypeInContext(h.ctx, 0);
  LLVMTypeRef counts_ty = LLVMArrayType2(h.i64, (uint64_t)(total ? total : 1));
  LLVMValueRef counts = LLVMAddGlobal(mod, counts_ty, PA_SYM_COUNTS);
  h.rt = LLVMAddGlobal(mod, LLVMInt8TypeInContext(h.ctx), PA_SYM_CTX);
  LLVMTypeRef void_ty = LLVMVoidTypeInContext(h.ctx);
  LLVMTypeRef enter_params[2] = {h.ptr, h.i32};
  LLVMTypeRef enter_ty = LLVMFunctionType(void_ty, enter_params, 2, 0);
  LLVMValueRef enter = LLVMAddFunction(mod, PA_SYM_ENTER, enter_ty);
  LLVMTypeRef access_params[4] = {h.ptr, h.ptr, h.i64, h.i32};
  h.access_ty = LLVMFunctionType(void_ty, access_params, 4, 0);
  h.access = LLVMAddFunction(mod, PA_SYM_ACCESS, h.access_ty);
  /* The hooks write memory, so a function may no longer promise `memory(argmem: ...)`. */
  unsigned memory_attr = LLVMGetEnumAttributeKindForName("memory", 6);
  int base = 0;
  for (int fi = 0; fi < nf; fi++) {
    LLVMValueRef fn = fns[fi];
    LLVMRemoveEnumAttributeAtIndex(fn, LLVMAttributeFunctionIndex, memory_attr);
    int bi = 0;
    for (LLVMBasicBlockRef bb = LLVMGetFirstBasicBlock(fn); bb; bb = LLVMGetNextBasicBlock(bb), bi++) {
      /* Collect first: the hooks insert instructions into the list we walk. */
      int n = 0, cap = 16;
      LLVMValueRef *mem = malloc(sizeof *mem * (size_t)cap);
      for (LLVMValueRef in = LLVMGetFirstInstruction(bb); in; in = LLVMGetNextInstruction(in)) {
        if (LLVMGetInstructionOpcode(in) == LLVMCall) {
          LLVMValueRef callee = LLVMGetCalledValue(in);
          if (callee && LLVMIsAFunction(callee) && !LLVMIsDeclaration(callee))
            LLVMRemoveCallSiteEnumAttribute(in, LLVMAttributeFunctionIndex, memory_attr);
        }
        if (!memory_hooks || !is_memory(in)) continue;
        if (n == cap) mem = realloc(mem, sizeof *mem * (size_t)(cap *= 2));
        mem[n++] = in;
      }
      for (int k = 0; k < n; k++) instrument_memory(&h, mem[k], fi);
      free(mem);
      LLVMValueRef first = LLVMGetFirstInstruction(bb);
      while (first && (LLVMIsAPHINode(first) || LLVMIsALandingPadInst(first))) first = LLVMGetNextInstruction(first);
      LLVMPositionBuilderBefore(h.b, first);
      LLVMValueRef idx[2] = {LLVMConstInt(h.i64, 0, 0), LLVMConstInt(h.i64, (unsigned long long)(base + bi), 0)};
      LLVMValueRef slot = LLVMBuildInBoundsGEP2(h.b, counts_ty, counts, idx, 2, "");
      LLVMBuildAtomicRMW(h.b, LLVMAtomicRMWBinOpAdd, slot, LLVMConstInt(h.i64, 1, 0), LLVMAtomicOrderingMonotonic, 0);
      if (bi == 0) {
        LLVMValueRef args[2] = {h.rt, LLVMConstInt(h.i32, (unsigned long long)fi, 0)};
        LLVMBuildCall2(h.b, enter_ty, enter, args, 2, "");
      }
    }
    base += bi;
  }
  LLVMDisposeBuilder(h.b);
  free(fns);
  (void)d;
  return PT_OK;
}

static bool arg_matches(const pa_arg *a, LLVMTypeRef t) {
  LLVMTypeKind k = LLVMGetTypeKind(t);
  if (a->kind != PA_ARG_SCALAR) return k == LLVMPointerTypeKind;
  switch (a->type) {
  case PA_T_F32: return k == LLVMFloatTypeKind;
  case PA_T_F64: return k == LLVMDoubleTypeKind;
  case PA_T_I8: return k == LLVMIntegerTypeKind && LLVMGetIntTypeWidth(t) == 8;
  case PA_T_I16: return k == LLVMIntegerTypeKind && LLVMGetIntTypeWidth(t) == 16;
  case PA_T_I32: return k == LLVMIntegerTypeKind && LLVMGetIntTypeWidth(t) == 32;
  case PA_T_I64: return k == LLVMIntegerTypeKind && LLVMGetIntTypeWidth(t) == 64;
  }
  return false;
}

static char *type_text(LLVMTypeRef t) { return LLVMPrintTypeToString(t); }

int pa_spec_check(LLVMModuleRef mod, const char *source, const pa_run_spec *spec, pt_diag *d) {
  LLVMValueRef entry = LLVMGetNamedFunction(mod, spec->entry);
  if (!entry || LLVMIsDeclaration(entry))
    return pt_fail(d, PT_ERR_INPUT, "%s: entry function '%s' is not defined in the module", source, spec->entry);
  LLVMTypeRef fty = LLVMGlobalGetValueType(entry);
  unsigned np = LLVMCountParamTypes(fty);
  if (LLVMIsFunctionVarArg(fty)) return pt_fail(d, PT_ERR_UNSUPPORTED, "%s: entry '%s' is variadic", source, spec->entry);
  if ((int)np != spec->n_args)
    return pt_fail(d, PT_ERR_INPUT, "%s: run spec gives %d argument(s) but '%s' takes %u", source, spec->n_args,
                  spec->entry, np);
  LLVMTypeRef *pts = malloc(sizeof *pts * (np + 1));
  LLVMGetParamTypes(fty, pts);
  int err = PT_OK;
  for (unsigned i = 0; i < np && !err; i++)
    if (!arg_matches(&spec->args[i], pts[i])) {
      char *t = type_text(pts[i]);
      err = pt_fail(d, PT_ERR_INPUT, "%s: run spec args[%u] does not match parameter %u of '%s', of type %s", source,
                    i, i, spec->entry, t);
      LLVMDisposeMessage(t);
    }
  free(pts);
  return err;
}

int pa_add_main_wrapper(LLVMModuleRef mod, const pa_run_spec *spec, pt_diag *d) {
  int err = pa_spec_check(mod, "module", spec, d);
  if (err) return err;
  LLVMValueRef entry = LLVMGetNamedFunction(mod, spec->entry);
  LLVMTypeRef fty = LLVMGlobalGetValueType(entry);
  unsigned np = LLVMCountParamTypes(fty);
  LLVMTypeRef *pts = malloc(sizeof *pts * (np + 1));
  LLVMGetParamTypes(fty, pts);
  LLVMContextRef ctx = LLVMGetModuleContext(mod);
  LLVMTypeRef ptr = LLVMPointerTypeInContext(ctx, 0), i64 = LLVMInt64TypeInContext(ctx);
  LLVMTypeRef wty = LLVMFunctionType(LLVMVoidTypeInContext(ctx), &ptr, 1, 0);
  LLVMValueRef w = LLVMAddFunction(mod, PA_SYM_MAIN, wty);
  LLVMBuilderRef b = LLVMCreateBuilderInContext(ctx);
  LLVMPositionBuilderAtEnd(b, LLVMAppendBasicBlockInContext(ctx, w, "entry"));
  LLVMValueRef *args = malloc(sizeof *args * (np + 1));
  for (unsigned i = 0; i < np; i++) {
    LLVMValueRef idx = LLVMConstInt(i64, i, 0);
    LLVMValueRef slot = LLVMBuildGEP2(b, i64, LLVMGetParam(w, 0), &idx, 1, "");
    args[i] = LLVMBuildLoad2(b, pts[i], slot, ""); /* slots are 8 bytes, values little-endian */
  }
  LLVMBuildCall2(b, fty, entry, args, np, "");
  LLVMBuildRetVoid(b);
  LLVMDisposeBuilder(b);
  free(args);
  free(pts);
  return PT_OK;
}
