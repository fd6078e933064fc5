/* Schedule state: stages and iterator nodes, and the loop transform steps of Ansor (split,
 * follow splits, fuse, reorder, annotate, pragma, storage_align) with their validation.
 * Attachment steps (compute_at/inline/root) live in attach.c; lowering reads the result. */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

void pc_stage_init(pc_stage *st, const pc_program *p, int op_id) {
  memset(st, 0, sizeof *st);
  const pc_op *op = &p->ops[op_id];
  st->op = op_id;
  st->at = PC_AT_ROOT;
  st->attach_stage = st->attach_node = -1;
  st->storage_align_dim = -1;
  if (op->is_placeholder) return;
  int n_axes = op->ndim + op->n_reduce;
  for (int a = 0; a < n_axes; a++) {
    pc_iter *it = &st->nodes[a];
    snprintf(it->name, sizeof it->name, "%s", op->axis_name[a]);
    it->extent = a < op->ndim ? op->shape[a] : op->reduce_extent[a - op->ndim];
    it->kind = a < op->ndim ? PC_ITER_SPATIAL : PC_ITER_REDUCE;
    it->rel = PC_REL_ROOT;
    it->root_axis = a;
    it->split_parent = -1;
    it->fused_into = -1;
    st->leaves[a] = a;
  }
  st->n_nodes = st->n_leaves = n_axes;
}

/* Writes only the fields before the stages and the live stages: stages past n_stages and steps
 * past n_steps are never read (see live_bytes), and zeroing the whole ~400 KB struct was half the
 * time of replaying a candidate's schedule. */
void pc_state_init(pc_state *s, const pc_program *p) {
  memset(s, 0, offsetof(pc_state, stages));
  s->prog = (pc_program *)p;
  s->owns_prog = false;
  s->n_stages = p->n_ops;
  s->n_steps = 0;
  for (int i = 0; i < p->n_ops; i++) pc_stage_init(&s->stages[i], p, i);
}

pc_state *pc_state_new(const pc_program *p) {
  if (p->n_ops > PC_MAX_STAGES) return NULL;
  pc_state *s = malloc(sizeof *s);
  if (s) pc_state_init(s, p);
  return s;
}

pc_state *pc_state_copy(const pc_state *s) {
  pc_state *c = malloc(sizeof *c);
  memcpy(c, s, sizeof *c);
  if (s->owns_prog) c->prog = pc_program_copy(s->prog);
  return c;
}

void pc_state_free(pc_state *s) {
  if (s && s->owns_prog) pc_program_free(s->prog);
  free(s);
}

static int check_stage(const pc_state *s, int stage_id, const char *step, pt_diag *d) {
  if (stage_id < 0 || stage_id >= s->n_stages)
    return pt_fail(d, PT_ERR_INVALID, "%s: stage %d out of range (the state has %d stages)", step,
                   stage_id, s->n_stages);
  if (s->prog->ops[s->stages[stage_id].op].is_placeholder)
    return pt_fail(d, PT_ERR_INVALID, "%s: stage %d (%s) is a placeholder and has no loops", step,
                   stage_id, s->prog->ops[s->stages[stage_id].op].name);
  return 0;
}

static int check_iter(const pc_state *s, int stage_id, int iter_id, const char *step, pt_diag *d) {
  int rc = check_stage(s, stage_id, step, d);
  if (rc) return rc;
  const pc_stage *st = &s->stages[stage_id];
  if (iter_id < 0 || iter_id >= st->n_leaves)
    return pt_fail(d, PT_ERR_INVALID, "%s: iterator %d out of range (stage %d has %d iterators)", step,
                   iter_id, stage_id, st->n_leaves);
  return 0;
}

static int new_node(pc_stage *st, pt_diag *d) {
  if (st->n_nodes >= PC_MAX_NODES) {
    pt_fail(d, PT_ERR_INVALID, "stage has more than %d iterators", PC_MAX_NODES);
    return -1;
  }
  pc_iter *it = &st->nodes[st->n_nodes];
  memset(it, 0, sizeof *it);
  it->split_parent = -1;
  it->fused_into = -1;
  return st->n_nodes++;
}

/* Moves every stage attached at node `from` of stage `stage_id` to node `to`. */
static void move_attach(pc_state *s, int stage_id, int from, int to) {
  for (int i = 0; i < s->n_stages; i++)
    if (s->stages[i].at == PC_AT_ITER && s->stages[i].attach_stage == stage_id && s->stages[i].attach_node == from)
      s->stages[i].attach_node = to;
}

