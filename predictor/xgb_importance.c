/* The seed's feature importance ("基于特征重要性的深度学习自动调度优化研究"): XGBoost's weight, gain
 * and cover of each feature, each min-max normalized over the features, averaged, signed by the
 * feature's direction of effect (Spearman correlation with the label on the training rows);
 * pruning keeps the features whose |importance| exceeds a threshold; the label redistribution
 * (the seed's eq. 5) splits a program's label among its stores by importance-weighted sums. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "learned.h"
#include "predictor.h"

void pp_xgb_spearman(const pp_xgb_view *v, double rho[PP_FEATURES_PER_STORE]) {
  int n = v->n_rows;
  double *label = malloc(sizeof(double) * (size_t)(n + 1)), *col = malloc(sizeof(double) * (size_t)(n + 1));
  /* Each row carries its program's label: the direction in which a store's feature moves the
   * program's speed. */
  for (int r = 0; r < n; r++) label[r] = v->label[v->row_prog[r]];
  for (int f = 0; f < PP_FEATURES_PER_STORE; f++) {
    for (int r = 0; r < n; r++) col[r] = v->X[(size_t)r * PP_FEATURES_PER_STORE + (size_t)f];
    double s = pp_spearman(n, col, label);
    rho[f] = isnan(s) ? 0 : s; /* a constant feature (or label) has no direction */
  }
  free(label), free(col);
}

/* (x - min) / (max - min) over the features; all 0 when every feature scores the same. */
static void min_max(const double *x, double *out) {
  double lo = x[0], hi = x[0];
  for (int f = 1; f < PP_FEATURES_PER_STORE; f++) lo = fmin(lo, x[f]), hi = fmax(hi, x[f]);
  for (int f = 0; f < PP_FEATURES_PER_STORE; f++) out[f] = hi > lo ? (x[f] - lo) / (hi - lo) : 0;
}

void pp_xgb_importance_combine(pp_xgb_importance *imp) {
  double w[PP_FEATURES_PER_STORE], g[PP_FEATURES_PER_STORE], c[PP_FEATURES_PER_STORE];
  min_max(imp->weight, w);
  min_max(imp->gain, g);
  min_max(imp->cover, c);
  for (int f = 0; f < PP_FEATURES_PER_STORE; f++) {
    /* A feature no split used has no importance, whatever min-max gives it. */
    double mag = imp->weight[f] > 0 ? (w[f] + g[f] + c[f]) / 3 : 0;
    imp->score[f] = imp->rho[f] < 0 ? -mag : mag;
  }
}

int pp_xgb_importance_compute(const pp_xgb_booster *b, const pp_xgb_view *v, pp_xgb_importance *imp, pt_diag *d) {
  memset(imp, 0, sizeof *imp);
  int rc = pp_xgb_booster_importance(b, imp->weight, imp->gain, imp->cover, d);
  if (rc) return rc;
  pp_xgb_spearman(v, imp->rho);
  pp_xgb_importance_combine(imp);
  return 0;
}

int pp_xgb_prune(const pp_xgb_importance *imp, double threshold, unsigned char keep[PP_FEATURES_PER_STORE]) {
  int n = 0;
  for (int f = 0; f < PP_FEATURES_PER_STORE; f++) {
    keep[f] = fabs(imp->score[f]) > threshold;
    n += keep[f];
  }
  return n;
}

void pp_xgb_redistribute(const pp_xgb_view *v, const double importance[PP_FEATURES_PER_STORE], float *row_label) {
  double *s = malloc(sizeof(double) * (size_t)(v->n_rows > 0 ? v->n_rows : 1));
  double *total = calloc((size_t)v->n_prog + 1, sizeof(double));
  int *count = calloc((size_t)v->n_prog + 1, sizeof(int));
  for (int r = 0; r < v->n_rows; r++) {
    const float *x = v->X + (size_t)r * PP_FEATURES_PER_STORE;
    double sum = 0;
    /* Magnitudes only: a share must be non-negative whatever the feature's direction. */
    for (int f = 0; f < PP_FEATURES_PER_STORE; f++) sum += fabs(importance[f]) * fabs((double)x[f]);
    s[r] = sum;
    total[v->row_prog[r]] += sum;
    count[v->row_prog[r]]++;
  }
  for (int r = 0; r < v->n_rows; r++) {
    int pg = v->row_prog[r];
    double share = total[pg] > 0 ? s[r] / total[pg] : 1.0 / count[pg];
    row_label[r] = (float)(v->label[pg] * share);
  }
  free(s), free(total), free(count);
}
