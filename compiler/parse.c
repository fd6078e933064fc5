/* Parser for the user expression syntax (docs/expressions.md): `input` declarations and
 * `NAME[axes] = expr` statements become a pc_program through the DAG builder (program.c).
 * Extents are inferred from the tensors an axis indexes; errors carry file:line:col. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lex.h"

#define MAX_TENSORS PC_MAX_STAGES /* a schedule state has one stage per tensor */
#define MAX_NEST 100              /* bracket/unary nesting: keeps recursion shallow */
#define MAX_NODES 4000            /* per statement: bounds every later recursive walk */
#define MAX_NUMEL ((int64_t)1 << 31)

static const char *const reserved[] = {"input", "sum", "max",  "min", "exp",  "sqrt",
                                       "relu",  "select", "if", "then", "else", "float"};

typedef struct {
  char name[PC_NAME_LEN];
  int ndim;
  int64_t shape[PC_MAX_DIMS];
  int tok; /* where it was defined */
  bool is_input, read;
  double flops;
} tensor_info;

typedef struct { /* an axis used as a whole index: the source of its extent */
  int axis, tensor, dim, tok;
} axis_use;

typedef struct { /* a load, for the bounds check after extents are known */
  const pc_expr *e;
  int tok, idx_tok[PC_MAX_DIMS];
  bool guarded; /* under a select branch: the condition may keep it in bounds */
} load_site;

typedef struct { /* an integer / or %, whose divisor must not be zero */
  const pc_expr *e;
  int tok;
} div_site;

typedef struct {
  const char *text, *filename;
  pt_diag *d;
  pc_lexed lx;
  int pos;
  bool failed;
  pc_builder *b;
  int n_tensors;
  tensor_info tensors[MAX_TENSORS];
  int n_heads; /* names every statement defines, found before parsing (for messages) */
  int heads[MAX_TENSORS * 2];
  /* the statement being parsed */
  int cur_tok;
  int n_spatial, n_axes;
  char axis_name[PC_MAX_AXES][PC_NAME_LEN];
  int64_t extent[PC_MAX_AXES]; /* 0 until declared or inferred */
  int axis_tok[PC_MAX_AXES];
  int nest, n_nodes, guard;
  int n_uses, n_loads, n_divs;
  axis_use uses[MAX_NODES];
  load_site loads[MAX_NODES];
  div_site divs[MAX_NODES];
} parser;

/* ------------------------------------------------------------------ tokens and errors */

static bool is_ident_byte(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
}

static const pc_tok *tok_at(const parser *ps, int i) { return &ps->lx.toks[i < ps->lx.n ? i : ps->lx.n - 1]; }
static const pc_tok *peek(const parser *ps) { return tok_at(ps, ps->pos); }
static const pc_tok *peek2(const parser *ps, int k) { return tok_at(ps, ps->pos + k); }
static int advance(parser *ps) { return ps->pos < ps->lx.n - 1 ? ps->pos++ : ps->pos; }
static bool at_punct(const parser *ps, const char *p) { return pc_tok_punct(ps->text, peek(ps), p); }
static bool at_word(const parser *ps, const char *w) { return pc_tok_word(ps->text, peek(ps), w); }

