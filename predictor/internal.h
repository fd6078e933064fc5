/* predictor/ internals: the per-target state the legalizer, scheduler and aggregator share. */
#ifndef PORTENT_PREDICTOR_INTERNAL_H
#define PORTENT_PREDICTOR_INTERNAL_H

#include "predictor.h"

/* The model's switches, every bool of pp_options but no_breakdown, in the order a report's
 * model line names them: X(field, word, off_word, suffix). word: the model line's word when the
 * switch is on, off_word when it is off (NULL: none); suffix: pp_options_preset takes the word
 * as a suffix of a preset name (steady_state, mlp and bandwidth come with the base names). The
 * JSON report's "options" has a key per field. One table, so that the reports and the presets
 * cannot drift apart. */
#define PP_SWITCHES(X)                               \
  X(steady_state, "steady-state", "patent", 0)  \
  X(mlp, "+mlp", NULL, 0)                       \
  X(bandwidth, "+bandwidth", NULL, 0)           \
  X(overlap, "+overlap", NULL, 1)               \
  X(strides, "+strides", NULL, 1)               \
  X(carried, "+carried", NULL, 1)               \
  X(level_inflight, "+inflight", NULL, 1)       \
  X(lanes, "+lanes", NULL, 1)                   \
  X(l1_sets, "+sets", NULL, 1)                  \
  X(shared, "+shared", NULL, 1)                 \
  X(far_sets, "+far", NULL, 1)                  \
  X(busy, "+busy", NULL, 1)                     \
  X(forward, "+forward", NULL, 1)               \
  X(dirty_sets, "+dirty", NULL, 1)              \
  X(llc_walks, "+llcwalk", NULL, 1)             \
  X(spills, "+regs", NULL, 1)                   \
  X(set_streams, "+streams", NULL, 1)           \
  X(fuse_branch, "+cmpbr", NULL, 1)             \
  X(fold_loads, "+fold", NULL, 1)               \
  X(sets_sum, "+setsum", NULL, 1)               \
  X(set_ns, "+setns", NULL, 1)                  \
  X(set_loads, "+setloads", NULL, 1)            \
  X(mem_chains, "+memchain", NULL, 1)           \
  X(fully_assoc, "-assoc", NULL, 1)
#define PP_SWITCH_COUNT_ONE(field, word, off_word, suffix) +1
enum { PP_N_SWITCHES = 0 PP_SWITCHES(PP_SWITCH_COUNT_ONE) };

typedef struct {
  const char *field;           /* the JSON key: pp_options' field */
  const char *word, *off_word; /* the model line's word when on, when off (NULL: none) */
  bool suffix;
  size_t offset; /* of the field in pp_options */
} pp_switch;
extern const pp_switch pp_switches[PP_N_SWITCHES];
static inline bool pp_switch_on(const pp_options *o, int k) {
  return *(const bool *)((const char *)o + pp_switches[k].offset);
}

#define PP_MAX_UNITS 64
#define PP_COST_CACHE 512 /* open-addressed (op, elem, bits) -> cost; power of two */
#define PP_MEMO 1024      /* block schedules by content hash; power of two, direct mapped */

/* What pp_predict derives from one block's legalized graph, kept so that a repeated block
 * (unrolled code) is neither legalized nor scheduled again. */
typedef struct {
  uint64_t key; /* 0 = empty */
  unsigned generation; /* valid only in the prediction that wrote it (no clearing pass) */
  double cycles, compute;
  double lines, resource, chain; /* loaded lines, resource bound, open accumulator chain */
  double stride_trip, stride_stall; /* pp_stride_stalls at that trip count (-1: not yet) */
  int uops, unit;
  bool issue;
  int ops_function, ops_block; /* whose kept ops (pp_block_ops) hold its legalized graph */
} pp_block_memo;

typedef struct {
  bool used;
  int op, elem, bits;
  ptg_inst_cost cost;
  int unit;
} pp_cost_slot;

