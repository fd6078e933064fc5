/* The expression parser (docs/expressions.md): one row per program, with either the program
 * pc_program_print should show (and its flop count) or the error and position expected;
 * every truncation and thousands of byte mutations of the valid rows, none may crash; and
 * a few programs lowered, run and compared with a direct evaluation of their expressions. */
#include <math.h>
#include <stdlib.h>

#include "compiler/compiler.h"
#include "test.h"

typedef struct {
  const char *src;
  const char *expect; /* "error:" + substring of the message, or the printed program */
  double flops;
} row;

#define MATMUL                                                                                                         \
  "# matrix multiply with bias and relu\n"                                                                             \
  "input A[128, 768]\n"                                                                                                \
  "input W[768, 3072]\n"                                                                                               \
  "input bias[3072]\n"                                                                                                 \
  "C[i, j] = sum(k: 768) A[i, k] * W[k, j]\n"                                                                          \
  "D[i, j] = relu(C[i, j] + bias[j])\n"

#define CONV                                                                                                           \
  "input X[1, 64, 56, 56]\n"                                                                                           \
  "input K[64, 64, 3, 3]\n"                                                                                            \
  "P[n, c, h:58, w:58] = select(h >= 1 && h < 57 && w >= 1 && w < 57, X[n, c, h-1, w-1], 0.0)\n"                       \
  "Y[n, f, y:56, x:56] = sum(c, r, s) P[n, c, y + r, x + s] * K[f, c, r, s]\n"

#define SOFTMAX                                                                                                        \
  "input X[32, 1000]\n"                                                                                                \
  "M[i] = max(j) X[i, j]\n"                                                                                            \
  "E[i, j] = exp(X[i, j] - M[i])\n"                                                                                    \
  "S[i] = sum(j) E[i, j]\n"                                                                                            \
  "Y[i, j] = E[i, j] / S[i]\n"

#define INDEXING                                                                                                       \
  "input A[64, 16]; input V[10]\n"                                                                                     \
  "B[i:1024] = A[i / 16, i % 16] * 2\n"                                                                                \
  "R[i:20] = if i < 10 then V[i] else float(i) * -0.5\n"                                                               \
  "Q[i, j:4] = (max(i, j, 3) +\n"                                                                                      \
  "   min(V[i], 1e-3, -2))  # continued inside parentheses\n"                                                          \
  "T[i] = max(V[i], 0) - -V[i] + sqrt(V[i]) / 2.5\n"

