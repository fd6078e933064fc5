/* The facts Ansor's sketch rules ask of a program and a state (its AccessAnalyzer and the
 * predicates of search_policy/utils.h): which ops are strictly inlineable, which need
 * multi-level tiling, consumers through inlined stages, elementwise-matched consumers,
 * compute-location candidates. Facts from TVM's compute_dag.cc and utils.h. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tune_internal.h"

typedef struct {
  int n;
  const pc_expr *load[64];
  bool branch, expensive;
} loads;

static void collect(const pc_expr *e, loads *l) {
  if (!e) return;
  if (e->kind == PC_E_SELECT) l->branch = true;
  if (e->kind == PC_E_EXP) l->expensive = true;
  if (e->kind == PC_E_LOAD && l->n < (int)PT_ARRAY_LEN(l->load)) l->load[l->n++] = e;
  for (int i = 0; i < e->n_args; i++) collect(e->args[i], l);
}

/* The axis an index reads with an optional constant shift (IsConstShiftEqual), or -1. */
static int shifted_axis(const pc_expr *e) {
  if (e->kind == PC_E_AXIS) return e->axis;
  if ((e->kind == PC_E_ADD || e->kind == PC_E_SUB) && e->args[0]->kind == PC_E_AXIS && e->args[1]->kind == PC_E_CONST_I)
    return e->args[0]->axis;
  if (e->kind == PC_E_ADD && e->args[1]->kind == PC_E_AXIS && e->args[0]->kind == PC_E_CONST_I) return e->args[1]->axis;
  return -1;
}

/* IsSimpleAccess: every index is a spatial axis of `op` with an optional shift, or a constant. */
static bool simple_access(const pc_op *op, const pc_expr *load, bool *missing, bool *dup, bool *same_order) {
  int count[PC_MAX_AXES] = {0}, last = -1;
  *same_order = true;
  for (int k = 0; k < load->n_args; k++) {
    const pc_expr *ix = load->args[k];
    if (ix->kind == PC_E_CONST_I) continue;
    int a = shifted_axis(ix);
    if (a < 0 || a >= op->ndim) return false;
    count[a]++;
    if (a < last) *same_order = false;
    last = a;
  }
  *missing = *dup = false;
  for (int a = 0; a < op->ndim; a++) {
    if (count[a] == 0) *missing = true;
    if (count[a] > 1) *dup = true;
  }
  return true;
}

bool sk_has_branch_or_expensive(const pc_program *p, int op) {
  loads l = {0};
  collect(p->ops[op].body, &l);
  return l.branch || l.expensive;
}

bool sk_is_strictly_inlineable(const pc_program *p, int op) {
  const pc_op *o = &p->ops[op];
  if (o->is_placeholder || o->n_reduce > 0) return false;
  loads l = {0};
  collect(o->body, &l);
  if (l.n == 0) return true; /* a constant tensor */
  if (l.branch || l.expensive) return false;
  for (int i = 0; i < l.n; i++) {
    bool missing, dup, same;
    if (!simple_access(o, l.load[i], &missing, &dup, &same)) return false;
    if (!same || dup) return false; /* no transposes */
  }
  return true;
}

static void axes_used(const pc_expr *e, bool *used) {
  if (!e) return;
  if (e->kind == PC_E_AXIS && e->axis < PC_MAX_AXES) used[e->axis] = true;
  for (int i = 0; i < e->n_args; i++) axes_used(e->args[i], used);
}

/* Data reuse: some input is indexed without a spatial axis (two such inputs, or one plus a
 * reduction), as AccessAnalyzer's needs_multi_level_tiling. */
bool sk_needs_multi_level_tiling(const pc_program *p, int op) {
  const pc_op *o = &p->ops[op];
  if (o->is_placeholder) return false;
  loads l = {0};
  collect(o->body, &l);
  int n_missing = 0;
  for (int in = 0; in < o->n_inputs; in++) {
    bool used[PC_MAX_AXES] = {0};
    for (int i = 0; i < l.n; i++)
      if (l.load[i]->tensor == o->inputs[in])
        for (int k = 0; k < l.load[i]->n_args; k++) axes_used(l.load[i]->args[k], used);
    for (int a = 0; a < o->ndim; a++)
      if (o->shape[a] > 1 && !used[a]) {
        n_missing++;
        break;
      }
    if (n_missing >= 2 || (n_missing >= 1 && o->n_reduce > 0)) return true;
  }
  return false;
}

int sk_consumers(const pc_state *s, int sid, int *out, int cap) {
  int n = 0;
  for (int t = 0; t < s->n_stages; t++) {
    if (t == sid || s->stages[t].at == PC_AT_INLINE || s->prog->ops[s->stages[t].op].is_placeholder) continue;
    if (pc_stage_consumes(s, t, sid) && n < cap) out[n++] = t;
  }
  return n;
}

