/* analyzer/: hardware-independent program profiles from any LLVM module.
 * Data flow: .ll/.bc or an LLVMModuleRef -> pa_module -> static analysis (CFG, dominators,
 * loops, task graphs, features) + one instrumented run (block counts, reuse) -> pa_profile. */
#ifndef PORTENT_ANALYZER_H
#define PORTENT_ANALYZER_H

#include <stdbool.h>
#include <stdint.h>

#include <llvm-c/Types.h>

#include "common.h"

#define PA_PROFILE_VERSION 1
#define PA_LINE_BYTES 64  /* reuse is measured at cache-line granularity */
#define PA_REUSE_BINS 48  /* bin 0: distance 0; bin k >= 1: 2^(k-1) <= d < 2^k */
/* Per-set reuse for caches of PA_SETS sets of PA_LINE_BYTES lines (every x86 L1D in targets/:
 * 32K 8-way, 48K 12-way, 16K 4-way): distances 0..PA_SET_EXACT-1 one bin each, then one bin
 * for PA_SET_EXACT or more (no such cache has more ways). */
#define PA_SETS 64
#define PA_SET_EXACT 32
#define PA_SET_BINS (PA_SET_EXACT + 1)
/* Per-set reuse for larger set counts on request (pa_options.llc_sets, `analyze --llc-sets`): a
 * last-level cache's sets, e.g. 1024 for 1 MiB 16-way; the same bins as the PA_SETS ones, each
 * set's PA_SET_EXACT most recent lines tracked. At most PA_LLC_COUNTS set counts per profile,
 * each a power of two in PA_LLC_SETS_MIN..PA_LLC_SETS_MAX. */
#define PA_LLC_COUNTS 4
#define PA_LLC_SETS_MIN 128
#define PA_LLC_SETS_MAX 32768
#define PA_MAX_THREADS 64 /* distinct threads one run may use */

/* Operation classes: the same names the target descriptions key their instruction tables by. */
#define PA_OPCLASSES(X)                                                                      \
  X(ADD, "add") X(SUB, "sub") X(MUL, "mul") X(FMA, "fma") X(DIV, "div") X(SQRT, "sqrt")      \
  X(MINMAX, "minmax") X(CMPSEL, "cmpsel") X(LOGIC, "logic") X(SHIFT, "shift")               \
  X(CONVERT, "convert") X(SHUFFLE, "shuffle") X(LOAD, "load") X(STORE, "store")             \
  X(GATHER, "gather") X(OTHER, "other")

typedef enum {
#define X(name, text) PA_OP_##name,
  PA_OPCLASSES(X)
#undef X
  PA_OP_COUNT
} pa_opclass;

const char *pa_opclass_name(pa_opclass op);
int pa_opclass_from_name(const char *name); /* -1 if unknown */

typedef enum { PA_EDGE_DATA, PA_EDGE_MEMORY, PA_EDGE_LOOP_CARRIED } pa_edge_kind;
const char *pa_edge_kind_name(pa_edge_kind k);

