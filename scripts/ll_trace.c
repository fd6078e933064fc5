/* ll_trace D1SIZE D1WAYS LLSIZE LLWAYS LO HI < lackey-trace: LL misses of two two-level models over
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
 * killed lackey still leaves the counts of a prefix. Used by scripts/ll_misses.sh. */
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

static void report(FILE *out, const cache *d1, const cache *lla, const cache *llb, long straddles) {
  fprintf(out, "D1: %ld line accesses, %ld misses\n", d1->accesses, d1->misses);
  fprintf(out, "LL (a) fed by D1's misses (callgrind): %ld line accesses, %ld misses\n", lla->accesses,
          lla->misses);
  fprintf(out, "LL (b) fed every access (profile): %ld line accesses, %ld misses\n", llb->accesses,
          llb->misses);
  fprintf(out, "data accesses across a line: %ld\n", straddles);
  fflush(out);
}

int main(int argc, char **argv) {
  if (argc != 7) {
    fprintf(stderr, "usage: ll_trace D1SIZE D1WAYS LLSIZE LLWAYS LO HI < lackey-trace\n");
    return 2;
  }
  uint64_t lo = strtoull(argv[5], NULL, 16), hi = strtoull(argv[6], NULL, 16), a;
  cache d1, lla, llb;
  if (!cache_init(&d1, atol(argv[1]), atoi(argv[2])) || !cache_init(&lla, atol(argv[3]), atoi(argv[4])) ||
      !cache_init(&llb, atol(argv[3]), atoi(argv[4])) || lo >= hi) {
    fprintf(stderr, "ll_trace: bad cache or range\n");
    return 2;
  }
  char buf[256];
  bool in = false;
  long seen = 0, data = 0, straddles = 0;
  while (fgets(buf, sizeof buf, stdin)) {
    char kind;
    int bytes;
    if (buf[0] == 'I') {
      if (sscanf(buf + 1, " %lx,%d", &a, &bytes) != 2) continue;
      in = a >= lo && a < hi;
      seen += in;
      continue;
    }
    if (!in || sscanf(buf, " %c %lx,%d", &kind, &a, &bytes) != 3 || bytes < 1) continue;
    uint64_t first = a / 64, last = (a + (uint64_t)bytes - 1) / 64;
    straddles += last != first;
    for (int t = 0; t < (kind == 'M' ? 2 : 1); t++) {
      bool d1_miss = false;
      for (uint64_t l = first; l <= last; l++) {
        d1_miss |= cache_touch(&d1, l);
        cache_touch(&llb, l);
      }
      if (d1_miss)
        for (uint64_t l = first; l <= last; l++) cache_touch(&lla, l);
    }
    if (++data % 10000000 == 0) {
      fprintf(stderr, "after %ld data accesses:\n", data);
      report(stderr, &d1, &lla, &llb, straddles);
    }
  }
  if (seen == 0) {
    fprintf(stderr, "ll_trace: no instruction in [%lx, %lx): is the load address right?\n", lo, hi);
    return 1;
  }
  printf("%ld data accesses of %ld instructions in [%lx, %lx)\n", data, seen, lo, hi);
  report(stdout, &d1, &lla, &llb, straddles);
  return 0;
}
