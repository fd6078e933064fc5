/* Shared by the microbench/ files: the JIT, kernel specifications, timing statistics and
 * the per-part probes the driver (characterize.c) calls in order. */
#ifndef PORTENT_MICROBENCH_INTERNAL_H
#define PORTENT_MICROBENCH_INTERNAL_H

#include <llvm-c/Core.h>
#include <llvm-c/TargetMachine.h>

#include "microbench.h"

typedef struct pmb_counters pmb_counters; /* counters.c */

/* --- jit.c: one LLVM context, a host target machine, LLJIT for running kernels. --- */
typedef struct pmb_jit pmb_jit;
pmb_jit *pmb_jit_new(pt_diag *d);
void pmb_jit_free(pmb_jit *j);
LLVMContextRef pmb_jit_context(pmb_jit *j);
/* A fresh module for this host (triple and data layout set). */
LLVMModuleRef pmb_jit_module(pmb_jit *j, const char *name);
/* A loop kernel's frame, void NAME(i64 iterations, ptr x n_ptrs): blocks entry, loop and done,
 * the builder at the end of entry. The caller fills the blocks and disposes the builder. */
#define PMB_LOOP_MAX_PTRS 4
typedef struct {
  LLVMValueRef fn;
  LLVMBasicBlockRef entry, loop, done;
  LLVMBuilderRef b;
} pmb_loop_frame;
pmb_loop_frame pmb_loop_frame_new(pmb_jit *j, LLVMModuleRef m, const char *name, int n_ptrs);
/* Host CPU feature test, e.g. pmb_jit_has(j, "avx512f"). */
bool pmb_jit_has(const pmb_jit *j, const char *feature);
const char *pmb_jit_cpu(const pmb_jit *j);
/* Emits the module as assembly text (malloc'ed), leaving the module usable. */
char *pmb_jit_asm(pmb_jit *j, LLVMModuleRef m, pt_diag *d);
/* Compiles the module (consumed) into the JIT; later lookups find its functions. */
int pmb_jit_add(pmb_jit *j, LLVMModuleRef m, pt_diag *d);
void *pmb_jit_lookup(pmb_jit *j, const char *name, pt_diag *d);

/* --- nest.c: a walk repeated by an outer loop, void NAME(i64 trips, ptr in, ptr out): the
 * outer loop (blocks OUTER, OUTER_end) runs `trips` times, each trip a walk (block walk) whose
 * index starts at 0 and goes on while the next index is below a limit; one accumulator of
 * acc_type runs through both, starts at zero and is stored to out at the end. --- */
typedef struct {
  LLVMValueRef fn, trips, in, out;
  LLVMBasicBlockRef entry, outer, walk, outer_end, done;
  LLVMBuilderRef b;
  LLVMTypeRef acc_type;
  LLVMValueRef trip, acc_in; /* the outer loop's phis: trips so far, the accumulator the walk starts from */
  LLVMValueRef index, acc;   /* the walk's phis */
} pmb_nest;
/* The function and its blocks, the builder at the end of entry (for the caller's loads of in). */
pmb_nest pmb_nest_new(pmb_jit *j, LLVMModuleRef m, const char *name, const char *outer, LLVMTypeRef acc_type);
/* Ends entry and opens the outer loop: f->trip, f->acc_in, the builder after them (what a trip
 * computes once goes there). */
void pmb_nest_outer(pmb_nest *f);
/* Ends the outer loop's head and opens the walk: f->index, f->acc, the builder after them. */
void pmb_nest_walk(pmb_nest *f);
/* Ends the walk (it goes on while next < limit; acc is the accumulator after this iteration) and
 * the outer loop, stores acc to out, returns, and disposes the builder. */
void pmb_nest_close(pmb_nest *f, LLVMValueRef next, LLVMValueRef limit, LLVMValueRef acc);

