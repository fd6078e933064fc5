/* Cost aggregation: cost(P) = sum over functions and blocks of cost(BB) x ECount(BB), with
 * ECount = the block's executions charged to one thread (a parallel function's work divided
 * over the target's threads, rounded up to whole chunks of its parallel loop), plus fork/join
 * per parallel call; the extensions (steady state, memory-level parallelism, bandwidth) as
 * the options switch them. */
#include <assert.h>
#include <math.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

static const char *const bound_names[PP_BOUND_COUNT] = {"issue", "unit", "latency", "memory", "bandwidth",
                                                        "fork-join"};
const char *pp_bound_name(pp_bound b) { return b >= 0 && b < PP_BOUND_COUNT ? bound_names[b] : "?"; }

#define SWITCH_ROW(field, word, off_word, suffix) {#field, word, off_word, suffix, offsetof(pp_options, field)},
const pp_switch pp_switches[PP_N_SWITCHES] = {PP_SWITCHES(SWITCH_ROW)};
/* the bools from steady_state to spills, no_breakdown the one that is not a switch */
static_assert(offsetof(pp_options, spills) + sizeof(bool) - offsetof(pp_options, steady_state) == PP_N_SWITCHES + 1,
              "every switch of pp_options has its row in PP_SWITCHES (predictor/internal.h)");

void pp_options_default(pp_options *o) {
  memset(o, 0, sizeof *o);
  /* "steady+bw+overlap+strides": the best MAPE and Spearman on the Zen 5 set (docs/validation.md,
   * session 4) among the models that predict a set-conflicting column walk slower; "+lanes"
   * (session 7): its held-out half wins on Zen 4 and ties on Zen 5 (no scatter rows there);
   * "+sets" (session 10): Zen 4's set walks, the other sets unchanged (their targets have none);
   * "+carried" (session 10): better MAPE and Spearman on all five saved sets (conv_r50_1's
   * reductions through several blocks overlap as single-block ones do); "+shared" (session 10):
   * false sharing in parallel bodies, better on the 8- and 16-thread sets, the others unchanged;
   * "+far" (session 11): +sets for walks whose lines come back only past L1's capacity (Zen 4
   * mm512 #10 0.53 -> 1.02 of measured; MAPE better, mean Spearman 0.003 lower: ties in mm512's
   * naive k loop group), the other sets unchanged (their targets have no set walks); since
   * session 12 also gathers' and scatters' page-apart lanes that miss L1 or the L1 DTLB (MAPE
   * 0.1-0.4 points better on all five sets, mean Spearman equal or better); "+busy" (session
   * 14): parallel bodies at the share of a core the target's L1 rows give all-busy threads (the
   * 8- and 16-thread sets 1.5 and 2.7 points of MAPE better, Spearman better; one-thread sets
   * unchanged); "+forward" (session 14): loads spanning stores of the same iteration wait for
   * them (Zen 4 17.90% / 0.884 from 18.35% / 0.866; targets without the figure unchanged);
   * "+dirty" (session 15): read-modify-write walks in few L1 sets at the target's figure for
   * them (Zen 4, 11 workloads, 21.6% / 0.810 from 22.1% / 0.791; bert_qkv's column walks of C
   * 0.24-0.27 -> 0.65-0.74 of measured; targets without the figure unchanged); "+llcwalk"
   * (session 16): walks a page or more apart whose lines come back only where the latency curve
   * leaves the last level, at the strided walk's pace (Zen 4 top-1 0.873 -> 0.945: the two BERT
   * defaults; nothing else moves on the five sets); "+regs" (session 19): loops whose
   * accumulators do not fit the target's vector registers update them through memory at the
   * target's measured cost (Zen 3, AVX2: 29.5% / 0.759 / top-1 0.775 -> 25.2% / 0.755 / 0.895;
   * targets without the figure unchanged); "+memchain" (session 20): accumulators kept in memory,
   * a load, ops and a store back of one element that a later block of the iteration or the next
   * iteration loads again, at the target's store-to-load forwarding per link (mm512 #27 0.33 ->
   * 0.72 of its time on Zen 3; one candidate moves on each set but Zen 5's two); "+setsum"
   * (session 18, in the default since session 20 for accesses no wider than a line): a loop's
   * one-set-position misses on top of its other cycles (every AMD set better in MAPE and
   * Spearman: zen4 20.9% / 0.814 -> 19.0% / 0.838, zen3 24.9% / 0.764 -> 22.9% / 0.782); "+streams"
   * (session 15, in the default since session 21, when written objects were placed where the
   * harness starts them): rows walked side by side in one L1 set position at the target's figure
   * (mm1024's Spearman 0.63 -> 0.87 on Zen 4, 0.71 -> 0.90 on Zen 3; every AMD set better in MAPE
   * and Spearman; targets without the figure unchanged); "+setloads" (session 24): a set-conflicting
   * group read by several load instructions at the target's set_loads ratio to one load (Zen 3:
   * mm512 0.485 -> 0.637, mean Spearman 0.802 -> 0.816, MAPE 22.5% -> 22.3%; targets without the
   * figure unchanged) */
  o->steady_state = o->bandwidth = o->overlap = o->strides = o->lanes = o->l1_sets = o->carried = o->shared = true;
  o->far_sets = o->busy = o->forward = o->dirty_sets = o->llc_walks = o->spills = o->mem_chains = o->sets_sum = true;
  o->set_streams = o->set_loads = true;
}

int pp_options_preset(pp_options *o, const char *name) {
  int threads = o->threads;
  bool nb = o->no_breakdown;
  memset(o, 0, sizeof *o);
  o->threads = threads, o->no_breakdown = nb;
  /* NAME and the words of the switches as suffixes, in any order (PP_SWITCHES: NAME-assoc:
   * fully associative caches; NAME+overlap: loop instances overlap; NAME+strides: the
   * per-access strides, set conflicts and TLB; ...) */
  char base[160];
  snprintf(base, sizeof base, "%s", name);
  for (bool more = true; more;) {
    size_t len = strlen(base);
    more = false;
    for (int k = 0; k < PP_N_SWITCHES && !more; k++) {
      size_t n = strlen(pp_switches[k].word);
      if (pp_switches[k].suffix && len > n && strcmp(base + len - n, pp_switches[k].word) == 0)
        base[len - n] = 0, *(bool *)((char *)o + pp_switches[k].offset) = more = true;
    }
  }
  name = base;
  if (strcmp(name, "patent") == 0) return 0;
  if (strcmp(name, "steady") == 0) o->steady_state = true;
  else if (strcmp(name, "steady+mlp") == 0) o->steady_state = o->mlp = true;
  else if (strcmp(name, "patent+bw") == 0) o->bandwidth = true;
  else if (strcmp(name, "steady+bw") == 0) o->steady_state = o->bandwidth = true;
  else if (strcmp(name, "full") == 0) o->steady_state = o->mlp = o->bandwidth = true;
  else return PT_ERR_INVALID;
  return 0;
}

