/* The `analytic` cost model the tuner's search ranks candidates with: lower each candidate,
 * profile it (block counts without running, parallel bodies included, where the analyzer can
 * count them; otherwise one instrumented run; SHARDS-sampled reuse only when asked, and then
 * counters only in functions without static counts), predict it on the target;
 * score = 1 / predicted seconds. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

typedef struct {
  pp_predictor *pp;
  pp_analytic_opts o;
  double seconds_spent;
  long candidates, static_profiles;
} analytic;

pa_profile *pp_profile_state(const pc_state *s, int threads, const pa_options *opt, double timeout_s, pt_diag *d) {
  pc_lower_opts lo = {0};
  pc_kernel *k = pc_lower(s, &lo, d);
  if (!k) return NULL;
  int nb = pc_kernel_n_buffers(k);
  int64_t *sizes = malloc(sizeof *sizes * (nb ? nb : 1));
  for (int b = 0; b < nb; b++) sizes[b] = pc_kernel_buffer_numel(k, b);
  pa_run_spec *spec = pa_run_spec_portent(pc_kernel_name(k), nb, sizes, threads > 0 ? threads : 1, 1);
  free(sizes);
  if (spec) spec->timeout_s = timeout_s > 0 ? timeout_s : 30; /* instrumented runs are 10-100x slower */
  pa_profile *p = spec ? pa_profile_llvm(pc_kernel_module(k), spec, opt, d) : NULL;
  pa_run_spec_free(spec);
  pc_kernel_free(k);
  return p;
}

/* Counts without running (analyzer's pa_profile_static_counts): every block's count from the
 * loop nest, parallel bodies divided over `threads` as the pool divides them, guards of
 * non-dividing splits counted. NULL when a branch depends on memory or counting would take
 * too long; the caller then runs the candidate instrumented. */
static pa_profile *static_profile(const pc_state *s, int threads, pt_diag *d) {
  pc_lower_opts lo = {0};
  pc_kernel *k = pc_lower(s, &lo, d);
  if (!k) return NULL;
  pa_module *m = pa_module_from_llvm(pc_kernel_module(k));
  pa_static_opts so = {pc_kernel_name(k), threads > 0 ? threads : 1};
  pa_profile *p = m ? pa_profile_static_counts(m, &so, d) : NULL;
  pa_module_free(m);
  pc_kernel_free(k);
  return p;
}

static int analytic_predict(void *self, const pc_program *prog, int n, pc_state *const *states, double *scores,
                            pt_diag *d) {
  analytic *a = self;
  double t0 = pt_now();
  double *seconds = calloc(n > 0 ? n : 1, sizeof(double));
  for (int i = 0; i < n; i++) {
    pt_diag di = {0};
    scores[i] = 0;
    pa_options po = {.sample_rate = a->o.sample_rate > 0 ? a->o.sample_rate : 0.01, .no_reuse = !a->o.reuse,
                     .static_counts = true, /* line filter: 11-12% fewer instructions on mm512 and bert_ffn1 at
                                               the same miss-ratio accuracy (docs/validation.md, Analysis) */
                     .line_filter = true,
                     /* the same profile from a run of the addresses alone (analyzer/skeleton.c) */
                     .addresses_only = true};
    pa_profile *p = a->o.reuse ? NULL : static_profile(states[i], a->o.profile_threads, &di);
    if (p) a->static_profiles++;
    else p = pp_profile_state(states[i], a->o.profile_threads, &po, a->o.timeout_s > 0 ? a->o.timeout_s : 5, &di);
    if (!p) continue; /* a candidate that does not lower or crashes ranks last */
    pp_prediction *r = pp_predict(a->pp, p, &di);
    if (r && r->seconds > 0) scores[i] = 1 / r->seconds, seconds[i] = r->seconds;
    pp_prediction_free(r);
    pa_profile_free(p);
  }
  double dt = pt_now() - t0;
  a->seconds_spent += dt, a->candidates += n;
  if (a->o.verbose) {
    fprintf(stderr, "analytic: %d candidate(s) of %s in %.3f s (%.2f candidates/s, profiling included; %ld of %ld "
                    "so far counted statically)\n",
            n, prog ? prog->name : "?", dt, dt > 0 ? n / dt : 0, a->static_profiles, a->candidates);
    int *order = malloc(sizeof *order * (n > 0 ? n : 1));
    for (int i = 0; i < n; i++) order[i] = i;
    for (int i = 1; i < n; i++) /* insertion sort by score, best first */
      for (int j = i; j > 0 && scores[order[j]] > scores[order[j - 1]]; j--) {
        int t = order[j];
        order[j] = order[j - 1], order[j - 1] = t;
      }
    for (int i = 0; i < n && i < 10; i++)
      fprintf(stderr, "  #%d candidate %d: predicted %.4g ms\n", i + 1, order[i], seconds[order[i]] * 1e3);
    free(order);
  }
  free(seconds);
  return 0;
}

static void analytic_free(void *self) {
  analytic *a = self;
  if (!a) return;
  pp_predictor_free(a->pp);
  free(a);
}

pc_cost_model *pp_cost_model_analytic(const ptg_target *t, const pp_analytic_opts *o, pt_diag *d) {
  pp_analytic_opts def = {0};
  if (!o) pp_options_default(&def.predict), o = &def;
  pp_predictor *pp = pp_predictor_new(t, &o->predict, d);
  if (!pp) return NULL;
  analytic *a = calloc(1, sizeof *a);
  a->pp = pp, a->o = *o;
  a->o.predict.no_breakdown = true; /* ranking needs the total only */
  pc_cost_model *m = calloc(1, sizeof *m);
  m->name = "analytic";
  m->self = a;
  m->predict = analytic_predict;
  m->update = NULL;
  m->free = analytic_free;
  return m;
}

void pp_cost_model_free(pc_cost_model *m) {
  if (!m) return;
  if (m->free) m->free(m->self);
  free(m);
}
