/* Shared by compile, run (and later analyze, tune): a workload plus how to schedule it. */
#ifndef PORTENT_CLI_SCHEDULE_ARGS_H
#define PORTENT_CLI_SCHEDULE_ARGS_H

#include "compiler.h"

typedef struct {
  const char *workload;  /* suite name, key, name:params */
  const char *expr_file; /* --expr FILE instead of a workload */
  const char *schedule;  /* --schedule FILE: a records log (best valid record) or a steps JSON file */
  const char *steps;     /* --steps JSON */
  bool naive;            /* --naive: no steps */
  int lanes;             /* vector lanes for the default schedule */
} schedule_args;

/* Consumes a schedule option at argv[*i] if it is one; returns 1 if consumed, 0 if not, -1 on error. */
int schedule_args_take(schedule_args *a, int argc, char **argv, int *i);
/* Builds the program and the scheduled state; prints errors; NULL on failure. */
pc_state *schedule_args_build(const schedule_args *a, pc_program **prog);
extern const char *const schedule_args_help;

#endif
