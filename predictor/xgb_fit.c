/* One XGBoost fit on per-store feature rows, shared by the online xgb models and the offline
 * benchmark: Ansor's pack-sum objective (a program's residual pushed to each of its rows) or
 * the seed's redistributed labels (each row its own share of the label), on all columns or
 * only the kept ones; predictions summed per program; XGBoost's importance per feature. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <xgboost/c_api.h>

#include "learned.h"

struct pp_xgb_booster {
  BoosterHandle h;
  int n_cols;
  int cols[PP_FEATURES_PER_STORE]; /* column c of the booster's matrix = feature cols[c] */
};

static int xgb_fail(pt_diag *d, const char *what) { return pt_fail(d, PT_ERR_RUNTIME, "xgboost: %s: %s", what, XGBGetLastError()); }

/* The kept columns of n rows, row-major: the booster's input. */
static float *select_cols(const pp_xgb_booster *b, const float *X, int n) {
  float *out = malloc(sizeof(float) * (size_t)b->n_cols * (size_t)(n > 0 ? n : 1));
  for (int r = 0; r < n; r++)
    for (int c = 0; c < b->n_cols; c++)
      out[(size_t)r * (size_t)b->n_cols + (size_t)c] = X[(size_t)r * PP_FEATURES_PER_STORE + (size_t)b->cols[c]];
  return out;
}

static DMatrixHandle matrix(const pp_xgb_booster *b, const float *X, int n, pt_diag *d) {
  DMatrixHandle dm = NULL;
  if (b->n_cols == PP_FEATURES_PER_STORE) {
    if (XGDMatrixCreateFromMat(X, (bst_ulong)n, PP_FEATURES_PER_STORE, NAN, &dm) != 0) xgb_fail(d, "matrix");
    return dm;
  }
  float *sel = select_cols(b, X, n);
  if (XGDMatrixCreateFromMat(sel, (bst_ulong)n, (bst_ulong)b->n_cols, NAN, &dm) != 0) xgb_fail(d, "matrix"), dm = NULL;
  free(sel);
  return dm;
}

static void set_params(BoosterHandle h, const pp_xgb_opts *o) {
  char buf[64];
  XGBoosterSetParam(h, "verbosity", "0");
  XGBoosterSetParam(h, "base_score", "0"); /* sums of rows: no per-row offset */
  snprintf(buf, sizeof buf, "%d", o->max_depth);
  XGBoosterSetParam(h, "max_depth", buf);
  snprintf(buf, sizeof buf, "%g", o->eta);
  XGBoosterSetParam(h, "eta", buf);
  snprintf(buf, sizeof buf, "%g", o->gamma);
  XGBoosterSetParam(h, "gamma", buf);
  XGBoosterSetParam(h, "min_child_weight", "0");
  XGBoosterSetParam(h, "tree_method", "hist"); /* exact greedy is 10x slower here, same ranking */
  XGBoosterSetParam(h, "disable_default_eval_metric", "1");
  snprintf(buf, sizeof buf, "%llu", (unsigned long long)o->seed);
  XGBoosterSetParam(h, "seed", buf);
  if (o->threads > 0) {
    snprintf(buf, sizeof buf, "%d", o->threads);
    XGBoosterSetParam(h, "nthread", buf);
  }
}

