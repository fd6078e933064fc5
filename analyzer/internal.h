/* What the analyzer's own files share: the module handle, a pointer map, the analysis
 * passes over one function, the instrumentation, the reuse tracker and the child-process run. */
#ifndef PORTENT_ANALYZER_INTERNAL_H
#define PORTENT_ANALYZER_INTERNAL_H

#include <pthread.h>

#include <llvm-c/Core.h>
#include <llvm-c/Target.h>

#include "analyzer.h"

struct pa_module {
  LLVMContextRef ctx; /* owned when loaded from a file; NULL when wrapping a caller's module */
  LLVMModuleRef mod;
  const char *source;
  char source_buf[256];
};

/* Open-addressing map from a pointer (LLVM value or block) to an int. */
typedef struct {
  const void **keys;
  int *vals;
  size_t cap, n;
} pa_ptrmap;
void pa_ptrmap_init(pa_ptrmap *m, size_t expected);
void pa_ptrmap_put(pa_ptrmap *m, const void *key, int val);
int pa_ptrmap_get(const pa_ptrmap *m, const void *key); /* -1 if absent */
void pa_ptrmap_free(pa_ptrmap *m);

/* Functions with a body, in module order: the indices every pass and the runtime share. */
int pa_defined_functions(LLVMModuleRef mod, LLVMValueRef **out); /* caller frees *out */
const char *pa_value_name(pt_arena *a, LLVMValueRef v);
/* The function a call instruction calls by name ("" for an indirect call or inline asm). */
const char *pa_callee_name(LLVMValueRef call);
/* 1-based line of the position cJSON's parser stopped at, for "file:line: malformed JSON". */
int pa_json_error_line(const char *text);

/* cfg.c: blocks, edges, slot-numbered names, dominators. bbmap: block -> index. */
int pa_cfg_build(pt_arena *a, LLVMValueRef fn, pa_function *f, pa_ptrmap *bbmap);
bool pa_dominates(const pa_function *f, int a, int b);
/* The blocks reachable from the entry in reverse postorder; returns how many. */
int pa_reverse_postorder(const pa_function *f, int *order);
/* loops.c: natural loops with nesting and static trip counts. */
void pa_loops_build(pt_arena *a, LLVMValueRef fn, pa_function *f, const pa_ptrmap *bbmap);
/* Smallest k >= 0 with !stay(v0 + k*step), stay being `v pred c` on values in [lo, hi];
 * -1 if there is none or the induction value would wrap. */
int64_t pa_first_exit(LLVMIntPredicate pred, __int128 v0, __int128 step, __int128 c, __int128 lo, __int128 hi);
LLVMIntPredicate pa_pred_negate(LLVMIntPredicate p); /* !(a p b) == a negate(p) b */
LLVMIntPredicate pa_pred_swap(LLVMIntPredicate p);   /* a p b == b swap(p) a */
/* If v is `add phi, C` / `add C, phi` / `sub phi, C`: the phi, and the signed step in *step. */
LLVMValueRef pa_as_increment(LLVMValueRef v, int64_t *step);

/* taskgraph.c: the address operand of a load, store, masked load or masked store node's
 * instruction; NULL for any other. */
LLVMValueRef pa_node_address(LLVMValueRef in, const pa_node *n);
/* taskgraph.c: a gather's or scatter's pointer vector (the gather's first operand, the
 * scatter's second). */
LLVMValueRef pa_lanes_address(LLVMValueRef in, const pa_node *n);

/* masks.c: a call to llvm.masked.{load,store,gather,scatter}: its address (the vector's, or
 * the gather's and scatter's vector of pointers), mask (<lanes x i1>) and sizes. */
typedef struct {
  LLVMValueRef ptr, mask;
  unsigned lanes;
  uint64_t bytes, lane_bytes; /* the whole vector's store size, and a lane's */
  bool lanes_apart;           /* gather or scatter: an address per lane */
  bool whole_lanes;           /* lane k is bytes [k x lane_bytes, (k + 1) x lane_bytes) of the vector */
} pa_masked;
bool pa_masked_of(LLVMTargetDataRef td, LLVMValueRef in, pa_masked *m); /* false: not a masked intrinsic */
/* Lane k of a mask: 1 active, 0 not, -1 not a constant (an undef or poison lane neither). */
int pa_mask_lane(LLVMValueRef mask, unsigned k);
/* A masked load's or store's constant mask: the bytes from its first active lane to its last
 * (0: no lane active) and *off, the first's offset from ptr; -1 when the mask is not a
 * constant, or for a gather or scatter, or lanes that are not whole bytes. */
