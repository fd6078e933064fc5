/* portent targets: show, compare and validate target descriptions. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "commands.h"
#include "targets.h"

static void usage(FILE *f) {
  fprintf(f, "usage: portent targets show FILE [--json]\n"
             "       portent targets diff A B [--tolerance PCT]\n"
             "       portent targets validate FILE...\n\n"
             "show: the description as tables; diff: two side by side with relative differences;\n"
             "validate: load and check each file (errors name the JSON path).\n");
}

int cmd_targets(int argc, char **argv) {
  if (argc < 2 || strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0) {
    usage(argc < 2 ? stderr : stdout);
    return argc < 2 ? EXIT_USAGE : EXIT_OK;
  }
  const char *sub = argv[1];
  pt_diag d = {0};
  if (strcmp(sub, "show") == 0) {
    bool json = argc == 4 && strcmp(argv[3], "--json") == 0;
    if (argc != 3 && !json) {
      usage(stderr);
      return EXIT_USAGE;
    }
    ptg_target *t = ptg_target_load(argv[2], &d);
    if (!t) {
      fprintf(stderr, "portent targets: %s\n", d.msg);
      return EXIT_USAGE;
    }
    if (json) {
      char *text = ptg_target_to_json(t, &d);
      if (text) puts(text);
      free(text);
    } else {
      ptg_target_print(stdout, t);
    }
    ptg_target_free(t);
    return EXIT_OK;
  }
  if (strcmp(sub, "diff") == 0) {
    double tol = 0.05;
    if (argc == 6 && strcmp(argv[4], "--tolerance") == 0) tol = atof(argv[5]) / 100;
    else if (argc != 4) {
      usage(stderr);
      return EXIT_USAGE;
    }
    ptg_target *a = ptg_target_load(argv[2], &d);
    ptg_target *b = a ? ptg_target_load(argv[3], &d) : NULL;
    if (!b) {
      fprintf(stderr, "portent targets: %s\n", d.msg);
      ptg_target_free(a);
      return EXIT_USAGE;
    }
    ptg_target_print_diff(stdout, a, b, tol);
    ptg_target_free(a);
    ptg_target_free(b);
    return EXIT_OK;
  }
  if (strcmp(sub, "validate") == 0 && argc >= 3) {
    int bad = 0;
    for (int i = 2; i < argc; i++) {
      pt_diag_clear(&d);
      ptg_target *t = ptg_target_load(argv[i], &d);
      if (t) printf("%s: ok (%s, %s, %d instruction rows)\n", argv[i], t->name, t->provenance, t->n_insts);
      else fprintf(stderr, "%s\n", d.msg), bad++;
      ptg_target_free(t);
    }
    return bad ? EXIT_USAGE : EXIT_OK;
  }
  fprintf(stderr, "portent targets: unknown subcommand '%s'\n", sub);
  usage(stderr);
  return EXIT_USAGE;
}
