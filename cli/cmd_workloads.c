/* portent workloads: the operator library and the benchmark suite. */
#include <stdio.h>
#include <string.h>

#include "commands.h"
#include "compiler.h"

/* One workload's stages in Ansor's numbering, with their iterators: what --steps refers to. */
static int show(const char *spec) {
  pt_diag d = {0};
  pc_program *p = pc_workload_build(spec, &d);
  if (!p) {
    fprintf(stderr, "portent workloads: %s\n", d.msg);
    return EXIT_USAGE;
  }
  static char buf[1 << 16];
  pc_program_print(p, buf, sizeof buf);
  printf("%s  key %s  %.4f GFLOP\nstages (ids as in records' steps):\n%s", p->name, p->key, p->flops * 1e-9, buf);
  pc_state *s = pc_state_new(p);
  pc_state_print(s, buf, sizeof buf);
  printf("\nloop nest without steps (iterator ids count from 0 in each stage):\n%s", buf);
  pc_state_free(s);
  pc_program_free(p);
  return EXIT_OK;
}

int cmd_workloads(int argc, char **argv) {
  bool json = false;
  for (int i = 1; i < argc; i++) {
    if (strcmp(argv[i], "--json") == 0) json = true;
    else if (strcmp(argv[i], "--help") == 0) {
      printf("usage: portent workloads [--json]\n       portent workloads WORKLOAD\n\nLists the operators (with their key parameters) and the\n"
             "benchmark suite (names usable wherever a WORKLOAD is asked for); with a WORKLOAD,\n"
             "prints its stages with the ids that schedule steps use.\n");
      return EXIT_OK;
    } else if (argv[i][0] != '-' && argc == 2) {
      return show(argv[i]);
    } else {
      fprintf(stderr, "portent workloads: unknown option '%s'\n", argv[i]);
      return EXIT_USAGE;
    }
  }
  if (json) {
    printf("{\"operators\": [");
    for (int i = 0; i < pc_workload_count(); i++) {
      const pc_workload_info *w = pc_workload_at(i);
      printf("%s{\"name\": \"%s\", \"params\": \"%s\", \"help\": \"%s\"}", i ? ", " : "", w->name, w->params, w->help);
    }
    printf("], \"suite\": [");
    for (int i = 0; i < pc_suite_count(); i++) {
      printf("%s{\"name\": \"%s\", \"key\": \"", i ? ", " : "", pc_suite_name(i));
      for (const char *c = pc_suite_key(i); *c; c++) printf(*c == '"' ? "\\\"" : "%c", *c);
      printf("\"}");
    }
    printf("]}\n");
    return EXIT_OK;
  }
  printf("operators (key: [\"name\", params..., \"float32\"] or name:p1,p2,...):\n");
  for (int i = 0; i < pc_workload_count(); i++) {
    const pc_workload_info *w = pc_workload_at(i);
    printf("  %-22s %-42s %s\n", w->name, w->params, w->help);
  }
  printf("\nbenchmark suite:\n");
  for (int i = 0; i < pc_suite_count(); i++) {
    pt_diag d = {0};
    pc_program *p = pc_workload_build(pc_suite_name(i), &d);
    printf("  %-12s %-66s %8.3f GFLOP\n", pc_suite_name(i), pc_suite_key(i), p ? p->flops * 1e-9 : 0.0);
    pc_program_free(p);
  }
  return EXIT_OK;
}
