/* The instrumented run: a forked child instruments its copy of the module, JITs it
 * for the host (ORC LLJIT, hooks as absolute symbols), calls the entry on seeded random
 * arguments held between guard pages, and leaves counts and reuse histograms in shared
 * memory. The parent enforces the time limit, so a crash or hang is an error, not our death. */
#define _GNU_SOURCE /* pipe2, ppoll */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdarg.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <poll.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <llvm-c/Analysis.h>
#include <llvm-c/Error.h>
#include <llvm-c/IRReader.h>
#include <llvm-c/LLJIT.h>
#include <llvm-c/Orc.h>
#include <llvm-c/Support.h>
#include <llvm-c/Target.h>
#include <llvm-c/TargetMachine.h>

#include "internal.h"

typedef struct {
  volatile int status; /* 1 when the child finished and copied its results */
  int threads;
  double seconds;
  char error[768];
} shared_hdr;

typedef struct {
  shared_hdr *hdr;
  uint64_t *counts, *masks, *hist, *repeats;
  size_t bytes;
} shared_region;

/* A buffer argument between two PROT_NONE pages: an overrun faults, and the fault address
 * names the argument. The end is 64-byte aligned, so overruns under 64 bytes go unseen. */
typedef struct {
  char *map;
  size_t map_len;
  char *lo, *hi; /* the user range */
  int arg, sub;
  int64_t count;
} guarded;

typedef struct {
  shared_hdr *hdr;
  guarded *bufs;
  int n_bufs;
} crash_info;

/* The one mutable static: a signal handler has no other way to reach its data. It is set
 * only in the forked child, which exits right after the run. */
static crash_info *child_crash;

static void on_crash(int sig, siginfo_t *si, void *uc) {
  (void)uc;
  crash_info *c = child_crash;
  if (c) {
    char *addr = si->si_addr;
    const char *what = sig == SIGSEGV ? "SIGSEGV" : sig == SIGBUS ? "SIGBUS" : sig == SIGFPE ? "SIGFPE" : "SIGILL";
    int found = 0;
    for (int i = 0; i < c->n_bufs && !found; i++) {
      guarded *g = &c->bufs[i];
      if (addr >= g->map && addr < g->map + g->map_len) {
        found = 1;
        long off = (long)(addr - g->lo);
        if (g->sub >= 0)
          snprintf(c->hdr->error, sizeof c->hdr->error,
                   "kernel crashed (%s): access at byte offset %ld of args[%d].counts[%d] (a buffer of %lld "
                   "elements): the buffer is too small for the kernel",
                   what, off, g->arg, g->sub, (long long)g->count);
        else
          snprintf(c->hdr->error, sizeof c->hdr->error,
                   "kernel crashed (%s): access at byte offset %ld of args[%d] (a buffer of %lld elements): the "
                   "buffer is too small for the kernel",
                   what, off, g->arg, (long long)g->count);
      }
    }
    if (!found)
      snprintf(c->hdr->error, sizeof c->hdr->error, "kernel crashed (%s) at address %p, outside every argument buffer",
               what, (void *)addr);
  }
  _exit(3);
}

typedef struct {
  void (*fn)(uint64_t *slots);
  uint64_t *slots;
  double seconds;
} kernel_call;

static void *run_kernel(void *arg) {
  kernel_call *c = arg;
  /* The crash handler's own stack (a stack overflow must still be reported); the previous
   * one is put back, as a sanitizer runtime frees its own at thread exit. */
  stack_t ss = {.ss_sp = malloc(1 << 16), .ss_size = 1 << 16}, old;
  sigaltstack(&ss, &old);
  double t0 = pt_now();
  c->fn(c->slots);
  c->seconds = pt_now() - t0;
  sigaltstack(&old, NULL);
  free(ss.ss_sp);
  return NULL;
}

static size_t round_up(size_t x, size_t to) { return (x + to - 1) / to * to; }

#ifndef MAP_FIXED_NOREPLACE
#define MAP_FIXED_NOREPLACE 0x100000 /* Linux 4.17 */
#endif
/* Buffers and the kernel's stack are mapped at the same addresses in every run (from a base
 * far from where Linux puts the heap, libraries and thread stacks), so SHARDS, which samples
 * by a hash of the line address, picks the same lines each time and sampled profiles are
 * reproducible too. Where the range is taken, any address will do (and only that is lost). */
#define FIXED_BASE ((uintptr_t)0x200000000000ULL)

