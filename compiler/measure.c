/* Measurement: the unscheduled program's output as the reference, and each candidate run
 * in a forked child with a time limit (a crash or hang is a failed record, never a dead
 * tuner), outputs checked against the reference, then timed: warm-up, repeats until a
 * minimum time, median and spread. */
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "internal.h"

#define MAX_TIMES 2048

struct pc_reference {
  const pc_program *p;
  float *data[PC_MAX_STAGES]; /* per op: inputs (seeded) and outputs (reference) */
  void *base[PC_MAX_STAGES];  /* their allocations (alloc_placed) */
  double out_scale[PC_MAX_STAGES];
  uint64_t seed;
};

void pc_measure_opts_default(pc_measure_opts *o) {
  memset(o, 0, sizeof *o);
  o->threads = 1;
  o->timeout_s = 10;
  o->min_time_s = 0.2;
  o->min_repeats = 3;
  o->seed = 1;
  o->rtol = 1e-3;
  o->atol = 1e-3;
}

static void fill_input(float *x, int64_t n, uint64_t seed) {
  pt_rng r = {seed};
  for (int64_t i = 0; i < n; i++) x[i] = (float)(2.0 * pt_rng_uniform(&r) - 1.0);
}

/* n floats PC_*_PAGE_OFFSET bytes past a page start; *base is what free() takes. Fixed here
 * because glibc raises its mmap threshold to each large block freed, after which large buffers
 * come from the heap at offsets that follow the run's history: a replay of a saved set put
 * buffers elsewhere than a fresh `portent run` did. */
static float *alloc_placed(int64_t n, size_t page_offset, void **base) {
  *base = NULL;
  if (posix_memalign(base, 4096, page_offset + (size_t)n * sizeof(float) + 64) != 0) return *base = NULL;
  return (float *)((char *)*base + page_offset);
}

/* Sets up buffer pointers in kernel order; intermediates are allocated here. */
static int bind_buffers(pc_kernel *k, const pc_program *p, const pc_reference *ref, float **outs, float **bufs, void **owned,
                        pt_diag *d) {
  for (int i = 0; i < pc_kernel_n_buffers(k); i++) {
    /* The kernel's program may have more ops than the reference's (cache_write, rfactor):
     * inputs and outputs are matched by name. */
    const pc_op *kop = &p->ops[pc_kernel_buffer_op(k, i)];
    int op = pc_program_find(ref->p, kop->name);
    owned[i] = NULL;
    if (op >= 0 && kop->is_placeholder && ref->p->ops[op].is_placeholder) bufs[i] = ref->data[op];
    else if (op >= 0 && kop->is_output && ref->p->ops[op].is_output) bufs[i] = outs[op];
    else {
      bufs[i] = alloc_placed(pc_kernel_buffer_numel(k, i), PC_OUTPUT_PAGE_OFFSET, &owned[i]); /* written */
      if (!bufs[i]) return pt_fail(d, PT_ERR_NOMEM, "cannot allocate %lld floats", (long long)pc_kernel_buffer_numel(k, i));
    }
  }
  return 0;
}

pc_reference *pc_reference_new(const pc_program *p, const pc_measure_opts *o, pt_diag *d) {
  pc_reference *ref = calloc(1, sizeof *ref);
  ref->p = p;
  ref->seed = o->seed;
  pc_state *s = pc_state_new(p);
  pc_kernel *k = NULL;
  void *owned[PC_MAX_STAGES] = {0};
  float *bufs[PC_MAX_STAGES] = {0};
  if (!s) {
    pt_fail(d, PT_ERR_INVALID, "%s: too many stages", p->name);
    goto fail;
  }
  for (int op = 0; op < p->n_ops; op++) {
    if (!p->ops[op].is_placeholder && !p->ops[op].is_output) continue;
    int64_t n = pc_op_numel(&p->ops[op]);
    ref->data[op] = alloc_placed(n, PC_INPUT_PAGE_OFFSET, &ref->base[op]);
    if (!ref->data[op]) {
      pt_fail(d, PT_ERR_NOMEM, "%s: cannot allocate %lld floats for %s", p->name, (long long)n, p->ops[op].name);
      goto fail;
    }
    if (p->ops[op].is_placeholder) fill_input(ref->data[op], n, o->seed * 1000003u + (uint64_t)op);
  }
  pc_lower_opts lo = {0};
  k = pc_lower(s, &lo, d);
  if (!k || pc_kernel_jit(k, d)) goto fail;
  if (bind_buffers(k, p, ref, ref->data, bufs, owned, d)) goto fail;
  pc_kernel_entry(k)(bufs, NULL);
  for (int op = 0; op < p->n_ops; op++) {
    if (!p->ops[op].is_output) continue;
    double m = 0;
    for (int64_t i = 0; i < pc_op_numel(&p->ops[op]); i++) m = fmax(m, fabs(ref->data[op][i]));
    ref->out_scale[op] = m;
  }
  for (int i = 0; i < PC_MAX_STAGES; i++) free(owned[i]);
  pc_kernel_free(k);
  pc_state_free(s);
  return ref;
fail:
  for (int i = 0; i < PC_MAX_STAGES; i++) free(owned[i]);
  pc_kernel_free(k);
  pc_state_free(s);
  pc_reference_free(ref);
  return NULL;
}

