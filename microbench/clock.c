/* Timing: repetition statistics (value and relative spread), kernel timing that grows the
 * iteration count until a call lasts long enough, and the core clock, calibrated with a
 * dependent chain of 64-bit integer adds (1 cycle each on every x86 and Arm core portent
 * targets: Agner Fog's instruction tables, uops.info), since a VM's TSC need not tick at the
 * core clock. */
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "internal.h"

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

pmb_stats pmb_stats_of(double *v, int n) {
  pmb_stats s = {.reps = n, .value = NAN, .min = NAN, .max = NAN, .median = NAN, .spread = 0};
  if (n <= 0) return s;
  qsort(v, (size_t)n, sizeof *v, cmp_double);
  s.min = v[0];
  s.max = v[n - 1];
  s.median = v[n / 2];
  /* the best repetition: interference (other processes, interrupts) only ever adds time */
  s.value = s.min;
  s.spread = s.value > 0 ? (s.max - s.min) / s.value : 0;
  return s;
}

pmb_stats pmb_stats_scale(pmb_stats s, double f) {
  s.value *= f, s.min *= f, s.max *= f, s.median *= f;
  return s;
}

ptg_figure pmb_figure(pmb_stats s) {
  return (ptg_figure){.value = s.value, .spread = s.spread, .reps = s.reps, .source = NULL};
}

/* CPU time of this thread: on a shared or virtual machine, time spent descheduled (other
 * processes, the hypervisor's steal) is not the kernel's. */
