/* portent bench: benchmark suites, one line each in the table below. */
#include <stdio.h>
#include <string.h>

#include "commands.h"

typedef struct {
  const char *name;
  int (*run)(int argc, char **argv);
  const char *summary;
} bench_suite;

/* One line per suite. */
static const bench_suite suites[] = {
    {"compile", cmd_bench_compile, "compile time per candidate; GFLOP/s vs OpenBLAS and oneDNN"},
    {"tune", cmd_bench_tune, "best latency per cost model after N measurements; vs oneDNN and OpenBLAS"},
    {"predict", cmd_bench_predict, "predicted vs measured over random schedules: MAPE, Spearman, top-k, ablation"},
    {"learn", cmd_bench_learn, "held-out networks: weighted top-k of analytic, xgb, TLP, MTL-TLP; training time, throughput"},
    {"analyze", cmd_bench_analyze, "profile misses vs callgrind's cache simulation; profiling cost vs native time"},
    {"characterize", cmd_bench_characterize, "characterize twice: run-to-run differences, measured vs published"},
    {"counts", cmd_bench_counts, "block counts without running vs the instrumented run: share, time, exactness"},
    {"xgbi", cmd_bench_xgbi, "xgb vs xgb with feature-importance pruning and label redistribution, per round"},
};

static void usage(FILE *f) {
  fprintf(f, "usage: portent bench SUITE [ARGS]   (portent bench SUITE --help)\n\nsuites:\n");
  for (size_t i = 0; i < sizeof suites / sizeof suites[0]; i++) fprintf(f, "  %-14s %s\n", suites[i].name, suites[i].summary);
}

int cmd_bench(int argc, char **argv) {
  if (argc < 2) {
    usage(stderr);
    return EXIT_USAGE;
  }
  if (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0) {
    usage(stdout);
    return EXIT_OK;
  }
  for (size_t i = 0; i < sizeof suites / sizeof suites[0]; i++)
    if (strcmp(argv[1], suites[i].name) == 0) return suites[i].run(argc - 1, argv + 1);
  fprintf(stderr, "portent bench: unknown suite '%s'\n", argv[1]);
  usage(stderr);
  return EXIT_USAGE;
}