int pp_xgb_fit(const pp_xgb_opts *o, const pp_xgb_view *v, const pp_xgb_fit_opts *f, pp_xgb_booster **out, pt_diag *d) {
  *out = NULL;
  pp_xgb_booster *b = calloc(1, sizeof *b);
  for (int c = 0; c < PP_FEATURES_PER_STORE; c++)
    if (!f || !f->keep || f->keep[c]) b->cols[b->n_cols++] = c;
  bool redistribute = f && f->share_importance;
  int rc = 0;
  DMatrixHandle dm = NULL;
  float *grad = NULL, *hess = NULL, *target = NULL;
  double *sum = NULL;
  bool any = false;
  for (int i = 0; i < v->n_prog; i++) any = any || v->label[i] > 0;
  if (!any || v->n_rows == 0 || b->n_cols == 0) { /* nothing to learn: no booster, not an error */
    pp_xgb_booster_free(b);
    return 0;
  }
  if (!(dm = matrix(b, v->X, v->n_rows, d))) {
    rc = d->err ? d->err : PT_ERR_RUNTIME;
    goto done;
  }
  if (XGBoosterCreate(&dm, 1, &b->h) != 0) {
    rc = xgb_fail(d, "create");
    goto done;
  }
  set_params(b->h, o);
  grad = malloc(sizeof(float) * (size_t)v->n_rows);
  hess = malloc(sizeof(float) * (size_t)v->n_rows);
  sum = malloc(sizeof(double) * (size_t)v->n_prog);
  if (redistribute) {
    target = malloc(sizeof(float) * (size_t)v->n_rows);
    pp_xgb_redistribute(v, f->share_importance, target);
  }
  for (int it = 0; it < o->rounds; it++) {
    bst_ulong len = 0;
    const float *pred = NULL;
    if (XGBoosterPredict(b->h, dm, 1, 0, 1, &len, &pred) != 0) {
      rc = xgb_fail(d, "predict");
      goto done;
    }
    if (redistribute) {
      /* Each row against its own share, weighted like its program (Ansor's weight: the label). */
      for (int r = 0; r < v->n_rows; r++) {
        double w = v->label[v->row_prog[r]];
        grad[r] = (float)(((bst_ulong)r < len ? pred[r] : 0) - target[r]) * (float)w;
        hess[r] = (float)w;
      }
    } else {
      for (int i = 0; i < v->n_prog; i++) sum[i] = 0;
      for (int r = 0; r < v->n_rows && (bst_ulong)r < len; r++) sum[v->row_prog[r]] += pred[r];
      /* Pack-sum squared error: every row of a program gets its program's residual. */
      for (int r = 0; r < v->n_rows; r++) {
        int pg = v->row_prog[r];
        double w = v->label[pg];
        grad[r] = (float)((sum[pg] - v->label[pg]) * w);
        hess[r] = (float)w;
      }
    }
    if (XGBoosterBoostOneIter(b->h, dm, grad, hess, (bst_ulong)v->n_rows) != 0) {
      rc = xgb_fail(d, "boost");
      goto done;
    }
  }
done:
  if (dm) XGDMatrixFree(dm);
  free(grad), free(hess), free(sum), free(target);
  if (rc) pp_xgb_booster_free(b);
  else *out = b;
  return rc;
}

int pp_xgb_booster_predict(const pp_xgb_booster *b, const float *X, const int *row_prog, int n_rows, int n_prog,
                           double *scores, pt_diag *d) {
  for (int i = 0; i < n_prog; i++) scores[i] = 0;
  if (n_rows == 0) return 0;
  DMatrixHandle dm = matrix(b, X, n_rows, d);
  if (!dm) return d->err ? d->err : PT_ERR_RUNTIME;
  bst_ulong len = 0;
  const float *out = NULL;
  int rc = 0;
  if (XGBoosterPredict(b->h, dm, 0, 0, 0, &len, &out) != 0) rc = xgb_fail(d, "predict");
  else
    for (bst_ulong r = 0; r < len && r < (bst_ulong)n_rows; r++) scores[row_prog[r]] += out[r];
  XGDMatrixFree(dm);
  return rc;
}

/* XGBoost names the matrix's columns f0, f1, ... and lists only those used in a split. */
static int feature_score(const pp_xgb_booster *b, const char *type, double *score, pt_diag *d) {
  char config[96];
  snprintf(config, sizeof config, "{\"importance_type\": \"%s\"}", type);
  bst_ulong n = 0, dim = 0;
  const char **names = NULL;
  const bst_ulong *shape = NULL;
  const float *s = NULL;
  for (int c = 0; c < PP_FEATURES_PER_STORE; c++) score[c] = 0;
  if (XGBoosterFeatureScore(b->h, config, &n, &names, &dim, &shape, &s) != 0) return xgb_fail(d, "feature score");
  for (bst_ulong i = 0; i < n; i++) {
    int c = names[i][0] == 'f' ? atoi(names[i] + 1) : -1;
    if (c < 0 || c >= b->n_cols) return pt_fail(d, PT_ERR_RUNTIME, "xgboost: feature score: unexpected name '%s'", names[i]);
    score[b->cols[c]] = s[i];
  }
  return 0;
}

int pp_xgb_booster_importance(const pp_xgb_booster *b, double weight[PP_FEATURES_PER_STORE],
                              double gain[PP_FEATURES_PER_STORE], double cover[PP_FEATURES_PER_STORE], pt_diag *d) {
  int rc = feature_score(b, "weight", weight, d);
  if (!rc) rc = feature_score(b, "gain", gain, d);
  if (!rc) rc = feature_score(b, "cover", cover, d);
  return rc;
}

int pp_xgb_booster_n_cols(const pp_xgb_booster *b) { return b->n_cols; }

void pp_xgb_booster_free(pp_xgb_booster *b) {
  if (!b) return;
  if (b->h) XGBoosterFree(b->h);
  free(b);
}