pp_predictor *pp_predictor_new(const ptg_target *t, const pp_options *o, pt_diag *d) {
  pp_options def;
  if (!o) pp_options_default(&def), o = &def;
  if (o->threads < 0 || o->threads > t->cores) {
    pt_fail(d, PT_ERR_INVALID, "--threads %d: target %s has %d cores (1..%d)", o->threads, t->name, t->cores,
            t->cores);
    return NULL;
  }
  pp_predictor *pp = calloc(1, sizeof *pp);
  pp->arena = pt_arena_new();
  pp->timelines = pt_alloc(pp->arena, pp_timeline_size() * PP_MAX_UNITS);
  pp->t = t, pp->o = *o;
  bool x86 = t->isa && strcmp(t->isa, "x86_64") == 0;
  pp->fuse_branch = o->fuse_branch && x86, pp->fold_loads = o->fold_loads && x86;
  pp->threads = o->threads > 0 ? o->threads : t->cores;
  pp->freq_ghz = t->frequency_ghz.value > 0 ? t->frequency_ghz.value : 3;
  pp->issue_width = t->issue_width.value > 0 ? t->issue_width.value : 4;
  pp->native_bits = t->native_vector_bits > 0 ? t->native_vector_bits : 128;
  pp->window = pp_reorder_window(t);
  pp->core_share = o->busy ? ptg_target_core_share(t, pp->threads) : 1;
  pp_tlb_figures(t, &pp->tlb_l1_entries, &pp->tlb_l2_entries, &pp->tlb_l2_hit, &pp->tlb_walkers);
  if (o->llc_walks && t->n_latency_curve >= 2) pp_llc_walks_init(pp);
  double fail = t->store_forward_fail_cycles.value;
  pp->forward_fail = o->forward && fail > 0 ? fail : 0;
  pp->l1_latency = pp_level_latency(t, 1);
  if (!isfinite(pp->l1_latency)) pp->l1_latency = 4;
  pp->mlp = t->memory.overlapping_misses.value >= 1 ? t->memory.overlapping_misses.value : 10;
  for (int i = 0; i < t->n_units && pp->n_units < PP_MAX_UNITS - 1; i++) {
    int u = pp->n_units++;
    pp->unit_names[u] = t->units[i].name;
    pp->unit_pipes[u] = t->units[i].pipes > 0 ? t->units[i].pipes : 1;
    pp->unit_first_pipe[u] = pp->n_pipes;
    pp->n_pipes += pp->unit_pipes[u];
  }
  return pp;
}

void pp_predictor_free(pp_predictor *pp) {
  if (!pp) return;
  pp_timelines_free(pp);
  pt_arena_free(pp->arena);
  free(pp);
}

/* Portent's outlined parallel bodies are named KERNEL_parN; a profile run on one thread does
 * not mark them parallel, but they are. */
static bool is_parallel(const pa_function *f) {
  if (f->parallel) return true;
  const char *p = strstr(f->name, "_par");
  if (!p) return false;
  p += 4;
  if (!*p) return false;
  for (; *p; p++)
    if (*p < '0' || *p > '9') return false;
  return true;
}

/* Share of a parallel function's executions the busiest thread runs: pt_parallel_for gives
 * each thread a contiguous chunk of the iterations. Where the profile says how the work falls
 * on them (chunk_work: a guard may pass only the first iterations, which all land in the
 * first chunk) that share; else whole chunks of the outermost loop's iterations, the work
 * spread evenly over them. */
static double work_fraction(const pa_function *f, int threads) {
  if (threads <= 1) return 1;
  double share = pa_chunk_share(f, threads);
  if (share > 0) return share;
  for (int l = 0; l < f->n_loops; l++)
    if (f->loops[l].parent < 0) {
      double e = (double)f->blocks[f->loops[l].header].count;
      if (e >= 1) return ceil(e / threads) / e;
    }
  return 1.0 / threads;
}

static double block_executions(const pa_profile *p, const pa_function *f, const pa_block *b) {
  /* the first letter before the call: this runs for every block, several times */
  if (p->counts_source && (p->counts_source[0] != 'n' || strcmp(p->counts_source, "none") != 0)) return (double)b->count;
  return b->static_count_per_call > 0 ? b->static_count_per_call * (f->calls > 0 ? (double)f->calls : 1) : 0;
}

static bool fp_accumulate(const pa_node *n) {
  return (n->op == PA_OP_ADD || n->op == PA_OP_SUB || n->op == PA_OP_FMA) && n->elem &&
         (n->elem[0] == 'f' || n->elem[0] == 'b');
}


/* Cycles of the longest chain of dependent float adds in a block that starts at an add with
 * an operand from another block: an accumulator whose phi lives in a loop header elsewhere.
 * The block's own steady state cannot see that recurrence (its edges stay in the block). An
 * operand that is a phi of the block counts as from another block unless a loop-carried edge
 * of the block feeds it (then it is the block's own recurrence, which the steady state sees):
 * a join phi merges what the block's predecessors computed (a padded convolution's guard
 * blocks pass the accumulator so, one tap per block: conv_r50_2 #8, session 6). */
