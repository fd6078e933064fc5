/* The steps that change the compute DAG: cache_write, cache_read and rfactor. Each builds a
 * new program (the state then owns it), inserts the new op where Ansor's replayed DAG puts
 * it, and renumbers stages exactly as Ansor's ApplyToState does, so later steps of a record
 * address the same stages. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

static pc_expr *expr_copy(pt_arena *a, const pc_expr *e) {
  if (!e) return NULL;
  pc_expr *c = pt_alloc(a, sizeof *c);
  *c = *e;
  for (int i = 0; i < e->n_args; i++) c->args[i] = expr_copy(a, e->args[i]);
  return c;
}

/* A deep copy whose expressions live in the copy's own arena. */
pc_program *pc_program_copy(const pc_program *p) {
  pc_program *c = calloc(1, sizeof *c);
  *c = *p;
  c->arena = pt_arena_new();
  c->ops = pt_alloc(c->arena, sizeof(pc_op) * (size_t)(p->n_ops + 1));
  for (int i = 0; i < p->n_ops; i++) {
    c->ops[i] = p->ops[i];
    c->ops[i].body = expr_copy(c->arena, p->ops[i].body);
  }
  return c;
}

static pc_expr *mk(pt_arena *a, pc_expr_kind k, bool is_int) {
  pc_expr *e = pt_alloc(a, sizeof *e);
  e->kind = k;
  e->is_int = is_int;
  return e;
}

static pc_expr *mk_axis(pt_arena *a, int axis) {
  pc_expr *e = mk(a, PC_E_AXIS, true);
  e->axis = axis;
  return e;
}

static pc_expr *mk_const(pt_arena *a, int64_t v) {
  pc_expr *e = mk(a, PC_E_CONST_I, true);
  e->ival = v;
  return e;
}

static pc_expr *mk_bin(pt_arena *a, pc_expr_kind k, pc_expr *x, pc_expr *y) {
  pc_expr *e = mk(a, k, true);
  e->n_args = 2;
  e->args[0] = x;
  e->args[1] = y;
  return e;
}

/* Replaces every axis reference by the expression map[axis]. */
static pc_expr *subst_axes(pt_arena *a, const pc_expr *e, pc_expr *const *map) {
  if (e->kind == PC_E_AXIS) return map[e->axis];
  pc_expr *c = pt_alloc(a, sizeof *c);
  *c = *e;
  for (int i = 0; i < e->n_args; i++) c->args[i] = subst_axes(a, e->args[i], map);
  return c;
}

static void replace_loads(pc_expr *e, int from, int to) {
  if (!e) return;
  if (e->kind == PC_E_LOAD && e->tensor == from) e->tensor = to;
  for (int i = 0; i < e->n_args; i++) replace_loads(e->args[i], from, to);
}

static void recollect_inputs_rec(const pc_expr *e, pc_op *op) {
  if (!e) return;
  for (int i = 0; i < e->n_args; i++) recollect_inputs_rec(e->args[i], op);
  if (e->kind != PC_E_LOAD) return;
  for (int i = 0; i < op->n_inputs; i++)
    if (op->inputs[i] == e->tensor) return;
  if (op->n_inputs < (int)PT_ARRAY_LEN(op->inputs)) op->inputs[op->n_inputs++] = e->tensor;
}

static void recollect_inputs(pc_program *p) {
  for (int i = 0; i < p->n_ops; i++) {
    p->ops[i].n_inputs = 0;
    recollect_inputs_rec(p->ops[i].body, &p->ops[i]);
  }
}

/* Makes room for a new op at index `at`: later ops and every load of them move up by one. */
static void insert_op_slot(pc_program *p, int at) {
  int *map = malloc(sizeof(int) * (size_t)p->n_ops);
  for (int i = 0; i < p->n_ops; i++) map[i] = i >= at ? i + 1 : i;
  for (int i = 0; i < p->n_ops; i++) pc_expr_remap_tensors(p->ops[i].body, map);
  free(map);
  memmove(&p->ops[at + 1], &p->ops[at], sizeof(pc_op) * (size_t)(p->n_ops - at));
  memset(&p->ops[at], 0, sizeof(pc_op));
  p->n_ops++;
}

/* Inserts a fresh stage for op `op` at stage index `at` and shifts stage ids >= offset_from
 * in ops and attach points, as Ansor's AttachMap::ApplyStageIdOffset. */
static void insert_stage(pc_state *s, int at, int offset_from) {
  for (int i = 0; i < s->n_stages; i++) {
    pc_stage *st = &s->stages[i];
    if (st->at == PC_AT_ITER && st->attach_stage >= offset_from) st->attach_stage++;
  }
  memmove(&s->stages[at + 1], &s->stages[at], sizeof(pc_stage) * (size_t)(s->n_stages - at));
  s->n_stages++;
  for (int i = 0; i < s->n_stages; i++)
    if (i != at) s->stages[i].op = i; /* stages and ops stay index-aligned */
}

