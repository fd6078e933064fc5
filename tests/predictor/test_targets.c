/* Predictions of a profile on the shipped published targets move the way the targets' figures
 * say: narrower native vectors -> more compute cycles (the same target narrowed, and N1 128-bit >
 * Zen 2 256-bit > Skylake-SP 512-bit); smaller caches -> no less memory time (the same target
 * shrunk, and Zen 2's 512 KiB L2 against Zen 4's 1 MiB on a working set between the two); more
 * threads -> less time for a parallel kernel on every published target up to its core count. */
#include "predictor.h"
#include "test.h"

#include <math.h>

static ptg_target *shipped(const char *name) {
  char path[1024];
  pt_diag d = {0};
  snprintf(path, sizeof path, "%s/%s.json", ptg_shipped_dir(), name);
  ptg_target *t = ptg_target_load(path, &d);
  CHECK_MSG(t, "%s", d.msg);
  return t;
}

static pp_prediction *predict(const pa_profile *p, const ptg_target *t, int threads) {
  pt_diag d = {0};
  pp_options o;
  pp_options_default(&o);
  o.threads = threads;
  pp_prediction *r = pp_predict_profile(p, t, &o, &d);
  CHECK_MSG(r && r->seconds > 0, "%s: %s", t->name, d.msg);
  return r;
}

static double cycles(const pp_prediction *r, bool compute) {
  return r ? (compute ? r->compute_seconds : r->memory_seconds) * r->frequency_ghz * 1e9 : NAN;
}

/* Across the published targets, from their own figures. */
static void published(const pa_profile *vec, const pa_profile *cache_bound, const pa_profile *par) {
  ptg_target *n1 = shipped("arm-neoverse-n1"), *zen2 = shipped("amd-zen2"), *skx = shipped("intel-skylake-sp");
  ptg_target *zen4 = shipped("amd-zen4"), *zen5 = shipped("amd-zen5");
  if (!n1 || !zen2 || !skx || !zen4 || !zen5) return;
  CHECK(n1->native_vector_bits == 128 && zen2->native_vector_bits == 256 && skx->native_vector_bits == 512);
  pp_prediction *a = predict(vec, n1, 1), *b = predict(vec, zen2, 1), *c = predict(vec, skx, 1);
  pp_prediction *z4 = predict(vec, zen4, 1), *z5 = predict(vec, zen5, 1);
  CHECK_MSG(cycles(a, true) > cycles(b, true) && cycles(b, true) > cycles(c, true),
            "vectorized matmul compute cycles: N1 %.3g, Zen 2 %.3g, Skylake-SP %.3g", cycles(a, true), cycles(b, true),
            cycles(c, true));
  /* Zen 5 executes 512-bit operations on full-width pipes, Zen 4 splits them in two */
  CHECK_MSG(cycles(z5, true) < cycles(z4, true), "Zen 5 %.3g vs Zen 4 %.3g compute cycles", cycles(z5, true),
            cycles(z4, true));
  /* Zen 4 predicts Zen 2's program faster at 512 bits than Zen 2 at 256 */
  CHECK_MSG(cycles(z4, true) < cycles(b, true), "Zen 4 %.3g vs Zen 2 %.3g", cycles(z4, true), cycles(b, true));
  pp_prediction_free(a), pp_prediction_free(b), pp_prediction_free(c), pp_prediction_free(z4), pp_prediction_free(z5);

  /* the working set is between Zen 2's L2 (512 KiB) and Zen 4's (1 MiB); same L1 (32 KiB) */
  CHECK(ptg_target_cache(zen2, 2)->size_bytes < ptg_target_cache(zen4, 2)->size_bytes);
  a = predict(cache_bound, zen2, 1), b = predict(cache_bound, zen4, 1);
  if (a && b) {
    int f = a->n_functions - 1;
    double l2_a = a->functions[f].hit_fraction[0] + a->functions[f].hit_fraction[1];
    double l2_b = b->functions[f].hit_fraction[0] + b->functions[f].hit_fraction[1];
    CHECK_MSG(l2_a < l2_b - 0.01, "hits in L1+L2: Zen 2 %.3f, Zen 4 %.3f", l2_a, l2_b);
    CHECK_MSG(a->memory_seconds > b->memory_seconds && cycles(a, false) > cycles(b, false),
              "memory: Zen 2 %.3g s %.3g cycles, Zen 4 %.3g s %.3g cycles", a->memory_seconds, cycles(a, false),
              b->memory_seconds, cycles(b, false));
  }
  pp_prediction_free(a), pp_prediction_free(b);

  /* more cores: each target at 1, a quarter and all of its cores */
  ptg_target *all[5] = {n1, zen2, skx, zen4, zen5};
  for (int i = 0; i < 5; i++) {
    int cores = all[i]->cores, q = cores / 4 > 1 ? cores / 4 : 2;
    pp_prediction *r1 = predict(par, all[i], 1), *rq = predict(par, all[i], q), *rn = predict(par, all[i], cores);
    if (r1 && rq && rn)
      CHECK_MSG(r1->seconds > rq->seconds && rq->seconds > rn->seconds, "%s: 1, %d, %d threads: %g %g %g s",
                all[i]->name, q, cores, r1->seconds, rq->seconds, rn->seconds);
    pp_prediction_free(r1), pp_prediction_free(rq), pp_prediction_free(rn);
  }
  for (int i = 0; i < 5; i++) ptg_target_free(all[i]);
}

