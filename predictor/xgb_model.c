/* Ansor's XGBoost cost model (TVM python/tvm/auto_scheduler/cost_model/xgb_model.py): one
 * feature row per store, a program's score is the sum of its rows' predictions, trained
 * with the pack-sum squared error (gradient of a program's sum pushed to each of its rows)
 * against throughput normalized by the best of its workload, weighted by that throughput.
 * Retrained from scratch on every update with all the results seen so far. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <xgboost/c_api.h>

#include "learned.h"

typedef struct {
  pp_xgb_opts o;
  float *X;          /* rows x PP_FEATURES_PER_STORE */
  int *row_prog;     /* program of each row */
  int n_rows, cap_rows;
  double *cost;      /* per program: seconds, 0 when it failed */
  int *workload;     /* per program: index into keys */
  int n_prog, cap_prog;
  char (*keys)[256];
  int n_keys;
  BoosterHandle booster;
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

static int xgb_fail(pt_diag *d, const char *what) { return pt_fail(d, PT_ERR_RUNTIME, "xgboost: %s: %s", what, XGBGetLastError()); }

/* Feature rows of n states; prog[i] = index of the state of row i. */
static int features(const xgb *m, int n, pc_state *const *states, float **X, int **prog, int *n_rows, pt_diag *d) {
  int cap = 64, rows = 0;
  float *x = malloc(sizeof(float) * PP_FEATURES_PER_STORE * (size_t)cap);
  int *pg = malloc(sizeof(int) * (size_t)cap);
  for (int i = 0; i < n; i++) {
    float *r = NULL;
    int k = pp_features_state(states[i], m->o.cache_line_bytes, &r, d);
    if (k < 0) {
      free(x), free(pg);
      return k;
    }
    if (rows + k > cap) {
      while (rows + k > cap) cap *= 2;
      x = realloc(x, sizeof(float) * PP_FEATURES_PER_STORE * (size_t)cap);
      pg = realloc(pg, sizeof(int) * (size_t)cap);
    }
    memcpy(x + (size_t)rows * PP_FEATURES_PER_STORE, r, sizeof(float) * PP_FEATURES_PER_STORE * (size_t)k);
    for (int j = 0; j < k; j++) pg[rows + j] = i;
    rows += k;
    free(r);
  }
  *X = x, *prog = pg, *n_rows = rows;
  return 0;
}

static int xgb_predict(void *self, const pc_program *p, int n, pc_state *const *states, double *scores, pt_diag *d) {
  xgb *m = self;
  if (!m->booster) { /* untrained: random order, as Ansor's model before its first update */
    for (int i = 0; i < n; i++) scores[i] = pt_rng_uniform(&m->rng);
    return 0;
  }
  float *X;
  int *prog, rows;
  int rc = features(m, n, states, &X, &prog, &rows, d);
  if (rc) return rc;
  for (int i = 0; i < n; i++) scores[i] = 0;
  DMatrixHandle dm = NULL;
  bst_ulong len = 0;
  const float *out = NULL;
  if (rows > 0) {
    if (XGDMatrixCreateFromMat(X, (bst_ulong)rows, PP_FEATURES_PER_STORE, NAN, &dm) != 0) rc = xgb_fail(d, "matrix");
    else if (XGBoosterPredict(m->booster, dm, 0, 0, 0, &len, &out) != 0) rc = xgb_fail(d, "predict");
    else
      for (bst_ulong r = 0; r < len && r < (bst_ulong)rows; r++) scores[prog[r]] += out[r];
  }
  if (dm) XGDMatrixFree(dm);
  free(X);
  free(prog);
  return rc;
}