static double open_chain(const pa_block *b, const pp_op *ops) {
  int n = b->n_nodes;
  if (n == 0) return 0;
  int in_preds[n];
  bool join[n];
  double len[n];
  for (int i = 0; i < n; i++) in_preds[i] = 0, len[i] = 0, join[i] = pp_is_phi(&b->nodes[i]);
  for (int e = 0; e < b->n_edges; e++)
    if (b->edges[e].kind == PA_EDGE_LOOP_CARRIED) join[b->edges[e].dst] = false;
  for (int e = 0; e < b->n_edges; e++)
    if (b->edges[e].kind != PA_EDGE_MEMORY && !join[b->edges[e].src]) in_preds[b->edges[e].dst]++;
  /* an add with both operands in the block starts no chain; one fed by a chain extends it
   * (data edges go forward, so one pass over nodes and one over edges in dst order suffice) */
  for (int i = 0; i < n; i++)
    if (fp_accumulate(&b->nodes[i]) && ops[i].parts > 0 && in_preds[i] < 2) len[i] = ops[i].latency;
  bool sorted = true;
  for (int e = 1; e < b->n_edges && sorted; e++) sorted = b->edges[e].dst >= b->edges[e - 1].dst;
  for (int pass = 0; pass < (sorted ? 1 : 2); pass++)
    for (int e = 0; e < b->n_edges; e++) {
      const pa_edge *ed = &b->edges[e];
      int i = ed->dst;
      if (ed->kind != PA_EDGE_DATA || ed->src >= i || len[ed->src] <= 0) continue;
      if (!fp_accumulate(&b->nodes[i]) || ops[i].parts == 0) continue;
      if (len[ed->src] + ops[i].latency > len[i]) len[i] = len[ed->src] + ops[i].latency;
    }
  double best = 0;
  for (int i = 0; i < n; i++)
    if (len[i] > best) best = len[i];
  return best;
}

static inline uint64_t mix(uint64_t h, uint64_t v) { return (h ^ v) * 1099511628211ull; }

static inline uint64_t two_ints(int a, int b) { return (uint32_t)a | (uint64_t)(uint32_t)b << 32; }

/* FNV-1a over what a block's schedule depends on: its nodes and edges, the load latency,
 * how many copies are scheduled and whether the compute split is wanted (two ints to a word:
 * every block of a prediction is keyed). *lane_walks: some node is
 * a gather or scatter with strides (pp_gather_lanes_missing_l1 may charge it). */
static uint64_t block_key(const pa_block *b, double load_latency, double copies, bool no_breakdown, bool strides,
                          bool *lane_walks) {
  *lane_walks = false;
  uint64_t h = 1469598103934665603ull;
  h = mix(h, two_ints(b->n_nodes, b->n_edges)), h = mix(h, two_ints(no_breakdown, b->loop >= 0));
  uint64_t bits;
  memcpy(&bits, &load_latency, sizeof bits);
  h = mix(h, bits);
  memcpy(&bits, &copies, sizeof bits);
  h = mix(h, bits);
  /* offsets relative to the first of the same object in the block: the stride model reads only
   * differences within an object, so unrolled copies of a body share one schedule */
  int64_t offset_base[32];
  bool based[32] = {false};
  for (int i = 0; i < b->n_nodes; i++) {
    const pa_node *n = &b->nodes[i];
    h = mix(h, two_ints(n->op, n->lanes)), h = mix(h, two_ints(n->bits, n->bytes));
    h = mix(h, n->is_memory), h = mix(h, (uint64_t)n->lane_step);
    *lane_walks |= n->op == PA_OP_GATHER && n->n_strides > 0;
    for (int k = 0; strides && k < n->n_strides; k++) h = mix(h, (uint64_t)n->strides[k]);
    if (strides && n->has_offset) {
      int a = n->array & 31; /* objects past 32 share bases: differences stay exact, sharing rarer */
      if (!based[a]) offset_base[a] = n->offset, based[a] = true;
      h = mix(h, (uint64_t)(n->offset - offset_base[a]));
    }
    /* names as pointers: the profile reader keeps one copy of each (a block the analyzer built
     * may hold equal names apart: it then misses the memo, and costs the work it saves) */
    h = mix(mix(h, (uint64_t)(uintptr_t)n->opcode), (uint64_t)(uintptr_t)n->elem);
  }
  for (int e = 0; e < b->n_edges; e++) h = mix(h, two_ints(b->edges[e].src, b->edges[e].dst)), h = mix(h, b->edges[e].kind);
  return h;
}

/* Accumulators carried around a loop live in float phis of its header: without one, the
 * float chains of its blocks end in stores and iterations overlap; with k of them, the
 * chains are taken to be k independent ones of equal length. A phi that takes a freshly
 * loaded value around the back edge carries no chain (pp_phi_reloads). */
static int header_fp_phis(const pa_function *f, int loop) {
  const pa_block *h = &f->blocks[f->loops[loop].header];
  int k = 0;
  for (int i = 0; i < h->n_nodes; i++)
    k += pp_is_phi(&h->nodes[i]) && h->nodes[i].elem && (h->nodes[i].elem[0] == 'f' || h->nodes[i].elem[0] == 'b') &&
         !pp_phi_reloads(f, loop, i);
  return k;
}

/* Entries into loop l: the executions of its preheader, unless the preheader is a block of
 * another loop that does not contain l (consecutive loops: the exit of one is the preheader of
 * the next, and it runs at every iteration of its own loop), whose exits, i.e. its own entries,
 * are l's. 0 when unknown. */
static double loop_entries(const pa_profile *p, const pa_function *f, int l) {
  for (int depth = 0; depth < 16 && l >= 0; depth++) {
    int ph = f->loops[l].preheader;
    if (ph < 0) return 0;
    int m = f->blocks[ph].loop;
    bool encloses = m < 0;
    for (int a = f->loops[l].parent; a >= 0 && !encloses; a = f->loops[a].parent) encloses = a == m;
    if (encloses) return block_executions(p, f, &f->blocks[ph]);
    l = m;
  }
  return 0;
}

/* Iterations of block b per entry into its loop: its executions over the loop's entries, or
 * the static trip count. */
static double loop_trip(const pa_profile *p, const pa_function *f, const pa_block *b, double execs) {
  const pa_loop *L = &f->loops[b->loop];
  double entries = loop_entries(p, f, b->loop);
  return entries >= 1 ? execs / entries : (double)L->trip_count;
}

/* Whether a block between two loops leaves a float value alone: it neither stores a float
 * nor computes with one. */
static bool passes_floats_on(const pa_block *b) {
  for (int i = 0; i < b->n_nodes; i++) {
    const pa_node *n = &b->nodes[i];
    bool fp = n->elem && (n->elem[0] == 'f' || n->elem[0] == 'b');
    if (fp && (n->is_memory ? n->op == PA_OP_STORE || n->op == PA_OP_GATHER : !pp_is_phi(n) && n->op != PA_OP_OTHER))
      return false;
  }
  return true;
}

/* The sibling loop whose float accumulator single-block loop l continues, or -1. An
 * accumulator has to leave its loop somewhere: when l has a float header phi and the blocks
 * from l's preheader back to a sibling single-block loop with a float header phi (one
 * predecessor each, in l's parent) neither store nor use a float, that loop's result enters
 * l's phi. A reduction loop split and unrolled becomes such a chain of loops (mm512 #26: eight
 * 64-iteration k loops, one after the other, one accumulator). */
