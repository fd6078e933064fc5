/* Target descriptions: what the predictor knows about a machine (instruction costs, caches,
 * memory, threading cost), loaded from and saved to the JSON format of docs/formats.md
 * ("Target description"). Written by `portent characterize` (microbench/) or by hand from
 * published figures; read by the predictor through this header only. */
#ifndef PORTENT_TARGETS_H
#define PORTENT_TARGETS_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "common.h"

#define PTG_FORMAT_VERSION 1

/* Operation classes: the analyzer emits the same names for task-graph nodes.
 * X(enum suffix, JSON name, one-line meaning). */
#define PTG_OP_CLASSES(X)                                               \
  X(ADD, "add", "addition")                                             \
  X(SUB, "sub", "subtraction")                                          \
  X(MUL, "mul", "multiplication")                                       \
  X(FMA, "fma", "fused multiply-add; for bf16/i8, the dot-product instruction") \
  X(DIV, "div", "division")                                             \
  X(SQRT, "sqrt", "square root")                                        \
  X(MINMAX, "minmax", "minimum / maximum")                              \
  X(CMPSEL, "cmpsel", "compare and select (blend)")                     \
  X(LOGIC, "logic", "and / or / xor")                                   \
  X(SHIFT, "shift", "shifts")                                           \
  X(CONVERT, "convert", "int <-> float conversion of the same width")   \
  X(SHUFFLE, "shuffle", "lane permutation / broadcast")                 \
  X(LOAD, "load", "load from L1")                                       \
  X(STORE, "store", "store to L1")                                      \
  X(GATHER, "gather", "gather from L1")                                 \
  X(OTHER, "other", "anything else (charged as the cheapest integer op)") \
  X(MASKLOAD, "maskload", "masked (predicated) vector load from L1, mask not constant") \
  X(MASKSTORE, "maskstore", "masked (predicated) vector store to L1, mask not constant") \
  X(SCATTER, "scatter", "scatter to L1, lanes in one line")                              \
  X(GATHER_PAGE, "gather_page", "gather whose lanes each fall on a 4 KiB page of their own") \
  X(SCATTER_PAGE, "scatter_page", "scatter whose lanes each fall on a 4 KiB page of their own")

typedef enum {
#define PTG_X(e, name, doc) PTG_OP_##e,
  PTG_OP_CLASSES(PTG_X)
#undef PTG_X
  PTG_OP_COUNT
} ptg_op;

/* Element types. X(enum suffix, JSON name, bits, is_float). */
#define PTG_ELEM_TYPES(X) \
  X(I8, "i8", 8, 0)       \
  X(I16, "i16", 16, 0)    \
  X(I32, "i32", 32, 0)    \
  X(I64, "i64", 64, 0)    \
  X(F16, "f16", 16, 1)    \
  X(BF16, "bf16", 16, 1)  \
  X(F32, "f32", 32, 1)    \
  X(F64, "f64", 64, 1)

typedef enum {
#define PTG_X(e, name, bits, fl) PTG_ELEM_##e,
  PTG_ELEM_TYPES(PTG_X)
#undef PTG_X
  PTG_ELEM_COUNT
} ptg_elem;

const char *ptg_op_name(ptg_op op);
const char *ptg_elem_name(ptg_elem e);
int ptg_elem_bits(ptg_elem e);
bool ptg_elem_is_float(ptg_elem e);
/* The class a target file's missing class is priced as (maskload -> load, maskstore -> store,
 * scatter -> gather, gather_page -> gather, scatter_page -> scatter): the classes added after
 * earlier targets were characterized; op itself when it has none. */
ptg_op ptg_op_fallback(ptg_op op);
/* Name -> enum; -1 when unknown. */
int ptg_op_from_name(const char *name);
int ptg_elem_from_name(const char *name);

/* One figure: value with how it was obtained. value is NaN when not known/not applicable.
 * spread = (max - min) / median over `reps` repetitions (0 for published figures). */