static void *map_at(uintptr_t *cursor, size_t len, int flags) {
  void *want = (void *)*cursor;
  void *p = mmap(want, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE | flags, -1, 0);
  if (p != MAP_FAILED && p != want) { /* a kernel that ignores the flag treats it as a hint */
    munmap(p, len);
    p = MAP_FAILED;
  }
  if (p == MAP_FAILED) p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | flags, -1, 0);
  *cursor += round_up(len, (size_t)1 << 21) + ((size_t)1 << 21); /* 2 MiB apart */
  return p;
}

static const size_t elem_bytes[] = {1, 2, 4, 8, 4, 8}; /* pa_scalar_type order */

static void *guarded_alloc(guarded *g, pa_scalar_type t, int64_t count, pt_rng *rng, uintptr_t *cursor) {
  size_t page = (size_t)sysconf(_SC_PAGESIZE), bytes = (size_t)count * elem_bytes[t];
  size_t body = round_up(bytes, page);
  g->map_len = body + 2 * page;
  g->map = map_at(cursor, g->map_len, 0);
  if (g->map == MAP_FAILED) return NULL;
  mprotect(g->map, page, PROT_NONE);
  mprotect(g->map + page + body, page, PROT_NONE);
  /* Huge pages where the body spans aligned 2 MiB: half the fill's CPU is first-touch faults
   * (bert_ffn1's 12 MB: 8.2 -> 4.5 ms), and addresses, hence profiles, do not move. */
  if (body >= ((size_t)2 << 20)) madvise(g->map + page, body, MADV_HUGEPAGE);
  g->hi = g->map + page + body;
  g->lo = g->hi - round_up(bytes, 64);
  g->count = count;
  const uint64_t s0 = rng->s;
  pa_fill_random(g->lo, t, count, s0);
  rng->s = s0 + (uint64_t)(count > 0 ? count : 0) * PT_RNG_STEP;
  return g->lo;
}

