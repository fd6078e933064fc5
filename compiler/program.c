/* Compute DAG construction: the builder that workloads and the expression parser use, and
 * the topological order that makes stage ids match TVM's ComputeDAG (TopoSortOps). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

struct pc_builder {
  pt_arena *arena;
  char name[64];
  int n_ops, cap;
  pc_op *ops;
};

pc_builder *pc_builder_new(const char *name) {
  pc_builder *b = calloc(1, sizeof *b);
  b->arena = pt_arena_new();
  snprintf(b->name, sizeof b->name, "%s", name);
  b->cap = 16;
  b->ops = calloc((size_t)b->cap, sizeof(pc_op));
  return b;
}

void pc_builder_free(pc_builder *b) {
  if (!b) return;
  pt_arena_free(b->arena);
  free(b->ops);
  free(b);
}

static pc_op *add_op(pc_builder *b, int *id) {
  if (b->n_ops == b->cap) {
    b->cap *= 2;
    b->ops = realloc(b->ops, (size_t)b->cap * sizeof(pc_op));
  }
  *id = b->n_ops++;
  pc_op *op = &b->ops[*id];
  memset(op, 0, sizeof *op);
  return op;
}

int pc_placeholder(pc_builder *b, const char *name, int ndim, const int64_t *shape) {
  int id;
  pc_op *op = add_op(b, &id);
  snprintf(op->name, sizeof op->name, "%s", name);
  op->is_placeholder = true;
  op->ndim = ndim;
  for (int i = 0; i < ndim; i++) op->shape[i] = shape[i];
  return id;
}

int pc_compute(pc_builder *b, const char *name, int ndim, const int64_t *shape, int n_reduce,
               const int64_t *reduce_extent, const char *const *axis_names, pc_reduce_kind reduce) {
  int id;
  pc_op *op = add_op(b, &id);
  snprintf(op->name, sizeof op->name, "%s", name);
  op->ndim = ndim;
  for (int i = 0; i < ndim; i++) op->shape[i] = shape[i];
  op->n_reduce = n_reduce;
  for (int i = 0; i < n_reduce; i++) op->reduce_extent[i] = reduce_extent[i];
  for (int i = 0; i < ndim + n_reduce; i++) {
    if (axis_names && axis_names[i])
      snprintf(op->axis_name[i], PC_NAME_LEN, "%s", axis_names[i]);
    else
      snprintf(op->axis_name[i], PC_NAME_LEN, "%s%d", i < ndim ? "ax" : "rv", i < ndim ? i : i - ndim);
  }
  op->reduce = n_reduce > 0 ? reduce : PC_REDUCE_NONE;
  return id;
}

void pc_set_body(pc_builder *b, int op, pc_expr *body) { b->ops[op].body = body; }

static pc_expr *node(pc_builder *b, pc_expr_kind k, bool is_int) {
  pc_expr *e = pt_alloc(b->arena, sizeof *e);
  e->kind = k;
  e->is_int = is_int;
  return e;
}

pc_expr *pc_const_f(pc_builder *b, double v) {
  pc_expr *e = node(b, PC_E_CONST_F, false);
  e->fval = v;
  return e;
}

pc_expr *pc_const_i(pc_builder *b, int64_t v) {
  pc_expr *e = node(b, PC_E_CONST_I, true);
  e->ival = v;
  return e;
}

pc_expr *pc_axis(pc_builder *b, int axis) {
  pc_expr *e = node(b, PC_E_AXIS, true);
  e->axis = axis;
  return e;
}

pc_expr *pc_load(pc_builder *b, int tensor, int n, pc_expr *const *idx) {
  pc_expr *e = node(b, PC_E_LOAD, false);
  e->tensor = tensor;
  e->n_args = n;
  for (int i = 0; i < n && i < PC_MAX_DIMS; i++) e->args[i] = idx[i];
  return e;
}

pc_expr *pc_un(pc_builder *b, pc_expr_kind k, pc_expr *a) {
  pc_expr *e = node(b, k, k == PC_E_NEG ? a->is_int : false);
  e->n_args = 1;
  e->args[0] = a;
  return e;
}

static bool is_compare(pc_expr_kind k) {
  return k == PC_E_LT || k == PC_E_LE || k == PC_E_GT || k == PC_E_GE || k == PC_E_EQ ||
         k == PC_E_NE || k == PC_E_AND || k == PC_E_OR;
}

pc_expr *pc_bin(pc_builder *b, pc_expr_kind k, pc_expr *a, pc_expr *c) {
  /* Conditions are integers (0/1); arithmetic is integer only when both sides are. */
  pc_expr *e = node(b, k, is_compare(k) || (a->is_int && c->is_int));
  e->n_args = 2;
  e->args[0] = a;
  e->args[1] = c;
  return e;
}