typedef struct {
  double value;
  double spread;
  int reps;
  const char *source; /* NULL: the entry's or file's source */
} ptg_figure;

/* One instruction-table row. vector_bits = lanes x element bits, so a scalar f32 is 32. */
typedef struct {
  ptg_op op;
  ptg_elem elem;
  int vector_bits;
  ptg_figure latency;          /* cycles, dependent chain */
  ptg_figure recip_throughput; /* cycles per instruction, independent chains */
  const char *unit;            /* execution-unit class; rows sharing a unit compete */
  /* Hardware counters read around one run of the kernels, per operation (NaN when the
   * machine exposes no counters): core cycles of the latency chain, instructions retired
   * by the throughput kernel (1 + loop overhead when the kernel is what it claims). */
  double counter_cycles, counter_instructions;
  const char *instruction;     /* the machine instruction measured, e.g. "vfmadd231ps zmm" */
  const char *source;
} ptg_inst;

/* One execution-unit class: which op classes compete for it and how many pipes serve it. */
typedef struct {
  const char *name;
  int pipes;
  const char *classes; /* comma-separated op-class names, informational */
} ptg_unit;

/* Bandwidth with 1..n threads (GB/s, all threads together). */
typedef struct {
  int threads;
  ptg_figure read, write, copy, triad;
} ptg_bandwidth;

/* An L1 walk whose misses all fall in a few of L1's sets (set_walks of level 1): independent
 * loads `stride` bytes apart over `lines` lines that the next level holds but those sets do not
 * (the same lines walked again and again, as a column walk of a matrix in L2). overlapping_misses
 * = one random chase's latency over the same lines / ns_per_access: how many L1 misses are in
 * flight when they fall in `sets` sets (Zen 4 serves about one per set at a time). */
typedef struct {
  int64_t stride_bytes;
  int sets;          /* L1 sets the walk's lines fall in (the set index is virtual within a page) */
  int64_t lines;     /* lines walked */
  ptg_figure latency_ns;         /* one chase through the same lines in random order */
  ptg_figure ns_per_access;      /* the strided walk, independent loads */
  ptg_figure overlapping_misses; /* latency_ns / ns_per_access */
  ptg_figure rmw_ns_per_access;  /* the same walk, each access a load and a store back of its line
                                    (C[i][j] += ... down a column): every miss also evicts a dirty
                                    line to the next level; NaN when not measured */
} ptg_set_walk;

/* Sequential streams whose current lines share one L1 set position (set_streams of level 1):
 * `streams` rows 4 KiB apart walked side by side, one 4-byte element of each per iteration, of
 * which `rmw_streams` are stored back (a[r][j] += ...). Past the ways they evict each other before
 * their next element; ns_per_access is the loop's time per iteration over `streams` (bert_ffn1's
 * rfactor loop: twelve such rows, six read-modify-written). */
typedef struct {
  int streams;
  int rmw_streams;
  ptg_figure ns_per_access;
} ptg_set_stream;

/* An L1 set walk read by `loads` load instructions at once (set_loads of level 1): the set
 * walk's lines, `loads` independent loads an iteration, each `loads` x stride further on (an
 * unrolled loop's rows of one column, each its own instruction). Zen 3 serves such a walk slower
 * the more instructions read it, though every line and its order are the same (1.22-1.28x from
 * one load to eight at 2 KiB: docs/validation.md, session 24). */
typedef struct {
  int64_t stride_bytes;
  int sets;
  int64_t lines;
  int loads;
  ptg_figure ns_per_access;
} ptg_set_load;

