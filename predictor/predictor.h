/* predictor/: the analytical performance predictor. A hardware-independent program profile
 * (analyzer/) and a target description (targets/) in; predicted time and its breakdown out:
 * legalize -> memory model -> pipeline simulator -> sum of cost(BB) x ECount(BB).
 * Also the `analytic` cost model the tuner's search ranks candidates with, and the ranking
 * metrics the evaluation prints. */
#ifndef PORTENT_PREDICTOR_H
#define PORTENT_PREDICTOR_H

#include <stdbool.h>
#include <stdio.h>

#include "analyzer.h"
#include "common.h"
#include "compiler.h"
#include "targets.h"

#define PP_MAX_LEVELS 4 /* cache levels the memory model tracks; index PP_MAX_LEVELS = DRAM */

/* What the prediction adds to the patent's formula. All off = the patent exactly: each
 * block's task graph scheduled once as a DAG, loads at their expected hit latency. Every bool
 * but no_breakdown is a switch of the model with its row in PP_SWITCHES (predictor/internal.h:
 * its word in the model line and the preset names, its key in the JSON's options); a new one
 * goes before spills, the last, up to which a static_assert counts the rows. */
typedef struct pp_options {
  int threads;          /* threads on the target; 0 = all its cores */
  bool steady_state;    /* loop blocks: steady-state cycles per iteration of repeated bodies */
  bool mlp;             /* Little's law: a block takes at least its misses x latency / overlapping_misses */
  bool bandwidth;       /* roofline: a function takes at least bytes / bandwidth at each level */
  bool no_breakdown;    /* skip the compute/memory split (one simulation per block: faster) */
  bool fully_assoc;     /* ablation: ignore the caches' associativity (the model before it) */
  bool overlap;         /* steady state: consecutive instances of a latency-bound innermost loop
                           overlap in the reorder window (off by default: docs/validation.md) */
  bool strides;         /* per-access strides of the profile: set-conflicting walks served by the
                           level whose sets hold them, page-crossing walks pay TLB misses */
  bool carried;         /* steady state: a loop takes at least the chain of its float recurrences
                           through several blocks (the profile's carried_edges) per iteration */
  bool mem_chains;      /* carried: also its accumulators through memory (a load, ops and a
                           store back of one element, reloaded later in the iteration or at the
                           next one), each link with the target's store-to-load forwarding */
  bool level_inflight;  /* strides: a set-conflicting walk's lost lines hold each level's miss
                           buffers until served, up to the misses in flight out of that level
                           (caches[].overlapping_misses, memory.strided_walks), not only memory's
                           random-chase figure */
  bool lanes;           /* gathers and scatters by where their lanes fall: scatters with the
                           target's scatter rows, lanes a page or more apart (the profile's
                           lane_step) with its gather_page / scatter_page rows; off: all as gathers */
  bool l1_sets;         /* strides: a set-conflicting walk's L1 misses, which fall in few L1 sets,
                           overlap at most as the target's set walks say (caches[0].set_walks;
                           Zen 4: about one per set); a target without them: no such bound */
  bool far_sets;        /* sets: a walk whose lines come back only after more lines than L1 holds
                           misses L1 on every access (the reuse histogram's misses), and those
                           misses fall in its few L1 sets too */
  bool shared;          /* parallel bodies: stores whose threads' chunks fall in the same lines
                           (false sharing) wait for the line from another core: the first
                           shared level's latency over the least overlapping_misses on the way */
  bool busy;            /* parallel bodies: each thread keeps the share of its core that the
                           target's L1 bandwidth per thread at that many threads shows
                           (ptg_target_core_share): a clock, sibling or hypervisor that slows
                           every core when all are busy */
  bool forward;         /* a loop block whose load spans bytes of narrower stores earlier in the
                           same iteration (no store forwarding) takes the target's
                           cpu.store_forward_fail_cycles more; a target without it: unchanged */
  bool dirty_sets;      /* sets: a set-conflicting walk that stores back the lines it loads
                           (a column of C += ...) takes per L1 miss the target's read-modify-
                           write walk figure (set_walks' rmw_ns_per_access): each fill also
                           evicts a dirty line; a target without it: unchanged */
  bool set_streams;     /* sets: rows walked side by side (strides under a line) whose current
                           lines share one L1 set position, more than its ways, take per
                           iteration the target's figure for that many streams and read-modify-
                           write share (caches[0].set_streams); objects start where the
                           measuring harness puts them in their page (PC_INPUT_PAGE_OFFSET, and
                           PC_OUTPUT_PAGE_OFFSET for written ones); a target without it: unchanged */
  bool llc_walks;       /* strides: a walk that opens a new line at every access, at a stride the
                           target's memory.strided_walks measure, and whose lines come back (its
                           strides and wrap periods) only past a reuse distance at which the
                           latency curve says the last level no longer serves them, takes that
                           share of its accesses at the strided walk's time per access; a target
                           without the curve or the walks: unchanged */
  bool fuse_branch;     /* x86 targets: an integer compare whose only user is the block's branch
                           fuses with it (one macro-op: the characterizer's issue width counts the
                           pair as one), taking no issue slot; other ISAs unchanged */
  bool fold_loads;      /* x86 targets: a load whose only user is an arithmetic op of its width
                           becomes that op's memory operand (one macro-op), taking no issue slot;
                           other ISAs unchanged */
  bool sets_sum;        /* sets: a loop whose costliest set-conflicting group falls in one L1 set
                           position (not a +dirty read-modify-write walk) takes those misses on
                           top of its blocks' other cycles instead of the larger of the two, so
                           loops the bound prices alike keep their differences (bert_ffn1) */
  bool set_ns;          /* sets: a set-conflicting group's misses each take the target's set walks'
                           ns_per_access at the positions they fall in, instead of L2 latency over
                           the walks' misses in flight (their chase latency / ns per access) */
  bool set_loads;       /* sets: a set-conflicting group read by several load instructions (an
                           unrolled loop's rows of one column) takes its misses at the target's
                           ratio of such walks by that many loads to one load's
                           (ptg_target_set_loads_ratio); a target without set_loads: unchanged */
  bool spills;          /* a single-block loop whose float header phis need more of the target's
                           vector registers (ptg_target_vector_registers) than a register tile
                           leaves free takes at least its vector float updates at the target's
                           cpu.spill_update_cycles (predictor/spills.c); a target without it:
                           unchanged */
} pp_options;