pc_expr *pc_select(pc_builder *b, pc_expr *cond, pc_expr *t, pc_expr *f) {
  pc_expr *e = node(b, PC_E_SELECT, t->is_int && f->is_int);
  e->n_args = 3;
  e->args[0] = cond;
  e->args[1] = t;
  e->args[2] = f;
  return e;
}

/* Collects the ops a body reads in post-order first appearance, like TVM's InputTensors. */
static void collect_inputs(const pc_expr *e, pc_op *op) {
  if (!e) return;
  for (int i = 0; i < e->n_args; i++) collect_inputs(e->args[i], op);
  if (e->kind != PC_E_LOAD) return;
  for (int i = 0; i < op->n_inputs; i++)
    if (op->inputs[i] == e->tensor) return;
  if (op->n_inputs < (int)PT_ARRAY_LEN(op->inputs)) op->inputs[op->n_inputs++] = e->tensor;
}

static int check_expr(const pc_builder *b, const pc_op *op, const pc_expr *e, pt_diag *d) {
  if (!e) return pt_fail(d, PT_ERR_INVALID, "op %s: missing expression", op->name);
  int n_axes = op->ndim + op->n_reduce;
  if (e->kind == PC_E_AXIS && (e->axis < 0 || e->axis >= n_axes))
    return pt_fail(d, PT_ERR_INVALID, "op %s: axis %d out of range", op->name, e->axis);
  if (e->kind == PC_E_LOAD) {
    if (e->tensor < 0 || e->tensor >= b->n_ops)
      return pt_fail(d, PT_ERR_INVALID, "op %s: load of unknown tensor", op->name);
    const pc_op *t = &b->ops[e->tensor];
    if (e->n_args != t->ndim)
      return pt_fail(d, PT_ERR_INVALID, "op %s: %s has %d dimensions, indexed with %d", op->name,
                     t->name, t->ndim, e->n_args);
  }
  for (int i = 0; i < e->n_args; i++) {
    int rc = check_expr(b, op, e->args[i], d);
    if (rc) return rc;
  }
  return 0;
}

pc_program *pc_builder_finish(pc_builder *b, int n_args, const int *args, double flops, pt_diag *d) {
  int n = b->n_ops;
  for (int i = 0; i < n; i++) {
    pc_op *op = &b->ops[i];
    for (int k = 0; k < op->ndim; k++)
      if (op->shape[k] <= 0 || op->shape[k] > (int64_t)1 << 32) {
        pt_fail(d, PT_ERR_INVALID, "op %s: dimension %d has extent %lld", op->name, k,
                (long long)op->shape[k]);
        goto fail;
      }
    if (op->is_placeholder) continue;
    if (check_expr(b, op, op->body, d)) goto fail;
    collect_inputs(op->body, op);
  }
  /* TVM's TopoSortOps: DFS from the argument list (a stack, last argument first) gives each
   * op a visit priority; Kahn's algorithm then always takes the ready op of highest priority. */
  int *prio = malloc(sizeof(int) * (size_t)n), *deg = calloc((size_t)n, sizeof(int));
  int *stack = malloc(sizeof(int) * (size_t)(n * 32 + n_args + 1)), *order = malloc(sizeof(int) * (size_t)n);
  bool *seen = calloc((size_t)n, sizeof(bool)), *done = calloc((size_t)n, sizeof(bool));
  int sp = 0, ct = 0;
  for (int i = 0; i < n_args; i++) stack[sp++] = args[i];
  while (sp > 0) {
    int o = stack[--sp];
    if (seen[o]) continue;
    seen[o] = true;
    prio[o] = ct++;
    deg[o] = b->ops[o].n_inputs;
    for (int i = 0; i < b->ops[o].n_inputs; i++) stack[sp++] = b->ops[o].inputs[i];
  }
  int n_sorted = 0;
  for (;;) {
    int best = -1;
    for (int o = 0; o < n; o++)
      if (seen[o] && !done[o] && deg[o] == 0 && (best < 0 || prio[o] > prio[best])) best = o;
    if (best < 0) break;
    done[best] = true;
    order[n_sorted++] = best;
    for (int o = 0; o < n; o++)
      if (seen[o] && !done[o])
        for (int i = 0; i < b->ops[o].n_inputs; i++)
          if (b->ops[o].inputs[i] == best) deg[o]--;
  }
  free(prio);
  free(deg);
  free(stack);
  free(seen);
  free(done);
  if (n_sorted == 0) {
    free(order);
    pt_fail(d, PT_ERR_INVALID, "%s: program has no reachable ops", b->name);
    goto fail;
  }
  pc_program *p = calloc(1, sizeof *p);
  p->arena = b->arena;
  snprintf(p->name, sizeof p->name, "%s", b->name);
  p->n_ops = n_sorted;
  p->ops = pt_alloc(p->arena, sizeof(pc_op) * (size_t)n_sorted);
  p->flops = flops;
  int *new_id = malloc(sizeof(int) * (size_t)n);
  for (int o = 0; o < n; o++) new_id[o] = -1;
  for (int i = 0; i < n_sorted; i++) new_id[order[i]] = i;
  for (int i = 0; i < n_sorted; i++) {
    p->ops[i] = b->ops[order[i]];
    for (int k = 0; k < p->ops[i].n_inputs; k++) p->ops[i].inputs[k] = new_id[p->ops[i].inputs[k]];
    pc_expr_remap_tensors(p->ops[i].body, new_id);
  }
  /* Outputs: compute ops in the argument list, or any compute op nobody reads. */
  for (int i = 0; i < n_args; i++)
    if (new_id[args[i]] >= 0 && !p->ops[new_id[args[i]]].is_placeholder) p->ops[new_id[args[i]]].is_output = true;
  free(new_id);
  free(order);
  free(b->ops);
  free(b);
  return p;
fail:
  pc_builder_free(b);
  return NULL;
}

