/* Random annotation of a sketch, after Ansor's init-population rules (TVM
 * sketch_policy_rules.cc): fill tile sizes from the factorizations of each extent, change
 * compute locations of untiled stages, fuse and parallelize outer loops, set the auto-unroll
 * pragma of reductions, fuse and vectorize innermost spatial loops. portent's additions: the
 * innermost tile of the last spatial axis is drawn, most of the time, among the lengths that
 * fill vector registers best (lane multiples, else most of one register); only such lengths
 * and powers of two are vectorized; tile sizes are redrawn, most of the time, until the
 * innermost tile fits the register file and (when asked) its blocks fit L1/L2 and its inner
 * reduction loop is long enough. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sketch_internal.h"

static const int auto_unroll_cpu[] = {0, 16, 64, 512}; /* Ansor's auto_unroll_configs_cpu */

int sk_divisors(int64_t n, int64_t *out, int cap) {
  int k = 0;
  for (int64_t f = 1; f * f <= n; f++)
    if (n % f == 0 && k < cap) out[k++] = f;
  int small = k;
  for (int i = small - 1; i >= 0 && k < cap; i--)
    if (out[i] * out[i] != n) out[k++] = n / out[i];
  return k;
}

/* Draws one of the schemes (l1..ln) whose product divides `extent` with ln <= max_inner
 * (Ansor's GetFactorizationSchemes) uniformly, by reservoir sampling over the enumeration.
 * lanes > 0 keeps only innermost lengths that are multiples of it. */
typedef struct {
  int n;
  int64_t max_inner, lanes, count;
  int vclass; /* with lanes: only innermost lengths of this vector_class */
  int64_t cur[PC_MAX_DIMS], *chosen;
  pt_rng *rng;
} schemes;

/* Innermost vector lengths by how well they fill registers of `lanes`: 1 a multiple of the
 * lanes; 2 more than half of one register, which the backend widens (14 of 16 lanes runs a
 * 28x28 NCHW convolution at 197 GFLOP/s on one Zen 5 core, 4 lanes at 23 and 28, split
 * 16 + 12, at 11; docs/tuning.md); 3 more than a quarter of one (a 7-wide image row); 0 none
 * of these. */
static int vector_class(int64_t len, int64_t lanes) {
  if (len % lanes == 0) return 1;
  if (len < lanes && 2 * len > lanes) return 2;
  if (len < lanes && 4 * len > lanes) return 3;
  return 0;
}

static void enumerate(schemes *sc, int depth, int64_t rest) {
  if (depth == sc->n) {
    int64_t inner = sc->cur[depth > 0 ? depth - 1 : 0];
    if (inner > sc->max_inner || (sc->lanes > 0 && vector_class(inner, sc->lanes) != sc->vclass)) return;
    if (pt_rng_range(sc->rng, ++sc->count) == 0) memcpy(sc->chosen, sc->cur, sizeof(int64_t) * (size_t)sc->n);
    return;
  }
  int64_t div[256];
  int nd = sk_divisors(rest, div, 256);
  for (int i = 0; i < nd; i++) {
    sc->cur[depth] = div[i];
    enumerate(sc, depth + 1, rest / div[i]);
  }
}

/* With lanes > 0: innermost lengths of the best vector class the extent allows. */
static bool draw_lengths(int64_t extent, int n, int64_t max_inner, int64_t lanes, pt_rng *rng, int64_t *len) {
  if (n < 1 || n > PC_MAX_DIMS) return false;
  for (int vclass = 1; vclass <= (lanes > 0 ? 3 : 1); vclass++) {
    schemes sc = {n, max_inner, lanes, 0, vclass, {0}, len, rng};
    enumerate(&sc, 0, extent);
    if (sc.count > 0) return true;
  }
  return false;
}

/* InitChangeComputeLocation. */
static void change_compute_location(pc_state *s, pt_rng *rng) {
  pt_diag d = {0};
  for (int sid = s->n_stages - 1; sid >= 0; sid--) {
    const pc_stage *st = &s->stages[sid];
    const pc_op *op = &s->prog->ops[st->op];
    if (op->is_placeholder || st->at == PC_AT_INLINE) continue;
    if (sk_stage_is_tiled(s, sid) || sk_needs_multi_level_tiling(s->prog, st->op)) continue;
    int cand[64][2];
    int n = sk_compute_location_candidates(s, sid, cand, 64);
    int choice = (int)pt_rng_range(rng, n + 2);
    if (choice == 0) {
      if (!sk_stage_has_reduce(s, sid) && st->at == PC_AT_ITER) sk_apply(s, sk_step(PC_STEP_CI, sid), &d);
    } else if (choice == 1) {
      if (st->at != PC_AT_ROOT) sk_apply(s, sk_step(PC_STEP_CR, sid), &d);
    } else {
      pc_step ca = sk_step(PC_STEP_CA, sid);
      ca.target_stage_id = cand[choice - 2][0];
      ca.target_iter_id = cand[choice - 2][1];
      sk_apply(s, ca, &d);
    }
    pt_diag_clear(&d);
  }
}

