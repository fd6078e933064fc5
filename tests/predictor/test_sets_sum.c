/* +setsum: a loop whose set-conflicting walk falls in one L1 set position takes its few-set L1
 * misses on top of its other cycles instead of the larger of the two (bert_ffn1's tie group:
 * B's column 12 KiB apart, one set). On Zen 4's file a column walk 4096 bytes apart (one
 * position) takes the default's cycles without +sets plus the +sets bound; a walk 2048 bytes apart
 * (two positions) and a target without set walks are unchanged; the name parses. */
#include <math.h>
#include <stdio.h>

#include "test.h"
#include "synthetic.h"

static double predict(const pa_profile *p, const ptg_target *t, bool sets, bool sum, pt_diag *d) {
  pp_options o;
  pp_options_default(&o);
  o.threads = 1, o.l1_sets = sets, o.sets_sum = sum;
  return synthetic_seconds(p, t, &o, d);
}

int main(void) {
  pt_diag d = {0};
  ptg_target *t = synthetic_shipped_target("zen4-epyc-2c", &d);
  CHECK_MSG(t, "%s", d.msg);
  if (!t) TEST_DONE();
  pp_options def, parsed = {0};
  pp_options_default(&def);
  CHECK(!def.sets_sum);
  CHECK(pp_options_preset(&parsed, "steady+bw+overlap+strides+lanes+sets+setsum") == 0 && parsed.sets_sum && parsed.l1_sets);
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
    /* no set walks in the target: the option changes nothing */
    t->caches[0].n_set_walks = 0;
    double oz = predict(one, t, true, true, &d);
    CHECK_MSG(fabs(oz - on) <= 1e-9 * on, "no set walks: %g vs %g", oz, on);
  }
  pa_profile_free(one), pa_profile_free(two);
  ptg_target_free(t);
  TEST_DONE();
}
