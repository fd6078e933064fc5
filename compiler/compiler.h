/* compiler/: tensor expressions, the workload library, schedule states and Ansor's transform
 * steps, records, lowering to target-neutral LLVM IR, JIT and isolated measurement.
 * Data flow: workload -> pc_program (DAG) -> pc_state (steps applied) -> LLVM module -> run. */
#ifndef PORTENT_COMPILER_H
#define PORTENT_COMPILER_H

#include <stdbool.h>
#include <stdint.h>

#include "common.h"

/* ---------------------------------------------------------------- expressions */

#define PC_MAX_DIMS 8
#define PC_MAX_AXES 16 /* spatial + reduce axes of one compute op */
#define PC_NAME_LEN 32

/* Expression node kinds: one table, expanded wherever kinds are listed. */
#define PC_EXPR_KINDS(X)                                                                    \
  X(CONST_F, "constf", 0) X(CONST_I, "consti", 0) X(AXIS, "axis", 0) X(LOAD, "load", 0)     \
  X(ADD, "+", 2) X(SUB, "-", 2) X(MUL, "*", 2) X(DIV, "/", 2) X(MOD, "%", 2)                \
  X(MAX, "max", 2) X(MIN, "min", 2) X(EXP, "exp", 1) X(SQRT, "sqrt", 1) X(NEG, "neg", 1)    \
  X(LT, "<", 2) X(LE, "<=", 2) X(GT, ">", 2) X(GE, ">=", 2) X(EQ, "==", 2) X(NE, "!=", 2)   \
  X(AND, "&&", 2) X(OR, "||", 2) X(SELECT, "select", 3) X(CAST_F, "float", 1)

typedef enum {
#define X(name, text, arity) PC_E_##name,
  PC_EXPR_KINDS(X)
#undef X
  PC_E_COUNT
} pc_expr_kind;

/* Integer expressions (indices, conditions) are i64; value expressions are f32. */
typedef struct pc_expr {
  pc_expr_kind kind;
  bool is_int;
  double fval;
  int64_t ival;
  int axis;   /* PC_E_AXIS: index into the op's axes (spatial first, then reduce) */
  int tensor; /* PC_E_LOAD: op index in the program */
  int n_args;
  struct pc_expr *args[PC_MAX_DIMS]; /* operands, or the indices of a load */
} pc_expr;

typedef enum { PC_REDUCE_NONE, PC_REDUCE_SUM, PC_REDUCE_MAX } pc_reduce_kind;

/* One op of the DAG: a placeholder (input) or a compute stage over its axes. */
typedef struct pc_op {
  char name[PC_NAME_LEN];
  bool is_placeholder;
  int ndim;
  int64_t shape[PC_MAX_DIMS];
  int n_reduce;
  int64_t reduce_extent[PC_MAX_DIMS];
  char axis_name[PC_MAX_AXES][PC_NAME_LEN];
  pc_reduce_kind reduce;
  pc_expr *body;       /* value at a point, or the reduced operand */
  bool is_output;      /* written by the kernel and checked against the reference */
  int n_inputs;        /* ops read by body, in first-appearance order (TVM's InputTensors) */
  int inputs[PC_MAX_DIMS * 2];
} pc_op;

/* A compute DAG. Ops are kept in TVM's ComputeDAG topological order so stage ids in
 * records written by Ansor mean the same stage here. */
typedef struct pc_program {
  pt_arena *arena;
  char name[64];
  char key[256]; /* TVM workload key, e.g. ["matmul_add", 1024, 1024, 1024, "float32"] */
  int n_ops;
  pc_op *ops;
  double flops; /* floating point operations of one run, for GFLOP/s */
} pc_program;

/* Builder: ops are added in any order, then pc_program_finish sorts them. */
typedef struct pc_builder pc_builder;
pc_builder *pc_builder_new(const char *name);
int pc_placeholder(pc_builder *b, const char *name, int ndim, const int64_t *shape);
/* Declares a compute op; its axes are named by `axis_names` (spatial then reduce). The
 * body is built after with the returned op id, then set with pc_set_body. */
int pc_compute(pc_builder *b, const char *name, int ndim, const int64_t *shape, int n_reduce,
               const int64_t *reduce_extent, const char *const *axis_names, pc_reduce_kind reduce);