static const row rows[] = {
    {MATMUL,
     "0 A[128, 768] = placeholder\n"
     "1 W[768, 3072] = placeholder\n"
     "2 C[128, 3072](i, j) = sum(k:768) (A[i, k] * W[k, j])\n"
     "3 bias[3072] = placeholder\n"
     "4 D[128, 3072](i, j) = max((C[i, j] + bias[j]), 0)   (output)\n",
     2.0 * 128 * 3072 * 768 + 2.0 * 128 * 3072},
    /* the reduction extent inferred from A */
    {"input A[8, 4]\ninput B[4, 2]\nC[i, j] = sum(k) A[i, k] * B[k, j]",
     "0 A[8, 4] = placeholder\n"
     "1 B[4, 2] = placeholder\n"
     "2 C[8, 2](i, j) = sum(k:4) (A[i, k] * B[k, j])   (output)\n",
     2.0 * 8 * 2 * 4},
    {CONV,
     "0 X[1, 64, 56, 56] = placeholder\n"
     "1 P[1, 64, 58, 58](n, c, h, w) = select(((((h >= 1) && (h < 57)) && (w >= 1)) && (w < 57)), "
     "X[n, c, (h - 1), (w - 1)], 0)\n"
     "2 K[64, 64, 3, 3] = placeholder\n"
     "3 Y[1, 64, 56, 56](n, f, y, x) = sum(c:64, r:3, s:3) (P[n, c, (y + r), (x + s)] * K[f, c, r, s])   "
     "(output)\n",
     2.0 * 64 * 56 * 56 * 64 * 9},
    {SOFTMAX,
     "0 X[32, 1000] = placeholder\n"
     "1 M[32](i) = max(j:1000) X[i, j]\n"
     "2 E[32, 1000](i, j) = exp((X[i, j] - M[i]))\n"
     "3 S[32](i) = sum(j:1000) E[i, j]\n"
     "4 Y[32, 1000](i, j) = (E[i, j] / S[i])   (output)\n",
     32000 + 64000 + 32000 + 32000},
    /* integer / and %, if-then-else, casts, variadic max/min, unary minus, several outputs */
    {INDEXING,
     "0 A[64, 16] = placeholder\n"
     "1 B[1024](i) = (A[(i / 16), (i % 16)] * 2)   (output)\n"
     "2 V[10] = placeholder\n"
     "3 R[20](i) = select((i < 10), V[i], (float(i) * -0.5))   (output)\n"
     "4 Q[10, 4](i, j) = (float(max(max(i, j), 3)) + min(min(V[i], 0.001), -2))   (output)\n"
     "5 T[10](i) = ((max(V[i], 0) - neg(V[i])) + (sqrt(V[i]) / 2.5))   (output)\n",
     1024 + 20 + 40 * 3 + 10 * 6},
    /* max(i, j) of two axes is a call, not a reduction; a broadcast axis is declared */
    {"input A[4]\nB[i, j:3] = max(i, j) + A[i]",
     "0 A[4] = placeholder\n1 B[4, 3](i, j) = (float(max(i, j)) + A[i])   (output)\n", 12},
    /* an unread input is still an argument (TVM's order puts it first); a constant body is a float */
    {"input A[4]\ninput U[2]\nB[i] = A[i]\nO[i:2, j:2] = 1",
     "0 U[2] = placeholder\n1 A[4] = placeholder\n2 B[4](i) = A[i]   (output)\n"
     "3 O[2, 2](i, j) = 1   (output)\n",
     0},
    /* an index kept in bounds by min; comparisons used as numbers; constants folded */
    {"input A[4]\nB[i:6] = A[min(i, 3)] * (A[i % 4] > 0) + (i < 2)\nC[i:6] = A[i / (1 + 1) + (i < 0)]",
     "0 A[4] = placeholder\n"
     "1 B[6](i) = ((A[min(i, 3)] * select((A[(i % 4)] > 0), 1, 0)) + select((i < 2), 1, 0))   (output)\n"
     "2 C[6](i) = A[((i / 2) + select((i < 0), 1, 0))]   (output)\n",
     6 * 3},

    /* errors: each names file:line:col */
    {"input A[4]\nB[i] = Q[i]", "error:t.expr:2:8: unknown tensor 'Q'"},
    {"input A[4]\nB[i] = A[i, i]", "error:2:8: wrong number of indices: A has 1 dimension, indexed with 2"},
    {"input A[4, 4]\nB[i] = A[i]", "error:2:8: wrong number of indices: A has 2 dimensions, indexed with 1"},
    {"input A[4]\nB[i] = A[j]", "error:2:10: undefined axis 'j'"},
    {"input A[4]\ninput A[5]\nB[i] = A[i]", "error:2:7: duplicate definition of 'A' (first defined at 1:7)"},
    {"input A[4]\nB[i] = A[i]\nB[i] = A[i]", "error:3:1: duplicate definition of 'B' (first defined at 2:1)"},
    {"input A[4]\nB[i, i] = A[i]", "error:2:6: duplicate axis 'i'"},
    {"input A[4]\nB[i] = (A[i] + 1\nC[i] = B[i]\n", "error:2:8: unbalanced parentheses: this '(' is never closed"},
    {"input A[4]\nB[i] = max(A[i], 0\n", "error:2:11: unbalanced parentheses: this '(' is never closed"},
    {"input A[4]\nB[i] = A[i])", "error:2:12: unbalanced parentheses: ')' has no matching '('"},
    {"input A[4]\nB[i] = A[i)", "error:2:11: unbalanced parentheses: ')' closes the '[' opened at 2:9"},
    {"input A[4]\nB[i] = A[i] A[i]", "error:2:13: unexpected 'A'; expected end of line"},
    {"input A[4]\nB[i] = A[i] +\n", "error:2:14: unexpected end of line; expected an expression"},
    {"input A[4]\nB[i] = A[i,]", "error:2:12: unexpected ']'; expected an expression"},
    {"input A[4]\nB[i] = A[i] @ 2", "error:2:13: unexpected character '@'"},
    {"input A[4]\nB[i] A[i]", "error:2:6: missing '='"},
    {"input A[4]\nB[i] == A[i]", "error:2:6: missing '='"},
    {"input A[4]\nB[i+1] = A[i]", "error:2:4: unexpected '+'; expected ',' or ']'"},
    {"input A[0]\nB[i] = A[i]", "error:1:9: extent must be positive, got 0"},
    {"input A[-3]\nB[i] = A[i]", "error:1:9: extent must be positive, got -3"},
    {"input A[4]\nB[i:0] = A[i]", "error:2:5: extent must be positive, got 0"},
    {"input A[65536, 65536]\nB[i, j] = A[i, j]", "error:1:7: input A has more than 2^31 elements"},
    {"input A[4]\nB[i:65536, j:65536] = A[0]", "error:2:1: tensor B has more than 2^31 elements"},
    {"input A[4]\nB[i] = sum(j:65536, k:65536) A[i]", "error:2:1: the reduction in B has more than 2^31 iterations"},
    {"input A[4]\nB[i:4294967296] = 1", "error:2:5: extent 4294967296 is too large"},
    {"input A[4]\nB[i] = A[i] * 99999999999999999999", "error:2:15: integer literal is too large"},
    {"input A[4]\nB[i] = A[i] * 1e39", "error:2:15: float literal is out of float32 range"},
    {"input A[4]\nC[i] = B[i]\nB[i] = A[i]", "error:2:8: tensor 'B' is used before its definition at 3:1"},
    {"input A[4]\nB[i] = B[i] + A[i]", "error:2:8: tensor 'B' is used in its own definition"},
    {"input A[4, 4]\nB[i] = 1.0 + sum(k) A[i, k]", "error:2:14: a reduction must be the whole right-hand side"},
    {"input A[4, 4]\nB[i] = sum(k) max(l) A[k, l]", "error:2:15: a reduction must be the whole right-hand side"},
    {"input A[4, 4]\nB[i] = (max(k: 4) A[i, k])", "error:2:9: a reduction must be the whole right-hand side"},
    {"input A[4, 4]\nB[i] = min(k) A[i, k]", "error:2:8: min-reductions are not supported"},
    {"input A[4]\nB[i] = A[A[i]]", "error:2:10: a float value cannot be used as an index (dimension 0 of A)"},
    {"input A[4]\nB[i] = A[i * 1.0]", "error:2:10: a float value cannot be used as an index"},
    {"input A[4]\nB[i] = select(A[i], 1.0, 0.0)", "error:2:15: select's condition must be an integer expression"},
    {"input A[4]\nB[i] = A[i] > 0 && A[i]", "error:2:20: the right side of '&&' must be an integer expression"},
    {"input A[4]\nB[i] = A[i] % 2", "error:2:13: '%' needs integer operands"},
    {"input A[4]\nB[i] = A[i + 1]", "error:2:3: cannot infer the extent of axis 'i'"},
    {"input A[4]\nB[i, j] = A[i]", "error:2:6: cannot infer the extent of axis 'j'"},
    {"input A[4]\ninput C[5]\nB[i] = A[i] + C[i]",
     "error:3:17: conflicting extents for axis 'i': 5 here (dimension 0 of C), 4 at 3:10 (dimension 0 of A)"},
    {"input A[4]\nB[i:8] = A[i]",
     "error:2:12: index out of bounds: dimension 0 of A has extent 4, the index ranges over [0, 7]"},
    {"input A[4]\nB[i] = A[i] + A[3 - i + 1]",
     "error:2:17: index out of bounds: dimension 0 of A has extent 4, the index ranges over [1, 4]"},
    {"input A[4]\nB[i] = A[i] * A[i / (i - 1)]", "error:2:19: integer '/' needs a positive constant divisor"},
    {"input A[4]\nB[i] = A[i] * A[i % 0]", "error:2:19: integer '%' needs a positive constant divisor"},
    {"input A[4]\nB[i] = foo(A[i])", "error:2:8: unknown function 'foo'"},
    {"input A[4]\nB[i] = exp(A[i], 1.0)", "error:2:8: exp takes 1 argument, got 2"},
    {"input A[4]\nB[i] = A[0 < i < 2]", "error:2:16: comparisons cannot be chained"},
    {"input sum[4]", "error:1:7: 'sum' is a reserved word"},
    {"input A[4]\nB[A] = A[A]", "error:2:3: axis 'A' has the name of a tensor"},
    {"input A[4]\nB[i] = A", "error:2:8: tensor 'A' needs indices"},
    {"input A[4]\nB = A[0]", "error:2:3: 'B' needs axes"},
    {"input Aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa[4]", "error:1:7: name 'Aaaaaaaaaaaaaaaa...' is too long"},
    {"input A[4]\nB[i] = if i < 2 then A[i]", "error:2:26: unexpected end of line; expected 'else'"},
    {"input A[4]\nB[i] = A[i] * 1e", "error:2:15: malformed number"},
    {"", "error:1:1: the program computes nothing"},
    {"input A[3]\n# only a comment\n", "error:the program computes nothing"},
};

