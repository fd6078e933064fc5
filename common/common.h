/* Shared by every module: error codes with a diagnostic sink that names the input, and
 * an arena allocator for per-job memory (a lowered candidate, a profile, a search round). */
#ifndef PORTENT_COMMON_H
#define PORTENT_COMMON_H

#include <stddef.h>
#include <stdint.h>
#include <stdarg.h>
#include <stdbool.h>

typedef enum {
  PT_OK = 0,
  PT_ERR_INPUT = -1,   /* malformed input: expression, JSON, record, IR */
  PT_ERR_INVALID = -2, /* well-formed but invalid: out-of-range iterator, bad shape */
  PT_ERR_IO = -3,
  PT_ERR_LLVM = -4,
  PT_ERR_RUNTIME = -5, /* generated code crashed, hung or was wrong */
  PT_ERR_NOMEM = -6,
  PT_ERR_UNSUPPORTED = -7,
} pt_err;

const char *pt_err_name(int err);

/* A diagnostic sink: the first error wins, later ones are appended as notes. */
typedef struct pt_diag {
  char msg[1024];
  int err;
} pt_diag;

/* Records an error (printf-style) and returns err so callers can `return pt_fail(...)`. */
int pt_fail(pt_diag *d, int err, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
void pt_diag_clear(pt_diag *d);

/* Arena: bump allocation in chained blocks, freed at once. Zero-initialised memory. */
typedef struct pt_arena pt_arena;
pt_arena *pt_arena_new(void);
void pt_arena_free(pt_arena *a);
void *pt_alloc(pt_arena *a, size_t size);
char *pt_strdup(pt_arena *a, const char *s);
/* A copy of n bytes in the arena (a valid pointer even for n = 0): for arrays grown on the heap. */
void *pt_memdup(pt_arena *a, const void *src, size_t n);
char *pt_sprintf(pt_arena *a, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Text appended into a fixed buffer, truncating silently at its end (printing helpers). */
typedef struct {
  char *buf;
  size_t cap, len;
} pt_sbuf;
void pt_sbuf_printf(pt_sbuf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Monotonic time in seconds. */
double pt_now(void);
/* Seconds of CPU time the calling thread has run (CLOCK_THREAD_CPUTIME_ID): the time of a
 * single-threaded run less the slices another process took from its core. */
double pt_cpu_now(void);

/* Writes a file atomically: to a temporary beside it, then rename. */
int pt_write_file_atomic(const char *path, const void *data, size_t len, pt_diag *d);
/* Reads a whole file, NUL-terminated; caller frees. */
char *pt_read_file(const char *path, size_t *len, pt_diag *d);

/* Deterministic PRNG (splitmix64) so seeded inputs are the same on every machine. */
typedef struct { uint64_t s; } pt_rng;
uint64_t pt_rng_next(pt_rng *r);
double pt_rng_uniform(pt_rng *r); /* [0, 1) */
int64_t pt_rng_range(pt_rng *r, int64_t n); /* [0, n) */
void pt_rng_shuffle(pt_rng *r, int *v, int n); /* v[0, n) in place, Fisher-Yates from the end */
/* Greatest common divisor (gcd(a, 0) = a): how many cache sets a fixed stride cycles through. */
int64_t pt_gcd64(int64_t a, int64_t b);
/* Median of v[0, n), which it sorts in place; 0 when n <= 0. */
double pt_median(double *v, int n);
/* The state only counts (s += PT_RNG_STEP per draw) and each output mixes its own count, so
 * the i-th draw after state s0 is pt_rng_mix(s0 + (i + 1) * PT_RNG_STEP): bulk fills compute
 * draws independently (and inline) and still give pt_rng_next's sequence. */
#define PT_RNG_STEP 0x9E3779B97F4A7C15ull
static inline uint64_t pt_rng_mix(uint64_t z) {
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}
static inline double pt_rng_unit(uint64_t draw) { return (double)(draw >> 11) * (1.0 / 9007199254740992.0); } /* [0, 1) */

/* portent's thread pool: generated kernels receive it as an argument and call
 * pt_parallel_for for their parallel loops (no global state, so pools can coexist). */
typedef struct pt_pool pt_pool;
pt_pool *pt_pool_new(int n_threads);
/* The same with worker i's stack at stacks + (i - 1) * stack_bytes (the caller maps them and
 * keeps them past pt_pool_free): a profiler wants the workers' stack lines at the same
 * addresses in every run. */
pt_pool *pt_pool_new_on_stacks(int n_threads, char *stacks, size_t stack_bytes);
void pt_pool_free(pt_pool *p);
int pt_pool_threads(const pt_pool *p);
/* Runs fn(ctx, begin, end) over [0, n) in contiguous chunks, one per thread; returns when
 * all are done (the fork/join the predictor charges per parallel call). */
void pt_parallel_for(pt_pool *p, void (*fn)(void *ctx, int64_t begin, int64_t end), void *ctx, int64_t n);
/* Chunk i of pt_parallel_for's partition of n iterations over `parts` threads: [*begin, *end),
 * n / parts iterations each, one more for i < n % parts (static counts and the predictor
 * divide work the same way). */
void pt_pool_chunk(int64_t n, int parts, int i, int64_t *begin, int64_t *end);

#define PT_ARRAY_LEN(a) (sizeof(a) / sizeof((a)[0]))

#endif
