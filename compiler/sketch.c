/* Sketch generation for CPU, after Ansor's rules (TVM sketch_policy_rules.cc), applied from
 * the last stage to the first: inline strictly-inlineable elementwise stages (and padding),
 * rfactor reductions with little spatial parallelism, cache_write a multi-level-tiled stage
 * without a fusible consumer, multi-level tiling "SSRSRS" with or without fusing the
 * elementwise consumer (follow splits + compute_at at tile levels 1 and 2). Tile sizes are
 * left at 1 here and filled by the random annotation (sketch_annotate.c). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tune_internal.h"
#include "sketch_internal.h"

void pc_sketch_opts_default(pc_sketch_opts *o) {
  memset(o, 0, sizeof *o);
  o->vector_lanes = 16;
  o->num_cores = 2;
  o->max_innermost_factor = 64; /* Ansor's max_innermost_split_factor */
  o->vector_registers = 32;     /* zmm0-31 (AVX-512), v0-31 (NEON) */
}

/* One partial sketch on the work list: a state, the stage to look at next, which split
 * steps hold tile sizes to fill, and a description of the rules applied. */
typedef struct {
  pc_state *s;
  int stage;
  unsigned char fill[PC_MAX_STEPS];
  char desc[SK_DESC_LEN];
} partial;

typedef struct {
  partial *items;
  int n, cap;
} worklist;

static void push(worklist *w, pc_state *s, int stage, const unsigned char *fill, const char *desc, const char *add) {
  if (w->n == w->cap) {
    w->cap = w->cap ? 2 * w->cap : 16;
    w->items = realloc(w->items, sizeof(partial) * (size_t)w->cap);
  }
  partial *p = &w->items[w->n++];
  p->s = s;
  p->stage = stage;
  memcpy(p->fill, fill, sizeof p->fill);
  size_t len = strlen(desc) < sizeof p->desc ? strlen(desc) : sizeof p->desc - 1;
  memcpy(p->desc, desc, len);
  p->desc[len] = 0;
  if (desc[0] && add[0]) strncat(p->desc, ", ", sizeof p->desc - strlen(p->desc) - 1);
  strncat(p->desc, add, sizeof p->desc - strlen(p->desc) - 1);
}

static const char *op_name(const pc_state *s, int sid) { return s->prog->ops[s->stages[sid].op].name; }

static void cum_lengths(const pc_state *s, int sid, int64_t *space, int64_t *reduce) {
  const pc_stage *st = &s->stages[sid];
  *space = *reduce = 1;
  for (int l = 0; l < st->n_leaves; l++) {
    const pc_iter *it = &st->nodes[st->leaves[l]];
    if (it->kind == PC_ITER_SPATIAL) *space *= it->extent;
    else if (it->kind == PC_ITER_REDUCE) *reduce *= it->extent;
  }
}

static bool needs_rfactor(const pc_state *s, int sid, int cores) {
  const pc_op *op = &s->prog->ops[s->stages[sid].op];
  if (op->n_reduce == 0) return false;
  int64_t space, reduce;
  cum_lengths(s, sid, &space, &reduce);
  if (sk_needs_multi_level_tiling(s->prog, s->stages[sid].op)) return !(space > reduce || space > (int64_t)cores * 16);
  return reduce > 1 && reduce > cores;
}

/* A split with unit lengths (filled later); returns the step index or -1. */
static int split_unit(pc_state *s, int sid, int leaf, int n_lengths, unsigned char *fill) {
  pc_step st = sk_step(PC_STEP_SP, sid);
  st.iter_id = leaf;
  st.extent = s->stages[sid].nodes[s->stages[sid].leaves[leaf]].extent;
  st.n_lengths = n_lengths;
  for (int k = 0; k < n_lengths; k++) st.lengths[k] = 1;
  st.inner_to_outer = true;
  pt_diag d = {0};
  if (sk_apply(s, st, &d)) return -1;
  if (fill) {
    const pc_iter *it = &s->stages[sid].nodes[s->stages[sid].nodes[s->stages[sid].leaves[leaf]].split_parent];
    bool last_axis = it->rel == PC_REL_ROOT && it->kind == PC_ITER_SPATIAL && it->root_axis == s->prog->ops[s->stages[sid].op].ndim - 1;
    fill[s->n_steps - 1] = SK_FILL | (last_axis ? SK_FILL_VECTOR : 0);
  }
  return s->n_steps - 1;
}