/* The default model, "steady+bw+overlap+strides+lanes+sets+carried+shared+far+busy+forward+dirty+llcwalk+regs+memchain+setsum+streams+setloads" (threads = cores). */
void pp_options_default(pp_options *o);
/* The ablation rows: "patent" "patent+bw" "steady" "steady+mlp" "steady+bw" "full" (all three);
 * any of them + "-assoc": with fully associative caches; + "+overlap": with the overlap of
 * consecutive loop instances (steady-state presets); + "+strides": the per-access strides;
 * + "+carried": the recurrences through several blocks; + "+inflight": per-level misses in flight
 * for the strided walks; + "+lanes": scatter and page-apart rows for gathers and scatters; + "+sets":
 * L1 misses in flight per set for walks in few L1 sets; + "+cmpbr", "+fold": x86 macro-op fusion. Suffixes
 * combine ("steady+bw+overlap-assoc"). Keeps o's threads and no_breakdown: o must be initialized. */
int pp_options_preset(pp_options *o, const char *name);

typedef enum {
  PP_BOUND_ISSUE,      /* front-end issue width */
  PP_BOUND_UNIT,       /* one execution-unit class */
  PP_BOUND_LATENCY,    /* dependence chains / loop-carried recurrences */
  PP_BOUND_MEMORY,     /* cache-miss latency (divided by memory-level parallelism) */
  PP_BOUND_BANDWIDTH,  /* bytes / bandwidth of a cache level or DRAM */
  PP_BOUND_FORK_JOIN,  /* thread-pool fork/join */
  PP_BOUND_COUNT
} pp_bound;
const char *pp_bound_name(pp_bound b);