typedef struct {
  int level;                 /* 1, 2, 3 */
  int64_t size_bytes;        /* per instance */
  int line_bytes;
  int associativity;         /* 0 = fully associative / unknown */
  int shared_by;             /* cores sharing one instance */
  ptg_figure latency_cycles; /* load-to-use, pointer chase */
  ptg_figure latency_ns;
  /* Misses to this level that overlap (levels below L1): its latency / the time per access
   * of k independent random chases over a working set of this level, the best k (Little's
   * law). Random order, so the prefetchers cannot help; NaN when not measured. */
  ptg_figure overlapping_misses;
  int64_t detected_bytes;    /* boundary found from the latency curve, 0 if not */
  int n_set_walks;           /* level 1 only; 0: not measured (the predictor then has no per-set limit) */
  ptg_set_walk *set_walks;   /* "set_walks", by increasing sets */
  int n_set_streams;         /* level 1 only; 0: not measured */
  ptg_set_stream *set_streams; /* "set_streams" */
  int n_set_loads;           /* level 1 only; 0: not measured */
  ptg_set_load *set_loads;   /* "set_loads" */
  int n_bandwidth;
  ptg_bandwidth *bandwidth;
  const char *source;
} ptg_cache;

/* A walk of independent loads with a fixed stride over a buffer much larger than the last
 * level and the TLB's reach (a column walk): each access on a new line and, for strides of a
 * page or more, a new page. overlapping_misses = the memory latency of a random chase (huge
 * pages, no TLB misses) / ns_per_access: the misses in flight such a walk behaves as, TLB
 * misses and page walks included. */
typedef struct {
  int64_t stride_bytes;
  int64_t page_bytes; /* pages of the walked buffer: 4096, or 2 MiB (TLB misses out of it) */
  ptg_figure ns_per_access;
  ptg_figure overlapping_misses;
} ptg_strided_walk;

typedef struct {
  ptg_figure latency_ns;
  ptg_figure latency_cycles;
  ptg_figure overlapping_misses; /* memory-level parallelism: random chases over memory */
  int n_strided;
  ptg_strided_walk *strided; /* "strided_walks" */
  int n_bandwidth;
  ptg_bandwidth *bandwidth;
  const char *source;
} ptg_memory;

/* Cost of the thread pool with a given number of threads. */
typedef struct {
  int threads;
  ptg_figure fork_join_ns;
  ptg_figure barrier_ns;
} ptg_runtime;

/* A point of the pointer-chasing latency curve (measured targets only). */
typedef struct {
  int64_t bytes;
  double ns;
  double cycles;
} ptg_latency_point;

/* The measured figures of a GPU, one row each: X(field, JSON key, lowest and highest value the
 * validator accepts, meaning). Every row is a ptg_figure, null when not measured, so files written
 * before a row existed still load. Latencies are per dependent load (pointer chase, one thread). */
#define PTG_GPU_FIGURES(X)                                                                          \
  X(launch_us, "launch_us", 0, 1e6, "empty kernel launch + synchronize, round trip (host clock)")  \
  X(memory_bandwidth_gbs, "memory_bandwidth_gbs", 0, 1e6, "device copy kernel, read + write")     \
  X(h2d_gbs, "h2d_gbs", 0, 1e5, "pinned host -> device copy")                                      \
  X(d2h_gbs, "d2h_gbs", 0, 1e5, "device -> pinned host copy")                                      \
  X(fp32_tflops, "fp32_tflops", 0, 1e4, "FP32 FMA kernel, 2 flops per FMA")                        \
  X(fp16_mma_tflops, "fp16_mma_tflops", 0, 1e5, "tensor cores: mma m16n8k16 f16 x f16 + f32")     \
  X(bf16_mma_tflops, "bf16_mma_tflops", 0, 1e5, "tensor cores: mma m16n8k16 bf16 x bf16 + f32")   \
  X(smem_latency_ns, "smem_latency_ns", 0, 1e4, "shared-memory pointer chase, per load")          \
  X(smem_bandwidth_gbs, "smem_bandwidth_gbs", 0, 1e7, "shared-memory loads, all SMs")             \
  X(l1_latency_ns, "l1_latency_ns", 0, 1e4, "global pointer chase within L1 (16 KiB)")            \
  X(l2_latency_ns, "l2_latency_ns", 0, 1e4, "global pointer chase within L2 (ld.cg, 4 MiB)")      \
  X(memory_latency_ns, "memory_latency_ns", 0, 1e5, "global pointer chase beyond L2 (ld.cg)")     \
  X(l2_bandwidth_gbs, "l2_bandwidth_gbs", 0, 1e6, "device copy kernel over a set that fits L2")    \
  X(sm_clock_ghz, "sm_clock_ghz", 0.05, 10, "SM clock while running: %clock64 cycles / kernel time")