static bool check_row(const row *r) {
  pt_diag d = {0};
  pc_program *p = pc_expr_parse(r->src, "dir/t.expr", &d);
  bool want_error = strncmp(r->expect, "error:", 6) == 0;
  bool ok;
  if (want_error) {
    ok = p == NULL && d.err == PT_ERR_INPUT && strstr(d.msg, r->expect + 6) != NULL &&
         strncmp(d.msg, "dir/t.expr:", 11) == 0 && strchr(d.msg, '^') != NULL;
    if (!ok)
      fprintf(stderr, "source:\n%s\nwanted error: %s\ngot: %s\n", r->src, r->expect + 6, p ? "a program" : d.msg);
  } else {
    static char buf[8192];
    buf[0] = 0;
    if (p) pc_program_print(p, buf, sizeof buf);
    ok = p && strcmp(buf, r->expect) == 0 && p->flops == r->flops && strcmp(p->name, "t") == 0;
    if (!ok)
      fprintf(stderr, "source:\n%s\nwanted:\n%s(flops %.0f)\ngot:\n%s(flops %.0f)\n%s\n", r->src, r->expect, r->flops,
              buf, p ? p->flops : 0.0, d.msg);
  }
  pc_program_free(p);
  return ok;
}

/* Parses text that may be anything: a program or an error with a position, never a crash. */
static bool parse_any(const char *text, int *parsed) {
  pt_diag d = {0};
  pc_program *p = pc_expr_parse(text, "fuzz.expr", &d);
  bool ok;
  if (p) {
    static char buf[16384];
    pc_program_print(p, buf, sizeof buf);
    ok = p->n_ops > 0 && p->flops >= 0 && d.err == 0;
    (*parsed)++;
  } else {
    ok = d.err != 0 && strncmp(d.msg, "fuzz.expr:", 10) == 0;
  }
  if (!ok) fprintf(stderr, "bad result for:\n%s\n%s\n", text, d.msg);
  pc_program_free(p);
  return ok;
}

