/* Checks of one parsed statement of the user syntax: extents inferred from the tensors an
 * axis indexes, sizes, interval bounds of every unguarded load, and its FLOP count. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "parse.h"

typedef struct {
  int64_t lo, hi;
  bool ok;
} range;

static range rng(int64_t lo, int64_t hi) { return (range){lo, hi, true}; }
static const range unknown = {0, 0, false};

/* The values an integer expression takes over the iteration space (interval arithmetic;
 * each node is visited once, so the cost is linear in the expression). */
static range eval_range(const pc_parser *ps, const pc_expr *e) {
  switch (e->kind) {
  case PC_E_CONST_I: return rng(e->ival, e->ival);
  case PC_E_AXIS: return rng(0, ps->extent[e->axis] - 1);
  case PC_E_LT:
  case PC_E_LE:
  case PC_E_GT:
  case PC_E_GE:
  case PC_E_EQ:
  case PC_E_NE:
  case PC_E_AND:
  case PC_E_OR: return rng(0, 1);
  case PC_E_NEG: {
    range a = eval_range(ps, e->args[0]);
    if (!a.ok || a.lo == INT64_MIN) return unknown;
    return rng(-a.hi, -a.lo);
  }
  case PC_E_SELECT: {
    range a = eval_range(ps, e->args[1]), c = eval_range(ps, e->args[2]);
    if (!a.ok || !c.ok) return unknown;
    return rng(a.lo < c.lo ? a.lo : c.lo, a.hi > c.hi ? a.hi : c.hi);
  }
  case PC_E_ADD:
  case PC_E_SUB:
  case PC_E_MUL:
  case PC_E_DIV:
  case PC_E_MOD:
  case PC_E_MAX:
  case PC_E_MIN: break;
  default: return unknown; /* float values never reach an index */
  }
  range a = eval_range(ps, e->args[0]), c = eval_range(ps, e->args[1]);
  if (!a.ok || !c.ok || !e->is_int) return unknown;
  int64_t v[4];
  switch (e->kind) {
  case PC_E_ADD:
    if (__builtin_add_overflow(a.lo, c.lo, &v[0]) || __builtin_add_overflow(a.hi, c.hi, &v[1])) return unknown;
    return rng(v[0], v[1]);
  case PC_E_SUB:
    if (__builtin_sub_overflow(a.lo, c.hi, &v[0]) || __builtin_sub_overflow(a.hi, c.lo, &v[1])) return unknown;
    return rng(v[0], v[1]);
  case PC_E_MAX: return rng(a.lo > c.lo ? a.lo : c.lo, a.hi > c.hi ? a.hi : c.hi);
  case PC_E_MIN: return rng(a.lo < c.lo ? a.lo : c.lo, a.hi < c.hi ? a.hi : c.hi);
  case PC_E_MUL:
  case PC_E_DIV: {
    if (e->kind == PC_E_DIV && c.lo <= 0 && c.hi >= 0) return unknown;
    int64_t x[2] = {a.lo, a.hi}, y[2] = {c.lo, c.hi};
    for (int i = 0; i < 4; i++) {
      int64_t p = x[i / 2], q = y[i % 2];
      if (e->kind == PC_E_MUL) {
        if (__builtin_mul_overflow(p, q, &v[i])) return unknown;
      } else {
        if (p == INT64_MIN && q == -1) return unknown;
        v[i] = pc_ps_floor_div(p, q); /* monotone in each argument while q keeps its sign */
      }
    }
    int64_t lo = v[0], hi = v[0];
    for (int i = 1; i < 4; i++) {
      if (v[i] < lo) lo = v[i];
      if (v[i] > hi) hi = v[i];
    }
    return rng(lo, hi);
  }
  default: /* PC_E_MOD */
    if (c.lo <= 0 && c.hi >= 0) return unknown;
    if (c.lo > 0) { /* floor mod by a positive divisor lies in [0, divisor) */
      if (a.lo >= 0 && a.hi < c.lo) return a;
      return rng(0, c.hi - 1);
    }
    if (c.lo == INT64_MIN) return unknown;
    return rng(c.lo + 1, 0);
  }
}

