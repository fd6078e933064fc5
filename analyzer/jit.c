/* The JIT that compiles instrumented modules, in the process that profiles (session 16): one
 * LLJIT for the process's life, its code and LLVM's state already warm, each module under a
 * resource tracker that is removed after its run. A forked child compiled each module until
 * session 15 and paid for a cold LLVM every time: page faults in LLVM's code and heap, 2.6 ms
 * of mm512 default's 8.5 ms compile (docs/validation.md, "Session 16"). The child now only
 * runs the compiled kernel (run.c), so a kernel that crashes or hangs still cannot take the
 * caller down; a crash inside LLVM's codegen would, as it would in the caller's native compiles. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <llvm-c/Error.h>
#include <llvm-c/IRReader.h>
#include <llvm-c/LLJIT.h>
#include <llvm-c/Orc.h>
#include <llvm-c/Support.h>
#include <llvm-c/TargetMachine.h>

#include "internal.h"

/* Codegen work that moves no access: the hooks see the IR's addresses whatever the machine
 * code, so the instrumented compile turns off what costs compile time without changing them
 * (profiles byte for byte the same, docs/validation.md sessions 9, 11, 14 and 16). Loop
 * strength reduction (IVUsers building SCEVs of the sampling hash's address arithmetic: 250
 * of dwconv_mb's 430 M compile instructions); the pre-RA machine scheduler and the AVX-512
 * domain reassignment (with the post-RA scheduler, 59% and then 34% of llc's instructions on
 * mm512 random seed 8's 9,000-line module); SelectionDAG where FastISel can select the block
 * (the scalar hooks; the vector kernel still falls back to SelectionDAG); machine LICM, CSE,
 * sinking and copy propagation (20-38% of what was left; the instrumented runs within +-5%).
 * Not the register allocator: the fast one made the runs 1.7-2.2x slower. The C API has no
 * per-pass switch and LLVM's options are the process's, which also compiles native kernels
 * (compiler/jit.c): `restore` puts back each option's default around every instrumented
 * compile (the native code is then byte for byte what it was, tested). The post-RA scheduler
 * is not among them (LLVM reads its option as set-or-not, which cannot be undone): the JIT
 * compiles at O1, where it does not run, and where the rest of codegen is what it is at O2
 * with these options (identical assembly on mm512 and bert_qkv defaults' modules). */
static void codegen_options(bool cheap) {
  static const char *const cheap_args[] = {"portent-analyzer-run",         "-disable-lsr",
                                           "-enable-misched=false",        "-disable-x86-domain-reassignment",
                                           "-fast-isel",                   "-disable-machine-licm",
                                           "-disable-machine-cse",         "-disable-machine-sink",
                                           "-disable-copyprop"};
  /* -enable-misched=true is what X86's subtargets choose unset; -fast-isel=false is unset's
   * choice above O0 (portent's native compiles are O3) */
  static const char *const restore_args[] = {"portent-analyzer-run",
                                             "-disable-lsr=false",
                                             "-enable-misched=true",
                                             "-disable-x86-domain-reassignment=false",
                                             "-fast-isel=false",
                                             "-disable-machine-licm=false",
                                             "-disable-machine-cse=false",
                                             "-disable-machine-sink=false",
                                             "-disable-copyprop=false"};
  _Static_assert(PT_ARRAY_LEN(cheap_args) == PT_ARRAY_LEN(restore_args), "one default per option");
  const char *const *args = cheap ? cheap_args : restore_args;
  LLVMParseCommandLineOptions((int)PT_ARRAY_LEN(cheap_args), args, NULL);
}

/* The JIT's target: the host's CPU and features, except that masked gathers and scatters are
 * scalarized. LLVM 19 can allocate an AVX-512 gather's destination to its index register in
 * the instrumented module (conv_r50_2's 56-lane gathers: `vgatherqps (%rax,%zmm0,4), %ymm0`),
 * which the CPU refuses (#UD, SIGILL). The hooks are in the IR, so scalarized lanes make the
 * same accesses and the profile is unchanged. O1: see codegen_options. */