void pc_set_body(pc_builder *b, int op, pc_expr *body);
pc_expr *pc_const_f(pc_builder *b, double v);
pc_expr *pc_const_i(pc_builder *b, int64_t v);
pc_expr *pc_axis(pc_builder *b, int axis);
pc_expr *pc_load(pc_builder *b, int tensor, int n, pc_expr *const *idx);
pc_expr *pc_un(pc_builder *b, pc_expr_kind k, pc_expr *a);
pc_expr *pc_bin(pc_builder *b, pc_expr_kind k, pc_expr *a, pc_expr *c);
pc_expr *pc_select(pc_builder *b, pc_expr *cond, pc_expr *t, pc_expr *f);
/* `args` lists the workload's tensors in its signature order (inputs then outputs), as
 * TVM's compute_dag receives them; this order seeds the topological sort. */
pc_program *pc_builder_finish(pc_builder *b, int n_args, const int *args, double flops, pt_diag *d);
void pc_builder_free(pc_builder *b); /* only when finish was not reached */
void pc_program_free(pc_program *p);

int64_t pc_op_numel(const pc_op *op);
int pc_program_find(const pc_program *p, const char *name);
void pc_program_print(const pc_program *p, char *buf, size_t cap);

/* ---------------------------------------------------------------- workloads */

typedef struct pc_workload_info {
  const char *name;   /* function name in keys: "matmul", "conv2d_nchw", ... */
  const char *params; /* human-readable parameter list */
  const char *help;
} pc_workload_info;

int pc_workload_count(void);
const pc_workload_info *pc_workload_at(int i);
int pc_suite_count(void);
const char *pc_suite_name(int i);
const char *pc_suite_key(int i);
/* Builds a workload from a suite name (mm512), a TVM key JSON, or "name:p1,p2,...". */
pc_program *pc_workload_build(const char *spec, pt_diag *d);
/* Networks as TenSet-style weighted task lists (networks.c, docs/networks.md): each task one
 * library operator at batch 1, its weight the number of times it occurs in the network. */
typedef struct pc_network_task {
  char spec[160]; /* "op:p1,p2,..." as pc_workload_build takes it */
  char key[256];  /* the TVM workload key records carry */
  char op[32];
  int weight;
  double flops; /* one occurrence */
} pc_network_task;

typedef struct pc_network {
  char name[32];
  bool test; /* held out of training (TLP's test networks) */
  const char *source;
  int n_tasks, cap;
  pc_network_task *tasks;
} pc_network;

int pc_network_count(void);
const char *pc_network_name(int i);
pc_network *pc_network_build(const char *name, pt_diag *d);
double pc_network_flops(const pc_network *net); /* sum of weight x flops */
/* Union of the tasks of comma-separated networks (or "test", "training", "all"), each once with
 * its weights summed; returns the count (*out malloc'd) or a negative error. */
int pc_networks_tasks(const char *list, pc_network_task **out, pt_diag *d);
void pc_network_free(pc_network *net);

/* Parses the user expression syntax (docs/expressions.md); errors carry line:col. */
pc_program *pc_expr_parse(const char *text, const char *filename, pt_diag *d);

/* ---------------------------------------------------------------- schedule state */

#define PC_MAX_NODES 64
#define PC_MAX_LEAVES 32
#define PC_MAX_STAGES 32
#define PC_MAX_STEPS 256

typedef enum { PC_ITER_SPATIAL, PC_ITER_REDUCE, PC_ITER_MIXED } pc_iter_kind;
/* Annotation codes are TVM's IteratorAnnotation values, as records store them. */
typedef enum {
  PC_ANN_NONE = 0, PC_ANN_UNROLL = 1, PC_ANN_VECTORIZE = 2, PC_ANN_PARALLEL = 3,
  PC_ANN_VTHREAD = 4, PC_ANN_GPU_FIRST = 5, PC_ANN_TENSORIZE = 11
} pc_annotation;
typedef enum { PC_AT_ROOT, PC_AT_INLINE, PC_AT_ITER } pc_compute_at;
typedef enum { PC_REL_ROOT, PC_REL_SPLIT, PC_REL_FUSE } pc_iter_rel;

