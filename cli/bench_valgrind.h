/* The outside tools `portent bench analyze` drives: clang-19 and llc-19 (a kernel's IR to an
 * object valgrind can run: valgrind 3.19 cannot decode AVX-512, and its cache simulation does
 * not see AVX masked loads (vmaskmovps), so portent's kernels, which use llvm.masked.load
 * under padding, are built for SSE4.2 where those become plain loads), a generated C driver
 * that calls the kernel once on cold caches, and callgrind's cache simulator counting only
 * the kernel. */
#ifndef PORTENT_CLI_BENCH_VALGRIND_H
#define PORTENT_CLI_BENCH_VALGRIND_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* One simulated hierarchy: D1 and LL as valgrind's --D1/--LL (size, associativity, line). */
typedef struct {
  const char *name;
  int64_t d1_bytes, d1_assoc, ll_bytes, ll_assoc;
} bv_cache;

typedef struct {
  double d1_misses, ll_misses; /* data misses, reads + writes */
  double refs;                 /* data references (Dr + Dw) */
} bv_counts;

/* Runs argv (argv[0] looked up in PATH) with output discarded unless log is set (stderr
 * then goes there); returns its exit status, or -1 if it could not start. */
int bv_spawn(char *const argv[], const char *log);
bool bv_have_valgrind(void);
/* ir.ll -> obj.o for cpu (llc's -mcpu: "x86-64-v3" for AVX2, "x86-64-v2" for SSE4.2),
 * position independent; a function's own target-cpu attribute (clang's) wins. */
int bv_compile_object(const char *ir, const char *obj, const char *cpu, char *err, size_t cap);
/* Writes and builds `exe` from a driver calling `entry` once on buffers of the given float
 * counts (each ending at a page boundary, as in the analyzer's run), after evicting every
 * cache the bench simulates. portent_abi: the entry takes
 * (float **buffers, pt_pool *pool) and the driver defines a one-thread pool; otherwise it
 * takes one float * per buffer. */
int bv_build_driver(const char *dir, const char *entry, bool portent_abi, int n_buffers, const int64_t *floats,
                    const char *obj, const char *exe, bool keep, char *err, size_t cap);
/* Starts callgrind on exe for each cache configuration at once (collecting inside `entry`
 * only) and waits for all; fills out[i]. keep: leave the driver source and callgrind's files. */
int bv_simulate(const char *dir, const char *exe, const char *entry, int n, const bv_cache *caches, bool keep,
                bv_counts *out, char *err, size_t cap);

#endif
