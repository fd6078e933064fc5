/* Per-access offsets and derived inductions (analyzer/access.c), and what +sets makes of them
 * (predictor/memory.c). A k loop unrolled by 5 over the rows of b (mm512 #28) reads rows 5k,
 * 5k + 1 and 5k + 2 through an index phi recomputed from the counter, (k + 1) x 10240 bytes:
 * each load gets the stride 10240 and its own offset, so the predictor counts three walks of
 * b's column in the same two L1 sets (Zen 4's set walks: about one fill per set at a time)
 * where, without offsets, they were one walk and the loop three times faster. Loads a few
 * bytes apart (one line) stay one walk; a phi that doubles has no stride. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "test.h"
#include "synthetic.h"

/* for j < 512: for k < 103: acc += b[5k][j] + b[5k + ROW1][j] + b[5(k + 1)][j] + b[g][j],
 * g doubling; ROW1 and ROW2 as byte offsets: OFF1 through an invariant getelementptr outside
 * the loops, OFF2 as (5k << 11) | OFF2 (an `or disjoint` of the low bits) */
static const char *ir_fmt =
    "define void @unrolled(ptr %%b, ptr %%c) {\n"
    "entry:\n  %%b1 = getelementptr i8, ptr %%b, i64 %d\n  br label %%j\n"
    "j:\n  %%jv = phi i64 [0, %%entry], [%%jn, %%jl]\n"
    "  %%bj = getelementptr float, ptr %%b, i64 %%jv\n  %%b1j = getelementptr float, ptr %%b1, i64 %%jv\n"
    "  br label %%k\n"
    "k:\n  %%kv = phi i64 [0, %%j], [%%kn, %%k]\n  %%idx = phi i64 [0, %%j], [%%idxn, %%k]\n"
    "  %%g = phi i64 [1, %%j], [%%gn, %%k]\n  %%acc = phi float [0.0, %%j], [%%s3, %%k]\n"
    "  %%p0 = getelementptr i8, ptr %%bj, i64 %%idx\n  %%x0 = load float, ptr %%p0\n"
    "  %%p1 = getelementptr i8, ptr %%b1j, i64 %%idx\n  %%x1 = load float, ptr %%p1\n"
    "  %%k5 = mul i64 %%kv, 5\n  %%r2 = shl i64 %%k5, 11\n  %%o2 = or disjoint i64 %%r2, %d\n"
    "  %%p2 = getelementptr i8, ptr %%bj, i64 %%o2\n  %%x2 = load float, ptr %%p2\n"
    "  %%kn = add i64 %%kv, 1\n  %%idxn = mul i64 %%kn, 10240\n"
    "  %%p3 = getelementptr i8, ptr %%bj, i64 %%idxn\n  %%x3 = load float, ptr %%p3\n"
    "  %%gn = shl i64 %%g, 1\n  %%p4 = getelementptr float, ptr %%bj, i64 %%g\n  %%x4 = load float, ptr %%p4\n"
    "  %%s0 = fadd float %%acc, %%x0\n  %%s1 = fadd float %%s0, %%x1\n  %%s2 = fadd float %%s1, %%x2\n"
    "  %%s3 = fadd float %%s2, %%x3\n  %%x34 = fadd float %%x3, %%x4\n"
    "  %%kd = icmp eq i64 %%kn, 103\n  br i1 %%kd, label %%jl, label %%k\n"
    "jl:\n  %%q = getelementptr float, ptr %%c, i64 %%jv\n  store float %%s3, ptr %%q\n"
    "  %%jn = add i64 %%jv, 1\n  %%e = icmp eq i64 %%jn, 512\n  br i1 %%e, label %%exit, label %%j\n"
    "exit:\n  ret void\n}\n";

static pa_profile *profile(int off1, int off2) {
  char ir[4096];
  pt_diag d = {0};
  snprintf(ir, sizeof ir, ir_fmt, off1, off2);
  pa_profile *p = synthetic_profile_ir(ir, "unrolled", &d);
  CHECK_MSG(p, "%s", d.msg);
  return p;
}

static pa_node *loads_of_k(pa_profile *p, int *n) {
  pa_function *f = &p->functions[0];
  for (int b = 0; b < f->n_blocks; b++)
    if (strcmp(f->blocks[b].name, "k") == 0) {
      *n = f->blocks[b].n_nodes;
      return f->blocks[b].nodes;
    }
  *n = 0;
  return NULL;
}