const float *pc_reference_data(const pc_reference *r, int op) {
  return op >= 0 && op < PC_MAX_STAGES ? r->data[op] : NULL;
}

void pc_reference_free(pc_reference *r) {
  if (!r) return;
  for (int i = 0; i < PC_MAX_STAGES; i++) free(r->base[i]);
  free(r);
}

/* Shared between the child that runs and the parent that waits. */
typedef struct {
  int stage; /* 1 = outputs written, 2 = timing done */
  int n_times;
  double times[MAX_TIMES];
  char message[200];
} shared_result;

static size_t page_up(size_t bytes) { return (bytes + 4095) & ~(size_t)4095; }

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

pc_clock_fn pc_measure_clock(bool cpu_clock, int threads) { return cpu_clock && threads == 1 ? pt_cpu_now : pt_now; }

/* One warm-up run, then repeats until min_time_s has been timed (at least min_repeats). */
static void time_runs(pc_kernel_fn fn, float **bufs, pt_pool *pool, const pc_measure_opts *o, shared_result *sr) {
  fn(bufs, pool);
  sr->stage = 1;
  pc_clock_fn run_clock = pc_measure_clock(o->cpu_clock, o->threads);
  double total = 0;
  while (sr->n_times < MAX_TIMES && (total < o->min_time_s || sr->n_times < o->min_repeats)) {
    double t0 = run_clock();
    fn(bufs, pool);
    double t = run_clock() - t0;
    sr->times[sr->n_times++] = t;
    total += t;
  }
  sr->stage = 2;
}

static void child_run(pc_kernel *k, const pc_program *p, const pc_reference *ref, const pc_measure_opts *o, float **outs, shared_result *sr) {
  float *bufs[PC_MAX_STAGES];
  void *owned[PC_MAX_STAGES];
  pt_diag d = {0};
  /* A faulting kernel must die by its signal (sanitizer runtimes would turn it into an
   * exit status), so the parent can name it. */
  static const int fatal[] = {SIGSEGV, SIGBUS, SIGFPE, SIGILL};
  for (size_t i = 0; i < PT_ARRAY_LEN(fatal); i++) signal(fatal[i], SIG_DFL);
  if (bind_buffers(k, p, ref, outs, bufs, owned, &d)) {
    snprintf(sr->message, sizeof sr->message, "%.190s", d.msg);
    _exit(3);
  }
  pt_pool *pool = pt_pool_new(o->threads);
  time_runs(pc_kernel_entry(k), bufs, pool, o, sr);
  pt_pool_free(pool);
  _exit(0);
}

static int check_outputs(const pc_program *p, const pc_reference *ref, float **outs, const pc_measure_opts *o,
                         pc_measure_result *res) {
  res->max_rel_err = 0;
  for (int op = 0; op < p->n_ops; op++) {
    if (!p->ops[op].is_output) continue;
    double floor_ = o->atol * (ref->out_scale[op] > 0 ? ref->out_scale[op] : 1);
    for (int64_t i = 0; i < pc_op_numel(&p->ops[op]); i++) {
      double want = ref->data[op][i], got = outs[op][i];
      double err = fabs(got - want) / (fabs(want) + floor_);
      if (!(err <= o->rtol)) { /* also catches NaN */
        res->error = PC_MEASURE_WRONG_ANSWER;
        snprintf(res->message, sizeof res->message, "%s[%lld] = %g, reference %g (relative error %.3g > %.3g)",
                 p->ops[op].name, (long long)i, got, want, err, o->rtol);
        res->max_rel_err = isnan(err) ? INFINITY : err;
        return -1;
      }
      if (err > res->max_rel_err) res->max_rel_err = err;
    }
  }
  return 0;
}