int64_t pa_mask_span(const pa_masked *m, uint64_t *off);
/* The accesses instrument.c hooks for it: a gather's or scatter's lanes not known inactive; a
 * load or store 1, or 0 when its constant mask has no lane active. */
int pa_masked_items(const pa_masked *m);

/* lanes.c: bytes from one lane's address to the next of a gather's or scatter's pointer
 * vector when the IR makes it constant (a getelementptr of one base by a constant vector, or
 * by a splat plus a constant vector); 0 when not known. */
int64_t pa_lane_step(LLVMValueRef ptrs);
/* lanes.c: the first lane's address of such a pointer vector as base + *elem x (*scalar +
 * *first): the base pointer, the integer splat into every lane (NULL for a constant index
 * vector) and lane 0's constant, in elements of *elem bytes; false when the vector is not of
 * pa_lane_step's forms. */
bool pa_lanes_base(LLVMValueRef ptrs, LLVMValueRef *base, LLVMValueRef *scalar, int64_t *first, int64_t *elem);

/* counts.c: block executions of one call, by interpreting the function's control flow on
 * the integer values its branches depend on (loop indices, arguments, constants), with
 * loops whose iterations all take the same path executed once and multiplied. */
typedef struct pa_counter pa_counter;
pa_counter *pa_counter_new(LLVMValueRef fn, const pa_function *f);
void pa_counter_free(pa_counter *c);
/* Adds one call's executions of each block to counts[n_blocks]. args[i] is the value of
 * integer parameter i when known[i] (others are unknown). Returns < 0 and fills d (naming
 * the function and the block) when a branch depends on something else (a load, an unknown
 * argument) or when counting would take too long. */
int pa_counter_run(pa_counter *c, const int64_t *args, const bool *known, int64_t *counts, pt_diag *d);
/* static_count_per_call of every block for a call with unknown arguments, or -1 everywhere
 * (returns < 0). */
int pa_static_counts(pa_function *f, LLVMValueRef fn);
/* profile.c: every block of f has a static count per call (so its counts need no counters:
 * the calls, counted at the entry block, times the static counts). */
bool pa_function_counted_statically(const pa_function *f);
/* taskgraph.c: nodes, edges and features of each block. */
void pa_taskgraph_build(pt_arena *a, LLVMValueRef fn, pa_function *f);
/* access.c: the strides of each memory node's address per enclosing loop (needs the loops). */
void pa_access_strides(pt_arena *a, LLVMValueRef fn, pa_function *f);
void pa_features_add(pa_features *sum, const pa_features *x);
const char *pa_type_elem(LLVMTypeRef t, int *lanes, int *bits);

/* instrument.c: counters, function-entry and memory hooks, the argument-unpacking wrapper. */
#define PA_SYM_CTX "__pa_ctx"
#define PA_SYM_ENTER "__pa_enter"
#define PA_SYM_ACCESS "__pa_access"
#define PA_SYM_FLUSH "__pa_flush"
#define PA_SYM_MAIN "__pa_main"
#define PA_SYM_PHASE "__pa_phase"
#define PA_SYM_BLOCK "__pa_block"
/* count_blocks[f] false: only the entry block of function f gets a counter (its calls; the
 * other blocks' counts come from static trip counts). NULL: every block. */
typedef enum {
  PA_HOOKS_NONE,     /* block counts only */
  PA_HOOKS_EVERY,    /* a hook call before every access (rate 1) */
  PA_HOOKS_FILTERED, /* SHARDS' hash tested inline; a block whose test passes (a sampled line,
                        or any line during a burst) calls __pa_block once */
  PA_HOOKS_BUFFERED, /* rate 1: each access appends (address, bytes x 2^16 + function) to the
                        thread's buffer inline; __pa_flush feeds the tracker when it fills */
  PA_HOOKS_WINDOWED, /* buffered, behind a gate: each block counts the thread's `gate` word
                        down by its accesses and calls __pa_phase when it goes negative; it
                        appends its accesses only while the `recording` word is set (time
                        windows, time counted in accesses) */
} pa_hook_mode;
/* The buffer (pa_thread_state): a block appends at most PA_BUF_MAX_ITEMS accesses (blocks with
 * more call the hook directly) and flushes at its end once more than PA_BUF_WORDS words are
 * used, so PA_BUF_WORDS + 2 x PA_BUF_MAX_ITEMS words always suffice. Functions with an index
 * >= 2^16 are hooked directly too. */