int64_t pc_ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

/* Recomputes node extents top-down from the root extents: fixed split factors keep their
 * extent, the one free child of a split gets ceil(parent / product of the others). */
void pc_stage_propagate_extents(pc_stage *st) {
  for (int n = 0; n < st->n_nodes; n++) {
    pc_iter *it = &st->nodes[n];
    if (it->n_children > 0) {
      int64_t fixed = 1;
      int free_child = -1;
      for (int c = 0; c < it->n_children; c++) {
        pc_iter *ch = &st->nodes[it->children[c]];
        if (ch->factor > 0) {
          ch->extent = ch->factor;
          fixed *= ch->factor;
        } else
          free_child = it->children[c];
      }
      if (free_child >= 0) st->nodes[free_child].extent = pc_ceil_div(it->extent, fixed);
    }
    if (it->rel == PC_REL_FUSE) {
      int64_t e = 1;
      for (int k = 0; k < it->n_fused; k++) e *= st->nodes[it->fused[k]].extent;
      it->extent = e;
    }
  }
}

/* Children are created after their parents, so one pass in node order suffices above. */

/* An attached stage computes only its consumer's region, so a split's fixed inner lengths
 * may exceed what is left of the root: as TVM's PassDownDomain does (each split's inner
 * extent tightened to min(factor, parent extent)), a child gets the smaller of its factor and
 * the remaining extent, and the outer ones what is left after it. A level-2 fused tile
 * (consumer region l2*l3 of a tile l1*l2*l3) then runs its level-1 loop once instead of l1
 * times under a guard: an mm512 candidate with a cache_write tile fused at level 2 went from
 * 628 ms (four times the work, every store masked) to 2.8 ms on one core (docs/tuning.md,
 * "Why the search fell short at 64 measurements"). Index strides stay right: a child is
 * smaller than its factor only when every child outside it is left with extent 1. Only
 * splits whose outermost child is the free one (inner_to_outer) are tightened. */
static void tighten_split_extents(pc_stage *st) {
  for (int n = 0; n < st->n_nodes; n++) {
    pc_iter *it = &st->nodes[n];
    if (it->n_children > 0 && st->nodes[it->children[0]].factor <= 0) {
      int64_t rem = it->extent;
      bool fixed = true;
      for (int c = 1; c < it->n_children; c++) fixed = fixed && st->nodes[it->children[c]].factor > 0;
      for (int c = it->n_children - 1; fixed && c >= 1; c--) {
        pc_iter *ch = &st->nodes[it->children[c]];
        ch->extent = ch->factor < rem ? ch->factor : rem;
        rem = pc_ceil_div(rem, ch->factor);
      }
      if (fixed) st->nodes[it->children[0]].extent = rem;
    }
    if (it->rel == PC_REL_FUSE) {
      int64_t e = 1;
      for (int k = 0; k < it->n_fused; k++) e *= st->nodes[it->fused[k]].extent;
      it->extent = e;
    }
  }
}

/* Bound inference of an attached stage: its first n_axes root axes get the region its
 * consumer reads per iteration of the attach loop, and every loop below the extent it runs.
 * Lowering, the xgb features and (through lowering) the analytic model all see these
 * extents, so what a model scores is what runs. */
void pc_stage_bound_region(pc_stage *st, int n_axes, const int64_t *region) {
  for (int n = 0; n < st->n_nodes; n++)
    if (st->nodes[n].rel == PC_REL_ROOT && st->nodes[n].root_axis < n_axes) st->nodes[n].extent = region[st->nodes[n].root_axis];
  pc_stage_propagate_extents(st);
  tighten_split_extents(st);
}

