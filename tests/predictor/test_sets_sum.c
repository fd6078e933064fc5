/* +setsum: a loop whose set-conflicting walk falls in one L1 set position takes its few-set L1
 * misses on top of its other cycles instead of the larger of the two (bert_ffn1's tie group:
 * B's column 12 KiB apart, one set). On Zen 4's file a column walk 4096 bytes apart (one
 * position) takes the default's cycles without +sets plus the +sets bound; a walk 2048 bytes apart
 * (two positions), a walk whose accesses span two lines (a register tile's vector rows: their
 * fills overlap the tile's work) and a target without set walks are unchanged; the name parses. */
#include <math.h>
#include <stdio.h>

#include "test.h"
#include "synthetic.h"

/* for j < 16: for i < 512: acc += a[i * 1024 + j * 32 .. + 31][0]: a column of <32 x float>
 * rows, 128 bytes each, 4096 bytes apart (one position) */
static const char *wide_ir =
    "define void @wide(ptr %a, ptr %c) {\n"
    "entry:\n  br label %j\n"
    "j:\n  %jv = phi i64 [0, %entry], [%jn, %jl]\n  %col = shl i64 %jv, 5\n  br label %i\n"
    "i:\n  %iv = phi i64 [0, %j], [%in, %i]\n  %acc = phi float [0.0, %j], [%s, %i]\n"
    "  %row = mul i64 %iv, 1024\n  %idx = add i64 %row, %col\n"
    "  %p = getelementptr float, ptr %a, i64 %idx\n  %v = load <32 x float>, ptr %p\n"
    "  %x = extractelement <32 x float> %v, i64 0\n  %s = fadd float %acc, %x\n"
    "  %in = add i64 %iv, 1\n  %d = icmp eq i64 %in, 512\n  br i1 %d, label %jl, label %i\n"
    "jl:\n  %q = getelementptr float, ptr %c, i64 %jv\n  store float %s, ptr %q\n"
    "  %jn = add i64 %jv, 1\n  %e = icmp eq i64 %jn, 16\n  br i1 %e, label %exit, label %j\n"
    "exit:\n  ret void\n}\n";

static double predict(const pa_profile *p, const ptg_target *t, bool sets, bool sum, pt_diag *d) {
  pp_options o;
  pp_options_default(&o);
  o.threads = 1, o.l1_sets = sets, o.sets_sum = sum;
  return synthetic_seconds(p, t, &o, d);
}

int main(void) {
  pt_diag d = {0};
  ptg_target *t = synthetic_test_target("zen4-epyc-2c", &d);
  if (!t) TEST_DONE();
  pp_options def = synthetic_defaults(), parsed = synthetic_preset("steady+bw+overlap+strides+lanes+sets+setsum");
  CHECK(def.sets_sum); /* the default since session 20 */
  CHECK(parsed.sets_sum && parsed.l1_sets);
  CHECK(ptg_target_set_inflight(t, 1) > 0);

  pa_profile *one = synthetic_column_walk(1024, &d), *two = synthetic_column_walk(512, &d);
  CHECK_MSG(one && two, "%s", d.msg);
  if (one && two) {
    double hz = t->frequency_ghz.value * 1e9, l2 = t->caches[1].latency_cycles.value;
    double need = 512.0 * 512.0 * l2 / ptg_target_set_inflight(t, 1) / hz;
    double on = predict(one, t, false, false, &d), os = predict(one, t, true, false, &d), osum = predict(one, t, true, true, &d);
    CHECK_MSG(os >= 0.999 * need && os < need + 0.5 * on, "one position: %g s with +sets (bound %g), %g without", os, need, on);
    CHECK_MSG(osum >= 0.999 * (need + 0.9 * on) && osum <= 1.001 * (need + on),
              "one position: %g s with +setsum, bound %g + %g without +sets", osum, need, on);
    double ts = predict(two, t, true, false, &d), tsum = predict(two, t, true, true, &d);
    CHECK_MSG(ts > predict(two, t, false, false, &d) && fabs(tsum - ts) <= 1e-9 * ts, "two positions: %g vs %g", tsum, ts);
    /* a walk of rows two lines wide: +sets bounds it, +setsum adds nothing */
    pa_profile *wide = synthetic_profile_ir(wide_ir, "wide", &d);
    CHECK_MSG(wide, "%s", d.msg);
    if (wide) {
      double wn = predict(wide, t, false, false, &d), ws = predict(wide, t, true, false, &d), wsum = predict(wide, t, true, true, &d);
      CHECK_MSG(ws > 1.2 * wn, "wide rows: %g s with +sets, %g without (the walk must be bound)", ws, wn);
      CHECK_MSG(fabs(wsum - ws) <= 1e-9 * ws, "wide rows: %g s with +setsum, %g with +sets", wsum, ws);
      pa_profile_free(wide);
    }
    /* no set walks in the target: the option changes nothing */
    t->caches[0].n_set_walks = 0;
    double oz = predict(one, t, true, true, &d);
    CHECK_MSG(fabs(oz - on) <= 1e-9 * on, "no set walks: %g vs %g", oz, on);
  }
  pa_profile_free(one), pa_profile_free(two);
  ptg_target_free(t);
  TEST_DONE();
}