static LLVMOrcLLJITBuilderRef jit_builder(void) {
  char *triple = LLVMGetDefaultTargetTriple(), *err = NULL;
  LLVMTargetRef target;
  if (LLVMGetTargetFromTriple(triple, &target, &err)) {
    LLVMDisposeMessage(err);
    LLVMDisposeMessage(triple);
    return NULL;
  }
  char *cpu = LLVMGetHostCPUName(), *host = LLVMGetHostCPUFeatures();
  size_t n = strlen(host) + 64;
  char *features = malloc(n);
  snprintf(features, n, "%s%s+prefer-no-gather,+prefer-no-scatter", host, host[0] ? "," : "");
  LLVMTargetMachineRef tm = LLVMCreateTargetMachine(target, triple, cpu, features, LLVMCodeGenLevelLess, LLVMRelocPIC,
                                                    LLVMCodeModelJITDefault);
  free(features);
  LLVMDisposeMessage(cpu);
  LLVMDisposeMessage(host);
  LLVMDisposeMessage(triple);
  if (!tm) return NULL;
  LLVMOrcLLJITBuilderRef b = LLVMOrcCreateLLJITBuilder();
  LLVMOrcLLJITBuilderSetJITTargetMachineBuilder(b, LLVMOrcJITTargetMachineBuilderCreateFromTargetMachine(tm));
  return b;
}

/* What every module resolves the same way: the process's own symbols (libc, libm) and
 * portent's hooks and runtime, which are in a static library, invisible to dlsym. A run's
 * counters and tracker are constants in its module (pa_jit_compile's caller). */
static LLVMErrorRef define_runtime(LLVMOrcLLJITRef jit) {
  LLVMOrcJITDylibRef jd = LLVMOrcLLJITGetMainJITDylib(jit);
  LLVMOrcDefinitionGeneratorRef gen;
  LLVMErrorRef err = LLVMOrcCreateDynamicLibrarySearchGeneratorForProcess(&gen, LLVMOrcLLJITGetGlobalPrefix(jit), NULL, NULL);
  if (err) return err;
  LLVMOrcJITDylibAddGenerator(jd, gen);
  struct {
    const char *name;
    void *addr;
  } syms[] = {
      {PA_SYM_ENTER, (void *)pa_rt_enter}, {PA_SYM_ACCESS, (void *)pa_rt_access},          {PA_SYM_FLUSH, (void *)pa_rt_flush},
      {PA_SYM_PHASE, (void *)pa_rt_phase}, {PA_SYM_BLOCK, (void *)pa_rt_block},            {"pt_parallel_for", (void *)pt_parallel_for},
      {"pt_pool_threads", (void *)pt_pool_threads},
  };
  LLVMOrcCSymbolMapPair pairs[PT_ARRAY_LEN(syms)];
  for (size_t i = 0; i < PT_ARRAY_LEN(syms); i++) {
    pairs[i].Name = LLVMOrcLLJITMangleAndIntern(jit, syms[i].name);
    pairs[i].Sym.Address = (LLVMOrcExecutorAddress)(uintptr_t)syms[i].addr;
    pairs[i].Sym.Flags.GenericFlags = LLVMJITSymbolGenericFlagsExported | LLVMJITSymbolGenericFlagsCallable;
    pairs[i].Sym.Flags.TargetFlags = 0;
  }
  return LLVMOrcJITDylibDefine(jd, LLVMOrcAbsoluteSymbols(pairs, PT_ARRAY_LEN(syms)));
}

/* ORC reports lookup failures (e.g. "Symbols not found: [ f ]") here rather than in the
 * error lookup returns: keep the first, it names the cause. */
