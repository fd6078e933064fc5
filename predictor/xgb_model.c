/* Ansor's XGBoost cost model (TVM python/tvm/auto_scheduler/cost_model/xgb_model.py): one
 * feature row per store, a program's score is the sum of its rows' predictions, trained
 * with the pack-sum squared error (gradient of a program's sum pushed to each of its rows)
 * against throughput normalized by the best of its workload, weighted by that throughput.
 * Retrained from scratch on every update with all the results seen so far. The xgb-imp
 * variant (the second seed of issue 15) trains on the important columns only, with each
 * program's label redistributed among its stores (xgb_fit.c, xgb_importance.c). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "learned.h"

typedef struct {
  pp_xgb_opts o;
  bool imp;                  /* the xgb-imp variant */
  pp_xgb_imp_opts io;
  pp_xgb_data data;          /* everything update() gave */
  pp_xgb_booster *booster;
  /* xgb-imp: the importance in use, the programs it was fitted on (0: not yet), kept columns. */
  pp_xgb_importance importance;
  int importance_progs;
  bool prefitted;
  unsigned char keep[PP_FEATURES_PER_STORE];
  pt_rng rng;
} xgb;

void pp_xgb_opts_default(pp_xgb_opts *o) {
  memset(o, 0, sizeof *o);
  o->rounds = 60;
  o->max_depth = 10; /* Ansor's xgb params: max_depth 10, gamma 0.001, min_child_weight 0, eta 0.2 */
  o->eta = 0.2;
  o->gamma = 0.001;
  o->seed = 43;
  o->cache_line_bytes = 64;
  /* One thread: on the 2-core VM, XGBoost's OpenMP threads made training 8-30x slower
   * (1024 programs: 0.19 s on one thread, 0.9-5.7 s on two). */
  o->threads = 1;
}

void pp_xgb_imp_opts_default(pp_xgb_imp_opts *o) {
  memset(o, 0, sizeof *o);
  pp_xgb_opts_default(&o->xgb);
  o->threshold = 0.01;
  o->redistribute = true;
}

static int xgb_predict(void *self, const pc_program *p, int n, pc_state *const *states, double *scores, pt_diag *d) {
  (void)p;
  xgb *m = self;
  if (!m->booster) { /* untrained: random order, as Ansor's model before its first update */
    for (int i = 0; i < n; i++) scores[i] = pt_rng_uniform(&m->rng);
    return 0;
  }
  pp_xgb_data q = {0};
  double *zero = calloc((size_t)n + 1, sizeof(double));
  int rc = pp_xgb_data_add(&q, "", n, states, zero, m->o.cache_line_bytes, d);
  if (!rc) rc = pp_xgb_booster_predict(m->booster, q.X, q.row_prog, q.n_rows, n, scores, d);
  free(zero);
  pp_xgb_data_free(&q);
  return rc;
}

/* xgb-imp: importance from a full pack-sum model on v (all columns), then the kept columns. */
static int fit_importance(xgb *m, const pp_xgb_view *v, pt_diag *d) {
  pp_xgb_booster *full = NULL;
  int rc = pp_xgb_fit(&m->o, v, NULL, &full, d);
  if (rc || !full) return rc;
  rc = pp_xgb_importance_compute(full, v, &m->importance, d);
  pp_xgb_booster_free(full);
  if (rc) return rc;
  m->importance_progs = v->n_prog;
  if (pp_xgb_prune(&m->importance, m->io.threshold, m->keep) == 0) /* never prune everything */
    for (int f = 0; f < PP_FEATURES_PER_STORE; f++) m->keep[f] = m->importance.weight[f] > 0;
  return 0;
}

static int train(xgb *m, pt_diag *d) {
  pp_xgb_booster_free(m->booster), m->booster = NULL;
  pp_xgb_view v;
  pp_xgb_data_view(&m->data, 0, m->data.n_prog, &v);
  int rc = 0;
  pp_xgb_fit_opts f = {0};
  if (m->imp) {
    /* Refit the importance when the data doubled: amortized, it costs at most one extra
     * training per doubling, where every update retrains anyway. */
    if (!m->prefitted && (m->importance_progs == 0 || v.n_prog >= 2 * m->importance_progs)) rc = fit_importance(m, &v, d);
    if (m->importance_progs > 0) {
      f.keep = m->keep;
      if (m->io.redistribute) f.share_importance = m->importance.score;
    }
  }
  if (!rc) rc = pp_xgb_fit(&m->o, &v, &f, &m->booster, d);
  pp_xgb_view_release(&v);
  return rc;
}

static int xgb_update(void *self, const pc_program *p, int n, pc_state *const *states, const pc_measure_result *res,
                      pt_diag *d) {
  xgb *m = self;
  double *cost = malloc(sizeof(double) * (size_t)(n + 1));
  for (int i = 0; i < n; i++) cost[i] = res[i].error == PC_MEASURE_OK && res[i].median_s > 0 ? res[i].median_s : 0;
  int rc = pp_xgb_data_add(&m->data, p->key, n, states, cost, m->o.cache_line_bytes, d);
  free(cost);
  return rc ? rc : train(m, d);
}

static void xgb_free(void *self) {
  xgb *m = self;
  if (!m) return;
  pp_xgb_booster_free(m->booster);
  pp_xgb_data_free(&m->data);
  free(m);
}

static pc_cost_model *wrap(xgb *m, const char *name) {
  if (m->o.rounds < 1) m->o.rounds = 60;
  if (m->o.max_depth < 1) m->o.max_depth = 10;
  if (m->o.eta <= 0) m->o.eta = 0.2;
  if (m->o.cache_line_bytes <= 0) m->o.cache_line_bytes = 64;
  m->rng.s = m->o.seed ^ 0x7a5bull;
  pc_cost_model *cm = calloc(1, sizeof *cm);
  cm->name = name;
  cm->self = m;
  cm->predict = xgb_predict;
  cm->update = xgb_update;
  cm->free = xgb_free;
  return cm;
}

pc_cost_model *pp_cost_model_xgb(const pp_xgb_opts *o, pt_diag *d) {
  (void)d;
  xgb *m = calloc(1, sizeof *m);
  if (o) m->o = *o;
  else pp_xgb_opts_default(&m->o);
  return wrap(m, "xgb");
}

pc_cost_model *pp_cost_model_xgb_imp(const pp_xgb_imp_opts *o, pt_diag *d) {
  xgb *m = calloc(1, sizeof *m);
  m->imp = true;
  if (o) m->io = *o;
  else pp_xgb_imp_opts_default(&m->io);
  m->o = m->io.xgb;
  m->io.prefit = NULL; /* the path is read here, not kept */
  pc_cost_model *cm = wrap(m, "xgb-imp");
  if (o && o->prefit) {
    pp_xgb_data offline = {0};
    int skipped = 0;
    int rc = pp_xgb_data_read(&offline, o->prefit, m->o.cache_line_bytes, &skipped, d);
    pp_xgb_view v;
    pp_xgb_data_view(&offline, 0, offline.n_prog, &v);
    if (!rc) rc = fit_importance(m, &v, d);
    if (!rc && m->importance_progs == 0)
      rc = pt_fail(d, PT_ERR_INPUT, "%s: no record to fit the importance on (%d read, %d skipped)", o->prefit, offline.n_prog,
                   skipped);
    pp_xgb_view_release(&v);
    pp_xgb_data_free(&offline);
    if (rc) {
      xgb_free(m);
      free(cm);
      return NULL;
    }
    m->prefitted = true;
  }
  return cm;
}
