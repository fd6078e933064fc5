/* Mutation and crossover of candidates (step sequences), after Ansor's mutation rules (TVM
 * sketch_policy_rules.cc: MutateTileSize, MutateAutoUnroll, MutateParallel,
 * MutateComputeLocation) and the crossover of its paper (section 5.1: stages' rewriting
 * steps merged from two parents). Every child is replayed, so only valid ones come out. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tune_internal.h"

static bool valid(const pc_program *p, pc_state *scratch, int n, const pc_step *steps) {
  pt_diag d = {0};
  return sk_replay_into(scratch, p, n, steps, &d) == 0;
}

bool sk_tile_spills(const pc_tune_opts *o, int n, const pc_step *steps) {
  int lanes = o->sketch.vector_lanes > 0 ? o->sketch.vector_lanes : 16;
  int64_t max_regs = o->sketch.vector_registers > 8 ? o->sketch.vector_registers - 4 : 28;
  return sk_register_tile(n, steps, lanes) > max_regs;
}

int64_t sk_register_tile(int n, const pc_step *steps, int lanes) {
  int64_t worst = 0;
  for (int k = 0; k < n; k++) {
    if (steps[k].kind != PC_STEP_SP || steps[k].n_lengths != 3) continue;
    bool seen = false; /* one product per stage, started at its first spatial split */
    for (int j = 0; j < k && !seen; j++)
      seen = steps[j].kind == PC_STEP_SP && steps[j].n_lengths == 3 && steps[j].stage_id == steps[k].stage_id;
    if (seen) continue;
    int last = k; /* the stage's last spatial split: its innermost length is the vector */
    for (int j = k; j < n; j++)
      if (steps[j].kind == PC_STEP_SP && steps[j].n_lengths == 3 && steps[j].stage_id == steps[k].stage_id) last = j;
    int64_t regs = 1;
    for (int j = k; j <= last; j++) {
      if (steps[j].kind != PC_STEP_SP || steps[j].n_lengths != 3 || steps[j].stage_id != steps[k].stage_id) continue;
      int64_t len = steps[j].lengths[2];
      regs *= j == last ? (len + lanes - 1) / lanes : len;
    }
    if (regs > worst) worst = regs;
  }
  return worst;
}

int sk_mutate_tile_size(const pc_program *p, pc_state *scratch, const sk_cand *c, int max_inner, pt_rng *rng, pc_step *out) {
  int ids[PC_MAX_STEPS], n = 0;
  for (int i = 0; i < c->n; i++)
    if (c->steps[i].kind == PC_STEP_SP && c->steps[i].extent > 1 && c->steps[i].n_lengths > 0 &&
        c->steps[i].lengths[c->steps[i].n_lengths - 1] <= max_inner)
      ids[n++] = i;
  if (n == 0) return -1;
  int sid = ids[pt_rng_range(rng, n)];
  const pc_step *sp = &c->steps[sid];
  int nl = sp->n_lengths + 1;
  int64_t len[PC_MAX_DIMS + 1], prod = 1;
  for (int k = 0; k < sp->n_lengths; k++) {
    len[k + 1] = sp->lengths[k];
    prod *= sp->lengths[k];
  }
  len[0] = sp->extent / prod;
  int perm[PC_MAX_DIMS + 1];
  for (int k = 0; k < nl; k++) perm[k] = k;
  for (int k = nl - 1; k > 0; k--) {
    int j = (int)pt_rng_range(rng, k + 1), t = perm[k];
    perm[k] = perm[j];
    perm[j] = t;
  }
  /* Move one factor from one level to the next in the random order. */
  for (int i = 0; i < nl; i++) {
    int src = perm[i], dst = perm[(i + 1) % nl];
    if (len[src] <= 1) continue;
    int64_t f[256];
    int nf = sk_divisors(len[src], f, 256);
    int64_t factor;
    if (dst == nl - 1) {
      int top = nf - 1;
      while (top >= 1 && f[top] * len[dst] > max_inner) top--;
      if (top == 0) continue;
      factor = f[1 + pt_rng_range(rng, top)];
    } else
      factor = f[1 + pt_rng_range(rng, nf - 1)];
    memcpy(out, c->steps, sizeof(pc_step) * (size_t)c->n);
    for (int k = 1; k < nl; k++) {
      int64_t v = len[k];
      if (k == src) v /= factor;
      else if (k == dst) v *= factor;
      out[sid].lengths[k - 1] = v;
    }
    return valid(p, scratch, c->n, out) ? c->n : -1;
  }
  return -1;
}

int sk_mutate_auto_unroll(const pc_program *p, pc_state *scratch, const sk_cand *c, pt_rng *rng, pc_step *out) {
  static const int configs[] = {0, 16, 64, 512};
  int ids[PC_MAX_STEPS], n = 0;
  for (int i = 0; i < c->n; i++)
    if (c->steps[i].kind == PC_STEP_PR && strncmp(c->steps[i].pragma, "auto_unroll_max_step", 20) == 0) ids[n++] = i;
  if (n == 0) return -1;
  memcpy(out, c->steps, sizeof(pc_step) * (size_t)c->n);
  pc_step *pr = &out[ids[pt_rng_range(rng, n)]];
  snprintf(pr->pragma, sizeof pr->pragma, "auto_unroll_max_step$%d", configs[pt_rng_range(rng, 4)]);
  return valid(p, scratch, c->n, out) ? c->n : -1;
}

