#include "measure_args.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void measure_args_init(measure_args *a) {
  *a = (measure_args){.n_shards = 1};
  pc_measure_opts_default(&a->mo);
  a->mo.min_time_s = 0.05;
  a->mo.timeout_s = 5;
}

int measure_args_take(measure_args *a, const char *cmd, int argc, char **argv, int *i) {
  const char *o = argv[*i];
  if (strcmp(o, "--cpu-clock") == 0) {
    a->mo.cpu_clock = true; /* pc_measure_clock's rule: one-thread runs only, as tune's default */
    return 1;
  }
  if (*i + 1 >= argc) return 0;
  const char *v = argv[*i + 1];
  if (strcmp(o, "--threads") == 0) a->mo.threads = atoi(v);
  else if (strcmp(o, "--min-time") == 0) a->mo.min_time_s = atof(v);
  else if (strcmp(o, "--timeout") == 0) a->mo.timeout_s = atof(v);
  else if (strcmp(o, "--target") == 0) a->target = v;
  else if (strcmp(o, "--shard") == 0) {
    if (sscanf(v, "%d/%d", &a->shard, &a->n_shards) != 2 || a->n_shards < 1 || a->shard < 0 || a->shard >= a->n_shards) {
      fprintf(stderr, "portent %s: --shard wants i/N with 0 <= i < N\n", cmd);
      return -1;
    }
  } else
    return 0;
  ++*i;
  return 1;
}
