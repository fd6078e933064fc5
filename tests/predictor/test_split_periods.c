/* Periods of a fused loop's split index (analyzer/access.c): a parallel body over i.outer x
 * j.outer (bert_qkv's default: 16 x 72, not a power of two) recovers them with `udiv f, 72` and
 * f - 72 x that (or `urem`), or with `lshr` and a mask for 16 x 64. B's column walk moves 128
 * bytes per iteration of f and comes back to the same lines every 72 (period 72, 0 bytes over
 * it); A's rows do not move between wraps and move 8 rows at each; C's tile moves 128 bytes
 * and 8 rows over a period. Before session 16 `udiv` by 72 left the outer strides unknown and
 * the periods were not recorded, so no model could tell a walk that comes back after one pass
 * over B from one that never comes back. The periods survive the profile's JSON. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "test.h"
#include "synthetic.h"

/* for f < 1152: q = f / J; r = f mod J (SPLIT: two lines); for k < 768:
 *   acc += a[q*6144 + k] * b[k*2304 + r*32]; then c[q*18432 + r*32] = acc */
static const char *ir_fmt =
    "define void @body(ptr %%a, ptr %%b, ptr %%c) {\n"
    "entry:\n  br label %%f\n"
    "f:\n  %%fv = phi i64 [0, %%entry], [%%fn, %%fl]\n  %%fz = freeze i64 %%fv\n"
    "  %s\n  %s\n"
    "  %%ai0 = mul i64 %%q, 6144\n  %%r32 = shl i64 %%r, 5\n  br label %%k\n"
    "k:\n  %%kv = phi i64 [0, %%f], [%%kn, %%k]\n  %%acc = phi float [0.0, %%f], [%%s, %%k]\n"
    "  %%ai = add i64 %%ai0, %%kv\n  %%pa = getelementptr float, ptr %%a, i64 %%ai\n"
    "  %%x = load float, ptr %%pa\n"
    "  %%kr = mul i64 %%kv, 2304\n  %%bi = add i64 %%kr, %%r32\n"
    "  %%pb = getelementptr float, ptr %%b, i64 %%bi\n  %%y = load float, ptr %%pb\n"
    "  %%m = fmul float %%x, %%y\n  %%s = fadd float %%acc, %%m\n"
    "  %%kn = add i64 %%kv, 1\n  %%kd = icmp eq i64 %%kn, 768\n  br i1 %%kd, label %%fl, label %%k\n"
    "fl:\n  %%ci0 = mul i64 %%q, 18432\n  %%ci = add i64 %%ci0, %%r32\n"
    "  %%pc = getelementptr float, ptr %%c, i64 %%ci\n  store float %%s, ptr %%pc\n"
    "  %%fn = add i64 %%fv, 1\n  %%e = icmp eq i64 %%fn, 1152\n  br i1 %%e, label %%exit, label %%f\n"
    "exit:\n  ret void\n}\n";

/* The n-th memory node of block `block`. */
static const pa_node *node_of(const pa_profile *p, const char *block, int n) {
  const pa_function *f = &p->functions[0];
  for (int b = 0; b < f->n_blocks; b++)
    if (strcmp(f->blocks[b].name, block) == 0)
      for (int i = 0; i < f->blocks[b].n_nodes; i++)
        if (f->blocks[b].nodes[i].is_memory && n-- == 0) return &f->blocks[b].nodes[i];
  return NULL;
}

/* The node's outermost (f) stride, period and bytes over it are as given. */
static void expect_outer(const pa_node *n, const char *what, const char *split, int64_t stride, int64_t period, int64_t moved) {
  CHECK_MSG(n && n->n_strides >= 1, "%s (%s): no strides", what, split);
  if (!n || n->n_strides < 1) return;
  int k = n->n_strides - 1;
  CHECK_MSG(n->strides[k] == stride, "%s (%s): stride %lld, want %lld", what, split, (long long)n->strides[k], (long long)stride);
  CHECK_MSG(n->periods && n->periods[k] == period, "%s (%s): period %lld, want %lld", what, split,
            n->periods ? (long long)n->periods[k] : -1LL, (long long)period);
  CHECK_MSG(n->periods && n->period_strides[k] == moved, "%s (%s): moved %lld over the period, want %lld", what, split,
            n->periods ? (long long)n->period_strides[k] : -1LL, (long long)moved);
  if (n->n_strides == 2) CHECK_MSG(n->periods && n->periods[0] == 0, "%s (%s): the k loop does not wrap", what, split);
}

