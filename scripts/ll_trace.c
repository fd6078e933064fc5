/* ll_trace D1SIZE D1WAYS LLSIZE LLWAYS LO HI [STACKOPS] < lackey-trace: LL misses of two two-level models over
 * the data accesses that valgrind's lackey (--trace-mem=yes) lists while the last instruction lies
 * in [LO, HI) (hex), all caches LRU with 64-byte lines, set = line mod sets:
 *   (a) callgrind's: a D1 of D1SIZE bytes and D1WAYS ways, and an LL that sees only the D1's misses
 *       (write-allocate, no write-back to the LL: callgrind/sim.c, cachesim_D1_ref); an access
 *       that misses D1 in either of its lines goes to the LL with both, as callgrind does;
 *   (b) an LL of the same geometry that sees every access, as a profile's per-set LRU stacks do.
 * Why: how much of a gap between bench analyze's per-set LL prediction and callgrind comes from an
 * LL that sees only D1's misses, where a line that keeps hitting in D1 is not refreshed (mm512
 * random seed 8 at 32K/1M: 0.6%; docs/validation.md, session 26). A modify (M)
 * is a load and a store; an access across a line touches both lines. Counts are of line accesses,
 * as scripts/lru_trace.c counts them. Progress goes to stderr every 10 M data accesses, so a
 * killed lackey still leaves the counts of a prefix. With STACKOPS (hex addresses of the stack-operand
 * instructions, scripts/kernel_code.sh), both models again without those instructions' accesses,
 * which the IR's profile has not. Used by scripts/ll_misses.sh. */
#include "lackey_cache.h"

typedef struct {
  cache d1, lla, llb; /* a D1, an LL behind it (a), an LL alone (b) */
} model;

static bool model_init(model *m, char **argv) {
  long d1size = atol(argv[1]), llsize = atol(argv[3]);
  int d1ways = atoi(argv[2]), llways = atoi(argv[4]);
  return cache_init(&m->d1, d1size, d1ways) && cache_init(&m->lla, llsize, llways) && cache_init(&m->llb, llsize, llways);
}

/* One access of lines first..last (an M twice). */
static void model_access(model *m, uint64_t first, uint64_t last, int times) {
  for (int t = 0; t < times; t++) {
    bool d1_miss = false;
    for (uint64_t l = first; l <= last; l++) {
      d1_miss |= cache_touch(&m->d1, l);
      cache_touch(&m->llb, l);
    }
    if (d1_miss)
      for (uint64_t l = first; l <= last; l++) cache_touch(&m->lla, l);
  }
}

static void report(FILE *out, const char *what, const model *m) {
  fprintf(out, "%s: D1: %ld line accesses, %ld misses\n", what, m->d1.accesses, m->d1.misses);
  fprintf(out, "%s: LL (a) fed by D1's misses (callgrind): %ld line accesses, %ld misses\n", what, m->lla.accesses,
          m->lla.misses);
  fprintf(out, "%s: LL (b) fed every access (profile): %ld line accesses, %ld misses\n", what, m->llb.accesses,
          m->llb.misses);
  fflush(out);
}

int main(int argc, char **argv) {
  if (argc != 7 && argc != 8) {
    fprintf(stderr, "usage: ll_trace D1SIZE D1WAYS LLSIZE LLWAYS LO HI [STACKOPS] < lackey-trace\n");
    return 2;
  }
  lackey_reader r = {.lo = strtoull(argv[5], NULL, 16), .hi = strtoull(argv[6], NULL, 16)};
  model all, rest;
  if (!model_init(&all, argv) || !model_init(&rest, argv) || r.lo >= r.hi) {
    fprintf(stderr, "ll_trace: bad cache or range\n");
    return 2;
  }
  bool stack = argc == 8;
  if (!lackey_ops(&r, stack ? argv[7] : NULL)) {
    perror(argv[7]);
    return 2;
  }
  char kind;
  uint64_t a;
  int bytes;
  bool stack_op;
  long data = 0, straddles = 0;
  while (lackey_next(&r, stdin, &kind, &a, &bytes, &stack_op)) {
    uint64_t first = a / 64, last = (a + (uint64_t)bytes - 1) / 64;
    straddles += last != first;
    model_access(&all, first, last, kind == 'M' ? 2 : 1);
    if (stack && !stack_op) model_access(&rest, first, last, kind == 'M' ? 2 : 1);
    if (++data % 10000000 == 0) {
      fprintf(stderr, "after %ld data accesses:\n", data);
      report(stderr, "every access", &all);
      if (stack) report(stderr, "without the stack operands", &rest);
    }
  }
  if (r.seen == 0) {
    fprintf(stderr, "ll_trace: no instruction in [%lx, %lx): is the load address right?\n", r.lo, r.hi);
    return 1;
  }
  printf("%ld data accesses of %ld instructions in [%lx, %lx), %ld across a line\n", data, r.seen, r.lo, r.hi, straddles);
  report(stdout, "every access", &all);
  if (stack) report(stdout, "without the stack operands", &rest);
  return 0;
}
