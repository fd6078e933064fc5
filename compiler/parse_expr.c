/* Expressions of the user syntax (docs/expressions.md), by precedence from `if` down to
 * literals: pc_expr nodes through the builder, with int/float typing and conversions, and
 * the sites (axis uses, loads) that parse_check.c needs once extents are known. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "parse.h"

int64_t pc_ps_floor_div(int64_t a, int64_t b) {
  if (b == -1) return a == INT64_MIN ? INT64_MIN : -a; /* the one quotient that overflows */
  int64_t q = a / b;
  return (a % b != 0 && ((a < 0) != (b < 0))) ? q - 1 : q;
}

/* Every node goes through here so a statement's size (and the depth of later walks) is bounded. */
static bool count_node(pc_parser *ps, int tok) {
  if (++ps->n_nodes <= PC_PARSE_MAX_NODES) return true;
  pc_ps_err(ps, tok, "statement is too large (more than %d operations)", PC_PARSE_MAX_NODES);
  return false;
}

static bool is_condition(const pc_expr *e) { return e->kind >= PC_E_LT && e->kind <= PC_E_OR; }

/* A condition used as a number is select(c, 1, 0): lowering evaluates comparisons only
 * where a condition is expected (select, && and ||). */
static pc_expr *as_number(pc_parser *ps, pc_expr *e, bool as_float, int tok) {
  if (!e || !is_condition(e)) return e;
  if (!count_node(ps, tok)) return NULL;
  return as_float ? pc_select(ps->b, e, pc_const_f(ps->b, 1), pc_const_f(ps->b, 0))
                  : pc_select(ps->b, e, pc_const_i(ps->b, 1), pc_const_i(ps->b, 0));
}

pc_expr *pc_ps_to_float(pc_parser *ps, pc_expr *e, int tok) {
  if (!e || !e->is_int) return e;
  if (e->kind == PC_E_CONST_I) return pc_const_f(ps->b, (double)e->ival);
  if (is_condition(e)) return as_number(ps, e, true, tok);
  if (!count_node(ps, tok)) return NULL;
  return pc_un(ps->b, PC_E_CAST_F, e);
}

/* Brings two operands to one type: float if either is, conditions becoming numbers. */
static bool unify(pc_parser *ps, pc_expr **a, pc_expr **c, int a_tok, int c_tok) {
  if (!*a || !*c) return false;
  bool as_float = !(*a)->is_int || !(*c)->is_int;
  *a = as_float ? pc_ps_to_float(ps, *a, a_tok) : as_number(ps, *a, false, a_tok);
  *c = as_float ? pc_ps_to_float(ps, *c, c_tok) : as_number(ps, *c, false, c_tok);
  return *a && *c;
}

/* Integer arithmetic on two constants, folded so `i / (2 * 8)` has a constant divisor. */
static bool fold(pc_expr_kind k, int64_t a, int64_t c, int64_t *r) {
  switch (k) {
  case PC_E_ADD: return !__builtin_add_overflow(a, c, r);
  case PC_E_SUB: return !__builtin_sub_overflow(a, c, r);
  case PC_E_MUL: return !__builtin_mul_overflow(a, c, r);
  case PC_E_DIV: *r = pc_ps_floor_div(a, c); return true;
  case PC_E_MOD: *r = a - pc_ps_floor_div(a, c) * c; return true;
  case PC_E_MAX: *r = a > c ? a : c; return true;
  case PC_E_MIN: *r = a < c ? a : c; return true;
  default: return false;
  }
}

/* Arithmetic and comparisons on two values: integer if both are, otherwise the integer
 * side converts. Integer / and % are floor division and modulo by a positive constant
 * (what lowering and Ansor's affine analysis handle). */
static pc_expr *arith(pc_parser *ps, pc_expr_kind k, pc_expr *a, pc_expr *c, int tok) {
  if (!a || !c || !count_node(ps, tok)) return NULL;
  if (k != PC_E_AND && k != PC_E_OR && !unify(ps, &a, &c, tok, tok)) return NULL;
  if (k == PC_E_MOD && !a->is_int) return pc_ps_err(ps, tok, "'%%' needs integer operands; got a float value");
  if ((k == PC_E_DIV || k == PC_E_MOD) && a->is_int && (c->kind != PC_E_CONST_I || c->ival <= 0))
    return pc_ps_err(ps, tok, "integer '%s' needs a positive constant divisor (write float(...) for a fraction)",
                     k == PC_E_DIV ? "/" : "%");
  int64_t v;
  if (a->kind == PC_E_CONST_I && c->kind == PC_E_CONST_I && fold(k, a->ival, c->ival, &v)) {
    a->ival = v;
    return a;
  }
  return pc_bin(ps->b, k, a, c);
}

