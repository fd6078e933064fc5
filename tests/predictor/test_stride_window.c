/* Which miss of a set-conflicting walk paces the reorder window (predictor/memory.c,
 * pp_stride_stalls): only a level the walk reaches at least once per window. A column walk
 * 2048 bytes apart (mm512's B) on Emerald Rapids (targets/h100.json) misses L1 every time, but
 * its 2 MiB 16-way L2 keeps all but 0.8% of the sweep and its L3 all but a rounded Poisson tail;
 * that the window then waits for DRAM at every iteration was the 2.3x over-prediction of mm512
 * there. With a 4-way L2 the walk loses a line to L3 every few iterations: L3 paces it. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "test.h"
#include "synthetic.h"

/* for j < 512: for i < 512: acc += a[i * 512 + j]; c[j] = acc */
static const char *column_walk =
    "define void @walk(ptr %a, ptr %c) {\n"
    "entry:\n  br label %j\n"
    "j:\n  %jv = phi i64 [0, %entry], [%jn, %jl]\n  br label %i\n"
    "i:\n  %iv = phi i64 [0, %j], [%in, %i]\n  %acc = phi float [0.0, %j], [%s, %i]\n"
    "  %row = mul i64 %iv, 512\n  %idx = add i64 %row, %jv\n"
    "  %p = getelementptr float, ptr %a, i64 %idx\n  %x = load float, ptr %p\n"
    "  %s = fadd float %acc, %x\n  %in = add i64 %iv, 1\n  %d = icmp eq i64 %in, 512\n"
    "  br i1 %d, label %jl, label %i\n"
    "jl:\n  %q = getelementptr float, ptr %c, i64 %jv\n  store float %s, ptr %q\n"
    "  %jn = add i64 %jv, 1\n  %e = icmp eq i64 %jn, 512\n  br i1 %e, label %exit, label %j\n"
    "exit:\n  ret void\n}\n";

/* seconds with and without the strides extension */
static void predict_both(const pa_profile *p, const ptg_target *t, double *with_s, double *without_s, pt_diag *d) {
  pp_options with = {0}, without;
  pp_options_default(&with);
  with.threads = 1;
  without = with, without.strides = false;
  pp_prediction *w = pp_predict_profile(p, t, &with, d), *n = pp_predict_profile(p, t, &without, d);
  *with_s = w ? w->seconds : NAN, *without_s = n ? n->seconds : NAN;
  pp_prediction_free(w), pp_prediction_free(n);
}

int main(void) {
  pt_diag d = {0};
  ptg_target *t = synthetic_shipped_target("h100", &d);
  CHECK_MSG(t, "%s", d.msg);
  pa_profile *p = t ? synthetic_profile_ir(column_walk, "walk", &d) : NULL;
  CHECK_MSG(p, "%s", d.msg);
  if (!t || !p) TEST_DONE();
  CHECK(t->n_caches == 3 && t->caches[1].associativity == 16 && t->caches[1].size_bytes == 2 << 20);

  /* the L2 keeps the sweep: L1 misses served by L2 (and the L1 DTLB's misses) overlap, at most a
   * few cycles per iteration beyond the model without strides (before: 5x) */
  double with_s, without_s;
  predict_both(p, t, &with_s, &without_s, &d);
  CHECK_MSG(with_s >= without_s && with_s < 1.25 * without_s, "16-way L2: %g s with strides, %g without", with_s,
            without_s);

  /* a 4-way L2 of the same size loses ~1 line in 7 to L3 (Poisson(2) >= 4 over the sweep's
   * sets): more than once per window, so L3's latency paces the walk */
  t->caches[1].associativity = 4;
  double with4_s, without4_s;
  predict_both(p, t, &with4_s, &without4_s, &d);
  CHECK_MSG(with4_s > 1.5 * without4_s && with4_s > 1.5 * with_s, "4-way L2: %g s with strides, %g without (16-way: %g)",
            with4_s, without4_s, with_s);
  pa_profile_free(p);
  ptg_target_free(t);
  TEST_DONE();
}