int pc_measure_kernel(pc_kernel *k, const pc_program *p, const pc_reference *ref, const pc_measure_opts *o,
                      pc_measure_result *res, pt_diag *d) {
  memset(res, 0, sizeof *res);
  res->compile_s = pc_kernel_compile_seconds(k);
  if (pc_kernel_jit(k, d)) {
    res->error = PC_MEASURE_COMPILE_HOST;
    snprintf(res->message, sizeof res->message, "%.250s", d->msg);
    return 0;
  }
  res->compile_s = pc_kernel_compile_seconds(k);
  /* Outputs and the result live in one shared mapping the child writes and we read. */
  size_t out_bytes[PC_MAX_STAGES] = {0}, total = page_up(sizeof(shared_result));
  for (int op = 0; op < ref->p->n_ops; op++)
    if (ref->p->ops[op].is_output) {
      out_bytes[op] = page_up(PC_OUTPUT_PAGE_OFFSET + (size_t)pc_op_numel(&ref->p->ops[op]) * sizeof(float));
      total += out_bytes[op];
    }
  total = (total + 63) & ~(size_t)63;
  void *mem = mmap(NULL, total + 64, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  if (mem == MAP_FAILED) return pt_fail(d, PT_ERR_NOMEM, "cannot map %zu bytes for outputs", total);
  shared_result *sr = mem;
  float *outs[PC_MAX_STAGES] = {0};
  char *cursor = (char *)mem + page_up(sizeof(shared_result)) + PC_OUTPUT_PAGE_OFFSET; /* pages after it */
  for (int op = 0; op < ref->p->n_ops; op++)
    if (out_bytes[op]) {
      outs[op] = (float *)cursor;
      /* A kernel that forgets a point must not pass by luck: poison with NaN. */
      for (int64_t i = 0; i < pc_op_numel(&ref->p->ops[op]); i++) outs[op][i] = NAN;
      cursor += out_bytes[op];
    }
  if (o->in_process) {
    float *bufs[PC_MAX_STAGES];
    void *owned[PC_MAX_STAGES];
    int rc = bind_buffers(k, p, ref, outs, bufs, owned, d);
    if (rc) {
      munmap(mem, total + 64);
      return rc;
    }
    pt_pool *pool = pt_pool_new(o->threads);
    time_runs(pc_kernel_entry(k), bufs, pool, o, sr);
    pt_pool_free(pool);
    for (int i = 0; i < PC_MAX_STAGES; i++)
      if (i < pc_kernel_n_buffers(k)) free(owned[i]);
  } else {
    fflush(NULL);
    pid_t pid = fork();
    if (pid < 0) {
      munmap(mem, total + 64);
      return pt_fail(d, PT_ERR_RUNTIME, "fork failed");
    }
    if (pid == 0) child_run(k, p, ref, o, outs, sr);
    double t0 = pt_now();
    int status = 0;
    bool done = false;
    while (!done) {
      pid_t w = waitpid(pid, &status, WNOHANG);
      if (w == pid) done = true;
      else if (pt_now() - t0 > o->timeout_s) {
        kill(pid, SIGKILL);
        waitpid(pid, &status, 0);
        res->error = PC_MEASURE_RUN_TIMEOUT;
        snprintf(res->message, sizeof res->message, "run timed out after %.1f s (%s)", o->timeout_s,
                 sr->stage == 0 ? "first run did not finish" : "during timing");
        break;
      } else {
        struct timespec ts = {0, 200000};
        nanosleep(&ts, NULL);
      }
    }
    if (done && WIFSIGNALED(status)) {
      res->error = PC_MEASURE_RUNTIME_DEVICE;
      snprintf(res->message, sizeof res->message, "kernel crashed: %s", strsignal(WTERMSIG(status)));
    } else if (done && WEXITSTATUS(status) != 0) {
      res->error = PC_MEASURE_RUNTIME_DEVICE;
      snprintf(res->message, sizeof res->message, "child failed: %s", sr->message[0] ? sr->message : "exit status");
    }
  }
  if (res->error == PC_MEASURE_OK && check_outputs(ref->p, ref, outs, o, res) == 0 && sr->n_times > 0) {
    qsort(sr->times, (size_t)sr->n_times, sizeof(double), cmp_double);
    res->repeats = sr->n_times;
    res->min_s = sr->times[0];
    res->max_s = sr->times[sr->n_times - 1];
    res->median_s = sr->n_times % 2 ? sr->times[sr->n_times / 2]
                                    : 0.5 * (sr->times[sr->n_times / 2 - 1] + sr->times[sr->n_times / 2]);
  }
  munmap(mem, total + 64);
  return 0;
}

int pc_measure(const pc_state *s, const pc_reference *ref, const pc_measure_opts *o, pc_measure_result *res,
               pt_diag *d) {
  pc_lower_opts lo = {0};
  pc_kernel *k = pc_lower(s, &lo, d);
  if (!k) {
    memset(res, 0, sizeof *res);
    res->error = PC_MEASURE_INSTANTIATION_ERROR;
    snprintf(res->message, sizeof res->message, "%.250s", d->msg);
    return 0;
  }
  int rc = pc_measure_kernel(k, s->prog, ref, o, res, d);
  pc_kernel_free(k);
  return rc;
}