/* One instruction of a block's task graph. */
typedef struct {
  pa_opclass op;
  const char *opcode; /* LLVM opcode ("fadd", "phi") or the callee for calls ("llvm.fmuladd.f32") */
  const char *elem;   /* element type: "i1" "i8" "i16" "i32" "i64" "f16" "bf16" "f32" "f64" "ptr" "void" */
  int lanes;          /* vector lanes as written in the IR; 1 for scalars */
  int bits;           /* lanes x element bits (0 for void) */
  bool is_memory;     /* load, store, gather/scatter, memory intrinsics */
  int bytes;          /* bytes moved by a memory node; 0 otherwise */
  bool masked;        /* llvm.masked.{load,store,gather,scatter}: only the mask's lanes move */
  int mask;           /* masked: the node of this block computing the mask (its data edge is
                         the mask operand's), -1 when the mask is a constant or from another block */
  int mask_lanes;     /* masked: active lanes of a constant mask, -1 when not constant */
  /* Loads and stores (masked ones too) inside loops: bytes the address moves per iteration of
   * each enclosing loop, innermost first (n_strides = the block's loop depth); an entry is
   * PA_STRIDE_UNKNOWN where the address is not affine in that loop's induction variables.
   * Static (analyzer/access.c); n_strides 0 elsewhere and in profiles written before it. */
  int n_strides;
  int64_t *strides;
  /* Loads and stores with strides whose address wraps in some loop (a fused or parallel loop's
   * index split by udiv, urem, lshr or a mask: `strides` is then the step between wraps): per
   * enclosing loop, as `strides`, the iterations after which every wrapping term is back where
   * it was (0: the address does not wrap in that loop, or its stride is unknown; a loop where it
   * wraps at a period not followed has an unknown stride) and the bytes the address moves over
   * that many iterations (period_strides; 0 where the lines come back). NULL when no loop wraps,
   * and in profiles written before them. */
  int64_t *periods;
  int64_t *period_strides;
  /* Memory nodes with strides: 1 + the index, in its function, of the object the address is
   * based on (a function argument, a global, or a pointer computed outside every loop, reached
   * through getelementptrs, casts and induction phis); 0 when unknown (and in older profiles).
   * Two accesses of different objects sit at unrelated addresses (separate allocations). */
  int array;
  /* Memory nodes with an array: the address's byte offset at the first iteration of every
   * enclosing loop, relative to the other accesses of the same object in the function (the
   * object's address plus terms common to them: a parallel body's chunk start); has_offset
   * false when not known (a part not followed, other terms, older profiles). Accesses of one
   * object with equal strides and offsets a row apart are separate walks (an unrolled loop). */
  bool has_offset;
  int64_t offset;
  /* Gathers and scatters: bytes from one lane's address to the next when the IR fixes it (the
   * getelementptr's constant offset vector, analyzer/lanes.c); 0 when not known (a step of 0
   * too) and in profiles written before it. */
  int64_t lane_step;
} pa_node;
#define PA_STRIDE_UNKNOWN INT64_MIN

/* src -> dst: dst depends on src. Data and memory edges go forward in the block; a
 * loop-carried edge goes from the value a header phi receives on the back edge (defined
 * later in the same block) to that phi, i.e. to the next iteration. */
typedef struct {
  int src, dst;
  pa_edge_kind kind;
} pa_edge;

/* Static features of a block, function or program (sums over instructions). */
typedef struct {
  int64_t instructions;      /* phi nodes excluded */
  int64_t by_op[PA_OP_COUNT];
  int64_t loads, stores, load_bytes, store_bytes;
  int64_t vector_instructions; /* lanes > 1 */
} pa_features;

typedef struct {
  const char *name; /* the IR label, or "%N" for unnamed blocks */
  int n_preds, n_succs;
  int *preds, *succs; /* block indices in this function */
  int idom;           /* immediate dominator; -1 for the entry and unreachable blocks */
  int loop;           /* innermost loop containing the block; -1 if none */
  uint64_t count;     /* executions over the run (all calls) */
  double count_per_call; /* count / calls of the function; 0 if never called */
  /* Executions per call derived from static trip counts without running; -1 when the
   * function has a branch that is not the exit test of a loop with a static trip count. */
  double static_count_per_call;
  int n_nodes, n_edges;
  pa_node *nodes;
  pa_edge *edges;
  pa_features features;
} pa_block;

/* A recurrence through several blocks of a loop: node src_node of block src_block computes
 * the value the header phi (phi_node of phi_block) receives on a back edge, and node dst_node
 * of dst_block uses that phi, i.e. src's result of the previous iteration. distance: CFG
 * edges on the shortest path from src_block through the back edge to dst_block (>= 1). */
typedef struct {
  int src_block, src_node, phi_block, phi_node, dst_block, dst_node, distance;
} pa_carried_edge;

typedef struct {
  int header;
  int parent; /* enclosing loop index, -1 for outermost */
  int depth;  /* 1 for outermost */
  int preheader; /* unique predecessor of the header outside the loop, or -1 */
  int n_blocks;
  int *blocks;
  int n_latches;
  int *latches;
  /* Executions of the header per entry into the loop, when the canonical induction pattern
   * with constant start, step and bound is recognised; -1 otherwise. A rotated loop
   * (test at the bottom) of N iterations has trip_count N; a top-tested one N + 1. */
  int64_t trip_count;
} pa_loop;