static void adopt(pc_state *s, pc_program *p) {
  if (s->owns_prog) pc_program_free(s->prog);
  s->prog = p;
  s->owns_prog = true;
}

static int check_dag_step(const pc_state *s, int sid, const char *code, pt_diag *d) {
  if (sid < 0 || sid >= s->n_stages)
    return pt_fail(d, PT_ERR_INVALID, "%s: stage %d out of range (the state has %d stages)", code, sid, s->n_stages);
  if (s->n_stages + 1 > PC_MAX_STAGES) return pt_fail(d, PT_ERR_INVALID, "%s: more than %d stages", code, PC_MAX_STAGES);
  return 0;
}

static bool stage_is_attach_target(const pc_state *s, int sid) {
  for (int i = 0; i < s->n_stages; i++)
    if (s->stages[i].at == PC_AT_ITER && s->stages[i].attach_stage == sid) return true;
  return false;
}

/* After inserting a stage at `at`, the original (now at + 1) keeps where it was computed. */
static void keep_attachment(pc_state *s, int at, const pc_stage *before) {
  pc_stage *st = &s->stages[at + 1];
  st->at = before->at;
  st->attach_stage = before->attach_stage >= at ? before->attach_stage + 1 : before->attach_stage;
  st->attach_node = before->attach_node;
}

/* Adopts program p, whose new op sits at `at` with the original op moved to at + 1: a fresh
 * stage for each, the original keeping where it was computed (CHW and RF alike). */
static void commit_inserted_before(pc_state *s, pc_program *p, int at) {
  recollect_inputs(p);
  pc_stage keep = s->stages[at];
  insert_stage(s, at, at);
  adopt(s, p);
  pc_stage_init(&s->stages[at], p, at);
  pc_stage_init(&s->stages[at + 1], p, at + 1);
  keep_attachment(s, at, &keep);
}

/* tensor[ax0, ax1, ...]: the identity read a copy stage makes. */
static pc_expr *load_all_axes(pt_arena *a, int tensor, int ndim) {
  pc_expr *load = mk(a, PC_E_LOAD, false);
  load->tensor = tensor;
  load->n_args = ndim;
  for (int k = 0; k < ndim; k++) load->args[k] = mk_axis(a, k);
  return load;
}

static int apply_cache_write(pc_state *s, const pc_step *step, pt_diag *d) {
  int sid = step->stage_id, rc = check_dag_step(s, sid, "CHW", d);
  if (rc) return rc;
  const pc_op *op = &s->prog->ops[s->stages[sid].op];
  if (op->is_placeholder) return pt_fail(d, PT_ERR_INVALID, "CHW: stage %d (%s) is a placeholder", sid, op->name);
  if (s->stages[sid].at == PC_AT_INLINE) return pt_fail(d, PT_ERR_INVALID, "CHW: stage %d is inlined", sid);
  if (stage_is_attach_target(s, sid))
    return pt_fail(d, PT_ERR_INVALID, "CHW: stage %d has stages attached; cache_write must come first", sid);
  pc_program *p = pc_program_copy(s->prog);
  insert_op_slot(p, sid);
  pc_op *cache = &p->ops[sid], *orig = &p->ops[sid + 1];
  *cache = *orig;
  char base[PC_NAME_LEN];
  memcpy(base, orig->name, sizeof base);
  snprintf(cache->name, sizeof cache->name, "%.20s.%.10s", base, step->scope[0] ? step->scope : "local");
  cache->is_output = false;
  /* The original becomes a copy of the cache over its spatial axes. */
  orig->body = load_all_axes(p->arena, sid, orig->ndim);
  orig->n_reduce = 0;
  orig->reduce = PC_REDUCE_NONE;
  commit_inserted_before(s, p, sid);
  return 0;
}