/* DoMultiLevelTiling with "SSRSRS": every spatial axis in 4 levels, every reduction axis in
 * 2, reordered s0 s1 r0 s2 r1 s3. Collects the spatial split step ids. */
static int multi_level_tiling(pc_state *s, int sid, unsigned char *fill, int *spatial_splits, int *n_spatial) {
  static const char format[] = "SSRSRS";
  int space_levels[4][PC_MAX_LEAVES], reduce_levels[2][PC_MAX_LEAVES], ns = 0, nr = 0;
  const pc_stage *st = &s->stages[sid];
  int n_orig = st->n_leaves;
  int node_of[PC_MAX_LEAVES];
  for (int l = 0; l < n_orig; l++) node_of[l] = st->leaves[l];
  *n_spatial = 0;
  for (int k = 0; k < n_orig; k++) {
    st = &s->stages[sid];
    int leaf = -1;
    for (int l = 0; l < st->n_leaves; l++)
      if (st->leaves[l] == node_of[k]) leaf = l;
    if (leaf < 0) return -1;
    bool spatial = st->nodes[node_of[k]].kind == PC_ITER_SPATIAL;
    int levels = spatial ? 4 : 2;
    int step = split_unit(s, sid, leaf, levels - 1, fill);
    if (step < 0) return -1;
    st = &s->stages[sid];
    for (int i = 0; i < levels; i++) {
      if (spatial) space_levels[i][ns] = st->leaves[leaf + i];
      else reduce_levels[i][nr] = st->leaves[leaf + i];
    }
    if (spatial) {
      spatial_splits[(*n_spatial)++] = step;
      ns++;
    } else
      nr++;
  }
  /* Reorder by node ids: positions of the wanted nodes among the current leaves. */
  st = &s->stages[sid];
  pc_step re = sk_step(PC_STEP_RE, sid);
  int si = 0, ri = 0;
  for (const char *f = format; *f; f++) {
    int *lvl = *f == 'S' ? space_levels[si++] : reduce_levels[ri++];
    int cnt = *f == 'S' ? ns : nr;
    for (int k = 0; k < cnt; k++)
      for (int l = 0; l < st->n_leaves; l++)
        if (st->leaves[l] == lvl[k]) re.ids[re.n_ids++] = l;
  }
  if (re.n_ids != st->n_leaves) return -1;
  pt_diag d = {0};
  return sk_apply(s, re, &d) ? -1 : 0;
}

/* FollowTiling + compute_at: the consumer follows the producer's spatial splits for
 * `level` levels and the producer is computed at the consumer's last level-`level` loop. */
static int fuse_into_consumer(pc_state *s, int sid, int consumer, const int *spatial_splits, int n_spatial, int level) {
  pt_diag d = {0};
  const pc_stage *cs = &s->stages[consumer];
  if (cs->n_leaves != n_spatial) return -1;
  int groups[PC_MAX_LEAVES][4];
  /* TVM follows `level` lengths (n_split = level). portent's state.c takes n_split >= 2
   * only; level 1 then follows two lengths, which splits the consumer's inner region once
   * more below the same attach point: same computation, one more consumer loop. */
  int n_split = level;
  for (int k = 0; k < n_spatial; k++) {
    pc_step fsp = sk_step(PC_STEP_FSP, consumer);
    fsp.iter_id = k * (n_split + 1);
    fsp.src_step_id = spatial_splits[k];
    fsp.n_split = n_split;
    if (sk_apply(s, fsp, &d)) {
      if (k > 0 || n_split != 1) return -1;
      pt_diag_clear(&d);
      fsp.n_split = n_split = 2;
      if (sk_apply(s, fsp, &d)) return -1;
    }
    cs = &s->stages[consumer];
    for (int i = 0; i <= n_split; i++) groups[k][i] = cs->leaves[fsp.iter_id + i];
  }
  pc_step re = sk_step(PC_STEP_RE, consumer);
  for (int i = 0; i <= n_split; i++)
    for (int k = 0; k < n_spatial; k++)
      for (int l = 0; l < cs->n_leaves; l++)
        if (cs->leaves[l] == groups[k][i]) re.ids[re.n_ids++] = l;
  if (sk_apply(s, re, &d)) return -1;
  pc_step ca = sk_step(PC_STEP_CA, sid);
  ca.target_stage_id = consumer;
  ca.target_iter_id = level * n_spatial - 1;
  return sk_apply(s, ca, &d);
}