/* An accelerator beside the CPU (`portent characterize --gpu`); present = false without one. */
typedef struct {
  bool present;
  const char *name;
  const char *compute_capability; /* "9.0" */
  int sms;                        /* streaming multiprocessors */
  double clock_ghz, memory_clock_ghz;
  int64_t memory_bytes, l2_bytes;
  int memory_bus_bits;
#define PTG_X(field, key, lo, hi, doc) ptg_figure field;
  PTG_GPU_FIGURES(PTG_X)
#undef PTG_X
  const char *timer; /* how kernel durations were taken: CUPTI activity records or the host clock */
  const char *source;
} ptg_gpu;

typedef struct ptg_target {
  int version;
  const char *name;
  /* provenance */
  const char *provenance; /* "measured" or "published" */
  const char *date;       /* ISO 8601 */
  const char *tool;       /* "portent 0.1.0" */
  const char *host;
  int repetitions;
  int n_sources;
  const char **sources; /* references the entries' "source" strings cite */
  const char *counters; /* hardware counters: "available" or why not */
  const char *notes;
  /* cpu */
  const char *isa; /* "x86_64", "aarch64" */
  const char *vendor;
  int family, model;
  const char *microarchitecture; /* "zen5", "skylake-sp", "neoverse-n1" */
  const char *model_name;
  int n_features;
  const char **features;
  int cores, threads_per_core, sockets, numa_nodes;
  ptg_figure frequency_ghz;
  int native_vector_bits; /* widest vector register the FP units run at full width */
  int max_vector_bits;    /* widest vector register the ISA has */
  ptg_figure issue_width; /* instructions per cycle, sustained */
  ptg_figure store_forward_cycles; /* a float load-add-store chain through one address: cycles a
                                      link takes beyond the add's latency (the store forwarded to
                                      the next load); NaN when not measured */
  ptg_figure store_forward_fail_cycles; /* cycles an iteration loses when a load spans two stores
                                           still in flight (no forwarding); NaN unmeasured */
  ptg_figure spill_update_cycles; /* cycles per accumulator update in a register tile of FMA
                                     accumulators that the vector registers cannot hold (the
                                     register allocator keeps some in memory); NaN unmeasured */
  /* tables */
  int n_insts;
  ptg_inst *insts;
  int n_units;
  ptg_unit *units;
  int n_caches;
  ptg_cache *caches; /* in level order */
  ptg_memory memory;
  int n_runtime;
  ptg_runtime *runtime;
  int n_latency_curve;
  ptg_latency_point *latency_curve;
  ptg_gpu gpu;
  pt_arena *arena; /* owns every string and array above */
} ptg_target;

/* A new empty target whose memory the caller fills from t->arena. */
ptg_target *ptg_target_new(const char *name);
/* Loads and validates; NULL with d naming the file and JSON path (e.g. "caches[1].size"). */
ptg_target *ptg_target_load(const char *path, pt_diag *d);
ptg_target *ptg_target_parse(const char *json, const char *what, pt_diag *d);
/* Checks ranges and consistency; the message names the JSON path. */
int ptg_target_validate(const ptg_target *t, const char *what, pt_diag *d);
/* Serializes to JSON (malloc'ed, caller frees) / writes atomically. */
char *ptg_target_to_json(const ptg_target *t, pt_diag *d);
int ptg_target_save(const ptg_target *t, const char *path, pt_diag *d);
void ptg_target_free(ptg_target *t);

