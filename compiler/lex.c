/* Lexer for the user expression syntax (docs/expressions.md): turns program text into
 * tokens with positions, matches brackets, and formats diagnostics that quote the line.
 * Its output feeds parse.c; it never fails on malformed text, it ends with an error token. */
#include <errno.h>
#include <float.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "parse.h"

typedef struct {
  pc_lexed *out;
  int cap;
  int *stack; /* token indices of open brackets */
  int depth, stack_cap;
} lexer;

static int push_tok(lexer *L, pc_tok t) {
  pc_lexed *o = L->out;
  if (o->n == L->cap) {
    int cap = L->cap ? L->cap * 2 : 256;
    pc_tok *n = realloc(o->toks, sizeof(pc_tok) * (size_t)cap);
    if (!n) return PT_ERR_NOMEM;
    o->toks = n;
    L->cap = cap;
  }
  o->toks[o->n++] = t;
  return 0;
}

static bool is_ident_start(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_'; }
static bool is_digit(char c) { return c >= '0' && c <= '9'; }
static bool is_ident_char(char c) { return is_ident_start(c) || is_digit(c); }

/* Two-character operators first so "<=" is not read as "<" "=". */
static const char *const puncts[] = {"<=", ">=", "==", "!=", "&&", "||", "(", ")", "[", "]",
                                     ",",  ":",  "=",  "+",  "-",  "*",  "/", "%", "<", ">"};

static const char *closer_of(char open) { return open == '(' ? ")" : "]"; }

/* Scans a number starting at s; returns its length, or 0 with `why` set if malformed. */
static size_t scan_number(const char *s, pc_tok *t, const char **why) {
  size_t i = 0;
  bool is_float = false;
  while (is_digit(s[i])) i++;
  if (s[i] == '.') {
    is_float = true;
    i++;
    while (is_digit(s[i])) i++;
  }
  if (s[i] == 'e' || s[i] == 'E') {
    is_float = true;
    size_t j = i + 1;
    if (s[j] == '+' || s[j] == '-') j++;
    if (!is_digit(s[j])) {
      *why = "malformed number: exponent without digits";
      return 0;
    }
    while (is_digit(s[j])) j++;
    i = j;
  }
  if (is_ident_char(s[i]) || s[i] == '.') {
    *why = "malformed number";
    return 0;
  }
  if (!is_float) {
    int64_t v = 0;
    for (size_t k = 0; k < i; k++) {
      if (__builtin_mul_overflow(v, 10, &v) || __builtin_add_overflow(v, s[k] - '0', &v)) {
        *why = "integer literal is too large";
        return 0;
      }
    }
    t->kind = PC_TOK_INT;
    t->ival = v;
    return i;
  }
  char buf[72];
  if (i >= sizeof buf) {
    *why = "number has too many digits";
    return 0;
  }
  memcpy(buf, s, i);
  buf[i] = 0;
  errno = 0;
  double v = strtod(buf, NULL);
  if (v > FLT_MAX) {
    *why = "float literal is out of float32 range";
    return 0;
  }
  t->kind = PC_TOK_FLOAT;
  t->fval = v;
  return i;
}

static int lex_error(lexer *L, pc_tok at, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int lex_error(lexer *L, pc_tok at, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(L->out->error, sizeof L->out->error, fmt, ap);
  va_end(ap);
  at.kind = PC_TOK_ERROR;
  L->out->unclosed = -1; /* brackets after the error were never seen */
  return push_tok(L, at);
}

static int lex_all(lexer *L, const char *text) {
  pc_lexed *o = L->out;
  int line = 1;
  size_t line_start = 0, i = 0;
  if (strncmp(text, "\xEF\xBB\xBF", 3) == 0) line_start = i = 3; /* a UTF-8 byte order mark */
  for (;;) {
    char c = text[i];
    pc_tok t = {.line = line, .col = (int)(i - line_start + 1), .off = i};
    if (c == 0) break;
    if (c == ' ' || c == '\t' || c == '\r') {
      i++;
      continue;
    }
    if (c == '#') {
      while (text[i] && text[i] != '\n') i++;
      continue;
    }
    if (c == '\n' || c == ';') {
      /* Inside brackets a line break continues the statement; ';' never does. */
      bool prev_nl = o->n == 0 || o->toks[o->n - 1].kind == PC_TOK_NEWLINE;
      if ((c == ';' || L->depth == 0) && !(c == '\n' && prev_nl)) {
        t.kind = PC_TOK_NEWLINE;
        t.len = 1;
        if (push_tok(L, t)) return PT_ERR_NOMEM;
      }
      i++;
      if (c == '\n') {
        line++;
        line_start = i;
      }
      continue;
    }
    if (is_ident_start(c)) {
      size_t j = i;
      while (is_ident_char(text[j])) j++;
      t.kind = PC_TOK_IDENT;
      t.len = j - i;
      if (push_tok(L, t)) return PT_ERR_NOMEM;
      i = j;
      continue;
    }
    if (is_digit(c) || (c == '.' && is_digit(text[i + 1]))) {
      const char *why = NULL;
      size_t n = scan_number(text + i, &t, &why);
      if (n == 0) return lex_error(L, t, "%s", why);
      t.len = n;
      if (push_tok(L, t)) return PT_ERR_NOMEM;
      i += n;
      continue;
    }
    const char *p = NULL;
    for (size_t k = 0; k < PT_ARRAY_LEN(puncts) && !p; k++)
      if (strncmp(text + i, puncts[k], strlen(puncts[k])) == 0) p = puncts[k];
    if (!p) {
      if (c > 32 && c < 127) return lex_error(L, t, "unexpected character '%c'", c);
      return lex_error(L, t, "unexpected byte 0x%02x", (unsigned)(unsigned char)c);
    }
    t.kind = PC_TOK_PUNCT;
    t.len = strlen(p);
    if (c == '(' || c == '[') {
      if (L->depth == L->stack_cap) {
        int cap = L->stack_cap ? L->stack_cap * 2 : 64;
        int *s = realloc(L->stack, sizeof(int) * (size_t)cap);
        if (!s) return PT_ERR_NOMEM;
        L->stack = s;
        L->stack_cap = cap;
      }
      L->stack[L->depth++] = o->n;
    } else if (c == ')' || c == ']') {
      if (L->depth == 0)
        return lex_error(L, t, "unbalanced parentheses: '%c' has no matching '%c'", c, c == ')' ? '(' : '[');
      const pc_tok *open = &o->toks[L->stack[L->depth - 1]];
      char oc = text[open->off];
      if (closer_of(oc)[0] != c)
        return lex_error(L, t, "unbalanced parentheses: '%c' closes the '%c' opened at %d:%d", c, oc, open->line,
                         open->col);
      L->depth--;
    }
    if (push_tok(L, t)) return PT_ERR_NOMEM;
    i += t.len;
  }
  o->unclosed = L->depth > 0 ? L->stack[0] : -1;
  /* A statement end before EOF keeps the parser's loop simple. */
  pc_tok nl = {.kind = PC_TOK_NEWLINE, .line = line, .col = (int)(i - line_start + 1), .off = i};
  if (o->n == 0 || o->toks[o->n - 1].kind != PC_TOK_NEWLINE)
    if (push_tok(L, nl)) return PT_ERR_NOMEM;
  return 0;
}

int pc_lex(const char *text, pc_lexed *out) {
  memset(out, 0, sizeof *out);
  out->unclosed = -1;
  lexer L = {.out = out};
  int rc = lex_all(&L, text);
  free(L.stack);
  if (rc) {
    pc_lexed_free(out);
    return rc;
  }
  /* The EOF token sits where the text ends, after any error token. */
  pc_tok eof = {.kind = PC_TOK_EOF};
  if (out->n > 0) {
    const pc_tok *last = &out->toks[out->n - 1];
    eof.line = last->line;
    eof.col = last->col + (int)last->len;
    eof.off = last->off + last->len;
  } else {
    eof.line = eof.col = 1;
  }
  if (push_tok(&L, eof)) {
    pc_lexed_free(out);
    return PT_ERR_NOMEM;
  }
  return 0;
}

void pc_lexed_free(pc_lexed *l) {
  free(l->toks);
  l->toks = NULL;
  l->n = 0;
}

bool pc_tok_punct(const char *text, const pc_tok *t, const char *p) {
  return t->kind == PC_TOK_PUNCT && t->len == strlen(p) && memcmp(text + t->off, p, t->len) == 0;
}

bool pc_tok_word(const char *text, const pc_tok *t, const char *w) {
  return t->kind == PC_TOK_IDENT && t->len == strlen(w) && memcmp(text + t->off, w, t->len) == 0;
}

void pc_tok_describe(const char *text, const pc_tok *t, char *buf, size_t cap) {
  switch (t->kind) {
  case PC_TOK_EOF: snprintf(buf, cap, "end of input"); return;
  case PC_TOK_NEWLINE: snprintf(buf, cap, "%s", text[t->off] == ';' ? "';'" : "end of line"); return;
  default: break;
  }
  int n = t->len > 24 ? 24 : (int)t->len;
  snprintf(buf, cap, "'%.*s%s'", n, text + t->off, t->len > 24 ? "..." : "");
}

int pc_source_error(pt_diag *d, const char *text, const char *filename, int line, int col, const char *msg) {
  /* Find the line; show at most ~70 bytes either side of the column so the caret fits. */
  const char *s = text;
  if (strncmp(s, "\xEF\xBB\xBF", 3) == 0) s += 3; /* columns do not count a byte order mark */
  for (int l = 1; l < line && *s; s++)
    if (*s == '\n') l++;
  size_t len = strcspn(s, "\n");
  size_t at = col > 0 ? (size_t)col - 1 : 0;
  if (at > len) at = len;
  size_t from = at > 70 ? at - 70 : 0, to = len - at > 70 ? at + 70 : len;
  char quote[160], caret[160];
  size_t q = 0, c = 0;
  if (from > 0) {
    memcpy(quote, "...", 3);
    memcpy(caret, "   ", 3);
    q = c = 3;
  }
  for (size_t k = from; k < to; k++) {
    unsigned char ch = (unsigned char)s[k];
    quote[q++] = ch == '\t' || (ch >= 32 && ch < 127) ? (char)ch : '?';
    if (k < at) caret[c++] = ch == '\t' ? '\t' : ' ';
  }
  quote[q] = 0;
  caret[c++] = '^';
  caret[c] = 0;
  return pt_fail(d, PT_ERR_INPUT, "%s:%d:%d: %s\n    %s\n    %s", filename, line, col, msg, quote, caret);
}