static bool changes_stages(pc_step_kind k) { return k == PC_STEP_CHW || k == PC_STEP_CHR || k == PC_STEP_RF; }

/* A different number of outer loops fused into a parallel loop; later annotations of that
 * stage shift by the change in loop count. */
int sk_mutate_parallel(const pc_program *p, pc_state *scratch, const sk_cand *c, pt_rng *rng, pc_step *out) {
  int ids[PC_MAX_STEPS], n = 0;
  for (int i = 1; i < c->n; i++) {
    const pc_step *an = &c->steps[i], *fu = &c->steps[i - 1];
    if (an->kind == PC_STEP_AN && an->annotation == PC_ANN_PARALLEL && an->iter_id == 0 && fu->kind == PC_STEP_FU &&
        fu->stage_id == an->stage_id && fu->n_ids > 0 && fu->ids[0] == 0)
      ids[n++] = i;
  }
  if (n == 0) return -1;
  int an_id = ids[pt_rng_range(rng, n)], fu_id = an_id - 1;
  pt_diag d = {0};
  pc_state *s = scratch;
  if (sk_replay_into(s, p, fu_id, c->steps, &d)) return -1;
  int sid = c->steps[fu_id].stage_id;
  const pc_stage *st = &s->stages[sid];
  int max_fuse = 0;
  for (; max_fuse < st->n_leaves; max_fuse++) {
    const pc_iter *it = &st->nodes[st->leaves[max_fuse]];
    if (it->kind == PC_ITER_REDUCE || it->annotation != PC_ANN_NONE || sk_iter_has_attached(s, sid, max_fuse)) break;
  }
  if (max_fuse == 0) return -1;
  int fuse_to = 1 + (int)pt_rng_range(rng, max_fuse);
  int offset = c->steps[fu_id].ids[c->steps[fu_id].n_ids - 1] - (fuse_to - 1);
  if (offset == 0) return -1;
  memcpy(out, c->steps, sizeof(pc_step) * (size_t)c->n);
  out[fu_id].n_ids = fuse_to;
  for (int k = 0; k < fuse_to; k++) out[fu_id].ids[k] = k;
  for (int i = an_id + 1; i < c->n; i++) {
    pc_step *st2 = &out[i];
    if (changes_stages(st2->kind)) return -1;
    if (st2->stage_id != sid) continue;
    if (st2->kind != PC_STEP_AN && st2->kind != PC_STEP_PR) return -1;
    if (st2->iter_id != 0) st2->iter_id += offset;
  }
  return valid(p, scratch, c->n, out) ? c->n : -1;
}

int sk_mutate_compute_location(const pc_program *p, pc_state *scratch, const sk_cand *c, pt_rng *rng, pc_step *out) {
  pt_diag d = {0};
  pc_state *s = scratch;
  if (sk_replay_into(s, p, c->n, c->steps, &d)) return -1;
  int ids[PC_MAX_STEPS], n = 0;
  for (int i = 0; i < c->n; i++) {
    if (c->steps[i].kind != PC_STEP_CA) continue;
    int now = sk_step_stage_now(s, i);
    if (sk_stage_is_tiled(s, now) || sk_needs_multi_level_tiling(s->prog, s->stages[now].op)) continue;
    ids[n++] = i;
  }
  int rc = -1;
  if (n > 0) {
    int step_id = ids[pt_rng_range(rng, n)];
    int now = sk_step_stage_now(s, step_id), inc = now - c->steps[step_id].stage_id;
    int cand[64][2];
    int nc = sk_compute_location_candidates(s, now, cand, 64);
    if (nc > 0) {
      int k = (int)pt_rng_range(rng, nc);
      memcpy(out, c->steps, sizeof(pc_step) * (size_t)c->n);
      out[step_id].target_stage_id = cand[k][0] - inc;
      out[step_id].target_iter_id = cand[k][1];
      rc = valid(p, scratch, c->n, out) ? c->n : -1;
    }
  }
  return rc;
}

/* Parents with the same step structure (kinds and stages in the same order) exchange tile
 * sizes and unroll pragmas: each split or pragma step comes from either parent (follow
 * splits follow their source). Ansor's paper merges per stage; per step still mixes when only
 * one stage is tiled, as in a matmul. */
int sk_crossover(const pc_program *p, pc_state *scratch, const sk_cand *a, const sk_cand *b, pt_rng *rng, pc_step *out) {
  if (a->n != b->n) return -1;
  for (int i = 0; i < a->n; i++)
    if (a->steps[i].kind != b->steps[i].kind || a->steps[i].stage_id != b->steps[i].stage_id) return -1;
  bool any_a = false, any_b = false;
  memcpy(out, a->steps, sizeof(pc_step) * (size_t)a->n);
  for (int i = 0; i < a->n; i++) {
    if (a->steps[i].kind != PC_STEP_SP && a->steps[i].kind != PC_STEP_PR) continue;
    if (sk_steps_hash(1, &a->steps[i]) == sk_steps_hash(1, &b->steps[i])) continue; /* same either way */
    if (pt_rng_range(rng, 2)) {
      out[i] = b->steps[i];
      any_b = true;
    } else
      any_a = true;
  }
  if (!any_a || !any_b) return -1;
  return valid(p, scratch, a->n, out) ? a->n : -1;
}
