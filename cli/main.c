/* The portent command: argument parsing and subcommand dispatch only. */
#include <stdio.h>
#include <string.h>

#include "commands.h"

typedef struct {
  const char *name;
  int (*run)(int argc, char **argv);
  const char *summary;
} command;

/* One line per subcommand. */
static const command commands[] = {
    {"workloads", cmd_workloads, "list the built-in workloads and the benchmark suite"},
    {"networks", cmd_networks, "list the TenSet-style networks: tasks, weights, FLOPs"},
    {"compile", cmd_compile, "lower a scheduled workload to LLVM IR, an object or assembly"},
    {"run", cmd_run, "JIT a scheduled workload, check it against the reference and time it"},
    {"analyze", cmd_analyze, "profile an LLVM module: CFGs, task graphs, block counts, reuse distances"},
    {"characterize", cmd_characterize, "microbenchmark this machine into a target description"},
    {"targets", cmd_targets, "show, compare or validate target descriptions"},
    {"predict", cmd_predict, "predict the time of a program profile on a target description"},
    {"tune", cmd_tune, "search a workload's schedule: sketches, evolutionary search, measured top-k"},
    {"dataset", cmd_dataset, "collect measured random schedules as TVM records; merge logs"},
    {"train", cmd_train, "train a learned cost model (tlp, mtl-tlp) on TVM records"},
    {"eval", cmd_eval, "rank records with a learned model: top-k, pairwise accuracy, Spearman"},
    {"bench", cmd_bench, "benchmark suites (bench characterize, ...)"},
};

static void usage(FILE *f) {
  fprintf(f, "usage: portent COMMAND [ARGS]   (portent COMMAND --help for its options)\n\ncommands:\n");
  for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
    fprintf(f, "  %-14s %s\n", commands[i].name, commands[i].summary);
}

int main(int argc, char **argv) {
  if (argc < 2) {
    usage(stderr);
    return EXIT_USAGE;
  }
  if (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0 || strcmp(argv[1], "help") == 0) {
    usage(stdout);
    return EXIT_OK;
  }
  if (strcmp(argv[1], "--version") == 0) {
    printf("portent %s\n", PORTENT_VERSION);
    return EXIT_OK;
  }
  for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
    if (strcmp(argv[1], commands[i].name) == 0) return commands[i].run(argc - 1, argv + 1);
  fprintf(stderr, "portent: unknown command '%s'\n", argv[1]);
  usage(stderr);
  return EXIT_USAGE;
}
