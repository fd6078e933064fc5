/* portent bench compile: lowering + O3 + JIT time per candidate over random schedules, and
 * the hand-written schedule's GFLOP/s (target-neutral and host-specialized O3) beside
 * OpenBLAS and oneDNN measured in the same run, on 1..N threads. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "blas_env.h"
#include "commands.h"
#include "compiler.h"

static int cmp_d(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}


static double compile_median_ms(const pc_program *p, int n, uint64_t seed) {
  double *t = calloc((size_t)n, sizeof(double));
  pt_rng rng = {seed};
  int k = 0;
  for (int i = 0; i < n; i++) {
    pc_state *s = pc_state_new(p);
    pt_diag d = {0};
    pc_schedule_random(s, &rng, &d);
    double t0 = pt_now();
    pc_lower_opts lo = {0};
    pc_kernel *kern = pc_lower(s, &lo, &d);
    if (kern && pc_kernel_jit(kern, &d) == 0) t[k++] = (pt_now() - t0) * 1e3;
    pc_kernel_free(kern);
    pc_state_free(s);
  }
  qsort(t, (size_t)k, sizeof(double), cmp_d);
  double m = k ? t[k / 2] : 0;
  free(t);
  return m;
}

static double measure_default(const pc_program *p, const pc_reference *ref, bool host, int threads, double min_time,
                              char *err, size_t cap) {
  pc_state *s = pc_state_new(p);
  pt_diag d = {0};
  double sec = 0;
  if (pc_schedule_default(s, 16, &d) == 0) {
    pc_lower_opts lo = {.host_specialized = host};
    pc_kernel *k = pc_lower(s, &lo, &d);
    pc_measure_opts o;
    pc_measure_opts_default(&o);
    o.threads = threads;
    o.min_time_s = min_time;
    o.timeout_s = 120;
    pc_measure_result r;
    if (k && pc_measure_kernel(k, p, ref, &o, &r, &d) == 0 && r.error == PC_MEASURE_OK) sec = r.median_s;
    else snprintf(err, cap, "%.200s", k ? r.message : d.msg);
    pc_kernel_free(k);
  } else
    snprintf(err, cap, "%.200s", d.msg);
  pc_state_free(s);
  return sec;
}

int cmd_bench_compile(int argc, char **argv) {
  restart_without_forced_blas_core("bench", argc, argv);
  const char *only = NULL;
  int n_cand = 100, max_threads = (int)sysconf(_SC_NPROCESSORS_ONLN);
  double min_time = 0.3;
  for (int i = 1; i < argc; i++) {
    bool v = i + 1 < argc;
    if (strcmp(argv[i], "--help") == 0) {
      printf("usage: portent bench compile [--workloads a,b,...] [--candidates N] [--threads MAX] [--min-time SEC]\n\n"
             "For each suite workload: median lower+O3+JIT time over N random schedules (default 100), then\n"
             "the hand-written schedule's GFLOP/s with the target-neutral and the host-specialized middle\n"
             "end, OpenBLAS (conv: im2col + sgemm) and oneDNN (with reorders from/to NCHW, and native),\n"
             "on 1..MAX threads, all in this one run.\n");
      return EXIT_OK;
    } else if (strcmp(argv[i], "--workloads") == 0 && v) only = argv[++i];
    else if (strcmp(argv[i], "--candidates") == 0 && v) n_cand = atoi(argv[++i]);
    else if (strcmp(argv[i], "--threads") == 0 && v) max_threads = atoi(argv[++i]);
    else if (strcmp(argv[i], "--min-time") == 0 && v) min_time = atof(argv[++i]);
    else {
      fprintf(stderr, "portent bench compile: unexpected argument '%s'\n", argv[i]);
      return EXIT_USAGE;
    }
  }
  if (n_cand < 1 || max_threads < 1 || min_time < 0) {
    fprintf(stderr, "portent bench compile: --candidates and --threads must be >= 1\n");
    return EXIT_USAGE;
  }
  printf("OpenBLAS core: %s\n", pc_baseline_openblas_core());
  printf("%-11s %9s %3s %9s %9s %9s %9s %9s %8s\n", "workload", "compile", "thr", "neutral", "host-O3", "OpenBLAS",
         "oneDNN", "dnnl-nat", "vs dnnl");
  printf("%-11s %9s %3s %9s %9s %9s %9s %9s %8s\n", "", "ms/cand", "", "GFLOP/s", "GFLOP/s", "GFLOP/s", "GFLOP/s",
         "GFLOP/s", "");
  int failures = 0;
  for (int w = 0; w < pc_suite_count(); w++) {
    const char *name = pc_suite_name(w);
    if (only) {
      const char *hit = strstr(only, name);
      size_t len = strlen(name);
      if (!hit || (hit != only && hit[-1] != ',') || (hit[len] && hit[len] != ',')) continue;
    }
    pt_diag d = {0};
    pc_program *p = pc_workload_build(name, &d);
    if (!p) {
      fprintf(stderr, "%s: %s\n", name, d.msg);
      failures++;
      continue;
    }
    double cms = compile_median_ms(p, n_cand, 7);
    pc_measure_opts ro;
    pc_measure_opts_default(&ro);
    pc_reference *ref = pc_reference_new(p, &ro, &d);
    if (!ref) {
      fprintf(stderr, "%s: reference: %s\n", name, d.msg);
      failures++;
      pc_program_free(p);
      continue;
    }
    for (int t = 1; t <= max_threads; t *= 2) {
      char err[256] = "";
      double neutral = measure_default(p, ref, false, t, min_time, err, sizeof err);
      double host = measure_default(p, ref, true, t, min_time, err, sizeof err);
      double blas = 0, dnnl = 0, dnnl_native = 0;
      pt_diag bd = {0};
      if (pc_baseline_openblas(p, t, min_time, false, &blas, &bd)) blas = 0;
      if (pc_baseline_onednn(p, t, min_time, false, &dnnl, &dnnl_native, &bd)) dnnl = dnnl_native = 0;
      double g = p->flops * 1e-9;
#define GF(sec) ((sec) > 0 ? g / (sec) : 0.0)
      printf("%-11s %9.1f %3d %9.1f %9.1f %9.1f %9.1f %9.1f %8.2f\n", t == 1 ? name : "", t == 1 ? cms : 0.0, t,
             GF(neutral), GF(host), GF(blas), GF(dnnl), GF(dnnl_native), neutral > 0 && dnnl > 0 ? dnnl / neutral : 0.0);
      if (err[0]) {
        fprintf(stderr, "%s (%d threads): %s\n", name, t, err);
        failures++;
      }
      fflush(stdout);
      if (t < max_threads && t * 2 > max_threads) t = max_threads / 2;
    }
    pc_reference_free(ref);
    pc_program_free(p);
  }
  printf("columns: compile = median lower + target-neutral O3 + JIT per random candidate; neutral/host-O3 =\n"
         "the hand-written schedule through each middle end; oneDNN = with reorders from/to the plain\n"
         "layout; dnnl-nat = its own layouts only; vs dnnl = portent neutral speed / oneDNN (with reorders).\n");
  return failures ? EXIT_FAILED : EXIT_OK;
}
