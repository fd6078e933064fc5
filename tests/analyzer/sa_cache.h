/* A set-associative LRU cache simulated line by line: the brute force the per-set reuse bins
 * are checked against (test_reuse_sets: 64 sets; test_reuse_llc: an LL's set counts). */
#ifndef PA_TEST_SA_CACHE_H
#define PA_TEST_SA_CACHE_H
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* Per set, its lines most recent first (at most `ways`). */
typedef struct {
  int ways, sets;
  uint64_t *line; /* [set][ways] */
  int *n;
} sa_cache;

static inline sa_cache sa_new(int sets, int ways) {
  return (sa_cache){ways, sets, calloc((size_t)sets * (size_t)ways, sizeof(uint64_t)), calloc((size_t)sets, sizeof(int))};
}

static inline void sa_free(sa_cache *c) { free(c->line), free(c->n); }

/* true on a miss */
static inline bool sa_access(sa_cache *c, uint64_t line) {
  int s = (int)(line % (uint64_t)c->sets);
  uint64_t *l = c->line + (size_t)s * (size_t)c->ways;
  int i = 0;
  while (i < c->n[s] && l[i] != line) i++;
  bool miss = i == c->n[s];
  if (miss && c->n[s] < c->ways) c->n[s]++;
  if (i == c->ways) i--; /* evict the least recent */
  memmove(l + 1, l, sizeof *l * (size_t)i);
  l[0] = line;
  return miss;
}
#endif