/* ---- parsed programs compute what the syntax says: lowered, run, compared with a direct
 * evaluation of the expressions (floor division and modulo of negatives included). */

static double eval(const pc_program *p, float *const *data, const pc_expr *e, const int64_t *ax) {
  if (e->kind == PC_E_SELECT) return eval(p, data, e->args[eval(p, data, e->args[0], ax) != 0 ? 1 : 2], ax);
  if (e->kind == PC_E_LOAD) {
    const pc_op *t = &p->ops[e->tensor];
    int64_t off = 0;
    for (int k = 0; k < t->ndim; k++) {
      int64_t v = (int64_t)eval(p, data, e->args[k], ax);
      if (v < 0 || v >= t->shape[k]) return NAN; /* the parser let an out-of-bounds load through */
      off = off * t->shape[k] + v;
    }
    return data[e->tensor][off];
  }
  double a = e->n_args > 0 ? eval(p, data, e->args[0], ax) : 0, b = e->n_args > 1 ? eval(p, data, e->args[1], ax) : 0;
  switch (e->kind) {
  case PC_E_CONST_F: return e->fval;
  case PC_E_CONST_I: return (double)e->ival;
  case PC_E_AXIS: return (double)ax[e->axis];
  case PC_E_ADD: return a + b;
  case PC_E_SUB: return a - b;
  case PC_E_MUL: return a * b;
  case PC_E_DIV: return e->is_int ? floor(a / b) : a / b;
  case PC_E_MOD: return a - floor(a / b) * b;
  case PC_E_MAX: return a > b ? a : b;
  case PC_E_MIN: return a < b ? a : b;
  case PC_E_EXP: return exp(a);
  case PC_E_SQRT: return sqrt(a);
  case PC_E_NEG: return -a;
  case PC_E_LT: return a < b;
  case PC_E_LE: return a <= b;
  case PC_E_GT: return a > b;
  case PC_E_GE: return a >= b;
  case PC_E_EQ: return a == b;
  case PC_E_NE: return a != b;
  case PC_E_AND: return a != 0 && b != 0;
  case PC_E_OR: return a != 0 || b != 0;
  case PC_E_CAST_F: return a;
  default: return NAN;
  }
}

