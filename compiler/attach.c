/* Where a stage is computed: compute_at (inside a consumer's loop), compute_inline (folded
 * into its consumers) and compute_root; validated so lowering can trust the result. */
#include <string.h>

#include "internal.h"

/* True if stage `consumer` reads stage `producer`'s op, directly or through inlined stages. */
bool pc_stage_consumes(const pc_state *s, int consumer, int producer) {
  const pc_op *c = &s->prog->ops[s->stages[consumer].op];
  int pop = s->stages[producer].op;
  for (int i = 0; i < c->n_inputs; i++) {
    if (c->inputs[i] == pop) return true;
    int st = pc_stage_of_op(s, c->inputs[i]);
    if (st >= 0 && s->stages[st].at == PC_AT_INLINE && pc_stage_consumes(s, st, producer)) return true;
  }
  return false;
}

int pc_stage_of_op(const pc_state *s, int op) {
  for (int i = 0; i < s->n_stages; i++)
    if (s->stages[i].op == op) return i;
  return -1;
}

int pc_apply_attach(pc_state *s, const pc_step *step, pt_diag *d) {
  const char *code = pc_step_code(step->kind);
  int sid = step->stage_id;
  if (sid < 0 || sid >= s->n_stages)
    return pt_fail(d, PT_ERR_INVALID, "%s: stage %d out of range (the state has %d stages)", code, sid, s->n_stages);
  pc_stage *st = &s->stages[sid];
  const pc_op *op = &s->prog->ops[st->op];
  if (op->is_placeholder)
    return pt_fail(d, PT_ERR_INVALID, "%s: stage %d (%s) is a placeholder", code, sid, op->name);
  switch (step->kind) {
  case PC_STEP_CR:
    st->at = PC_AT_ROOT;
    st->attach_stage = st->attach_node = -1;
    return 0;
  case PC_STEP_CI:
    if (op->is_output) return pt_fail(d, PT_ERR_INVALID, "CI: stage %d (%s) is an output", sid, op->name);
    if (op->n_reduce > 0) return pt_fail(d, PT_ERR_INVALID, "CI: stage %d (%s) is a reduction", sid, op->name);
    for (int i = 0; i < s->n_stages; i++)
      if (s->stages[i].at == PC_AT_ITER && s->stages[i].attach_stage == sid)
        return pt_fail(d, PT_ERR_INVALID, "CI: stage %d has stage %d attached to it", sid, i);
    st->at = PC_AT_INLINE;
    st->attach_stage = st->attach_node = -1;
    return 0;
  case PC_STEP_CA: {
    int t = step->target_stage_id;
    if (t < 0 || t >= s->n_stages || t == sid)
      return pt_fail(d, PT_ERR_INVALID, "CA: target stage %d invalid for stage %d", t, sid);
    if (s->prog->ops[s->stages[t].op].is_placeholder)
      return pt_fail(d, PT_ERR_INVALID, "CA: target stage %d is a placeholder", t);
    if (s->stages[t].at == PC_AT_INLINE) return pt_fail(d, PT_ERR_INVALID, "CA: target stage %d is inlined", t);
    if (!pc_stage_consumes(s, t, sid))
      return pt_fail(d, PT_ERR_INVALID, "CA: target stage %d (%s) does not consume stage %d (%s)", t,
                     s->prog->ops[s->stages[t].op].name, sid, op->name);
    if (op->is_output) return pt_fail(d, PT_ERR_INVALID, "CA: stage %d (%s) is an output", sid, op->name);
    /* Every consumer must be the target (or inlined into it): one attach point per stage. */
    for (int i = 0; i < s->n_stages; i++)
      if (i != t && s->stages[i].at != PC_AT_INLINE && !s->prog->ops[s->stages[i].op].is_placeholder &&
          pc_stage_consumes(s, i, sid))
        return pt_fail(d, PT_ERR_INVALID, "CA: stage %d is also read by stage %d, not only by target %d", sid, i, t);
    if (step->target_iter_id < 0 || step->target_iter_id >= s->stages[t].n_leaves)
      return pt_fail(d, PT_ERR_INVALID, "CA: target iterator %d out of range (stage %d has %d)", step->target_iter_id,
                     t, s->stages[t].n_leaves);
    /* No cycles: the target must not itself be attached (transitively) inside this stage. */
    for (int a = t; a >= 0 && s->stages[a].at == PC_AT_ITER; a = s->stages[a].attach_stage)
      if (s->stages[a].attach_stage == sid)
        return pt_fail(d, PT_ERR_INVALID, "CA: stage %d is attached inside stage %d", t, sid);
    st->at = PC_AT_ITER;
    st->attach_stage = t;
    st->attach_node = s->stages[t].leaves[step->target_iter_id];
    return 0;
  }
  default: return pt_fail(d, PT_ERR_INVALID, "%s: not an attachment step", code);
  }
}