typedef struct {
  int function, block;
  const char *function_name, *name;
  double ecount;         /* executions charged to one thread */
  double cycles;         /* cost(BB): cycles per execution */
  double compute_cycles; /* the same with every access an L1 hit */
  double total_cycles;   /* cycles x ecount */
  int uops;              /* legalized instructions per execution */
  pp_bound bound;
  const char *unit;      /* PP_BOUND_UNIT: which */
} pp_block_pred;

typedef struct {
  const char *name;
  bool parallel;
  double work_fraction;  /* share of the function's executions one thread runs */
  double core_share;     /* share of a core each thread keeps with all busy (+busy; 1 = whole) */
  double cycles;         /* sum of its blocks' total cycles (one thread) */
  double compute_cycles, memory_cycles;
  double bandwidth_seconds; /* the roofline bound (0 when off) */
  int bandwidth_level;      /* level that bound it (PP_MAX_LEVELS + 1 = DRAM), 0 if none */
  double fork_join_seconds;
  double seconds;        /* max(cycles / f, bandwidth) + fork/join */
  double load_latency;   /* expected cycles of one access (memory model) */
  double hit_fraction[PP_MAX_LEVELS + 1]; /* accesses served by L1.. and DRAM (last) */
  double bytes_from[PP_MAX_LEVELS + 1];   /* bytes each level delivered (L1: loads+stores; DRAM last) */
  pp_bound bound;
} pp_function_pred;

typedef struct pp_prediction {
  pt_arena *arena;
  const char *target;
  int threads, levels;
  double frequency_ghz;
  double seconds, cycles;
  double compute_seconds, memory_seconds, bandwidth_extra_seconds, fork_join_seconds;
  pp_bound bound;        /* the bound with the most cycles over the program */
  int n_functions;
  pp_function_pred *functions;
  int n_blocks;
  pp_block_pred *blocks;
  int n_fallbacks;       /* instruction classes the target lacked (nearest class used) */
  const char **fallbacks;
  pp_options options;
} pp_prediction;

/* A predictor for one target: resource table and instruction-cost cache; reusable across
 * profiles (not thread-safe: one per thread). */
typedef struct pp_predictor pp_predictor;
pp_predictor *pp_predictor_new(const ptg_target *t, const pp_options *o, pt_diag *d);
void pp_predictor_free(pp_predictor *pp);
pp_prediction *pp_predict(pp_predictor *pp, const pa_profile *p, pt_diag *d);
/* One-shot convenience. */
pp_prediction *pp_predict_profile(const pa_profile *p, const ptg_target *t, const pp_options *o, pt_diag *d);
void pp_prediction_free(pp_prediction *r);
void pp_prediction_print(FILE *f, const pp_prediction *r, int top_blocks);
char *pp_prediction_to_json(const pp_prediction *r); /* caller frees */

/* ------------------------------------------------------------- building blocks (tests) */

/* One instruction after legalization. */
typedef struct {
  double latency;   /* cycles until its result is usable */
  double occupancy; /* cycles one pipe of its unit is busy per part */
  int unit;         /* resource index, -1 = none (free op) */
  int parts;        /* machine instructions (uops) it became; 0 = folded away */
  bool fused;       /* dispatches inside its user's macro-op (+fold: a load as a memory operand,
                       +cmpbr: a compare with its branch): its unit still works, no issue slot */
  bool is_load, is_store;
  int lines;        /* cache lines a memory op touches */
} pp_op;