static pc_expr *need_int(pc_parser *ps, pc_expr *e, int tok, const char *what) {
  if (e && !e->is_int)
    return pc_ps_err(ps, tok, "%s must be an integer expression (a condition), not a float value", what);
  return e;
}

/* `sum(` anywhere, or `max(`/`min(` whose parentheses hold only new names with optional
 * extents, `max(k)` or `max(k: 3, l)`: a reduction header, not a call (a call's bare names
 * would have to be axes of the statement already). */
bool pc_ps_at_reduction(const pc_parser *ps) {
  const pc_tok *t = peek(ps);
  if (!pc_tok_punct(ps->text, peek2(ps, 1), "(")) return false;
  if (pc_tok_word(ps->text, t, "sum")) return true;
  if (!pc_tok_word(ps->text, t, "max") && !pc_tok_word(ps->text, t, "min")) return false;
  for (int i = 2;; i++) {
    const pc_tok *a = peek2(ps, i);
    if (a->kind != PC_TOK_IDENT || pc_ps_reserved(ps, a) || pc_ps_find_axis(ps, a) >= 0 ||
        pc_ps_find_tensor(ps, a) >= 0 || pc_ps_find_head(ps, a) >= 0)
      return false;
    if (pc_tok_punct(ps->text, peek2(ps, i + 1), ":")) {
      i += 2;
      if (pc_tok_punct(ps->text, peek2(ps, i), "-")) i++;
      if (peek2(ps, i)->kind != PC_TOK_INT) return false;
    }
    const pc_tok *sep = peek2(ps, ++i);
    if (pc_tok_punct(ps->text, sep, ")")) return true;
    if (!pc_tok_punct(ps->text, sep, ",")) return false;
  }
}

static pc_expr *parse_load(pc_parser *ps) {
  int name_tok = ps->pos;
  const pc_tok *t = peek(ps);
  int ti = pc_ps_find_tensor(ps, t);
  if (ti < 0) {
    int h = pc_ps_find_head(ps, t);
    if (h == ps->cur_tok)
      return pc_ps_err(ps, name_tok, "tensor '%.*s' is used in its own definition", (int)t->len, ps->text + t->off);
    if (h >= 0)
      return pc_ps_err(ps, name_tok, "tensor '%.*s' is used before its definition at %d:%d", (int)t->len,
                       ps->text + t->off, tok_at(ps, h)->line, tok_at(ps, h)->col);
    return pc_ps_err(ps, name_tok, "unknown tensor '%.*s'", (int)t->len, ps->text + t->off);
  }
  pc_tensor_info *ten = &ps->tensors[ti];
  advance(ps);
  advance(ps); /* '[' */
  pc_expr *idx[PC_MAX_DIMS];
  int idx_tok[PC_MAX_DIMS], n = 0;
  for (;;) {
    if (n == PC_MAX_DIMS)
      return pc_ps_err(ps, name_tok, "wrong number of indices: %s has %d dimension%s, indexed with more than %d",
                       ten->name, ten->ndim, ten->ndim == 1 ? "" : "s", PC_MAX_DIMS);
    idx_tok[n] = ps->pos;
    pc_expr *e = pc_ps_expr(ps);
    if (!e) return NULL;
    if (!e->is_int)
      return pc_ps_err(ps, idx_tok[n], "a float value cannot be used as an index (dimension %d of %s)", n, ten->name);
    if (!(e = as_number(ps, e, false, idx_tok[n]))) return NULL;
    if (e->kind == PC_E_AXIS && ps->n_uses < PC_PARSE_MAX_NODES)
      ps->uses[ps->n_uses++] = (pc_axis_use){e->axis, ti, n, idx_tok[n]};
    idx[n++] = e;
    if (at_punct(ps, "]")) break;
    if (!pc_ps_expect(ps, ",", "',' or ']' in the indices")) return NULL;
  }
  advance(ps);
  if (n != ten->ndim)
    return pc_ps_err(ps, name_tok, "wrong number of indices: %s has %d dimension%s, indexed with %d", ten->name,
                     ten->ndim, ten->ndim == 1 ? "" : "s", n);
  if (!count_node(ps, name_tok)) return NULL;
  ten->read = true;
  pc_expr *e = pc_load(ps->b, ti, n, idx);
  pc_load_site *s = &ps->loads[ps->n_loads++];
  s->e = e;
  s->tok = name_tok;
  s->guarded = ps->guard > 0;
  memcpy(s->idx_tok, idx_tok, sizeof idx_tok);
  return e;
}