/* InitParallel's annotate_parallel: fuse the outermost spatial loops until the degree
 * exceeds cores x 16 or a loop holds attached stages; with nothing to parallelize here,
 * descend into the stages attached at the first loop. */
static void annotate_parallel(pc_state *s, int sid, int offset, int cores, int depth) {
  if (depth > PC_MAX_STAGES) return;
  pt_diag d = {0};
  const pc_stage *st = &s->stages[sid];
  int64_t degree = 1;
  int n_fuse = 0, it = offset;
  for (; it < st->n_leaves; it++) {
    const pc_iter *x = &st->nodes[st->leaves[it]];
    if (x->kind == PC_ITER_REDUCE || x->annotation != PC_ANN_NONE) break;
    n_fuse++;
    degree *= x->extent;
    if (degree > (int64_t)cores * 16) break;
    if (sk_iter_has_attached(s, sid, it)) break;
  }
  if (degree == 1 && it < st->n_leaves && sk_iter_has_attached(s, sid, it)) {
    int node = st->leaves[it];
    for (int a = 0; a < s->n_stages; a++)
      if (s->stages[a].at == PC_AT_ITER && s->stages[a].attach_stage == sid && s->stages[a].attach_node == node)
        annotate_parallel(s, a, 0, cores, depth + 1);
    annotate_parallel(s, sid, it + 1, cores, depth + 1);
  }
  if (n_fuse == 0) return;
  if (n_fuse > 1) {
    pc_step fu = sk_step(PC_STEP_FU, sid);
    for (int k = 0; k < n_fuse; k++) fu.ids[fu.n_ids++] = offset + k;
    if (sk_apply(s, fu, &d)) return;
  }
  pc_step an = sk_step(PC_STEP_AN, sid);
  an.iter_id = offset;
  an.annotation = PC_ANN_PARALLEL;
  sk_apply(s, an, &d);
}

static bool vector_friendly(int64_t len, int lanes) { return len >= 2 && ((len & (len - 1)) == 0 || vector_class(len, lanes) > 0); }

/* InitVectorization: fuse up to the innermost spatial loops (one when tiled) within the
 * vector length limit, and vectorize them. */
static void vectorize(pc_state *s, int sid, int lanes, int64_t max_len, pt_rng *rng) {
  pt_diag d = {0};
  const pc_stage *st = &s->stages[sid];
  int64_t prod = 1;
  int n = 0;
  bool tiled = sk_stage_is_tiled(s, sid);
  while (n < st->n_leaves) {
    int leaf = st->n_leaves - 1 - n;
    if (sk_iter_has_attached(s, sid, leaf)) break;
    const pc_iter *it = &st->nodes[st->leaves[leaf]];
    if (it->kind == PC_ITER_REDUCE || it->annotation != PC_ANN_NONE) break;
    if (tiled && n != 0) break;
    prod *= it->extent;
    if (prod > max_len) break;
    n++;
  }
  if (n > 1) n = 1 + (int)pt_rng_range(rng, n - 1);
  if (n == 0) return;
  int64_t len = 1;
  for (int k = 0; k < n; k++) len *= st->nodes[st->leaves[st->n_leaves - 1 - k]].extent;
  if (!vector_friendly(len, lanes)) return;
  if (n > 1) {
    pc_step fu = sk_step(PC_STEP_FU, sid);
    for (int k = st->n_leaves - n; k < st->n_leaves; k++) fu.ids[fu.n_ids++] = k;
    if (sk_apply(s, fu, &d)) return;
  }
  pc_step an = sk_step(PC_STEP_AN, sid);
  an.iter_id = s->stages[sid].n_leaves - 1;
  an.annotation = PC_ANN_VECTORIZE;
  sk_apply(s, an, &d);
}

/* The annotation rules after the tile sizes are in place. */
static void annotate(pc_state *s, const pc_sketch_opts *o, pt_rng *rng) {
  pt_diag d = {0};
  change_compute_location(s, rng);
  for (int sid = 0; sid < s->n_stages; sid++) {
    const pc_stage *st = &s->stages[sid];
    if (st->at == PC_AT_ROOT && !s->prog->ops[st->op].is_placeholder) annotate_parallel(s, sid, 0, o->num_cores, 0);
  }
  for (int sid = 0; sid < s->n_stages; sid++) {
    const pc_stage *st = &s->stages[sid];
    if (st->at == PC_AT_INLINE || s->prog->ops[st->op].is_placeholder || !sk_stage_has_reduce(s, sid)) continue;
    pc_step pr = sk_step(PC_STEP_PR, sid);
    snprintf(pr.pragma, sizeof pr.pragma, "auto_unroll_max_step$%d", auto_unroll_cpu[pt_rng_range(rng, 4)]);
    sk_apply(s, pr, &d);
    pt_diag_clear(&d);
  }
  for (int sid = 0; sid < s->n_stages; sid++) {
    const pc_stage *st = &s->stages[sid];
    if (st->at == PC_AT_INLINE || s->prog->ops[st->op].is_placeholder) continue;
    vectorize(s, sid, o->vector_lanes, (int64_t)o->vector_lanes * 4, rng);
  }
}