int main(void) {
  pt_diag d = {0};
  pc_program *prog = pc_workload_build("matmul:128,256,256", &d);
  CHECK_MSG(prog, "%s", d.msg);
  if (!prog) TEST_DONE();
  pc_state *s = pc_state_new(prog);
  CHECK(pc_schedule_default(s, 16, &d) == 0);
  pa_options po = {.sample_rate = 1};
  pa_profile *p = pp_profile_state(s, 1, &po, 0, &d);
  CHECK_MSG(p, "%s", d.msg);
  if (!p) TEST_DONE();

  /* narrower vectors: the same target at 512, 256 and 128 bits */
  ptg_target *t = shipped("intel-skylake-sp");
  double compute[3];
  const int widths[3] = {512, 256, 128};
  for (int i = 0; i < 3; i++) {
    t->native_vector_bits = widths[i];
    pp_prediction *r = predict(p, t, 1);
    compute[i] = r ? r->compute_seconds : NAN;
    pp_prediction_free(r);
  }
  CHECK_MSG(compute[0] < compute[1] && compute[1] < compute[2], "compute %g %g %g", compute[0], compute[1], compute[2]);
  t->native_vector_bits = 512;
  /* and across shipped targets, in cycles: 128-bit Neoverse N1 needs more than 512-bit Skylake-SP */
  ptg_target *n1 = shipped("arm-neoverse-n1");
  pp_prediction *a = predict(p, t, 1), *b = predict(p, n1, 1);
  if (a && b)
    CHECK_MSG(b->compute_seconds * b->frequency_ghz > a->compute_seconds * a->frequency_ghz, "N1 %g vs SKX %g cycles",
              b->compute_seconds * b->frequency_ghz, a->compute_seconds * a->frequency_ghz);
  pp_prediction_free(b);

  /* smaller caches: every level a sixteenth */
  for (int i = 0; i < t->n_caches; i++) t->caches[i].size_bytes /= 16;
  b = predict(p, t, 1);
  if (a && b) {
    CHECK_MSG(b->seconds >= a->seconds && b->memory_seconds >= a->memory_seconds, "small caches %g vs %g s",
              b->seconds, a->seconds);
    CHECK(b->functions[1].hit_fraction[0] <= a->functions[1].hit_fraction[0] + 1e-12);
  }
  pp_prediction_free(a), pp_prediction_free(b);
  for (int i = 0; i < t->n_caches; i++) t->caches[i].size_bytes *= 16;

  /* more cores: 1, 4, 16 threads of a parallel kernel */
  double sec[3];
  const int threads[3] = {1, 4, 16};
  for (int i = 0; i < 3; i++) {
    pp_prediction *r = predict(p, t, threads[i]);
    sec[i] = r ? r->seconds : NAN;
    pp_prediction_free(r);
  }
  CHECK_MSG(sec[0] > sec[1] && sec[1] > sec[2], "threads: %g %g %g", sec[0], sec[1], sec[2]);

  /* a cache-bound profile: the unscheduled loop nest walks B (32 x 384 x 384: B is 576 KiB)
   * down its columns once per row of A */
  pc_program *naive = pc_workload_build("matmul:32,384,384", &d);
  pc_state *ns = naive ? pc_state_new(naive) : NULL;
  pa_profile *cb = ns ? pp_profile_state(ns, 1, &po, 0, &d) : NULL;
  CHECK_MSG(cb, "%s", d.msg);
  if (cb) published(p, cb, p);
  pa_profile_free(cb);
  pc_state_free(ns);
  pc_program_free(naive);

  ptg_target_free(n1);
  ptg_target_free(t);
  pa_profile_free(p);
  pc_state_free(s);
  pc_program_free(prog);
  TEST_DONE();
}