static bool is_padding(const pc_state *s, int sid) {
  const pc_op *op = &s->prog->ops[s->stages[sid].op];
  return !op->is_placeholder && !op->is_output && op->n_reduce == 0 && strstr(op->name, "pad") != NULL;
}

/* Applies the rules to one partial sketch, pushing its successors. */
static void expand(const pc_sketches *sk, partial *cur, worklist *out) {
  pc_state *s = cur->s;
  int sid = cur->stage;
  const pc_op *op = &s->prog->ops[s->stages[sid].op];
  int cores = sk->o.num_cores;
  if (op->is_placeholder || s->stages[sid].at != PC_AT_ROOT) {
    push(out, pc_state_copy(s), sid - 1, cur->fill, cur->desc, "");
    return;
  }
  pt_diag d = {0};
  /* RuleAlwaysInline (CPU: strictly inlineable only); padding too, as the sketches
   * compute padding inline (Ansor leaves it to the compute-location sampling). */
  if (!op->is_output && op->n_reduce == 0 && (sk_is_strictly_inlineable(s->prog, s->stages[sid].op) || is_padding(s, sid))) {
    pc_state *c = pc_state_copy(s);
    if (sk_apply(c, sk_step(PC_STEP_CI, sid), &d) == 0) {
      push(out, c, sid - 1, cur->fill, cur->desc, "");
      return;
    }
    pc_state_free(c);
  }
  bool mlt = sk_needs_multi_level_tiling(s->prog, s->stages[sid].op);
  int ew_consumer = sk_single_elementwise_consumer(s, sid);
  bool has_chw = sk_has_cache_write_stage(s, sid);
  /* RuleAddRfactor: two variants, the factored loop outer or inner (then moved innermost). */
  if (needs_rfactor(s, sid, cores) && !has_chw) {
    for (int variant = 0; variant < 2; variant++) {
      pc_state *c = pc_state_copy(s);
      unsigned char fill[PC_MAX_STEPS];
      memcpy(fill, cur->fill, sizeof fill);
      const pc_stage *st = &c->stages[sid];
      int first_red = -1, n_red = 0;
      for (int l = 0; l < st->n_leaves; l++)
        if (st->nodes[st->leaves[l]].kind == PC_ITER_REDUCE) {
          if (first_red < 0) first_red = l;
          n_red++;
        }
      bool ok = first_red >= 0;
      if (ok && n_red > 1) {
        pc_step fu = sk_step(PC_STEP_FU, sid);
        for (int k = 0; k < n_red; k++) fu.ids[fu.n_ids++] = first_red + k;
        ok = sk_apply(c, fu, &d) == 0;
      }
      int n_space = op->ndim;
      ok = ok && split_unit(c, sid, first_red, 1, fill) >= 0;
      if (ok) {
        pc_step rf = sk_step(PC_STEP_RF, sid);
        rf.iter_id = first_red + variant;
        rf.factor_iter_id = n_space;
        ok = sk_apply(c, rf, &d) == 0;
      }
      if (ok && variant == 1) { /* the rf stage: its factored spatial axis innermost */
        pc_step re = sk_step(PC_STEP_RE, sid);
        for (int l = 0; l < c->stages[sid].n_leaves; l++)
          if (l != n_space) re.ids[re.n_ids++] = l;
        re.ids[re.n_ids++] = n_space;
        ok = sk_apply(c, re, &d) == 0;
      }
      if (ok) push(out, c, sid - 1, fill, cur->desc, variant ? "rfactor-inner" : "rfactor-outer");
      else pc_state_free(c);
      pt_diag_clear(&d);
    }
  }
  /* RuleAddCacheWrite: a local cache tiled and computed at the original (next visit). */
  if (mlt && ew_consumer < 0) {
    pc_state *c = pc_state_copy(s);
    pc_step chw = sk_step(PC_STEP_CHW, sid);
    snprintf(chw.scope, sizeof chw.scope, "local");
    if (sk_apply(c, chw, &d) == 0) push(out, c, sid, cur->fill, cur->desc, "cache_write");
    else pc_state_free(c);
    pt_diag_clear(&d);
  }
  /* RuleMultiLevelTilingWithFusion at levels 1 and 2. */
  if (mlt && ew_consumer >= 0) {
    for (int level = 1; level <= 2; level++) {
      pc_state *c = pc_state_copy(s);
      unsigned char fill[PC_MAX_STEPS];
      memcpy(fill, cur->fill, sizeof fill);
      int splits[PC_MAX_LEAVES], n_spatial = 0;
      char what[96];
      snprintf(what, sizeof what, "tile %.30s + fuse %.30s@%d", op_name(s, sid), op_name(s, ew_consumer), level);
      if (multi_level_tiling(c, sid, fill, splits, &n_spatial) == 0 &&
          fuse_into_consumer(c, sid, ew_consumer, splits, n_spatial, level) == 0)
        push(out, c, sid - 1, fill, cur->desc, what);
      else
        pc_state_free(c);
    }
    if (has_chw) return;
  }
  /* RuleMultiLevelTiling. */
  if (mlt) {
    pc_state *c = pc_state_copy(s);
    unsigned char fill[PC_MAX_STEPS];
    memcpy(fill, cur->fill, sizeof fill);
    int splits[PC_MAX_LEAVES], n_spatial = 0;
    char what[96];
    snprintf(what, sizeof what, "tile %.30s", op_name(s, sid));
    if (multi_level_tiling(c, sid, fill, splits, &n_spatial) == 0) {
      push(out, c, sid - 1, fill, cur->desc, what);
      return;
    }
    pc_state_free(c);
  }
  /* RuleSkipStage. */
  push(out, pc_state_copy(s), sid - 1, cur->fill, cur->desc, "");
}