/* --- kernels.c: instruction kernels, void f(i64 iters, ptr in, ptr out). --- */
#define PMB_MAX_CHAINS 16
#define PMB_REGION 256 /* bytes of `in` per chain: operand x, operand y, accumulator */
/* Gathers and scatters whose lanes fall on separate pages (gather_page, scatter_page): lane l
 * of chain c at byte l x PMB_PAGE_LANE_STEP of chain c's span after the chains' regions. A
 * page and a line apart, so each lane has a 4 KiB page of its own and the lanes of the 12
 * throughput chains spread over the L1's sets (3 lines per set) instead of one set. */
#define PMB_PAGE_LANE_STEP (4096 + 64)
#define PMB_PAGE_SPAN (16 * PMB_PAGE_LANE_STEP) /* bytes per chain: 16 lanes at most */
#define PMB_INPUT_BYTES (PMB_REGION * PMB_MAX_CHAINS + PMB_MAX_CHAINS * PMB_PAGE_SPAN)
typedef struct {
  ptg_op op;
  ptg_elem elem;
  int bits;
} pmb_op;
typedef struct {
  int chains;                  /* independent accumulator chains */
  int unroll;                  /* ops per chain per loop iteration */
  pmb_op ops[PMB_MAX_CHAINS];  /* per chain */
  bool lane_round_trip;        /* a load chain's lane-0 move to an integer register and back */
} pmb_kernel;
typedef void (*pmb_kernel_fn)(int64_t iters, void *in, void *out);
/* Whether the host (jit features) has this op; *insn gets the expected instruction. */
bool pmb_op_supported(const pmb_jit *j, pmb_op op);
/* Adds the kernel as function `name` to m; PT_ERR_UNSUPPORTED if an op is not available. */
int pmb_kernel_build(pmb_jit *j, LLVMModuleRef m, const pmb_kernel *k, const char *name, pt_diag *d);
/* Fills the input buffer (PMB_INPUT_BYTES) with values that keep each chain stable. */
void pmb_kernel_fill(const pmb_kernel *k, void *in);
/* A kernel's input buffer, PMB_INPUT_BYTES in 4 KiB pages (no transparent huge page would put
 * the page-apart lanes back in one page); NULL when out of memory. */
void *pmb_kernel_input_new(void);
void pmb_kernel_input_free(void *in);
pmb_kernel pmb_kernel_latency(pmb_op op);
pmb_kernel pmb_kernel_throughput(pmb_op op);
/* For vector/FP load latency: lane 0 to a GPR and back (vmovq both ways), no load. */
pmb_kernel pmb_kernel_lane_round_trip(pmb_op op);
bool pmb_load_in_vector_reg(pmb_op op);
pmb_kernel pmb_kernel_pair(pmb_op a, pmb_op b);
/* The most frequent instruction (mnemonic and register class, e.g. "vfmadd231ps zmm") in the
 * loop of function `name` in assembly text `s`; "" when not found. */
void pmb_asm_main_instruction(const char *s, const char *name, char *out, size_t n);
/* The body of function `name` in assembly text (malloc'ed), NULL when absent. */
char *pmb_asm_function(const char *s, const char *name);

/* --- bandwidth.c: STREAM-like kernels, void f(i64 vectors, ptr a, ptr b, ptr c); vectors is
 * a multiple of pmb_bandwidth_unroll(). Order: read, write, copy, triad. --- */
typedef void (*pmb_bw_fn)(int64_t vectors, void *a, void *b, void *c);
int pmb_bandwidth_kernels(pmb_jit *j, int bits, pmb_bw_fn fns[4], pt_diag *d);
int pmb_bandwidth_unroll(void);

/* --- chase.c: kernels for misses in flight (mlp.c). chase: void f(i64 iters, ptr in, ptr out)
 * with in[0..chains) the chases' positions (updated), pmb_chase_steps(chains) loads per chain
 * per iteration; stride: void f(i64 passes, ptr in = {ptr base, i64 bytes, i64 stride}, ptr out),
 * pmb_stride_accesses(bytes, stride) independent volatile loads per pass. --- */
