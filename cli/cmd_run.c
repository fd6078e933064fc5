/* portent run: JIT a scheduled workload, check it against the reference, time it. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "commands.h"
#include "schedule_args.h"

static void usage(FILE *f) {
  fprintf(f, "usage: portent run (WORKLOAD | --expr FILE) [schedule options] [--threads N] [--seed S]\n"
             "       [--timeout SEC] [--min-time SEC] [--cpu-clock] [--json]\n\n%s"
             "  --threads N           thread pool size (default: all online CPUs)\n"
             "  --seed S              seed of the random inputs (default 1)\n"
             "  --timeout SEC         kill the measuring child after SEC seconds (default 60)\n"
             "  --min-time SEC        repeat until this much time is measured (default 0.5)\n"
             "  --cpu-clock           with --threads 1: time by the thread's CPU time, not the wall clock\n"
             "                        (as tune does: another process's time slices are not counted)\n"
             "  --log FILE            append the measurement to FILE as a TVM record (JSON line)\n"
             "Output is checked against the unscheduled program (relative tolerance 1e-3, floor 1e-3 x\n"
             "the largest reference value). Exit 1 if the kernel crashed, hung or was wrong.\n",
          schedule_args_help);
}

static const char *error_name(pc_measure_error e) {
  static const char *names[] = {"ok", "instantiation error", "compile error", "compile error (device)",
                                "runtime error", "wrong answer", "build timeout", "run timeout", "unknown"};
  return e >= 0 && e <= PC_MEASURE_UNKNOWN ? names[e] : "unknown";
}

int cmd_run(int argc, char **argv) {
  schedule_args a = {0};
  pc_measure_opts o;
  pc_measure_opts_default(&o);
  o.threads = (int)sysconf(_SC_NPROCESSORS_ONLN);
  o.timeout_s = 60;
  o.min_time_s = 0.5;
  bool json = false;
  const char *log = NULL;
  for (int i = 1; i < argc; i++) {
    int t = schedule_args_take(&a, argc, argv, &i);
    if (t < 0) return EXIT_USAGE;
    if (t) continue;
    const char *arg = argv[i];
    bool has_val = i + 1 < argc;
    if (strcmp(arg, "--help") == 0) {
      usage(stdout);
      return EXIT_OK;
    } else if (strcmp(arg, "--json") == 0) json = true;
    else if (strcmp(arg, "--threads") == 0 && has_val) o.threads = atoi(argv[++i]);
    else if (strcmp(arg, "--seed") == 0 && has_val) o.seed = strtoull(argv[++i], NULL, 10);
    else if (strcmp(arg, "--timeout") == 0 && has_val) o.timeout_s = atof(argv[++i]);
    else if (strcmp(arg, "--min-time") == 0 && has_val) o.min_time_s = atof(argv[++i]);
    else if (strcmp(arg, "--cpu-clock") == 0) o.cpu_clock = true;
    else if (strcmp(arg, "--log") == 0 && has_val) log = argv[++i];
    else if (arg[0] != '-' && !a.workload) a.workload = arg;
    else {
      fprintf(stderr, "portent run: unexpected argument '%s'\n", arg);
      usage(stderr);
      return EXIT_USAGE;
    }
  }
  if (o.threads < 1 || o.threads > 1024 || o.timeout_s <= 0 || o.min_time_s < 0) {
    fprintf(stderr, "portent run: --threads must be 1..1024, --timeout > 0, --min-time >= 0\n");
    return EXIT_USAGE;
  }
  pc_program *p = NULL;
  pc_state *s = schedule_args_build(&a, &p);
  if (!s) return EXIT_USAGE;
  pt_diag d = {0};
  double t0 = pt_now();
  pc_reference *ref = pc_reference_new(p, &o, &d);
  double ref_s = pt_now() - t0;
  if (!ref) {
    fprintf(stderr, "portent run: reference: %s\n", d.msg);
    pc_state_free(s);
    pc_program_free(p);
    return EXIT_FAILED;
  }
  pc_measure_result r;
  double t1 = pt_now();
  int rc = pc_measure(s, ref, &o, &r, &d);
  if (rc == 0 && log) {
    static pc_record rec;
    pc_record_from_measure(&rec, s, &r, pt_now() - t1);
    pt_diag ld = {0};
    if (pc_record_append(log, &rec, &ld)) {
      fprintf(stderr, "portent run: %s\n", ld.msg);
      rc = -1;
    }
  }
  int exit_code = rc == 0 && r.error == PC_MEASURE_OK ? EXIT_OK : EXIT_FAILED;
  if (rc) fprintf(stderr, "portent run: %s\n", d.msg);
  else if (json) {
    printf("{\"workload\": \"%s\", \"threads\": %d, \"error_code\": %d, \"error\": \"%s\", \"message\": \"%s\", "
           "\"median_seconds\": %.9g, \"min_seconds\": %.9g, \"max_seconds\": %.9g, \"repeats\": %d, "
           "\"gflops\": %.3f, \"max_rel_err\": %.3g, \"compile_seconds\": %.4f, \"reference_seconds\": %.3f}\n",
           p->name, o.threads, r.error, error_name(r.error), r.message, r.median_s, r.min_s, r.max_s, r.repeats,
           r.median_s > 0 ? p->flops / r.median_s * 1e-9 : 0.0, r.max_rel_err, r.compile_s, ref_s);
  } else if (r.error != PC_MEASURE_OK) {
    fprintf(stderr, "portent run: %s: %s: %s\n", p->name, error_name(r.error), r.message);
  } else {
    printf("%s: %.4f ms median (min %.4f, max %.4f, %d runs, %d threads), %.2f GFLOP/s\n", p->name, r.median_s * 1e3,
           r.min_s * 1e3, r.max_s * 1e3, r.repeats, o.threads, p->flops / r.median_s * 1e-9);
    printf("  output matches the reference (max relative error %.2g); compile %.1f ms\n", r.max_rel_err,
           r.compile_s * 1e3);
  }
  pc_reference_free(ref);
  pc_state_free(s);
  pc_program_free(p);
  return exit_code;
}