pc_sketches *pc_sketches_generate(const pc_program *p, const pc_sketch_opts *o, pt_diag *d) {
  pc_sketches *sk = calloc(1, sizeof *sk);
  sk->p = p;
  if (o) sk->o = *o;
  else pc_sketch_opts_default(&sk->o);
  if (sk->o.vector_lanes < 1) sk->o.vector_lanes = 16;
  if (sk->o.num_cores < 1) sk->o.num_cores = 1;
  if (sk->o.max_innermost_factor < 1) sk->o.max_innermost_factor = 64;
  if (sk->o.vector_registers < 1) sk->o.vector_registers = 32;
  worklist cur = {0}, next = {0};
  pc_state *init = pc_state_new(p);
  if (!init) {
    pt_fail(d, PT_ERR_INVALID, "%s: too many stages for a schedule state", p->name);
    free(sk);
    return NULL;
  }
  unsigned char nofill[PC_MAX_STEPS] = {0};
  push(&cur, init, init->n_stages - 1, nofill, "", "");
  while (cur.n > 0) {
    next.n = 0;
    for (int i = 0; i < cur.n; i++) {
      partial *it = &cur.items[i];
      if (it->stage < 0) {
        if (sk->n < SK_MAX_SKETCHES) {
          sk->state[sk->n] = it->s;
          memcpy(sk->fill[sk->n], it->fill, sizeof it->fill);
          snprintf(sk->desc[sk->n], SK_DESC_LEN, "%s", it->desc[0] ? it->desc : "no tiling");
          sk->n++;
        } else
          pc_state_free(it->s);
        continue;
      }
      expand(sk, it, &next);
      pc_state_free(it->s);
    }
    worklist t = cur;
    cur = next;
    next = t;
  }
  free(cur.items);
  free(next.items);
  for (int i = 0; i < sk->n; i++) sk_tiles_build(sk, i);
  if (sk->n == 0) {
    pt_fail(d, PT_ERR_INVALID, "%s: no sketch could be generated", p->name);
    pc_sketches_free(sk);
    return NULL;
  }
  return sk;
}

int pc_sketches_count(const pc_sketches *sk) { return sk->n; }
const pc_state *pc_sketch_state(const pc_sketches *sk, int i) { return i >= 0 && i < sk->n ? sk->state[i] : NULL; }
const char *pc_sketch_describe(const pc_sketches *sk, int i) { return i >= 0 && i < sk->n ? sk->desc[i] : ""; }

void pc_sketches_free(pc_sketches *sk) {
  if (!sk) return;
  for (int i = 0; i < sk->n; i++) {
    pc_state_free(sk->state[i]);
    free(sk->tiles[i]);
  }
  free(sk);
}
