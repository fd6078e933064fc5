/* Shared by dataset collect and dataset remeasure: how each record is measured and which shard
 * of the work this process takes. */
#ifndef PORTENT_CLI_MEASURE_ARGS_H
#define PORTENT_CLI_MEASURE_ARGS_H

#include "compiler.h"

typedef struct {
  pc_measure_opts mo;     /* --threads, --min-time, --timeout, --cpu-clock */
  const char *target;     /* --target: a target string, or a target file (T.json) of this machine */
  int shard, n_shards;    /* --shard i/N */
} measure_args;

/* Defaults of the dataset commands: 0.05 s per measurement by the wall clock, a 5 s timeout, the
 * whole work. */
void measure_args_init(measure_args *a);
/* Consumes a measurement option at argv[*i] if it is one; returns 1 if consumed, 0 if not, -1
 * on a bad value (said on stderr, prefixed with `cmd`). */
int measure_args_take(measure_args *a, const char *cmd, int argc, char **argv, int *i);

/* The target string the records carry, into buf: --target's string; for a target file (a name
 * ending in .json), this host's string once the file is checked to describe this machine's
 * microarchitecture (the command measures the machine at hand); without --target, this host's.
 * Returns -1 after saying why on stderr (prefixed with `cmd`). */
int measure_args_target(const measure_args *a, const char *cmd, char *buf, size_t cap);

#endif