/* Built-in functions: name, argument count (max/min take two or more). */
static pc_expr *parse_call(pc_parser *ps) {
  int name_tok = ps->pos;
  const pc_tok *t = peek(ps);
  static const struct {
    const char *name;
    int n_args;
  } fns[] = {{"max", 2}, {"min", 2}, {"exp", 1}, {"sqrt", 1}, {"relu", 1}, {"float", 1}, {"select", 3}};
  int f = -1;
  for (int i = 0; i < (int)PT_ARRAY_LEN(fns); i++)
    if (pc_tok_word(ps->text, t, fns[i].name)) f = i;
  if (f < 0) return pc_ps_err(ps, name_tok, "unknown function '%.*s'", (int)t->len, ps->text + t->off);
  advance(ps);
  advance(ps); /* '(' */
  bool is_select = strcmp(fns[f].name, "select") == 0;
  pc_expr *args[PC_MAX_DIMS];
  int arg_tok[PC_MAX_DIMS], n = 0;
  for (;;) {
    if (n == PC_MAX_DIMS) return pc_ps_err(ps, name_tok, "too many arguments to %s", fns[f].name);
    arg_tok[n] = ps->pos;
    if (is_select && n >= 1) ps->guard++;
    pc_expr *e = pc_ps_expr(ps);
    if (is_select && n >= 1) ps->guard--;
    if (!e) return NULL;
    args[n++] = e;
    if (at_punct(ps, ")")) break;
    if (!pc_ps_expect(ps, ",", "',' or ')' after an argument")) return NULL;
  }
  advance(ps);
  bool variadic = fns[f].name[1] == 'a' || fns[f].name[1] == 'i'; /* max, min */
  if (n != fns[f].n_args && !(variadic && n > 2))
    return pc_ps_err(ps, name_tok, "%s takes %s%d argument%s, got %d", fns[f].name, variadic ? "at least " : "",
                     fns[f].n_args, fns[f].n_args == 1 ? "" : "s", n);
  const char *name = fns[f].name;
  if (!strcmp(name, "max") || !strcmp(name, "min")) {
    pc_expr *e = args[0];
    for (int i = 1; i < n && e; i++) e = arith(ps, name[1] == 'a' ? PC_E_MAX : PC_E_MIN, e, args[i], name_tok);
    return e;
  }
  if (!strcmp(name, "relu")) {
    pc_expr *zero = args[0]->is_int ? pc_const_i(ps->b, 0) : pc_const_f(ps->b, 0.0);
    return arith(ps, PC_E_MAX, args[0], zero, name_tok);
  }
  if (!strcmp(name, "select")) {
    if (!need_int(ps, args[0], arg_tok[0], "select's condition")) return NULL;
    pc_expr *a = args[1], *c = args[2];
    if (!unify(ps, &a, &c, arg_tok[1], arg_tok[2])) return NULL;
    if (!count_node(ps, name_tok)) return NULL;
    return pc_select(ps->b, args[0], a, c);
  }
  pc_expr *x = pc_ps_to_float(ps, args[0], arg_tok[0]);
  if (!x) return NULL;
  if (!strcmp(name, "float")) return x;
  if (!count_node(ps, name_tok)) return NULL;
  return pc_un(ps->b, name[0] == 'e' ? PC_E_EXP : PC_E_SQRT, x);
}

static pc_expr *parse_primary(pc_parser *ps) {
  const pc_tok *t = peek(ps);
  int at = ps->pos;
  if (t->kind == PC_TOK_INT) {
    advance(ps);
    return count_node(ps, at) ? pc_const_i(ps->b, t->ival) : NULL;
  }
  if (t->kind == PC_TOK_FLOAT) {
    advance(ps);
    return count_node(ps, at) ? pc_const_f(ps->b, t->fval) : NULL;
  }
  if (pc_tok_punct(ps->text, t, "(")) {
    advance(ps);
    pc_expr *e = pc_ps_expr(ps);
    if (e && !pc_ps_expect(ps, ")", "')'")) return NULL;
    return e;
  }
  if (t->kind != PC_TOK_IDENT) return pc_ps_unexpected(ps, "an expression");
  if (pc_tok_word(ps->text, t, "if")) {
    advance(ps);
    int cond_tok = ps->pos;
    pc_expr *c = need_int(ps, pc_ps_expr(ps), cond_tok, "the condition of 'if'");
    if (!c) return NULL;
    if (!at_word(ps, "then")) return pc_ps_unexpected(ps, "'then'");
    advance(ps);
    int a_tok = ps->pos;
    ps->guard++;
    pc_expr *a = pc_ps_expr(ps);
    if (a && !at_word(ps, "else")) a = pc_ps_unexpected(ps, "'else'");
    if (a) advance(ps);
    int c_tok = ps->pos;
    pc_expr *f = a ? pc_ps_expr(ps) : NULL;
    ps->guard--;
    if (!unify(ps, &a, &f, a_tok, c_tok)) return NULL;
    return count_node(ps, at) ? pc_select(ps->b, c, a, f) : NULL;
  }
  if (pc_ps_at_reduction(ps)) {
    if (pc_tok_word(ps->text, t, "min"))
      return pc_ps_err(ps, at, "min-reductions are not supported (only sum and max)");
    return pc_ps_err(ps, at,
                     "a reduction must be the whole right-hand side of a statement "
                     "(compute it as its own tensor, e.g. S[i] = sum(k) A[i, k])");
  }
  if (pc_tok_punct(ps->text, peek2(ps, 1), "(")) return parse_call(ps);
  if (pc_tok_punct(ps->text, peek2(ps, 1), "[")) return parse_load(ps);
  int ax = pc_ps_find_axis(ps, t);
  if (ax >= 0) {
    advance(ps);
    return count_node(ps, at) ? pc_axis(ps->b, ax) : NULL;
  }
  if (pc_ps_find_tensor(ps, t) >= 0 || pc_ps_find_head(ps, t) >= 0)
    return pc_ps_err(ps, at, "tensor '%.*s' needs indices, e.g. %.*s[i]", (int)t->len, ps->text + t->off, (int)t->len,
                     ps->text + t->off);
  if (pc_ps_reserved(ps, t)) return pc_ps_err(ps, at, "unexpected '%.*s'", (int)t->len, ps->text + t->off);
  return pc_ps_err(ps, at, "undefined axis '%.*s'", (int)t->len, ps->text + t->off);
}

