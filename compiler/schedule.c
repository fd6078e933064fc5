/* Ready-made schedules: the hand-written default (register tiles, vectorized innermost
 * spatial loop, parallel fused outer loops, padding inlined) and random valid step
 * sequences, used by tests to exercise every step kind against the reference. */
#include <stdio.h>
#include <string.h>

#include "internal.h"

static int apply(pc_state *s, pc_step st, pt_diag *d) { return pc_state_apply(s, &st, d); }

static pc_step step_of(pc_step_kind k, int stage) {
  pc_step st;
  memset(&st, 0, sizeof st);
  st.kind = k;
  st.stage_id = stage;
  return st;
}

static int split(pc_state *s, int stage, int iter, int n, const int64_t *len, pt_diag *d) {
  pc_step st = step_of(PC_STEP_SP, stage);
  st.iter_id = iter;
  st.extent = s->stages[stage].nodes[s->stages[stage].leaves[iter]].extent;
  st.n_lengths = n;
  memcpy(st.lengths, len, sizeof(int64_t) * (size_t)n);
  st.inner_to_outer = true;
  return apply(s, st, d);
}

static int64_t largest_divisor(int64_t n, const int64_t *cands, int nc) {
  for (int i = 0; i < nc; i++)
    if (n % cands[i] == 0) return cands[i];
  return 1;
}

static bool is_elementwise_pad(const pc_state *s, int sid) {
  const pc_op *op = &s->prog->ops[s->stages[sid].op];
  return !op->is_placeholder && !op->is_output && op->n_reduce == 0;
}

/* The vector length for an innermost extent: the largest power of two up to two native
 * vectors that divides it (LLVM accepts <28 x float>, but x86 backends lower such odd
 * widths element by element: conv_pw ran at 7 GFLOP/s that way). */
static int64_t vector_width_for(int64_t extent, int lanes) {
  for (int64_t v = 2 * (int64_t)lanes; v > 1; v /= 2)
    if (extent % v == 0) return v;
  return 1;
}

/* Tiles a reduction stage: spatial outer tiles, reduce loops, a row tile, the vector. */
static int tile_reduction(pc_state *s, int sid, int lanes, pt_diag *d) {
  const pc_op *op = &s->prog->ops[s->stages[sid].op];
  int ns = op->ndim, nr = op->n_reduce;
  /* A register tile of up to 8 rows by two vectors: 16 accumulators keep two FMA pipes of
   * latency 4 busy (measured on mm512: 8x32 runs 1.7x faster than 4x16). */
  int64_t vec = vector_width_for(op->shape[ns - 1], lanes);
  int64_t row_c[] = {8, 6, 4, 2};
  int64_t row = ns >= 2 ? largest_divisor(op->shape[ns - 2], row_c, 4) : 1;
  /* Leaves now: s0..s(ns-1), r0..r(nr-1). Split the last two spatial axes. */
  if (vec > 1 && split(s, sid, ns - 1, 1, &vec, d)) return -1;
  int last = ns - 1; /* position of the last spatial axis' outer part */
  if (row > 1 && ns >= 2 && split(s, sid, ns - 2, 1, &row, d)) return -1;
  /* Leaves: s0.. s(ns-3), [s(ns-2).0, s(ns-2).1], [s(ns-1).0, s(ns-1).1], reduce... */
  const pc_stage *st = &s->stages[sid];
  int n = st->n_leaves;
  int order[PC_MAX_LEAVES], k = 0;
  int pos_row_in = ns >= 2 && row > 1 ? ns - 1 : -1; /* s(ns-2).1 */
  int pos_last_out = (ns >= 2 && row > 1) ? last + 1 : last;
  int pos_vec = vec > 1 ? pos_last_out + 1 : -1;
  int first_red = n - nr;
  for (int i = 0; i < first_red; i++)
    if (i != pos_row_in && i != pos_vec) order[k++] = i;
  for (int i = first_red; i < n; i++) order[k++] = i;
  if (pos_row_in >= 0) order[k++] = pos_row_in;
  if (pos_vec >= 0) order[k++] = pos_vec;
  pc_step re = step_of(PC_STEP_RE, sid);
  re.n_ids = k;
  memcpy(re.ids, order, sizeof(int) * (size_t)k);
  if (apply(s, re, d)) return -1;
  /* Fuse the outer spatial loops (all before the reduce loops) and run them in parallel. */
  int n_outer = first_red - (pos_row_in >= 0) - (pos_vec >= 0);
  if (n_outer > 1) {
    pc_step fu = step_of(PC_STEP_FU, sid);
    fu.n_ids = n_outer;
    for (int i = 0; i < n_outer; i++) fu.ids[i] = i;
    if (apply(s, fu, d)) return -1;
  }
  pc_step an = step_of(PC_STEP_AN, sid);
  an.annotation = PC_ANN_PARALLEL;
  if (s->stages[sid].at == PC_AT_ROOT && apply(s, an, d)) return -1;
  int nl = s->stages[sid].n_leaves;
  if (vec > 1) {
    an.iter_id = nl - 1;
    an.annotation = PC_ANN_VECTORIZE;
    if (apply(s, an, d)) return -1;
  }
  if (row > 1) {
    an.iter_id = nl - 1 - (vec > 1);
    an.annotation = PC_ANN_UNROLL;
    if (apply(s, an, d)) return -1;
  }
  return 0;
}