/* A partial characterization of the same machine (vendor, family, model) merged into a
 * description: every instruction row of `fresh` replaces the row of the same op, type and width
 * (or is added); the sections the caller says `fresh` measured (units with the issue width,
 * caches + memory + latency curve, runtime, gpu) replace base's; the rest stays. Without units,
 * a new row takes the unit name of the old table (same row, else same op and type). Provenance
 * gets the new date, the new sources and a note of what changed. replaced/added are outputs. */
typedef struct {
  bool units, memory, runtime, gpu; /* in: which sections fresh measured */
  bool sets; /* in: L1's set walks (caches[0].set_walks); without it base's are kept */
  bool rmw;  /* in: their read-modify-write figures (set_walks[].rmw_ns_per_access, matched by
              * stride); without it base's are kept */
  bool forward; /* in: cpu.store_forward_fail_cycles; without it base's is kept */
  bool spills;  /* in: cpu.spill_update_cycles; without it base's is kept */
  bool streams; /* in: L1's set streams (caches[0].set_streams); without them base's are kept */
  bool loads;   /* in: L1's set walks by loads (caches[0].set_loads); without them base's are kept */
  bool mlp; /* in: misses in flight (caches[].overlapping_misses, memory.overlapping_misses and
             * memory.strided_walks): without it base's are kept even when memory is replaced */
  int replaced, added;              /* out: instruction rows */
} ptg_update_summary;
ptg_target *ptg_target_update(const ptg_target *base, const ptg_target *fresh, ptg_update_summary *s, pt_diag *d);
/* PT_OK when host (a topology of this machine) has base's CPU vendor, family and model; an
 * error naming `what` and both CPUs otherwise (what --update checks before measuring). */
int ptg_target_check_same_cpu(const ptg_target *base, const ptg_target *host, const char *what, pt_diag *d);

/* Adds an instruction row (strings copied into t->arena); returns it for further fields. */
ptg_inst *ptg_target_add_inst(ptg_target *t, ptg_op op, ptg_elem elem, int vector_bits);

/* Instruction cost lookup with the nearest-class fallback:
 *  1. the exact row (op, elem, vector_bits);
 *  2. same op and elem, another width: the narrowest wider row, else the widest narrower
 *     row with split = ceil(vector_bits / row bits) instructions (legalization by splitting);
 *  3. same op, another element of the same kind (float/int) and size, then of the same
 *     kind, then any element, widths chosen as in 2;
 *  4. op "other", then scalar i64 "add", then 1 cycle latency and throughput.
 * A class with no row at all (targets characterized before the class existed: maskload,
 * maskstore, scatter, gather_page, scatter_page) is looked up as ptg_op_fallback(op),
 * reported as fallback 3 at least.
 * The returned latency is the row's; recip_throughput is multiplied by split. */
typedef struct {
  double latency;
  double recip_throughput;
  const char *unit;
  int split;           /* instructions the operation becomes on this target */
  int fallback;        /* 1..4: which rule above found it */
  const ptg_inst *row; /* NULL for the built-in default */
} ptg_inst_cost;
ptg_inst_cost ptg_target_inst(const ptg_target *t, ptg_op op, ptg_elem elem, int vector_bits);

/* Exact row or NULL. */
const ptg_inst *ptg_target_find_inst(const ptg_target *t, ptg_op op, ptg_elem elem, int vector_bits);

/* Caches: count, one level (1-based; NULL if absent), the last level. */
int ptg_target_cache_levels(const ptg_target *t);
const ptg_cache *ptg_target_cache(const ptg_target *t, int level);
const ptg_cache *ptg_target_llc(const ptg_target *t);
/* Fork/join and barrier cost for n threads: the closest measured thread count not above n
 * (scaled linearly beyond the largest); NaN if no runtime entries. */
