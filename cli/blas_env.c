/* The restart without a forced OpenBLAS core shared by bench compile, bench tune, train, eval. */
#include <stdlib.h>
#include <unistd.h>

#include "blas_env.h"

void restart_without_forced_blas_core(const char *parent, int argc, char **argv) {
  if (!getenv("OPENBLAS_CORETYPE") && !getenv("OPENBLAS_L2_SIZE")) return;
  unsetenv("OPENBLAS_CORETYPE");
  unsetenv("OPENBLAS_L2_SIZE");
  char **args = calloc((size_t)argc + 3, sizeof(char *));
  int n = 0;
  args[n++] = "portent";
  if (parent) args[n++] = (char *)parent;
  for (int i = 0; i < argc; i++) args[n++] = argv[i];
  execv("/proc/self/exe", args);
  free(args);
}