/* Elementwise or small stages: fuse all but the last axis, parallel; vectorize the last. */
static int tile_simple(pc_state *s, int sid, int lanes, pt_diag *d) {
  const pc_op *op = &s->prog->ops[s->stages[sid].op];
  int ns = op->ndim;
  int64_t vec_c[] = {16, 8, 4, 2};
  if (lanes < 16) vec_c[0] = lanes;
  int64_t vec = op->n_reduce == 0 ? largest_divisor(op->shape[ns - 1], vec_c, 4) : 1;
  if (vec > 1 && split(s, sid, ns - 1, 1, &vec, d)) return -1;
  int n_outer = ns; /* leading spatial leaves, including the last axis' outer part */
  if (n_outer > 1) {
    pc_step fu = step_of(PC_STEP_FU, sid);
    fu.n_ids = n_outer;
    for (int i = 0; i < n_outer; i++) fu.ids[i] = i;
    if (apply(s, fu, d)) return -1;
  }
  pc_step an = step_of(PC_STEP_AN, sid);
  an.annotation = PC_ANN_PARALLEL;
  if (apply(s, an, d)) return -1;
  if (vec > 1) {
    an.iter_id = s->stages[sid].n_leaves - 1;
    an.annotation = PC_ANN_VECTORIZE;
    if (apply(s, an, d)) return -1;
  }
  return 0;
}

int pc_schedule_default(pc_state *s, int vector_lanes, pt_diag *d) {
  if (vector_lanes < 2) vector_lanes = 16;
  for (int sid = 0; sid < s->n_stages; sid++)
    if (is_elementwise_pad(s, sid) && strstr(s->prog->ops[s->stages[sid].op].name, "pad")) {
      pc_step ci = step_of(PC_STEP_CI, sid);
      if (apply(s, ci, d)) return pt_fail(d, PT_ERR_INVALID, "default schedule: inlining %s",
                                          s->prog->ops[s->stages[sid].op].name);
    }
  for (int sid = 0; sid < s->n_stages; sid++) {
    const pc_op *op = &s->prog->ops[s->stages[sid].op];
    if (op->is_placeholder || s->stages[sid].at != PC_AT_ROOT) continue;
    int rc = op->n_reduce > 0 && op->ndim >= 1 && op->shape[op->ndim - 1] >= 8 ? tile_reduction(s, sid, vector_lanes, d)
                                                                                : tile_simple(s, sid, vector_lanes, d);
    if (rc) return pt_fail(d, PT_ERR_INVALID, "default schedule for stage %s", op->name);
  }
  return 0;
}