/* Ops reading op `op` directly. */
static int readers(const pc_program *p, int op, int *out) {
  int n = 0;
  for (int i = 0; i < p->n_ops; i++)
    for (int k = 0; k < p->ops[i].n_inputs; k++)
      if (p->ops[i].inputs[k] == op) {
        out[n++] = i;
        break;
      }
  return n;
}

/* ElementWiseMatch: a chain of single readers of the same shape, each reading its
 * producer at exactly its own axes in order. */
static bool elementwise_match(const pc_program *p, int op, int target) {
  int cur = op;
  while (cur != target) {
    int r[PC_MAX_STAGES];
    if (readers(p, cur, r) != 1) return false;
    const pc_op *a = &p->ops[cur], *b = &p->ops[r[0]];
    if (a->ndim != b->ndim || memcmp(a->shape, b->shape, sizeof(int64_t) * (size_t)a->ndim) != 0) return false;
    loads l = {0};
    collect(b->body, &l);
    for (int i = 0; i < l.n; i++) {
      if (l.load[i]->tensor != cur) continue;
      bool missing, dup, same;
      if (!simple_access(b, l.load[i], &missing, &dup, &same) || missing || dup || !same) return false;
    }
    cur = r[0];
  }
  return true;
}

bool sk_stage_has_reduce(const pc_state *s, int sid) {
  const pc_stage *st = &s->stages[sid];
  for (int l = 0; l < st->n_leaves; l++)
    if (st->nodes[st->leaves[l]].kind != PC_ITER_SPATIAL) return true;
  return false;
}

int sk_single_elementwise_consumer(const pc_state *s, int sid) {
  int c[PC_MAX_STAGES];
  if (sk_consumers(s, sid, c, PC_MAX_STAGES) != 1) return -1;
  const pc_op *t = &s->prog->ops[s->stages[c[0]].op];
  if (!elementwise_match(s->prog, s->stages[sid].op, s->stages[c[0]].op)) return -1;
  if (sk_stage_has_reduce(s, sid) && sk_stage_has_reduce(s, c[0])) return -1;
  size_t len = strlen(t->name);
  if (len >= 7 && strcmp(t->name + len - 7, ".shared") == 0) return -1;
  return c[0];
}

static bool changes_stages(pc_step_kind k) { return k == PC_STEP_CHW || k == PC_STEP_CHR || k == PC_STEP_RF; }

bool sk_has_cache_write_stage(const pc_state *s, int sid) {
  for (int i = s->n_steps - 1; i >= 0; i--) {
    const pc_step *st = &s->steps[i];
    if (st->kind == PC_STEP_CHW && st->stage_id == sid) return true;
    if (changes_stages(st->kind) && sid > st->stage_id) sid--;
  }
  return false;
}

int sk_step_stage_now(const pc_state *s, int step_id) {
  int inc = 0;
  for (int i = step_id + 1; i < s->n_steps; i++)
    if (changes_stages(s->steps[i].kind) && s->steps[i].stage_id <= s->steps[step_id].stage_id + inc) inc++;
  return s->steps[step_id].stage_id + inc;
}

bool sk_stage_is_tiled(const pc_state *s, int sid) {
  const pc_op *op = &s->prog->ops[s->stages[sid].op];
  return s->stages[sid].n_leaves != op->ndim + op->n_reduce;
}

bool sk_iter_has_attached(const pc_state *s, int sid, int leaf) {
  int node = s->stages[sid].leaves[leaf];
  for (int i = 0; i < s->n_stages; i++)
    if (s->stages[i].at == PC_AT_ITER && s->stages[i].attach_stage == sid && s->stages[i].attach_node == node) return true;
  return false;
}

static bool ends_with(const char *s, const char *suffix) {
  size_t a = strlen(s), b = strlen(suffix);
  return a >= b && strcmp(s + a - b, suffix) == 0;
}

/* The consumer all consumers share as root (GetSingleConsumerId). */
static int single_consumer_root(const pc_state *s, int sid) {
  int c[PC_MAX_STAGES];
  int n = sk_consumers(s, sid, c, PC_MAX_STAGES);
  if (n == 0) return -1;
  if (n == 1) return c[0];
  int root = -1;
  for (int i = 0; i < n; i++) {
    int r = s->stages[c[i]].at == PC_AT_ITER ? s->stages[c[i]].attach_stage : c[i];
    if (root >= 0 && r != root) return -1;
    root = r;
  }
  return root;
}

