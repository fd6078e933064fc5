/* The instrumented run: this process instruments a copy of the module and compiles it
 * (jit.c), then a forked child calls the entry on seeded random arguments held between guard
 * pages and leaves counts and reuse histograms in shared memory. The parent enforces the
 * time limit, so a kernel's crash or hang is an error, not our death. */
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

/* The kernel's arguments: one 8-byte slot each (read by __pa_main), buffers at fixed addresses
 * filled with seeded data. The parent makes them on a thread of its own while it compiles
 * (the fill is 1-10 ms of a suite candidate's fixed cost; the addresses do not depend on
 * when), and keeps them for the next run with the same arguments: a child's writes go to its
 * own copies of the pages, so the parent's stay as filled. */
typedef struct {
  const pa_run_spec *spec;
  guarded *bufs;
  int n_bufs;
  uint64_t *slots;
  uintptr_t cursor;
  struct mapping {
    void *p;
    size_t len;
  } *maps; /* besides the buffers': pointer arrays' and pool stacks' */
  int n_maps;
  /* a pool argument: the pool is made in the child, its stacks here */
  int pool_arg, pool_threads;
  char *pool_stacks;
  int rc;
  char error[256]; /* its own: the compile's errors are the caller's meanwhile */
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

static void remember_mapping(arg_setup *s, void *p, size_t len) {
  struct mapping *m = realloc(s->maps, sizeof *m * (size_t)(s->n_maps + 1));
  if (!m) { /* left mapped: only address space is lost, and the next run's addresses */
    return;
  }
  s->maps = m;
  s->maps[s->n_maps++] = (struct mapping){p, len};
}

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
      remember_mapping(s, ptrs, bytes);
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
      if (wstacks) remember_mapping(s, wstacks, POOL_STACK_BYTES * (size_t)(a->threads - 1));
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

/* The arguments the parent keeps (a process-wide cache, under run_lock): the last run's, for a
 * spec with the same arguments and seed. bench analyze profiles each candidate several times,
 * and a tuner's candidates of one workload share their buffers, so most runs fill nothing. */
static struct {
  bool valid;
  pa_run_spec key; /* the arguments compared: kinds, types, counts, values, threads; the seed */
  arg_setup s;
} kept;

static bool same_arguments(const pa_run_spec *a, const pa_run_spec *b) {
  if (a->n_args != b->n_args || a->seed != b->seed) return false;
  for (int i = 0; i < a->n_args; i++) {
    const pa_arg *x = &a->args[i], *y = &b->args[i];
    if (x->kind != y->kind || x->type != y->type || x->count != y->count || x->n_counts != y->n_counts ||
        x->threads != y->threads || memcmp(&x->value, &y->value, sizeof x->value) != 0)
      return false;
    for (int j = 0; j < x->n_counts; j++)
      if (x->counts[j] != y->counts[j]) return false;
  }
  return true;
}

static void drop_kept_arguments(void) {
  arg_setup *s = &kept.s;
  for (int i = 0; i < s->n_bufs; i++)
    if (s->bufs[i].map && s->bufs[i].map != MAP_FAILED) munmap(s->bufs[i].map, s->bufs[i].map_len);
  for (int i = 0; i < s->n_maps; i++) munmap(s->maps[i].p, s->maps[i].len);
  free(s->bufs), free(s->slots), free(s->maps);
  for (int i = 0; i < kept.key.n_args; i++) free(kept.key.args[i].counts);
  free(kept.key.args);
  memset(&kept, 0, sizeof kept);
}

/* The run's arguments: the kept ones when they are the same; otherwise new ones are started
 * on `maker` (*making set; the caller joins it before forking). */
static arg_setup *run_arguments(const pa_run_spec *spec, pthread_t *maker, bool *making) {
  *making = false;
  if (kept.valid && same_arguments(&kept.key, spec)) return &kept.s;
  drop_kept_arguments();
  arg_setup *s = &kept.s;
  *s = (arg_setup){.spec = spec, .cursor = FIXED_BASE, .pool_arg = -1};
  for (int i = 0; i < spec->n_args; i++)
    s->n_bufs += spec->args[i].kind == PA_ARG_BUFFER ? 1 : spec->args[i].kind == PA_ARG_BUFFER_ARRAY ? spec->args[i].n_counts : 0;
  s->bufs = calloc((size_t)s->n_bufs + 1, sizeof *s->bufs);
  s->slots = calloc((size_t)spec->n_args + 1, sizeof *s->slots);
  kept.key = (pa_run_spec){.n_args = spec->n_args, .seed = spec->seed, .args = calloc((size_t)spec->n_args + 1, sizeof(pa_arg))};
  for (int i = 0; i < spec->n_args; i++) {
    pa_arg *a = &kept.key.args[i];
    *a = spec->args[i];
    a->counts = NULL;
    if (a->n_counts > 0) {
      a->counts = malloc(sizeof(int64_t) * (size_t)a->n_counts);
      memcpy(a->counts, spec->args[i].counts, sizeof(int64_t) * (size_t)a->n_counts);
    }
  }
  kept.valid = true;
  *making = pthread_create(maker, NULL, make_arguments_thread, s) == 0;
  if (!*making) s->rc = make_arguments(s);
  return s;
}

/* The instrumented copy of the caller's module (which stays as it was), with this run's
 * counters and tracker as constant addresses: a run's JIT symbols would outlive it (the C API
 * cannot define them under the module's resource tracker). */
static LLVMModuleRef instrumented_module(const pa_module *m, const pa_profile *p, const pa_run_spec *spec,
                                         const pa_options *opt, pa_hook_mode mode, const bool *count_blocks,
                                         uint64_t *counts, pa_runtime *rt, int64_t *locals_bytes, char *error, size_t cap) {
  LLVMModuleRef mod = LLVMCloneModule(m->mod);
  pt_diag d = {0};
  if (pa_instrument(mod, mode, count_blocks, opt->line_filter ? p : NULL, locals_bytes, &d) ||
      pa_add_main_wrapper(mod, spec, &d)) {
    snprintf(error, cap, "%.700s", d.msg);
    LLVMDisposeModule(mod);
    return NULL;
  }
  LLVMTypeRef i64 = LLVMInt64TypeInContext(LLVMGetModuleContext(mod));
  const struct {
    const char *name;
    void *addr;
  } bound[] = {{PA_SYM_COUNTS, counts}, {PA_SYM_CTX, rt}};
  for (size_t i = 0; i < PT_ARRAY_LEN(bound); i++) {
    LLVMValueRef g = LLVMGetNamedGlobal(mod, bound[i].name);
    if (!g) continue;
    LLVMReplaceAllUsesWith(g, LLVMConstIntToPtr(LLVMConstInt(i64, (uint64_t)(uintptr_t)bound[i].addr, 0), LLVMTypeOf(g)));
    LLVMDeleteGlobal(g);
  }
  char *invalid = NULL; /* instrumentation is ours: invalid IR here is an analyzer bug, said plainly */
  if (LLVMVerifyModule(mod, LLVMReturnStatusAction, &invalid)) {
    snprintf(error, cap, "the instrumented module does not verify (an analyzer bug): %.600s", invalid);
    LLVMDisposeMessage(invalid);
    LLVMDisposeModule(mod);
    return NULL;
  }
  LLVMDisposeMessage(invalid);
  return mod;
}

/* The forked child: runs the compiled kernel (the parent's code, arguments and tracker, its
 * own copies since the fork) and leaves the results in the shared region. */
static int child_run(uint64_t entry, const arg_setup *args, pa_runtime *rt, int64_t locals_bytes, bool reuse,
                     shared_region *sh, int nf) {
  shared_hdr *h = sh->hdr;
  uint64_t *slots = args->slots;
  pt_pool *pool = NULL; /* made here: its workers do not exist in the parent, nor spin beside its compile */
  if (args->pool_arg >= 0) {
    pool = pt_pool_new_on_stacks(args->pool_threads, args->pool_stacks, POOL_STACK_BYTES);
    slots[args->pool_arg] = (uint64_t)(uintptr_t)pool;
  }
  uintptr_t cursor = args->cursor;
  crash_info ci = {h, args->bufs, args->n_bufs};
  child_crash = &ci;
  struct sigaction sa = {0};
  sa.sa_sigaction = on_crash;
  sa.sa_flags = SA_SIGINFO | SA_ONSTACK;
  int sigs[] = {SIGSEGV, SIGBUS, SIGFPE, SIGILL};
  for (size_t i = 0; i < PT_ARRAY_LEN(sigs); i++) sigaction(sigs[i], &sa, NULL);
  /* The kernel runs on a stack we map, so its locals sit at the same offsets within cache
   * lines in every run (the main thread's stack start is randomised at 16-byte granularity,
   * which would move line boundaries and make reuse profiles differ between runs). */
  kernel_call call = {(void (*)(uint64_t *))(uintptr_t)entry, slots, 0};
  size_t stack_bytes = (size_t)64 << 20;
  void *stack = map_at(&cursor, stack_bytes, MAP_NORESERVE);
  pthread_attr_t attr;
  pthread_t runner;
  if (stack == MAP_FAILED) return child_fail(h, "cannot map the kernel's stack");
  if (locals_bytes > 0) { /* moved locals (locals.c): a region per stack, mapped after every other */
    size_t per = round_up((size_t)locals_bytes, (size_t)sysconf(_SC_PAGESIZE));
    int workers = pool ? args->pool_threads - 1 : 0;
    char *locals = map_at(&cursor, per * (size_t)(1 + workers), MAP_NORESERVE);
    if (locals == MAP_FAILED) return child_fail(h, "cannot map the kernel's locals");
    pa_runtime_add_locals(rt, stack, stack_bytes, locals);
    for (int i = 0; i < workers; i++)
      pa_runtime_add_locals(rt, args->pool_stacks + (size_t)i * POOL_STACK_BYTES, POOL_STACK_BYTES, locals + (size_t)(i + 1) * per);
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

/* One run at a time in a process: the JIT's codegen options, the kept arguments and the fixed
 * addresses are the process's. */
static pthread_mutex_t run_lock = PTHREAD_MUTEX_INITIALIZER;

static int run_locked(const pa_module *m, const pa_profile *p, const pa_run_spec *spec, const pa_options *opt,
                      const pa_run_meanwhile *meanwhile, pa_run_result *out, pt_diag *d) {
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
  const char *who = spec->entry;
  bool reuse = !opt->no_reuse;
  double rate = opt->sample_rate > 0 ? opt->sample_rate : 1;
  pa_hook_mode mode = !reuse ? PA_HOOKS_NONE
                      : opt->windowed ? PA_HOOKS_WINDOWED
                      : rate >= 1 && !opt->line_filter ? PA_HOOKS_BUFFERED
                                                       : PA_HOOKS_FILTERED;
  pa_runtime *rt = pa_runtime_new(nf, rate, opt->exact_window, reuse);
  if (mode == PA_HOOKS_WINDOWED) { /* the accesses to place the windows over (the counts are static then) */
    int64_t win_blocks = 0;
    for (int i = 0; i < nf; i++)
      for (int b = 0; b < p->functions[i].n_blocks; b++) {
        const pa_block *bl = &p->functions[i].blocks[b];
        win_blocks += (int64_t)bl->count * (bl->features.loads + bl->features.stores);
      }
    pa_runtime_set_windows(rt, &opt->windows, win_blocks);
  }
  bool *count_blocks = malloc(sizeof *count_blocks * ((size_t)nf + 1));
  for (int i = 0; i < nf; i++) count_blocks[i] = !(opt->static_counts && pa_function_counted_statically(&p->functions[i]));

  /* the arguments filled on another thread while this one instruments and compiles */
  pthread_t maker;
  bool making;
  arg_setup *args = run_arguments(spec, &maker, &making);
  char error[768] = "";
  int64_t locals_bytes = 0;
  pa_jit_code code = {0};
  LLVMModuleRef mod = instrumented_module(m, p, spec, opt, mode, count_blocks, sh.counts, rt, &locals_bytes, error, sizeof error);
  free(count_blocks);
  if (mod) pa_jit_compile(mod, PA_SYM_MAIN, &code, error, sizeof error);
  if (making) pthread_join(maker, NULL);
  args->spec = NULL; /* the caller's */
  if (!error[0] && args->rc) snprintf(error, sizeof error, "%s", args->error);
  if (args->rc) drop_kept_arguments();
  int err = 0, done_pipe[2] = {-1, -1};
  pid_t pid = -1;
  if (error[0])
    err = pt_fail(d, PT_ERR_RUNTIME, "%s: running '%s': %s", m->source, who, error);
  else if (pipe2(done_pipe, O_CLOEXEC))
    err = pt_fail(d, PT_ERR_RUNTIME, "cannot make the run's pipe: %s", strerror(errno));
  else {
    fflush(NULL); /* the child must not repeat our buffered output */
    pid = fork();
    if (pid < 0) {
      err = pt_fail(d, PT_ERR_RUNTIME, "cannot fork the run: %s", strerror(errno));
      close(done_pipe[0]), close(done_pipe[1]);
    }
  }
  if (pid == 0) {
    close(done_pipe[0]);
    int rc = child_run(code.entry, args, rt, locals_bytes, reuse, &sh, nf);
    fflush(NULL);
    if (rc == 0 && write(done_pipe[1], "", 1) != 1) rc = 2; /* the results are complete */
    _exit(rc);
  }
  if (pid > 0) {
    close(done_pipe[1]);
    if (meanwhile) meanwhile->fn(meanwhile->arg); /* the child needs nothing of it */
    double limit_s = spec->timeout_s > 0 ? spec->timeout_s : 60;
    int status = 0;
    bool timed_out = wait_child(pid, done_pipe[0], limit_s, &status) == CHILD_TIMED_OUT;
    close(done_pipe[0]);
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
  }
  pa_jit_release(&code);
  pa_runtime_free(rt);
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

int pa_run(const pa_module *m, const pa_profile *p, const pa_run_spec *spec, const pa_options *opt,
           const pa_run_meanwhile *meanwhile, pa_run_result *out, pt_diag *d) {
  memset(out, 0, sizeof *out);
  int err = pa_spec_check(m->mod, m->source, spec, d);
  if (!err) err = check_symbols(m, d);
  if (err) return err;
  pthread_mutex_lock(&run_lock);
  err = run_locked(m, p, spec, opt, meanwhile, out, d);
  pthread_mutex_unlock(&run_lock);
  return err;
}

void pa_run_result_free(pa_run_result *r) {
  free(r->counts);
  free(r->thread_mask);
  free(r->hist);
  free(r->repeats);
  memset(r, 0, sizeof *r);
}
