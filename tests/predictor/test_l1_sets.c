/* +sets: a column walk whose lines fall in few of L1's sets is bounded by the target's L1 misses
 * in flight for that many sets (caches[0].set_walks), each miss held for an L2 round trip. On
 * Zen 4's file a walk 2048 bytes apart (2 sets) takes at least 512 x 512 x L2 / in-flight(2)
 * cycles, slower than without the option; a padded walk (every set, 8 lines each: L1 keeps
 * them), a row walk and a target without set walks are unchanged; a walk read in two blocks of
 * its loop (neighbouring elements, one stream) is bounded once, not twice. */
#include <math.h>
#include <stdio.h>

#include "test.h"
#include "synthetic.h"

/* for j < 512: for i < 512: acc += a[i * ROW + j] (and a[i * ROW + j + 1] in a second block of
 * the i loop when split); c[j] = acc */
static const char *ir_fmt =
    "define void @walk(ptr %%a, ptr %%c) {\n"
    "entry:\n  br label %%j\n"
    "j:\n  %%jv = phi i64 [0, %%entry], [%%jn, %%jl]\n  br label %%i\n"
    "i:\n  %%iv = phi i64 [0, %%j], [%%in, %%%s]\n  %%acc = phi float [0.0, %%j], [%%s, %%%s]\n"
    "  %%row = mul i64 %%%s, %d\n  %%idx = add i64 %%row, %%%s\n"
    "  %%p = getelementptr float, ptr %%a, i64 %%idx\n  %%x = load float, ptr %%p\n"
    "%s"
    "  %%in = add i64 %%iv, 1\n  %%d = icmp eq i64 %%in, 512\n"
    "  br i1 %%d, label %%jl, label %%i\n"
    "jl:\n  %%q = getelementptr float, ptr %%c, i64 %%jv\n  store float %%s, ptr %%q\n"
    "  %%jn = add i64 %%jv, 1\n  %%e = icmp eq i64 %%jn, 512\n  br i1 %%e, label %%exit, label %%j\n"
    "exit:\n  ret void\n}\n";
static const char *one_block = "  %s = fadd float %acc, %x\n";
static const char *two_blocks = "  br label %i2\n"
                                "i2:\n  %idx2 = add i64 %idx, 1\n  %p2 = getelementptr float, ptr %a, i64 %idx2\n"
                                "  %y = load float, ptr %p2\n  %xy = fadd float %x, %y\n  %s = fadd float %acc, %xy\n";

static pa_profile *profile(const char *outer, const char *inner, int row, bool split, pt_diag *d) {
  char ir[4096];
  const char *latch = split ? "i2" : "i"; /* the block the back edge leaves from */
  snprintf(ir, sizeof ir, ir_fmt, latch, latch, outer, row, inner, split ? two_blocks : one_block);
  return synthetic_profile_ir(ir, "walk", d);
}

static double predict(const pa_profile *p, const ptg_target *t, bool sets, pt_diag *d) {
  return SYNTHETIC_SWITCH_SECONDS(p, t, l1_sets, sets, d);
}

int main(void) {
  pt_diag d = {0};
  ptg_target *t = synthetic_test_target("zen4-epyc-2c", &d);
  if (!t) TEST_DONE();
  pp_options def = synthetic_defaults(), parsed = synthetic_preset("steady+bw+overlap+strides+lanes+sets");
  CHECK(def.l1_sets && def.strides);
  CHECK(parsed.l1_sets && parsed.lanes);
  CHECK(t->caches[0].n_set_walks > 0 && ptg_target_set_inflight(t, 2) > 0);

  pa_profile *col = profile("iv", "jv", 512, false, &d), *pad = profile("iv", "jv", 528, false, &d);
  pa_profile *row = profile("jv", "iv", 512, false, &d), *split = profile("iv", "jv", 512, true, &d);
  CHECK_MSG(col && pad && row && split, "%s", d.msg);
  if (col && pad && row && split) {
    double hz = t->frequency_ghz.value * 1e9, l2 = t->caches[1].latency_cycles.value;
    double need = 512.0 * 512.0 * l2 / ptg_target_set_inflight(t, 2) / hz;
    double cs = predict(col, t, true, &d), cn = predict(col, t, false, &d);
    CHECK_MSG(cs >= 0.999 * need && cs > 1.3 * cn, "column walk: %g s with +sets (bound %g), %g without", cs, need, cn);
    double ps = predict(pad, t, true, &d), pn = predict(pad, t, false, &d);
    CHECK_MSG(fabs(ps - pn) <= 1e-9 * pn, "padded walk: %g vs %g", ps, pn);
    double rs = predict(row, t, true, &d), rn = predict(row, t, false, &d);
    CHECK_MSG(fabs(rs - rn) <= 1e-9 * rn, "row walk: %g vs %g", rs, rn);
    /* two blocks, one stream: the bound of one walk (twice the misses would be 2 x need) */
    double ss = predict(split, t, true, &d), sn = predict(split, t, false, &d);
    CHECK_MSG(ss >= 0.999 * need && ss < 1.5 * need && ss >= sn, "split walk: %g s with +sets (bound %g), %g without", ss,
              need, sn);
    /* no set walks in the target: the option changes nothing */
    t->caches[0].n_set_walks = 0;
    double cz = predict(col, t, true, &d);
    CHECK_MSG(fabs(cz - cn) <= 1e-9 * cn, "no set walks: %g vs %g", cz, cn);
  }
  pa_profile_free(col), pa_profile_free(pad), pa_profile_free(row), pa_profile_free(split);
  ptg_target_free(t);
  TEST_DONE();
}
