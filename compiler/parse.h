/* What the expression parser's files share: tokens from the lexer (lex.c), the parser's
 * state (parse.c: statements; parse_expr.c: expressions; parse_check.c: extents, bounds
 * and flops), and diagnostics that quote the source line. Nothing outside them uses it. */
#ifndef PORTENT_COMPILER_PARSE_H
#define PORTENT_COMPILER_PARSE_H

#include "internal.h"

typedef enum {
  PC_TOK_EOF,
  PC_TOK_NEWLINE, /* end of a statement: a line break outside brackets, or ';' */
  PC_TOK_IDENT,
  PC_TOK_INT,
  PC_TOK_FLOAT,
  PC_TOK_PUNCT, /* ( ) [ ] , : = + - * / % < <= > >= == != && || */
  PC_TOK_ERROR, /* the lexer stopped here; pc_lexed.error says why */
} pc_tok_kind;

typedef struct pc_tok {
  pc_tok_kind kind;
  int line, col; /* 1-based; col counts bytes */
  size_t off, len;
  int64_t ival;
  double fval;
} pc_tok;

typedef struct pc_lexed {
  pc_tok *toks; /* always ends with PC_TOK_EOF (after a PC_TOK_ERROR if there was one) */
  int n;
  /* Token index of the first opening bracket that is never closed, or -1. Newlines inside
   * brackets are not statement ends, so an unclosed bracket swallows the rest of the file;
   * the parser reports it instead of whatever it finds after it. */
  int unclosed;
  char error[192];
} pc_lexed;

/* Tokenizes all of `text`. Returns 0, or PT_ERR_NOMEM; malformed input is not a failure
 * here but a PC_TOK_ERROR token, so errors come out in file order. */
int pc_lex(const char *text, pc_lexed *out);
void pc_lexed_free(pc_lexed *l);

bool pc_tok_punct(const char *text, const pc_tok *t, const char *p);
bool pc_tok_word(const char *text, const pc_tok *t, const char *w);
/* Writes a printable quotation of a token ('foo', end of line, ...) into buf. */
void pc_tok_describe(const char *text, const pc_tok *t, char *buf, size_t cap);

/* Records `filename:line:col: message` followed by the source line and a caret. */
int pc_source_error(pt_diag *d, const char *text, const char *filename, int line, int col, const char *msg);

/* ---------------------------------------------------------------- parser state */

#define PC_PARSE_MAX_TENSORS PC_MAX_STAGES /* a schedule state has one stage per tensor */
#define PC_PARSE_MAX_NEST    100           /* bracket/unary nesting: keeps recursion shallow */
#define PC_PARSE_MAX_NODES   4000          /* per statement: bounds every later recursive walk */
#define PC_PARSE_MAX_NUMEL   ((int64_t)1 << 31)

typedef struct {
  char name[PC_NAME_LEN];
  int ndim;
  int64_t shape[PC_MAX_DIMS];
  int tok; /* where it was defined */
  bool is_input, read;
  double flops;
} pc_tensor_info;

typedef struct { /* an axis used as a whole index: the source of its extent */
  int axis, tensor, dim, tok;
} pc_axis_use;

typedef struct { /* a load, for the bounds check after extents are known */
  const pc_expr *e;
  int tok, idx_tok[PC_MAX_DIMS];
  bool guarded; /* under a select branch: the condition may keep it in bounds */
} pc_load_site;

typedef struct pc_parser {
  const char *text, *filename;
  pt_diag *d;
  pc_lexed lx;
  int pos;
  bool failed;
  pc_builder *b;
  int n_tensors;
  pc_tensor_info tensors[PC_PARSE_MAX_TENSORS];
  int n_heads; /* names every statement defines, found before parsing (for messages) */
  int heads[PC_PARSE_MAX_TENSORS * 2];
  /* the statement being parsed */
  int cur_tok;
  int n_spatial, n_axes;
  char axis_name[PC_MAX_AXES][PC_NAME_LEN];
  int64_t extent[PC_MAX_AXES]; /* 0 until declared or inferred */
  int axis_tok[PC_MAX_AXES];
  int nest, n_nodes, guard;
  int n_uses, n_loads;
  pc_axis_use uses[PC_PARSE_MAX_NODES];
  pc_load_site loads[PC_PARSE_MAX_NODES];
} pc_parser;

/* The token cursor. */
static inline const pc_tok *tok_at(const pc_parser *ps, int i) { return &ps->lx.toks[i < ps->lx.n ? i : ps->lx.n - 1]; }
static inline const pc_tok *peek(const pc_parser *ps) { return tok_at(ps, ps->pos); }
static inline const pc_tok *peek2(const pc_parser *ps, int k) { return tok_at(ps, ps->pos + k); }
static inline int advance(pc_parser *ps) { return ps->pos < ps->lx.n - 1 ? ps->pos++ : ps->pos; }
static inline bool at_punct(const pc_parser *ps, const char *p) { return pc_tok_punct(ps->text, peek(ps), p); }
static inline bool at_word(const pc_parser *ps, const char *w) { return pc_tok_word(ps->text, peek(ps), w); }

/* parse.c: positioned errors (the first one wins; later calls do nothing) and lookups. */
void *pc_ps_err(pc_parser *ps, int tok, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
void *pc_ps_unexpected(pc_parser *ps, const char *expected);
bool pc_ps_expect(pc_parser *ps, const char *p, const char *expected);
bool pc_ps_reserved(const pc_parser *ps, const pc_tok *t);
int pc_ps_find_tensor(const pc_parser *ps, const pc_tok *t);
int pc_ps_find_head(const pc_parser *ps, const pc_tok *t);
int pc_ps_find_axis(const pc_parser *ps, const pc_tok *t);

/* parse_expr.c */
pc_expr *pc_ps_expr(pc_parser *ps);
bool pc_ps_at_reduction(const pc_parser *ps); /* at `sum(k...)`, `max(k...)` or `min(k...)` */
pc_expr *pc_ps_to_float(pc_parser *ps, pc_expr *e, int tok);
int64_t pc_ps_floor_div(int64_t a, int64_t b);

/* parse_check.c: run once a statement's body is parsed. */
bool pc_ps_infer_extents(pc_parser *ps);
bool pc_ps_check_reads(pc_parser *ps, int name_tok);
bool pc_ps_check_sizes(pc_parser *ps, int name_tok, const char *name, const int64_t *ext, int n, const char *what,
                       const char *unit);
bool pc_ps_check_indices(pc_parser *ps);
double pc_ps_point_flops(const pc_expr *e);

#endif