/* An iterator node; nodes are never removed, so relations stay valid across steps. */
typedef struct pc_iter {
  char name[PC_NAME_LEN];
  int64_t extent;
  pc_iter_kind kind;
  int annotation;
  pc_iter_rel rel;
  int root_axis;       /* PC_REL_ROOT: axis of the op */
  int split_parent;    /* PC_REL_SPLIT: node split to make this one */
  int64_t factor;      /* PC_REL_SPLIT: fixed extent of a non-outermost child, 0 for outermost */
  int n_children;      /* > 0 when split: children outer to inner */
  int children[PC_MAX_DIMS];
  int n_fused;         /* PC_REL_FUSE: parents outer to inner */
  int fused[PC_MAX_DIMS];
  int fused_into;      /* -1 unless fused into another node */
} pc_iter;

typedef struct pc_stage {
  int op;               /* op index in the state's program */
  pc_compute_at at;
  int attach_stage, attach_node; /* PC_AT_ITER: target stage and its iterator node */
  int auto_unroll_max_step;
  int storage_align_factor, storage_align_offset, storage_align_dim;
  int n_nodes;
  pc_iter nodes[PC_MAX_NODES];
  int n_leaves;
  int leaves[PC_MAX_LEAVES]; /* current loop order, outer to inner, as node indices */
} pc_stage;
/* Recomputes a stage's node extents top-down from its root extents: a fixed split factor
 * keeps its extent, the one free child of a split gets ceil(parent / product of the others),
 * a fused node the product of its parts. */
void pc_stage_propagate_extents(pc_stage *st);
/* Extents of an attached stage computing `region` (its first n_axes root axes), splits
 * tightened to it as TVM's PassDownDomain does. */
void pc_stage_bound_region(pc_stage *st, int n_axes, const int64_t *region);

/* Transform steps: record code, then name. */
#define PC_STEP_KINDS(X)                                                                    \
  X(AN, "AN", annotate) X(FU, "FU", fuse) X(PR, "PR", pragma) X(RE, "RE", reorder)          \
  X(SP, "SP", split) X(FSP, "FSP", follow_split) X(FFSP, "FFSP", follow_fused_split)        \
  X(SA, "SA", storage_align) X(CA, "CA", compute_at) X(CI, "CI", compute_inline)            \
  X(CR, "CR", compute_root) X(CHR, "CHR", cache_read) X(CHW, "CHW", cache_write)            \
  X(RF, "RF", rfactor)

typedef enum {
#define X(code, text, name) PC_STEP_##code,
  PC_STEP_KINDS(X)
#undef X
  PC_STEP_COUNT
} pc_step_kind;

const char *pc_step_code(pc_step_kind k);
int pc_step_kind_from_code(const char *code); /* -1 if unknown */

typedef struct pc_step {
  pc_step_kind kind;
  int stage_id;
  int iter_id;           /* AN PR SP FSP FFSP SA RF */
  int64_t extent;        /* SP: as recorded (0 = unknown) */
  int n_lengths;         /* SP: tile lengths */
  int64_t lengths[PC_MAX_DIMS];
  bool inner_to_outer;   /* SP */
  int n_ids;             /* RE after_ids, FU fused_ids, FFSP src_step_ids, CHR reader ids */
  int ids[PC_MAX_LEAVES];
  int annotation;        /* AN */
  char pragma[64];       /* PR, e.g. "auto_unroll_max_step$64" */
  char scope[32];        /* CHR CHW */
  int target_stage_id, target_iter_id; /* CA */
  int src_step_id, n_split; /* FSP */
  int level;             /* FFSP */
  bool factor_or_nparts; /* FFSP */
  int factor, offset;    /* SA */
  int factor_iter_id;    /* RF */
} pc_step;

/* A schedule state: the program (owned: cache_write and rfactor add ops), its stages in
 * Ansor's numbering and the steps applied so far. */
typedef struct pc_state {
  pc_program *prog;   /* the workload's program, or the state's own after a DAG step */
  bool owns_prog;
  int n_stages;
  pc_stage stages[PC_MAX_STAGES];
  int n_steps;
  pc_step steps[PC_MAX_STEPS];
} pc_state;