static void *err_at(parser *ps, int tok, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void *err_at(parser *ps, int tok, const char *fmt, ...) {
  if (ps->failed) return NULL;
  ps->failed = true;
  const pc_tok *t = tok_at(ps, tok);
  char msg[512];
  if (ps->lx.unclosed >= 0 && tok >= ps->lx.unclosed) {
    /* Everything after a bracket that is never closed belongs to its statement, so what
     * the parser trips on there is a consequence; the bracket is the error. */
    t = tok_at(ps, ps->lx.unclosed);
    snprintf(msg, sizeof msg, "unbalanced parentheses: this '%c' is never closed", ps->text[t->off]);
  } else if (t->kind == PC_TOK_ERROR) {
    snprintf(msg, sizeof msg, "%s", ps->lx.error);
  } else {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
  }
  pc_source_error(ps->d, ps->text, ps->filename, t->line, t->col, msg);
  return NULL;
}

/* "unexpected X; expected Y" at the current token (or the lexer's own message). */
static void *unexpected(parser *ps, const char *expected) {
  const pc_tok *t = peek(ps);
  char what[64];
  pc_tok_describe(ps->text, t, what, sizeof what);
  return err_at(ps, ps->pos, "unexpected %s; expected %s", what, expected);
}

static bool expect_punct(parser *ps, const char *p, const char *expected) {
  if (at_punct(ps, p)) {
    advance(ps);
    return true;
  }
  unexpected(ps, expected);
  return false;
}

static bool is_reserved(const parser *ps, const pc_tok *t) {
  for (size_t i = 0; i < PT_ARRAY_LEN(reserved); i++)
    if (pc_tok_word(ps->text, t, reserved[i])) return true;
  return false;
}

/* Reads an identifier usable as a tensor or axis name into out. */
static bool take_name(parser *ps, const char *what, char out[PC_NAME_LEN]) {
  const pc_tok *t = peek(ps);
  if (t->kind != PC_TOK_IDENT) {
    unexpected(ps, what);
    return false;
  }
  if (is_reserved(ps, t)) {
    err_at(ps, ps->pos, "'%.*s' is a reserved word and cannot name %s", (int)t->len, ps->text + t->off, what);
    return false;
  }
  if (t->len >= PC_NAME_LEN) {
    err_at(ps, ps->pos, "name '%.*s...' is too long (at most %d characters)", 16, ps->text + t->off, PC_NAME_LEN - 1);
    return false;
  }
  memcpy(out, ps->text + t->off, t->len);
  out[t->len] = 0;
  advance(ps);
  return true;
}

static bool tok_is_name(const parser *ps, const pc_tok *t, const char *name) {
  return t->kind == PC_TOK_IDENT && t->len == strlen(name) && memcmp(ps->text + t->off, name, t->len) == 0;
}

static int find_tensor(const parser *ps, const pc_tok *t) {
  for (int i = 0; i < ps->n_tensors; i++)
    if (tok_is_name(ps, t, ps->tensors[i].name)) return i;
  return -1;
}

static int find_head(const parser *ps, const pc_tok *t) {
  for (int i = 0; i < ps->n_heads; i++) {
    const pc_tok *h = tok_at(ps, ps->heads[i]);
    if (h->len == t->len && memcmp(ps->text + h->off, ps->text + t->off, t->len) == 0) return ps->heads[i];
  }
  return -1;
}

static int find_axis(const parser *ps, const pc_tok *t) {
  for (int i = 0; i < ps->n_axes; i++)
    if (tok_is_name(ps, t, ps->axis_name[i])) return i;
  return -1;
}

/* Extent literal: a positive integer (a leading '-' is read so the message can say so). */
static bool take_extent(parser *ps, int64_t *out) {
  int at = ps->pos;
  bool neg = at_punct(ps, "-");
  if (neg) advance(ps);
  const pc_tok *t = peek(ps);
  if (t->kind != PC_TOK_INT) {
    unexpected(ps, "an extent (a positive integer)");
    return false;
  }
  advance(ps);
  if (neg || t->ival == 0) {
    err_at(ps, at, "extent must be positive, got %s%lld", neg ? "-" : "", (long long)t->ival);
    return false;
  }
  if (t->ival > MAX_NUMEL) {
    err_at(ps, at, "extent %lld is too large (at most 2^31)", (long long)t->ival);
    return false;
  }
  *out = t->ival;
  return true;
}

/* ------------------------------------------------------------------ expressions */

/* Every node goes through here so a statement's size (and the depth of later walks) is bounded. */
static bool count_node(parser *ps, int tok) {
  if (++ps->n_nodes <= MAX_NODES) return true;
  err_at(ps, tok, "statement is too large (more than %d operations)", MAX_NODES);
  return false;
}

static pc_expr *to_float(parser *ps, pc_expr *e, int tok) {
  if (!e || !e->is_int) return e;
  if (e->kind == PC_E_CONST_I) return pc_const_f(ps->b, (double)e->ival);
  if (!count_node(ps, tok)) return NULL;
  return pc_un(ps->b, PC_E_CAST_F, e);
}

/* Arithmetic on two values: integer if both are, otherwise the integer side converts. */
static pc_expr *arith(parser *ps, pc_expr_kind k, pc_expr *a, pc_expr *c, int tok) {
  if (!a || !c || !count_node(ps, tok)) return NULL;
  if (a->is_int != c->is_int) {
    a = to_float(ps, a, tok);
    c = to_float(ps, c, tok);
    if (!a || !c) return NULL;
  }
  if ((k == PC_E_MOD) && !a->is_int)
    return err_at(ps, tok, "'%%' needs integer operands; got a float value");
  pc_expr *e = pc_bin(ps->b, k, a, c);
  if ((k == PC_E_DIV || k == PC_E_MOD) && e->is_int) ps->divs[ps->n_divs++] = (div_site){e, tok};
  return e;
}

static pc_expr *need_int(parser *ps, pc_expr *e, int tok, const char *what) {
  if (e && !e->is_int) return err_at(ps, tok, "%s must be an integer expression (a condition), not a float value", what);
  return e;
}

static pc_expr *parse_expr(parser *ps);

/* `sum(` anywhere, or `max(`/`min(` whose parentheses hold only new names with optional
 * extents, `max(k)` or `max(k: 3, l)`: a reduction header, not a call (a call's bare names
 * would have to be axes of the statement already). */
static bool at_reduction(const parser *ps) {
  const pc_tok *t = peek(ps);
  if (!pc_tok_punct(ps->text, peek2(ps, 1), "(")) return false;
  if (pc_tok_word(ps->text, t, "sum")) return true;
  if (!pc_tok_word(ps->text, t, "max") && !pc_tok_word(ps->text, t, "min")) return false;
  for (int i = 2;; i++) {
    const pc_tok *a = peek2(ps, i);
    if (a->kind != PC_TOK_IDENT || is_reserved(ps, a) || find_axis(ps, a) >= 0 || find_tensor(ps, a) >= 0 ||
        find_head(ps, a) >= 0)
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

static pc_expr *parse_load(parser *ps) {
  int name_tok = ps->pos;
  const pc_tok *t = peek(ps);
  int ti = find_tensor(ps, t);
  if (ti < 0) {
    int h = find_head(ps, t);
    if (h == ps->cur_tok)
      return err_at(ps, name_tok, "tensor '%.*s' is used in its own definition", (int)t->len, ps->text + t->off);
    if (h >= 0)
      return err_at(ps, name_tok, "tensor '%.*s' is used before its definition at %d:%d", (int)t->len,
                    ps->text + t->off, tok_at(ps, h)->line, tok_at(ps, h)->col);
    return err_at(ps, name_tok, "unknown tensor '%.*s'", (int)t->len, ps->text + t->off);
  }
  tensor_info *ten = &ps->tensors[ti];
  advance(ps);
  advance(ps); /* '[' */
  pc_expr *idx[PC_MAX_DIMS];
  int idx_tok[PC_MAX_DIMS], n = 0;
  for (;;) {
    if (n == PC_MAX_DIMS)
      return err_at(ps, name_tok, "wrong number of indices: %s has %d dimension%s, indexed with more than %d",
                    ten->name, ten->ndim, ten->ndim == 1 ? "" : "s", PC_MAX_DIMS);
    idx_tok[n] = ps->pos;
    pc_expr *e = parse_expr(ps);
    if (!e) return NULL;
    if (!e->is_int)
      return err_at(ps, idx_tok[n], "a float value cannot be used as an index (dimension %d of %s)", n, ten->name);
    if (e->kind == PC_E_AXIS && ps->n_uses < MAX_NODES)
      ps->uses[ps->n_uses++] = (axis_use){e->axis, ti, n, idx_tok[n]};
    idx[n++] = e;
    if (at_punct(ps, "]")) break;
    if (!expect_punct(ps, ",", "',' or ']' in the indices")) return NULL;
  }
  advance(ps);
  if (n != ten->ndim)
    return err_at(ps, name_tok, "wrong number of indices: %s has %d dimension%s, indexed with %d", ten->name,
                  ten->ndim, ten->ndim == 1 ? "" : "s", n);
  if (!count_node(ps, name_tok)) return NULL;
  ten->read = true;
  pc_expr *e = pc_load(ps->b, ti, n, idx);
  load_site *s = &ps->loads[ps->n_loads++];
  s->e = e;
  s->tok = name_tok;
  s->guarded = ps->guard > 0;
  memcpy(s->idx_tok, idx_tok, sizeof idx_tok);
  return e;
}

/* Built-in functions: name, argument count (max/min take two or more). */
static pc_expr *parse_call(parser *ps) {
  int name_tok = ps->pos;
  const pc_tok *t = peek(ps);
  static const struct { const char *name; int n_args; } fns[] = {
      {"max", 2}, {"min", 2}, {"exp", 1}, {"sqrt", 1}, {"relu", 1}, {"float", 1}, {"select", 3}};
  int f = -1;
  for (int i = 0; i < (int)PT_ARRAY_LEN(fns); i++)
    if (pc_tok_word(ps->text, t, fns[i].name)) f = i;
  if (f < 0) return err_at(ps, name_tok, "unknown function '%.*s'", (int)t->len, ps->text + t->off);
  advance(ps);
  advance(ps); /* '(' */
  bool is_select = strcmp(fns[f].name, "select") == 0;
  pc_expr *args[PC_MAX_DIMS];
  int arg_tok[PC_MAX_DIMS], n = 0;
  for (;;) {
    if (n == PC_MAX_DIMS) return err_at(ps, name_tok, "too many arguments to %s", fns[f].name);
    arg_tok[n] = ps->pos;
    if (is_select && n >= 1) ps->guard++;
    pc_expr *e = parse_expr(ps);
    if (is_select && n >= 1) ps->guard--;
    if (!e) return NULL;
    args[n++] = e;
    if (at_punct(ps, ")")) break;
    if (!expect_punct(ps, ",", "',' or ')' after an argument")) return NULL;
  }
  advance(ps);
  bool variadic = fns[f].name[1] == 'a' || fns[f].name[1] == 'i'; /* max, min */
  if (n != fns[f].n_args && !(variadic && n > 2))
    return err_at(ps, name_tok, "%s takes %s%d argument%s, got %d", fns[f].name, variadic ? "at least " : "",
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
    if (a->is_int != c->is_int) {
      a = to_float(ps, a, arg_tok[1]);
      c = to_float(ps, c, arg_tok[2]);
      if (!a || !c) return NULL;
    }
    if (!count_node(ps, name_tok)) return NULL;
    return pc_select(ps->b, args[0], a, c);
  }
  pc_expr *x = to_float(ps, args[0], arg_tok[0]);
  if (!x) return NULL;
  if (!strcmp(name, "float")) return x;
  if (!count_node(ps, name_tok)) return NULL;
  return pc_un(ps->b, name[0] == 'e' ? PC_E_EXP : PC_E_SQRT, x);
}

static pc_expr *parse_primary(parser *ps) {
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
    pc_expr *e = parse_expr(ps);
    if (e && !expect_punct(ps, ")", "')'")) return NULL;
    return e;
  }
  if (t->kind != PC_TOK_IDENT) return unexpected(ps, "an expression");
  if (pc_tok_word(ps->text, t, "if")) {
    advance(ps);
    int cond_tok = ps->pos;
    pc_expr *c = need_int(ps, parse_expr(ps), cond_tok, "the condition of 'if'");
    if (!c) return NULL;
    if (!at_word(ps, "then")) return unexpected(ps, "'then'");
    advance(ps);
    int a_tok = ps->pos;
    ps->guard++;
    pc_expr *a = parse_expr(ps);
    if (a && !at_word(ps, "else")) a = unexpected(ps, "'else'");
    if (a) advance(ps);
    int c_tok = ps->pos;
    pc_expr *f = a ? parse_expr(ps) : NULL;
    ps->guard--;
    if (!f) return NULL;
    if (a->is_int != f->is_int) {
      a = to_float(ps, a, a_tok);
      f = to_float(ps, f, c_tok);
      if (!a || !f) return NULL;
    }
    return count_node(ps, at) ? pc_select(ps->b, c, a, f) : NULL;
  }
  if (at_reduction(ps)) {
    if (pc_tok_word(ps->text, t, "min")) return err_at(ps, at, "min-reductions are not supported (only sum and max)");
    return err_at(ps, at, "a reduction must be the whole right-hand side of a statement "
                          "(compute it as its own tensor, e.g. S[i] = sum(k) A[i, k])");
  }
  if (pc_tok_punct(ps->text, peek2(ps, 1), "(")) return parse_call(ps);
  if (pc_tok_punct(ps->text, peek2(ps, 1), "[")) return parse_load(ps);
  int ax = find_axis(ps, t);
  if (ax >= 0) {
    advance(ps);
    return count_node(ps, at) ? pc_axis(ps->b, ax) : NULL;
  }
  if (find_tensor(ps, t) >= 0 || find_head(ps, t) >= 0)
    return err_at(ps, at, "tensor '%.*s' needs indices, e.g. %.*s[i]", (int)t->len, ps->text + t->off, (int)t->len,
                  ps->text + t->off);
  if (is_reserved(ps, t)) return err_at(ps, at, "unexpected '%.*s'", (int)t->len, ps->text + t->off);
  return err_at(ps, at, "undefined axis '%.*s'", (int)t->len, ps->text + t->off);
}

static pc_expr *parse_unary(parser *ps) {
  int at = ps->pos;
  if (++ps->nest > MAX_NEST) return err_at(ps, at, "expression is nested too deeply (more than %d levels)", MAX_NEST);
  pc_expr *e;
  if (at_punct(ps, "-")) {
    advance(ps);
    e = parse_unary(ps);
    if (e && e->kind == PC_E_CONST_I && e->ival != INT64_MIN) e->ival = -e->ival;
    else if (e && e->kind == PC_E_CONST_F) e->fval = -e->fval;
    else if (e) e = count_node(ps, at) ? pc_un(ps->b, PC_E_NEG, e) : NULL;
  } else {
    e = parse_primary(ps);
  }
  ps->nest--;
  return e;
}

typedef struct { const char *text; pc_expr_kind kind; } binop;

static const binop *match_op(const parser *ps, const binop *ops, int n) {
  for (int i = 0; i < n; i++)
    if (at_punct(ps, ops[i].text)) return &ops[i];
  return NULL;
}

static pc_expr *parse_mul(parser *ps) {
  static const binop ops[] = {{"*", PC_E_MUL}, {"/", PC_E_DIV}, {"%", PC_E_MOD}};
  pc_expr *e = parse_unary(ps);
  const binop *op;
  while (e && (op = match_op(ps, ops, 3))) {
    int at = advance(ps);
    e = arith(ps, op->kind, e, parse_unary(ps), at);
  }
  return e;
}

static pc_expr *parse_add(parser *ps) {
  static const binop ops[] = {{"+", PC_E_ADD}, {"-", PC_E_SUB}};
  pc_expr *e = parse_mul(ps);
  const binop *op;
  while (e && (op = match_op(ps, ops, 2))) {
    int at = advance(ps);
    e = arith(ps, op->kind, e, parse_mul(ps), at);
  }
  return e;
}

static pc_expr *parse_cmp(parser *ps) {
  static const binop ops[] = {{"<=", PC_E_LE}, {">=", PC_E_GE}, {"==", PC_E_EQ},
                              {"!=", PC_E_NE}, {"<", PC_E_LT},  {">", PC_E_GT}};
  pc_expr *e = parse_add(ps);
  const binop *op = e ? match_op(ps, ops, 6) : NULL;
  if (!op) return e;
  int at = advance(ps);
  e = arith(ps, op->kind, e, parse_add(ps), at);
  if (e && match_op(ps, ops, 6)) return err_at(ps, ps->pos, "comparisons cannot be chained; join them with &&");
  return e;
}

static pc_expr *parse_logic(parser *ps, bool is_or) {
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

static pc_expr *parse_expr(parser *ps) { return parse_logic(ps, true); }

/* ------------------------------------------------------------------ checks after a statement */

typedef struct { int64_t lo, hi; bool ok; } range;

static range rng(int64_t lo, int64_t hi) { return (range){lo, hi, true}; }
static const range unknown = {0, 0, false};

static int64_t floor_div(int64_t a, int64_t b) {
  int64_t q = a / b;
  return (a % b != 0 && ((a < 0) != (b < 0))) ? q - 1 : q;
}

/* The values an integer expression takes over the iteration space (interval arithmetic;
 * each node is visited once, so the cost is linear in the expression). */
static range eval_range(const parser *ps, const pc_expr *e) {
  switch (e->kind) {
  case PC_E_CONST_I: return rng(e->ival, e->ival);
  case PC_E_AXIS: return rng(0, ps->extent[e->axis] - 1);
  case PC_E_LT: case PC_E_LE: case PC_E_GT: case PC_E_GE: case PC_E_EQ: case PC_E_NE:
  case PC_E_AND: case PC_E_OR: return rng(0, 1);
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
  case PC_E_ADD: case PC_E_SUB: case PC_E_MUL: case PC_E_DIV: case PC_E_MOD: case PC_E_MAX: case PC_E_MIN:
    break;
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
        v[i] = floor_div(p, q); /* monotone in each argument while q keeps its sign */
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
static bool infer_extents(parser *ps) {
  int src[PC_MAX_AXES];
  for (int a = 0; a < ps->n_axes; a++) src[a] = -1;
  for (int u = 0; u < ps->n_uses; u++) {
    const axis_use *use = &ps->uses[u];
    if (ps->extent[use->axis] > 0 && src[use->axis] < 0) continue; /* declared */
    int64_t ext = ps->tensors[use->tensor].shape[use->dim];
    if (src[use->axis] < 0) {
      src[use->axis] = u;
      ps->extent[use->axis] = ext;
    } else if (ps->extent[use->axis] != ext) {
      const axis_use *first = &ps->uses[src[use->axis]];
      const pc_tok *ft = tok_at(ps, first->tok);
      err_at(ps, use->tok,
             "conflicting extents for axis '%s': %lld here (dimension %d of %s), %lld at %d:%d (dimension %d of %s)",
             ps->axis_name[use->axis], (long long)ext, use->dim, ps->tensors[use->tensor].name,
             (long long)ps->extent[use->axis], ft->line, ft->col, first->dim, ps->tensors[first->tensor].name);
      return false;
    }
  }
  for (int a = 0; a < ps->n_axes; a++)
    if (ps->extent[a] == 0) {
      err_at(ps, ps->axis_tok[a],
             "cannot infer the extent of axis '%s': it never indexes a tensor dimension by itself; declare it, "
             "e.g. %s:16",
             ps->axis_name[a], ps->axis_name[a]);
      return false;
    }
  return true;
}

/* what: "input A has", "tensor B has", "the reduction in B has" ... more than 2^31 unit. */
static bool check_sizes(parser *ps, int name_tok, const char *name, const int64_t *ext, int n, const char *what,
                        const char *unit) {
  int64_t numel = 1;
  for (int i = 0; i < n; i++)
    if (__builtin_mul_overflow(numel, ext[i], &numel) || numel > MAX_NUMEL) {
      err_at(ps, name_tok, "%s %s has more than 2^31 %s", what, name, unit);
      return false;
    }
  return true;
}

static bool check_indices(parser *ps) {
  for (int i = 0; i < ps->n_divs; i++) {
    range r = eval_range(ps, ps->divs[i].e->args[1]);
    if (!r.ok || (r.lo <= 0 && r.hi >= 0)) {
      err_at(ps, ps->divs[i].tok, "integer division by an expression that can be zero");
      return false;
    }
  }
  for (int i = 0; i < ps->n_loads; i++) {
    const load_site *s = &ps->loads[i];
    if (s->guarded) continue; /* a select condition may keep it in bounds: the user's job */
    const tensor_info *t = &ps->tensors[s->e->tensor];
    for (int k = 0; k < s->e->n_args; k++) {
      range r = eval_range(ps, s->e->args[k]);
      if (r.ok && r.lo >= 0 && r.hi < t->shape[k]) continue;
      if (r.ok)
        err_at(ps, s->idx_tok[k], "index out of bounds: dimension %d of %s has extent %lld, the index ranges over [%lld, %lld] "
               "(guard it with select to pad)", k, t->name, (long long)t->shape[k], (long long)r.lo, (long long)r.hi);
      else
        err_at(ps, s->idx_tok[k], "index out of bounds: dimension %d of %s has extent %lld, the index's range is unbounded",
               k, t->name, (long long)t->shape[k]);
      return false;
    }
  }
  return true;
}

/* Floating point operations at one point: adds, muls, max, exp, ... count one each;
 * integer (index) arithmetic is free; a select costs its condition and its larger branch. */
static double point_flops(const pc_expr *e) {
  if (e->kind == PC_E_SELECT) {
    double a = point_flops(e->args[1]), c = point_flops(e->args[2]);
    return point_flops(e->args[0]) + (a > c ? a : c);
  }
  double f = 0;
  for (int i = 0; i < e->n_args; i++) f += point_flops(e->args[i]);
  if (e->kind == PC_E_LOAD || e->kind == PC_E_CAST_F || e->kind == PC_E_CONST_F) return f;
  bool float_op = e->n_args > 0 && !e->args[0]->is_int;
  if (e->n_args == 2 && !e->args[1]->is_int) float_op = true;
  return f + (float_op ? 1 : 0);
}

/* ------------------------------------------------------------------ statements */

static bool new_tensor(parser *ps, int name_tok, const char *name) {
  for (int i = 0; i < ps->n_tensors; i++)
    if (!strcmp(ps->tensors[i].name, name)) {
      const pc_tok *t = tok_at(ps, ps->tensors[i].tok);
      err_at(ps, name_tok, "duplicate definition of '%s' (first defined at %d:%d)", name, t->line, t->col);
      return false;
    }
  if (ps->n_tensors == MAX_TENSORS) {
    err_at(ps, name_tok, "too many tensors (at most %d in one program)", MAX_TENSORS);
    return false;
  }
  tensor_info *t = &ps->tensors[ps->n_tensors];
  memset(t, 0, sizeof *t);
  snprintf(t->name, sizeof t->name, "%s", name);
  t->tok = name_tok;
  return true;
}

static bool parse_input(parser *ps) {
  advance(ps); /* 'input' */
  int name_tok = ps->pos;
  char name[PC_NAME_LEN];
  if (!take_name(ps, "an input tensor", name) || !new_tensor(ps, name_tok, name)) return false;
  if (!expect_punct(ps, "[", "'[' and the input's shape, e.g. A[128, 64]")) return false;
  tensor_info *t = &ps->tensors[ps->n_tensors];
  for (;;) {
    if (t->ndim == PC_MAX_DIMS) {
      err_at(ps, ps->pos, "too many dimensions (at most %d)", PC_MAX_DIMS);
      return false;
    }
    if (!take_extent(ps, &t->shape[t->ndim])) return false;
    t->ndim++;
    if (at_punct(ps, "]")) break;
    if (!expect_punct(ps, ",", "',' or ']' in the shape")) return false;
  }
  advance(ps);
  if (!check_sizes(ps, name_tok, name, t->shape, t->ndim, "input", "elements")) return false;
  t->is_input = true;
  ps->n_tensors++;
  pc_placeholder(ps->b, name, t->ndim, t->shape);
  return true;
}

static bool declare_axis(parser *ps, bool allow_extent) {
  int at = ps->pos;
  char name[PC_NAME_LEN];
  if (!take_name(ps, "an axis name", name)) return false;
  if (find_axis(ps, tok_at(ps, at)) >= 0) {
    err_at(ps, at, "duplicate axis '%s' in this statement", name);
    return false;
  }
  if (find_tensor(ps, tok_at(ps, at)) >= 0) {
    err_at(ps, at, "axis '%s' has the name of a tensor", name);
    return false;
  }
  if (ps->n_axes == PC_MAX_AXES) {
    err_at(ps, at, "too many axes in one statement (at most %d)", PC_MAX_AXES);
    return false;
  }
  int a = ps->n_axes++;
  snprintf(ps->axis_name[a], PC_NAME_LEN, "%s", name);
  ps->axis_tok[a] = at;
  ps->extent[a] = 0;
  if (allow_extent && at_punct(ps, ":")) {
    advance(ps);
    if (!take_extent(ps, &ps->extent[a])) return false;
  }
  return true;
}

static bool parse_compute(parser *ps) {
  int name_tok = ps->pos;
  char name[PC_NAME_LEN];
  ps->cur_tok = name_tok;
  ps->n_axes = ps->n_spatial = 0;
  ps->nest = ps->n_nodes = ps->guard = ps->n_uses = ps->n_loads = ps->n_divs = 0;
  if (!take_name(ps, "a statement: 'input NAME[shape]' or 'NAME[axes] = expression'", name) ||
      !new_tensor(ps, name_tok, name))
    return false;
  if (!at_punct(ps, "[")) {
    if (at_punct(ps, "=")) err_at(ps, ps->pos, "'%s' needs axes, e.g. %s[i, j] = ...", name, name);
    else unexpected(ps, "'[' and the axes of the tensor being defined");
    return false;
  }
  advance(ps);
  for (;;) {
    if (ps->n_axes == PC_MAX_DIMS) {
      err_at(ps, ps->pos, "too many dimensions (at most %d)", PC_MAX_DIMS);
      return false;
    }
    if (!declare_axis(ps, true)) return false;
    if (at_punct(ps, "]")) break;
    if (!expect_punct(ps, ",", "',' or ']' after an axis (left-hand side indices are plain axis names)")) return false;
  }
  advance(ps);
  ps->n_spatial = ps->n_axes;
  if (!at_punct(ps, "=")) {
    char what[64];
    pc_tok_describe(ps->text, peek(ps), what, sizeof what);
    err_at(ps, ps->pos, "missing '=' after the left-hand side of %s (found %s)", name, what);
    return false;
  }
  advance(ps);
  pc_reduce_kind reduce = PC_REDUCE_NONE;
  if (at_reduction(ps)) {
    if (at_word(ps, "min")) {
      err_at(ps, ps->pos, "min-reductions are not supported (only sum and max)");
      return false;
    }
    reduce = at_word(ps, "sum") ? PC_REDUCE_SUM : PC_REDUCE_MAX;
    advance(ps);
    advance(ps); /* '(' */
    for (;;) {
      if (ps->n_axes - ps->n_spatial == PC_MAX_DIMS) {
        err_at(ps, ps->pos, "too many reduction axes (at most %d)", PC_MAX_DIMS);
        return false;
      }
      if (!declare_axis(ps, true)) return false;
      if (at_punct(ps, ")")) break;
      if (!expect_punct(ps, ",", "',' or ')' after a reduction axis")) return false;
    }
    advance(ps);
  }
  int body_tok = ps->pos;
  pc_expr *body = parse_expr(ps);
  if (!body) return false;
  if (peek(ps)->kind != PC_TOK_NEWLINE) {
    unexpected(ps, "end of line after the expression");
    return false;
  }
  body = to_float(ps, body, body_tok);
  if (!body || !infer_extents(ps)) return false;
  int n_reduce = ps->n_axes - ps->n_spatial;
  if (!check_sizes(ps, name_tok, name, ps->extent, ps->n_spatial, "tensor", "elements") ||
      !check_sizes(ps, name_tok, name, ps->extent + ps->n_spatial, n_reduce, "the reduction in", "iterations") || !check_indices(ps))
    return false;
  tensor_info *t = &ps->tensors[ps->n_tensors++];
  t->ndim = ps->n_spatial;
  double points = 1;
  for (int i = 0; i < ps->n_axes; i++) {
    if (i < ps->n_spatial) t->shape[i] = ps->extent[i];
    points *= (double)ps->extent[i];
  }
  t->flops = points * (point_flops(body) + (reduce != PC_REDUCE_NONE ? 1 : 0));
  const char *names[PC_MAX_AXES];
  for (int i = 0; i < ps->n_axes; i++) names[i] = ps->axis_name[i];
  int op = pc_compute(ps->b, name, ps->n_spatial, t->shape, n_reduce, ps->extent + ps->n_spatial, names, reduce);
  pc_set_body(ps->b, op, body);
  return true;
}

/* Statement heads, so a read of a later tensor is "used before its definition". */
static void find_heads(parser *ps) {
  bool start = true;
  for (int i = 0; i < ps->lx.n && ps->n_heads < (int)PT_ARRAY_LEN(ps->heads); i++) {
    const pc_tok *t = &ps->lx.toks[i];
    if (t->kind == PC_TOK_NEWLINE) {
      start = true;
      continue;
    }
    if (start && t->kind == PC_TOK_IDENT) {
      if (pc_tok_word(ps->text, t, "input")) {
        if (i + 1 < ps->lx.n && ps->lx.toks[i + 1].kind == PC_TOK_IDENT) ps->heads[ps->n_heads++] = i + 1;
      } else if (i + 1 < ps->lx.n && pc_tok_punct(ps->text, &ps->lx.toks[i + 1], "[")) {
        ps->heads[ps->n_heads++] = i;
      }
    }
    start = false;
  }
}

/* The program is named after the file (dir/softmax.expr -> softmax), as an identifier. */
static const char *base_name(const char *path, char *buf, size_t cap) {
  const char *s = strrchr(path, '/');
  s = s ? s + 1 : path;
  size_t n = 0;
  for (; s[n] && s[n] != '.' && n + 1 < cap; n++)
    buf[n] = is_ident_byte(s[n]) ? s[n] : '_';
  buf[n] = 0;
  return n && !(s[0] >= '0' && s[0] <= '9') ? buf : "expr";
}

pc_program *pc_expr_parse(const char *text, const char *filename, pt_diag *d) {
  char name[64];
  const char *prog_name = filename ? base_name(filename, name, sizeof name) : "expr";
  if (!filename) filename = "<expr>";
  if (!text) text = "";
  parser *ps = calloc(1, sizeof *ps);
  if (!ps) {
    pt_fail(d, PT_ERR_NOMEM, "%s: out of memory", filename);
    return NULL;
  }
  ps->text = text;
  ps->filename = filename;
  ps->d = d;
  if (pc_lex(text, &ps->lx)) {
    pt_fail(d, PT_ERR_NOMEM, "%s: out of memory", filename);
    free(ps);
    return NULL;
  }
  ps->b = pc_builder_new(prog_name);
  find_heads(ps);
  pc_program *p = NULL;
  int n_compute = 0;
  while (peek(ps)->kind != PC_TOK_EOF && !ps->failed) {
    const pc_tok *t = peek(ps);
    if (t->kind == PC_TOK_NEWLINE) {
      advance(ps);
      continue;
    }
    if (t->kind == PC_TOK_ERROR) {
      err_at(ps, ps->pos, "%s", ps->lx.error);
      break;
    }
    bool ok;
    if (pc_tok_word(text, t, "input")) {
      ok = parse_input(ps);
    } else {
      ok = parse_compute(ps);
      n_compute += ok;
    }
    if (ok && peek(ps)->kind != PC_TOK_NEWLINE) unexpected(ps, "end of line after the statement");
  }
  if (!ps->failed && n_compute == 0)
    err_at(ps, ps->pos, "the program computes nothing: add a statement NAME[axes] = expression");
  if (ps->failed) {
    pc_builder_free(ps->b);
    goto done;
  }
  /* Arguments: inputs in declaration order, then every tensor nobody reads (the last
   * statement is always one of them). */
  int args[MAX_TENSORS], n_args = 0;
  double flops = 0;
  for (int i = 0; i < ps->n_tensors; i++) {
    flops += ps->tensors[i].flops;
    if (ps->tensors[i].is_input) args[n_args++] = i;
  }
  for (int i = 0; i < ps->n_tensors; i++)
    if (!ps->tensors[i].is_input && !ps->tensors[i].read) args[n_args++] = i;
  p = pc_builder_finish(ps->b, n_args, args, flops, d);
done:
  pc_lexed_free(&ps->lx);
  free(ps);
  return p;
}
