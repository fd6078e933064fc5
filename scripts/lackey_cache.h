/* What scripts/lru_trace.c and scripts/ll_trace.c share: an LRU cache of 64-byte lines (set = line
 * mod sets) and a reader of valgrind lackey's --trace-mem=yes output that yields the data accesses
 * made while the last instruction lies in [lo, hi), each flagged when that instruction is in a
 * sorted list (the stack-operand instructions of scripts/kernel_code.sh). */
#ifndef LACKEY_CACHE_H
#define LACKEY_CACHE_H
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
  int sets, ways;
  uint64_t *tag; /* per set, most recent first; 0 = empty, else line + 1 */
  long accesses, misses;
} cache;

static bool cache_init(cache *c, long size, int ways) {
  if (ways < 1 || size < 64L * ways || size % (64L * ways) != 0) return false;
  c->ways = ways, c->sets = (int)(size / 64 / ways);
  c->tag = calloc((size_t)c->sets * (size_t)ways, sizeof *c->tag);
  c->accesses = c->misses = 0;
  return c->tag != NULL;
}

/* true on a miss */
static bool cache_touch(cache *c, uint64_t line) {
  uint64_t *set = c->tag + (line % (uint64_t)c->sets) * (uint64_t)c->ways;
  int w = 0;
  bool miss;
  c->accesses++;
  while (w < c->ways && set[w] != line + 1) w++;
  if ((miss = w == c->ways)) c->misses++, w = c->ways - 1; /* the least recent way is replaced */
  memmove(set + 1, set, sizeof *set * (size_t)w);
  set[0] = line + 1;
  return miss;
}

static int cmp_u64(const void *a, const void *b) {
  uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
  return x < y ? -1 : x > y;
}

typedef struct {
  uint64_t lo, hi, *ops; /* the code range, and the flagged instructions (sorted) */
  size_t n_ops;
  bool in, flagged;      /* the last instruction: in range, in the list */
  long seen;             /* instructions seen in range */
} lackey_reader;

/* The flagged instructions from `path` (hex addresses, one a line); NULL: none. */
static bool lackey_ops(lackey_reader *r, const char *path) {
  r->ops = NULL, r->n_ops = 0;
  if (!path) return true;
  FILE *f = fopen(path, "r");
  if (!f) return false;
  size_t cap = 1024;
  uint64_t a;
  r->ops = malloc(sizeof *r->ops * cap);
  while (fscanf(f, "%lx", &a) == 1) {
    if (r->n_ops == cap) r->ops = realloc(r->ops, sizeof *r->ops * (cap *= 2));
    r->ops[r->n_ops++] = a;
  }
  fclose(f);
  qsort(r->ops, r->n_ops, sizeof *r->ops, cmp_u64);
  return true;
}

/* The next data access in range: kind (L, S or M), address, bytes, and whether its instruction
 * is flagged; false at the end of the input. */
static bool lackey_next(lackey_reader *r, FILE *in, char *kind, uint64_t *addr, int *bytes, bool *flagged) {
  char buf[256];
  while (fgets(buf, sizeof buf, in)) {
    uint64_t a;
    int n;
    if (buf[0] == 'I') {
      if (sscanf(buf + 1, " %lx,%d", &a, &n) != 2) continue;
      r->in = a >= r->lo && a < r->hi;
      r->seen += r->in;
      r->flagged = r->in && r->n_ops && bsearch(&a, r->ops, r->n_ops, sizeof *r->ops, cmp_u64) != NULL;
      continue;
    }
    if (!r->in || sscanf(buf, " %c %lx,%d", kind, &a, &n) != 3 || n < 1) continue;
    *addr = a, *bytes = n, *flagged = r->flagged;
    return true;
  }
  return false;
}
#endif