pc_state *pc_state_new(const pc_program *p);
pc_state *pc_state_copy(const pc_state *s);
void pc_state_free(pc_state *s);
/* Validates and applies one step; on error the state is unchanged. */
int pc_state_apply(pc_state *s, const pc_step *step, pt_diag *d);
/* pc_state_apply without the rollback (and its copy of the live stages): on error the state is
 * left part-changed and serves only to be freed. For replays that stop at the first failure. */
int pc_state_replay(pc_state *s, const pc_step *step, pt_diag *d);
int pc_state_apply_all(pc_state *s, int n, const pc_step *steps, pt_diag *d);
/* Prints the loop structure (like Ansor's State print). */
void pc_state_print(const pc_state *s, char *buf, size_t cap);
/* Steps as a JSON array in record encoding; parsing is the inverse. */
char *pc_steps_to_json(int n, const pc_step *steps); /* caller frees */
int pc_steps_from_json(const char *json, int *n, pc_step *steps, int cap, pt_diag *d);
/* A hand-written schedule (tiling + vectorize + parallel) suited to the workload. */
int pc_schedule_default(pc_state *s, int vector_lanes, pt_diag *d);
/* A random valid step sequence (used by tests; the tuner has its own sketch rules). */
int pc_schedule_random(pc_state *s, pt_rng *rng, pt_diag *d);

/* ---------------------------------------------------------------- records */

/* A TVM auto_scheduler measure record (one JSON line, docs/formats.md). Reading accepts the
 * layouts TVM wrote from v0.2 on; writing produces v0.6. */
#define PC_RECORD_VERSION "v0.6"
#define PC_RECORD_SKIP 1 /* pc_record_parse: a comment ('#') or blank line, not a record */
#define PC_RECORD_MAX_TASK_INPUTS 4

typedef struct pc_record {
  char workload_key[512];
  char target[256];
  int n_steps;
  pc_step steps[PC_MAX_STEPS];
  int n_costs;
  double costs[16];     /* seconds */
  int error_code;       /* TVM MeasureErrorNo */
  double all_cost;      /* seconds spent on the measurement */
  double timestamp;
  char version[16];     /* as read ("" when the line has no "v"); written as PC_RECORD_VERSION */
  /* The rest of the task ("i"[0] after the target), kept so a line reads back as it was. */
  bool has_hw_params;   /* v0.3+ */
  int64_t hw_params[8]; /* TVM HardwareParams: num_cores, vector_unit_bytes, cache_line_bytes,
                           max_shared_memory_per_block, max_local_memory_per_block,
                           max_threads_per_block, max_vthread_extent, warp_size */
  bool has_host;        /* v0.5+: target_host and layout_rewrite follow (implies hw params) */
  char target_host[256];
  int layout_rewrite;   /* TVM LayoutRewriteOption */
  int n_task_inputs;    /* v0.6 task_input_names */
  char task_inputs[PC_RECORD_MAX_TASK_INPUTS][64];
} pc_record;

/* Parses one line: 0, PC_RECORD_SKIP for a comment or blank line (r untouched), or an error
 * whose message gives the JSON path of what was unusable (r's contents then undefined). */
int pc_record_parse(const char *line, pc_record *r, pt_diag *d);
/* Serialises to one v0.6 line (no newline), caller frees; NULL if r holds what a record
 * cannot (non-finite or negative cost, counts out of range) or memory ran out. */
char *pc_record_format(const pc_record *r);
/* Appends a line atomically (O_APPEND, one write, fsync), so concurrent writers don't interleave. */
int pc_record_append(const char *path, const pc_record *r, pt_diag *d);
/* Reads a log ("-": standard input), calling on_record for each record; a line it cannot use
 * is passed to on_bad (or, when on_bad is NULL, printed to stderr as "path:line: reason") and
 * skipped. Returns the number of records read, on_record's value if negative (it stops
 * reading; a positive value also stops), or an I/O error. *n_bad (may be NULL) counts
 * unusable lines. */
typedef int (*pc_record_fn)(const pc_record *r, int line, void *ctx);
typedef void (*pc_record_bad_fn)(int line, const char *reason, void *ctx);
int pc_record_read_file(const char *path, pc_record_fn on_record, pc_record_bad_fn on_bad, void *ctx,
                        int *n_bad, pt_diag *d);

/* ---------------------------------------------------------------- lowering and JIT */

typedef struct pc_kernel pc_kernel;