static int apply_cache_read(pc_state *s, const pc_step *step, pt_diag *d) {
  int sid = step->stage_id, rc = check_dag_step(s, sid, "CHR", d);
  if (rc) return rc;
  const pc_op *op = &s->prog->ops[s->stages[sid].op];
  if (s->stages[sid].at == PC_AT_INLINE) return pt_fail(d, PT_ERR_INVALID, "CHR: stage %d is inlined", sid);
  if (step->n_ids < 1) return pt_fail(d, PT_ERR_INVALID, "CHR: no reader stages");
  for (int k = 0; k < step->n_ids; k++) {
    int r = step->ids[k];
    if (r < 0 || r >= s->n_stages || r == sid)
      return pt_fail(d, PT_ERR_INVALID, "CHR: reader stage %d out of range", r);
    bool reads = false;
    for (int i = 0; i < s->prog->ops[r].n_inputs; i++) reads = reads || s->prog->ops[r].inputs[i] == sid;
    if (!reads) return pt_fail(d, PT_ERR_INVALID, "CHR: stage %d does not read stage %d (%s)", r, sid, op->name);
  }
  pc_program *p = pc_program_copy(s->prog);
  int at = sid + 1;
  insert_op_slot(p, at);
  pc_op *cache = &p->ops[at];
  const pc_op *src = &p->ops[sid];
  memset(cache, 0, sizeof *cache);
  char base[PC_NAME_LEN];
  memcpy(base, src->name, sizeof base);
  snprintf(cache->name, sizeof cache->name, "%.20s.%.10s", base, step->scope[0] ? step->scope : "shared");
  cache->ndim = src->ndim;
  memcpy(cache->shape, src->shape, sizeof cache->shape);
  for (int k = 0; k < src->ndim; k++) snprintf(cache->axis_name[k], PC_NAME_LEN, "ax%d", k);
  cache->body = load_all_axes(p->arena, sid, src->ndim);
  for (int k = 0; k < step->n_ids; k++) {
    int r = step->ids[k] >= at ? step->ids[k] + 1 : step->ids[k];
    replace_loads(p->ops[r].body, sid, at);
  }
  recollect_inputs(p);
  insert_stage(s, at, at);
  adopt(s, p);
  pc_stage_init(&s->stages[at], p, at);
  return 0;
}

/* The value of node n of a stage as an expression of new axes (leaf_axis[node], -1 if not a
 * leaf axis of the new op). */
static pc_expr *node_expr(pt_arena *a, const pc_stage *st, int n, const int *leaf_axis) {
  const pc_iter *it = &st->nodes[n];
  if (it->n_children > 0) {
    pc_expr *v = NULL;
    int64_t stride = 1;
    for (int k = it->n_children - 1; k >= 0; k--) {
      pc_expr *c = node_expr(a, st, it->children[k], leaf_axis);
      if (stride != 1) c = mk_bin(a, PC_E_MUL, c, mk_const(a, stride));
      v = v ? mk_bin(a, PC_E_ADD, c, v) : c;
      stride *= st->nodes[it->children[k]].extent;
    }
    return v;
  }
  if (it->fused_into >= 0) {
    const pc_iter *f = &st->nodes[it->fused_into];
    int pos = 0;
    int64_t inner = 1;
    for (int k = 0; k < f->n_fused; k++)
      if (f->fused[k] == n) pos = k;
    for (int k = pos + 1; k < f->n_fused; k++) inner *= st->nodes[f->fused[k]].extent;
    pc_expr *v = node_expr(a, st, it->fused_into, leaf_axis);
    if (inner > 1) v = mk_bin(a, PC_E_DIV, v, mk_const(a, inner));
    return pos == 0 ? v : mk_bin(a, PC_E_MOD, v, mk_const(a, it->extent));
  }
  return mk_axis(a, leaf_axis[n]);
}

