/* portent compile: lower a scheduled workload; print or write IR, object or assembly. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "commands.h"
#include "schedule_args.h"

static void usage(FILE *f) {
  fprintf(f, "usage: portent compile (WORKLOAD | --expr FILE) [schedule options] [-o out.ll|out.o|out.s]\n"
             "       [--host-o3] [--print-state] [--json]\n\n%s"
             "  -o FILE               write the target-neutral IR (.ll) or host object/assembly (.o/.s);\n"
             "                        without -o the IR goes to standard output\n"
             "  --host-o3             run O3 with the host TargetMachine instead of the target-neutral\n"
             "                        pipeline (the baseline that `bench compile` compares)\n"
             "  --print-state         print the scheduled loop structure\n"
             "  --json                print a summary as JSON (buffers, parallel functions, compile time)\n",
          schedule_args_help);
}

int cmd_compile(int argc, char **argv) {
  schedule_args a = {0};
  const char *out = NULL;
  bool json = false, host = false, print_state = false;
  for (int i = 1; i < argc; i++) {
    int t = schedule_args_take(&a, argc, argv, &i);
    if (t < 0) return EXIT_USAGE;
    if (t) continue;
    if (strcmp(argv[i], "--help") == 0) {
      usage(stdout);
      return EXIT_OK;
    } else if (strcmp(argv[i], "-o") == 0 && i + 1 < argc) out = argv[++i];
    else if (strcmp(argv[i], "--json") == 0) json = true;
    else if (strcmp(argv[i], "--host-o3") == 0) host = true;
    else if (strcmp(argv[i], "--print-state") == 0) print_state = true;
    else if (argv[i][0] != '-' && !a.workload) a.workload = argv[i];
    else {
      fprintf(stderr, "portent compile: unexpected argument '%s'\n", argv[i]);
      usage(stderr);
      return EXIT_USAGE;
    }
  }
  pc_program *p = NULL;
  pc_state *s = schedule_args_build(&a, &p);
  if (!s) return EXIT_USAGE;
  if (print_state) {
    static char buf[1 << 16];
    pc_state_print(s, buf, sizeof buf);
    fputs(buf, stderr);
  }
  pt_diag d = {0};
  pc_lower_opts lo = {.host_specialized = host};
  pc_kernel *k = pc_lower(s, &lo, &d);
  int rc = EXIT_OK;
  if (!k) {
    fprintf(stderr, "portent compile: %s\n", d.msg);
    rc = EXIT_FAILED;
  } else if (out && pc_kernel_emit(k, out, &d)) {
    fprintf(stderr, "portent compile: %s\n", d.msg);
    rc = EXIT_FAILED;
  } else if (json) {
    printf("{\"workload\": \"%s\", \"kernel\": \"%s\", \"compile_seconds\": %.6f, \"buffers\": [", p->name,
           pc_kernel_name(k), pc_kernel_compile_seconds(k));
    for (int i = 0; i < pc_kernel_n_buffers(k); i++)
      printf("%s{\"tensor\": \"%s\", \"elements\": %lld}", i ? ", " : "", s->prog->ops[pc_kernel_buffer_op(k, i)].name,
             (long long)pc_kernel_buffer_numel(k, i));
    printf("], \"parallel_functions\": [");
    for (int i = 0; i < pc_kernel_n_parallel(k); i++) printf("%s\"%s\"", i ? ", " : "", pc_kernel_parallel_fn(k, i));
    printf("]%s%s%s}\n", out ? ", \"output\": \"" : "", out ? out : "", out ? "\"" : "");
  } else if (!out) {
    char *ir = pc_kernel_ir(k);
    fputs(ir, stdout);
    free(ir);
  }
  pc_kernel_free(k);
  pc_state_free(s);
  pc_program_free(p);
  return rc;
}
