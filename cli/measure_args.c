#include "measure_args.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "microbench.h"
#include "targets.h"

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

static bool names_target_file(const char *s) {
  size_t n = strlen(s);
  return n > 5 && strcmp(s + n - 5, ".json") == 0;
}

int measure_args_target(const measure_args *a, const char *cmd, char *buf, size_t cap) {
  if (a->target && !names_target_file(a->target)) {
    snprintf(buf, cap, "%s", a->target);
    return 0;
  }
  pc_host_target_string(buf, cap);
  if (!a->target) return 0;
  pt_diag d = {0};
  ptg_target *file = ptg_target_load(a->target, &d), *host = file ? ptg_target_new("host") : NULL;
  int rc = 0;
  if (!file) {
    fprintf(stderr, "portent %s: %s\n", cmd, d.msg);
    rc = -1;
  } else if (!host || pmb_topology(host, &d) < 0) {
    fprintf(stderr, "portent %s: %s: this machine's microarchitecture is unknown (%s): pass a target string\n", cmd,
            a->target, d.msg[0] ? d.msg : "no detection");
    rc = -1;
  } else if (!file->microarchitecture || !host->microarchitecture ||
             strcmp(file->microarchitecture, host->microarchitecture) != 0) {
    fprintf(stderr,
            "portent %s: %s describes %s, this machine is %s: the records are measured here (pass a target string "
            "to name them otherwise)\n",
            cmd, a->target, file->microarchitecture ? file->microarchitecture : "no microarchitecture",
            host->microarchitecture ? host->microarchitecture : "unknown");
    rc = -1;
  }
  ptg_target_free(host);
  ptg_target_free(file);
  return rc;
}
