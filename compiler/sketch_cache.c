/* portent's cache and reduction rules for random annotation: the working set of a
 * multi-level ("SSRSRS") tile, from the tile lengths and the stage's affine loads, so that
 * sampling can prefer tiles whose innermost blocks fit L1 and L2 of the target, and the
 * reduction length inside the register tile (sketch_annotate.c).
 * Built once per sketch at generation; evaluated per draw from the split steps alone. */
#include <stdlib.h>
#include <string.h>

#include "sketch_internal.h"

/* Adds `scale` x e to an affine form over the op's axes; false if e is not affine. */
static bool affine(const pc_expr *e, int64_t scale, int64_t *coef, int n_axes) {
  switch (e->kind) {
  case PC_E_CONST_I: return true;
  case PC_E_AXIS:
    if (e->axis < 0 || e->axis >= n_axes) return false;
    coef[e->axis] += scale;
    return true;
  case PC_E_ADD: return affine(e->args[0], scale, coef, n_axes) && affine(e->args[1], scale, coef, n_axes);
  case PC_E_SUB: return affine(e->args[0], scale, coef, n_axes) && affine(e->args[1], -scale, coef, n_axes);
  case PC_E_MUL:
    if (e->args[0]->kind == PC_E_CONST_I) return affine(e->args[1], scale * e->args[0]->ival, coef, n_axes);
    if (e->args[1]->kind == PC_E_CONST_I) return affine(e->args[0], scale * e->args[1]->ival, coef, n_axes);
    return false;
  default: return false;
  }
}

static void add_access(sk_tiled *t, const pc_program *p, int tensor, int n_idx, pc_expr *const *idx) {
  if (t->n_access >= SK_MAX_ACCESS) return;
  sk_access *a = &t->access[t->n_access];
  memset(a, 0, sizeof *a);
  const pc_op *op = &p->ops[tensor];
  a->ndim = n_idx < PC_MAX_DIMS ? n_idx : PC_MAX_DIMS;
  for (int k = 0; k < a->ndim; k++) {
    a->shape[k] = op->shape[k];
    int64_t coef[PC_MAX_AXES] = {0};
    if (!idx) coef[k] = 1; /* the stage's own output, indexed by its spatial axes */
    else if (!affine(idx[k], 1, coef, t->n_axes)) {
      a->whole[k] = true; /* not affine: count the whole dimension */
      continue;
    }
    for (int ax = 0; ax < t->n_axes && a->n_terms[k] < SK_MAX_TERMS; ax++)
      if (coef[ax] != 0) {
        a->term_axis[k][a->n_terms[k]] = ax;
        a->term_coef[k][a->n_terms[k]++] = coef[ax] < 0 ? -coef[ax] : coef[ax];
      }
  }
  t->n_access++;
}

static void collect_loads(sk_tiled *t, const pc_program *p, const pc_expr *e) {
  if (!e) return;
  if (e->kind == PC_E_LOAD) {
    add_access(t, p, e->tensor, e->n_args, e->args);
    return;
  }
  for (int k = 0; k < e->n_args; k++) collect_loads(t, p, e->args[k]);
}

/* The tiled stage of op `op_id` in sketch state s, created at its first split. */
static sk_tiled *tiled_for(sk_tiles *ts, const pc_program *p, int op_id) {
  const pc_op *op = &p->ops[op_id];
  for (int i = 0; i < ts->n; i++)
    if (strcmp(ts->t[i].op_name, op->name) == 0) return &ts->t[i];
  if (ts->n >= SK_MAX_TILED) return NULL;
  sk_tiled *t = &ts->t[ts->n++];
  memset(t, 0, sizeof *t);
  memcpy(t->op_name, op->name, sizeof t->op_name);
  t->n_spatial = op->ndim;
  t->n_axes = op->ndim + op->n_reduce;
  if (t->n_axes > PC_MAX_AXES) t->n_axes = PC_MAX_AXES;
  for (int a = 0; a < t->n_axes; a++) {
    t->split_step[a] = -1;
    t->extent[a] = a < op->ndim ? op->shape[a] : op->reduce_extent[a - op->ndim];
  }
  collect_loads(t, p, op->body);
  add_access(t, p, op_id, op->ndim, NULL);
  return t;
}

void sk_tiles_build(pc_sketches *sk, int i) {
  const pc_state *sketch = sk->state[i];
  sk_tiles *ts = calloc(1, sizeof *ts);
  pc_state *scratch = sk_scratch_new(sk->p);
  for (int k = 0; k < sketch->n_steps; k++) {
    const pc_step *sp = &sketch->steps[k];
    if (!(sk->fill[i][k] & SK_FILL) || sp->kind != PC_STEP_SP || (sp->n_lengths != 3 && sp->n_lengths != 1)) continue;
    pt_diag d = {0};
    if (sk_replay_into(scratch, sk->p, k, sketch->steps, &d)) break;
    if (sp->stage_id < 0 || sp->stage_id >= scratch->n_stages) continue;
    const pc_stage *st = &scratch->stages[sp->stage_id];
    if (sp->iter_id < 0 || sp->iter_id >= st->n_leaves) continue;
    const pc_iter *node = &st->nodes[st->leaves[sp->iter_id]];
    if (node->rel != PC_REL_ROOT) continue;
    sk_tiled *t = tiled_for(ts, scratch->prog, st->op);
    if (t && node->root_axis < t->n_axes) t->split_step[node->root_axis] = k;
  }
  /* Only stages tiled on every one of their own axes (4 spatial levels, 2 reduction levels)
   * have a level structure to check; drop the others (rfactor's fused axes). */
  int kept = 0;
  for (int j = 0; j < ts->n; j++) {
    bool all = true;
    for (int a = 0; a < ts->t[j].n_axes; a++) {
      int k = ts->t[j].split_step[a];
      int want = a < ts->t[j].n_spatial ? 3 : 1;
      all = all && k >= 0 && sketch->steps[k].n_lengths == want;
    }
    if (all) ts->t[kept++] = ts->t[j];
  }
  ts->n = kept;
  pc_state_free(scratch);
  if (ts->n == 0) {
    free(ts);
    ts = NULL;
  }
  sk->tiles[i] = ts;
}

