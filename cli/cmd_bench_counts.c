/* portent bench counts: block counts without running (pa_profile_static_counts) over random
 * schedules of the suite: the share of candidates that count statically, the time per
 * candidate against the instrumented count-only run, and that both give the same counts. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analyzer.h"
#include "commands.h"
#include "compiler.h"

static void usage(FILE *f) {
  fprintf(f,
          "usage: portent bench counts [--schedules N] [--compare K] [--threads T] [--seed S]\n"
          "                            [--workloads a,b,...] [--timeout SEC] [--json]\n\n"
          "  --schedules N   random schedules in all, spread over the workloads (default 200)\n"
          "  --compare K     of those counted statically, K per workload also run instrumented\n"
          "                  (count-only) and compared block by block (default 2)\n"
          "  --threads T     pool threads parallel bodies are divided over (default 2)\n"
          "  --workloads L   comma-separated suite names (default: the whole suite)\n"
          "  --timeout SEC   limit of one instrumented run (default 20)\n"
          "Prints per workload and in all: schedules counted statically, median static-profile time\n"
          "per candidate (CFG, loops, task graphs and counts; lowering excluded), median instrumented\n"
          "count-only time (fork, JIT, run), and count mismatches (must be 0).\n");
}

/* Blocks whose count, count per call, or function calls/threads differ. */
static int mismatches(const pa_profile *s, const pa_profile *r) {
  int bad = s->n_functions != r->n_functions || s->threads != r->threads;
  for (int i = 0; i < s->n_functions && i < r->n_functions; i++) {
    const pa_function *fs = &s->functions[i], *fr = &r->functions[i];
    bad += fs->calls != fr->calls || fs->threads != fr->threads || fs->parallel != fr->parallel;
    for (int b = 0; b < fs->n_blocks && b < fr->n_blocks; b++)
      bad += fs->blocks[b].count != fr->blocks[b].count || fs->blocks[b].count_per_call != fr->blocks[b].count_per_call;
  }
  return bad;
}

typedef struct {
  int schedules, lowered, counted, compared, timeouts, mismatched;
  int n_static, n_run;
  double *static_ms, *run_ms;
} tally;

static void one_schedule(const pc_program *prog, pt_rng *rng, int threads, bool compare, double timeout, tally *t,
                         bool *attempted) {
  pc_state *s = pc_state_new(prog);
  pt_diag d = {0};
  t->schedules++;
  pc_kernel *k = NULL;
  if (pc_schedule_random(s, rng, &d) == 0) {
    pc_lower_opts lo = {0};
    k = pc_lower(s, &lo, &d);
  }
  if (k) {
    t->lowered++;
    pa_module *m = pa_module_from_llvm(pc_kernel_module(k));
    pa_static_opts so = {pc_kernel_name(k), threads};
    double t0 = pt_now();
    pa_profile *sp = pa_profile_static_counts(m, &so, &d);
    t->static_ms[t->n_static++] = (pt_now() - t0) * 1e3;
    pa_module_free(m);
    if (sp) t->counted++;
    if (sp && compare) {
      *attempted = true;
      int nb = pc_kernel_n_buffers(k);
      int64_t sizes[PC_MAX_STAGES];
      for (int b = 0; b < nb; b++) sizes[b] = pc_kernel_buffer_numel(k, b);
      pa_run_spec *spec = pa_run_spec_portent(pc_kernel_name(k), nb, sizes, threads, 1);
      spec->timeout_s = timeout;
      pa_options opt = {.no_reuse = true};
      pt_diag dr = {0};
      t0 = pt_now();
      pa_profile *rp = pa_profile_llvm(pc_kernel_module(k), spec, &opt, &dr);
      double ms = (pt_now() - t0) * 1e3;
      if (rp) {
        t->run_ms[t->n_run++] = ms;
        t->compared++;
        int bad = mismatches(sp, rp);
        if (bad) {
          t->mismatched++;
          char *steps = pc_steps_to_json(s->n_steps, s->steps);
          fprintf(stderr, "portent bench counts: %s: %d counts differ from the instrumented run; steps %s\n",
                  prog->name, bad, steps);
          free(steps);
        }
      } else
        t->timeouts++;
      pa_profile_free(rp);
      pa_run_spec_free(spec);
    }
    pa_profile_free(sp);
  }
  pc_kernel_free(k);
  pc_state_free(s);
}

