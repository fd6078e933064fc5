/* The middle and back ends: the target-neutral O3 pipeline (no TargetMachine, vectorizers
 * off, so the profiled IR is the IR that runs), then the host backend through ORC LLJIT,
 * or to .o/.s files; .ll is the neutral module itself. */
#include <llvm-c/Analysis.h>
#include <llvm-c/Error.h>
#include <llvm-c/IRReader.h>
#include <llvm-c/LLJIT.h>
#include <llvm-c/Target.h>
#include <llvm-c/Transforms/PassBuilder.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernel.h"

static pthread_once_t llvm_once = PTHREAD_ONCE_INIT;

static void llvm_init(void) {
  LLVMInitializeNativeTarget();
  LLVMInitializeNativeAsmPrinter();
  LLVMInitializeNativeAsmParser();
}

static int llvm_error(LLVMErrorRef err, pt_diag *d, const char *what) {
  char *msg = LLVMGetErrorMessage(err);
  int rc = pt_fail(d, PT_ERR_LLVM, "%s: %s", what, msg);
  LLVMDisposeErrorMessage(msg);
  return rc;
}

/* A TargetMachine for this host's triple at -O3: the host's CPU and features, or (cpu) that CPU
 * with the features LLVM knows it by. */
static LLVMTargetMachineRef target_machine(const char *cpu, LLVMCodeModel cm, pt_diag *d) {
  pthread_once(&llvm_once, llvm_init);
  char *triple = LLVMGetDefaultTargetTriple();
  LLVMTargetRef target;
  char *err = NULL;
  if (LLVMGetTargetFromTriple(triple, &target, &err)) {
    pt_fail(d, PT_ERR_LLVM, "no LLVM target for %s: %s", triple, err ? err : "");
    LLVMDisposeMessage(err);
    LLVMDisposeMessage(triple);
    return NULL;
  }
  char *host = cpu ? NULL : LLVMGetHostCPUName(), *features = cpu ? NULL : LLVMGetHostCPUFeatures();
  LLVMTargetMachineRef tm = LLVMCreateTargetMachine(target, triple, cpu ? cpu : host, features ? features : "",
                                                    LLVMCodeGenLevelAggressive, LLVMRelocPIC, cm);
  LLVMDisposeMessage(host);
  LLVMDisposeMessage(features);
  LLVMDisposeMessage(triple);
  if (!tm) pt_fail(d, PT_ERR_LLVM, "cannot create a TargetMachine for %s", cpu ? cpu : "this host");
  return tm;
}

LLVMTargetMachineRef pc_host_target_machine(LLVMCodeModel cm, pt_diag *d) { return target_machine(NULL, cm, d); }

static int run_middle_end(pc_kernel *k, bool host, pt_diag *d) {
  LLVMPassBuilderOptionsRef opts = LLVMCreatePassBuilderOptions();
  LLVMTargetMachineRef tm = NULL;
  if (host) {
    /* The "non-neutral" baseline: the host's TargetMachine drives O3, vectorizers on. */
    tm = pc_host_target_machine(LLVMCodeModelDefault, d);
    if (!tm) {
      LLVMDisposePassBuilderOptions(opts);
      return PT_ERR_LLVM;
    }
    char *triple = LLVMGetTargetMachineTriple(tm);
    LLVMSetTarget(k->mod, triple);
    LLVMDisposeMessage(triple);
    LLVMTargetDataRef dl = LLVMCreateTargetDataLayout(tm);
    LLVMSetModuleDataLayout(k->mod, dl);
    LLVMDisposeTargetData(dl);
    LLVMPassBuilderOptionsSetLoopVectorization(opts, 1);
    LLVMPassBuilderOptionsSetSLPVectorization(opts, 1);
  } else {
    /* Target-neutral: no TargetMachine, and no re-vectorization of our explicit vectors. */
    LLVMPassBuilderOptionsSetLoopVectorization(opts, 0);
    LLVMPassBuilderOptionsSetSLPVectorization(opts, 0);
  }
  LLVMPassBuilderOptionsSetLoopUnrolling(opts, 1);
  LLVMErrorRef err = LLVMRunPasses(k->mod, "default<O3>", tm, opts);
  LLVMDisposePassBuilderOptions(opts);
  if (tm) LLVMDisposeTargetMachine(tm);
  if (err) return llvm_error(err, d, "O3 pipeline");
  return 0;
}