void pc_expr_remap_tensors(pc_expr *e, const int *new_id) {
  if (!e) return;
  if (e->kind == PC_E_LOAD) e->tensor = new_id[e->tensor];
  for (int i = 0; i < e->n_args; i++) pc_expr_remap_tensors(e->args[i], new_id);
}

void pc_program_free(pc_program *p) {
  if (!p) return;
  pt_arena_free(p->arena);
  free(p);
}

int64_t pc_op_numel(const pc_op *op) {
  int64_t n = 1;
  for (int i = 0; i < op->ndim; i++) n *= op->shape[i];
  return n;
}

int pc_program_find(const pc_program *p, const char *name) {
  for (int i = 0; i < p->n_ops; i++)
    if (strcmp(p->ops[i].name, name) == 0) return i;
  return -1;
}

static const char *kind_text[] = {
#define X(name, text, arity) text,
    PC_EXPR_KINDS(X)
#undef X
};
_Static_assert(PT_ARRAY_LEN(kind_text) == PC_E_COUNT, "one text per expression kind");


static void print_expr(pt_sbuf *s, const pc_program *p, const pc_op *op, const pc_expr *e) {
  switch (e->kind) {
  case PC_E_CONST_F: pt_sbuf_printf(s, "%g", e->fval); return;
  case PC_E_CONST_I: pt_sbuf_printf(s, "%lld", (long long)e->ival); return;
  case PC_E_AXIS: pt_sbuf_printf(s, "%s", op->axis_name[e->axis]); return;
  case PC_E_LOAD:
    pt_sbuf_printf(s, "%s[", p->ops[e->tensor].name);
    for (int i = 0; i < e->n_args; i++) {
      if (i) pt_sbuf_printf(s, ", ");
      print_expr(s, p, op, e->args[i]);
    }
    pt_sbuf_printf(s, "]");
    return;
  default: break;
  }
  if (e->n_args == 2 && !(e->kind == PC_E_MAX || e->kind == PC_E_MIN)) {
    pt_sbuf_printf(s, "(");
    print_expr(s, p, op, e->args[0]);
    pt_sbuf_printf(s, " %s ", kind_text[e->kind]);
    print_expr(s, p, op, e->args[1]);
    pt_sbuf_printf(s, ")");
    return;
  }
  pt_sbuf_printf(s, "%s(", kind_text[e->kind]);
  for (int i = 0; i < e->n_args; i++) {
    if (i) pt_sbuf_printf(s, ", ");
    print_expr(s, p, op, e->args[i]);
  }
  pt_sbuf_printf(s, ")");
}

void pc_program_print(const pc_program *p, char *buf, size_t cap) {
  pt_sbuf s = {buf, cap, 0};
  buf[0] = 0;
  for (int i = 0; i < p->n_ops; i++) {
    const pc_op *op = &p->ops[i];
    pt_sbuf_printf(&s, "%d %s[", i, op->name);
    for (int k = 0; k < op->ndim; k++) pt_sbuf_printf(&s, "%s%lld", k ? ", " : "", (long long)op->shape[k]);
    pt_sbuf_printf(&s, "]");
    if (op->is_placeholder) {
      pt_sbuf_printf(&s, " = placeholder\n");
      continue;
    }
    pt_sbuf_printf(&s, "(");
    for (int k = 0; k < op->ndim; k++) pt_sbuf_printf(&s, "%s%s", k ? ", " : "", op->axis_name[k]);
    pt_sbuf_printf(&s, ") = ");
    if (op->reduce != PC_REDUCE_NONE) {
      pt_sbuf_printf(&s, "%s(", op->reduce == PC_REDUCE_SUM ? "sum" : "max");
      for (int k = 0; k < op->n_reduce; k++)
        pt_sbuf_printf(&s, "%s%s:%lld", k ? ", " : "", op->axis_name[op->ndim + k], (long long)op->reduce_extent[k]);
      pt_sbuf_printf(&s, ") ");
    }
    print_expr(&s, p, op, op->body);
    pt_sbuf_printf(&s, "%s\n", op->is_output ? "   (output)" : "");
  }
}