#define PA_BUF_WORDS 2048
#define PA_BUF_MAX_ITEMS 256
#define PA_BUF_OFFSET_POS 8 /* byte offsets in pa_thread_state, checked by a static assert */
#define PA_BUF_OFFSET_BUF 16
#define PA_GATE_OFFSET 24
#define PA_RECORDING_OFFSET 32
#define PA_REPEATS_OFFSET 40 /* line filter: uint64_t *, [function][PA_REUSE_BINS] repeats */
#define PA_LOCALS_OFFSET 48  /* void *: the thread's region for moved locals (locals.c), or NULL */
#define PA_COUNTS_OFFSET 56  /* uint64_t *: the thread's block counters, one per block of the module */
/* The sampled slow path (PA_HOOKS_FILTERED): a block stores its accesses' addresses (and a
 * memory intrinsic's length, or a masked access's mask, after its address) at the start of the
 * thread's buffer and, when
 * an inline test passes, calls __pa_block(state, desc, passed, first): desc is a constant of
 * PA_DESC_HEADER words (items, function, repeat bin) and PA_DESC_ITEM per item (flags | bytes;
 * a filtered item's stride in bytes per iteration, a masked one's bytes a lane; its address's
 * word in the buffer; the bit of `passed` its inline test sets: its own, or its line group's, pa_line_groups); passed: bit
 * b < 63 for the b-th test that passed, bit 63 for any later one; first: the filtered items'
 * loop is in its first iteration. Blocks of at most 64 items end their descriptor with 64
 * words: the set of items (bit k for item k) each bit of `passed` stands for. */
