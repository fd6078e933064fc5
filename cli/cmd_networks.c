/* portent networks: the TenSet-style networks (compiler/networks.c) with their tasks, weights
 * and FLOPs; what `dataset collect --network` measures and `bench learn` scores. */
#include <stdio.h>
#include <string.h>

#include "commands.h"
#include "compiler.h"

static void print_json_string(const char *s) {
  putchar('"');
  for (; *s; s++) printf(*s == '"' || *s == '\\' ? "\\%c" : "%c", *s);
  putchar('"');
}

static int show(const char *name, bool json, bool first) {
  pt_diag d = {0};
  pc_network *net = pc_network_build(name, &d);
  if (!net) {
    fprintf(stderr, "portent networks: %s\n", d.msg);
    return EXIT_USAGE;
  }
  int weights = 0;
  for (int i = 0; i < net->n_tasks; i++) weights += net->tasks[i].weight;
  if (json) {
    printf("%s{\"name\": \"%s\", \"test\": %s, \"source\": ", first ? "" : ",\n", net->name, net->test ? "true" : "false");
    print_json_string(net->source);
    printf(", \"gflop\": %.4f, \"tasks\": [", pc_network_flops(net) * 1e-9);
    for (int i = 0; i < net->n_tasks; i++) {
      printf("%s\n  {\"key\": ", i ? "," : "");
      print_json_string(net->tasks[i].key);
      printf(", \"weight\": %d, \"gflop\": %.6f}", net->tasks[i].weight, net->tasks[i].flops * 1e-9);
    }
    printf("]}");
  } else {
    printf("%s (%s): %d tasks, %d subgraphs, %.3f GFLOP  [%s]\n", net->name, net->test ? "test" : "training",
           net->n_tasks, weights, pc_network_flops(net) * 1e-9, net->source);
    printf("  %6s  %10s  %s\n", "weight", "GFLOP each", "task");
    for (int i = 0; i < net->n_tasks; i++)
      printf("  %6d  %10.4f  %s\n", net->tasks[i].weight, net->tasks[i].flops * 1e-9, net->tasks[i].spec);
  }
  pc_network_free(net);
  return EXIT_OK;
}

int cmd_networks(int argc, char **argv) {
  bool json = false;
  const char *name = NULL;
  for (int i = 1; i < argc; i++) {
    if (strcmp(argv[i], "--json") == 0) json = true;
    else if (strcmp(argv[i], "--help") == 0) {
      printf("usage: portent networks [NAME] [--json]\n\n"
             "Without NAME: one line per network (test networks are held out of training).\n"
             "With NAME (or 'all'): its tasks, each an operator at batch 1 with its weight (how often it\n"
             "occurs in the network) and its GFLOP; the spec column is what --workloads takes.\n");
      return EXIT_OK;
    } else if (argv[i][0] != '-' && !name) name = argv[i];
    else {
      fprintf(stderr, "portent networks: unexpected argument '%s'\n", argv[i]);
      return EXIT_USAGE;
    }
  }
  if (name && strcmp(name, "all") != 0) {
    if (json) printf("[");
    int rc = show(name, json, true);
    if (json) printf("]\n");
    return rc;
  }
  if (json || name) {
    if (json) printf("[");
    for (int i = 0; i < pc_network_count(); i++)
      if (show(pc_network_name(i), json, i == 0) != EXIT_OK) return EXIT_FAILED;
    if (json) printf("]\n");
    return EXIT_OK;
  }
  printf("%-14s %-8s %6s %9s %8s  %s\n", "network", "set", "tasks", "subgraphs", "GFLOP", "source");
  for (int i = 0; i < pc_network_count(); i++) {
    pt_diag d = {0};
    pc_network *net = pc_network_build(pc_network_name(i), &d);
    if (!net) {
      fprintf(stderr, "portent networks: %s\n", d.msg);
      return EXIT_FAILED;
    }
    int weights = 0;
    for (int t = 0; t < net->n_tasks; t++) weights += net->tasks[t].weight;
    printf("%-14s %-8s %6d %9d %8.3f  %s\n", net->name, net->test ? "test" : "training", net->n_tasks, weights,
           pc_network_flops(net) * 1e-9, net->source);
    pc_network_free(net);
  }
  return EXIT_OK;
}