static int apply_rfactor(pc_state *s, const pc_step *step, pt_diag *d) {
  int sid = step->stage_id, rc = check_dag_step(s, sid, "RF", d);
  if (rc) return rc;
  const pc_stage *st = &s->stages[sid];
  const pc_op *op = &s->prog->ops[st->op];
  if (op->is_placeholder || op->n_reduce == 0)
    return pt_fail(d, PT_ERR_INVALID, "RF: stage %d (%s) is not a reduction", sid, op->name);
  if (step->iter_id < 0 || step->iter_id >= st->n_leaves)
    return pt_fail(d, PT_ERR_INVALID, "RF: iterator %d out of range (stage %d has %d)", step->iter_id, sid, st->n_leaves);
  int fnode = st->leaves[step->iter_id];
  if (st->nodes[fnode].kind != PC_ITER_REDUCE)
    return pt_fail(d, PT_ERR_INVALID, "RF: iterator %d (%s) is not a reduction iterator", step->iter_id, st->nodes[fnode].name);
  if (step->factor_iter_id < 0 || step->factor_iter_id > op->ndim)
    return pt_fail(d, PT_ERR_INVALID, "RF: factor axis %d out of range 0..%d", step->factor_iter_id, op->ndim);
  if (op->ndim + 1 > PC_MAX_DIMS) return pt_fail(d, PT_ERR_INVALID, "RF: too many dimensions");
  if (stage_is_attach_target(s, sid)) return pt_fail(d, PT_ERR_INVALID, "RF: stage %d has stages attached", sid);
  pc_program *p = pc_program_copy(s->prog);
  pt_arena *a = p->arena;
  /* Axes of the rf op: spatial axes with the factored iterator inserted at factor_iter_id,
   * then the other reduction leaves (in loop order) as its reduction axes. */
  int fa = step->factor_iter_id, ndim = op->ndim + 1;
  int leaf_axis[PC_MAX_NODES];
  for (int n = 0; n < PC_MAX_NODES; n++) leaf_axis[n] = -1;
  pc_expr *spatial_map[PC_MAX_AXES];
  for (int k = 0; k < op->ndim; k++) spatial_map[k] = mk_axis(a, k < fa ? k : k + 1);
  leaf_axis[fnode] = fa;
  int n_red = 0;
  int64_t red_ext[PC_MAX_DIMS];
  char red_name[PC_MAX_DIMS][PC_NAME_LEN];
  for (int l = 0; l < st->n_leaves; l++) {
    int n = st->leaves[l];
    if (st->nodes[n].kind != PC_ITER_REDUCE || n == fnode) continue;
    if (n_red == PC_MAX_DIMS) {
      pc_program_free(p);
      return pt_fail(d, PT_ERR_INVALID, "RF: too many reduction iterators");
    }
    leaf_axis[n] = ndim + n_red;
    red_ext[n_red] = st->nodes[n].extent;
    memcpy(red_name[n_red], st->nodes[n].name, PC_NAME_LEN);
    n_red++;
  }
  /* Spatial leaves are untouched by the substitution: only reduce root axes are rewritten. */
  pc_expr *map[PC_MAX_AXES];
  for (int k = 0; k < op->ndim; k++) map[k] = spatial_map[k];
  pc_expr *guard = NULL;
  for (int n = 0; n < st->n_nodes; n++) {
    const pc_iter *it = &st->nodes[n];
    if (it->kind != PC_ITER_REDUCE) continue;
    if (it->rel == PC_REL_ROOT) map[it->root_axis] = node_expr(a, st, n, leaf_axis);
    int64_t cover = 1;
    for (int c = 0; c < it->n_children; c++) cover *= st->nodes[it->children[c]].extent;
    if (it->n_children > 0 && cover > it->extent) {
      pc_expr *lt = mk_bin(a, PC_E_LT, node_expr(a, st, n, leaf_axis), mk_const(a, it->extent));
      guard = guard ? mk_bin(a, PC_E_AND, guard, lt) : lt;
    }
  }
  int at = sid;
  pc_op orig = p->ops[st->op];
  insert_op_slot(p, at);
  pc_op *rf = &p->ops[at], *red = &p->ops[at + 1];
  memset(rf, 0, sizeof *rf);
  snprintf(rf->name, sizeof rf->name, "%.26s.rf", orig.name);
  rf->ndim = ndim;
  for (int k = 0, j = 0; k < ndim; k++) {
    if (k == fa) {
      rf->shape[k] = st->nodes[fnode].extent;
      snprintf(rf->axis_name[k], PC_NAME_LEN, "%.26s.v", st->nodes[fnode].name);
    } else {
      rf->shape[k] = orig.shape[j];
      memcpy(rf->axis_name[k], orig.axis_name[j], PC_NAME_LEN);
      j++;
    }
  }
  rf->n_reduce = n_red;
  for (int k = 0; k < n_red; k++) {
    rf->reduce_extent[k] = red_ext[k];
    memcpy(rf->axis_name[ndim + k], red_name[k], PC_NAME_LEN);
  }
  rf->reduce = n_red > 0 ? orig.reduce : PC_REDUCE_NONE;
  pc_expr *body = subst_axes(a, red->body, map);
  if (guard) {
    pc_expr *sel = mk(a, PC_E_SELECT, false);
    pc_expr *id = mk(a, PC_E_CONST_F, false);
    id->fval = orig.reduce == PC_REDUCE_MAX ? -3.402823466e38 : 0.0;
    sel->n_args = 3;
    sel->args[0] = guard;
    sel->args[1] = body;
    sel->args[2] = id;
    body = sel;
  }
  rf->body = body;
  /* The original now reduces the rf op over the factored axis. */
  red->n_reduce = 1;
  red->reduce_extent[0] = st->nodes[fnode].extent;
  snprintf(red->axis_name[red->ndim], PC_NAME_LEN, "%.26s.v", st->nodes[fnode].name);
  pc_expr *load = mk(a, PC_E_LOAD, false);
  load->tensor = at;
  load->n_args = ndim;
  for (int k = 0, j = 0; k < ndim; k++) load->args[k] = k == fa ? mk_axis(a, red->ndim) : mk_axis(a, j++);
  red->body = load;
  commit_inserted_before(s, p, at);
  return 0;
}

int pc_apply_dag_step(pc_state *s, const pc_step *step, pt_diag *d) {
  switch (step->kind) {
  case PC_STEP_CHW: return apply_cache_write(s, step, d);
  case PC_STEP_CHR: return apply_cache_read(s, step, d);
  case PC_STEP_RF: return apply_rfactor(s, step, d);
  default: return pt_fail(d, PT_ERR_INVALID, "not a DAG step");
  }
}
