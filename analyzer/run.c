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

typedef struct {
  shared_hdr *hdr;
  pa_guarded_buffer *bufs;
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
      pa_guarded_buffer *g = &c->bufs[i];
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

/* The child's error text (cut to the shared header's size) for the parent to report. */
static int child_fail(shared_hdr *h, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int child_fail(shared_hdr *h, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(h->error, sizeof h->error, fmt, ap);
  va_end(ap);
  return 2;
}

/* The instrumented copy of the caller's module (which stays as it was), with this run's
 * runtime (its threads' states, counters and trackers) as a constant address: a run's JIT
 * symbols would outlive it (the C API cannot define them under the module's resource tracker). */
static LLVMModuleRef instrumented_module(const pa_module *m, const pa_profile *p, const pa_run_spec *spec,
                                         const pa_options *opt, pa_hook_mode mode, const bool *count_blocks,
                                         pa_runtime *rt, int64_t *locals_bytes, int64_t *locals_lines,
                                         int *removed, char *why, size_t why_cap, char *error, size_t cap) {
  LLVMModuleRef mod = LLVMCloneModule(m->mod);
  pt_diag d = {0};
  pa_hook_opts ho = {mode, count_blocks, p, opt->line_filter, opt->inline_cold_blocks, opt->counters_in_memory};
  uint64_t *locals_map = NULL;
  if (pa_instrument(mod, &ho, locals_bytes, opt->sample_locals ? NULL : &locals_map, &d) ||
      pa_add_main_wrapper(mod, spec, &d)) {
    snprintf(error, cap, "%.700s", d.msg);
    free(locals_map);
    LLVMDisposeModule(mod);
    return NULL;
  }
  /* the region's lines the sampled hooks always pass, tracked at weight 1 beside the sample */
  *locals_lines = locals_map ? pa_runtime_set_locals_map(rt, locals_map, (*locals_bytes + PA_LINE_BYTES - 1) / PA_LINE_BYTES) : 0;
  free(locals_map);
  LLVMTypeRef i64 = LLVMInt64TypeInContext(LLVMGetModuleContext(mod));
  LLVMValueRef g = LLVMGetNamedGlobal(mod, PA_SYM_CTX);
  if (g) {
    LLVMReplaceAllUsesWith(g, LLVMConstIntToPtr(LLVMConstInt(i64, (uint64_t)(uintptr_t)rt, 0), LLVMTypeOf(g)));
    LLVMDeleteGlobal(g);
  }
  if (opt->addresses_only) pa_addresses_only(mod, removed, why, why_cap); /* else the whole module runs */
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
static int child_run(uint64_t entry, const pa_arg_setup *args, pa_runtime *rt, int64_t locals_bytes, bool reuse,
                     shared_region *sh, int nf) {
  shared_hdr *h = sh->hdr;
  uint64_t *slots = args->slots;
  pt_pool *pool = NULL; /* made here: its workers do not exist in the parent, nor spin beside its compile */
  if (args->pool_arg >= 0) {
    pool = pt_pool_new_on_stacks(args->pool_threads, args->pool_stacks, PA_POOL_STACK_BYTES);
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
  void *stack = pa_map_at(&cursor, stack_bytes, MAP_NORESERVE);
  pthread_attr_t attr;
  pthread_t runner;
  if (stack == MAP_FAILED) return child_fail(h, "cannot map the kernel's stack");
  if (locals_bytes > 0) { /* moved locals (locals.c): a region per stack, mapped after every other */
    size_t per = pa_round_up((size_t)locals_bytes, (size_t)sysconf(_SC_PAGESIZE));
    int workers = pool ? args->pool_threads - 1 : 0;
    char *locals = pa_map_at(&cursor, per * (size_t)(1 + workers), MAP_NORESERVE);
    if (locals == MAP_FAILED) return child_fail(h, "cannot map the kernel's locals");
    pa_runtime_add_locals(rt, stack, stack_bytes, locals);
    for (int i = 0; i < workers; i++)
      pa_runtime_add_locals(rt, args->pool_stacks + (size_t)i * PA_POOL_STACK_BYTES, PA_POOL_STACK_BYTES, locals + (size_t)(i + 1) * per);
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
  if (pa_runtime_out_of_memory(rt))
    return child_fail(h, "out of memory for a thread's hook buffers or per-set stacks (its counts and accesses could not be kept apart)");
  pa_runtime_block_counts(rt, sh->counts);
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
  sh.bytes = pa_round_up(sizeof(shared_hdr), 64) + sizeof(uint64_t) * ((size_t)nblocks + (size_t)nf + hist_words + repeat_words + 1);
  void *mem = mmap(NULL, sh.bytes, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  if (mem == MAP_FAILED) return pt_fail(d, PT_ERR_NOMEM, "cannot map %zu bytes for the run's results", sh.bytes);
  sh.hdr = mem;
  sh.counts = (uint64_t *)((char *)mem + pa_round_up(sizeof(shared_hdr), 64));
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
  pa_runtime *rt = pa_runtime_new(nf, nblocks, rate, opt->exact_window, reuse);
  if (!rt) {
    munmap(mem, sh.bytes);
    return pt_fail(d, PT_ERR_NOMEM, "cannot allocate the run's hook state (%d functions, %d blocks)", nf, nblocks);
  }
  if (mode == PA_HOOKS_WINDOWED) { /* the accesses to place the windows over (the counts are static then) */
    int64_t win_blocks = 0;
    for (int i = 0; i < nf; i++)
      for (int b = 0; b < p->functions[i].n_blocks; b++) {
        const pa_block *bl = &p->functions[i].blocks[b];
        win_blocks += (int64_t)bl->count * (bl->features.loads + bl->features.stores);
      }
    pa_runtime_set_windows(rt, &opt->windows, win_blocks);
  }
  if (reuse && opt->n_llc_sets) pa_runtime_set_llc(rt, opt->n_llc_sets, opt->llc_sets); /* checked by pa_profile_build */
  bool *count_blocks = malloc(sizeof *count_blocks * ((size_t)nf + 1));
  for (int i = 0; i < nf; i++) count_blocks[i] = !(opt->static_counts && pa_function_counted_statically(&p->functions[i]));

  /* the arguments filled on another thread while this one instruments and compiles */
  pthread_t maker;
  bool making;
  pa_arg_setup *args = pa_run_arguments(spec, &maker, &making);
  char error[768] = "";
  int64_t locals_bytes = 0, locals_lines = 0;
  pa_jit_code code = {0};
  LLVMModuleRef mod = instrumented_module(m, p, spec, opt, mode, count_blocks, rt, &locals_bytes, &locals_lines,
                                           &out->addresses_removed, out->addresses_whole, sizeof out->addresses_whole,
                                           error, sizeof error);
  free(count_blocks);
  if (mod) pa_jit_compile(mod, PA_SYM_MAIN, &code, error, sizeof error);
  if (making) pthread_join(maker, NULL);
  args->spec = NULL; /* the caller's */
  if (!error[0] && args->rc) snprintf(error, sizeof error, "%s", args->error);
  if (args->rc) pa_drop_kept_arguments();
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
    out->locals_lines = locals_lines;
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
