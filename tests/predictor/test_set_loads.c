/* +setloads: a set-conflicting column read by U load instructions an iteration (an unrolled
 * loop's rows, mm512 #6) takes its misses at the target's set_loads ratio of U loads to one.
 * The ratio's interpolation (log2 of the loads at one set count, log of the sets between set
 * counts, the nearest beyond them); the column walk 2048 bytes apart (two positions) unrolled by
 * 8 priced at the 8-load ratio over the same walk without +setloads; unrolled by 1 unchanged; a
 * target without set_loads unchanged; the option in the default and its name parsed. */
#include <math.h>
#include <stdio.h>

#include "test.h"
#include "synthetic.h"

/* for j < 512: for i < 512 / U: acc += a[(U i + u) x 512 + j] for u < U; c[j] = acc */
static pa_profile *unrolled_walk(int unroll, pt_diag *d) {
  char body[4096] = "", *w = body;
  for (int u = 0; u < unroll; u++)
    w += sprintf(w,
                 "  %%r%d = add i64 %%base, %d\n  %%o%d = mul i64 %%r%d, 512\n  %%x%d = add i64 %%o%d, %%jv\n"
                 "  %%p%d = getelementptr float, ptr %%a, i64 %%x%d\n  %%v%d = load float, ptr %%p%d\n"
                 "  %%s%d = fadd float %%s%d, %%v%d\n",
                 u, u, u, u, u, u, u, u, u, u, u + 1, u, u);
  char ir[8192];
  snprintf(ir, sizeof ir,
           "define void @walk(ptr %%a, ptr %%c) {\n"
           "entry:\n  br label %%j\n"
           "j:\n  %%jv = phi i64 [0, %%entry], [%%jn, %%jl]\n  br label %%i\n"
           "i:\n  %%iv = phi i64 [0, %%j], [%%in, %%i]\n  %%s0 = phi float [0.0, %%j], [%%s%d, %%i]\n"
           "  %%base = mul i64 %%iv, %d\n%s"
           "  %%in = add i64 %%iv, 1\n  %%d = icmp eq i64 %%in, %d\n"
           "  br i1 %%d, label %%jl, label %%i\n"
           "jl:\n  %%q = getelementptr float, ptr %%c, i64 %%jv\n  store float %%s%d, ptr %%q\n"
           "  %%jn = add i64 %%jv, 1\n  %%e = icmp eq i64 %%jn, 512\n  br i1 %%e, label %%exit, label %%j\n"
           "exit:\n  ret void\n}\n",
           unroll, unroll, body, 512 / unroll, unroll);
  return synthetic_profile_ir(ir, "walk", d);
}

static double predict(const pa_profile *p, const ptg_target *t, bool loads, pt_diag *d) {
  return SYNTHETIC_SWITCH_SECONDS(p, t, set_loads, loads, d);
}

static void add_rows(ptg_target *t) {
  static const int loads[] = {1, 2, 4, 8, 16};
  static const double two[] = {1.0, 1.2, 1.3, 1.4, 1.5}, four[] = {1.0, 1.0, 1.0, 1.0, 1.0};
  ptg_cache *l1 = &t->caches[0];
  l1->n_set_loads = 10;
  l1->set_loads = pt_alloc(t->arena, sizeof(ptg_set_load) * 10);
  for (int k = 0; k < 5; k++) {
    l1->set_loads[k] = (ptg_set_load){2048, 2, 128, loads[k], {.value = 1.6 * two[k]}};
    l1->set_loads[5 + k] = (ptg_set_load){1024, 4, 256, loads[k], {.value = 1.4 * four[k]}};
  }
}

int main(void) {
  pt_diag d = {0};
  pp_options def = synthetic_defaults(), parsed = synthetic_preset("steady+bw+overlap+strides+lanes+sets+setloads");
  CHECK(def.set_loads);
  CHECK(parsed.set_loads && parsed.l1_sets);
  ptg_target *t = synthetic_shipped_target("zen4-epyc-2c", &d); /* set walks, no set_loads of its own */
  CHECK_MSG(t && t->caches[0].n_set_walks > 0 && t->caches[0].n_set_loads == 0, "%s", d.msg);
  if (!t) TEST_DONE();
  CHECK(ptg_target_set_loads_ratio(t, 2, 8) == 1); /* none measured */
  add_rows(t);
  CHECK_MSG(fabs(ptg_target_set_loads_ratio(t, 2, 8) - 1.4) < 1e-12, "2 sets, 8 loads: %g", ptg_target_set_loads_ratio(t, 2, 8));
  double r6 = ptg_target_set_loads_ratio(t, 2, 6), want6 = 1.3 + log2(6.0 / 4) * 0.1;
  CHECK_MSG(fabs(r6 - want6) < 1e-12, "2 sets, 6 loads: %g, want %g", r6, want6);
  CHECK_MSG(fabs(ptg_target_set_loads_ratio(t, 2, 32) - 1.5) < 1e-12, "past the rows: the last");
  CHECK_MSG(fabs(ptg_target_set_loads_ratio(t, 1, 8) - 1.4) < 1e-12, "below the rows: the nearest set count");
  double r3 = ptg_target_set_loads_ratio(t, 3, 8), want3 = 1.4 + log(1.5) / log(2.0) * (1.0 - 1.4);
  CHECK_MSG(fabs(r3 - want3) < 1e-12, "3 sets: %g, want %g", r3, want3);
  CHECK(fabs(ptg_target_set_loads_ratio(t, 64, 8) - 1.0) < 1e-12);

  pa_profile *one = unrolled_walk(1, &d), *eight = unrolled_walk(8, &d);
  CHECK_MSG(one && eight, "%s", d.msg);
  if (one && eight) {
    double e_on = predict(eight, t, true, &d), e_off = predict(eight, t, false, &d);
    double o_on = predict(one, t, true, &d), o_off = predict(one, t, false, &d);
    CHECK_MSG(e_on > 1.3 * e_off && e_on < 1.45 * e_off, "eight loads: %g s with +setloads, %g without (ratio 1.4)", e_on,
              e_off);
    CHECK_MSG(fabs(o_on - o_off) <= 1e-12 * o_off, "one load: %g vs %g", o_on, o_off);
    t->caches[0].n_set_loads = 0; /* a target without the rows: unchanged */
    double e_none = predict(eight, t, true, &d);
    CHECK_MSG(fabs(e_none - e_off) <= 1e-12 * e_off, "no set_loads: %g vs %g", e_none, e_off);
  }
  pa_profile_free(one), pa_profile_free(eight);
  ptg_target_free(t);
  TEST_DONE();
}
