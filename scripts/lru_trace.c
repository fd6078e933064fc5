/* lru_trace SIZE WAYS LO HI STACKOPS < lackey-trace: D1 misses of a SIZE-byte WAYS-way LRU cache of
 * 64-byte lines over the data accesses that valgrind's lackey (--trace-mem=yes) lists, counted while
 * the last instruction lies in [LO, HI) (hex), twice: every access, and without the accesses of the
 * instructions listed in the file STACKOPS (hex addresses, one a line: the spill and reload
 * instructions). A modify (M) is a load and a store; an access across a line touches both lines,
 * as callgrind counts them. Used by scripts/spill_misses.sh. */
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

static void cache_init(cache *c, long size, int ways) {
  c->ways = ways, c->sets = (int)(size / 64 / ways);
  c->tag = calloc((size_t)c->sets * (size_t)ways, sizeof *c->tag);
  c->accesses = c->misses = 0;
}

static void cache_touch(cache *c, uint64_t line) {
  uint64_t *set = c->tag + (line % (uint64_t)c->sets) * (uint64_t)c->ways;
  int w = 0;
  c->accesses++;
  while (w < c->ways && set[w] != line + 1) w++;
  if (w == c->ways) c->misses++, w = c->ways - 1; /* the least recent way is replaced */
  memmove(set + 1, set, sizeof *set * (size_t)w);
  set[0] = line + 1;
}

static int cmp_u64(const void *a, const void *b) {
  uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
  return x < y ? -1 : x > y;
}

int main(int argc, char **argv) {
  if (argc != 6) {
    fprintf(stderr, "usage: lru_trace SIZE WAYS LO HI STACKOPS < lackey-trace\n");
    return 2;
  }
  long size = atol(argv[1]);
  int ways = atoi(argv[2]);
  uint64_t lo = strtoull(argv[3], NULL, 16), hi = strtoull(argv[4], NULL, 16);
  if (size < 64 * ways || ways < 1 || size % (64L * ways) != 0 || lo >= hi) {
    fprintf(stderr, "lru_trace: bad cache or range\n");
    return 2;
  }
  FILE *f = fopen(argv[5], "r");
  if (!f) {
    perror(argv[5]);
    return 2;
  }
  size_t n = 0, cap = 1024;
  uint64_t *ops = malloc(sizeof *ops * cap), a;
  while (fscanf(f, "%lx", &a) == 1) {
    if (n == cap) ops = realloc(ops, sizeof *ops * (cap *= 2));
    ops[n++] = a;
  }
  fclose(f);
  qsort(ops, n, sizeof *ops, cmp_u64);
  cache all, rest;
  cache_init(&all, size, ways), cache_init(&rest, size, ways);
  char buf[256];
  bool in = false, stack_op = false;
  long seen = 0, from_stack = 0;
  while (fgets(buf, sizeof buf, stdin)) {
    char kind;
    int bytes;
    if (buf[0] == 'I') {
      if (sscanf(buf + 1, " %lx,%d", &a, &bytes) != 2) continue;
      in = a >= lo && a < hi;
      seen += in;
      stack_op = in && bsearch(&a, ops, n, sizeof *ops, cmp_u64) != NULL;
      continue;
    }
    if (!in || sscanf(buf, " %c %lx,%d", &kind, &a, &bytes) != 3 || bytes < 1) continue;
    for (uint64_t l = a / 64; l <= (a + (uint64_t)bytes - 1) / 64; l++) {
      int times = kind == 'M' ? 2 : 1;
      for (int t = 0; t < times; t++) {
        cache_touch(&all, l);
        if (stack_op) from_stack++;
        else cache_touch(&rest, l);
      }
    }
  }
  if (seen == 0) {
    fprintf(stderr, "lru_trace: no instruction in [%lx, %lx): is the load address right?\n", lo, hi);
    return 1;
  }
  printf("all accesses: %ld line accesses, %ld misses\n", all.accesses, all.misses);
  printf("without the %zu stack-operand instructions' %ld: %ld line accesses, %ld misses\n", n, from_stack,
         rest.accesses, rest.misses);
  return 0;
}