struct pp_predictor {
  const ptg_target *t;
  pp_options o;
  int threads;
  double freq_ghz, issue_width, l1_latency, mlp;
  int native_bits;
  bool fuse_branch, fold_loads; /* +cmpbr, +fold on an x86 target (pp_legalize_block) */
  double window;        /* reorder-buffer entries (pp_reorder_window) */
  double core_share;    /* +busy: the share of a core each of `threads` busy threads keeps */
  double forward_fail;  /* +forward: cycles an iteration loses to a failed forwarding; 0 = off */
  int64_t llc_least_stride; /* +llcwalk: the least stride of the target's strided walks (4 KiB
                               pages); 0 = off (no walks, no latency curve, or the option off) */
  /* the target's data TLB (pp_tlb_figures, looked up once): first- and second-level entries,
   * cycles of an L2-TLB hit, page walks at once */
  double tlb_l1_entries, tlb_l2_entries, tlb_l2_hit, tlb_walkers;
  int n_units;
  const char *unit_names[PP_MAX_UNITS];
  int unit_pipes[PP_MAX_UNITS];
  int unit_first_pipe[PP_MAX_UNITS]; /* index of the unit's first pipe in the scheduler's table */
  int n_pipes;
  pp_cost_slot cache[PP_COST_CACHE];
  pt_arena *arena;      /* fallback notes */
  int n_fallbacks, cap_fallbacks;
  const char **fallbacks;
  struct pp_timeline *timelines; /* scheduler scratch, PP_MAX_UNITS of them */
  unsigned generation;           /* of the scheduler's current run */
  pp_block_memo memo[PP_MEMO];
  unsigned memo_generation;
  /* scheduler scratch, grown on demand and reused across blocks and profiles */
  int *s_pred_start, *s_pred, *s_fill; /* s_pred: distances back to each op's predecessors */
  int *s_slots;                        /* issue slots of each op (parts, 0 when fused) */
  double *s_finish, *s_retire, *s_cum; /* per simulated op: finish, in-order retire, uops through it */
  int s_cap_nodes, s_cap_edges, s_cap_total;
  int *s_walks, *s_table; /* pp_stride_stalls scratch */
  void *s_l1;             /* pp_loop_l1_sets scratch: its walks, then their groups */
  size_t s_l1_bytes;
  uint64_t *s_table_hash;
  int s_cap_walks, s_cap_table;
  /* the current function's blocks as pp_predict legalized them (pp_block_ops): kept_from[j] is
   * the block whose ops at kept + kept_base[..] are block j's (an identical block's), or -1 */
  const pa_function *kept_f;
  double kept_latency;
  const pp_op *kept;
  const int *kept_base, *kept_from;
};

void pp_timelines_free(pp_predictor *pp);
size_t pp_timeline_size(void);
/* pp_schedule repeated: the settled cycles per copy, or for fewer than 8 executions all of
 * them scheduled together (makespan / executions). res: the ops' pp_resource_bound (the caller
 * keeps it too). */
double pp_schedule_copies(pp_predictor *pp, int n, const pp_op *ops, int n_edges, const pa_edge *edges,
                          double executions, double res);

/* Reorder-buffer entries of the target's microarchitecture (published figures; 224 if unknown). */
double pp_reorder_window(const ptg_target *t);

/* Cost of (op, elem, bits) on the target, memoized; *unit gets the resource index. */
ptg_inst_cost pp_inst_cost(pp_predictor *pp, ptg_op op, ptg_elem elem, int bits, int *unit);
ptg_elem pp_elem_of(const char *name);
/* Cycles of one cache level's hit (1-based level) or of DRAM (level 0). */
double pp_level_latency(const ptg_target *t, int level);
/* +shared (sharing.c): the cycles per store of a line that another core wrote: the latency of
 * the first cache level the cores share (else memory's) over the misses in flight on the way
 * (the least of the levels' overlapping_misses and mlp, memory's); and the stores of block b of
 * parallel body f that share their lines with other threads' chunks at that many threads (0 at
 * one thread). */
double pp_sharing_store_cycles(const ptg_target *t, double mlp);
int pp_shared_stores(const pa_function *f, const pa_block *b, int threads);
/* +forward (forwarding.c): waits[j] (f->n_blocks entries) = block j of f holds a load wider than
 * a store of the same object earlier in the same loop iteration, over the bytes that store
 * wrote (forwarding fails). */
void pp_forward_waits(const pa_function *f, bool *waits);
/* +regs (spills.c): cycles per execution that block b, a loop body whose accumulators spill on
 * this target, takes at least; 0 when they fit, the option is off or the target lacks the figure. */
double pp_spill_floor(const pp_predictor *pp, const pa_function *f, const pa_block *b);
/* Block j of f legalized at load_latency (pp_legalize_block): the ops pp_predict kept for it
 * when it is the function being predicted, else legalized into scratch (b->n_nodes entries). */
const pp_op *pp_block_ops(pp_predictor *pp, const pa_function *f, int j, double load_latency, pp_op *scratch);
/* Resource lower bounds of a legalized block: issue (uops / width) and the busiest unit. */
double pp_resource_bound(pp_predictor *pp, int n, const pp_op *ops, bool *issue_bound, int *unit);