#define PMB_MAX_CHASES 128
int pmb_chase_steps(int chains);
int pmb_chase_kernel_build(pmb_jit *j, LLVMModuleRef m, int chains, const char *name, pt_diag *d);
/* store_back: each load's 8 bytes stored back plus one (a read-modify-write walk) */
int pmb_stride_kernel_build(pmb_jit *j, LLVMModuleRef m, const char *name, bool store_back, pt_diag *d);
int64_t pmb_stride_accesses(int64_t bytes, int64_t stride);
/* mlp.c: the plateau of overlap[0..n) (NaN: not measured): the index of the median of the three
 * highest values (the highest with fewer points; -1 with none), so one lucky timing does not
 * make the figure; *knee gets the first index within 10% of it. */
int pmb_mlp_plateau(const double *overlap, int n, int *knee);

/* --- memory.c: buffers and chase cycles shared with mlp.c. --- */
/* n bytes aligned to 2 MiB, in transparent huge pages where the kernel allows (4 KiB pages
 * with small_pages); free with munmap(p, n). */
void *pmb_big_alloc(size_t n, bool small_pages);
/* The lines of buf linked into one random cycle; its start, and the visiting order if asked
 * (caller frees). */
void **pmb_make_cycle(char *buf, size_t bytes, int line, pt_rng *rng, uint32_t **order_out);
/* The largest working set the memory probes use: 4x the last-level caches, 16 MiB..1 GiB. */
int64_t pmb_memory_bytes(const ptg_target *t);

/* --- clock.c: statistics and the calibrated cycle clock. --- */
typedef struct {
  double value, min, max, spread; /* value: the best repetition; spread = (max - min) / value */
  double median;
  int reps;
} pmb_stats;
pmb_stats pmb_stats_of(double *v, int n);
ptg_figure pmb_figure(pmb_stats s);
pmb_stats pmb_stats_scale(pmb_stats s, double factor); /* units change; spread does not */
/* Times fn: grows iters until one call lasts min_seconds, then `reps` timed calls.
 * Returns seconds per iteration statistics, in this thread's CPU time (single-threaded
 * kernels) or wall-clock time (_wall: anything that waits for other threads). */
pmb_stats pmb_time_kernel(pmb_kernel_fn fn, void *in, void *out, double min_seconds, int reps);
pmb_stats pmb_time_kernel_wall(pmb_kernel_fn fn, void *in, void *out, double min_seconds, int reps);
double pmb_thread_seconds(void);

typedef struct {
  const pmb_options *o;
  int reps;
  double min_seconds;
  double ghz; /* calibrated core clock, latest sample */
  pmb_kernel_fn clock; /* the calibration kernel */
  /* how much of the core is ours: 12 independent chains of 64-bit adds (the integer ALUs)
   * and of 128-bit compare+select (the vector pipes), clock.c */
  pmb_kernel_fn sentinel[2];
  double sentinel_seen[2][1024]; /* per sentinel, its latest readings (cycles per op) */
  int n_sentinel[2];
  double sentinel_ref[2]; /* the 10th percentile of those readings: the core alone */
  double clock_ghz[512];
  int n_clock;
  pmb_counters *counters; /* NULL when the machine exposes none */
  pmb_jit *jit;
  ptg_target *t;
  const char *memory_note; /* what the latency curve showed (levels, huge pages), for the notes */
} pmb_ctx;
/* --- levels.c: cache levels from the latency curve (t->latency_curve and t->caches sizes);
 * best[i] is point i's latency (ns) after re-timing, ghz[i] the clock it was timed at. --- */
typedef struct {
  double ns, ghz;   /* the level's latency and the clock it was timed at */
  int idx;          /* the curve point it came from; -1: no point for this level */
  bool own_plateau; /* false: every candidate was as slow as memory */
} pmb_level_fit;
double pmb_curve_memory_ns(const ptg_target *t);
int pmb_level_candidates(const ptg_target *t, int k, int *idx, int cap);
pmb_level_fit pmb_fit_level(const ptg_target *t, int k, const double *best, const double *ghz, double below_ns, double mem_ns);
int64_t pmb_effective_bytes(const ptg_target *t, const double *best, int64_t from, double ns, double next_ns);