static pc_expr *parse_unary(pc_parser *ps) {
  int at = ps->pos;
  if (++ps->nest > PC_PARSE_MAX_NEST)
    return pc_ps_err(ps, at, "expression is nested too deeply (more than %d levels)", PC_PARSE_MAX_NEST);
  pc_expr *e;
  if (at_punct(ps, "-")) {
    advance(ps);
    e = as_number(ps, parse_unary(ps), false, at);
    if (e && e->kind == PC_E_CONST_I && e->ival != INT64_MIN)
      e->ival = -e->ival;
    else if (e && e->kind == PC_E_CONST_F)
      e->fval = -e->fval;
    else if (e)
      e = count_node(ps, at) ? pc_un(ps->b, PC_E_NEG, e) : NULL;
  } else {
    e = parse_primary(ps);
  }
  ps->nest--;
  return e;
}

typedef struct {
  const char *text;
  pc_expr_kind kind;
} binop;

static const binop *match_op(const pc_parser *ps, const binop *ops, int n) {
  for (int i = 0; i < n; i++)
    if (at_punct(ps, ops[i].text)) return &ops[i];
  return NULL;
}

static pc_expr *parse_mul(pc_parser *ps) {
  static const binop ops[] = {{"*", PC_E_MUL}, {"/", PC_E_DIV}, {"%", PC_E_MOD}};
  pc_expr *e = parse_unary(ps);
  const binop *op;
  while (e && (op = match_op(ps, ops, 3))) {
    int at = advance(ps);
    e = arith(ps, op->kind, e, parse_unary(ps), at);
  }
  return e;
}

static pc_expr *parse_add(pc_parser *ps) {
  static const binop ops[] = {{"+", PC_E_ADD}, {"-", PC_E_SUB}};
  pc_expr *e = parse_mul(ps);
  const binop *op;
  while (e && (op = match_op(ps, ops, 2))) {
    int at = advance(ps);
    e = arith(ps, op->kind, e, parse_mul(ps), at);
  }
  return e;
}

static pc_expr *parse_cmp(pc_parser *ps) {
  static const binop ops[] = {{"<=", PC_E_LE}, {">=", PC_E_GE}, {"==", PC_E_EQ},
                              {"!=", PC_E_NE}, {"<", PC_E_LT},  {">", PC_E_GT}};
  pc_expr *e = parse_add(ps);
  const binop *op = e ? match_op(ps, ops, 6) : NULL;
  if (!op) return e;
  int at = advance(ps);
  e = arith(ps, op->kind, e, parse_add(ps), at);
  if (e && match_op(ps, ops, 6)) return pc_ps_err(ps, ps->pos, "comparisons cannot be chained; join them with &&");
  return e;
}

static pc_expr *parse_logic(pc_parser *ps, bool is_or) {
  pc_expr *e = is_or ? parse_logic(ps, false) : parse_cmp(ps);
  while (e && at_punct(ps, is_or ? "||" : "&&")) {
    int at = advance(ps);
    if (!need_int(ps, e, at, is_or ? "the left side of '||'" : "the left side of '&&'")) return NULL;
    int rhs_tok = ps->pos;
    pc_expr *r = is_or ? parse_logic(ps, false) : parse_cmp(ps);
    if (!need_int(ps, r, rhs_tok, is_or ? "the right side of '||'" : "the right side of '&&'")) return NULL;
    e = arith(ps, is_or ? PC_E_OR : PC_E_AND, e, r, at);
  }
  return e;
}

pc_expr *pc_ps_expr(pc_parser *ps) { return parse_logic(ps, true); }