static int train(xgb *m, pt_diag *d) {
  if (m->booster) XGBoosterFree(m->booster), m->booster = NULL;
  /* Labels: throughput normalized by the best of the program's workload. */
  double *best = calloc((size_t)m->n_keys + 1, sizeof(double));
  for (int i = 0; i < m->n_prog; i++)
    if (m->cost[i] > 0 && (best[m->workload[i]] == 0 || m->cost[i] < best[m->workload[i]])) best[m->workload[i]] = m->cost[i];
  double *y = calloc((size_t)m->n_prog + 1, sizeof(double));
  bool any = false;
  for (int i = 0; i < m->n_prog; i++) {
    y[i] = m->cost[i] > 0 ? best[m->workload[i]] / m->cost[i] : 0;
    any = any || y[i] > 0;
  }
  free(best);
  int rc = 0;
  DMatrixHandle dm = NULL;
  float *grad = NULL, *hess = NULL;
  double *sum = NULL;
  if (!any || m->n_rows == 0) goto done;
  if (XGDMatrixCreateFromMat(m->X, (bst_ulong)m->n_rows, PP_FEATURES_PER_STORE, NAN, &dm) != 0) {
    rc = xgb_fail(d, "matrix");
    goto done;
  }
  if (XGBoosterCreate(&dm, 1, &m->booster) != 0) {
    rc = xgb_fail(d, "create");
    goto done;
  }
  char buf[64];
  XGBoosterSetParam(m->booster, "verbosity", "0");
  XGBoosterSetParam(m->booster, "base_score", "0"); /* sums of rows: no per-row offset */
  snprintf(buf, sizeof buf, "%d", m->o.max_depth);
  XGBoosterSetParam(m->booster, "max_depth", buf);
  snprintf(buf, sizeof buf, "%g", m->o.eta);
  XGBoosterSetParam(m->booster, "eta", buf);
  snprintf(buf, sizeof buf, "%g", m->o.gamma);
  XGBoosterSetParam(m->booster, "gamma", buf);
  XGBoosterSetParam(m->booster, "min_child_weight", "0");
  XGBoosterSetParam(m->booster, "tree_method", "hist"); /* exact greedy is 10x slower here, same ranking */
  XGBoosterSetParam(m->booster, "disable_default_eval_metric", "1");
  snprintf(buf, sizeof buf, "%llu", (unsigned long long)m->o.seed);
  XGBoosterSetParam(m->booster, "seed", buf);
  if (m->o.threads > 0) {
    snprintf(buf, sizeof buf, "%d", m->o.threads);
    XGBoosterSetParam(m->booster, "nthread", buf);
  }
  grad = malloc(sizeof(float) * (size_t)m->n_rows);
  hess = malloc(sizeof(float) * (size_t)m->n_rows);
  sum = malloc(sizeof(double) * (size_t)m->n_prog);
  for (int it = 0; it < m->o.rounds; it++) {
    bst_ulong len = 0;
    const float *pred = NULL;
    if (XGBoosterPredict(m->booster, dm, 1, 0, 1, &len, &pred) != 0) {
      rc = xgb_fail(d, "predict");
      goto done;
    }
    for (int i = 0; i < m->n_prog; i++) sum[i] = 0;
    for (int r = 0; r < m->n_rows && (bst_ulong)r < len; r++) sum[m->row_prog[r]] += pred[r];
    /* Pack-sum squared error: every row of a program gets its program's residual. */
    for (int r = 0; r < m->n_rows; r++) {
      int pg = m->row_prog[r];
      double w = y[pg];
      grad[r] = (float)((sum[pg] - y[pg]) * w);
      hess[r] = (float)w;
    }
    if (XGBoosterBoostOneIter(m->booster, dm, grad, hess, (bst_ulong)m->n_rows) != 0) {
      rc = xgb_fail(d, "boost");
      goto done;
    }
  }
done:
  if (rc && m->booster) XGBoosterFree(m->booster), m->booster = NULL;
  if (dm) XGDMatrixFree(dm);
  free(grad), free(hess), free(sum), free(y);
  return rc;
}

static int xgb_update(void *self, const pc_program *p, int n, pc_state *const *states, const pc_measure_result *res,
                      pt_diag *d) {
  xgb *m = self;
  int w = -1;
  for (int k = 0; k < m->n_keys; k++)
    if (strcmp(m->keys[k], p->key) == 0) w = k;
  if (w < 0) {
    m->keys = realloc(m->keys, sizeof(*m->keys) * (size_t)(m->n_keys + 1));
    snprintf(m->keys[m->n_keys], sizeof m->keys[0], "%s", p->key);
    w = m->n_keys++;
  }
  float *X;
  int *prog, rows;
  int rc = features(m, n, states, &X, &prog, &rows, d);
  if (rc) return rc;
  if (m->n_prog + n > m->cap_prog) {
    m->cap_prog = 2 * (m->n_prog + n);
    m->cost = realloc(m->cost, sizeof(double) * (size_t)m->cap_prog);
    m->workload = realloc(m->workload, sizeof(int) * (size_t)m->cap_prog);
  }
  if (m->n_rows + rows > m->cap_rows) {
    m->cap_rows = 2 * (m->n_rows + rows);
    m->X = realloc(m->X, sizeof(float) * PP_FEATURES_PER_STORE * (size_t)m->cap_rows);
    m->row_prog = realloc(m->row_prog, sizeof(int) * (size_t)m->cap_rows);
  }
  memcpy(m->X + (size_t)m->n_rows * PP_FEATURES_PER_STORE, X, sizeof(float) * PP_FEATURES_PER_STORE * (size_t)rows);
  for (int r = 0; r < rows; r++) m->row_prog[m->n_rows + r] = m->n_prog + prog[r];
  for (int i = 0; i < n; i++) {
    m->cost[m->n_prog + i] = res[i].error == PC_MEASURE_OK && res[i].median_s > 0 ? res[i].median_s : 0;
    m->workload[m->n_prog + i] = w;
  }
  m->n_rows += rows;
  m->n_prog += n;
  free(X);
  free(prog);
  return train(m, d);
}

static void xgb_free(void *self) {
  xgb *m = self;
  if (!m) return;
  if (m->booster) XGBoosterFree(m->booster);
  free(m->X), free(m->row_prog), free(m->cost), free(m->workload), free(m->keys);
  free(m);
}

pc_cost_model *pp_cost_model_xgb(const pp_xgb_opts *o, pt_diag *d) {
  xgb *m = calloc(1, sizeof *m);
  if (o) m->o = *o;
  else pp_xgb_opts_default(&m->o);
  if (m->o.rounds < 1) m->o.rounds = 60;
  if (m->o.max_depth < 1) m->o.max_depth = 10;
  if (m->o.eta <= 0) m->o.eta = 0.2;
  if (m->o.cache_line_bytes <= 0) m->o.cache_line_bytes = 64;
  m->rng.s = m->o.seed ^ 0x7a5bull;
  pc_cost_model *cm = calloc(1, sizeof *cm);
  cm->name = "xgb";
  cm->self = m;
  cm->predict = xgb_predict;
  cm->update = xgb_update;
  cm->free = xgb_free;
  (void)d;
  return cm;
}
