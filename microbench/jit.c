/* The host JIT the microbenchmarks run in: an ORC LLJIT whose target machine is this CPU
 * with all its features (LLVMGetHostCPUName/Features), plus the same target machine for
 * printing the assembly a kernel really executes (the kernels' self-check). */
#include <llvm-c/Analysis.h>
#include <llvm-c/Error.h>
#include <llvm-c/LLJIT.h>
#include <llvm-c/Orc.h>
#include <llvm-c/Target.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

struct pmb_jit {
  LLVMOrcThreadSafeContextRef tsc;
  LLVMContextRef ctx;
  LLVMOrcLLJITRef lljit;
  LLVMTargetMachineRef tm; /* for assembly output */
  char *triple, *cpu, *features;
  const char *layout;
};

static LLVMTargetMachineRef host_tm(pmb_jit *j, pt_diag *d) {
  LLVMTargetRef target;
  char *err = NULL;
  if (LLVMGetTargetFromTriple(j->triple, &target, &err)) {
    pt_fail(d, PT_ERR_LLVM, "no LLVM target for %s: %s", j->triple, err ? err : "?");
    LLVMDisposeMessage(err);
    return NULL;
  }
  return LLVMCreateTargetMachine(target, j->triple, j->cpu, j->features, LLVMCodeGenLevelAggressive, LLVMRelocPIC,
                                 LLVMCodeModelJITDefault);
}

static int llvm_error(LLVMErrorRef e, const char *what, pt_diag *d) {
  char *msg = LLVMGetErrorMessage(e);
  int r = pt_fail(d, PT_ERR_LLVM, "%s: %s", what, msg);
  LLVMDisposeErrorMessage(msg);
  return r;
}

pmb_jit *pmb_jit_new(pt_diag *d) {
  if (LLVMInitializeNativeTarget() || LLVMInitializeNativeAsmPrinter()) {
    pt_fail(d, PT_ERR_LLVM, "LLVM has no native target for this host");
    return NULL;
  }
  pmb_jit *j = calloc(1, sizeof *j);
  j->triple = LLVMGetDefaultTargetTriple();
  j->cpu = LLVMGetHostCPUName();
  j->features = LLVMGetHostCPUFeatures();
  j->tm = host_tm(j, d);
  LLVMTargetMachineRef jit_tm = j->tm ? host_tm(j, d) : NULL;
  if (!jit_tm) goto fail;
  LLVMOrcLLJITBuilderRef b = LLVMOrcCreateLLJITBuilder();
  LLVMOrcLLJITBuilderSetJITTargetMachineBuilder(b, LLVMOrcJITTargetMachineBuilderCreateFromTargetMachine(jit_tm));
  LLVMErrorRef e = LLVMOrcCreateLLJIT(&j->lljit, b); /* consumes b */
  if (e) {
    llvm_error(e, "creating the JIT", d);
    j->lljit = NULL;
    goto fail;
  }
  j->tsc = LLVMOrcCreateNewThreadSafeContext();
  j->ctx = LLVMOrcThreadSafeContextGetContext(j->tsc);
  j->layout = LLVMOrcLLJITGetDataLayoutStr(j->lljit);
  return j;
fail:
  pmb_jit_free(j);
  return NULL;
}

void pmb_jit_free(pmb_jit *j) {
  if (!j) return;
  if (j->lljit) LLVMOrcDisposeLLJIT(j->lljit);
  if (j->tsc) LLVMOrcDisposeThreadSafeContext(j->tsc);
  if (j->tm) LLVMDisposeTargetMachine(j->tm);
  LLVMDisposeMessage(j->triple);
  LLVMDisposeMessage(j->cpu);
  LLVMDisposeMessage(j->features);
  free(j);
}

LLVMContextRef pmb_jit_context(pmb_jit *j) { return j->ctx; }
const char *pmb_jit_cpu(const pmb_jit *j) { return j->cpu; }

