/* What the dataset subcommands share: a 64-bit hash of a program (workload key, target, steps)
 * and an open-addressing set of such hashes with an int per entry, so logs of millions of lines
 * dedupe and join in memory without keeping their lines. */
#ifndef PORTENT_CLI_DATASET_KEYS_H
#define PORTENT_CLI_DATASET_KEYS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* FNV-1a of s continuing from h, then a separator, so ("ab","c") != ("a","bc"). */
uint64_t ds_fnv(uint64_t h, const char *s);
/* A program's hash; target NULL when only one platform's records are compared. Never 0. */
uint64_t ds_program_hash(const char *workload_key, const char *target, const char *steps_json);

typedef struct {
  uint64_t *h; /* 0 = empty slot */
  int *val;
  size_t cap, n;
} ds_hashset;

/* Inserts h; true when it was new. *val (may be NULL) points at the entry's int, 0 when new. */
bool ds_hashset_insert(ds_hashset *s, uint64_t h, int **val);
void ds_hashset_free(ds_hashset *s);

#endif