static void expect_split(const char *q, const char *r, int64_t j_tiles) {
  char ir[4096];
  pt_diag d = {0};
  snprintf(ir, sizeof ir, ir_fmt, q, r);
  pa_profile *p = synthetic_profile_ir(ir, "body", &d);
  CHECK_MSG(p, "%s", d.msg);
  if (!p) return;
  /* a round trip through the JSON keeps them */
  char *json = pa_profile_to_json(p);
  pa_profile *back = json ? pa_profile_parse(json, "split periods", &d) : NULL;
  CHECK_MSG(back, "%s", d.msg);
  free(json);
  for (int pass = 0; pass < 2 && back; pass++) {
    const pa_profile *x = pass ? back : p;
    const pa_node *a = node_of(x, "k", 0), *b = node_of(x, "k", 1), *c = node_of(x, "fl", 0);
    CHECK(a && a->n_strides == 2 && a->strides[0] == 4 && b && b->n_strides == 2 && b->strides[0] == 9216);
    expect_outer(a, "A's row", q, 0, j_tiles, 24576);
    expect_outer(b, "B's column", q, 128, j_tiles, 0);
    expect_outer(c, "C's tile", q, 128, j_tiles, 73728);
  }
  pa_profile_free(back);
  pa_profile_free(p);
}

int main(void) {
  /* as LLVM writes bert_qkv's body: the remainder recomputed from the quotient */
  expect_split("%q = udiv i64 %fz, 72", "%q72 = mul i64 %q, 72\n  %r = sub i64 %fz, %q72", 72);
  expect_split("%q = udiv i64 %fz, 72", "%r = urem i64 %fz, 72", 72);
  /* 16 x 64: a shift and a mask */
  expect_split("%q = lshr i64 %fz, 6", "%r = and i64 %fz, 63", 64);

  /* a staircase split again (mm1024 #93: `and (lshr %f, 5), 0x7ffffffffffffe0`, the mask's run
   * stopping where lshr left zeros): q moves 32 every 1024 iterations, B's column still every 32 */
  {
    char ir[4096];
    pt_diag d = {0};
    snprintf(ir, sizeof ir, ir_fmt, "%q0 = lshr i64 %fz, 5\n  %q = and i64 %q0, 576460752303423456", "%r = and i64 %fz, 31");
    pa_profile *p = synthetic_profile_ir(ir, "body", &d);
    CHECK_MSG(p, "%s", d.msg);
    if (p) {
      const char *what = "(f >> 5) & -32";
      expect_outer(node_of(p, "k", 0), "A's row", what, 0, 1024, 32 * 24576);
      expect_outer(node_of(p, "k", 1), "B's column", what, 128, 32, 0);
      expect_outer(node_of(p, "fl", 0), "C's tile", what, 128, 1024, 32 * 73728);
    }
    pa_profile_free(p);
  }

  /* a plain loop does not wrap: no periods recorded */
  char ir[4096];
  pt_diag d = {0};
  snprintf(ir, sizeof ir, ir_fmt, "%q = add i64 %fz, 0", "%r = add i64 %fz, 0");
  pa_profile *p = synthetic_profile_ir(ir, "body", &d);
  CHECK_MSG(p, "%s", d.msg);
  const pa_node *b = p ? node_of(p, "k", 1) : NULL;
  CHECK(b && b->n_strides == 2 && b->strides[1] == 128 && !b->periods);
  pa_profile_free(p);

  /* a split of a value that wraps itself at another period: the period is not followed, nor
   * is the stride */
  snprintf(ir, sizeof ir, ir_fmt, "%q = udiv i64 %fz, 72", "%q72 = urem i64 %fz, 72\n  %r = urem i64 %q72, 5");
  p = synthetic_profile_ir(ir, "body", &d);
  CHECK_MSG(p, "%s", d.msg);
  b = p ? node_of(p, "k", 1) : NULL;
  CHECK(b && b->n_strides == 2 && b->strides[0] == 9216 && b->strides[1] == PA_STRIDE_UNKNOWN && !b->periods);
  pa_profile_free(p);

  /* a malformed period is named by its path */
  snprintf(ir, sizeof ir, ir_fmt, "%q = udiv i64 %fz, 72", "%r = urem i64 %fz, 72");
  p = synthetic_profile_ir(ir, "body", &d);
  char *json = p ? pa_profile_to_json(p) : NULL;
  char *at = json ? strstr(json, "\"periods\":[0,") : NULL;
  CHECK_MSG(at, "no periods in the profile's JSON");
  if (at) {
    at[strlen("\"periods\":[0,")] = '-'; /* 72 -> -2 */
    pt_diag e = {0};
    pa_profile *q = pa_profile_parse(json, "bad.json", &e);
    CHECK_MSG(!q && strstr(e.msg, "periods[1]"), "a negative period: %s", q ? "accepted" : e.msg);
    pa_profile_free(q);
  }
  free(json);
  pa_profile_free(p);
  TEST_DONE();
}