double ptg_target_fork_join_ns(const ptg_target *t, int threads);
double ptg_target_barrier_ns(const ptg_target *t, int threads);
/* The strided walk measured with this stride and page size; NULL when there is none. */
const ptg_strided_walk *ptg_target_strided_walk(const ptg_target *t, int64_t stride_bytes, int64_t page_bytes);
/* L1 misses in flight when they fall in `sets` of L1's sets: the set walk measured with that
 * many sets, else interpolated in log(sets) between the nearest two (the nearest one beyond
 * them); NaN when L1 has no set walks. */
double ptg_target_set_inflight(const ptg_target *t, double sets);
/* ns per access of a read-modify-write walk whose lines fall in `sets` of L1's sets (set_walks'
 * rmw_ns_per_access), interpolated as ptg_target_set_inflight; NaN when none was measured. */
double ptg_target_set_rmw_ns(const ptg_target *t, double sets);
/* ns per access of a load walk whose lines fall in `sets` of L1's sets (set_walks' ns_per_access),
 * interpolated as ptg_target_set_inflight; NaN when L1 has no set walks. */
double ptg_target_set_ns(const ptg_target *t, double sets);
/* How much slower a set walk whose lines fall in `sets` of L1's sets is when `loads` load
 * instructions read it at once than when one does (set_loads): at each measured set count, the
 * ns per access at `loads` (linear in log2(loads) between the measured counts, the nearest
 * beyond them) over that at one load; between set counts linear in log(sets), the nearest
 * beyond them as set_walks. 1 when none was measured. */
double ptg_target_set_loads_ratio(const ptg_target *t, double sets, double loads);
/* ns per access of `streams` sequential streams in one L1 set position, `rmw` of them stored back
 * (set_streams): linear between the measured stream counts (the nearest beyond them) and, at
 * each, between the measured read-modify-write shares; NaN when none was measured. */
double ptg_target_set_stream_ns(const ptg_target *t, double streams, double rmw);
/* Bandwidth (GB/s) of a cache level (0 = memory) with n threads, for one kind. */
typedef enum { PTG_BW_READ, PTG_BW_WRITE, PTG_BW_COPY, PTG_BW_TRIAD } ptg_bw_kind;
double ptg_target_bandwidth(const ptg_target *t, int level, int threads, ptg_bw_kind kind);
/* The share of one core's throughput that each of n busy threads keeps: L1's bandwidth per
 * thread with n threads (the row of ptg_target_bandwidth) over its bandwidth with one, the
 * geometric mean of the kernels both rows measured, at most 1. L1 is private to a core, so
 * only what a core loses when all are busy (its clock, a sibling hardware thread, the
 * hypervisor's share) lowers it. 1 for n <= 1 or without both rows. */
double ptg_target_core_share(const ptg_target *t, int threads);
/* LLVM's -mcpu name of the target's x86-64 microarchitecture ("znver4", "skylake-avx512"), for
 * llvm-mca and code generation as that machine; NULL for one LLVM's x86 backend does not model
 * (an Arm core, an unknown name). */
const char *ptg_target_llvm_cpu(const ptg_target *t);
/* Architectural vector registers of the widest width (an ISA fact, not measured): x86-64 with
 * AVX-512F 32 (zmm0-31), x86-64 without it 16 (ymm0-15), aarch64 32 (v0-31), otherwise 16. */
int ptg_target_vector_registers(const ptg_target *t);


/* Readable table of one target / two side by side; the diff flags figures whose relative
 * difference exceeds tolerance (0.05 = 5%). */
void ptg_target_print(FILE *f, const ptg_target *t);
void ptg_target_print_diff(FILE *f, const ptg_target *a, const ptg_target *b, double tolerance);
/* (b - a) / |a|; NaN when either is unknown. */
double ptg_rel_diff(double a, double b);
/* The folder of the shipped target files (the source tree's targets/). */
const char *ptg_shipped_dir(void);

#endif