typedef struct {
  const char *name;
  uint64_t calls;   /* count(F): executions of the entry block */
  bool parallel;    /* ran on more than one thread */
  int threads;      /* distinct threads that ran it (0 if never called) */
  int n_blocks, n_loops;
  pa_block *blocks;
  pa_loop *loops;
  pa_features features;
  int n_carried;
  pa_carried_edge *carried; /* loop-carried edges between blocks (same-block ones are block edges) */
  /* A parallel body's iterations (the n of pt_parallel_for) and the work, in IR nodes
   * executed, of each of n_chunk_work equal contiguous parts of them in order (the pool's
   * partition of n over min(n, PA_CHUNK_PARTS) threads), summed over its calls; static, from
   * the loop nest (pa_profile_chunk_work). 0 parts when unknown. Shows how the work falls on
   * a target's threads, e.g. a guard that passes only the first iterations. */
  int64_t chunk_iterations;
  int n_chunk_work;
  double *chunk_work;
} pa_function;

#define PA_CHUNK_PARTS 64

/* Reuse (LRU stack) distances in lines since the previous access to the same line. */
typedef struct {
  /* Accesses per log2 bin. Exact at rate 1; when sampling, below the exact window the
   * shares measured on bursts of every access, beyond it SHARDS estimates (pa_tracker_hist). */
  double bins[PA_REUSE_BINS];
  double cold;                /* first touches of a line */
  double accesses;            /* sum of bins and cold */
  /* Optional (absent from profiles written before session 10; has_* false then): */
  /* bins[k] split into the linear quarters of its range, [lo + q x lo/4, lo + (q+1) x lo/4)
   * for lo = 2^(k-1), so caches of 1.25, 1.5 and 1.75 x 2^n lines (48 KiB = 768 lines) fall
   * on a boundary; the four sum to bins[k]. */
  bool has_quarters;
  double quarters[PA_REUSE_BINS][4];
  /* Per-set distances for PA_SETS sets (address bits 6-11): distinct lines of the access's own
   * set touched since its line's last access (bins: pa_set_bin). An A-way LRU cache of
   * PA_SETS sets misses exactly cold + the accesses at per-set distance >= A. Sums to
   * accesses - cold. */
  bool has_sets;
  double sets[PA_SET_BINS];
  /* Per-set distances for the n_llc larger set counts the profile was asked for
   * (pa_options.llc_sets; 0 when none, and in profiles written before session 24): llc[i]'s
   * bins as `sets`, for a cache of llc[i].sets sets (address bits 6 and up). */
  int n_llc;
  struct {
    int sets;
    double bins[PA_SET_BINS];
  } llc[PA_LLC_COUNTS];
} pa_reuse_hist;

typedef struct {
  int function; /* index in the profile's functions */
  int thread;   /* 0.. in a canonical order (by histogram), not an OS id */
  pa_reuse_hist hist;
} pa_reuse_entry;

typedef struct pa_profile {
  pt_arena *arena;
  int version;
  const char *module_id;     /* FNV-1a 64 of the module's IR text, hex */
  const char *source;        /* file name or "<memory>" */
  const char *counts_source; /* "instrumented", "static" (counted without running) or "none" */
  const char *entry;         /* function that was run, or NULL */
  uint64_t seed;
  double sample_rate;        /* 1 = every line; SHARDS rate otherwise; 0 = not measured */
  int64_t exact_window;      /* lines tracked exactly under sampling; 0 at rate 1 or plain SHARDS */
  double trace_share;        /* 0: reuse from a run; > 0: traced without running (pa_profile_traced),
                                this share of each parallel body's iterations (1 = all: exact) */
  bool line_filter;          /* reuse from a run with pa_options.line_filter */
  int64_t locals_lines;      /* sampled: lines of each thread's moved locals tracked at rate 1, weight 1 */
  double window_share;       /* > 0: a windowed run (pa_options.windowed) measured this share of
                                the gated block executions (the requested share; runs too
                                short for windows measure all of them) */
  int threads;               /* distinct threads seen in the run */
  int n_functions;
  pa_function *functions;
  pa_features features;      /* static, whole module */
  double dynamic_by_op[PA_OP_COUNT]; /* sum over blocks of count x instructions of each class */
  int n_reuse;
  pa_reuse_entry *reuse;     /* per function and thread */
  pa_reuse_hist *reuse_by_function; /* merged over threads, n_functions entries */
  pa_reuse_hist reuse_total;        /* merged over functions and threads */
  double run_seconds;        /* wall time of the instrumented run (not part of the file) */
  int addresses_removed;     /* pa_options.addresses_only: instructions the run left out (0: the
                                whole module ran; not part of the file) */
  const char *addresses_whole; /* addresses_only asked and not applied: why (else NULL) */
} pa_profile;