static char session_error[512];
static void report_session_error(void *ctx, LLVMErrorRef e) {
  (void)ctx;
  char *m = LLVMGetErrorMessage(e);
  if (!session_error[0]) snprintf(session_error, sizeof session_error, "%s", m);
  LLVMDisposeErrorMessage(m);
}

/* Made on the first compile; its tasks run in place (no compile threads), so the process
 * forks its runs with no thread of LLVM's running. */
static LLVMOrcLLJITRef jit;
static char jit_error[512];
static pthread_once_t jit_once = PTHREAD_ONCE_INIT;
static pthread_mutex_t jit_lock = PTHREAD_MUTEX_INITIALIZER; /* one compile at a time: the options are global */

static void make_jit(void) {
  LLVMInitializeNativeTarget();
  LLVMInitializeNativeAsmPrinter();
  LLVMOrcLLJITRef j;
  LLVMErrorRef err = LLVMOrcCreateLLJIT(&j, jit_builder());
  if (!err) {
    err = define_runtime(j);
    if (err) LLVMOrcDisposeLLJIT(j);
  }
  if (err) {
    char *m = LLVMGetErrorMessage(err);
    snprintf(jit_error, sizeof jit_error, "%s", m);
    LLVMDisposeErrorMessage(m);
    return;
  }
  LLVMOrcExecutionSessionSetErrorReporter(LLVMOrcLLJITGetExecutionSession(j), report_session_error, NULL);
  jit = j;
}

static int jit_fail(char *error, size_t cap, const char *what, LLVMErrorRef e) {
  char *m = LLVMGetErrorMessage(e);
  snprintf(error, cap, "%s: %s", what, session_error[0] ? session_error : m);
  LLVMDisposeErrorMessage(m);
  return -1;
}

int pa_jit_compile(LLVMModuleRef mod, const char *entry, pa_jit_code *out, char *error, size_t cap) {
  memset(out, 0, sizeof *out);
  pthread_once(&jit_once, make_jit);
  if (!jit) {
    LLVMDisposeModule(mod);
    snprintf(error, cap, "cannot create the JIT: %s", jit_error);
    return -1;
  }
  pthread_mutex_lock(&jit_lock);
  session_error[0] = 0;
  /* The module stays in its own context, which nothing else uses meanwhile; the thread-safe
   * context is the JIT's formality and locks only itself. */
  LLVMOrcThreadSafeContextRef tsc = LLVMOrcCreateNewThreadSafeContext();
  LLVMOrcThreadSafeModuleRef tsm = LLVMOrcCreateNewThreadSafeModule(mod, tsc);
  LLVMOrcDisposeThreadSafeContext(tsc);
  LLVMOrcResourceTrackerRef rt = LLVMOrcJITDylibCreateResourceTracker(LLVMOrcLLJITGetMainJITDylib(jit));
  int rc = 0;
  LLVMErrorRef err = LLVMOrcLLJITAddLLVMIRModuleWithRT(jit, rt, tsm);
  if (err) /* the JIT owns the module either way */
    rc = jit_fail(error, cap, "cannot add the module to the JIT", err);
  else {
    codegen_options(true);
    err = LLVMOrcLLJITLookup(jit, &out->entry, entry);
    codegen_options(false);
    if (err) rc = jit_fail(error, cap, "cannot compile the module", err);
  }
  pthread_mutex_unlock(&jit_lock);
  out->tracker = rt;
  if (rc) pa_jit_release(out);
  return rc;
}

void pa_jit_release(pa_jit_code *c) {
  if (!c->tracker) return;
  pthread_mutex_lock(&jit_lock);
  LLVMErrorRef err = LLVMOrcResourceTrackerRemove(c->tracker);
  if (err) LLVMConsumeError(err); /* the code stays mapped: only memory is lost */
  LLVMOrcReleaseResourceTracker(c->tracker);
  pthread_mutex_unlock(&jit_lock);
  c->tracker = NULL;
  c->entry = 0;
}