typedef struct pc_lower_opts {
  bool host_specialized; /* run O3 with the host TargetMachine (the "non-neutral" baseline) */
  bool no_opt;           /* emit unoptimised IR */
} pc_lower_opts;

/* Lowers a state to an LLVM module: `void NAME(float **buffers, pt_pool *pool)`, buffers
 * in kernel argument order (pc_kernel_buffers). Runs the target-neutral O3 pipeline. */
pc_kernel *pc_lower(const pc_state *s, const pc_lower_opts *opts, pt_diag *d);
void pc_kernel_free(pc_kernel *k);
/* A kernel from IR text (e.g. a hand-edited .ll of `portent compile`) for the buffers the
 * state's lowering uses: the module must define the same entry function. `name` names the
 * input in errors. */
pc_kernel *pc_kernel_from_ir(const pc_state *s, const char *ir, const char *name, pt_diag *d);
/* Buffers the caller passes: inputs, outputs, then intermediates computed at root. */
int pc_kernel_n_buffers(const pc_kernel *k);
int pc_kernel_buffer_op(const pc_kernel *k, int i);
int64_t pc_kernel_buffer_numel(const pc_kernel *k, int i);
/* Functions run in parallel and their thread count (the predictor needs them). */
int pc_kernel_n_parallel(const pc_kernel *k);
const char *pc_kernel_parallel_fn(const pc_kernel *k, int i);
/* Writes the (target-neutral) module as text IR, or host object/assembly by extension. */
int pc_kernel_emit(pc_kernel *k, const char *path, pt_diag *d);
/* The same, with the object or assembly made for CPU (LLVM's -mcpu name, this host's triple)
 * instead of this host's CPU; NULL: this host's. */
int pc_kernel_emit_cpu(pc_kernel *k, const char *path, const char *cpu, pt_diag *d);
char *pc_kernel_ir(pc_kernel *k); /* caller frees with free() */
/* Compiles the module for the host with ORC LLJIT. */
int pc_kernel_jit(pc_kernel *k, pt_diag *d);
typedef void (*pc_kernel_fn)(float **buffers, pt_pool *pool);
pc_kernel_fn pc_kernel_entry(pc_kernel *k);
double pc_kernel_compile_seconds(const pc_kernel *k);
/* TVM's target string for this host, e.g. "llvm -keys=cpu -mcpu=znver5" (for records). */
void pc_host_target_string(char *buf, size_t cap);
const char *pc_kernel_name(const pc_kernel *k);
/* The target-neutral module (owned by the kernel), for the analyzer. */
struct LLVMOpaqueModule *pc_kernel_module(pc_kernel *k);

/* ---------------------------------------------------------------- measurement */

/* TVM's MeasureErrorNo codes, as records store them. */
typedef enum {
  PC_MEASURE_OK = 0, PC_MEASURE_INSTANTIATION_ERROR = 1, PC_MEASURE_COMPILE_HOST = 2,
  PC_MEASURE_COMPILE_DEVICE = 3, PC_MEASURE_RUNTIME_DEVICE = 4, PC_MEASURE_WRONG_ANSWER = 5,
  PC_MEASURE_BUILD_TIMEOUT = 6, PC_MEASURE_RUN_TIMEOUT = 7, PC_MEASURE_UNKNOWN = 8
} pc_measure_error;

typedef struct pc_measure_opts {
  int threads;           /* thread pool size in the child */
  double timeout_s;      /* whole child, compile excluded */
  double min_time_s;     /* repeat until at least this much timed */
  int min_repeats;
  uint64_t seed;
  double rtol, atol;     /* output check tolerance */
  bool in_process;       /* skip the child process (trusted kernels only) */
  /* Time single-threaded runs by the thread's CPU time instead of the wall clock: on a
   * shared machine a run that loses its core to another process for a few slices is not
   * charged for them (docs/tuning.md, "Measuring on a shared machine"). Ignored with
   * threads > 1, whose workers' time would add up. */
  bool cpu_clock;
} pc_measure_opts;

void pc_measure_opts_default(pc_measure_opts *o);
/* The one rule for which clock times a run: the thread's CPU time with cpu_clock and one
 * thread (time slices another process took are not the kernel's), else the wall clock (a
 * parallel run's workers' CPU time would add up). Candidates and baselines both use it. */