/* The child's error text (cut to the shared header's size) for the parent to report. */
static int child_fail(shared_hdr *h, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int child_fail(shared_hdr *h, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(h->error, sizeof h->error, fmt, ap);
  va_end(ap);
  return 2;
}

static int child_llvm_fail(shared_hdr *h, const char *what, LLVMErrorRef e) {
  char *m = LLVMGetErrorMessage(e);
  snprintf(h->error, sizeof h->error, "%s: %s", what, m);
  LLVMDisposeErrorMessage(m);
  return 2;
}

/* ORC reports lookup failures (e.g. "Symbols not found: [ f ]") here rather than in the
 * error lookup returns: keep the first, it names the cause. */
static void report_session_error(void *ctx, LLVMErrorRef e) {
  shared_hdr *h = ctx;
  char *m = LLVMGetErrorMessage(e);
  if (!h->error[0]) snprintf(h->error, sizeof h->error, "%s", m);
  LLVMDisposeErrorMessage(m);
}

/* Codegen work that moves no access: the hooks see the IR's addresses whatever the machine
 * code, so the child turns off what costs compile time without changing them (profiles byte
 * for byte the same, docs/validation.md sessions 9, 11 and 14; a kernel's static local arrays,
 * which on the stack sit where the frame's spill slots leave them, are moved to a region of their
 * own by the instrumentation, locals.c, since session 15). Loop strength reduction (IVUsers
 * building SCEVs of the sampling hash's address arithmetic: 250 of dwconv_mb's 430 M compile
 * instructions); the pre- and post-RA machine schedulers and the AVX-512 domain reassignment
 * (on mm512 random seed 8's 9,000-line module, 59% and then 34% of llc's instructions);
 * SelectionDAG where FastISel can select the block (the scalar hooks, the tracker calls; the
 * vector kernel still falls back to SelectionDAG); and machine LICM, CSE, sinking and copy
 * propagation (20-22% of what was left on the suite's defaults, 38% on mm512 random seed 8's
 * module; the instrumented runs within +-5%). Not the register allocator: the fast one made
 * the runs 1.7-2.2x slower (spills at every block end), and `-regalloc=` is read once per
 * process, by the parent's warm-up compile. The C API has no per-pass switch; this process is the forked
 * child, so the global options reach only its own compile (an option LLVM no longer knows is
 * ignored, not fatal: errors go to nulls()). */
static void cheapen_codegen(void) {
  const char *args[] = {"portent-analyzer-run",     "-disable-lsr",
                        "-enable-misched=false",    "-post-RA-scheduler=false",
                        "-disable-x86-domain-reassignment", "-fast-isel",
                        "-disable-machine-licm",    "-disable-machine-cse",
                        "-disable-machine-sink",    "-disable-copyprop"};
  LLVMParseCommandLineOptions((int)PT_ARRAY_LEN(args), args, NULL);
}

/* The child's JIT: the host's CPU and features, except that masked gathers and scatters are
 * scalarized. LLVM 19 can allocate an AVX-512 gather's destination to its index register in
 * the instrumented module (conv_r50_2's 56-lane gathers: `vgatherqps (%rax,%zmm0,4), %ymm0`),
 * which the CPU refuses (#UD, SIGILL). The hooks are in the IR, so scalarized lanes make the
 * same accesses and the profile is unchanged. NULL: let LLJIT detect the host itself. */
static LLVMOrcLLJITBuilderRef jit_builder_without_gathers(void) {
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
  LLVMTargetMachineRef tm = LLVMCreateTargetMachine(target, triple, cpu, features, LLVMCodeGenLevelDefault, LLVMRelocPIC,
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

/* What every child's JIT resolves the same way: the process's own symbols (libc, libm) and
 * portent's hooks and runtime, which are in a static library, invisible to dlsym. */
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

/* The JIT the children compile with, made once by the parent before its first fork and never
 * used by it again: each child adds its module to its own copy (fork) and compiles. Made in
 * every child, it cost 1.3 ms there (three target machines: ours, LLJIT's data-layout probe,
 * its compiler's); the warm-up compile below also builds the X86 subtarget (the target
 * lowering's action tables, GlobalISel's legalizer) and codegen's one-time state once, not in
 * every child (docs/validation.md, "Session 14"). The parent's codegen options are LLVM's
 * defaults (cheapen_codegen runs in the child), and the subtarget does not depend on them.
 * The LLJIT starts no thread (no compile threads: its tasks run in place), so forking beside
 * it is what forking was before. NULL where it could not be made: the child then makes its
 * own, and reports why that failed. */
static LLVMOrcLLJITRef template_jit;
static pthread_once_t template_once = PTHREAD_ONCE_INIT;

static void make_template_jit(void) {
  LLVMInitializeNativeTarget();
  LLVMInitializeNativeAsmPrinter();
  LLVMOrcLLJITRef jit;
  LLVMErrorRef err = LLVMOrcCreateLLJIT(&jit, jit_builder_without_gathers());
  if (!err) err = define_runtime(jit);
  if (err) {
    LLVMConsumeError(err);
    return; /* (a JIT that failed after its creation is kept, unused, for the process's life) */
  }
  /* a vector load, add and store: the subtarget's vector lowering, as the kernels use it */
  static const char warm_ir[] = "define void @" PA_SYM_WARM "(ptr %p) {\n"
                                "  %v = load <16 x float>, ptr %p\n"
                                "  %w = fadd <16 x float> %v, %v\n"
                                "  store <16 x float> %w, ptr %p\n"
                                "  ret void\n}\n";
  LLVMOrcThreadSafeContextRef tsc = LLVMOrcCreateNewThreadSafeContext();
  LLVMMemoryBufferRef buf = LLVMCreateMemoryBufferWithMemoryRangeCopy(warm_ir, sizeof warm_ir - 1, "warm-up");
  LLVMModuleRef mod;
  char *msg = NULL;
  if (!LLVMParseIRInContext(LLVMOrcThreadSafeContextGetContext(tsc), buf, &mod, &msg)) {
    LLVMOrcExecutorAddress addr;
    err = LLVMOrcLLJITAddLLVMIRModule(jit, LLVMOrcLLJITGetMainJITDylib(jit), LLVMOrcCreateNewThreadSafeModule(mod, tsc));
    if (!err) err = LLVMOrcLLJITLookup(jit, &addr, PA_SYM_WARM);
    if (err) LLVMConsumeError(err); /* only a warm-up: the children compile without it */
  }
  LLVMDisposeMessage(msg);
  LLVMOrcDisposeThreadSafeContext(tsc);
  template_jit = jit;
}

/* The kernel's arguments: one 8-byte slot each (read by __pa_main), buffers at fixed addresses
 * filled with seeded data. Made on a thread of its own while the main thread compiles (the
 * fill is 1-10 ms of a suite candidate's fixed cost); the addresses do not depend on when. */
typedef struct {
  const pa_run_spec *spec;
  guarded *bufs;
  int n_bufs;
  uint64_t *slots;
  uintptr_t cursor;
  /* a pool argument: made after the compile, so its workers do not spin beside it */
  int pool_arg, pool_threads;
  char *pool_stacks;
  int rc;
  char error[256]; /* its own: the compile's errors go to the shared header meanwhile */
} arg_setup;

static int setup_fail(arg_setup *s, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int setup_fail(arg_setup *s, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(s->error, sizeof s->error, fmt, ap);
  va_end(ap);
  return 2;
}

#define POOL_STACK_BYTES ((size_t)8 << 20)

static int make_arguments(arg_setup *s) {
  const pa_run_spec *spec = s->spec;
  int nb = 0;
  for (int i = 0; i < spec->n_args; i++) {
    const pa_arg *a = &spec->args[i];
    pt_rng rng = {spec->seed * 0x9e3779b97f4a7c15ULL + (uint64_t)i + 1};
    switch (a->kind) {
    case PA_ARG_BUFFER:
      s->bufs[nb] = (guarded){.arg = i, .sub = -1};
      if (!guarded_alloc(&s->bufs[nb], a->type, a->count, &rng, &s->cursor)) return setup_fail(s, "cannot allocate the buffer of args[%d]", i);
      s->slots[i] = (uint64_t)(uintptr_t)s->bufs[nb++].lo;
      break;
    case PA_ARG_BUFFER_ARRAY: {
      /* line-aligned, so the kernel's loads of the pointers touch the same lines every run */
      size_t bytes = round_up(sizeof(void *) * (size_t)a->n_counts, 64);
      void **ptrs = map_at(&s->cursor, bytes, 0);
      if (ptrs == MAP_FAILED) return setup_fail(s, "cannot allocate the pointer array of args[%d]", i);
      for (int j = 0; j < a->n_counts; j++) {
        s->bufs[nb] = (guarded){.arg = i, .sub = j};
        if (!guarded_alloc(&s->bufs[nb], a->type, a->counts[j], &rng, &s->cursor)) return setup_fail(s, "cannot allocate the buffer of args[%d]", i);
        ptrs[j] = s->bufs[nb++].lo;
      }
      s->slots[i] = (uint64_t)(uintptr_t)ptrs;
      break;
    }
    case PA_ARG_SCALAR:
      switch (a->type) {
      case PA_T_F32: {
        float f = (float)a->value;
        memcpy(&s->slots[i], &f, sizeof f);
        break;
      }
      case PA_T_F64: memcpy(&s->slots[i], &a->value, sizeof a->value); break;
      default: s->slots[i] = (uint64_t)(int64_t)a->value; break; /* little-endian: low bytes first */
      }
      break;
    case PA_ARG_POOL: {
      /* workers' stacks at fixed addresses too (spills and locals of parallel bodies): the
       * sampled lines, hence the profile, are then the same in every run */
      char *wstacks = a->threads > 1 ? map_at(&s->cursor, POOL_STACK_BYTES * (size_t)(a->threads - 1), MAP_NORESERVE) : NULL;
      if (wstacks == MAP_FAILED) return setup_fail(s, "cannot map the pool's stacks");
      s->pool_arg = i, s->pool_threads = a->threads, s->pool_stacks = wstacks;
      break;
    }
    case PA_ARG_NULL: break;
    }
  }
  return 0;
}

static void *make_arguments_thread(void *arg) {
  arg_setup *s = arg;
  s->rc = make_arguments(s);
  return NULL;
}

static int child_main(LLVMModuleRef mod, const pa_run_spec *spec, const pa_options *opt,
                      const bool *count_blocks, const pa_profile *p, int64_t win_blocks, shared_region *sh, int nf) {
  shared_hdr *h = sh->hdr;
  bool reuse = !opt->no_reuse;
  arg_setup args = {.spec = spec, .cursor = FIXED_BASE, .pool_arg = -1};
  for (int i = 0; i < spec->n_args; i++)
    args.n_bufs += spec->args[i].kind == PA_ARG_BUFFER ? 1 : spec->args[i].kind == PA_ARG_BUFFER_ARRAY ? spec->args[i].n_counts : 0;
  args.bufs = calloc((size_t)args.n_bufs + 1, sizeof *args.bufs);
  args.slots = calloc((size_t)spec->n_args + 1, sizeof *args.slots);
  pthread_t maker;
  bool making = pthread_create(&maker, NULL, make_arguments_thread, &args) == 0;
  if (!making) args.rc = make_arguments(&args);
  /* The module is this process's copy of the parent's: instrumented and compiled here, it
   * changes nothing there (0.9 ms of bitcode written and re-read before session 12). Its
   * context is not the JIT's own, which only locks that one; nothing else uses either. */
  LLVMOrcThreadSafeContextRef tsc = LLVMOrcCreateNewThreadSafeContext();
  pt_diag d = {0};
  double rate = opt->sample_rate > 0 ? opt->sample_rate : 1;
  pa_hook_mode mode = !reuse ? PA_HOOKS_NONE
                      : opt->windowed ? PA_HOOKS_WINDOWED
                      : rate >= 1 && !opt->line_filter ? PA_HOOKS_BUFFERED
                                                       : PA_HOOKS_FILTERED;
  int64_t locals_bytes = 0;
  if (pa_instrument(mod, mode, count_blocks, opt->line_filter ? p : NULL, &locals_bytes, &d) ||
      pa_add_main_wrapper(mod, spec, &d))
    return child_fail(h, "%s", d.msg);
  char *invalid = NULL; /* instrumentation is ours: invalid IR here is an analyzer bug, said plainly */
  if (LLVMVerifyModule(mod, LLVMReturnStatusAction, &invalid)) {
    int rc = child_fail(h, "the instrumented module does not verify (an analyzer bug): %.600s", invalid);
    LLVMDisposeMessage(invalid);
    return rc;
  }
  LLVMDisposeMessage(invalid);
  pa_runtime *rt = pa_runtime_new(nf, rate, opt->exact_window, reuse);
  if (mode == PA_HOOKS_WINDOWED) pa_runtime_set_windows(rt, &opt->windows, win_blocks);

  cheapen_codegen();
  LLVMOrcLLJITRef jit = template_jit; /* this process's copy of the parent's */
  LLVMErrorRef err = NULL;
  if (!jit && !(err = LLVMOrcCreateLLJIT(&jit, jit_builder_without_gathers()))) err = define_runtime(jit);
  if (err) return child_llvm_fail(h, "cannot create the JIT", err);
  LLVMOrcExecutionSessionSetErrorReporter(LLVMOrcLLJITGetExecutionSession(jit), report_session_error, h);
  LLVMOrcJITDylibRef jd = LLVMOrcLLJITGetMainJITDylib(jit);
  /* this run's counters and tracker */
  LLVMOrcCSymbolMapPair pairs[2] = {{LLVMOrcLLJITMangleAndIntern(jit, PA_SYM_COUNTS), {(LLVMOrcExecutorAddress)(uintptr_t)sh->counts}},
                                    {LLVMOrcLLJITMangleAndIntern(jit, PA_SYM_CTX), {(LLVMOrcExecutorAddress)(uintptr_t)rt}}};
  for (size_t i = 0; i < PT_ARRAY_LEN(pairs); i++)
    pairs[i].Sym.Flags = (LLVMJITSymbolFlags){LLVMJITSymbolGenericFlagsExported, 0};
  err = LLVMOrcJITDylibDefine(jd, LLVMOrcAbsoluteSymbols(pairs, PT_ARRAY_LEN(pairs)));
  if (err) return child_llvm_fail(h, "cannot define the runtime symbols", err);
  LLVMOrcThreadSafeModuleRef tsm = LLVMOrcCreateNewThreadSafeModule(mod, tsc);
  LLVMOrcDisposeThreadSafeContext(tsc);
  err = LLVMOrcLLJITAddLLVMIRModule(jit, jd, tsm);
  if (err) return child_llvm_fail(h, "cannot add the module to the JIT", err);
  LLVMOrcExecutorAddress main_addr;
  err = LLVMOrcLLJITLookup(jit, &main_addr, PA_SYM_MAIN);
  if (making) pthread_join(maker, NULL);
  if (err) {
    if (!h->error[0]) return child_llvm_fail(h, "cannot compile the module", err);
    LLVMConsumeError(err); /* the session reporter already kept the cause */
    return 2;
  }

  if (args.rc) return child_fail(h, "%s", args.error);
  pt_pool *pool = NULL;
  if (args.pool_arg >= 0) {
    pool = pt_pool_new_on_stacks(args.pool_threads, args.pool_stacks, POOL_STACK_BYTES);
    args.slots[args.pool_arg] = (uint64_t)(uintptr_t)pool;
  }
  uint64_t *slots = args.slots;
  uintptr_t cursor = args.cursor;
  crash_info ci = {h, args.bufs, args.n_bufs};
  child_crash = &ci;
  struct sigaction sa = {0};
  sa.sa_sigaction = on_crash;
  sa.sa_flags = SA_SIGINFO | SA_ONSTACK;
  int sigs[] = {SIGSEGV, SIGBUS, SIGFPE, SIGILL};
  for (size_t i = 0; i < PT_ARRAY_LEN(sigs); i++) sigaction(sigs[i], &sa, NULL);
  /* The kernel runs on a stack we map, so its locals sit at the same offsets within cache
   * lines in every run (the main thread's stack start is randomised at 16-byte granularity,
   * which would move line boundaries and make reuse profiles differ between runs). */
  kernel_call call = {(void (*)(uint64_t *))(uintptr_t)main_addr, slots, 0};
  size_t stack_bytes = (size_t)64 << 20;
  void *stack = map_at(&cursor, stack_bytes, MAP_NORESERVE);
  pthread_attr_t attr;
  pthread_t runner;
  if (stack == MAP_FAILED) return child_fail(h, "cannot map the kernel's stack");
  if (locals_bytes > 0) { /* moved locals (locals.c): a region per stack, mapped after every other */
    size_t per = round_up((size_t)locals_bytes, (size_t)sysconf(_SC_PAGESIZE));
    int workers = pool ? args.pool_threads - 1 : 0;
    char *locals = map_at(&cursor, per * (size_t)(1 + workers), MAP_NORESERVE);
    if (locals == MAP_FAILED) return child_fail(h, "cannot map the kernel's locals");
    pa_runtime_add_locals(rt, stack, stack_bytes, locals);
    for (int i = 0; i < workers; i++)
      pa_runtime_add_locals(rt, args.pool_stacks + (size_t)i * POOL_STACK_BYTES, POOL_STACK_BYTES, locals + (size_t)(i + 1) * per);
  }
  if (pthread_attr_init(&attr) || pthread_attr_setstack(&attr, stack, stack_bytes) || pthread_create(&runner, &attr, run_kernel, &call))
    return child_fail(h, "cannot start the thread that runs the kernel");
  pthread_join(runner, NULL);
  double t0 = pt_now();
  pa_runtime_flush_all(rt); /* what the threads left in their buffers (under 2^11 accesses each) */
  h->seconds = call.seconds + (pt_now() - t0);

  if (pa_runtime_overflowed(rt))
    return child_fail(h, "the kernel ran on more than %d threads; their counts and accesses cannot be kept apart",
                      PA_MAX_THREADS);
  int nt = pa_runtime_threads(rt);
  h->threads = nt;
  for (int f = 0; f < nf; f++) sh->masks[f] = pa_runtime_thread_mask(rt, f);
  if (reuse)
    for (int s = 0; s < nt; s++)
      for (int f = 0; f < nf; f++) {
        pa_runtime_counts(rt, s, f, sh->hist + ((size_t)s * (size_t)nf + (size_t)f) * PA_TRACKER_WORDS);
        memcpy(sh->repeats + ((size_t)s * (size_t)nf + (size_t)f) * PA_REUSE_BINS, pa_runtime_repeats(rt, s, f),
               sizeof(uint64_t) * PA_REUSE_BINS);
      }
  if (pool) pt_pool_free(pool);
  h->status = 1;
  return 0;
}

/* Children that have handed in their results and are still tearing down (a forked copy of this
 * process: 1.7 ms or more), reaped without waiting by the next run, or waited for when the list
 * is full. Session 12 reaped each on a detached thread, but a fork while such a thread started
 * or exited hung the child under ASan (its runtime's locks; analyzer_test_static_counts' 30 s
 * limits); no thread, no such lock. Process-wide, as children are: one lock guards it. */
static pthread_mutex_t unreaped_lock = PTHREAD_MUTEX_INITIALIZER;
static pid_t unreaped[32];
static int n_unreaped;

/* Reaps those that have exited; with `add` (> 0) keeps it for later, first waiting for the
 * oldest when the list is full. */
static void reap_children(pid_t add) {
  pthread_mutex_lock(&unreaped_lock);
  int kept = 0;
  for (int i = 0; i < n_unreaped; i++)
    if (waitpid(unreaped[i], NULL, WNOHANG) == 0) unreaped[kept++] = unreaped[i];
  n_unreaped = kept;
  if (add > 0) {
    if (n_unreaped == (int)PT_ARRAY_LEN(unreaped)) {
      waitpid(unreaped[0], NULL, 0);
      memmove(unreaped, unreaped + 1, sizeof *unreaped * (size_t)--n_unreaped);
    }
    unreaped[n_unreaped++] = add;
  }
  pthread_mutex_unlock(&unreaped_lock);
}

typedef enum { CHILD_EXITED, CHILD_DONE, CHILD_TIMED_OUT } child_end;

/* Waits for the child until limit_s (then kills and reaps it). The child writes a byte to
 * `done_fd` once its results are in the shared region: we return then (CHILD_DONE) and a later
 * run reaps it (reap_children), because tearing down a forked copy of this process (LLVM's
 * heap, the JIT, the buffers) takes 1.7 ms or more that nobody needs to wait for. A child that
 * crashed or failed closes the pipe without the byte: we reap it for its status. A pidfd wakes
 * us when it exits; without one (Linux < 5.3) we poll with sleeps doubling to 1 ms. */
static child_end wait_child(pid_t pid, int done_fd, double limit_s, int *status) {
  double deadline = pt_now() + limit_s;
  int pidfd = (int)syscall(SYS_pidfd_open, pid, 0);
  struct pollfd pfd[2] = {{.fd = done_fd, .events = POLLIN}, {.fd = pidfd, .events = POLLIN}};
  child_end end = CHILD_EXITED;
  for (long sleep_ns = 20000;;) {
    char byte;
    if (pfd[0].fd >= 0 && poll(pfd, 1, 0) == 1) {
      if (read(done_fd, &byte, 1) == 1) {
        end = CHILD_DONE;
        reap_children(pid);
        break;
      }
      pfd[0].fd = -1; /* closed without the byte: it failed, wait for its status */
    }
    pid_t r = waitpid(pid, status, WNOHANG);
    if (r == pid || (r < 0 && errno != EINTR)) break;
    double left = deadline - pt_now();
    if (left <= 0) {
      kill(pid, SIGKILL);
      waitpid(pid, status, 0);
      end = CHILD_TIMED_OUT;
      break;
    }
    long wait_ns = pidfd >= 0 ? (left > 1 ? 1000000000L : (long)(left * 1e9) + 1) : sleep_ns;
    ppoll(pfd, pidfd >= 0 ? 2 : 1, &(struct timespec){wait_ns / 1000000000L, wait_ns % 1000000000L}, NULL);
    if (sleep_ns < 1000000) sleep_ns *= 2;
  }
  if (pidfd >= 0) close(pidfd);
  return end;
}

/* Every function or global the module declares must exist in this process (libc, libm) or be
 * one the run defines; checked before forking so the error is plain. */
static int check_symbols(const pa_module *m, pt_diag *d) {
  static const char *const ours[] = {"pt_parallel_for", "pt_pool_threads"};
  LLVMValueRef first_fn = LLVMGetFirstFunction(m->mod), first_gv = LLVMGetFirstGlobal(m->mod);
  for (int pass = 0; pass < 2; pass++)
    for (LLVMValueRef v = pass ? first_gv : first_fn; v; v = pass ? LLVMGetNextGlobal(v) : LLVMGetNextFunction(v)) {
      if (!LLVMIsDeclaration(v)) continue;
      size_t len;
      const char *name = LLVMGetValueName2(v, &len);
      if (strncmp(name, "llvm.", 5) == 0) continue;
      bool known = dlsym(RTLD_DEFAULT, name) != NULL;
      for (size_t i = 0; i < PT_ARRAY_LEN(ours); i++) known |= strcmp(name, ours[i]) == 0;
      if (!known)
        return pt_fail(d, PT_ERR_INPUT, "%s: '%s' is declared but defined neither in the module nor in portent's "
                                        "process, so the module cannot run here", m->source, name);
    }
  return PT_OK;
}

int pa_run(const pa_module *m, const pa_profile *p, const pa_run_spec *spec, const pa_options *opt,
           const pa_run_meanwhile *meanwhile, pa_run_result *out, pt_diag *d) {
  memset(out, 0, sizeof *out);
  int err = pa_spec_check(m->mod, m->source, spec, d);
  if (!err) err = check_symbols(m, d);
  if (err) return err;
  int nf = p->n_functions, nblocks = 0;
  for (int i = 0; i < nf; i++) nblocks += p->functions[i].n_blocks;
  size_t hist_words = (size_t)PA_MAX_THREADS * (size_t)nf * PA_TRACKER_WORDS;
  size_t repeat_words = (size_t)PA_MAX_THREADS * (size_t)nf * PA_REUSE_BINS;
  shared_region sh = {0};
  sh.bytes = round_up(sizeof(shared_hdr), 64) + sizeof(uint64_t) * ((size_t)nblocks + (size_t)nf + hist_words + repeat_words + 1);
  void *mem = mmap(NULL, sh.bytes, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  if (mem == MAP_FAILED) return pt_fail(d, PT_ERR_NOMEM, "cannot map %zu bytes for the run's results", sh.bytes);
  sh.hdr = mem;
  sh.counts = (uint64_t *)((char *)mem + round_up(sizeof(shared_hdr), 64));
  sh.masks = sh.counts + nblocks;
  sh.hist = sh.masks + nf;
  sh.repeats = sh.hist + hist_words;
  /* Windowed: the accesses to place the windows over (the profile's counts are static then). */
  int64_t win_blocks = 0;
  for (int i = 0; i < nf && opt->windowed; i++)
    for (int b = 0; b < p->functions[i].n_blocks; b++) {
      const pa_block *bl = &p->functions[i].blocks[b];
      win_blocks += (int64_t)bl->count * (bl->features.loads + bl->features.stores);
    }
  bool *count_blocks = malloc(sizeof *count_blocks * ((size_t)nf + 1));
  for (int i = 0; i < nf; i++) count_blocks[i] = !(opt->static_counts && pa_function_counted_statically(&p->functions[i]));
  int done_pipe[2];
  if (pipe2(done_pipe, O_CLOEXEC)) {
    munmap(mem, sh.bytes);
    free(count_blocks);
    return pt_fail(d, PT_ERR_RUNTIME, "cannot make the run's pipe: %s", strerror(errno));
  }
  pthread_once(&template_once, make_template_jit);
  fflush(NULL); /* the child must not repeat our buffered output */
  pid_t pid = fork();
  if (pid < 0) {
    close(done_pipe[0]), close(done_pipe[1]);
    munmap(mem, sh.bytes);
    free(count_blocks);
    return pt_fail(d, PT_ERR_RUNTIME, "cannot fork the run: %s", strerror(errno));
  }
  if (pid == 0) {
    close(done_pipe[0]);
    int rc = child_main(m->mod, spec, opt, count_blocks, p, win_blocks, &sh, nf);
    fflush(NULL);
    if (rc == 0 && write(done_pipe[1], "", 1) != 1) rc = 2; /* the results are complete */
    _exit(rc);
  }
  close(done_pipe[1]);
  free(count_blocks);
  if (meanwhile) meanwhile->fn(meanwhile->arg); /* the child needs nothing of it */
  double limit_s = spec->timeout_s > 0 ? spec->timeout_s : 60;
  int status = 0;
  bool timed_out = wait_child(pid, done_pipe[0], limit_s, &status) == CHILD_TIMED_OUT;
  close(done_pipe[0]);
  const char *who = spec->entry;
  if (timed_out)
    err = pt_fail(d, PT_ERR_RUNTIME, "%s: '%s' did not finish within %.3g s (killed)", m->source, who, spec->timeout_s);
  else if (sh.hdr->status != 1) {
    if (sh.hdr->error[0])
      err = pt_fail(d, PT_ERR_RUNTIME, "%s: running '%s': %s", m->source, who, sh.hdr->error);
    else if (WIFSIGNALED(status))
      err = pt_fail(d, PT_ERR_RUNTIME, "%s: running '%s': killed by signal %d (%s)", m->source, who, WTERMSIG(status),
                    strsignal(WTERMSIG(status)));
    else
      err = pt_fail(d, PT_ERR_RUNTIME, "%s: running '%s': the child exited with status %d", m->source, who,
                    WIFEXITED(status) ? WEXITSTATUS(status) : -1);
  }
  if (!err) {
    out->n_functions = nf;
    out->n_blocks_total = nblocks;
    out->threads = sh.hdr->threads;
    out->seconds = sh.hdr->seconds;
    out->counts = malloc(sizeof(uint64_t) * ((size_t)nblocks + 1));
    memcpy(out->counts, sh.counts, sizeof(uint64_t) * (size_t)nblocks);
    out->thread_mask = malloc(sizeof(uint64_t) * ((size_t)nf + 1));
    memcpy(out->thread_mask, sh.masks, sizeof(uint64_t) * (size_t)nf);
    size_t used = (size_t)out->threads * (size_t)nf * PA_TRACKER_WORDS;
    out->hist = malloc(sizeof(uint64_t) * (used + 1));
    memcpy(out->hist, sh.hist, sizeof(uint64_t) * used);
    size_t used_repeats = (size_t)out->threads * (size_t)nf * PA_REUSE_BINS;
    out->repeats = malloc(sizeof(uint64_t) * (used_repeats + 1));
    memcpy(out->repeats, sh.repeats, sizeof(uint64_t) * used_repeats);
  }
  munmap(mem, sh.bytes);
  return err;
}

void pa_run_result_free(pa_run_result *r) {
  free(r->counts);
  free(r->thread_mask);
  free(r->hist);
  free(r->repeats);
  memset(r, 0, sizeof *r);
}