/* ------------------------------------------------------------------ modules */
typedef struct pa_module pa_module;

/* Loads .ll text or .bc bitcode (by content). Parser errors keep LLVM's own
 * "file:line:col: error: ..." message. */
pa_module *pa_module_load(const char *path, pt_diag *d);
/* Wraps a caller's module; the caller keeps ownership (it is only read and cloned). */
pa_module *pa_module_from_llvm(LLVMModuleRef m);
LLVMModuleRef pa_module_llvm(const pa_module *m);
void pa_module_free(pa_module *m);

/* --------------------------------------------------------------- run specs */
typedef enum {
  PA_ARG_BUFFER,       /* pointer to count elements of type */
  PA_ARG_BUFFER_ARRAY, /* pointer to an array of pointers, one buffer per counts[i] */
  PA_ARG_SCALAR,       /* integer or float value of type */
  PA_ARG_POOL,         /* a pt_pool of `threads` threads (portent's kernels) */
  PA_ARG_NULL,
} pa_arg_kind;

typedef enum { PA_T_I8, PA_T_I16, PA_T_I32, PA_T_I64, PA_T_F32, PA_T_F64 } pa_scalar_type;

typedef struct {
  pa_arg_kind kind;
  pa_scalar_type type;
  int64_t count;   /* PA_ARG_BUFFER */
  int n_counts;    /* PA_ARG_BUFFER_ARRAY */
  int64_t *counts;
  double value;    /* PA_ARG_SCALAR (integers exactly up to 2^53) */
  int threads;     /* PA_ARG_POOL */
} pa_arg;

typedef struct pa_run_spec {
  pt_arena *arena;
  const char *entry;
  int n_args;
  pa_arg *args;
  uint64_t seed;
  double timeout_s;
} pa_run_spec;

/* Parses a run-spec JSON file (docs/formats.md, "Run spec"); errors name the JSON path. */
pa_run_spec *pa_run_spec_load(const char *path, pt_diag *d);
pa_run_spec *pa_run_spec_parse(const char *json, const char *name, pt_diag *d);
/* The spec for portent's own kernels, `void kernel(float **buffers, void *pool)`. */
pa_run_spec *pa_run_spec_portent(const char *entry, int n_buffers, const int64_t *floats_per_buffer,
                                 int threads, uint64_t seed);
void pa_run_spec_free(pa_run_spec *s);

