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
  pmb_stats s = {.reps = n, .value = NAN, .min = NAN, .max = NAN, .spread = 0};
  if (n <= 0) return s;
  qsort(v, (size_t)n, sizeof *v, cmp_double);
  s.min = v[0];
  s.max = v[n - 1];
  /* the best repetition: interference (other processes, interrupts) only ever adds time */
  s.value = s.min;
  s.spread = s.value > 0 ? (s.max - s.min) / s.value : 0;
  return s;
}

pmb_stats pmb_stats_scale(pmb_stats s, double f) {
  s.value *= f, s.min *= f, s.max *= f;
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

int pmb_calibrate_clock(pmb_ctx *c, pt_diag *d) {
  pmb_kernel k = pmb_kernel_latency((pmb_op){PTG_OP_ADD, PTG_ELEM_I64, 64});
  LLVMModuleRef m = pmb_jit_module(c->jit, "clock");
  int err = pmb_kernel_build(c->jit, m, &k, "pmb_clock", d);
  if (err < 0) {
    LLVMDisposeModule(m);
    return err;
  }
  if ((err = pmb_jit_add(c->jit, m, d)) < 0) return err;
  if (!(c->clock = (pmb_kernel_fn)pmb_jit_lookup(c->jit, "pmb_clock", d))) return d->err;
  /* a long first run: the core leaves any idle state before anything is timed */
  pmb_stats s;
  clock_sample(c, 1, 0.05, NULL);
  c->ghz = clock_sample(c, c->reps * 2 + 1, 2 * c->min_seconds, &s);
  c->n_clock = 0;
  c->clock_ghz[c->n_clock++] = c->ghz;
  pmb_progress(c, "core clock %.3f GHz (spread %.1f%%)", c->ghz, 100 * s.spread);
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