typedef double (*pc_clock_fn)(void);
pc_clock_fn pc_measure_clock(bool cpu_clock, int threads);

typedef struct pc_measure_result {
  pc_measure_error error;
  char message[256];
  double median_s, min_s, max_s;
  int repeats;
  double max_rel_err;
  double compile_s;
} pc_measure_result;

/* Reference output of the unscheduled program for the given seed (cached by the caller). */
typedef struct pc_reference pc_reference;
pc_reference *pc_reference_new(const pc_program *p, const pc_measure_opts *o, pt_diag *d);
void pc_reference_free(pc_reference *r);
/* The seeded input, or the reference output, of op `op` (NULL for other ops). */
const float *pc_reference_data(const pc_reference *r, int op);
/* Where the harness starts a measured kernel's buffers within their page (bytes), whatever the
 * process allocated before: the inputs (seeded, only read) at PC_INPUT_PAGE_OFFSET, the outputs
 * and the stages' intermediates (written) at PC_OUTPUT_PAGE_OFFSET. Which rows of different
 * buffers share an L1 set position follows from them (predictor/set_streams.c). The figures are
 * where the buffers were before the harness fixed them, in a fresh process: glibc's posix_memalign
 * maps a large block at a page start plus its header (64 once aligned), and the outputs followed
 * the shared result (256). */
#define PC_INPUT_PAGE_OFFSET 64
#define PC_OUTPUT_PAGE_OFFSET 256
/* Lowers, JITs and measures a state in a child process. */
int pc_measure(const pc_state *s, const pc_reference *ref, const pc_measure_opts *o,
               pc_measure_result *res, pt_diag *d);
/* A record of one measurement of a state (costs: the median; error code and message kept). */
void pc_record_from_measure(pc_record *r, const pc_state *s, const pc_measure_result *m, double all_cost_s);
/* Runs an already compiled kernel (exposed for tests of crash/hang handling). */
int pc_measure_kernel(pc_kernel *k, const pc_program *p, const pc_reference *ref,
                      const pc_measure_opts *o, pc_measure_result *res, pt_diag *d);

/* ---------------------------------------------------------------- cost models */

/* What the search ranks candidates with. compiler/ declares it; implementations live where
 * their dependencies are (random here; analytic, xgb, tlp in predictor/). Scores: higher is
 * better (predicted throughput, any scale; only the order within one call matters). */
typedef struct pc_cost_model {
  const char *name;
  void *self;
  int (*predict)(void *self, const pc_program *p, int n, pc_state *const *states, double *scores, pt_diag *d);
  /* Measured results, for models trained online (may be NULL). */
  int (*update)(void *self, const pc_program *p, int n, pc_state *const *states, const pc_measure_result *results,
                pt_diag *d);
  void (*free)(void *self);
} pc_cost_model;

/* ---------------------------------------------------------------- reference libraries */

/* Median seconds of OpenBLAS (cblas_sgemm; conv2d NCHW as im2col + sgemm) on the workload's
 * shapes; matmul family and ungrouped conv2d_nchw only. Unset OPENBLAS_CORETYPE before the
 * process starts: OpenBLAS reads it when it loads. */
int pc_baseline_openblas(const pc_program *p, int threads, double min_time, bool cpu_clock, double *seconds, pt_diag *d);
const char *pc_baseline_openblas_core(void);
/* oneDNN's primitive with layouts of its choosing: time with the reorders from and to the
 * plain layouts, and without them (native). With cpu_clock and one thread both libraries are
 * timed by the thread's CPU time, as pc_measure_opts.cpu_clock times the candidates. */
int pc_baseline_onednn(const pc_program *p, int threads, double min_time, bool cpu_clock, double *with_reorders,
                       double *native, pt_diag *d);

/* ---------------------------------------------------------------- tuner */