/* Evaluates op o of p into data[o], point by point. */
static void eval_op(const pc_program *p, float **data, int o) {
  const pc_op *op = &p->ops[o];
  int64_t n_red = 1, ax[PC_MAX_AXES];
  for (int k = 0; k < op->n_reduce; k++) n_red *= op->reduce_extent[k];
  for (int64_t i = 0; i < pc_op_numel(op); i++) {
    for (int64_t k = op->ndim - 1, r = i; k >= 0; r /= op->shape[k], k--) ax[k] = r % op->shape[k];
    double acc = op->reduce == PC_REDUCE_MAX ? -INFINITY : 0;
    for (int64_t j = 0; j < n_red; j++) {
      for (int64_t k = op->n_reduce - 1, r = j; k >= 0; r /= op->reduce_extent[k], k--)
        ax[op->ndim + k] = r % op->reduce_extent[k];
      double v = eval(p, data, op->body, ax);
      acc = op->reduce == PC_REDUCE_SUM ? acc + v : op->reduce == PC_REDUCE_MAX ? fmax(acc, v) : v;
    }
    data[o][i] = (float)acc;
  }
}

/* Returns the largest relative difference between the kernel's outputs and eval's. */
static double run_and_compare(const char *src) {
  pt_diag d = {0};
  pc_program *p = pc_expr_parse(src, "run.expr", &d);
  CHECK_MSG(p != NULL, "%s", d.msg);
  if (!p) return INFINITY;
  float *ref[PC_MAX_STAGES] = {0}, *buf[PC_MAX_STAGES] = {0};
  pt_rng rng = {42};
  for (int o = 0; o < p->n_ops; o++) {
    int64_t n = pc_op_numel(&p->ops[o]);
    ref[o] = calloc((size_t)n, sizeof(float));
    buf[o] = calloc((size_t)n, sizeof(float));
    if (p->ops[o].is_placeholder)
      for (int64_t i = 0; i < n; i++) buf[o][i] = ref[o][i] = (float)(pt_rng_uniform(&rng) * 2 - 1);
    else
      eval_op(p, ref, o);
  }
  double worst = INFINITY;
  pc_state *s = pc_state_new(p);
  pc_lower_opts lo = {0};
  pc_kernel *k = s ? pc_lower(s, &lo, &d) : NULL;
  if (k && pc_kernel_jit(k, &d) == 0) {
    float *args[PC_MAX_STAGES];
    for (int i = 0; i < pc_kernel_n_buffers(k); i++) args[i] = buf[pc_kernel_buffer_op(k, i)];
    pc_kernel_entry(k)(args, NULL);
    worst = 0;
    for (int o = 0; o < p->n_ops; o++)
      for (int64_t i = 0; p->ops[o].is_output && i < pc_op_numel(&p->ops[o]); i++) {
        if (isnan(buf[o][i]) && isnan(ref[o][i])) continue; /* sqrt of a negative input, both sides */
        double err = fabs(buf[o][i] - ref[o][i]) / (1e-3 + fabs(ref[o][i]));
        worst = err > worst || isnan(err) ? err : worst;
      }
  } else {
    fprintf(stderr, "lowering failed: %s\n", d.msg);
  }
  pc_kernel_free(k);
  pc_state_free(s);
  for (int o = 0; o < p->n_ops; o++) free(ref[o]), free(buf[o]);
  pc_program_free(p);
  return worst;
}

