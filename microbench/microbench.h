/* microbench: characterizes the machine it runs on into a target description (targets/):
 * topology and caches (hwloc, cpuid), instruction latency/throughput from JIT-compiled
 * LLVM kernels, memory latency/bandwidth/parallelism, thread-pool fork/join and barrier
 * cost, and hardware counters when the kernel exposes them. */
#ifndef PORTENT_MICROBENCH_H
#define PORTENT_MICROBENCH_H

#include <stdbool.h>
#include <stdio.h>

#include "common.h"
#include "targets.h"

typedef struct {
  const char *name;     /* target name; NULL: derived from the microarchitecture and cores */
  bool quick;           /* fewer widths, sizes and repetitions (< 20 s on 2 cores) */
  int repetitions;      /* timed repetitions per figure; 0: 5 (3 when quick) */
  double min_seconds;   /* minimum duration of one timed repetition; 0: 2 ms (0.5 ms quick) */
  int max_threads;      /* 0: all cores */
  FILE *progress;       /* progress lines (stderr in the CLI); NULL for silence */
  /* Restrict the instruction table, e.g. "add:f32,fma:f32:256" (op[:type[:bits]]); NULL: all. */
  const char *only;
  bool skip_memory, skip_runtime, skip_units;
  bool skip_mlp;          /* misses in flight per level and the strided walks (mlp.c) */
  bool skip_l1_sets;      /* L1 misses in flight per set: the set walks (set_walks.c) */
  bool skip_l1_rmw;       /* the same walks read-modify-write (set_walks.c) */
  bool skip_l1_streams;   /* sequential streams in one L1 set position (set_streams.c) */
  bool skip_l1_loads;     /* the set walks read by 1..16 load instructions at once (set_loads.c) */
  bool skip_forward;      /* a load spanning two stores in flight (forward.c) */
  bool skip_spills;       /* register tiles larger than the vector registers (spills.c) */
  bool skip_instructions; /* no instruction table (a run of other sections only) */
  bool small_pages; /* memory buffers in 4 KiB pages (MADV_NOHUGEPAGE): to see what TLB misses cost */
  bool gpu; /* also characterize a GPU; fails with PT_ERR_UNSUPPORTED when there is none */
} pmb_options;

/* Runs the whole characterization; NULL with d filled on failure. Never fails because
 * counters are missing: the target's provenance says why they are not there. */
ptg_target *pmb_characterize(const pmb_options *o, pt_diag *d);

/* Topology, caches, ISA features and microarchitecture name only (fast, no timing). */
int pmb_topology(ptg_target *t, pt_diag *d);

/* The name characterize gives t by default, from its topology: microarchitecture-vendor-Nc
 * (e.g. "zen4-epyc-2c"); allocated in t's arena. */
const char *pmb_default_target_name(ptg_target *t);

/* Microarchitecture from cpuid vendor/family/model: "zen4", "zen5", "skylake-sp", ... or
 * "unknown". */
const char *pmb_uarch_name(const char *vendor, int family, int model);

/* Assembly (AT&T syntax, as llc prints it) of the throughput kernel that measures
 * op x elem x bits on this host; malloc'ed. PT_ERR_UNSUPPORTED in d when the host has no
 * such instruction (e.g. 512-bit without AVX-512, integer sqrt). */
char *pmb_kernel_asm(ptg_op op, ptg_elem elem, int vector_bits, pt_diag *d);
/* Loop-body repetitions of the op in that kernel (a check counts at least this many). */
int pmb_kernel_ops_per_iteration(void);

/* Whether this host can run op x elem x bits (what the characterization measures). */
bool pmb_supported(ptg_op op, ptg_elem elem, int vector_bits);

/* Hardware counters (libpfm4 + perf_event_open): 1 with cycles and instructions available,
 * 0 when not, with the reason in `why`. */
int pmb_counters_probe(char *why, size_t n);

/* GPU: 0 and a description when a CUDA device is usable, PT_ERR_UNSUPPORTED with the reason
 * in d otherwise. */
int pmb_gpu_probe(char *desc, size_t n, pt_diag *d);
/* The GPU kernels: PTX modules the driver compiles for the device (tests run ptxas on each).
 * `arch` is the oldest GPU the module runs on ("sm_50"); the mma module is loaded only there. */
typedef struct {
  const char *name, *arch, *ptx;
} pmb_gpu_module;
const pmb_gpu_module *pmb_gpu_modules(int *n);

#endif