/* InitFillTileSize on a copy of the sketch's steps. portent's register rule: three draws in
 * four keep drawing (up to 32 times) until every tiled stage's innermost tile needs between 4
 * and vector_registers - 4 registers: enough independent accumulators to cover the FMA
 * latency (4 cycles x 2 pipes on Zen 4/5 and Skylake-SP), few enough to leave registers for
 * the broadcast and the loaded operands. portent's cache and reduction rules, in the same
 * draws when the options ask for them: the blocks of the tile must also fit L1 and L2, and
 * the reduction loop inside the register tile (r1) must be long enough to amortize loading
 * and storing the accumulators (sketch_cache.c); if no draw satisfies them all, the first that
 * satisfied the register rule is kept, so they never override the register rule. */
static bool secondary_rules_hold(const pc_sketches *sk, int i, const pc_step *steps) {
  const pc_sketch_opts *o = &sk->o;
  if ((o->cache_bytes[0] > 0 || o->cache_bytes[1] > 0) && !sk_tiles_fit_caches(sk, i, steps)) return false;
  return o->min_reduction_tile <= 1 || sk_tiles_reduce_enough(sk, i, steps);
}

int sk_fill_tiles(const pc_sketches *sk, int i, pt_rng *rng, pc_step *steps) {
  const pc_state *sketch = sk->state[i];
  const pc_sketch_opts *o = &sk->o;
  int64_t max_regs = o->vector_registers > 8 ? o->vector_registers - 4 : 4;
  int tries = pt_rng_range(rng, 4) != 0 ? 32 : 1;
  bool rules = sk->tiles[i] && (o->cache_bytes[0] > 0 || o->cache_bytes[1] > 0 || o->min_reduction_tile > 1);
  pc_step *regs_ok = NULL; /* the first draw passing the register rule only */
  for (int t = 0; t < tries; t++) {
    memcpy(steps, sketch->steps, sizeof(pc_step) * (size_t)sketch->n_steps);
    for (int k = 0; k < sketch->n_steps; k++) {
      if (!(sk->fill[i][k] & SK_FILL)) continue;
      pc_step *sp = &steps[k];
      int64_t lanes = (sk->fill[i][k] & SK_FILL_VECTOR) && pt_rng_range(rng, 4) != 0 ? o->vector_lanes : 0;
      if (!draw_lengths(sp->extent, sp->n_lengths, o->max_innermost_factor, lanes, rng, sp->lengths) &&
          !draw_lengths(sp->extent, sp->n_lengths, o->max_innermost_factor, 0, rng, sp->lengths)) {
        free(regs_ok);
        return -1;
      }
    }
    int64_t regs = sk_register_tile(sketch->n_steps, steps, o->vector_lanes);
    if (regs != 0 && (regs < 4 || regs > max_regs)) continue;
    if (!rules || tries == 1 || secondary_rules_hold(sk, i, steps)) {
      free(regs_ok);
      return sketch->n_steps;
    }
    if (!regs_ok) {
      regs_ok = malloc(sizeof(pc_step) * (size_t)sketch->n_steps);
      memcpy(regs_ok, steps, sizeof(pc_step) * (size_t)sketch->n_steps);
    }
  }
  if (regs_ok) {
    memcpy(steps, regs_ok, sizeof(pc_step) * (size_t)sketch->n_steps);
    free(regs_ok);
  }
  return sketch->n_steps;
}

int sk_sample_into(const pc_sketches *sk, int i, pt_rng *rng, pc_state *scratch, pt_diag *d) {
  if (i < 0 || i >= sk->n) return pt_fail(d, PT_ERR_INVALID, "sketch %d out of range (%d sketches)", i, sk->n);
  pc_step *steps = malloc(sizeof(pc_step) * PC_MAX_STEPS);
  int n = sk_fill_tiles(sk, i, rng, steps), rc;
  if (n < 0) rc = pt_fail(d, PT_ERR_INVALID, "sketch %d: a split has no factorization", i);
  else rc = sk_replay_into(scratch, sk->p, n, steps, d);
  free(steps);
  if (rc == 0) annotate(scratch, &sk->o, rng);
  return rc;
}

pc_state *pc_sketch_sample(const pc_sketches *sk, int i, pt_rng *rng, pt_diag *d) {
  pc_state *s = sk_scratch_new(sk->p);
  if (s && sk_sample_into(sk, i, rng, s, d) == 0) return s;
  pc_state_free(s);
  return NULL;
}