/* pp_memory_model with the footprint (lines) that decides whether cold misses are warm. */
double pp_memory_model_footprint(const ptg_target *t, const pa_reuse_hist *h, double footprint, int sharers,
                                 bool fully_assoc, double *hit_fraction);

/* Per-access strides (memory.c): miss cycles beyond L1 of set-conflicting walks (*miss, to be
 * overlapped over the target's overlapping misses; *miss_inflight: already divided by the misses
 * in flight of each level that serves them) and TLB cycles (*tlb) per execution of a loop block
 * of `trip` iterations per entry, whose reorder window spans `window_iterations` iterations
 * (INFINITY: unknown); *longest: the latency beyond L1 of the longest miss that comes at least
 * once per window. */
void pp_stride_stalls(pp_predictor *pp, const pa_block *b, double trip, double window_iterations, double *miss,
                      double *miss_inflight, double *tlb, double *longest);
/* Cycles (per thread, over the run) loop `loop` of f takes at least for the L1 fills of its
 * walks that fall in few L1 sets: those sets hold only the target's set-walk figure of fills at
 * once (ptg_target_set_inflight), each for an L2 round trip; trip[j], ecount[j]: block j's
 * iterations per entry into its loop and executions per thread. 0 without set walks. *one_set:
 * whether the costliest group falls in one set position within a page, is not priced as a
 * read-modify-write walk and has no access wider than a line (+setsum adds such a bound to the
 * loop's other cycles; a register tile's vector rows overlap their fills with its work). */
double pp_loop_l1_sets(pp_predictor *pp, const pa_function *f, int loop, const double *trip, const double *ecount, bool *one_set);
/* +streams (set_streams.c): cycles loop `loop` of f takes at least for its sequential streams
 * (strides under a line) whose current lines share one L1 set position, more of them than its
 * ways: per iteration, the target's set_streams figure for that many streams and read-modify-
 * write share, per stream; arguments as pp_loop_l1_sets. 0 without the figure. */
double pp_loop_set_streams(pp_predictor *pp, const pa_function *f, int loop, const double *trip, const double *ecount);

/* A phi node (its opcode compared by letters: every node of a prediction may be asked). */
static inline bool pp_is_phi(const pa_node *n) {
  const char *o = n->opcode;
  return o && o[0] == 'p' && o[1] == 'h' && o[2] == 'i' && o[3] == 0;
}

/* +llcwalk (llc_walks.c): cycles loop `loop` of f takes at least for its walks that open a new
 * line at each access, at a stride the target's memory.strided_walks measure, whose lines come
 * back (strides and wrap periods, outward) only past a reuse distance at which the target's
 * latency curve says the last level no longer serves them: that share of their accesses, each
 * at the strided walk's time per access; arguments as pp_loop_l1_sets. 0 without the figures. */
double pp_loop_llc_walks(pp_predictor *pp, const pa_function *f, int loop, const double *trip, const double *ecount);
/* Sets pp's llc_least_stride and llc_tlb_pages from its target, once per predictor. */
void pp_llc_walks_init(pp_predictor *pp);
/* The target's strided walk over memory in 4 KiB pages (memory.strided_walks) at the stride
 * nearest to `stride` in log, with both its figures; NULL when it has none (memory.c). */
const ptg_strided_walk *pp_nearest_strided_walk(const ptg_target *t, int64_t stride);
/* The target's data TLB (memory.c, published figures by microarchitecture): first- and
 * second-level entries (4 KiB pages), cycles of a second-level hit, page walks at once. */
void pp_tlb_figures(const ptg_target *t, double *l1_entries, double *l2_entries, double *l2_hit, double *walkers);
/* Whether node n's address wraps in its own loop (a fused loop's split index, analyzer/access.c):
 * its innermost stride is then the step between wraps only, which the stride models (a steady
 * walk over the loop's trip) do not describe; they leave such a walk to the reuse histograms, as
 * they did while its stride was unknown. */
static inline bool pp_wraps_in_loop(const pa_node *n) { return n->periods && n->n_strides > 0 && n->periods[0] > 0; }
/* Whether block j is one whose walks the loop-level memory bounds (+sets, +streams, +llcwalk)
 * price for loop `loop`: the loop's own block (not an inner loop's), at least two iterations
 * per entry and executed at all. */
