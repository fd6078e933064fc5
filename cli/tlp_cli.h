/* What `portent train`, `portent eval` and `portent bench learn` share: loading records into a TLP
 * dataset (with a summary of what was skipped), printing the ranking metrics, reading LambdaRank's
 * options. */
#ifndef PORTENT_CLI_TLP_CLI_H
#define PORTENT_CLI_TLP_CLI_H

#include <stdio.h>

#include "tlp.h"

/* Restarts the process without OPENBLAS_CORETYPE / OPENBLAS_L2_SIZE (OpenBLAS reads them
 * when it loads, so only a fresh process can drop a forced core). argv is the subcommand's. */
/* Loads every file, then `pretrain`'s records as pre-training samples (NULL: none); returns 0 or a
 * negative error (message printed). */
int tlp_cli_load(pp_tlp_dataset *ds, int n_files, char **files, const char *pretrain, const pp_tlp_split *sp,
                 pp_tlp_vocab *v, bool grow, const char *cmd);
/* Reads a whole number 0..100000 for option `opt`; a bad value prints an error naming the command,
 * the option and the value, and returns -1. */
int tlp_cli_parse_count(const char *cmd, const char *opt, const char *value, int *out);
void tlp_cli_print_metrics(FILE *f, const char *label, const pp_tlp_metrics *m);
/* Reads `--ndcg-k K` (an integer >= 0) or `--gain-scale C` (a number in (0, 64]) into r; a bad value
 * prints an error naming the command, the option and the value, and returns -1. */
int tlp_cli_parse_rank(const char *cmd, const char *opt, const char *value, pp_tlp_rank *r);
/* The same line for a random ranking (top-k expectations; pairwise 0.5 and Spearman 0 by symmetry). */
void tlp_cli_print_random(FILE *f, const char *label, const pp_tlp_dataset *ds, int platform, bool test_only,
                          const double *group_weight);

#endif