static int apply_split(pc_state *s, int stage_id, int iter_id, int n_len, const int64_t *lengths,
                       bool inner_to_outer, const char *step, pt_diag *d) {
  int rc = check_iter(s, stage_id, iter_id, step, d);
  if (rc) return rc;
  pc_stage *st = &s->stages[stage_id];
  if (n_len < 1 || n_len >= PC_MAX_DIMS)
    return pt_fail(d, PT_ERR_INVALID, "%s: %d split lengths (1..%d allowed)", step, n_len, PC_MAX_DIMS - 1);
  for (int k = 0; k < n_len; k++)
    if (lengths[k] <= 0 || lengths[k] > ((int64_t)1 << 31))
      return pt_fail(d, PT_ERR_INVALID, "%s: length %d is %lld", step, k, (long long)lengths[k]);
  if (st->n_nodes + n_len + 1 > PC_MAX_NODES || st->n_leaves + n_len > PC_MAX_LEAVES)
    return pt_fail(d, PT_ERR_INVALID, "%s: stage %d would have too many iterators", step, stage_id);
  int parent = st->leaves[iter_id];
  pc_iter *pn = &st->nodes[parent];
  if (pn->annotation != PC_ANN_NONE)
    return pt_fail(d, PT_ERR_INVALID, "%s: iterator %d (%s) is annotated and cannot be split", step, iter_id, pn->name);
  int children[PC_MAX_DIMS];
  int n = n_len + 1;
  char pname[PC_NAME_LEN];
  memcpy(pname, pn->name, sizeof pname);
  for (int c = 0; c < n; c++) {
    int id = new_node(st, d);
    pc_iter *ch = &st->nodes[id];
    pn = &st->nodes[parent];
    snprintf(ch->name, sizeof ch->name, "%.24s.%d", pname, c);
    ch->kind = pn->kind;
    ch->rel = PC_REL_SPLIT;
    ch->split_parent = parent;
    /* inner_to_outer: lengths are the inner children; otherwise the outer ones. */
    if (inner_to_outer)
      ch->factor = c == 0 ? 0 : lengths[c - 1];
    else
      ch->factor = c == n - 1 ? 0 : lengths[c];
    children[c] = id;
  }
  pn = &st->nodes[parent];
  pn->n_children = n;
  memcpy(pn->children, children, sizeof(int) * (size_t)n);
  memmove(&st->leaves[iter_id + n], &st->leaves[iter_id + 1], sizeof(int) * (size_t)(st->n_leaves - iter_id - 1));
  for (int c = 0; c < n; c++) st->leaves[iter_id + c] = children[c];
  st->n_leaves += n - 1;
  move_attach(s, stage_id, parent, children[0]);
  pc_stage_propagate_extents(st);
  return 0;
}

static int apply_fuse(pc_state *s, const pc_step *step, pt_diag *d) {
  int rc = check_stage(s, step->stage_id, "FU", d);
  if (rc) return rc;
  pc_stage *st = &s->stages[step->stage_id];
  int n = step->n_ids;
  if (n < 1 || n > PC_MAX_DIMS)
    return pt_fail(d, PT_ERR_INVALID, "FU: %d iterators to fuse (1..%d allowed)", n, PC_MAX_DIMS);
  for (int k = 0; k < n; k++) {
    if (step->ids[k] < 0 || step->ids[k] >= st->n_leaves)
      return pt_fail(d, PT_ERR_INVALID, "FU: iterator %d out of range (stage %d has %d iterators)",
                     step->ids[k], step->stage_id, st->n_leaves);
    if (k > 0 && step->ids[k] != step->ids[k - 1] + 1)
      return pt_fail(d, PT_ERR_INVALID, "FU: iterators must be consecutive, got %d after %d", step->ids[k],
                     step->ids[k - 1]);
    if (st->nodes[st->leaves[step->ids[k]]].annotation != PC_ANN_NONE)
      return pt_fail(d, PT_ERR_INVALID, "FU: iterator %d is annotated", step->ids[k]);
  }
  if (n == 1) return 0;
  int f = new_node(st, d);
  if (f < 0) return PT_ERR_INVALID;
  pc_iter *fn = &st->nodes[f];
  fn->rel = PC_REL_FUSE;
  fn->n_fused = n;
  fn->extent = 1;
  int kinds = 0;
  size_t len = 0;
  for (int k = 0; k < n; k++) {
    int node = st->leaves[step->ids[k]];
    pc_iter *p = &st->nodes[node];
    fn->fused[k] = node;
    fn->extent *= p->extent;
    p->fused_into = f;
    kinds |= 1 << p->kind;
    char pname[PC_NAME_LEN];
    memcpy(pname, p->name, sizeof pname);
    len += (size_t)snprintf(fn->name + len, len < sizeof fn->name ? sizeof fn->name - len : 0, "%s@", pname);
    if (len >= sizeof fn->name) len = sizeof fn->name - 1;
    move_attach(s, step->stage_id, node, f);
  }
  fn->kind = kinds == (1 << PC_ITER_SPATIAL) ? PC_ITER_SPATIAL : kinds == (1 << PC_ITER_REDUCE) ? PC_ITER_REDUCE : PC_ITER_MIXED;
  if (fn->kind == PC_ITER_MIXED) {
    st->n_nodes--; /* the state is restored by the caller; keep the message precise */
    return pt_fail(d, PT_ERR_UNSUPPORTED, "FU: fusing spatial and reduction iterators (%s) is not supported", fn->name);
  }
  int first = step->ids[0];
  st->leaves[first] = f;
  memmove(&st->leaves[first + 1], &st->leaves[first + n], sizeof(int) * (size_t)(st->n_leaves - first - n));
  st->n_leaves -= n - 1;
  return 0;
}