static inline bool pp_loop_walk_block(const pa_function *f, int loop, int j, const double *trip, const double *ecount) {
  return f->blocks[j].loop == loop && trip[j] >= 2 && ecount[j] > 0;
}
/* The task-graph nodes of every block of loop L, inner loops' included: a bound's scratch size. */
static inline int pp_loop_nodes(const pa_function *f, const pa_loop *L) {
  int n = 0;
  for (int k = 0; k < L->n_blocks; k++) n += f->blocks[L->blocks[k]].n_nodes;
  return n;
}
/* Whether two accesses walk one stream of lines (memory.c): the same object and stride vector,
 * offsets on the same line or a whole number of innermost strides apart. */
bool pp_same_stream(const pa_node *a, const pa_node *b);

/* +far for gathers and scatters (memory.c): the lanes of node `node` of block b of f that miss
 * L1 at each execution: lanes a page or more apart (lane_step) whose first lane walks a line or
 * more per iteration of the block's loop (its strides; a fraction of the lanes for a smaller
 * step), all lanes' lines coming back, if at all, only after more lines than L1 holds (far_walk
 * over the lanes' sweep). 0 for other nodes, and for a gather or scatter of the same lanes as an
 * earlier one of the block (it finds the lines that one brought). trip[j]: block j's iterations
 * per entry into its loop. */
double pp_gather_lanes_missing_l1(const pp_predictor *pp, const pa_function *f, const pa_block *b, int node,
                                  const double *trip);
/* Charges op, node n's legalized gather or scatter, for `missing` of its lanes that miss L1 at
 * each execution (pp_gather_lanes_missing_l1), as for lanes in crowded sets, which it includes
 * (legalize.c). */
void pp_charge_missing_lanes(pp_predictor *pp, const pa_node *n, double missing, pp_op *op);
/* TLB reach for gathers and scatters (memory.c, +far): the pages the gathers and scatters of
 * loop `loop`'s own blocks touch per iteration, lanes a page or more apart a page each (lanes of
 * one object and step whose first lanes share a page counted once); and the cycles node `node`
 * of block b waits per execution when its lanes are a page or more apart and those pages exceed
 * the first-level data TLB (memory.c's published figures): each lane an L2-TLB hit, overlapped
 * up to the target's misses in flight as the stride model's TLB misses are; 0 for a gather or
 * scatter of the same lanes as an earlier one of the block (their entries are fresh). */
double pp_loop_gather_pages(const pa_function *f, int loop);
double pp_gather_lanes_tlb_cycles(const pp_predictor *pp, const pa_block *b, int node, double loop_pages);

/* Cycles that loop `loop` of f takes at least for its float recurrences through several blocks
 * (carried_edges whose phi is the loop's header): the longest chain of adds from the phi's user
 * to the value it receives back, with loads at load_latency, times the executions of the user's
 * block (executions[j]: block j's, one thread) (recurrence.c). */
double pp_carried_recurrence(pp_predictor *pp, const pa_function *f, int loop, double load_latency,
                             const double *executions);
/* +memchain (memory_chains.c): cycles loop `loop` of f takes at least for its accumulators
 * through memory: blocks that load an element, compute on it and store it back, where the next
 * load of it is a later block's of the same iteration or, for an element the loop does not
 * move, the next iteration's: per link the ops from load to store plus the target's
 * store-to-load forwarding (cpu.store_forward_cycles, else an L1 hit's latency), times the
 * executions of the link's block; the loop's longest element. */
double pp_memory_chains(pp_predictor *pp, const pa_function *f, int loop, double load_latency, const double *executions);
/* Whether header phi `node` of loop `loop` receives, around every back edge, a value loaded
 * from an address that moves at each iteration (the profile's carried edges; a rotated load
 * of the next element): no chain of adds runs through it, the next iteration's adds start
 * from memory (dwconv_mb #9: its xx loop's one float phi takes the next element's load).
 * False when the profile has no carried edges for it (recurrence.c). */
bool pp_phi_reloads(const pa_function *f, int loop, int node);
/* Float phis of loop `loop`'s header that accumulate in the loop's own blocks (not
 * pp_phi_reloads): some carried edge takes the phi to an add, FMA or min/max of a block whose
 * innermost loop is `loop` (a phi that only enters inner loops is theirs). -1 when the profile has no carried edges (older files). */
int pp_accumulating_phis(const pa_function *f, int loop);
/* The outermost loop that carries loop `loop`'s accumulators: up from `loop` while a float phi
 * of the enclosing header gives one of the accumulating phis below it its initial value. `loop`
 * itself when none does; -1 when the profile has no carried edges (older files). */
int pp_reduction_root(const pa_function *f, int loop);

#endif