/* ------------------------------------------------------------------ profiles */
/* Time sampling of the reuse: pa_profile_traced's parallel bodies and windowed runs. */
typedef struct {
  double share;       /* 0 -> 0.05; >= 1: every iteration (exact) */
  int windows;        /* 0 -> 4 */
  int64_t warm_lines; /* 0 -> 2^17 (8 MiB) */
} pa_trace_opts;
typedef struct {
  double sample_rate; /* 0 -> 1 (every line); SHARDS spatial sampling when < 1 */
  bool no_reuse;      /* block counts only (faster) */
  /* Sampling only: the exact LRU window (lines) that bursts of every access go through, so
   * distances below it are measured exactly on those bursts (2-4% of the accesses);
   * 0 = the power of two >= max(64, 16/rate); -1 = none, plain SHARDS. */
  int64_t exact_window;
  /* Functions whose every block has a static count (static_count_per_call >= 0) get no block
   * counters: their counts are the calls, counted at the entry block, times the static ones. */
  bool static_counts;
  /* Time windows (rate 1, one thread, functions with static counts): the compiled kernel runs
   * natively except in `windows.windows` windows of `windows.share` of its gated block
   * executions (blocks with memory accesses), each after a warm-up touching about
   * `windows.warm_lines` lines, whose exact histograms are scaled to the whole run as
   * pa_profile_traced scales a parallel body's windows. */
  bool windowed;
  pa_trace_opts windows;
  /* Per-reference line filter (not with `windowed`): a one-line load or store in an innermost
   * loop whose address moves 1..63 bytes per iteration (static strides) reaches the tracker
   * only when its line differs from the one it touched in the previous iteration; the repeats
   * are counted inline as reuses at the loop body's line count (a bound on their distance,
   * <= 64 lines), and only the line-crossing accesses go through SHARDS' test and the tracker.
   * docs/design.md ("Line filter") says what this approximates. */
  bool line_filter;
  /* Sampled runs test each block's lines inline and call the runtime only when one may be
   * sampled, except in cold blocks (at most 1/256 as many executions as their function's
   * busiest, by static trip counts), which call it every time: the profile is the same and the
   * compile shorter. true: inline tests in every block (as before session 17). */
  bool inline_cold_blocks;
  /* Block counters of innermost loops' blocks that run once per iteration are added at the
   * loop's exits from its iterations (the same counts). true: loaded, added and stored on every
   * iteration (as before session 18). */
  bool counters_in_memory;
  /* Sampling: the moved static locals' lines are tracked at rate 1, weight 1, beside the sample
   * (locals.c, reuse.c; their hot lines set the estimate's error, at the price of their accesses
   * through the tracker). true: they are sampled by their hash like any line (as before session 19). */
  bool sample_locals;
  /* Per-set reuse for these set counts besides the PA_SETS one (n_llc_sets of them, each a power
   * of two in PA_LLC_SETS_MIN..PA_LLC_SETS_MAX, distinct): pa_reuse_hist.llc. Runs at rate 1
   * only (full or windowed; a sampled run's bursts hold too few lines per set of a large cache),
   * else pa_profile_build fails with PT_ERR_INPUT. Each set count costs its per-set stacks
   * (about 400 bytes a set, per thread) and one more stack access per line access. */
  int n_llc_sets;
  int llc_sets[PA_LLC_COUNTS];
  /* The run computes addresses, branches and calls only: floating-point loads and stores and the
   * arithmetic between them are left out of the instrumented module (analyzer/skeleton.c), where
   * no address or branch depends on a value loaded from memory they could have written. The
   * profile is the same; the run touches no argument buffer and compiles faster, but a kernel's
   * out-of-bounds access or floating-point trap is no longer seen. Where it does not apply the
   * whole module runs (pa_profile.addresses_removed 0). */
  bool addresses_only;
} pa_options;

/* Static analysis only (no run): CFG, loops, task graphs, features; counts are zero. */
pa_profile *pa_profile_static(const pa_module *m, pt_diag *d);

typedef struct {
  const char *entry; /* the function run once; NULL = the first externally visible one */
  int threads;       /* pt_pool threads the parallel bodies are divided over (0 -> 1) */
} pa_static_opts;
/* Static analysis plus every block's count without running, in the form an instrumented run
 * gives (count(F), count per call, threads, parallel; counts_source "static"): the entry runs
 * once, calls and pt_parallel_for pass their executions on, and each parallel body (named in
 * !portent.parallel) runs once per non-empty chunk of the pool's static partition, so the
 * counts per call are the average over chunks. Branches may depend on loop indices, chunk
 * bounds and constants (guards of non-dividing splits included), not on memory. NULL with
 * PT_ERR_UNSUPPORTED naming the function and block otherwise: run it instrumented instead. */
pa_profile *pa_profile_static_counts(const pa_module *m, const pa_static_opts *o, pt_diag *d);
/* Fills each parallel body's chunk_work (above) from the loop nest, running the body once per
 * part on that part's bounds, with p's block counts (static or instrumented) for how often the
 * pt_parallel_for calls run; a body whose parts cannot be counted statically, or that is
 * called with different iteration counts, keeps none. p must describe m's code. */