/* Sets every undeclared extent from the tensor dimensions its axis indexes directly. */
bool pc_ps_infer_extents(pc_parser *ps) {
  int src[PC_MAX_AXES];
  for (int a = 0; a < ps->n_axes; a++) src[a] = -1;
  for (int u = 0; u < ps->n_uses; u++) {
    const pc_axis_use *use = &ps->uses[u];
    if (ps->extent[use->axis] > 0 && src[use->axis] < 0) continue; /* declared */
    int64_t ext = ps->tensors[use->tensor].shape[use->dim];
    if (src[use->axis] < 0) {
      src[use->axis] = u;
      ps->extent[use->axis] = ext;
    } else if (ps->extent[use->axis] != ext) {
      const pc_axis_use *first = &ps->uses[src[use->axis]];
      const pc_tok *ft = tok_at(ps, first->tok);
      pc_ps_err(ps, use->tok,
                "conflicting extents for axis '%s': %lld here (dimension %d of %s), %lld at %d:%d (dimension %d of %s)",
                ps->axis_name[use->axis], (long long)ext, use->dim, ps->tensors[use->tensor].name,
                (long long)ps->extent[use->axis], ft->line, ft->col, first->dim, ps->tensors[first->tensor].name);
      return false;
    }
  }
  for (int a = 0; a < ps->n_axes; a++)
    if (ps->extent[a] == 0) {
      pc_ps_err(ps, ps->axis_tok[a],
                "cannot infer the extent of axis '%s': it never indexes a tensor dimension by itself; declare it, "
                "e.g. %s:16",
                ps->axis_name[a], ps->axis_name[a]);
      return false;
    }
  return true;
}

/* what: "input A has", "tensor B has", "the reduction in B has" ... more than 2^31 unit. */
bool pc_ps_check_sizes(pc_parser *ps, int name_tok, const char *name, const int64_t *ext, int n, const char *what,
                       const char *unit) {
  int64_t numel = 1;
  for (int i = 0; i < n; i++)
    if (__builtin_mul_overflow(numel, ext[i], &numel) || numel > PC_PARSE_MAX_NUMEL) {
      pc_ps_err(ps, name_tok, "%s %s has more than 2^31 %s", what, name, unit);
      return false;
    }
  return true;
}

bool pc_ps_check_indices(pc_parser *ps) {
  for (int i = 0; i < ps->n_loads; i++) {
    const pc_load_site *s = &ps->loads[i];
    if (s->guarded) continue; /* a select condition may keep it in bounds: the user's job */
    const pc_tensor_info *t = &ps->tensors[s->e->tensor];
    for (int k = 0; k < s->e->n_args; k++) {
      range r = eval_range(ps, s->e->args[k]);
      if (r.ok && r.lo >= 0 && r.hi < t->shape[k]) continue;
      if (r.ok)
        pc_ps_err(ps, s->idx_tok[k],
                  "index out of bounds: dimension %d of %s has extent %lld, the index ranges over [%lld, %lld] "
                  "(guard it with select to pad)",
                  k, t->name, (long long)t->shape[k], (long long)r.lo, (long long)r.hi);
      else
        pc_ps_err(ps, s->idx_tok[k],
                  "index out of bounds: dimension %d of %s has extent %lld, the index's range is unbounded", k, t->name,
                  (long long)t->shape[k]);
      return false;
    }
  }
  return true;
}

/* pc_op.inputs holds the distinct tensors a body reads. */
bool pc_ps_check_reads(pc_parser *ps, int name_tok) {
  bool seen[PC_PARSE_MAX_TENSORS] = {0};
  int n = 0;
  for (int i = 0; i < ps->n_loads; i++) {
    int t = ps->loads[i].e->tensor;
    n += !seen[t];
    seen[t] = true;
  }
  if (n <= (int)PT_ARRAY_LEN(((pc_op *)0)->inputs)) return true;
  pc_ps_err(ps, name_tok, "statement reads %d different tensors (at most %d)", n,
            (int)PT_ARRAY_LEN(((pc_op *)0)->inputs));
  return false;
}

/* Floating point operations at one point: adds, muls, max, exp, ... count one each;
 * integer (index) arithmetic is free; a select costs its condition and its larger branch. */
double pc_ps_point_flops(const pc_expr *e) {
  if (e->kind == PC_E_SELECT) {
    double a = pc_ps_point_flops(e->args[1]), c = pc_ps_point_flops(e->args[2]);
    return pc_ps_point_flops(e->args[0]) + (a > c ? a : c);
  }
  double f = 0;
  for (int i = 0; i < e->n_args; i++) f += pc_ps_point_flops(e->args[i]);
  if (e->kind == PC_E_LOAD || e->kind == PC_E_CAST_F || e->kind == PC_E_CONST_F) return f;
  bool float_op = e->n_args > 0 && !e->args[0]->is_int;
  if (e->n_args == 2 && !e->args[1]->is_int) float_op = true;
  return f + (float_op ? 1 : 0);
}