static int apply_reorder(pc_state *s, const pc_step *step, pt_diag *d) {
  int rc = check_stage(s, step->stage_id, "RE", d);
  if (rc) return rc;
  pc_stage *st = &s->stages[step->stage_id];
  if (step->n_ids != st->n_leaves)
    return pt_fail(d, PT_ERR_INVALID, "RE: %d iterators given, stage %d has %d", step->n_ids, step->stage_id,
                   st->n_leaves);
  bool used[PC_MAX_LEAVES] = {0};
  int leaves[PC_MAX_LEAVES];
  for (int k = 0; k < step->n_ids; k++) {
    int id = step->ids[k];
    if (id < 0 || id >= st->n_leaves || used[id])
      return pt_fail(d, PT_ERR_INVALID, "RE: %d is not a permutation of 0..%d (entry %d is %d)", step->n_ids,
                     st->n_leaves - 1, k, id);
    used[id] = true;
    leaves[k] = st->leaves[id];
  }
  memcpy(st->leaves, leaves, sizeof(int) * (size_t)st->n_leaves);
  return 0;
}

static int apply_annotation(pc_state *s, const pc_step *step, pt_diag *d) {
  int rc = check_iter(s, step->stage_id, step->iter_id, "AN", d);
  if (rc) return rc;
  int a = step->annotation;
  if (a != PC_ANN_NONE && a != PC_ANN_UNROLL && a != PC_ANN_VECTORIZE && a != PC_ANN_PARALLEL)
    return pt_fail(d, PT_ERR_UNSUPPORTED, "AN: annotation %d (%s) is not supported on CPU targets", a,
                   a == PC_ANN_VTHREAD ? "vthread" : a == PC_ANN_TENSORIZE ? "tensorize" : "GPU thread binding");
  pc_stage *st = &s->stages[step->stage_id];
  pc_iter *it = &st->nodes[st->leaves[step->iter_id]];
  if (a == PC_ANN_VECTORIZE && it->kind != PC_ITER_SPATIAL)
    return pt_fail(d, PT_ERR_INVALID, "AN: cannot vectorize %s, a %s iterator", it->name,
                   it->kind == PC_ITER_REDUCE ? "reduction" : "mixed");
  if (a == PC_ANN_PARALLEL && it->kind != PC_ITER_SPATIAL)
    return pt_fail(d, PT_ERR_INVALID, "AN: cannot parallelize %s, a %s iterator", it->name,
                   it->kind == PC_ITER_REDUCE ? "reduction" : "mixed");
  it->annotation = a;
  return 0;
}

static int apply_pragma(pc_state *s, const pc_step *step, pt_diag *d) {
  int rc = check_iter(s, step->stage_id, step->iter_id, "PR", d);
  if (rc) return rc;
  const char *key = "auto_unroll_max_step$";
  if (strncmp(step->pragma, key, strlen(key)) == 0) {
    char *end;
    long v = strtol(step->pragma + strlen(key), &end, 10);
    if (*end || v < 0 || v > 1 << 20)
      return pt_fail(d, PT_ERR_INVALID, "PR: bad auto_unroll_max_step value in \"%s\"", step->pragma);
    s->stages[step->stage_id].auto_unroll_max_step = (int)v;
    return 0;
  }
  if (strcmp(step->pragma, "debug_skip_region") == 0) return 0; /* a TVM debugging aid, no effect */
  return pt_fail(d, PT_ERR_UNSUPPORTED, "PR: unknown pragma \"%s\"", step->pragma);
}