static const char *const runnable[] = {
    INDEXING,
    "input X[1, 3, 6, 6]\ninput K[4, 3, 3, 3]\ninput bias[4]\n"
    "P[n, c, h:8, w:8] = select(h >= 1 && h < 7 && w >= 1 && w < 7, X[n, c, h-1, w-1], 0.0)\n"
    "Y[n, f, y:6, x:6] = sum(c, r, s) P[n, c, y + r, x + s] * K[f, c, r, s]\n"
    "Z[n, f, y, x] = relu(Y[n, f, y, x] + bias[f])\n",
    "input X[4, 10]\nM[i] = max(j) X[i, j]\nE[i, j] = exp(X[i, j] - M[i])\nS[i] = sum(j) E[i, j]\n"
    "Y[i, j] = E[i, j] / S[i]\n",
    /* floor semantics on negative operands, conditions as numbers, if-then-else */
    "input A[4]\nB[i:8] = A[(i - 3) % 4] + A[(i - 4) / 2 + 2] * 10\n"
    "C[i:8] = if A[i % 4] > 0 || i == 5 then exp(A[i / 2]) else -A[i % 4] / 3 + (i >= 6) - float(i % 3)\n",
};

int main(void) {
  for (size_t i = 0; i < PT_ARRAY_LEN(rows); i++) CHECK_MSG(check_row(&rows[i]), "row %zu", i);

  /* The full message: position, the line quoted, a caret under the column. */
  pt_diag d = {0};
  CHECK(pc_expr_parse("input A[4]\n\tB[i] = Q[i]\n", "t.expr", &d) == NULL);
  CHECK_MSG(strcmp(d.msg, "t.expr:2:9: unknown tensor 'Q'\n    \tB[i] = Q[i]\n    \t       ^") == 0, "%s", d.msg);

  /* A byte order mark is not part of line 1's columns. */
  pt_diag_clear(&d);
  CHECK(pc_expr_parse("\xEF\xBB\xBFinput A[4]\nB[i] = A[i]\nC = 1", "t.expr", &d) == NULL);
  CHECK_MSG(strstr(d.msg, "t.expr:3:3: 'C' needs axes") != NULL, "%s", d.msg);
  pt_diag_clear(&d);
  CHECK(pc_expr_parse("\xEF\xBB\xBFinput A[0]", "t.expr", &d) == NULL);
  CHECK_MSG(strstr(d.msg, "t.expr:1:9: extent must be positive, got 0\n    input A[0]\n            ^") != NULL, "%s",
            d.msg);

  /* Limits: nesting depth, statement size, number of tensors. */
  char *big = malloc(1 << 20);
  int n = sprintf(big, "input A[4]\nB[i] = ");
  for (int k = 0; k < 5000; k++) big[n++] = '(';
  strcpy(big + n, "A[i]");
  pt_diag_clear(&d);
  CHECK(pc_expr_parse(big, "t.expr", &d) == NULL && strstr(d.msg, "2:8: unbalanced parentheses") != NULL);
  n += 4;
  for (int k = 0; k < 5000; k++) big[n++] = ')';
  big[n] = 0;
  pt_diag_clear(&d);
  CHECK(pc_expr_parse(big, "t.expr", &d) == NULL && strstr(d.msg, "nested too deeply") != NULL);
  n = sprintf(big, "input A[4]\nB[i] = A[i]");
  for (int k = 0; k < 5000; k++) n += sprintf(big + n, " + A[i]");
  pt_diag_clear(&d);
  CHECK(pc_expr_parse(big, "t.expr", &d) == NULL && strstr(d.msg, "statement is too large") != NULL);
  n = sprintf(big, "input T0[4]\n");
  for (int k = 1; k < 40; k++) n += sprintf(big + n, "T%d[i] = T%d[i] + 1\n", k, k - 1);
  pt_diag_clear(&d);
  CHECK(pc_expr_parse(big, "t.expr", &d) == NULL && strstr(d.msg, "33:1: too many tensors") != NULL);
  n = 0;
  for (int k = 0; k < 17; k++) n += sprintf(big + n, "input T%d[4]\n", k);
  n += sprintf(big + n, "S[i] = T0[i]");
  for (int k = 1; k < 17; k++) n += sprintf(big + n, " + T%d[i]", k);
  pt_diag_clear(&d);
  CHECK(pc_expr_parse(big, "t.expr", &d) == NULL &&
        strstr(d.msg, "18:1: statement reads 17 different tensors") != NULL);
  n = sprintf(big, "input T0[4]\n");
  for (int k = 1; k < 32; k++) n += sprintf(big + n, "T%d[i] = T%d[i] + 1\n", k, k - 1);
  pt_diag_clear(&d);
  pc_program *p = pc_expr_parse(big, "t.expr", &d);
  CHECK_MSG(p && p->n_ops == 32 && p->ops[31].is_output && !p->ops[30].is_output, "%s", d.msg);
  pc_program_free(p);

  /* Never crash: every prefix of every valid row, then random byte mutations. */
  const char *seeds[] = {MATMUL, CONV, SOFTMAX, INDEXING};
  int bad = 0, parsed = 0, runs = 0;
  for (size_t s = 0; s < PT_ARRAY_LEN(seeds); s++) {
    size_t len = strlen(seeds[s]);
    for (size_t cut = 0; cut <= len; cut++) {
      memcpy(big, seeds[s], cut);
      big[cut] = 0;
      bad += !parse_any(big, &parsed);
      runs++;
    }
  }
  static const char alphabet[] = "()[],:;=+-*/%<>!&|#.eE0123456789ijkABsummaxinputselectif \n\t\x80\xff@";
  pt_rng rng = {12345};
  for (int it = 0; it < 20000; it++) {
    const char *src = seeds[pt_rng_range(&rng, (int64_t)PT_ARRAY_LEN(seeds))];
    size_t len = strlen(src);
    memcpy(big, src, len + 1);
    int edits = 1 + (int)pt_rng_range(&rng, 4);
    for (int e = 0; e < edits && len > 0; e++) {
      size_t at = (size_t)pt_rng_range(&rng, (int64_t)len);
      char c = alphabet[pt_rng_range(&rng, (int64_t)sizeof alphabet - 1)];
      switch (pt_rng_range(&rng, 3)) {
      case 0: big[at] = c; break;
      case 1:
        memmove(big + at, big + at + 1, len - at);
        len--;
        break; /* delete */
      default:
        memmove(big + at + 1, big + at, len - at + 1);
        big[at] = c;
        len++;
        break; /* insert */
      }
    }
    bad += !parse_any(big, &parsed);
    runs++;
  }
  CHECK_MSG(bad == 0, "%d of %d inputs gave neither a program nor a positioned error", bad, runs);
  CHECK_MSG(parsed > 100, "only %d mutated programs parsed: the mutations are too destructive to test much", parsed);
  printf("%d inputs, %d parsed to programs\n", runs, parsed);
  for (size_t i = 0; i < PT_ARRAY_LEN(runnable); i++) {
    double err = run_and_compare(runnable[i]);
    CHECK_MSG(err < 1e-4, "program %zu: kernel and evaluation differ by %g (relative)", i, err);
  }
  free(big);
  TEST_DONE();
}
