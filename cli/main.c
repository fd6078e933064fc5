/* The portent command: argument parsing and subcommand dispatch only. */
#include <stdio.h>
#include <string.h>

#include "compiler.h"

int main(int argc, char **argv) {
  if (argc < 2 || strcmp(argv[1], "--help") == 0) {
    printf("usage: portent COMMAND [ARGS]\n");
    return argc < 2 ? 2 : 0;
  }
  fprintf(stderr, "portent: unknown command '%s'\n", argv[1]);
  return 2;
}
