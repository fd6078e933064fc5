/* +setns: a set-conflicting walk's L1 misses each take the target's set walks' own ns per access
 * at the positions they fall in, instead of L2 latency over the misses in flight those walks
 * give. On Zen 3's file (its one-set chase 1.4x L2's latency, so the two prices differ) a column
 * walk 4096 bytes apart (one position) takes 512 x 512 x ns_per_access(1); a walk 2048 bytes apart
 * takes ns_per_access(2); a target without set walks is unchanged; the name parses; the
 * interpolation between rows is the one the misses in flight use. */
#include <math.h>
#include <stdio.h>

#include "test.h"
#include "synthetic.h"

static double predict(const pa_profile *p, const ptg_target *t, bool ns, pt_diag *d) {
  pp_options o;
  pp_options_default(&o);
  o.threads = 1, o.set_ns = ns, o.sets_sum = false; /* the bound alone */
  return synthetic_seconds(p, t, &o, d);
}

int main(void) {
  pt_diag d = {0};
  ptg_target *t = synthetic_test_target("zen3-epyc-2c", &d);
  if (!t) TEST_DONE();
  pp_options def = synthetic_defaults(), parsed = synthetic_preset("steady+bw+overlap+strides+lanes+sets+setns");
  CHECK(!def.set_ns);
  CHECK(parsed.set_ns && parsed.l1_sets);
  /* the rows: 1, 2, 4, 8 and 64 sets; between two rows, linear in log(sets) */
  double n1 = ptg_target_set_ns(t, 1), n2 = ptg_target_set_ns(t, 2), n4 = ptg_target_set_ns(t, 4);
  CHECK_MSG(n1 > 0 && n2 > 0 && n4 > 0, "set walks' ns per access: %g %g %g", n1, n2, n4);
  CHECK_MSG(fabs(n1 - t->caches[0].set_walks[0].ns_per_access.value) <= 1e-12, "one set: %g", n1);
  double n3 = ptg_target_set_ns(t, 3), f = log(3.0 / 2) / log(2.0);
  CHECK_MSG(fabs(n3 - (n2 + f * (n4 - n2))) <= 1e-9, "three sets: %g, want %g", n3, n2 + f * (n4 - n2));
  double l2_price = t->caches[1].latency_cycles.value / ptg_target_set_inflight(t, 1) / t->frequency_ghz.value;
  CHECK_MSG(n1 > 1.2 * l2_price, "the two prices must differ on this file: %g ns against %g", n1, l2_price);

  pa_profile *one = synthetic_column_walk(1024, &d), *two = synthetic_column_walk(512, &d);
  CHECK_MSG(one && two, "%s", d.msg);
  if (one && two) {
    double want1 = 512.0 * 512.0 * n1 * 1e-9, want2 = 512.0 * 512.0 * n2 * 1e-9;
    double o1 = predict(one, t, true, &d), o2 = predict(two, t, true, &d), b1 = predict(one, t, false, &d);
    CHECK_MSG(fabs(o1 / want1 - 1) < 0.05, "one position: %g s with +setns, want %g", o1, want1);
    CHECK_MSG(fabs(o2 / want2 - 1) < 0.05, "two positions: %g s with +setns, want %g", o2, want2);
    CHECK_MSG(o1 > 1.2 * b1, "one position: %g s with +setns, %g without", o1, b1);
    /* no set walks in the target: the option changes nothing */
    t->caches[0].n_set_walks = 0;
    double oz = predict(one, t, true, &d), bz = predict(one, t, false, &d);
    CHECK_MSG(fabs(oz - bz) <= 1e-9 * bz, "no set walks: %g vs %g", oz, bz);
  }
  pa_profile_free(one), pa_profile_free(two);
  ptg_target_free(t);
  TEST_DONE();
}