/* Bytes one block of the tile touches. For cache level 1 the block is the body of the r0
 * loop (s2 r1 s3: spatial l2 x l3, reduction r1), whose operands are reused across the s2
 * loop; for level 2 the body of the innermost s1 loop (r0 s2 r1 s3: spatial l2 x l3, the whole
 * reduction), whose panels are reused across the next s1 iteration (e.g. matmul's A rows
 * across the column tiles). */
static int64_t tile_bytes(const sk_tiled *t, const pc_step *steps, int level) {
  int64_t len[PC_MAX_AXES];
  for (int a = 0; a < t->n_axes; a++) {
    const pc_step *sp = &steps[t->split_step[a]];
    if (a < t->n_spatial) len[a] = sp->lengths[1] * sp->lengths[2];
    else len[a] = level == 1 ? sp->lengths[0] : t->extent[a];
  }
  int64_t bytes = 0;
  for (int i = 0; i < t->n_access; i++) {
    const sk_access *ac = &t->access[i];
    int64_t elems = 1;
    for (int k = 0; k < ac->ndim; k++) {
      int64_t span = 1;
      if (ac->whole[k]) span = ac->shape[k];
      else
        for (int m = 0; m < ac->n_terms[k]; m++) span += ac->term_coef[k][m] * (len[ac->term_axis[k][m]] - 1);
      elems *= span < ac->shape[k] ? span : ac->shape[k];
    }
    bytes += 4 * elems; /* f32 tensors */
  }
  return bytes;
}

int64_t sk_tile_working_set(const pc_sketches *sk, int i, const pc_step *steps, int level) {
  const sk_tiles *ts = sk->tiles[i];
  int64_t worst = 0;
  for (int j = 0; ts && j < ts->n; j++) {
    int64_t b = tile_bytes(&ts->t[j], steps, level);
    if (b > worst) worst = b;
  }
  return worst;
}

bool sk_tiles_fit_caches(const pc_sketches *sk, int i, const pc_step *steps) {
  const int64_t *cache = sk->o.cache_bytes;
  if (cache[0] > 0 && sk_tile_working_set(sk, i, steps, 1) > cache[0]) return false;
  if (cache[1] > 0 && sk_tile_working_set(sk, i, steps, 2) > cache[1]) return false;
  return true;
}

/* The r1 loop's length of one tiled stage: the product of its reduction axes' inner tiles;
 * 0 without reduction axes. */
static int64_t reduction_tile(const sk_tiled *t, const pc_step *steps) {
  if (t->n_axes == t->n_spatial) return 0;
  int64_t r1 = 1;
  for (int a = t->n_spatial; a < t->n_axes; a++) r1 *= steps[t->split_step[a]].lengths[0];
  return r1;
}

int64_t sk_reduction_tile(const pc_sketches *sk, int i, const pc_step *steps) {
  const sk_tiles *ts = sk->tiles[i];
  int64_t least = 0;
  for (int j = 0; ts && j < ts->n; j++) {
    int64_t r1 = reduction_tile(&ts->t[j], steps);
    if (r1 > 0 && (least == 0 || r1 < least)) least = r1;
  }
  return least;
}

/* Each tiled stage's r1 at least the option's floor, or its whole reduction when shorter
 * (a 3x3 window over 4 channels cannot give more than 36). */
bool sk_tiles_reduce_enough(const pc_sketches *sk, int i, const pc_step *steps) {
  const sk_tiles *ts = sk->tiles[i];
  for (int j = 0; ts && j < ts->n; j++) {
    const sk_tiled *t = &ts->t[j];
    int64_t whole = 1;
    for (int a = t->n_spatial; a < t->n_axes; a++) whole *= t->extent[a];
    int64_t need = whole < sk->o.min_reduction_tile ? whole : sk->o.min_reduction_tile;
    int64_t r1 = reduction_tile(t, steps);
    if (r1 > 0 && r1 < need) return false;
  }
  return true;
}

/* Annotation appends steps; the sketch's own come first, unchanged but for the lengths. */
static bool has_sketch_steps(const pc_sketches *sk, int i, const pc_state *s) {
  const pc_state *sketch = sk->state[i];
  if (s->n_steps < sketch->n_steps) return false;
  for (int k = 0; k < sketch->n_steps; k++)
    if (s->steps[k].kind != sketch->steps[k].kind || s->steps[k].n_lengths != sketch->steps[k].n_lengths) return false;
  return true;
}

int64_t pc_sketch_working_set(const pc_sketches *sk, int i, const pc_state *s, int level) {
  if (!sk || i < 0 || i >= sk->n || !s || (level != 1 && level != 2) || !has_sketch_steps(sk, i, s)) return -1;
  return sk_tile_working_set(sk, i, s->steps, level);
}

int64_t pc_sketch_reduction_tile(const pc_sketches *sk, int i, const pc_state *s) {
  if (!sk || i < 0 || i >= sk->n || !s || !has_sketch_steps(sk, i, s)) return -1;
  return sk_reduction_tile(sk, i, s->steps);
}
