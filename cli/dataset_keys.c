/* Program hashes and the hash set behind dataset merge, remeasure and compare. */
#include "dataset_keys.h"

#include <stdlib.h>

uint64_t ds_fnv(uint64_t h, const char *s) {
  for (; *s; s++) h = (h ^ (unsigned char)*s) * 1099511628211ull;
  return (h ^ 0xff) * 1099511628211ull;
}

uint64_t ds_program_hash(const char *workload_key, const char *target, const char *steps_json) {
  uint64_t h = ds_fnv(1469598103934665603ull, workload_key);
  if (target) h = ds_fnv(h, target);
  h = ds_fnv(h, steps_json ? steps_json : "");
  return h | 1; /* odd: 0 marks an empty slot */
}

static void grow(ds_hashset *s) {
  size_t cap = s->cap ? 2 * s->cap : 4096;
  uint64_t *h = calloc(cap, sizeof *h);
  int *val = calloc(cap, sizeof *val);
  for (size_t i = 0; i < s->cap; i++)
    if (s->h[i]) {
      size_t j = s->h[i] & (cap - 1);
      while (h[j]) j = (j + 1) & (cap - 1);
      h[j] = s->h[i], val[j] = s->val[i];
    }
  free(s->h), free(s->val);
  s->h = h, s->val = val, s->cap = cap;
}

bool ds_hashset_insert(ds_hashset *s, uint64_t h, int **val) {
  h |= 1;
  if (2 * (s->n + 1) > s->cap) grow(s);
  size_t i = h & (s->cap - 1);
  for (; s->h[i]; i = (i + 1) & (s->cap - 1))
    if (s->h[i] == h) {
      if (val) *val = &s->val[i];
      return false;
    }
  s->h[i] = h, s->val[i] = 0, s->n++;
  if (val) *val = &s->val[i];
  return true;
}

void ds_hashset_free(ds_hashset *s) {
  free(s->h), free(s->val);
  *s = (ds_hashset){0};
}