double pmb_thread_seconds(void) {
  struct timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static pmb_stats time_with(double (*now)(void), pmb_kernel_fn fn, void *in, void *out, double min_seconds, int reps) {
  int64_t iters = 64;
  fn(iters, in, out); /* warm up: page in, wake the core */
  for (;;) {
    double t0 = now();
    fn(iters, in, out);
    double dt = now() - t0;
    if (dt >= min_seconds || iters > ((int64_t)1 << 40)) break;
    /* aim 20% past the target so the timed calls do not straddle it */
    double grow = dt > 0 ? 1.2 * min_seconds / dt : 16;
    iters = (int64_t)((double)iters * (grow > 16 ? 16 : grow < 1.5 ? 1.5 : grow));
  }
  double t[64];
  if (reps > 64) reps = 64;
  for (int r = 0; r < reps; r++) {
    double t0 = now();
    fn(iters, in, out);
    t[r] = (now() - t0) / (double)iters;
  }
  return pmb_stats_of(t, reps);
}

pmb_stats pmb_time_kernel(pmb_kernel_fn fn, void *in, void *out, double min_seconds, int reps) {
  return time_with(pmb_thread_seconds, fn, in, out, min_seconds, reps);
}

pmb_stats pmb_time_kernel_wall(pmb_kernel_fn fn, void *in, void *out, double min_seconds, int reps) {
  return time_with(pt_now, fn, in, out, min_seconds, reps);
}

void pmb_progress(const pmb_ctx *c, const char *fmt, ...) {
  if (!c->o || !c->o->progress) return;
  va_list ap;
  va_start(ap, fmt);
  fputs("characterize: ", c->o->progress);
  vfprintf(c->o->progress, fmt, ap);
  fputc('\n', c->o->progress);
  fflush(c->o->progress);
  va_end(ap);
}

/* One clock measurement: best of a few short runs of the add chain, in GHz. */
static double clock_sample(pmb_ctx *c, int reps, double seconds, pmb_stats *out) {
  _Alignas(64) char in[PMB_REGION], out_buf[64];
  pmb_kernel k = pmb_kernel_latency((pmb_op){PTG_OP_ADD, PTG_ELEM_I64, 64});
  pmb_kernel_fill(&k, in);
  pmb_stats s = pmb_time_kernel(c->clock, in, out_buf, seconds, reps);
  if (out) *out = s;
  return 1e-9 / (s.value / k.unroll);
}

static const pmb_op sentinel_ops[2] = {{PTG_OP_ADD, PTG_ELEM_I64, 64}, {PTG_OP_CMPSEL, PTG_ELEM_F32, 128}};
/* The vector sentinel: compare+select, the class a neighbour moved most (see pmb_sentinel);
 * a float add where the host has no 128-bit compare+select. */
static pmb_op vector_sentinel(const pmb_ctx *c) {
  return pmb_op_supported(c->jit, sentinel_ops[1]) ? sentinel_ops[1] : (pmb_op){PTG_OP_ADD, PTG_ELEM_F32, 32};
}

int pmb_calibrate_clock(pmb_ctx *c, pt_diag *d) {
  pmb_kernel k = pmb_kernel_latency((pmb_op){PTG_OP_ADD, PTG_ELEM_I64, 64});
  pmb_kernel ks[2] = {pmb_kernel_throughput(sentinel_ops[0]), pmb_kernel_throughput(vector_sentinel(c))};
  LLVMModuleRef m = pmb_jit_module(c->jit, "clock");
  int err = pmb_kernel_build(c->jit, m, &k, "pmb_clock", d);
  if (err == 0) err = pmb_kernel_build(c->jit, m, &ks[0], "pmb_sentinel0", d);
  if (err == 0) err = pmb_kernel_build(c->jit, m, &ks[1], "pmb_sentinel1", d);
  if (err < 0) {
    LLVMDisposeModule(m);
    return err;
  }
  if ((err = pmb_jit_add(c->jit, m, d)) < 0) return err;
  if (!(c->clock = (pmb_kernel_fn)pmb_jit_lookup(c->jit, "pmb_clock", d))) return d->err;
  if (!(c->sentinel[0] = (pmb_kernel_fn)pmb_jit_lookup(c->jit, "pmb_sentinel0", d))) return d->err;
  if (!(c->sentinel[1] = (pmb_kernel_fn)pmb_jit_lookup(c->jit, "pmb_sentinel1", d))) return d->err;
  c->n_sentinel[0] = c->n_sentinel[1] = 0;
  /* a long first run: the core leaves any idle state before anything is timed */
  pmb_stats s;
  clock_sample(c, 1, 0.05, NULL);
  c->ghz = clock_sample(c, c->reps * 2 + 1, 2 * c->min_seconds, &s);
  c->n_clock = 0;
  c->clock_ghz[c->n_clock++] = c->ghz;
  double raw[2];
  for (int i = 0; i < 3; i++) pmb_sentinel(c, raw);
  pmb_progress(c, "core clock %.3f GHz (spread %.1f%%); sentinels %.3f and %.3f cycles per op", c->ghz, 100 * s.spread, raw[0],
               raw[1]);
  return PT_OK;
}

/* The clock drifts (turbo, the host's load): each figure is converted to cycles with a clock
 * measured just before it; the published frequency summarizes all those samples. */
double pmb_recalibrate(pmb_ctx *c) {
  c->ghz = clock_sample(c, 3, c->min_seconds / 2, NULL);
  if (c->n_clock < (int)PT_ARRAY_LEN(c->clock_ghz)) c->clock_ghz[c->n_clock++] = c->ghz;
  return c->ghz;
}

void pmb_clock_summary(pmb_ctx *c) {
  double v[PT_ARRAY_LEN(c->clock_ghz)];
  memcpy(v, c->clock_ghz, sizeof(double) * (size_t)c->n_clock);
  pmb_stats s = pmb_stats_of(v, c->n_clock);
  double median = v[c->n_clock / 2]; /* sorted by pmb_stats_of */
  c->t->frequency_ghz = (ptg_figure){.value = median, .spread = (s.max - s.min) / median, .reps = s.reps,
                                     .source = "dependent 64-bit add chain (1 cycle per add), median of the samples taken before each figure"};
}

/* The sentinels: cycles per op of 12 independent 64-bit add chains, and of 12 compare+select
 * chains. On the Zen 5 VM, in episodes of a few seconds that come and go whatever our
 * own two vCPUs run (a spinning process on the other vCPU does not cause them), 12 independent
 * add chains go from 0.19-0.20 to 0.21-0.27 cycles per add, and at the same moments
 * compare+select latency drops from 5 to 4 cycles while its throughput and gather throughput
 * get 30-40% worse: what another hardware thread on the same physical core does to the
 * shared scheduler and pipes (the host's SMT sibling, i.e. another tenant). Timed on this
 * thread's CPU time like every kernel, so being descheduled does not count, only sharing. */
/* The reference of sentinel k: the 10th percentile of its readings, not the lowest, since
 * an attempt is judged by the higher of readings taken on either side of it: against the
 * lowest of a thousand readings every attempt would look shared. */
static void update_reference(pmb_ctx *c, int k, double reading) {
  int n = c->n_sentinel[k]++;
  int cap = (int)PT_ARRAY_LEN(c->sentinel_seen[k]);
  c->sentinel_seen[k][n % cap] = reading;
  n = n + 1 < cap ? n + 1 : cap;
  if (n > 16 && n % 16) return; /* re-sorted every 16 readings once there are some */
  double v[PT_ARRAY_LEN(c->sentinel_seen[k])];
  memcpy(v, c->sentinel_seen[k], sizeof(double) * (size_t)n);
  qsort(v, (size_t)n, sizeof *v, cmp_double);
  c->sentinel_ref[k] = v[n / 10];
}

double pmb_share(const pmb_ctx *c, const double raw[2]) {
  return fmax(raw[0] / c->sentinel_ref[0], raw[1] / c->sentinel_ref[1]);
}

double pmb_sentinel(pmb_ctx *c, double raw[2]) {
  _Alignas(64) char in[PMB_REGION * 12], out_buf[64 * 12];
  pmb_kernel kc = pmb_kernel_latency(sentinel_ops[0]);
  /* In cycles of the dependent chain timed alongside, not of the calibrated clock: the clock
   * moves by a few percent between samples, which would hide a 10% rise. The chain's best
   * repetition (nothing makes a dependent chain faster than one add per cycle), the sentinels'
   * medians of 5 short ones: one interrupted repetition must not raise a reading, and a
   * neighbour present for part of the time must. */
  pmb_kernel_fill(&kc, in);
  double cycle = pmb_time_kernel(c->clock, in, out_buf, c->min_seconds / 8, 5).value / kc.unroll;
  for (int i = 0; i < 2; i++) {
    pmb_kernel k = pmb_kernel_throughput(i ? vector_sentinel(c) : sentinel_ops[0]);
    pmb_kernel_fill(&k, in);
    pmb_stats s = pmb_time_kernel(c->sentinel[i], in, out_buf, c->min_seconds / 8, 5);
    raw[i] = s.median / (k.chains * k.unroll) / cycle;
    update_reference(c, i, raw[i]);
  }
  return pmb_share(c, raw);
}

double pmb_wait_alone(pmb_ctx *c, double tol, double max_seconds) {
  double t0 = pt_now(), rel;
  for (;;) {
    double raw[2];
    rel = pmb_sentinel(c, raw);
    if (rel <= 1 + tol || pt_now() - t0 >= max_seconds) return rel;
    struct timespec nap = {0, 50 * 1000 * 1000};
    nanosleep(&nap, NULL);
  }
}
