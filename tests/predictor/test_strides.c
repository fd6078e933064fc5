/* Per-access strides end to end: the analyzer's static address analysis (analyzer/access.c)
 * gives each load and store its byte stride per enclosing loop, and the default model, which
 * reads them, predicts a power-of-two column walk (4 KiB apart: one L1 set, 16 of the
 * L2's 1024 sets, a page per access) slower than the model without them, and a row walk the same. */
#define _GNU_SOURCE
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "test.h"
#include "synthetic.h"

/* for j < 512: for i < 512: acc += a[i * ROW + j]; c[j] = acc  (ROW floats per row) */
static const char *ir_fmt =
    "define void @walk(ptr %%a, ptr %%c) {\n"
    "entry:\n  br label %%j\n"
    "j:\n  %%jv = phi i64 [0, %%entry], [%%jn, %%jl]\n  br label %%i\n"
    "i:\n  %%iv = phi i64 [0, %%j], [%%in, %%i]\n  %%acc = phi float [0.0, %%j], [%%s, %%i]\n"
    "  %%row = mul i64 %%%s, %d\n  %%idx = add i64 %%row, %%%s\n"
    "  %%p = getelementptr float, ptr %%a, i64 %%idx\n  %%x = load float, ptr %%p\n"
    "  %%s = fadd float %%acc, %%x\n  %%in = add i64 %%iv, 1\n  %%d = icmp eq i64 %%in, 512\n"
    "  br i1 %%d, label %%jl, label %%i\n"
    "jl:\n  %%q = getelementptr float, ptr %%c, i64 %%jv\n  store float %%s, ptr %%q\n"
    "  %%jn = add i64 %%jv, 1\n  %%e = icmp eq i64 %%jn, 512\n  br i1 %%e, label %%exit, label %%j\n"
    "exit:\n  ret void\n}\n";

static pa_profile *profile(const char *outer, const char *inner, int row, pt_diag *d) {
  char ir[2048];
  snprintf(ir, sizeof ir, ir_fmt, outer, row, inner);
  return synthetic_profile_ir(ir, "walk", d);
}

static const pa_node *load_in(const pa_profile *p, const char *block) {
  const pa_function *f = &p->functions[0];
  for (int b = 0; b < f->n_blocks; b++)
    if (strcmp(f->blocks[b].name, block) == 0)
      for (int k = 0; k < f->blocks[b].n_nodes; k++)
        if (f->blocks[b].nodes[k].is_memory) return &f->blocks[b].nodes[k];
  return NULL;
}

int main(void) {
  pt_diag d = {0};
  ptg_target *t = synthetic_shipped_target("zen5-epyc-2c", &d);
  CHECK_MSG(t, "%s", d.msg);
  pa_profile *col = profile("iv", "jv", 1024, &d), *row = profile("jv", "iv", 1024, &d);
  CHECK_MSG(col && row, "%s", d.msg);
  if (!t || !col || !row) TEST_DONE();

  /* the analysis: innermost loop first, then the enclosing one */
  const pa_node *x = load_in(col, "i"), *st = load_in(col, "jl");
  CHECK(x && x->n_strides == 2 && x->strides[0] == 4096 && x->strides[1] == 4);
  CHECK(st && st->n_strides == 1 && st->strides[0] == 4);
  /* the object of each access: the load walks argument %a, the store %c */
  CHECK(x && st && x->array > 0 && st->array > 0 && x->array != st->array);
  const pa_node *y = load_in(row, "i");
  CHECK(y && y->n_strides == 2 && y->strides[0] == 4 && y->strides[1] == 4096);

  /* the model: the default reads strides; the same model without them does not */
  pp_options with, without;
  pp_options_default(&with);
  CHECK(with.strides);
  without = with, without.strides = false;
  pp_prediction *cw = pp_predict_profile(col, t, &with, &d), *cn = pp_predict_profile(col, t, &without, &d);
  pp_prediction *rw = pp_predict_profile(row, t, &with, &d), *rn = pp_predict_profile(row, t, &without, &d);
  CHECK_MSG(cw && cn && rw && rn, "%s", d.msg);
  if (cw && cn && rw && rn) {
    CHECK_MSG(cw->seconds > 1.1 * cn->seconds, "column walk: %g s with strides, %g without", cw->seconds, cn->seconds);
    CHECK_MSG(fabs(rw->seconds - rn->seconds) < 1e-12 + 1e-9 * rn->seconds, "row walk: %g vs %g", rw->seconds,
              rn->seconds);
  }
  pp_prediction_free(cw), pp_prediction_free(cn), pp_prediction_free(rw), pp_prediction_free(rn);

  /* +inflight: the column walk's lines, lost from L1 and L2, come from L3 (no figure of its own
   * on this VM: the 4 KiB strided walk's 15.7 misses in flight) and L2 (10.6), not at memory's
   * random-chase overlap (50.4): slower; the row walk loses nothing and is unchanged. A target
   * without those figures falls back to memory's for every level: the default's prediction. */
  pp_options inflight = with;
  inflight.level_inflight = true;
  pp_options parsed = synthetic_preset("steady+bw+overlap+strides+inflight");
  CHECK(parsed.level_inflight && parsed.strides && parsed.overlap);
  cw = pp_predict_profile(col, t, &with, &d);
  pp_prediction *ci = pp_predict_profile(col, t, &inflight, &d), *ri = pp_predict_profile(row, t, &inflight, &d);
  rw = pp_predict_profile(row, t, &with, &d);
  CHECK_MSG(cw && ci && rw && ri, "%s", d.msg);
  if (cw && ci && rw && ri) {
    CHECK_MSG(ci->seconds > 1.5 * cw->seconds, "column walk: %g s with +inflight, %g without", ci->seconds, cw->seconds);
    CHECK_MSG(fabs(ri->seconds - rw->seconds) < 1e-12 + 1e-9 * rw->seconds, "row walk: %g vs %g", ri->seconds,
              rw->seconds);
  }
  pp_prediction_free(ci), pp_prediction_free(ri), pp_prediction_free(rw);
  for (int i = 0; i < t->n_caches; i++) t->caches[i].overlapping_misses.value = NAN;
  t->memory.n_strided = 0;
  ci = pp_predict_profile(col, t, &inflight, &d);
  pp_prediction *plain = pp_predict_profile(col, t, &with, &d);
  CHECK_MSG(ci && plain, "%s", d.msg);
  if (ci && plain) {
    CHECK_MSG(fabs(ci->seconds - plain->seconds) < 1e-9 * plain->seconds, "no per-level figures: %g vs %g",
              ci->seconds, plain->seconds);
    CHECK_MSG(fabs(plain->seconds - cw->seconds) < 1e-9 * cw->seconds, "default unchanged: %g vs %g", plain->seconds,
              cw->seconds);
  }
  pp_prediction_free(ci), pp_prediction_free(plain), pp_prediction_free(cw);
  pa_profile_free(col), pa_profile_free(row);
  ptg_target_free(t);
  TEST_DONE();
}