void pa_profile_chunk_work(const pa_module *m, pa_profile *p);
/* The busiest thread's share of f's work when the pool divides its iterations over `threads`
 * (common/pool.c's contiguous chunks), from chunk_work; negative when f has none. */
double pa_chunk_share(const pa_function *f, int threads);
/* Reuse without running (analyzer/trace.c): the addresses of every load and store are
 * interpreted from the integer values they depend on; each pt_parallel_for body runs
 * `windows` windows of `share` of its iterations in all, each after a warm-up of the iterations
 * before it long enough to touch about warm_lines lines, scaled to the whole range. */
/* pa_profile_static_counts plus that reuse profile (one thread; sample_rate 1). NULL with
 * PT_ERR_UNSUPPORTED naming the instruction when an address depends on memory (other than a
 * pointer loaded from memory), a gather or a call: run it (sampled) instead. */
pa_profile *pa_profile_traced(const pa_module *m, const pa_static_opts *so, const pa_trace_opts *o, pt_diag *d);
/* Static analysis plus one instrumented run of spec->entry in a child process. */
pa_profile *pa_profile_build(const pa_module *m, const pa_run_spec *spec, const pa_options *opt,
                             pt_diag *d);
/* The same for a module the caller owns, e.g. a lowered portent kernel with
 * pa_run_spec_portent(): pa_profile_llvm(mod, spec, NULL, &d). */
pa_profile *pa_profile_llvm(LLVMModuleRef mod, const pa_run_spec *spec, const pa_options *opt, pt_diag *d);
int pa_profile_save(const pa_profile *p, const char *path, pt_diag *d);
char *pa_profile_to_json(const pa_profile *p); /* caller frees */
pa_profile *pa_profile_load(const char *path, pt_diag *d);
pa_profile *pa_profile_parse(const char *json, const char *name, pt_diag *d); /* name: for messages */
void pa_profile_free(pa_profile *p);

/* Typed accessors (the structs above may also be read directly). */
const pa_function *pa_profile_function(const pa_profile *p, const char *name);
/* ECount(BB) of the patent's formula: count per call x calls, divided over the threads
 * when the function ran in parallel. */
double pa_block_ecount(const pa_function *f, const pa_block *b);
/* Misses of a fully associative LRU cache of `lines` lines: accesses at distance >= lines
 * plus cold misses (exact when lines is a power of two). */
double pa_reuse_misses(const pa_reuse_hist *h, int64_t lines);
/* The same for any size: where `lines` falls inside a bin, the bin's (or, with quarters, the
 * quarter's) distances are taken as spread evenly over it. */
double pa_reuse_misses_at(const pa_reuse_hist *h, double lines);
/* Misses of a `ways`-way LRU cache of PA_SETS sets: cold + per-set distances >= ways (exact);
 * -1 when h has no per-set bins or ways > PA_SET_EXACT. */
double pa_reuse_misses_sets(const pa_reuse_hist *h, int ways);
int pa_set_bin(int64_t set_distance); /* the per-set bin of a distance */
/* Misses of a `ways`-way LRU cache of `sets` sets from h's llc bins: cold + per-set distances >=
 * ways (exact); -1 when h has no bins for that set count or ways > PA_SET_EXACT. */
double pa_reuse_misses_llc(const pa_reuse_hist *h, int sets, int ways);
/* NULL when n set counts are valid for pa_options.llc_sets (above), else why not. */
const char *pa_llc_sets_invalid(int n, const int *sets);
/* sum += x, the optional parts kept only when both have them (or sum is still empty). */
void pa_reuse_hist_add(pa_reuse_hist *sum, const pa_reuse_hist *x);
/* Largest |difference| of the miss ratios (misses / accesses) of two histograms over fully
 * associative LRU caches of lo, 2lo, 4lo, ... <= hi lines (the miss-ratio curves' distance). */
double pa_reuse_mrc_distance(const pa_reuse_hist *a, const pa_reuse_hist *b, int64_t lo, int64_t hi);

#endif
