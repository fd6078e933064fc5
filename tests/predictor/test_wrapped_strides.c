/* Strides through a fused loop's split index (analyzer/access.c): a loop f over i x j that
 * recovers j as f mod 512 and i's row as f with its low bits cleared (`and` masks, as LLVM
 * writes `urem`/`udiv` by powers of two) steps j by one element and i's row by nothing in all
 * but one of 512 iterations, so a column walk of B inside it gets the fused loop's stride 4, as
 * in a plain j loop (mm512 candidates 3, 9 and 29 of the saved sets had an unknown stride there,
 * and the +strides/+sets bounds did not apply). A mask that is not such a split, or a step no
 * wrap rule covers, stays unknown. */
#include <stdio.h>
#include <string.h>

#include "test.h"
#include "synthetic.h"

/* for f < 512*512: for k < 512: acc += a[(f MASK_I) + k] * b[k * 512 + (f MASK_J)]; c[f] = acc */
static const char *ir_fmt =
    "define void @fused(ptr %%a, ptr %%b, ptr %%c) {\n"
    "entry:\n  br label %%f\n"
    "f:\n  %%fv = phi i64 [0, %%entry], [%%fn, %%fl]\n  %%fs = mul i64 %%fv, %d\n"
    "  %%jj = %s\n  %%ii = %s\n  br label %%k\n"
    "k:\n  %%kv = phi i64 [0, %%f], [%%kn, %%k]\n  %%acc = phi float [0.0, %%f], [%%s, %%k]\n"
    "  %%ai = add i64 %%ii, %%kv\n  %%pa = getelementptr float, ptr %%a, i64 %%ai\n"
    "  %%x = load float, ptr %%pa\n"
    "  %%kr = shl i64 %%kv, 9\n  %%bi = or disjoint i64 %%kr, %%jj\n"
    "  %%pb = getelementptr float, ptr %%b, i64 %%bi\n  %%y = load float, ptr %%pb\n"
    "  %%m = fmul float %%x, %%y\n  %%s = fadd float %%acc, %%m\n"
    "  %%kn = add i64 %%kv, 1\n  %%kd = icmp eq i64 %%kn, 512\n  br i1 %%kd, label %%fl, label %%k\n"
    "fl:\n  %%q = getelementptr float, ptr %%c, i64 %%fv\n  store float %%s, ptr %%q\n"
    "  %%fn = add i64 %%fv, 1\n  %%e = icmp eq i64 %%fn, 262144\n  br i1 %%e, label %%exit, label %%f\n"
    "exit:\n  ret void\n}\n";

/* The strides of the k block's n-th load (0: a, 1: b) under the given split. */
static const pa_node *load_of(pa_profile **keep, int scale, const char *jj, const char *ii, int n) {
  char ir[2048];
  pt_diag d = {0};
  snprintf(ir, sizeof ir, ir_fmt, scale, jj, ii);
  pa_profile *p = *keep = synthetic_profile_ir(ir, "fused", &d);
  CHECK_MSG(p, "%s", d.msg);
  if (!p) return NULL;
  const pa_function *f = &p->functions[0];
  for (int b = 0; b < f->n_blocks; b++)
    if (strcmp(f->blocks[b].name, "k") == 0)
      for (int i = 0; i < f->blocks[b].n_nodes; i++)
        if (f->blocks[b].nodes[i].is_memory && n-- == 0) return &f->blocks[b].nodes[i];
  return NULL;
}

static void expect(int scale, const char *jj, const char *ii, int64_t a_outer, int64_t b_outer) {
  pa_profile *p = NULL;
  const pa_node *a = load_of(&p, scale, jj, ii, 0);
  CHECK(a && a->n_strides == 2 && a->strides[0] == 4);
  CHECK_MSG(a && a->n_strides == 2 && a->strides[1] == a_outer, "%s / %s: a's outer stride %lld, want %lld", jj, ii,
            a ? (long long)a->strides[1] : 0, (long long)a_outer);
  pa_profile_free(p);
  const pa_node *b = load_of(&p, scale, jj, ii, 1);
  CHECK(b && b->n_strides == 2 && b->strides[0] == 2048);
  CHECK_MSG(b && b->n_strides == 2 && b->strides[1] == b_outer, "%s / %s: b's outer stride %lld, want %lld", jj, ii,
            b ? (long long)b->strides[1] : 0, (long long)b_outer);
  pa_profile_free(p);
}

int main(void) {
  /* the split as LLVM writes it, and as urem */
  expect(1, "and i64 %fs, 511", "and i64 %fs, -512", 0, 4);
  expect(1, "urem i64 %fs, 512", "and i64 %fs, -512", 0, 4);
  /* f scaled by 512: j never moves (a multiple of the modulus), the row moves by 512 floats */
  expect(512, "and i64 %fs, 511", "and i64 %fs, -512", 2048, 0);
  /* as LLVM writes it for f x 4 (mm512 #29): the low split clears bits that never move, the
   * high one the sign bit too */
  expect(4, "and i64 %fs, 508", "and i64 %fs, 9223372036854775296", 0, 16);
  /* steps the wrap rule cannot name: a mask clearing a bit that moves, a mask of two runs, a
   * step above the modulus */
  expect(1, "and i64 %fs, 510", "and i64 %fs, -512", 0, PA_STRIDE_UNKNOWN);
  expect(1, "and i64 %fs, 771", "and i64 %fs, -512", 0, PA_STRIDE_UNKNOWN);
  expect(700, "and i64 %fs, 511", "and i64 %fs, -512", PA_STRIDE_UNKNOWN, PA_STRIDE_UNKNOWN);
  TEST_DONE();
}
