/* lru_trace SIZE WAYS LO HI STACKOPS < lackey-trace: D1 misses of a SIZE-byte WAYS-way LRU cache of
 * 64-byte lines over the data accesses that valgrind's lackey (--trace-mem=yes) lists, counted while
 * the last instruction lies in [LO, HI) (hex), twice: every access, and without the accesses of the
 * instructions listed in the file STACKOPS (hex addresses, one a line: the spill and reload
 * instructions). A modify (M) is a load and a store; an access across a line touches both lines,
 * as callgrind counts them. Used by scripts/spill_misses.sh. */
#include "lackey_cache.h"

int main(int argc, char **argv) {
  if (argc != 6) {
    fprintf(stderr, "usage: lru_trace SIZE WAYS LO HI STACKOPS < lackey-trace\n");
    return 2;
  }
  lackey_reader r = {.lo = strtoull(argv[3], NULL, 16), .hi = strtoull(argv[4], NULL, 16)};
  cache all, rest;
  if (!cache_init(&all, atol(argv[1]), atoi(argv[2])) || !cache_init(&rest, atol(argv[1]), atoi(argv[2])) || r.lo >= r.hi) {
    fprintf(stderr, "lru_trace: bad cache or range\n");
    return 2;
  }
  if (!lackey_ops(&r, argv[5])) {
    perror(argv[5]);
    return 2;
  }
  char kind;
  uint64_t a;
  int bytes;
  bool stack_op;
  long from_stack = 0;
  while (lackey_next(&r, stdin, &kind, &a, &bytes, &stack_op))
    for (uint64_t l = a / 64; l <= (a + (uint64_t)bytes - 1) / 64; l++)
      for (int t = 0; t < (kind == 'M' ? 2 : 1); t++) {
        cache_touch(&all, l);
        if (stack_op) from_stack++;
        else cache_touch(&rest, l);
      }
  if (r.seen == 0) {
    fprintf(stderr, "lru_trace: no instruction in [%lx, %lx): is the load address right?\n", r.lo, r.hi);
    return 1;
  }
  printf("all accesses: %ld line accesses, %ld misses\n", all.accesses, all.misses);
  printf("without the %zu stack-operand instructions' %ld: %ld line accesses, %ld misses\n", r.n_ops, from_stack,
         rest.accesses, rest.misses);
  return 0;
}