static int handed_from(const pa_function *f, int l) {
  const pa_loop *L = &f->loops[l];
  if (L->n_blocks != 1 || header_fp_phis(f, l) == 0) return -1;
  for (int b = L->preheader, steps = 0; b >= 0 && steps < 8; steps++) {
    const pa_block *pb = &f->blocks[b];
    if (pb->loop != L->parent) {
      int m = pb->loop;
      return m >= 0 && m != l && f->loops[m].parent == L->parent && f->loops[m].n_blocks == 1 &&
                     header_fp_phis(f, m) > 0 ? m : -1;
    }
    if (!passes_floats_on(pb) || pb->n_preds != 1) return -1;
    b = pb->preds[0];
  }
  return -1;
}

/* Per single-block loop of f (scale[l], 1 for the others): the dynamic instructions of the
 * chain of loops that hand one accumulator on (handed_from) over this loop's own, per entry.
 * The work independent of one instance of such a loop lies past the whole chain, which is how
 * far the reorder window must reach to overlap it (loop_overlap). Instructions of the IR block
 * stand for each loop's uops. */
static void chain_scales(const pa_profile *p, const pa_function *f, double *scale) {
  int n = f->n_loops;
  int *from = malloc(sizeof(int) * (size_t)(n > 0 ? n : 1)), *head = malloc(sizeof(int) * (size_t)(n > 0 ? n : 1));
  double *work = malloc(sizeof(double) * (size_t)(n > 0 ? n : 1)), *group = calloc((size_t)(n > 0 ? n : 1), sizeof(double));
  for (int l = 0; l < n; l++) {
    from[l] = handed_from(f, l);
    const pa_block *h = &f->blocks[f->loops[l].header];
    double execs = block_executions(p, f, h), trip = loop_trip(p, f, h, execs);
    work[l] = (trip >= 1 ? trip : 1) * (double)(h->features.instructions > 0 ? h->features.instructions : 1);
  }
  for (int l = 0; l < n; l++) {
    int g = l;
    for (int steps = 0; from[g] >= 0 && steps < n; steps++) g = from[g];
    head[l] = g;
    group[g] += work[l];
  }
  for (int l = 0; l < n; l++) scale[l] = group[head[l]] / work[l] > 1 ? group[head[l]] / work[l] : 1;
  free(from), free(head), free(work), free(group);
}

/* Instances of a latency-bound single-block innermost loop that run at once: an instance
 * whose accumulator starts afresh (no float phi carried by the enclosing loop) does not wait
 * for the previous one, so the out-of-order core runs the next one as far as its reorder
 * window reaches past the current one: 1 + window / (trip count x uops per iteration x the
 * chain's scale, chain_scales), and never faster than the block's resource bound. 1 when the
 * loop is not such a loop. */
static double loop_overlap(const pp_predictor *pp, const pa_profile *p, const pa_function *f, const pa_block *b,
                           double execs, int uops, double cyc, double res, const double *chain_scale) {
  if (!pp->o.overlap || !pp->o.steady_state || b->loop < 0 || b->loop >= f->n_loops || uops <= 0) return 1;
  const pa_loop *L = &f->loops[b->loop];
  if (L->n_blocks != 1 || !(cyc > 1.1 * res) || !(res > 0)) return 1;
  if (L->parent >= 0 && header_fp_phis(f, L->parent) > 0) return 1; /* accumulator carried across instances */
  double trip = loop_trip(p, f, b, execs);
  if (!(trip >= 1)) return 1;
  double inflight = 1 + pp->window / (trip * uops * chain_scale[b->loop]);
  return inflight < cyc / res ? inflight : cyc / res;
}

/* Reductions of loop l that run at once. An accumulator is carried up from l through each
 * enclosing loop whose header phi gives l's header phi its initial value (pp_reduction_root;
 * without carried edges in the profile, any float phi of the enclosing header); it starts
 * afresh at each iteration of the loop around the outermost such loop (or at each instance of
 * that loop when none encloses it), so the out-of-order core overlaps consecutive ones as far as
 * its reorder window reaches: 1 + window / (uops per iteration), as loop_overlap does for
 * single-block loops (Karkhanis & Smith, ISCA 2004: the window bounds the work in flight). */
static double chain_overlap(const pp_predictor *pp, const pa_function *f, const pp_block_pred *blocks, int l) {
  int root = pp_reduction_root(f, l);
  if (root < 0)
    for (root = l; f->loops[root].parent >= 0 && header_fp_phis(f, f->loops[root].parent) > 0;) root = f->loops[root].parent;
  int outer = f->loops[root].parent;
  const pa_loop *L = &f->loops[outer >= 0 ? outer : root];
  double uops = 0;
  for (int k = 0; k < L->n_blocks; k++) uops += blocks[L->blocks[k]].uops * blocks[L->blocks[k]].ecount;
  double instances = blocks[L->header].ecount; /* iterations of the enclosing loop */
  if (outer < 0) {
    instances = L->preheader >= 0 ? blocks[L->preheader].ecount : 0;
    if (!(instances >= 1) && L->trip_count > 0) instances = blocks[L->header].ecount / (double)L->trip_count;
  }
  if (!(instances >= 1) || !(uops > 0)) return 1;
  return 1 + pp->window / (uops / instances);
}

/* Recurrences through several blocks (pp_carried_recurrence): a loop takes at least its chain
 * each time the chain's block runs, against all its blocks' cycles, inner loops
 * included (work the chain does not wait for overlaps it); the excess goes to the costliest of
 * the loop's own blocks. Innermost loops first, so an outer loop sees its inner ones' bounds. */
