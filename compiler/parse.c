/* Parser for the user expression syntax (docs/expressions.md): `input` declarations and
 * `NAME[axes] = expr` statements become a pc_program through the DAG builder (program.c).
 * Expressions are parse_expr.c's job, extents and checks parse_check.c's. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "parse.h"

static const char *const reserved[] = {"input", "sum",    "max", "min",  "exp",  "sqrt",
                                       "relu",  "select", "if",  "then", "else", "float"};

/* ------------------------------------------------------------------ tokens and errors */

static bool is_ident_byte(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
}

void *pc_ps_err(pc_parser *ps, int tok, const char *fmt, ...) {
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
void *pc_ps_unexpected(pc_parser *ps, const char *expected) {
  const pc_tok *t = peek(ps);
  char what[64];
  pc_tok_describe(ps->text, t, what, sizeof what);
  return pc_ps_err(ps, ps->pos, "unexpected %s; expected %s", what, expected);
}

bool pc_ps_expect(pc_parser *ps, const char *p, const char *expected) {
  if (at_punct(ps, p)) {
    advance(ps);
    return true;
  }
  pc_ps_unexpected(ps, expected);
  return false;
}

bool pc_ps_reserved(const pc_parser *ps, const pc_tok *t) {
  for (size_t i = 0; i < PT_ARRAY_LEN(reserved); i++)
    if (pc_tok_word(ps->text, t, reserved[i])) return true;
  return false;
}

/* Reads an identifier usable as a tensor or axis name into out. */
static bool take_name(pc_parser *ps, const char *what, char out[PC_NAME_LEN]) {
  const pc_tok *t = peek(ps);
  if (t->kind != PC_TOK_IDENT) {
    pc_ps_unexpected(ps, what);
    return false;
  }
  if (pc_ps_reserved(ps, t)) {
    pc_ps_err(ps, ps->pos, "'%.*s' is a reserved word and cannot name %s", (int)t->len, ps->text + t->off, what);
    return false;
  }
  if (t->len >= PC_NAME_LEN) {
    pc_ps_err(ps, ps->pos, "name '%.*s...' is too long (at most %d characters)", 16, ps->text + t->off,
              PC_NAME_LEN - 1);
    return false;
  }
  memcpy(out, ps->text + t->off, t->len);
  out[t->len] = 0;
  advance(ps);
  return true;
}

static bool tok_is_name(const pc_parser *ps, const pc_tok *t, const char *name) {
  return t->kind == PC_TOK_IDENT && t->len == strlen(name) && memcmp(ps->text + t->off, name, t->len) == 0;
}

int pc_ps_find_tensor(const pc_parser *ps, const pc_tok *t) {
  for (int i = 0; i < ps->n_tensors; i++)
    if (tok_is_name(ps, t, ps->tensors[i].name)) return i;
  return -1;
}

int pc_ps_find_head(const pc_parser *ps, const pc_tok *t) {
  for (int i = 0; i < ps->n_heads; i++) {
    const pc_tok *h = tok_at(ps, ps->heads[i]);
    if (h->len == t->len && memcmp(ps->text + h->off, ps->text + t->off, t->len) == 0) return ps->heads[i];
  }
  return -1;
}

int pc_ps_find_axis(const pc_parser *ps, const pc_tok *t) {
  for (int i = 0; i < ps->n_axes; i++)
    if (tok_is_name(ps, t, ps->axis_name[i])) return i;
  return -1;
}

/* Extent literal: a positive integer (a leading '-' is read so the message can say so). */
static bool take_extent(pc_parser *ps, int64_t *out) {
  int at = ps->pos;
  bool neg = at_punct(ps, "-");
  if (neg) advance(ps);
  const pc_tok *t = peek(ps);
  if (t->kind != PC_TOK_INT) {
    pc_ps_unexpected(ps, "an extent (a positive integer)");
    return false;
  }
  advance(ps);
  if (neg || t->ival == 0) {
    pc_ps_err(ps, at, "extent must be positive, got %s%lld", neg ? "-" : "", (long long)t->ival);
    return false;
  }
  if (t->ival > PC_PARSE_MAX_NUMEL) {
    pc_ps_err(ps, at, "extent %lld is too large (at most 2^31)", (long long)t->ival);
    return false;
  }
  *out = t->ival;
  return true;
}

/* ------------------------------------------------------------------ statements */

static bool new_tensor(pc_parser *ps, int name_tok, const char *name) {
  for (int i = 0; i < ps->n_tensors; i++)
    if (!strcmp(ps->tensors[i].name, name)) {
      const pc_tok *t = tok_at(ps, ps->tensors[i].tok);
      pc_ps_err(ps, name_tok, "duplicate definition of '%s' (first defined at %d:%d)", name, t->line, t->col);
      return false;
    }
  if (ps->n_tensors == PC_PARSE_MAX_TENSORS) {
    pc_ps_err(ps, name_tok, "too many tensors (at most %d in one program)", PC_PARSE_MAX_TENSORS);
    return false;
  }
  pc_tensor_info *t = &ps->tensors[ps->n_tensors];
  memset(t, 0, sizeof *t);
  snprintf(t->name, sizeof t->name, "%s", name);
  t->tok = name_tok;
  return true;
}

static bool parse_input(pc_parser *ps) {
  advance(ps); /* 'input' */
  int name_tok = ps->pos;
  char name[PC_NAME_LEN];
  if (!take_name(ps, "an input tensor", name) || !new_tensor(ps, name_tok, name)) return false;
  if (!pc_ps_expect(ps, "[", "'[' and the input's shape, e.g. A[128, 64]")) return false;
  pc_tensor_info *t = &ps->tensors[ps->n_tensors];
  for (;;) {
    if (t->ndim == PC_MAX_DIMS) {
      pc_ps_err(ps, ps->pos, "too many dimensions (at most %d)", PC_MAX_DIMS);
      return false;
    }
    if (!take_extent(ps, &t->shape[t->ndim])) return false;
    t->ndim++;
    if (at_punct(ps, "]")) break;
    if (!pc_ps_expect(ps, ",", "',' or ']' in the shape")) return false;
  }
  advance(ps);
  if (!pc_ps_check_sizes(ps, name_tok, name, t->shape, t->ndim, "input", "elements")) return false;
  t->is_input = true;
  ps->n_tensors++;
  pc_placeholder(ps->b, name, t->ndim, t->shape);
  return true;
}

static bool declare_axis(pc_parser *ps) {
  int at = ps->pos;
  char name[PC_NAME_LEN];
  if (!take_name(ps, "an axis name", name)) return false;
  if (pc_ps_find_axis(ps, tok_at(ps, at)) >= 0) {
    pc_ps_err(ps, at, "duplicate axis '%s' in this statement", name);
    return false;
  }
  if (pc_ps_find_tensor(ps, tok_at(ps, at)) >= 0) {
    pc_ps_err(ps, at, "axis '%s' has the name of a tensor", name);
    return false;
  }
  if (ps->n_axes == PC_MAX_AXES) {
    pc_ps_err(ps, at, "too many axes in one statement (at most %d)", PC_MAX_AXES);
    return false;
  }
  int a = ps->n_axes++;
  snprintf(ps->axis_name[a], PC_NAME_LEN, "%s", name);
  ps->axis_tok[a] = at;
  ps->extent[a] = 0;
  if (at_punct(ps, ":")) {
    advance(ps);
    if (!take_extent(ps, &ps->extent[a])) return false;
  }
  return true;
}

static bool parse_compute(pc_parser *ps) {
  int name_tok = ps->pos;
  char name[PC_NAME_LEN];
  ps->cur_tok = name_tok;
  ps->n_axes = ps->n_spatial = 0;
  ps->nest = ps->n_nodes = ps->guard = ps->n_uses = ps->n_loads = 0;
  if (!take_name(ps, "a statement: 'input NAME[shape]' or 'NAME[axes] = expression'", name) ||
      !new_tensor(ps, name_tok, name))
    return false;
  if (!at_punct(ps, "[")) {
    if (at_punct(ps, "="))
      pc_ps_err(ps, ps->pos, "'%s' needs axes, e.g. %s[i, j] = ...", name, name);
    else
      pc_ps_unexpected(ps, "'[' and the axes of the tensor being defined");
    return false;
  }
  advance(ps);
  for (;;) {
    if (ps->n_axes == PC_MAX_DIMS) {
      pc_ps_err(ps, ps->pos, "too many dimensions (at most %d)", PC_MAX_DIMS);
      return false;
    }
    if (!declare_axis(ps)) return false;
    if (at_punct(ps, "]")) break;
    if (!pc_ps_expect(ps, ",", "',' or ']' after an axis (left-hand side indices are plain axis names)")) return false;
  }
  advance(ps);
  ps->n_spatial = ps->n_axes;
  if (!at_punct(ps, "=")) {
    char what[64];
    pc_tok_describe(ps->text, peek(ps), what, sizeof what);
    pc_ps_err(ps, ps->pos, "missing '=' after the left-hand side of %s (found %s)", name, what);
    return false;
  }
  advance(ps);
  pc_reduce_kind reduce = PC_REDUCE_NONE;
  if (pc_ps_at_reduction(ps)) {
    if (at_word(ps, "min")) {
      pc_ps_err(ps, ps->pos, "min-reductions are not supported (only sum and max)");
      return false;
    }
    reduce = at_word(ps, "sum") ? PC_REDUCE_SUM : PC_REDUCE_MAX;
    advance(ps);
    advance(ps); /* '(' */
    for (;;) {
      if (ps->n_axes - ps->n_spatial == PC_MAX_DIMS) {
        pc_ps_err(ps, ps->pos, "too many reduction axes (at most %d)", PC_MAX_DIMS);
        return false;
      }
      if (!declare_axis(ps)) return false;
      if (at_punct(ps, ")")) break;
      if (!pc_ps_expect(ps, ",", "',' or ')' after a reduction axis")) return false;
    }
    advance(ps);
  }
  int body_tok = ps->pos;
  pc_expr *body = pc_ps_expr(ps);
  if (!body) return false;
  if (peek(ps)->kind != PC_TOK_NEWLINE) {
    pc_ps_unexpected(ps, "end of line after the expression");
    return false;
  }
  body = pc_ps_to_float(ps, body, body_tok);
  if (!body || !pc_ps_infer_extents(ps) || !pc_ps_check_reads(ps, name_tok)) return false;
  int n_reduce = ps->n_axes - ps->n_spatial;
  if (!pc_ps_check_sizes(ps, name_tok, name, ps->extent, ps->n_spatial, "tensor", "elements") ||
      !pc_ps_check_sizes(ps, name_tok, name, ps->extent + ps->n_spatial, n_reduce, "the reduction in", "iterations") ||
      !pc_ps_check_indices(ps))
    return false;
  pc_tensor_info *t = &ps->tensors[ps->n_tensors++];
  t->ndim = ps->n_spatial;
  double points = 1;
  for (int i = 0; i < ps->n_axes; i++) {
    if (i < ps->n_spatial) t->shape[i] = ps->extent[i];
    points *= (double)ps->extent[i];
  }
  t->flops = points * (pc_ps_point_flops(body) + (reduce != PC_REDUCE_NONE ? 1 : 0));
  const char *names[PC_MAX_AXES];
  for (int i = 0; i < ps->n_axes; i++) names[i] = ps->axis_name[i];
  int op = pc_compute(ps->b, name, ps->n_spatial, t->shape, n_reduce, ps->extent + ps->n_spatial, names, reduce);
  pc_set_body(ps->b, op, body);
  return true;
}

/* Statement heads, so a read of a later tensor is "used before its definition". */
static void find_heads(pc_parser *ps) {
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
  for (; s[n] && s[n] != '.' && n + 1 < cap; n++) buf[n] = is_ident_byte(s[n]) ? s[n] : '_';
  buf[n] = 0;
  return n && !(s[0] >= '0' && s[0] <= '9') ? buf : "expr";
}

pc_program *pc_expr_parse(const char *text, const char *filename, pt_diag *d) {
  char name[64];
  const char *prog_name = filename ? base_name(filename, name, sizeof name) : "expr";
  if (!filename) filename = "<expr>";
  if (!text) text = "";
  pc_parser *ps = calloc(1, sizeof *ps);
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
      pc_ps_err(ps, ps->pos, "%s", ps->lx.error);
      break;
    }
    bool ok;
    if (pc_tok_word(text, t, "input")) {
      ok = parse_input(ps);
    } else {
      ok = parse_compute(ps);
      n_compute += ok;
    }
    if (ok && peek(ps)->kind != PC_TOK_NEWLINE) pc_ps_unexpected(ps, "end of line after the statement");
  }
  if (!ps->failed && n_compute == 0)
    pc_ps_err(ps, ps->pos, "the program computes nothing: add a statement NAME[axes] = expression");
  if (ps->failed) {
    pc_builder_free(ps->b);
    goto done;
  }
  /* Arguments: inputs in declaration order, then every tensor nobody reads (the last
   * statement is always one of them). */
  int args[PC_PARSE_MAX_TENSORS], n_args = 0;
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
