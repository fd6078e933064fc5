/* What the expression lexer (lex.c) hands the expression parser (parse.c): tokens with
 * line:col, bracket matching done up front, and diagnostics that quote the source line. */
#ifndef PORTENT_COMPILER_LEX_H
#define PORTENT_COMPILER_LEX_H

#include "internal.h"

typedef enum {
  PC_TOK_EOF,
  PC_TOK_NEWLINE, /* end of a statement: a line break outside brackets, or ';' */
  PC_TOK_IDENT,
  PC_TOK_INT,
  PC_TOK_FLOAT,
  PC_TOK_PUNCT,   /* ( ) [ ] , : = + - * / % < <= > >= == != && || */
  PC_TOK_ERROR,   /* the lexer stopped here; pc_lexed.error says why */
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
int pc_source_error(pt_diag *d, const char *text, const char *filename, int line, int col,
                    const char *msg);

#endif