static const pc_step *source_split(const pc_state *s, int src, const char *step, pt_diag *d) {
  if (src < 0 || src >= s->n_steps) {
    pt_fail(d, PT_ERR_INVALID, "%s: source step %d out of range (%d steps so far)", step, src, s->n_steps);
    return NULL;
  }
  if (s->steps[src].kind != PC_STEP_SP) {
    pt_fail(d, PT_ERR_INVALID, "%s: source step %d is %s, not a split", step, src, pc_step_code(s->steps[src].kind));
    return NULL;
  }
  return &s->steps[src];
}

static int apply_follow_split(pc_state *s, const pc_step *step, pt_diag *d) {
  const pc_step *src = source_split(s, step->src_step_id, "FSP", d);
  if (!src) return PT_ERR_INVALID;
  int n = step->n_split;
  if (n < 1 || n > src->n_lengths + 1)
    return pt_fail(d, PT_ERR_INVALID, "FSP: n_split %d must be in 1..%d for source step %d", n, src->n_lengths + 1,
                   step->src_step_id);
  /* TVM: the first n_split-1 lengths, then the product of the rest as the last factor. */
  int64_t lengths[PC_MAX_DIMS];
  for (int j = 0; j < n - 1; j++) lengths[j] = src->lengths[j];
  int64_t last = 1;
  for (int j = n - 1; j < src->n_lengths; j++) last *= src->lengths[j];
  lengths[n - 1] = last;
  return apply_split(s, step->stage_id, step->iter_id, n, lengths, true, "FSP", d);
}

static int apply_follow_fused_split(pc_state *s, const pc_step *step, pt_diag *d) {
  if (step->n_ids < 1) return pt_fail(d, PT_ERR_INVALID, "FFSP: no source steps");
  int64_t len = 1;
  for (int k = 0; k < step->n_ids; k++) {
    const pc_step *src = source_split(s, step->ids[k], "FFSP", d);
    if (!src) return PT_ERR_INVALID;
    if (step->level < 0 || step->level >= src->n_lengths)
      return pt_fail(d, PT_ERR_INVALID, "FFSP: level %d out of range for source step %d", step->level, step->ids[k]);
    len *= src->lengths[step->level];
  }
  return apply_split(s, step->stage_id, step->iter_id, 1, &len, step->factor_or_nparts, "FFSP", d);
}

static int apply_storage_align(pc_state *s, const pc_step *step, pt_diag *d) {
  int rc = check_iter(s, step->stage_id, step->iter_id, "SA", d);
  if (rc) return rc;
  if (step->factor <= 0 || step->offset < 0 || step->offset >= step->factor)
    return pt_fail(d, PT_ERR_INVALID, "SA: need factor > 0 and 0 <= offset < factor, got %d, %d", step->factor,
                   step->offset);
  pc_stage *st = &s->stages[step->stage_id];
  const pc_op *op = &s->prog->ops[st->op];
  if (op->is_output) return pt_fail(d, PT_ERR_UNSUPPORTED, "SA: stage %d (%s) is an output; its layout is the user's", step->stage_id, op->name);
  /* TVM aligns the buffer dimension of the iterator's root axis. */
  int n = st->leaves[step->iter_id];
  while (st->nodes[n].rel == PC_REL_SPLIT) n = st->nodes[n].split_parent;
  if (st->nodes[n].rel != PC_REL_ROOT || st->nodes[n].root_axis >= op->ndim)
    return pt_fail(d, PT_ERR_INVALID, "SA: iterator %d is not derived from one spatial axis", step->iter_id);
  st->storage_align_factor = step->factor;
  st->storage_align_offset = step->offset;
  st->storage_align_dim = st->nodes[n].root_axis;
  return 0;
}

/* The bytes of a state a step can change: the fields before the stages and the live stages (a DAG
 * step adds one, which pc_stage_init fills whole; stages past n_stages are never read), while steps
 * are only appended. Saving the 400 KB struct whole was most of the time of replaying a schedule
 * step by step (TLP's replayed extents, session 21). */
static size_t live_bytes(const pc_state *s) {
  return offsetof(pc_state, stages) + sizeof(pc_stage) * (size_t)s->n_stages;
}