/* Sketches: Ansor's sketch rules for CPU (docs/tuning.md), then random annotation. */
typedef struct pc_sketch_opts {
  int vector_lanes;         /* f32 lanes of a vector register: 16 for 512-bit, 8 for 256-bit */
  int num_cores;            /* parallel loops are fused up to num_cores x 16 iterations (Ansor) */
  int max_innermost_factor; /* largest innermost tile length (Ansor: 64) */
  int vector_registers;     /* vector registers (32 with AVX-512 or NEON, 16 with AVX2): tile sampling */
  /* L1d and L2 bytes per core for the cache rule of tile sampling (docs/tuning.md); 0 = off */
  int64_t cache_bytes[2];
  /* The reduction rule of tile sampling (docs/tuning.md): the inner reduction tile r1 (the
   * product of every multi-level-tiled stage's level-2 reduction lengths) at least this, or
   * the whole reduction when it is shorter; 0 or 1 = off */
  int min_reduction_tile;
} pc_sketch_opts;
void pc_sketch_opts_default(pc_sketch_opts *o);

typedef struct pc_sketches pc_sketches;
pc_sketches *pc_sketches_generate(const pc_program *p, const pc_sketch_opts *o, pt_diag *d);
int pc_sketches_count(const pc_sketches *sk);
const pc_state *pc_sketch_state(const pc_sketches *sk, int i); /* tile sizes still 1 */
const char *pc_sketch_describe(const pc_sketches *sk, int i);
/* A random annotation of sketch i (tile sizes, compute locations, parallel, unroll pragma,
 * vectorize), or NULL with d filled when the sample is invalid. Caller frees. */
pc_state *pc_sketch_sample(const pc_sketches *sk, int i, pt_rng *rng, pt_diag *d);
/* Bytes touched by one block of a candidate sampled from sketch i, the largest over its
 * multi-level-tiled stages: level 1 the body of the r0 loop (tile l2 x l3, reduction r1),
 * level 2 the body of the innermost s1 loop (l2 x l3, whole reduction). 0 when no stage is
 * tiled on its own axes, -1 when s does not have sketch i's steps. */
int64_t pc_sketch_working_set(const pc_sketches *sk, int i, const pc_state *s, int level);
/* The inner reduction tile (r1) of a candidate sampled from sketch i: per multi-level-tiled
 * stage the product of its level-2 reduction lengths, the smallest over the stages. 0 when
 * no stage is tiled on its own axes or none has a reduction, -1 when s does not have sketch
 * i's steps. */
int64_t pc_sketch_reduction_tile(const pc_sketches *sk, int i, const pc_state *s);
void pc_sketches_free(pc_sketches *sk);

/* The baseline cost model: uniformly random scores. Free with m.free(m.self). */
pc_cost_model pc_cost_model_random(uint64_t seed);

/* Evolutionary search (Ansor's SketchPolicy) with measurement of each round's top-k. */
typedef struct pc_tune_stats {
  int n_measured;          /* this run and resumed */
  int n_resumed, n_failed, rounds;
  double best_s;           /* best median seconds, 0 while nothing ran correctly */
  /* Seconds: t_model = cost model predict + train (t_train), t_search = the search including
   * its predictions (not training), t_compile = lowering + JIT, t_measure = running. */
  double t_model, t_train, t_search, t_compile, t_measure, t_total;
  /* Candidates the model scored (predict calls) and, in a cascade, that the second model
   * re-ranked; t_rerank: the second model's seconds (inside t_model). */
  long n_scored, n_reranked;
  double t_rerank;
  double predicted_score;  /* pc_tuner_predict_best: the model's score of the candidate chosen */
  /* pc_tuner_label: candidates the first model trained on with the second model's scores as
   * labels (none measured or logged), and the search rounds that picked some of them. */
  int n_labelled, label_rounds;
  int n_curve;
  double *curve;           /* best seconds after each measurement (0 before the first success) */
  double *curve_wall;      /* t_total at each measurement */
} pc_tune_stats;