LLVMModuleRef pmb_jit_module(pmb_jit *j, const char *name) {
  LLVMModuleRef m = LLVMModuleCreateWithNameInContext(name, j->ctx);
  LLVMSetTarget(m, j->triple);
  LLVMSetDataLayout(m, j->layout);
  return m;
}

pmb_loop_frame pmb_loop_frame_new(pmb_jit *j, LLVMModuleRef m, const char *name, int n_ptrs) {
  LLVMContextRef c = j->ctx;
  LLVMTypeRef params[PMB_LOOP_MAX_PTRS + 1] = {LLVMInt64TypeInContext(c)};
  if (n_ptrs > PMB_LOOP_MAX_PTRS) n_ptrs = PMB_LOOP_MAX_PTRS;
  for (int k = 1; k <= n_ptrs; k++) params[k] = LLVMPointerTypeInContext(c, 0);
  pmb_loop_frame f;
  f.fn = LLVMAddFunction(m, name, LLVMFunctionType(LLVMVoidTypeInContext(c), params, (unsigned)n_ptrs + 1, 0));
  f.entry = LLVMAppendBasicBlockInContext(c, f.fn, "entry");
  f.loop = LLVMAppendBasicBlockInContext(c, f.fn, "loop");
  f.done = LLVMAppendBasicBlockInContext(c, f.fn, "done");
  f.b = LLVMCreateBuilderInContext(c);
  LLVMPositionBuilderAtEnd(f.b, f.entry);
  return f;
}

bool pmb_jit_has(const pmb_jit *j, const char *feature) {
  size_t n = strlen(feature);
  for (const char *p = j->features; (p = strstr(p, feature)); p += n) {
    bool starts = p > j->features && p[-1] == '+';
    bool ends = p[n] == ',' || p[n] == 0;
    if (starts && ends) return true;
  }
  return false;
}

char *pmb_jit_asm(pmb_jit *j, LLVMModuleRef m, pt_diag *d) {
  LLVMModuleRef copy = LLVMCloneModule(m); /* code generation rewrites the IR it runs on */
  char *err = NULL;
  LLVMMemoryBufferRef buf = NULL;
  if (LLVMTargetMachineEmitToMemoryBuffer(j->tm, copy, LLVMAssemblyFile, &err, &buf)) {
    pt_fail(d, PT_ERR_LLVM, "emitting assembly: %s", err ? err : "?");
    LLVMDisposeMessage(err);
    LLVMDisposeModule(copy);
    return NULL;
  }
  size_t n = LLVMGetBufferSize(buf);
  char *text = malloc(n + 1);
  memcpy(text, LLVMGetBufferStart(buf), n);
  text[n] = 0;
  LLVMDisposeMemoryBuffer(buf);
  LLVMDisposeModule(copy);
  return text;
}

int pmb_jit_add(pmb_jit *j, LLVMModuleRef m, pt_diag *d) {
  char *msg = NULL;
  if (LLVMVerifyModule(m, LLVMReturnStatusAction, &msg)) {
    int r = pt_fail(d, PT_ERR_LLVM, "generated kernel module is invalid: %s", msg);
    LLVMDisposeMessage(msg);
    LLVMDisposeModule(m);
    return r;
  }
  LLVMDisposeMessage(msg);
  LLVMOrcThreadSafeModuleRef tsm = LLVMOrcCreateNewThreadSafeModule(m, j->tsc);
  LLVMErrorRef e = LLVMOrcLLJITAddLLVMIRModule(j->lljit, LLVMOrcLLJITGetMainJITDylib(j->lljit), tsm);
  if (e) {
    LLVMOrcDisposeThreadSafeModule(tsm);
    return llvm_error(e, "adding kernels to the JIT", d);
  }
  return PT_OK;
}

void *pmb_jit_lookup(pmb_jit *j, const char *name, pt_diag *d) {
  LLVMOrcExecutorAddress addr = 0;
  LLVMErrorRef e = LLVMOrcLLJITLookup(j->lljit, &addr, name);
  if (e) {
    llvm_error(e, name, d);
    return NULL;
  }
  return (void *)(uintptr_t)addr;
}