#define PA_DESC_HEADER 3
#define PA_DESC_ITEM 4
#define PA_DESC_FILTERED (1ULL << 62) /* line filter: hooked when its line changed and is sampled */
#define PA_DESC_ALWAYS (1ULL << 61)   /* no inline test (over 4 lines, a length, or a tracked local, locals.c): always hooked (filtered: whenever it crossed) */
#define PA_DESC_DYNAMIC (1ULL << 60)  /* its length is the buffer word after its address */
#define PA_DESC_MASKED (1ULL << 59)   /* a masked load or store (at most 64 lanes), or a lane of
                                         a gather or scatter, whose mask is not a constant: the
                                         bytes are the whole vector's (or lane's), the inline
                                         test's bound; the word after its address is the mask,
                                         bit k lane k (a lane's own: bit 0), and the item's
                                         second word a lane's bytes */
#define PA_DESC_BYTES ((1ULL << 59) - 1)
/* line_groups.c: accesses of one block whose addresses differ by constants and leave no whole
 * line untouched between them (at most 4 lines from the lowest address to the highest end):
 * together they touch exactly the lines of [leader's address, + bytes), so one inline test of
 * those lines tells whether any of them may be sampled. group_of[k]: item k's group, -1 when
 * bytes[k] is 0 or over 4 lines (tested on its own); base_off[k] (grouped items only): item k's
 * address - the leader's of its group's base, a constant; returns the number of groups. */
typedef struct {
  int leader;     /* the item with the lowest address */
  uint64_t bytes; /* from the leader's address to the group's last byte, + 1 */
  int n_items;
  int base;    /* the first group whose addresses differ from this one's by a constant */
  int64_t off; /* the leader's address - that first group's leader's */
} pa_line_group;
int pa_line_groups(LLVMTargetDataRef td, LLVMValueRef *addrs, const uint64_t *bytes, int n, int *group_of,
                   int64_t *base_off, pa_line_group *groups);
/* line_groups.c: for each address (NULL: none), the first of addrs whose address differs from
 * it by a constant (base_of[k] = k when none) and that constant, off[k] = its - the first's. */
void pa_address_bases(LLVMTargetDataRef td, LLVMValueRef *addrs, int n, int *base_of, int64_t *off);
/* line_filter.c: the loads and stores the per-reference line filter applies to (one-line,
 * 1..63 bytes per iteration of an innermost loop without calls whose iteration touches at most
 * 64 lines, in a block that runs every iteration), each with its address as an integer (built
 * just before it), its stride (bytes per iteration) and its loop's `first` flag (an i1 phi in
 * the header: true in the loop's first iteration). Its line is the previous iteration's unless
 * `first` or the address is within |stride| of the line's edge the walk enters from. bin: the
 * distance bin its repeats are counted in (the loop body's lines - 1, a bound). Call before
 * anything else is inserted into fn; returns how many (*out: free). */
typedef struct {
  LLVMValueRef inst, addr, first;
  int64_t stride;
  int bin;
} pa_filtered_access;
int pa_line_filter_plan(LLVMBuilderRef b, LLVMValueRef fn, const pa_function *f, pa_filtered_access **out);
/* loop_counters.c: the innermost loops of fn (profile function f) whose blocks that run once
 * per iteration are counted by the loop's iterations, added to the thread's counters at its
 * exits (the conditions are in the file). Plan after pa_line_filter_plan and before any block
 * moves; NULL: none (or out of memory: the counters stay in the loops, the same profile). */
typedef struct pa_loop_counters pa_loop_counters;
pa_loop_counters *pa_loop_counters_plan(LLVMBuilderRef b, LLVMValueRef fn, const pa_function *f);
/* Block bi's counter is added at its loop's exits (nothing to count in the block). */
bool pa_loop_counters_count(const pa_loop_counters *r, int bi);
/* After the function's hooks: closes the loops' own counters and adds at each exit. */
void pa_loop_counters_finish(pa_loop_counters *r, LLVMBuilderRef b, LLVMValueRef counts, int block_base);
void pa_loop_counters_free(pa_loop_counters *r);
typedef struct {
  pa_hook_mode mode;
  const bool *count_blocks; /* above; NULL: every block */
  /* The static profile of the same module (NULL: none): its loops and strides choose the
   * accesses the per-reference line filter applies to, and its loops' trip counts the cold
   * blocks (PA_HOOKS_FILTERED only, both). */
  const pa_profile *profile;
  bool line_filter;
  /* Cold blocks (executed at most 1/PA_COLD_RATIO as often as their function's busiest, by
   * the static trip counts) call __pa_block on every execution, which tests their lines
   * itself, instead of testing them inline first: less code to compile for the same profile
   * (the runtime's tests are the inline ones). true: inline tests everywhere (sessions 7-16). */
  bool inline_cold;
  /* Innermost loops' block counters loaded, added and stored on every iteration (sessions 7-17)
   * instead of added at the loop's exits from its iterations. */
  bool counters_in_memory;
} pa_hook_opts;
#define PA_COLD_RATIO 256
/* *locals_bytes: the locals region each thread needs (pa_move_locals; 0: none). Sampled hooks
 * (PA_HOOKS_FILTERED): *locals_map, when not NULL, is a bitmap of the region's lines that every
 * access reaches the runtime for (pa_move_locals' tracked lines; the caller frees it). */
int pa_instrument(LLVMModuleRef mod, const pa_hook_opts *o, int64_t *locals_bytes, uint64_t **locals_map, pt_diag *d);
/* locals.c: moves the static allocas of the instrumented functions fns (states: each one's
 * entry-hook result) to fixed offsets of the calling thread's locals region (the word at
 * PA_LOCALS_OFFSET of its state), each function's past those of the functions that may be
 * active below it (its callers, and the callers of a function passed as a call's argument),
 * keeping each alloca for threads that have no region. Nothing is moved in a module where a
 * function is called through a pointer, its address escapes otherwise, or calls recurse, nor
 * where the region would pass PA_LOCALS_BYTES. Returns the region's bytes (0: nothing moved).
 * The hooks' addresses of those arrays are then the region's, whatever codegen does with the
 * frame. */
#define PA_LOCALS_BYTES ((int64_t)16 << 20)
/* The static allocas of fns (before instrumentation) whose every use the hooks see by its
 * address (loads, stores, atomics, masked and memory intrinsics, through getelementptrs, casts,
 * selects, phis and vectors of pointers; lifetime and debug intrinsics and compares allowed):
 * in a sampled run every access to their lines can reach the tracker, so it tracks them at
 * weight 1 (pa_tracker_set_locals). One whose pointer escapes (a call's argument, a stored value,
 * an integer) is not tracked. NULL when out of memory (nothing tracked). */
typedef struct pa_tracked_locals pa_tracked_locals;
pa_tracked_locals *pa_tracked_locals_new(LLVMTargetDataRef td, LLVMValueRef *fns, int nf);
void pa_tracked_locals_free(pa_tracked_locals *t);
/* An access at addr (an item's address, a gather lane extracted from such a vector, or a
 * getelementptr of either: a constant mask's first active lane) may be to a tracked alloca: its
 * inline test always passes. */
bool pa_tracked_local_access(const pa_tracked_locals *t, LLVMValueRef addr);
/* *tracked_map (when tracked_map and tracked are given): NULL, or a bitmap over the region's
 * lines of those that only tracked allocas use (the caller frees it). */
int64_t pa_move_locals(LLVMBuilderRef b, LLVMTargetDataRef td, LLVMValueRef *fns, LLVMValueRef *states, int nf,
                       const pa_tracked_locals *tracked, uint64_t **tracked_map);
/* The entry exists and each spec argument fits its parameter's type. */
int pa_spec_check(LLVMModuleRef mod, const char *source, const pa_run_spec *spec, pt_diag *d);
int pa_add_main_wrapper(LLVMModuleRef mod, const pa_run_spec *spec, pt_diag *d);
/* skeleton.c (pa_options.addresses_only): removes from an instrumented module what no address,
 * branch, call or kept store needs; 1 and the count in *removed when it applied, 0 (and why) when
 * an address or branch may depend on what it would remove, and the module is unchanged. */
int pa_addresses_only(LLVMModuleRef mod, int *removed, char *why, size_t cap);

/* reuse.c: LRU stack distances with a Fenwick tree over last-access times. */
/* SHARDS' sampling hash: Fibonacci (multiplicative) hashing of the line number to
 * PA_SHARDS_BITS bits (Knuth 6.4); the instrumented code computes the same few operations
 * inline and calls the tracker only when hash < threshold. */
#define PA_SHARDS_BITS 24
#define PA_SHARDS_MUL 0x9e3779b97f4a7c15ULL /* 2^64 / golden ratio */
static inline uint64_t pa_shards_hash(uint64_t line) { return (line * PA_SHARDS_MUL) >> (64 - PA_SHARDS_BITS); }
typedef struct pa_tracker pa_tracker;
/* window (sampling only): lines tracked exactly; 0 = the power of two >= max(64, 16/rate),
 * < 0 = none (plain SHARDS). */
pa_tracker *pa_tracker_new(int n_groups, double sample_rate, int64_t window);
void pa_tracker_free(pa_tracker *t);
/* Records an access to `line` by `group`; returns the (scaled) distance, -1 for a cold miss,
 * -2 if the line is not in the sample. */
int64_t pa_tracker_access(pa_tracker *t, uint64_t line, int group);
/* Counts of one group, PA_TRACKER_WORDS of them: PA_REUSE_BINS bins then cold counted
 * exactly (at rate 1: every access; sampling: the accesses measured in bursts, "cold" then
 * meaning beyond the window), then the same for sampled lines (SHARDS estimates) from
 * PA_TW_SAMPLED, then the sampled accesses that fell outside a burst's measurement
 * (PA_TW_OUTSIDE); then, from PA_TW_QUARTERS, 4 x PA_REUSE_BINS counts by bin and quarter
 * (exact at rate 1; sampling: burst-measured below the window, SHARDS estimates beyond it),
 * which only say how each bin spreads over its quarters; then, from PA_TW_SETS, PA_SET_BINS
 * per-set distance counts (sampling: of the accesses a burst measured to lines it had seen);
 * then, from PA_TW_LLC, PA_SET_BINS per-set distance counts for each set count of
 * pa_tracker_set_llc (in its order; rate 1 only, zero otherwise). Then, from PA_TW_LOCAL, the bins and cold of the lines tracked at weight 1 beside the
 * sample (pa_tracker_set_locals; counted apart from PA_TW_SAMPLED's, whose weight is 1/R),
 * and at PA_TW_LOCAL_OUTSIDE their accesses outside a burst's measurement. From PA_TW_SHORT,
 * PA_REUSE_BINS counts of measured accesses to lines new to a burst whose window held fewer
 * than W lines (its warm-up ran out first): by the bin of the lines it held, a lower bound on
 * their distance (sampling only). At PA_TW_MEASURED, the accesses bursts measured. After
 * pa_tracker_finish the burst words (bins and cold, PA_TW_SHORT's, PA_TW_SETS') are weighted by
 * stratum, PA_BURST_UNIT per access; pa_tracker_hist takes only their shares.
 * pa_tracker_hist turns them into a histogram. Every word from PA_TW_QUARTERS to PA_TW_LOCAL
 * counts reuses (no first touches), so time windows (rate 1, where the local words stay 0)
 * scale them as reuses (pa_windows_combine). */
#define PA_TW_SAMPLED (PA_REUSE_BINS + 1)
#define PA_TW_OUTSIDE (2 * (PA_REUSE_BINS + 1))
#define PA_TW_QUARTERS (PA_TW_OUTSIDE + 1)
#define PA_TW_SETS (PA_TW_QUARTERS + 4 * PA_REUSE_BINS)
#define PA_TW_LLC (PA_TW_SETS + PA_SET_BINS)
#define PA_TW_LOCAL (PA_TW_LLC + PA_LLC_COUNTS * PA_SET_BINS)
#define PA_TW_LOCAL_OUTSIDE (PA_TW_LOCAL + PA_REUSE_BINS + 1)
#define PA_TW_SHORT (PA_TW_LOCAL_OUTSIDE + 1)
#define PA_TW_MEASURED (PA_TW_SHORT + PA_REUSE_BINS)
#define PA_BURST_UNIT 64 /* what a measured access of weight 1 adds after pa_tracker_finish */
#define PA_TRACKER_WORDS (PA_TW_MEASURED + 1)
/* pa_tracker_access for lines first..last in order, the results ignored; returns
 * pa_tracker_bursting after them (the runtime's slow path: one call per access). */
bool pa_tracker_access_lines(pa_tracker *t, uint64_t first, uint64_t last, int group);
const uint64_t *pa_tracker_counts(const pa_tracker *t, int group);
/* Sampling with bursts: the accesses that follow come from the block `key` (a constant unique to
 * it, in function `group`) until the next call; NULL: from no block. */
void pa_tracker_stratum(pa_tracker *t, const void *key, int group);
/* After the last access: the burst words of each group weighted by stratum (reuse.c). */
void pa_tracker_finish(pa_tracker *t);
void pa_tracker_hist(const uint64_t *counts, double rate, int64_t window, pa_reuse_hist *h);
/* Rate 1, before the first access: per-set distances also for these n set counts (valid for
 * pa_options.llc_sets), counted from PA_TW_LLC. False (nothing changed) when sampling, for
 * invalid counts, or out of memory. */
bool pa_tracker_set_llc(pa_tracker *t, int n, const int *sets);
/* h's llc bins from counts' PA_TW_LLC words, for the n set counts the tracker was given. */
void pa_tracker_llc_hist(const uint64_t *counts, int n, const int *sets, pa_reuse_hist *h);
/* True while a burst wants every access (not only sampled lines). */
bool pa_tracker_bursting(const pa_tracker *t);
int64_t pa_tracker_window(const pa_tracker *t); /* exact-window lines; 0 at rate 1 */
/* Sampling only, before the first access: lines first_line + i with bit i of map set (i <
 * n_lines; the map is copied) are tracked at weight 1, every access (a moved locals region,
 * whose few hot lines a 1/R sample would over- or under-count), the others still sampled at
 * weight 1/R; a distance is then the weighted count of the distinct lines between. False
 * (nothing changed) at rate 1, for an empty map, or out of memory. */
bool pa_tracker_set_locals(pa_tracker *t, uint64_t first_line, const uint64_t *map, int64_t n_lines);
bool pa_tracker_is_local(const pa_tracker *t, uint64_t line);
int pa_reuse_bin(int64_t distance);
int pa_reuse_quarter(int64_t distance); /* 0..3: the quarter of its bin (0 for distances < 2) */
/* Warm-ups only set the LRU order the measured windows start from, so repeats of a line still
 * in a small direct-mapped filter are not fed to the tracker; a line is fed (as `group`) when
 * it leaves the filter, and the filter's lines in the order of their last access when the
 * warm-up ends (pa_warm_filter_flush). Zero-initialised. */
#define PA_WARM_FILTER_LINES 256 /* a power of two */
typedef struct {
  struct { uint64_t line, stamp; } slot[PA_WARM_FILTER_LINES];
  uint64_t clock;
} pa_warm_filter;
void pa_warm_filter_access(pa_warm_filter *f, pa_tracker *t, uint64_t line, int group);
void pa_warm_filter_flush(pa_warm_filter *f, pa_tracker *t, int group);
/* Time sampling (trace.c's parallel bodies, the windowed run): the exact counts of the first
 * window (first_len of the n units) and of the later ones (counted units in all windows),
 * [n_groups][PA_TRACKER_WORDS] each, added to acc as counts of the whole range. */
void pa_windows_combine(int n_groups, const double *first, const double *rest, double n, double first_len,
                        double counted, double *acc);

/* runtime.c: the hooks the instrumented code calls, and their per-run state. */
typedef struct pa_runtime pa_runtime;
/* Its first word: the inline test's limit on line x PA_SHARDS_MUL (SHARDS' threshold shifted to
 * the product's top PA_SHARDS_BITS bits; UINT64_MAX during a burst, 0 for a thread never hooked). */
typedef struct pa_thread_state pa_thread_state;
/* n_blocks: the module's blocks (functions in order), each thread's counters; NULL when out of
 * memory. */
pa_runtime *pa_runtime_new(int n_functions, int n_blocks, double sample_rate, int64_t window, bool track_reuse);
void pa_runtime_free(pa_runtime *rt);
pa_thread_state *pa_rt_enter(pa_runtime *rt, int32_t fid);
void pa_rt_access(pa_thread_state *st, const void *addr, int64_t bytes, int32_t fid);
void pa_rt_flush(pa_thread_state *st); /* the buffered accesses, in order, then empties it */
/* A sampled block's slow path: in program order, each item whose inline test passed (and every
 * item once a hooked access changed the limit: a burst started or ended) is tested on its own. */
void pa_rt_block(pa_thread_state *st, const uint64_t *desc, uint64_t passed, int64_t first);
void pa_runtime_flush_all(pa_runtime *rt); /* after the run: every thread's remainder */
/* Windowed runs (PA_HOOKS_WINDOWED, rate 1): o's windows over `accesses`, the accesses the
 * run is expected to make (static counts); before any thread enters. */
void pa_runtime_set_windows(pa_runtime *rt, const pa_trace_opts *o, int64_t accesses);
/* Before the run, rate 1: every thread's tracker also keeps per-set stacks for these set counts
 * (pa_tracker_set_llc); false for a sampled run or invalid counts. */
bool pa_runtime_set_llc(pa_runtime *rt, int n, const int *sets);
void pa_rt_phase(pa_thread_state *st); /* the gate passed zero */
/* Tracker counts of a thread slot and function (windowed: scaled to the whole run). */
void pa_runtime_counts(const pa_runtime *rt, int slot, int fid, uint64_t *out);
int pa_runtime_threads(const pa_runtime *rt);
/* A thread whose stack is [stack, + stack_bytes) gets `locals` as its region for moved locals
 * (pa_move_locals); threads on other stacks get none. Before the run, at most PA_MAX_THREADS. */
void pa_runtime_add_locals(pa_runtime *rt, const void *stack, size_t stack_bytes, void *locals);
/* Sampling: the region lines with their bit set in map (n_lines, copied) are tracked at weight 1
 * in each thread's own region (pa_tracker_set_locals); returns how many there are. Before the
 * run. */
int64_t pa_runtime_set_locals_map(pa_runtime *rt, const uint64_t *map, int64_t n_lines);
bool pa_runtime_overflowed(const pa_runtime *rt); /* a thread beyond PA_MAX_THREADS ran code */
/* A thread's buffers could not be allocated (it ran on the shared spare ones, its counts and
 * accesses mixed with others'): the run's results are not to be used. */
bool pa_runtime_out_of_memory(const pa_runtime *rt);
/* The block counts of the run: every thread's counters added up, n_blocks words. */
void pa_runtime_block_counts(const pa_runtime *rt, uint64_t *out);
uint64_t pa_runtime_thread_mask(const pa_runtime *rt, int fid);
/* Line filter: the accesses of a thread slot and function that repeated their reference's
 * line, per distance bin (PA_REUSE_BINS words). */
const uint64_t *pa_runtime_repeats(const pa_runtime *rt, int slot, int fid);
const pa_tracker *pa_runtime_tracker(const pa_runtime *rt, int slot);

/* jit.c: an instrumented module compiled in this process (by one LLJIT for the process's
 * life, under the codegen options run.c's runs have always had), its code kept until
 * released. Takes the module (in a context nothing else uses meanwhile); on failure, -1 and
 * the cause in error. One compile at a time: safe to call from any thread. */
typedef struct {
  uint64_t entry;                      /* the address of `entry` */
  struct LLVMOrcOpaqueResourceTracker *tracker; /* the module's code and symbols */
} pa_jit_code;
int pa_jit_compile(LLVMModuleRef mod, const char *entry, pa_jit_code *out, char *error, size_t cap);
void pa_jit_release(pa_jit_code *c); /* the code is unmapped, its symbols free again */

/* run_args.c: the kernel's arguments: one 8-byte slot each (read by __pa_main), buffers at
 * fixed addresses filled with seeded data. The parent makes them on a thread of its own while
 * it compiles (the fill is 1-10 ms of a suite candidate's fixed cost; the addresses do not
 * depend on when), and keeps them for the next run with the same arguments: a child's writes
 * go to its own copies of the pages, so the parent's stay as filled. */
static inline size_t pa_round_up(size_t x, size_t to) { return (x + to - 1) / to * to; }
/* A buffer argument between two PROT_NONE pages: an overrun faults, and the fault address
 * names the argument. The end is 64-byte aligned, so overruns under 64 bytes go unseen. */
typedef struct {
  char *map;
  size_t map_len;
  char *lo, *hi; /* the user range */
  int arg, sub;
  int64_t count;
} pa_guarded_buffer;
#define PA_POOL_STACK_BYTES ((size_t)8 << 20)
typedef struct {
  const pa_run_spec *spec;
  pa_guarded_buffer *bufs;
  int n_bufs;
  uint64_t *slots;
  uintptr_t cursor; /* where the run's next fixed mapping goes (pa_map_at) */
  struct pa_mapping {
    void *p;
    size_t len;
  } *maps; /* besides the buffers': pointer arrays' and pool stacks' */
  int n_maps;
  /* a pool argument: the pool is made in the child, its stacks here */
  int pool_arg, pool_threads;
  char *pool_stacks;
  int rc;
  char error[256]; /* its own: the compile's errors are the caller's meanwhile */
} pa_arg_setup;
/* len bytes mapped read-write at *cursor (anywhere when that range is taken), the cursor moved
 * 2 MiB past them; MAP_FAILED on failure. flags: added to MAP_PRIVATE | MAP_ANONYMOUS. */
void *pa_map_at(uintptr_t *cursor, size_t len, int flags);
/* The run's arguments (a process-wide cache: one run at a time, run.c's lock): the kept ones
 * when spec has the same arguments and seed; otherwise new ones, made on `maker` (*making set;
 * the caller joins it before forking, then reads rc and error). */
pa_arg_setup *pa_run_arguments(const pa_run_spec *spec, pthread_t *maker, bool *making);
void pa_drop_kept_arguments(void); /* unmaps and frees the kept arguments */

/* run.c: results of the instrumented run, filled by a child process. */
typedef struct {
  int n_functions, n_blocks_total;
  uint64_t *counts;      /* per block, functions in order */
  uint64_t *thread_mask; /* per function */
  uint64_t *hist;        /* [thread][function][PA_TRACKER_WORDS] tracker counts */
  uint64_t *repeats;     /* [thread][function][PA_REUSE_BINS] line-filtered repeats */
  int64_t locals_lines;  /* lines of a thread's locals region tracked at weight 1 (sampling) */
  int threads;
  double seconds;
  int addresses_removed; /* pa_options.addresses_only: instructions left out of the run */
  char addresses_whole[192]; /* ... or why it did not apply ("" when applied or not asked) */
} pa_run_result;
/* fill.c: count values of type t from pt_rng_next's draws after state s0 (floats in [-1, 1),
 * integers in [0, 100)), the run's argument data */
void pa_fill_random(void *dst, pa_scalar_type t, int64_t count, uint64_t s0);

/* Work of the caller's that the run does not need, done by the parent once the child is forked
 * (the parent only waits for it then); NULL: none. */
typedef struct {
  void (*fn)(void *arg);
  void *arg;
} pa_run_meanwhile;
int pa_run(const pa_module *m, const pa_profile *p, const pa_run_spec *spec, const pa_options *opt,
           const pa_run_meanwhile *meanwhile, pa_run_result *out, pt_diag *d);
void pa_run_result_free(pa_run_result *r);

#endif