static void carried_bounds(pp_predictor *pp, const pa_function *f, pp_block_pred *blocks, double load_latency) {
  if (f->n_carried == 0 && !pp->o.mem_chains) return;
  double *execs = malloc(sizeof(double) * (size_t)(f->n_blocks + 1));
  for (int j = 0; j < f->n_blocks; j++) execs[j] = blocks[j].ecount;
  int max_depth = 0;
  for (int l = 0; l < f->n_loops; l++)
    if (f->loops[l].depth > max_depth) max_depth = f->loops[l].depth;
  for (int depth = max_depth; depth >= 1; depth--)
    for (int l = 0; l < f->n_loops; l++) {
      const pa_loop *L = &f->loops[l];
      if (L->depth != depth) continue;
      double need = pp_carried_recurrence(pp, f, l, load_latency, execs);
      if (pp->o.mem_chains) need = fmax(need, pp_memory_chains(pp, f, l, load_latency, execs));
      if (need <= 0) continue;
      if (pp->o.overlap) need /= chain_overlap(pp, f, blocks, l);
      double have = 0;
      int costliest = -1;
      for (int k = 0; k < L->n_blocks; k++) {
        int j = L->blocks[k];
        have += blocks[j].total_cycles;
        if (f->blocks[j].loop == l && blocks[j].ecount > 0 &&
            (costliest < 0 || blocks[j].total_cycles > blocks[costliest].total_cycles))
          costliest = j;
      }
      if (costliest < 0 || need <= have) continue;
      pp_block_pred *bp = &blocks[costliest];
      double extra = need - have;
      bp->total_cycles += extra;
      bp->compute_cycles += extra / bp->ecount;
      bp->cycles = bp->total_cycles / bp->ecount;
      bp->bound = PP_BOUND_LATENCY;
    }
  free(execs);
}

/* +sets: a loop takes at least the cycles its walks' L1 misses need where they fall in few L1
 * sets (pp_loop_l1_sets; +streams: pp_loop_set_streams; +llcwalk: its walks served past the
 * last level, pp_loop_llc_walks), against all its blocks' cycles as carried_bounds does; the
 * excess is memory time of the costliest of the loop's own blocks. */
/* trip[j]: block j's iterations per entry into its loop (0 outside loops). */
static void block_trips(const pa_profile *p, const pa_function *f, double *trip) {
  for (int j = 0; j < f->n_blocks; j++) {
    const pa_block *b = &f->blocks[j];
    trip[j] = b->loop >= 0 && b->loop < f->n_loops ? loop_trip(p, f, b, block_executions(p, f, b)) : 0;
  }
}

static void l1_set_bounds(pp_predictor *pp, const pa_profile *p, const pa_function *f, pp_block_pred *blocks) {
  const ptg_cache *l1 = ptg_target_cache(pp->t, 1);
  bool sets = pp->o.l1_sets && l1 && l1->n_set_walks > 0;
  bool streams = pp->o.l1_sets && pp->o.set_streams && l1 && l1->n_set_streams > 0;
  bool llc = pp->llc_least_stride > 0;
  if ((!sets && !streams && !llc) || f->n_loops == 0) return; /* nothing to bound by */
  double *trip = malloc(sizeof(double) * (size_t)(2 * f->n_blocks + 1)), *ecount = trip + f->n_blocks;
  block_trips(p, f, trip);
  for (int j = 0; j < f->n_blocks; j++) ecount[j] = blocks[j].ecount;
  for (int l = 0; l < f->n_loops; l++) {
    bool one_set = false;
    double set_need = sets ? pp_loop_l1_sets(pp, f, l, trip, ecount, &one_set) : 0, need = set_need;
    if (streams) need = fmax(need, pp_loop_set_streams(pp, f, l, trip, ecount));
    if (llc) need = fmax(need, pp_loop_llc_walks(pp, f, l, trip, ecount));
    if (need <= 0) continue;
    const pa_loop *L = &f->loops[l];
    double have = 0;
    int costliest = -1;
    for (int k = 0; k < L->n_blocks; k++) {
      int j = L->blocks[k];
      have += blocks[j].total_cycles;
      if (f->blocks[j].loop == l && blocks[j].ecount > 0 && (costliest < 0 || blocks[j].total_cycles > blocks[costliest].total_cycles))
        costliest = j;
    }
    /* +setsum: a one-set walk's misses on top of the loop's other cycles, not under them (Zen 4
     * measures bert_ffn1's k loop at about the sum) */
    if (pp->o.sets_sum && set_need > 0 && one_set) need = fmax(need, have + set_need);
    if (costliest < 0 || need <= have) continue;
    pp_block_pred *bp = &blocks[costliest];
    bp->total_cycles += need - have;
    bp->cycles = bp->total_cycles / bp->ecount;
    bp->bound = PP_BOUND_MEMORY;
  }
  free(trip);
}