/* The i-th memory node of block k. */
static const pa_node *load(pa_profile *p, int i) {
  int n;
  pa_node *nodes = loads_of_k(p, &n);
  for (int k = 0; k < n; k++)
    if (nodes[k].is_memory && i-- == 0) return &nodes[k];
  return NULL;
}

static void expect_load(pa_profile *p, int i, int64_t stride, bool has_offset, int64_t offset) {
  const pa_node *x = load(p, i);
  CHECK_MSG(x && x->n_strides == 2 && x->strides[0] == stride, "load %d: stride %lld, want %lld", i,
            x && x->n_strides ? (long long)x->strides[0] : -1, (long long)stride);
  CHECK_MSG(x && x->has_offset == has_offset && (!has_offset || x->offset == offset), "load %d: offset %s%lld, want %lld",
            i, x && x->has_offset ? "" : "(none) ", x ? (long long)x->offset : 0, (long long)offset);
}

static double seconds(const pa_profile *p, const ptg_target *t) {
  pp_options o;
  pp_options_default(&o);
  o.threads = 1;
  pt_diag d = {0};
  pp_prediction *r = pp_predict_profile(p, t, &o, &d);
  CHECK_MSG(r, "%s", d.msg);
  double s = r ? r->seconds : 0;
  pp_prediction_free(r);
  return s;
}

/* The prediction of p with its offsets, and with them forgotten (as in older profiles). */
static void predict_both(pa_profile *p, const ptg_target *t, double *with, double *without) {
  *with = seconds(p, t);
  int n;
  pa_node *nodes = loads_of_k(p, &n);
  for (int k = 0; k < n; k++) nodes[k].has_offset = false;
  *without = seconds(p, t);
}

int main(void) {
  pt_diag d = {0};
  ptg_target *t = synthetic_shipped_target("zen4-epyc-2c", &d);
  CHECK_MSG(t, "%s", d.msg);
  pa_profile *rows = profile(4096, 2048), *line = profile(4, 8);
  if (!t || !rows || !line) TEST_DONE();

  /* the analysis: one stride for the rows read through the counter-derived phi, through the
   * invariant pointer, through the shifted counter and through the latch value itself; their
   * offsets tell them apart. The doubling phi has no stride. */
  expect_load(rows, 0, 10240, true, 0);
  expect_load(rows, 1, 10240, true, 4096);
  expect_load(rows, 2, 10240, true, 2048);
  expect_load(rows, 3, 10240, true, 10240);
  const pa_node *g = load(rows, 4);
  CHECK(g && g->n_strides == 2 && g->strides[0] == PA_STRIDE_UNKNOWN && !g->has_offset);

  /* the format: the offset is written and read back; a profile without it reads as unknown */
  char *json = pa_profile_to_json(rows);
  pa_profile *back = json ? pa_profile_parse(json, "offsets", &d) : NULL;
  CHECK_MSG(back, "%s", d.msg);
  if (back) expect_load(back, 1, 10240, true, 4096);
  pa_profile_free(back);
  for (char *at = json ? strstr(json, "\"offset\":") : NULL; at; at = strstr(at, "\"offset\":")) memcpy(at, "\"ofxset\"", 8);
  back = json ? pa_profile_parse(json, "no offsets", &d) : NULL;
  CHECK_MSG(back, "%s", d.msg);
  if (back) expect_load(back, 1, 10240, false, 0);
  pa_profile_free(back);
  free(json);

  /* the model: rows 5k, 5k + 1 (2048 B on) and 5k + 2 fall in the same two L1 sets (a row is 32
   * lines, the stride 160): three walks' fills there, where without offsets b's column was one
   * walk (row 5k + 5, read by load 3, is the walk of row 5k one iteration on) */
  double with, without;
  predict_both(rows, t, &with, &without);
  double per_iteration = with * t->frequency_ghz.value * 1e9 / (512 * 103);
  double fills = 3 * t->caches[1].latency_cycles.value / ptg_target_set_inflight(t, 2);
  CHECK_MSG(fabs(per_iteration / fills - 1) < 0.05, "rows apart: %g cycles per iteration, want %g (three fills)",
            per_iteration, fills);
  CHECK_MSG(with > 1.8 * without, "rows apart: %g s with offsets, %g without", with, without);
  /* offsets within a line: one walk, as without them */
  predict_both(line, t, &with, &without);
  CHECK_MSG(with > 0 && fabs(with - without) < 1e-9 * without, "one line: %g s with offsets, %g without", with,
            without);

  pa_profile_free(rows), pa_profile_free(line);
  ptg_target_free(t);
  TEST_DONE();
}