/* ---------------------------------------------------------------- random schedules */

static int64_t random_factor(pt_rng *r, int64_t extent) {
  /* Mostly divisors (as Ansor samples), sometimes any value to exercise guards. */
  if (pt_rng_range(r, 4) == 0) return 1 + pt_rng_range(r, extent < 8 ? extent : 8);
  int64_t divs[64] = {1};
  int n = 0;
  for (int64_t f = 1; f <= extent && n < 64; f++)
    if (extent % f == 0) divs[n++] = f;
  return divs[pt_rng_range(r, n)];
}

int pc_schedule_random(pc_state *s, pt_rng *r, pt_diag *d) {
  pt_diag ignore = {0};
  for (int sid = 0; sid < s->n_stages; sid++) {
    const pc_op *op = &s->prog->ops[s->stages[sid].op];
    if (op->is_placeholder) continue;
    /* Attachment first, as Ansor's sketches do. */
    if (is_elementwise_pad(s, sid) && pt_rng_range(r, 2) == 0) {
      pc_step ci = step_of(PC_STEP_CI, sid);
      if (apply(s, ci, &ignore) == 0) continue;
      pt_diag_clear(&ignore);
    }
    /* DAG steps as Ansor's sketches use them: cache_write of a reduction (its copy stage is
     * scheduled next iteration), rfactor of a split reduction. */
    if (op->n_reduce > 0 && pt_rng_range(r, 5) == 0) {
      pc_step chw = step_of(PC_STEP_CHW, sid);
      snprintf(chw.scope, sizeof chw.scope, "local");
      if (apply(s, chw, &ignore) == 0) continue;
      pt_diag_clear(&ignore);
    }
    if (op->n_reduce > 0 && pt_rng_range(r, 5) == 0) {
      int rl = s->stages[sid].n_leaves - 1; /* the last reduction axis */
      int64_t ext = s->stages[sid].nodes[s->stages[sid].leaves[rl]].extent;
      int64_t f = random_factor(r, ext);
      if (ext > 1 && split(s, sid, rl, 1, &f, &ignore) == 0) {
        pc_step rf = step_of(PC_STEP_RF, sid);
        rf.iter_id = rl + (int)pt_rng_range(r, 2);
        rf.factor_iter_id = (int)pt_rng_range(r, op->ndim + 1);
        apply(s, rf, &ignore);
      }
      pt_diag_clear(&ignore);
      op = &s->prog->ops[s->stages[sid].op];
    }
    int n_splits = (int)pt_rng_range(r, 4);
    for (int k = 0; k < n_splits; k++) {
      const pc_stage *st = &s->stages[sid];
      int it = (int)pt_rng_range(r, st->n_leaves);
      int64_t ext = st->nodes[st->leaves[it]].extent;
      if (ext < 2) continue;
      int nl = 1 + (int)pt_rng_range(r, 2);
      int64_t len[2] = {random_factor(r, ext), random_factor(r, ext)};
      split(s, sid, it, nl, len, &ignore);
      pt_diag_clear(&ignore);
    }
    const pc_stage *st = &s->stages[sid];
    if (pt_rng_range(r, 2) == 0) { /* random permutation */
      pc_step re = step_of(PC_STEP_RE, sid);
      re.n_ids = st->n_leaves;
      for (int i = 0; i < re.n_ids; i++) re.ids[i] = i;
      for (int i = re.n_ids - 1; i > 0; i--) {
        int j = (int)pt_rng_range(r, i + 1), t = re.ids[i];
        re.ids[i] = re.ids[j];
        re.ids[j] = t;
      }
      apply(s, re, &ignore);
      pt_diag_clear(&ignore);
    }
    if (pt_rng_range(r, 2) == 0 && st->n_leaves >= 2) { /* fuse a leading run */
      pc_step fu = step_of(PC_STEP_FU, sid);
      fu.n_ids = 2 + (int)pt_rng_range(r, st->n_leaves - 1 < 2 ? 1 : 2);
      if (fu.n_ids > st->n_leaves) fu.n_ids = st->n_leaves;
      for (int i = 0; i < fu.n_ids; i++) fu.ids[i] = i;
      apply(s, fu, &ignore);
      pt_diag_clear(&ignore);
    }
    st = &s->stages[sid];
    pc_step an = step_of(PC_STEP_AN, sid);
    if (pt_rng_range(r, 2) == 0) {
      an.iter_id = 0;
      an.annotation = PC_ANN_PARALLEL;
      apply(s, an, &ignore);
      pt_diag_clear(&ignore);
    }
    if (pt_rng_range(r, 2) == 0) {
      an.iter_id = st->n_leaves - 1;
      an.annotation = PC_ANN_VECTORIZE;
      apply(s, an, &ignore);
      pt_diag_clear(&ignore);
    }
    if (pt_rng_range(r, 3) == 0 && st->n_leaves >= 2) {
      an.iter_id = (int)pt_rng_range(r, st->n_leaves);
      if (st->nodes[st->leaves[an.iter_id]].extent > 16) continue; /* as Ansor: unroll short loops only */
      an.annotation = PC_ANN_UNROLL;
      apply(s, an, &ignore);
      pt_diag_clear(&ignore);
    }
    if (pt_rng_range(r, 2) == 0) {
      static const int steps[] = {0, 16, 64, 512};
      pc_step pr = step_of(PC_STEP_PR, sid);
      snprintf(pr.pragma, sizeof pr.pragma, "auto_unroll_max_step$%d", steps[pt_rng_range(r, 4)]);
      apply(s, pr, &ignore);
      pt_diag_clear(&ignore);
    }
  }
  /* cache_read of an input for one of its readers. */
  if (pt_rng_range(r, 4) == 0) {
    int reader = (int)pt_rng_range(r, s->n_stages);
    const pc_op *rop = &s->prog->ops[s->stages[reader].op];
    for (int i = 0; i < rop->n_inputs; i++)
      if (s->prog->ops[rop->inputs[i]].is_placeholder && s->stages[reader].at != PC_AT_INLINE) {
        pc_step chr = step_of(PC_STEP_CHR, rop->inputs[i]);
        snprintf(chr.scope, sizeof chr.scope, "shared");
        chr.n_ids = 1;
        chr.ids[0] = reader;
        apply(s, chr, &ignore);
        pt_diag_clear(&ignore);
        break;
      }
  }
  /* storage_align of an intermediate's outer dimension (pads its stride). */
  if (pt_rng_range(r, 3) == 0) {
    int sid = (int)pt_rng_range(r, s->n_stages);
    if (s->stages[sid].n_leaves > 0) {
      pc_step sa = step_of(PC_STEP_SA, sid);
      sa.factor = 16;
      sa.offset = (int)pt_rng_range(r, 16);
      apply(s, sa, &ignore);
      pt_diag_clear(&ignore);
    }
  }
  /* compute_at of single-consumer producers at a random loop of their consumer. */
  for (int sid = 0; sid < s->n_stages; sid++) {
    const pc_op *op = &s->prog->ops[s->stages[sid].op];
    if (op->is_placeholder || op->is_output || s->stages[sid].at != PC_AT_ROOT || pt_rng_range(r, 2)) continue;
    for (int t = sid + 1; t < s->n_stages; t++) {
      if (s->stages[t].at == PC_AT_INLINE || !pc_stage_consumes(s, t, sid)) continue;
      pc_step ca = step_of(PC_STEP_CA, sid);
      ca.target_stage_id = t;
      ca.target_iter_id = (int)pt_rng_range(r, s->stages[t].n_leaves);
      apply(s, ca, &ignore);
      pt_diag_clear(&ignore);
      break;
    }
  }
  (void)d;
  return 0;
}