typedef struct pc_tune_opts {
  pc_sketch_opts sketch;
  int population;          /* candidates per generation (Ansor: 2048) */
  int generations;         /* evolution iterations per round (Ansor: 4) */
  double mutation_prob;    /* Ansor: 0.85 */
  double crossover_prob;   /* share of children made by crossover of two parents */
  double eps_greedy;       /* share of each round's measurements picked at random (Ansor: 0.05) */
  int measure_per_round;   /* Ansor: 64 */
  int trials;              /* measurements in all, records resumed from the log included */
  uint64_t seed;
  pc_measure_opts measure;
  const char *log_path;    /* every measured candidate is appended here at once (NULL: none) */
  const char *target;      /* the record's target string */
  /* Cascade (may be NULL): this model re-ranks the rerank_top best candidates of each round's
   * search (0: all 2 x measure_per_round) before the top-k are measured. */
  const pc_cost_model *rerank;
  int rerank_top;
  /* Cold start of a cascade: while fewer than 2 x measure_per_round candidates have been
   * measured (the first model has learned little or nothing), the search keeps rerank_cold
   * candidates (not 2 x measure_per_round) and the second model re-ranks all of them, so the
   * first rounds are picked by the second model. 0: off. */
  int rerank_cold;
  /* After the cold start, the search keeps rerank_pool candidates for the second model when
   * that is more than 2 x measure_per_round (0: off): a learned first model's best 2 x K are
   * often one family of near-copies, and when the second model predicts the whole family slow
   * a round of 2 x K has nothing better to measure. */
  int rerank_pool;
  /* Local search by measurement: this share of each round's measurements are unmeasured
   * one-mutation neighbours of the local_parents fastest measured candidates, ranked by the
   * model (the second one in a cascade) and taken in turn from each parent; the rest as before.
   * An analytic model predicts most good candidates at one bound and cannot order them; this
   * orders them by measurement (docs/tuning.md, "Session 11"). 0: off (the default here; the
   * CLI turns it on for an analytic search model). */
  double local_share;
  int local_parents;
  /* Called after each measurement (may be NULL). */
  void (*on_measured)(void *ctx, const pc_tune_stats *st, const pc_measure_result *r);
  void *ctx;
} pc_tune_opts;
void pc_tune_opts_default(pc_tune_opts *o);


typedef struct pc_tuner pc_tuner;
pc_tuner *pc_tuner_new(const pc_program *p, const pc_cost_model *model, const pc_tune_opts *o, pt_diag *d);
/* Reads a log: records of this workload (and target) count as measured, train the model
 * and seed the population. Bad lines go to on_bad (or stderr with their line numbers). */
int pc_tuner_resume(pc_tuner *t, const char *log_path, pc_record_bad_fn on_bad, void *ctx, int *n_bad, pt_diag *d);
/* One round: search, measure up to measure_per_round new candidates, update the model.
 * Returns how many were measured (0: the search found nothing new). */
int pc_tuner_round(pc_tuner *t, pt_diag *d);
/* Rounds until `trials` measurements (or nothing new is found). */
int pc_tuner_run(pc_tuner *t, pt_diag *d);
const pc_tune_stats *pc_tuner_stats(const pc_tuner *t);
pc_state *pc_tuner_best(const pc_tuner *t); /* a copy, NULL if nothing ran correctly */
/* Searches without measuring and returns the candidate the model ranks first (in a cascade,
 * the second model's first; after pc_tuner_label, the labelled candidate it scores best when
 * that beats the search's pick). */
pc_state *pc_tuner_predict_best(pc_tuner *t, pt_diag *d);
/* For a cascade whose first model learns (update) when nothing can be measured: the second
 * model's predictions stand in for measurements. The first model trains on a random sample of
 * n_sample candidates (sketches + random annotation) scored by the second, then `rounds`
 * times on the search's measure_per_round picks not yet labelled (the first model ranks, the
 * second re-ranks the top few, as in pc_tuner_round), retrained after each. Nothing is
 * logged or counted as measured. Does nothing when there is no second model, the first does
 * not learn or measured records were resumed (the labels would mix two scales). Returns
 * the labels made (stats: n_labelled) or a negative error. */
int pc_tuner_label(pc_tuner *t, int n_sample, int rounds, pt_diag *d);
/* How well the first model has learned the second's order: both score n fresh random
 * candidates (none labelled; own draws, the search's are untouched) and *agreement is the
 * share of pairs the second model orders that the first orders alike (ties half; 0.5 is
 * chance), -1 without a second model or a pair. */
int pc_tuner_label_agreement(pc_tuner *t, int n, double *agreement, pt_diag *d);
void pc_tuner_free(pc_tuner *t);

/* An SVG plot of best latency against measurements, one line per series. */
int pc_tune_curve_svg(const char *path, const char *title, int n_series, const char *const *names,
                      const int *n_points, const double *const *best_s, pt_diag *d);

#endif