void pmb_progress(const pmb_ctx *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* --- counters.c: cycles and instructions around one call (NULL handle: none exposed). --- */
pmb_counters *pmb_counters_open(void);
void pmb_counters_close(pmb_counters *k);
int pmb_counters_measure(pmb_counters *k, void (*fn)(int64_t, void *, void *), int64_t iters, void *in, void *out,
                         double *cycles, double *instructions);

/* --- the parts, in the order characterize.c runs them --- */
int pmb_calibrate_clock(pmb_ctx *c, pt_diag *d);
double pmb_recalibrate(pmb_ctx *c); /* a fresh clock sample; also sets c->ghz */
void pmb_clock_summary(pmb_ctx *c); /* fills t->frequency_ghz from all samples */
/* Reads the two sentinels (cycles per op; they rise by 8-45% while something else runs on the
 * same physical core, on a VM another tenant on the SMT sibling, which moves other figures
 * too: clock.c) into raw and returns how shared the core is now (pmb_share). */
double pmb_sentinel(pmb_ctx *c, double raw[2]);
/* Readings relative to each sentinel's reference (the 10th percentile of its readings in this
 * run), the larger of the two: about 1 when the core is ours alone. */
double pmb_share(const pmb_ctx *c, const double raw[2]);
/* Polls the sentinel (sleeping between polls) until it is within `tol` of its best or
 * `max_seconds` have passed; returns the last reading relative to the best (1 = alone). */
double pmb_wait_alone(pmb_ctx *c, double tol, double max_seconds);
int pmb_measure_instructions(pmb_ctx *c, pt_diag *d);
int pmb_measure_units(pmb_ctx *c, pt_diag *d);
int pmb_measure_memory(pmb_ctx *c, pt_diag *d);
int pmb_measure_mlp(pmb_ctx *c, pt_diag *d); /* mlp.c: misses in flight per level, strided walks */
int pmb_measure_set_walks(pmb_ctx *c, pt_diag *d); /* set_walks.c: L1 misses in flight per set */
int pmb_measure_set_walks_rmw(pmb_ctx *c, pt_diag *d); /* set_walks.c: the same walks, read-modify-write */
int pmb_measure_set_streams(pmb_ctx *c, pt_diag *d); /* set_streams.c: row streams in one L1 set position */
int pmb_measure_set_loads(pmb_ctx *c, pt_diag *d); /* set_loads.c: set walks read by 1..16 loads at once */
/* set_walks.c: the walks the set-walk probes time (by increasing sets, figures NaN; rows has
 * PMB_SET_WALKS entries): how many. */
#define PMB_SET_WALKS 5
int pmb_plan_set_walks(const ptg_target *t, const ptg_cache *l1, ptg_set_walk *rows);
bool pmb_l1_has_sets(const ptg_target *t); /* L1's associativity and line known */
int pmb_measure_store_forward(pmb_ctx *c, pt_diag *d); /* forward.c: a load spanning two stores */
int pmb_measure_spills(pmb_ctx *c, pt_diag *d);        /* spills.c: register tiles past the registers */
int pmb_measure_runtime(pmb_ctx *c, pt_diag *d);
int pmb_measure_gpu(pmb_ctx *c, pt_diag *d); /* gpu.c: fills t->gpu */
/* gpu_cupti.c: kernel durations from CUPTI activity records (GPU clock). open: NULL with the
 * reason when libcupti is missing; take (after a synchronize): the number of kernel records
 * since the last take and their summed duration in *seconds, -1 when the flush fails. */
/* The activity-record facts gpu_cupti.c relies on (CUDA 13 cupti_activity.h; checked against
 * the installed header by tests/microbench/test_gpu_cupti.c). */
#define PMB_CUPTI_KIND_KERNEL 3
#define PMB_CUPTI_KIND_CONCURRENT_KERNEL 10
#define PMB_CUPTI_START_OFFSET 16
#define PMB_CUPTI_END_OFFSET 24
typedef struct pmb_cupti pmb_cupti;
pmb_cupti *pmb_cupti_open(char *why, size_t n);
int pmb_cupti_take(pmb_cupti *c, double *seconds);
void pmb_cupti_close(pmb_cupti *c);

#endif