/* The target instruction class of a node: its analyzer class, maskload / maskstore for a
 * llvm.masked.load / store whose mask is not a constant with every lane on, scatter for a
 * llvm.masked.scatter, and gather_page / scatter_page when the lanes are >= 4096 bytes apart. */
ptg_op pp_node_class(const pa_node *n);
/* Legalizes one task-graph node for the predictor's target (splitting/widening to the native
 * vector width; no FMA or broadcast fusion, which need the graph). */
pp_op pp_legalize_node(pp_predictor *pp, const pa_node *n);
/* Legalizes a whole block (with fusion of mul+add into FMA and of a splat of a loaded scalar
 * into a broadcast load); ops has b->n_nodes entries. Loads get latency load_latency. */
void pp_legalize_block(pp_predictor *pp, const pa_block *b, double load_latency, pp_op *ops);

/* Schedules a task graph on the predictor's units. iterations = 1: the DAG's makespan;
 * > 1: the graph repeated with loop-carried edges between consecutive copies, returning
 * the settled cycles per iteration. */
double pp_schedule(pp_predictor *pp, int n, const pp_op *ops, int n_edges, const pa_edge *edges, bool repeat);

/* Memory model of one reuse histogram: fraction of accesses served per level (DRAM last)
 * and the expected access latency in cycles. sharers = threads sharing shared levels. */
double pp_memory_model(const ptg_target *t, const pa_reuse_hist *h, int sharers, double *hit_fraction);

/* Misses of a set-associative LRU level of `lines` lines and `ways` ways whose lines fall in
 * sets at random (Hill & Smith, IEEE ToC 1989), cold accesses included: what the memory model
 * charges a level. */
double pp_misses_set_assoc(const pa_reuse_hist *h, int64_t lines, int ways);

/* ------------------------------------------------------------- the analytic cost model */

typedef struct pp_analytic_opts {
  pp_options predict;
  bool reuse;           /* profile reuse distances too (10-80x slower runs; on this machine they
                           change the ranking little: docs/validation.md); default: counts only */
  double sample_rate;   /* SHARDS rate of the reuse profile (0 -> 0.01), with the line filter */
  int profile_threads;  /* threads of the instrumented run (0 -> 1) */
  double timeout_s;     /* a candidate whose counting run takes longer ranks last (0 -> 5 s: the
                           instrumented run is 10-100x slower than the kernel) */
  bool verbose;         /* print candidates ranked per second to stderr */
} pp_analytic_opts;
/* Scores = 1 / predicted seconds (0 for a candidate that failed to lower or profile). */
pc_cost_model *pp_cost_model_analytic(const ptg_target *t, const pp_analytic_opts *o, pt_diag *d);
void pp_cost_model_free(pc_cost_model *m);
/* Profiles a scheduled state: lowers it and runs it instrumented on `threads` threads with the
 * analyzer's options (NULL: every access, exact reuse), killed after timeout_s (0: 30 s). */
pa_profile *pp_profile_state(const pc_state *s, int threads, const pa_options *opt, double timeout_s, pt_diag *d);

/* ------------------------------------------------------------- ranking metrics */
double pp_mape(int n, const double *pred, const double *meas);        /* mean |p - m| / m */
double pp_spearman(int n, const double *a, const double *b);
double pp_pairwise_accuracy(int n, const double *pred, const double *meas);
/* TLP's top-k: best measured latency / best measured among the k lowest predicted. */
double pp_topk(int n, const double *pred, const double *meas, int k);
/* Candidates that are one program counted once: the n candidates grouped by id (equal strings
 * are the same program; a NULL id is a program of its own), each group's median prediction and
 * median measured time written to pred_out and meas_out (n entries at most) in the order of
 * the groups' first candidates. Returns the number of groups, -1 out of memory. For a figure about the benchmark
 * set (how far copies of one program measured apart cap a ranking), not about a model. */
int pp_distinct_programs(int n, const char *const *id, const double *pred, const double *meas, double *pred_out,
                         double *meas_out);

#endif