int cmd_bench_counts(int argc, char **argv) {
  int n_sched = 200, compare = 2, threads = 2;
  unsigned long long seed = 1;
  double timeout = 20;
  const char *list = NULL;
  bool json = false;
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i];
    bool v = i + 1 < argc;
    if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
      usage(stdout);
      return EXIT_OK;
    } else if (strcmp(a, "--schedules") == 0 && v) n_sched = atoi(argv[++i]);
    else if (strcmp(a, "--compare") == 0 && v) compare = atoi(argv[++i]);
    else if (strcmp(a, "--threads") == 0 && v) threads = atoi(argv[++i]);
    else if (strcmp(a, "--seed") == 0 && v) seed = strtoull(argv[++i], NULL, 10);
    else if (strcmp(a, "--timeout") == 0 && v) timeout = atof(argv[++i]);
    else if (strcmp(a, "--workloads") == 0 && v) list = argv[++i];
    else if (strcmp(a, "--json") == 0) json = true;
    else {
      fprintf(stderr, "portent bench counts: unexpected argument '%s'\n", a);
      usage(stderr);
      return EXIT_USAGE;
    }
  }
  if (n_sched < 1 || compare < 0 || threads < 1 || threads > 64 || timeout <= 0) {
    fprintf(stderr, "portent bench counts: --schedules >= 1, --compare >= 0, --threads 1..64, --timeout > 0\n");
    return EXIT_USAGE;
  }
  const char *names[64];
  int nw = 0;
  for (int i = 0; i < pc_suite_count() && nw < 64; i++) {
    const char *n = pc_suite_name(i);
    if (list) {
      const char *p = strstr(list, n);
      size_t len = strlen(n);
      if (!p || (p != list && p[-1] != ',') || (p[len] && p[len] != ',')) continue;
    }
    names[nw++] = n;
  }
  if (!nw) {
    fprintf(stderr, "portent bench counts: no suite workload in '%s'\n", list);
    return EXIT_USAGE;
  }
  tally all = {0};
  all.static_ms = calloc((size_t)n_sched + 1, sizeof(double));
  all.run_ms = calloc((size_t)n_sched + 1, sizeof(double));
  if (!json)
    printf("%-12s %9s %8s %9s %12s %14s %10s\n", "workload", "schedules", "static", "compared", "static ms", "instrumented ms",
           "mismatch");
  for (int w = 0; w < nw; w++) {
    pt_diag d = {0};
    pc_program *prog = pc_workload_build(names[w], &d);
    if (!prog) {
      fprintf(stderr, "portent bench counts: %s\n", d.msg);
      return EXIT_FAILED;
    }
    int n = n_sched / nw + (w < n_sched % nw);
    tally t = {0};
    t.static_ms = calloc((size_t)n + 1, sizeof(double));
    t.run_ms = calloc((size_t)n + 1, sizeof(double));
    pt_rng rng = {seed * 1000 + (uint64_t)w};
    int ran = 0;
    for (int i = 0; i < n; i++) {
      bool attempted = false;
      one_schedule(prog, &rng, threads, ran < compare, timeout, &t, &attempted);
      ran += attempted;
    }
    if (!json)
      printf("%-12s %9d %8d %9d %12.2f %14.1f %10d\n", names[w], t.lowered, t.counted, t.compared,
             pt_median(t.static_ms, t.n_static), pt_median(t.run_ms, t.n_run), t.mismatched);
    memcpy(all.static_ms + all.n_static, t.static_ms, sizeof(double) * (size_t)t.n_static);
    memcpy(all.run_ms + all.n_run, t.run_ms, sizeof(double) * (size_t)t.n_run);
    all.n_static += t.n_static, all.n_run += t.n_run;
    all.schedules += t.schedules, all.lowered += t.lowered, all.counted += t.counted, all.compared += t.compared;
    all.timeouts += t.timeouts, all.mismatched += t.mismatched;
    free(t.static_ms);
    free(t.run_ms);
    pc_program_free(prog);
  }
  double ms_static = pt_median(all.static_ms, all.n_static), ms_run = pt_median(all.run_ms, all.n_run);
  if (json)
    printf("{\"schedules\": %d, \"lowered\": %d, \"counted_static\": %d, \"static_fraction\": %.4f, \"compared\": %d, "
           "\"timeouts\": %d, \"mismatched\": %d, \"static_ms_median\": %.3f, \"instrumented_ms_median\": %.3f, "
           "\"threads\": %d}\n",
           all.schedules, all.lowered, all.counted, all.lowered ? (double)all.counted / all.lowered : 0, all.compared,
           all.timeouts, all.mismatched, ms_static, ms_run, threads);
  else
    printf("all: %d of %d lowered schedules counted statically (%.1f%%); median static profile %.2f ms per candidate, "
           "instrumented count-only %.1f ms (%d runs, %d timed out); %d mismatched\n",
           all.counted, all.lowered, all.lowered ? 100.0 * all.counted / all.lowered : 0, ms_static, ms_run, all.n_run,
           all.timeouts, all.mismatched);
  free(all.static_ms);
  free(all.run_ms);
  return all.mismatched ? EXIT_FAILED : EXIT_OK;
}