static int apply_step(pc_state *s, const pc_step *step, pt_diag *d) {
  int rc;
  switch (step->kind) {
  case PC_STEP_SP:
    rc = apply_split(s, step->stage_id, step->iter_id, step->n_lengths, step->lengths, step->inner_to_outer, "SP", d);
    break;
  case PC_STEP_FSP: rc = apply_follow_split(s, step, d); break;
  case PC_STEP_FFSP: rc = apply_follow_fused_split(s, step, d); break;
  case PC_STEP_FU: rc = apply_fuse(s, step, d); break;
  case PC_STEP_RE: rc = apply_reorder(s, step, d); break;
  case PC_STEP_AN: rc = apply_annotation(s, step, d); break;
  case PC_STEP_PR: rc = apply_pragma(s, step, d); break;
  case PC_STEP_SA: rc = apply_storage_align(s, step, d); break;
  case PC_STEP_CA:
  case PC_STEP_CI:
  case PC_STEP_CR: rc = pc_apply_attach(s, step, d); break;
  case PC_STEP_CHW:
  case PC_STEP_CHR:
  case PC_STEP_RF: rc = pc_apply_dag_step(s, step, d); break;
  default:
    rc = pt_fail(d, PT_ERR_UNSUPPORTED, "%s: step not supported yet", pc_step_code(step->kind));
    break;
  }
  return rc;
}

int pc_state_apply(pc_state *s, const pc_step *step, pt_diag *d) {
  if (s->n_steps >= PC_MAX_STEPS) return pt_fail(d, PT_ERR_INVALID, "more than %d steps", PC_MAX_STEPS);
  pc_state backup;
  size_t live = live_bytes(s);
  memcpy(&backup, s, live);
  int rc = apply_step(s, step, d);
  if (rc) {
    memcpy(s, &backup, live);
    return rc;
  }
  s->steps[s->n_steps++] = *step;
  return 0;
}

int pc_state_replay(pc_state *s, const pc_step *step, pt_diag *d) {
  if (s->n_steps >= PC_MAX_STEPS) return pt_fail(d, PT_ERR_INVALID, "more than %d steps", PC_MAX_STEPS);
  int rc = apply_step(s, step, d);
  if (!rc) s->steps[s->n_steps++] = *step;
  return rc;
}

int pc_state_apply_all(pc_state *s, int n, const pc_step *steps, pt_diag *d) {
  for (int i = 0; i < n; i++) {
    int rc = pc_state_apply(s, &steps[i], d);
    if (rc) return pt_fail(d, rc, "(at step %d)", i);
  }
  return 0;
}

static const char *ann_name(int a) {
  switch (a) {
  case PC_ANN_UNROLL: return "unroll ";
  case PC_ANN_VECTORIZE: return "vectorize ";
  case PC_ANN_PARALLEL: return "parallel ";
  default: return "";
  }
}


static void print_stage(const pc_state *s, int sid, int depth, pt_sbuf *b);

static void print_attached(const pc_state *s, int sid, int node, int depth, pt_sbuf *b) {
  for (int o = 0; o < s->n_stages; o++)
    if (s->stages[o].at == PC_AT_ITER && s->stages[o].attach_stage == sid && s->stages[o].attach_node == node)
      print_stage(s, o, depth, b);
}

static void print_stage(const pc_state *s, int sid, int depth, pt_sbuf *b) {
  const pc_stage *st = &s->stages[sid];
  const pc_op *op = &s->prog->ops[st->op];
  for (int l = 0; l < st->n_leaves; l++) {
    const pc_iter *it = &st->nodes[st->leaves[l]];
    pt_sbuf_printf(b, "%*s%sfor %s (0,%lld)\n", 2 * (depth + l), "", ann_name(it->annotation), it->name, (long long)it->extent);
    print_attached(s, sid, st->leaves[l], depth + l + 1, b);
  }
  pt_sbuf_printf(b, "%*s%s = ...\n", 2 * (depth + st->n_leaves), "", op->name);
}

void pc_state_print(const pc_state *s, char *buf, size_t cap) {
  pt_sbuf b = {buf, cap, 0};
  buf[0] = 0;
  for (int i = 0; i < s->n_stages; i++) {
    const pc_stage *st = &s->stages[i];
    const pc_op *op = &s->prog->ops[st->op];
    if (op->is_placeholder) {
      pt_sbuf_printf(&b, "Placeholder: %s\n", op->name);
      continue;
    }
    if (st->at == PC_AT_ROOT) print_stage(s, i, 0, &b);
    if (st->at == PC_AT_INLINE) pt_sbuf_printf(&b, "(%s inlined)\n", op->name);
  }
}