pp_prediction *pp_predict(pp_predictor *pp, const pa_profile *p, pt_diag *d) {
  const ptg_target *t = pp->t;
  if (!p || p->version != PA_PROFILE_VERSION) {
    pt_fail(d, PT_ERR_INPUT, "%s: profile version %d, this predictor reads version %d", p ? p->source : "profile",
            p ? p->version : -1, PA_PROFILE_VERSION);
    return NULL;
  }
  bool counted = p->counts_source && strcmp(p->counts_source, "none") != 0;
  if (!counted) {
    bool any = false;
    for (int i = 0; i < p->n_functions && !any; i++)
      for (int j = 0; j < p->functions[i].n_blocks; j++) any |= p->functions[i].blocks[j].static_count_per_call > 0;
    if (!any) {
      pt_fail(d, PT_ERR_INVALID, "%s: the profile has no block counts (static, and no static trip counts): "
              "profile it with a run (portent analyze ... --spec RUN.json)", p->source);
      return NULL;
    }
  }
  /* the memo deduplicates within this profile only, so rates measure distinct profiles */
  if (++pp->memo_generation == 0) memset(pp->memo, 0, sizeof pp->memo), pp->memo_generation = 1;
  pp_prediction *r = calloc(1, sizeof *r);
  r->arena = pt_arena_new();
  r->target = t->name;
  r->threads = pp->threads;
  r->frequency_ghz = pp->freq_ghz;
  r->options = pp->o;
  r->levels = ptg_target_cache_levels(t) < PP_MAX_LEVELS ? ptg_target_cache_levels(t) : PP_MAX_LEVELS;
  r->n_functions = p->n_functions;
  r->functions = pt_alloc(r->arena, sizeof *r->functions * (p->n_functions ? p->n_functions : 1));
  int nb = 0;
  for (int i = 0; i < p->n_functions; i++) nb += p->functions[i].n_blocks;
  r->blocks = pt_alloc(r->arena, sizeof *r->blocks * (nb ? nb : 1));
  double hz = pp->freq_ghz * 1e9, by_bound[PP_BOUND_COUNT] = {0};
  int max_nodes = 1, fn_nodes = 1, fn_blocks = 1;
  for (int i = 0; i < p->n_functions; i++) {
    int sum = 0;
    for (int j = 0; j < p->functions[i].n_blocks; j++) {
      if (p->functions[i].blocks[j].n_nodes > max_nodes) max_nodes = p->functions[i].blocks[j].n_nodes;
      sum += p->functions[i].blocks[j].n_nodes;
    }
    if (sum > fn_nodes) fn_nodes = sum;
    if (p->functions[i].n_blocks > fn_blocks) fn_blocks = p->functions[i].n_blocks;
  }
  pp_op *ops_charged = malloc(sizeof(pp_op) * max_nodes), *ops_l1 = malloc(sizeof(pp_op) * max_nodes);
  /* each block's legalized graph, kept for the function's chains (pp_block_ops) */
  pp_op *kept = malloc(sizeof *kept * fn_nodes);
  int *kept_base = malloc(sizeof(int) * fn_blocks), *kept_from = malloc(sizeof(int) * fn_blocks);
  /* per node (lane_walks): lanes missing L1, cycles waiting for the TLB */
  double *missing = malloc(sizeof(double) * max_nodes), *tlb_wait = malloc(sizeof(double) * max_nodes);
  int max_loops = 1;
  for (int i = 0; i < p->n_functions; i++)
    if (p->functions[i].n_loops > max_loops) max_loops = p->functions[i].n_loops;
  double *loop_chain = malloc(sizeof(double) * max_loops), *loop_cycles = malloc(sizeof(double) * max_loops);
  int *loop_costliest = malloc(sizeof(int) * max_loops), *loop_phis = malloc(sizeof(int) * max_loops);
  double *chain_scale = malloc(sizeof(double) * max_loops);
  double footprint = p->reuse_total.cold;
  for (int i = 0; i < p->n_functions; i++) {
    const pa_function *f = &p->functions[i];
    pp_function_pred *fp = &r->functions[i];
    fp->name = f->name;
    fp->parallel = is_parallel(f);
    int active = fp->parallel ? pp->threads : 1;
    fp->work_fraction = fp->parallel ? work_fraction(f, pp->threads) : 1;
    const pa_reuse_hist *h = p->reuse_by_function && i < p->n_functions ? &p->reuse_by_function[i] : NULL;
    fp->load_latency = pp_memory_model_footprint(t, h, footprint, active, pp->o.fully_assoc, fp->hit_fraction);
    double stall_per_line = fp->load_latency - pp->l1_latency;
    if (stall_per_line < 0) stall_per_line = 0;
    double l1_bytes = 0;
    int first_block = r->n_blocks;
    double *trip = NULL, *loop_pages = NULL; /* block_trips and pp_loop_gather_pages, when a block has lane walks */
    for (int j = 0, base = 0; j < f->n_blocks; base += f->blocks[j++].n_nodes) kept_base[j] = base, kept_from[j] = -1;
    pp->kept_f = f, pp->kept_latency = fp->load_latency, pp->kept = kept;
    pp->kept_base = kept_base, pp->kept_from = kept_from;
    for (int l = 0; l < f->n_loops; l++)
      loop_chain[l] = loop_cycles[l] = 0, loop_costliest[l] = -1, loop_phis[l] = header_fp_phis(f, l), chain_scale[l] = 1;
    if (pp->o.overlap && pp->o.steady_state) chain_scales(p, f, chain_scale);
    if (pp->o.carried && pp->o.steady_state)
      for (int l = 0; l < f->n_loops; l++) {
        int k = pp_accumulating_phis(f, l);
        if (k >= 0) loop_phis[l] = k;
      }
    for (int j = 0; j < f->n_blocks; j++) {
      const pa_block *b = &f->blocks[j];
      pp_block_pred *bp = &r->blocks[r->n_blocks++];
      bp->function = i, bp->block = j, bp->function_name = f->name, bp->name = b->name;
      double execs = block_executions(p, f, b);
      bp->ecount = execs * fp->work_fraction;
      l1_bytes += bp->ecount * (double)(b->features.load_bytes + b->features.store_bytes);
      if (bp->ecount <= 0 || b->n_nodes == 0) continue;
      bool repeat = pp->o.steady_state && b->loop >= 0;
      /* Unrolled code repeats identical blocks: legalize and schedule each distinct one once. */
      double execs_key = repeat ? (bp->ecount < 8 ? floor(bp->ecount) : 8) : 0;
      bool lane_walks;
      uint64_t key = block_key(b, fp->load_latency, execs_key, pp->o.no_breakdown, pp->o.strides, &lane_walks);
      /* +far for gathers and scatters: their lanes that miss L1 (the function's trips once) */
      lane_walks &= pp->o.far_sets && pp->o.lanes && pp->o.strides && b->loop >= 0;
      if (lane_walks && !trip) {
        trip = malloc(sizeof(double) * (size_t)(f->n_blocks + f->n_loops)), block_trips(p, f, trip);
        loop_pages = trip + f->n_blocks;
        for (int l = 0; l < f->n_loops; l++) loop_pages[l] = -1;
      }
      if (lane_walks && loop_pages[b->loop] < 0) loop_pages[b->loop] = pp_loop_gather_pages(f, b->loop);
      for (int k = 0; lane_walks && k < b->n_nodes; k++) {
        missing[k] = pp_gather_lanes_missing_l1(pp, f, b, k, trip);
        tlb_wait[k] = pp_gather_lanes_tlb_cycles(pp, b, k, loop_pages[b->loop]);
        key = (key ^ (uint64_t)(missing[k] * 4096)) * 1099511628211ull;
        key = (key ^ (uint64_t)(tlb_wait[k] * 4096)) * 1099511628211ull;
      }
      pp_block_memo *memo = &pp->memo[key & (PP_MEMO - 1)];
      if (memo->key != key || key == 0 || memo->generation != pp->memo_generation) {
        pp_op *legal = kept + kept_base[j];
        pp_legalize_block(pp, b, fp->load_latency, legal);
        kept_from[j] = j, memo->ops_function = i, memo->ops_block = j;
        const pp_op *ops = legal; /* what is scheduled: the lane walks' charges on a copy */
        if (lane_walks) {
          pp_op *charged = memcpy(ops_charged, legal, sizeof *legal * b->n_nodes);
          for (int k = 0; k < b->n_nodes; k++) {
            if (missing[k] > 0) pp_charge_missing_lanes(pp, &b->nodes[k], missing[k], &charged[k]);
            if (tlb_wait[k] > 0 && charged[k].parts > 0) charged[k].occupancy += tlb_wait[k] / charged[k].parts; /* the unit waits */
          }
          ops = charged;
        }
        memo->resource = pp_resource_bound(pp, b->n_nodes, ops, &memo->issue, &memo->unit);
        double cyc = repeat ? pp_schedule_copies(pp, b->n_nodes, ops, b->n_edges, b->edges, bp->ecount, memo->resource)
                            : pp_schedule(pp, b->n_nodes, ops, b->n_edges, b->edges, false);
        double compute = cyc;
        if (!pp->o.no_breakdown && fp->load_latency > pp->l1_latency * 1.0001) {
          memcpy(ops_l1, ops, sizeof *ops * b->n_nodes);
          for (int k = 0; k < b->n_nodes; k++)
            if (ops_l1[k].is_load) ops_l1[k].latency = pp->l1_latency;
          compute = repeat ? pp_schedule_copies(pp, b->n_nodes, ops_l1, b->n_edges, b->edges, bp->ecount, memo->resource)
                           : pp_schedule(pp, b->n_nodes, ops_l1, b->n_edges, b->edges, false);
          if (compute > cyc) compute = cyc;
        }
        memo->key = key, memo->generation = pp->memo_generation, memo->cycles = cyc, memo->compute = compute;
        memo->uops = 0, memo->lines = 0;
        for (int k = 0; k < b->n_nodes; k++) {
          memo->uops += ops[k].parts;
          if (ops[k].is_load) memo->lines += ops[k].lines;
        }
        memo->chain = pp->o.steady_state && b->loop >= 0 ? open_chain(b, ops) : 0;
        memo->stride_trip = -1;
      } else {
        kept_from[j] = memo->ops_function == i ? memo->ops_block : -1;
      }
      double cyc = memo->cycles, compute = memo->compute, lines = memo->lines, res = memo->resource;
      int uops = memo->uops, unit = memo->unit;
      bool issue = memo->issue;
      double chain = memo->chain;
      bp->uops = uops;
      double overlap = loop_overlap(pp, p, f, b, execs, uops, cyc, res, chain_scale);
      if (overlap > 1) cyc /= overlap, compute /= overlap;
      bp->bound = res >= 0.9 * compute ? (issue ? PP_BOUND_ISSUE : PP_BOUND_UNIT) : PP_BOUND_LATENCY;
      if (bp->bound == PP_BOUND_UNIT) bp->unit = pt_strdup(r->arena, pp->unit_names[unit]); /* outlives pp */
      if (cyc > 1.1 * compute) bp->bound = PP_BOUND_MEMORY;
      if (pp->o.mlp) {
        /* Little's law: at most overlapping_misses accesses beyond L1 in flight, so a block
         * takes at least its lines x excess latency / overlapping_misses. */
        double stall = lines * stall_per_line / pp->mlp;
        if (stall > cyc) cyc = stall, bp->bound = PP_BOUND_MEMORY;
      }
      if (pp->o.strides && b->loop >= 0 && b->loop < f->n_loops) {
        /* what the reuse histograms cannot show: set-conflicting and page-crossing walks. Their
         * misses and data-TLB misses (latency added to independent loads) overlap, up to the
         * target's overlapping misses, as far as the reorder window reaches: an iteration
         * waiting on a miss of latency `longest` holds the window, which spans window / uops
         * iterations, so p x window / uops misses are in flight when p of the iterations miss
         * (Karkhanis & Smith, "A first-order superscalar processor model", ISCA 2004) */
        double trip = loop_trip(p, f, b, execs);
        if (memo->stride_trip != trip) {
          double miss, miss_inflight, tlb, longest;
          double window_iterations = memo->uops > 0 ? pp->window / memo->uops : INFINITY;
          pp_stride_stalls(pp, b, trip, window_iterations, &miss, &miss_inflight, &tlb, &longest);
          double inflight = pp->mlp, window = INFINITY;
          if (longest > 0 && memo->uops > 0) {
            window = miss / longest * pp->window / memo->uops;
            if (window < 1) window = 1;
            if (window < inflight) inflight = window;
          }
          /* +inflight: each level's misses in flight bound the latency its miss buffers hold
           * (pp_stride_stalls), and never more in flight than the window holds */
          double stall = pp->o.level_inflight ? fmax(miss_inflight, miss / window) : miss / inflight;
          memo->stride_trip = trip, memo->stride_stall = stall + tlb;
        }
        double stall = memo->stride_stall;
        if (stall > cyc) cyc = stall, bp->bound = PP_BOUND_MEMORY;
      }
      if (pp->o.shared && fp->parallel) {
        /* false sharing: each such store fetches its line from another core (sharing.c) */
        int shared = pp_shared_stores(f, b, pp->threads);
        double stall = shared > 0 ? shared * pp_sharing_store_cycles(t, pp->mlp) : 0;
        if (stall > cyc) cyc = stall, bp->bound = PP_BOUND_MEMORY;
      }
      if (pp->o.spills) {
        /* +regs: accumulators the registers cannot hold are updated through memory (spills.c) */
        double floor_cycles = pp_spill_floor(pp, f, b);
        if (floor_cycles > cyc) cyc = compute = floor_cycles, bp->bound = PP_BOUND_LATENCY;
      }
      bp->cycles = cyc;
      bp->compute_cycles = compute;
      bp->total_cycles = cyc * bp->ecount;
      if (pp->o.steady_state && b->loop >= 0 && b->loop < f->n_loops && loop_phis[b->loop] > 0) {
        int l = b->loop;
        loop_chain[l] += chain * bp->ecount / loop_phis[l];
        loop_cycles[l] += bp->total_cycles;
        if (loop_costliest[l] < 0 || bp->total_cycles > r->blocks[first_block + loop_costliest[l]].total_cycles)
          loop_costliest[l] = j;
      }
    }
    /* Steady state across a loop's blocks: an accumulator carried from block to block takes
     * at least its chain of add latencies per iteration (charged to the loop's costliest block). */
    for (int l = 0; l < f->n_loops; l++) {
      if (loop_costliest[l] < 0) continue;
      if (pp->o.carried && pp->o.overlap) loop_chain[l] /= chain_overlap(pp, f, r->blocks + first_block, l);
      if (loop_chain[l] > loop_cycles[l]) {
        pp_block_pred *bp = &r->blocks[first_block + loop_costliest[l]];
        double extra = loop_chain[l] - loop_cycles[l];
        bp->total_cycles += extra;
        bp->compute_cycles += extra / (bp->ecount > 0 ? bp->ecount : 1);
        bp->cycles = bp->total_cycles / (bp->ecount > 0 ? bp->ecount : 1);
        bp->bound = PP_BOUND_LATENCY;
      }
    }
    if (pp->o.carried && pp->o.steady_state) carried_bounds(pp, f, r->blocks + first_block, fp->load_latency);
    if ((pp->o.l1_sets || pp->o.llc_walks) && pp->o.strides) l1_set_bounds(pp, p, f, r->blocks + first_block);
    free(trip);
    /* +busy: the cycles of one thread's core when every thread of the body keeps it busy */
    fp->core_share = fp->parallel && pp->threads > 1 ? pp->core_share : 1;
    double slowdown = 1 / fp->core_share;
    bool *waits = NULL;
    if (pp->forward_fail > 0 && f->n_blocks > 0 && (waits = malloc(sizeof(bool) * (size_t)f->n_blocks))) pp_forward_waits(f, waits);
    for (int j = first_block; j < r->n_blocks; j++) {
      pp_block_pred *bp = &r->blocks[j];
      /* +forward: the iteration waits for its stores to reach L1 (forwarding.c), on top of
       * whatever bound it (the measured loop's accumulator chain does not hide it) */
      if (waits && waits[j - first_block] && bp->ecount > 0) {
        bp->cycles += pp->forward_fail, bp->total_cycles += pp->forward_fail * bp->ecount;
        bp->bound = PP_BOUND_MEMORY;
      }
      if (slowdown != 1) bp->cycles *= slowdown, bp->compute_cycles *= slowdown, bp->total_cycles *= slowdown;
      if (bp->bound != PP_BOUND_UNIT) bp->unit = NULL; /* a later bound (memory, latency) replaced the unit's */
      if (bp->compute_cycles > bp->cycles) bp->compute_cycles = bp->cycles; /* a rounding over: all of it */
      fp->cycles += bp->total_cycles;
      fp->compute_cycles += bp->compute_cycles * bp->ecount;
      by_bound[bp->bound] += bp->total_cycles / hz;
    }
    free(waits);
    /* where misses cost nothing, compute and all cycles are summed from other products: a
     * compute share a rounding above the whole is all of it (no negative memory time) */
    if (fp->compute_cycles > fp->cycles) fp->compute_cycles = fp->cycles;
    fp->memory_cycles = fp->cycles - fp->compute_cycles;
    fp->seconds = fp->cycles / hz;
    /* Bytes each level delivered to one thread: L1 serves every load and store; level L+1
     * serves L's misses, a line each. */
    double acc = h ? h->accesses * fp->work_fraction : 0, line = PA_LINE_BYTES;
    fp->bytes_from[0] = l1_bytes;
    double below = 1;
    for (int L = 1; L <= r->levels; L++) {
      below -= fp->hit_fraction[L - 1];
      if (below < 0) below = 0;
      int idx = L < r->levels ? L : PP_MAX_LEVELS;
      fp->bytes_from[idx] = acc * below * line;
    }
    fp->bound = PP_BOUND_LATENCY;
    double best = 0;
    for (int j = 0; j < r->n_blocks; j++)
      if (r->blocks[j].function == i && r->blocks[j].total_cycles > best)
        best = r->blocks[j].total_cycles, fp->bound = r->blocks[j].bound;
    if (pp->o.bandwidth && fp->cycles > 0) {
      for (int L = 1; L <= r->levels + 1; L++) {
        int idx = L <= r->levels ? L - 1 : PP_MAX_LEVELS;
        double gbs = ptg_target_bandwidth(t, L <= r->levels ? L : 0, active, PTG_BW_READ);
        if (!(gbs > 0)) continue;
        double sec = fp->bytes_from[idx] / (gbs * 1e9 / active);
        if (sec > fp->bandwidth_seconds)
          fp->bandwidth_seconds = sec, fp->bandwidth_level = L <= r->levels ? L : PP_MAX_LEVELS + 1;
      }
      if (fp->bandwidth_seconds > fp->seconds) {
        r->bandwidth_extra_seconds += fp->bandwidth_seconds - fp->seconds;
        by_bound[PP_BOUND_BANDWIDTH] += fp->bandwidth_seconds - fp->seconds;
        fp->seconds = fp->bandwidth_seconds;
        fp->bound = PP_BOUND_BANDWIDTH;
      }
    }
    if (fp->parallel && f->calls > 0) {
      double regions = (double)f->calls / (f->threads > 1 ? f->threads : 1);
      double fj = ptg_target_fork_join_ns(t, pp->threads);
      fp->fork_join_seconds = isfinite(fj) ? regions * fj * 1e-9 : 0;
      fp->seconds += fp->fork_join_seconds;
      r->fork_join_seconds += fp->fork_join_seconds;
      by_bound[PP_BOUND_FORK_JOIN] += fp->fork_join_seconds;
    }
    r->seconds += fp->seconds;
    r->cycles += fp->cycles;
    r->compute_seconds += fp->compute_cycles / hz;
    r->memory_seconds += fp->memory_cycles / hz;
  }
  pp->kept_f = NULL;
  free(kept), free(kept_base), free(kept_from);
  free(ops_charged), free(ops_l1), free(missing), free(tlb_wait), free(loop_chain), free(loop_cycles), free(loop_costliest), free(loop_phis), free(chain_scale);
  r->bound = PP_BOUND_ISSUE;
  for (int b = 0; b < PP_BOUND_COUNT; b++)
    if (by_bound[b] > by_bound[r->bound]) r->bound = (pp_bound)b;
  r->n_fallbacks = pp->n_fallbacks;
  r->fallbacks = pt_alloc(r->arena, sizeof(char *) * (pp->n_fallbacks ? pp->n_fallbacks : 1));
  for (int k = 0; k < pp->n_fallbacks; k++) r->fallbacks[k] = pt_strdup(r->arena, pp->fallbacks[k]);
  return r;
}

pp_prediction *pp_predict_profile(const pa_profile *p, const ptg_target *t, const pp_options *o, pt_diag *d) {
  pp_predictor *pp = pp_predictor_new(t, o, d);
  if (!pp) return NULL;
  pp_prediction *r = pp_predict(pp, p, d);
  pp_predictor_free(pp);
  return r;
}

void pp_prediction_free(pp_prediction *r) {
  if (!r) return;
  pt_arena_free(r->arena);
  free(r);
}