pc_kernel *pc_lower(const pc_state *s, const pc_lower_opts *opts, pt_diag *d) {
  pthread_once(&llvm_once, llvm_init);
  double t0 = pt_now();
  pc_kernel *k = calloc(1, sizeof *k);
  snprintf(k->name, sizeof k->name, "portent_%s", s->prog->name);
  for (char *c = k->name; *c; c++)
    if (!((*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') || (*c >= '0' && *c <= '9'))) *c = '_';
  k->tsc = LLVMOrcCreateNewThreadSafeContext();
  k->ctx = LLVMOrcThreadSafeContextGetContext(k->tsc);
  if (pc_lower_module(s, k, d)) goto fail;
  char *msg = NULL;
  if (LLVMVerifyModule(k->mod, LLVMReturnStatusAction, &msg)) {
    pt_fail(d, PT_ERR_LLVM, "lowering %s produced invalid IR: %.400s", s->prog->name, msg ? msg : "");
    LLVMDisposeMessage(msg);
    goto fail;
  }
  LLVMDisposeMessage(msg);
  if (!(opts && opts->no_opt) && run_middle_end(k, opts && opts->host_specialized, d)) goto fail;
  k->compile_s = pt_now() - t0;
  return k;
fail:
  pc_kernel_free(k);
  return NULL;
}

pc_kernel *pc_kernel_from_ir(const pc_state *s, const char *ir, const char *name, pt_diag *d) {
  pc_lower_opts lo = {.no_opt = true};
  pc_kernel *k = pc_lower(s, &lo, d);
  if (!k) return NULL;
  LLVMDisposeModule(k->mod);
  k->mod = NULL;
  LLVMMemoryBufferRef buf = LLVMCreateMemoryBufferWithMemoryRangeCopy(ir, strlen(ir), name);
  char *msg = NULL;
  if (LLVMParseIRInContext(k->ctx, buf, &k->mod, &msg)) {
    pt_fail(d, PT_ERR_INPUT, "%s: %s", name, msg ? msg : "cannot parse IR");
    LLVMDisposeMessage(msg);
    k->mod = NULL;
    pc_kernel_free(k);
    return NULL;
  }
  LLVMValueRef fn = LLVMGetNamedFunction(k->mod, k->name);
  if (!fn || LLVMIsDeclaration(fn) || LLVMCountParams(fn) != 2) {
    pt_fail(d, PT_ERR_INPUT, "%s: no definition of `void %s(ptr buffers, ptr pool)`", name, k->name);
    pc_kernel_free(k);
    return NULL;
  }
  if (LLVMVerifyModule(k->mod, LLVMReturnStatusAction, &msg)) {
    pt_fail(d, PT_ERR_INPUT, "%s: invalid IR: %.400s", name, msg ? msg : "");
    LLVMDisposeMessage(msg);
    pc_kernel_free(k);
    return NULL;
  }
  LLVMDisposeMessage(msg);
  return k;
}

void pc_kernel_free(pc_kernel *k) {
  if (!k) return;
  if (k->jit) LLVMOrcDisposeLLJIT(k->jit);
  if (k->mod) LLVMDisposeModule(k->mod);
  if (k->tsc) LLVMOrcDisposeThreadSafeContext(k->tsc);
  free(k);
}

int pc_kernel_n_buffers(const pc_kernel *k) { return k->n_buffers; }
int pc_kernel_buffer_op(const pc_kernel *k, int i) { return k->buffer_op[i]; }
int64_t pc_kernel_buffer_numel(const pc_kernel *k, int i) { return k->buffer_numel[i]; }
int pc_kernel_n_parallel(const pc_kernel *k) { return k->n_parallel; }
const char *pc_kernel_parallel_fn(const pc_kernel *k, int i) { return k->parallel_names[i]; }
double pc_kernel_compile_seconds(const pc_kernel *k) { return k->compile_s; }
pc_kernel_fn pc_kernel_entry(pc_kernel *k) { return k->entry; }
LLVMModuleRef pc_kernel_module(pc_kernel *k) { return k->mod; }
const char *pc_kernel_name(const pc_kernel *k) { return k->name; }

void pc_host_target_string(char *buf, size_t cap) {
  char *cpu = LLVMGetHostCPUName();
  snprintf(buf, cap, "llvm -keys=cpu -mcpu=%s", cpu);
  LLVMDisposeMessage(cpu);
}

char *pc_kernel_ir(pc_kernel *k) {
  char *s = LLVMPrintModuleToString(k->mod);
  char *r = strdup(s);
  LLVMDisposeMessage(s);
  return r;
}

static int emit_native(pc_kernel *k, const char *path, const char *cpu, LLVMCodeGenFileType kind, pt_diag *d) {
  LLVMTargetMachineRef tm = target_machine(cpu, LLVMCodeModelDefault, d);
  if (!tm) return PT_ERR_LLVM;
  LLVMModuleRef m = LLVMCloneModule(k->mod);
  char *triple = LLVMGetTargetMachineTriple(tm);
  LLVMSetTarget(m, triple);
  LLVMDisposeMessage(triple);
  LLVMTargetDataRef dl = LLVMCreateTargetDataLayout(tm);
  LLVMSetModuleDataLayout(m, dl);
  LLVMDisposeTargetData(dl);
  char *err = NULL;
  /* Written beside the destination, then renamed: no half-written output on failure. */
  size_t n = strlen(path) + 16;
  char *tmp = malloc(n);
  snprintf(tmp, n, "%s.tmp", path);
  int rc = 0;
  if (LLVMTargetMachineEmitToFile(tm, m, tmp, kind, &err)) {
    rc = pt_fail(d, PT_ERR_IO, "%s: %s", path, err ? err : "cannot emit");
    LLVMDisposeMessage(err);
    remove(tmp);
  } else if (rename(tmp, path) != 0) {
    rc = pt_fail(d, PT_ERR_IO, "%s: cannot write", path);
    remove(tmp);
  }
  free(tmp);
  LLVMDisposeModule(m);
  LLVMDisposeTargetMachine(tm);
  return rc;
}

int pc_kernel_emit_cpu(pc_kernel *k, const char *path, const char *cpu, pt_diag *d) {
  const char *dot = strrchr(path, '.');
  if (dot && strcmp(dot, ".o") == 0) return emit_native(k, path, cpu, LLVMObjectFile, d);
  if (dot && strcmp(dot, ".s") == 0) return emit_native(k, path, cpu, LLVMAssemblyFile, d);
  if (dot && strcmp(dot, ".ll") == 0) {
    char *ir = pc_kernel_ir(k);
    int rc = pt_write_file_atomic(path, ir, strlen(ir), d);
    free(ir);
    return rc;
  }
  return pt_fail(d, PT_ERR_INPUT, "%s: output must end in .ll, .o or .s", path);
}

int pc_kernel_emit(pc_kernel *k, const char *path, pt_diag *d) { return pc_kernel_emit_cpu(k, path, NULL, d); }

int pc_kernel_jit(pc_kernel *k, pt_diag *d) {
  if (k->entry) return 0;
  double t0 = pt_now();
  LLVMTargetMachineRef tm = pc_host_target_machine(LLVMCodeModelJITDefault, d);
  if (!tm) return PT_ERR_LLVM;
  LLVMOrcLLJITBuilderRef builder = LLVMOrcCreateLLJITBuilder();
  LLVMOrcLLJITBuilderSetJITTargetMachineBuilder(builder, LLVMOrcJITTargetMachineBuilderCreateFromTargetMachine(tm));
  LLVMErrorRef err = LLVMOrcCreateLLJIT(&k->jit, builder);
  if (err) {
    k->jit = NULL;
    return llvm_error(err, d, "creating the JIT");
  }
  LLVMOrcJITDylibRef jd = LLVMOrcLLJITGetMainJITDylib(k->jit);
  /* The runtime the kernel calls, and libm for exp and friends. */
  LLVMOrcCSymbolMapPair sym = {LLVMOrcLLJITMangleAndIntern(k->jit, "pt_parallel_for"),
                               {(LLVMOrcJITTargetAddress)(uintptr_t)&pt_parallel_for,
                                {LLVMJITSymbolGenericFlagsExported | LLVMJITSymbolGenericFlagsCallable, 0}}};
  err = LLVMOrcJITDylibDefine(jd, LLVMOrcAbsoluteSymbols(&sym, 1));
  if (err) return llvm_error(err, d, "defining runtime symbols");
  LLVMOrcDefinitionGeneratorRef gen;
  err = LLVMOrcCreateDynamicLibrarySearchGeneratorForProcess(&gen, LLVMOrcLLJITGetGlobalPrefix(k->jit), NULL, NULL);
  if (err) return llvm_error(err, d, "process symbols");
  LLVMOrcJITDylibAddGenerator(jd, gen);
  LLVMModuleRef m = LLVMCloneModule(k->mod);
  LLVMOrcThreadSafeModuleRef tsm = LLVMOrcCreateNewThreadSafeModule(m, k->tsc);
  err = LLVMOrcLLJITAddLLVMIRModule(k->jit, jd, tsm);
  if (err) {
    LLVMOrcDisposeThreadSafeModule(tsm);
    return llvm_error(err, d, "adding the module to the JIT");
  }
  LLVMOrcExecutorAddress addr = 0;
  err = LLVMOrcLLJITLookup(k->jit, &addr, k->name);
  if (err) return llvm_error(err, d, "compiling the kernel");
  k->entry = (pc_kernel_fn)(uintptr_t)addr;
  k->compile_s += pt_now() - t0;
  return 0;
}