int sk_compute_location_candidates(const pc_state *s, int sid, int (*out)[2], int cap) {
  int t = single_consumer_root(s, sid), n = 0;
  if (t < 0) return 0;
  const pc_stage *ts = &s->stages[t];
  bool at_other = ts->at == PC_AT_ITER, tiled = sk_stage_is_tiled(s, t), seen_reduce = false;
  for (int i = 0; i < ts->n_leaves && n < cap; i++) {
    const pc_iter *it = &ts->nodes[ts->leaves[i]];
    if (it->kind == PC_ITER_REDUCE) {
      seen_reduce = true;
      if (!tiled) break;
    } else if (it->kind == PC_ITER_SPATIAL && seen_reduce)
      break;
    if (it->annotation == PC_ANN_UNROLL) break;
    if (it->extent == 1) continue;
    if (at_other && it->kind == PC_ITER_SPATIAL && ends_with(it->name, ".0")) continue;
    out[n][0] = t, out[n][1] = i, n++;
    if (sk_iter_has_attached(s, t, i)) break;
  }
  if (at_other) {
    int tt = ts->attach_stage;
    const pc_stage *tts = &s->stages[tt];
    for (int i = 0; i < tts->n_leaves && n < cap; i++) {
      const pc_iter *it = &tts->nodes[tts->leaves[i]];
      if (it->kind == PC_ITER_REDUCE || sk_iter_has_attached(s, tt, i)) break;
      if (it->annotation == PC_ANN_UNROLL) break;
      if (it->extent == 1) continue;
      out[n][0] = tt, out[n][1] = i, n++;
    }
  }
  return n;
}

/* ---------------------------------------------------------------- steps */

pc_step sk_step(pc_step_kind k, int stage) {
  pc_step st;
  memset(&st, 0, sizeof st);
  st.kind = k;
  st.stage_id = stage;
  return st;
}

int sk_apply(pc_state *s, pc_step st, pt_diag *d) { return pc_state_apply(s, &st, d); }

pc_state *sk_replay(const pc_program *p, int n, const pc_step *steps, pt_diag *d) {
  pc_state *s = pc_state_new(p);
  if (!s) {
    pt_fail(d, PT_ERR_INVALID, "%s: too many stages", p->name);
    return NULL;
  }
  if (pc_state_apply_all(s, n, steps, d)) {
    pc_state_free(s);
    return NULL;
  }
  return s;
}

pc_state *sk_scratch_new(const pc_program *p) { return pc_state_new(p); }

/* Resets a scratch state to p's initial state without reallocating it: a state is ~400 KB,
 * and allocating one per candidate made page faults a third of the search time. */
int sk_replay_into(pc_state *s, const pc_program *p, int n, const pc_step *steps, pt_diag *d) {
  if (s->owns_prog) pc_program_free(s->prog);
  pc_state_init(s, p);
  return pc_state_apply_all(s, n, steps, d);
}

static uint64_t mix(uint64_t h, int64_t v) {
  h ^= (uint64_t)v + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2);
  return h * 0x100000001b3ull;
}

/* Hashes the fields each step kind's record encoding holds, so two sequences with the same
 * record text hash the same. */
uint64_t sk_steps_hash(int n, const pc_step *steps) {
  uint64_t h = 0xcbf29ce484222325ull;
  for (int i = 0; i < n; i++) {
    const pc_step *st = &steps[i];
    h = mix(h, st->kind);
    h = mix(h, st->stage_id);
    switch (st->kind) {
    case PC_STEP_SP:
      h = mix(h, st->iter_id), h = mix(h, st->inner_to_outer), h = mix(h, st->n_lengths);
      for (int k = 0; k < st->n_lengths; k++) h = mix(h, st->lengths[k]);
      break;
    case PC_STEP_FSP: h = mix(h, st->iter_id), h = mix(h, st->src_step_id), h = mix(h, st->n_split); break;
    case PC_STEP_FFSP:
      h = mix(h, st->iter_id), h = mix(h, st->level), h = mix(h, st->factor_or_nparts);
      for (int k = 0; k < st->n_ids; k++) h = mix(h, st->ids[k]);
      break;
    case PC_STEP_RE:
    case PC_STEP_FU:
    case PC_STEP_CHR:
      h = mix(h, st->n_ids);
      for (int k = 0; k < st->n_ids; k++) h = mix(h, st->ids[k]);
      break;
    case PC_STEP_AN: h = mix(h, st->iter_id), h = mix(h, st->annotation); break;
    case PC_STEP_PR:
      h = mix(h, st->iter_id);
      for (const char *c = st->pragma; *c; c++) h = mix(h, *c);
      break;
    case PC_STEP_CA: h = mix(h, st->target_stage_id), h = mix(h, st->target_iter_id); break;
    case PC_STEP_RF: h = mix(h, st->iter_id), h = mix(h, st->factor_iter_id); break;
    case PC_STEP_SA: h = mix(h, st->iter_id), h = mix(h, st->factor), h = mix(h, st->offset); break;
    default: break;
    }
  }
  return h;
}
