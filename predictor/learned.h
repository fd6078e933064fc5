/* predictor/'s learned cost models: Ansor's per-store features of a schedule state and the
 * XGBoost model trained online with Ansor's pack-sum objective. The module's second public
 * header, to be merged into predictor.h. */
#ifndef PORTENT_PREDICTOR_LEARNED_H
#define PORTENT_PREDICTOR_LEARNED_H

#include "compiler.h"

/* Ansor's feature vector of one buffer store (TVM auto_scheduler/feature.cc): computation
 * (57), five buffer accesses (5 x 18), arithmetic intensity curve (10), allocation (4),
 * outer scope (3); every magnitude as sign(x) log2(|x| + 1). */
#define PP_FEATURES_PER_STORE 164
#define PP_FEATURE_BUFFERS 5

/* The features of every store of a state (one row per stage that is neither a placeholder
 * nor inlined), computed from the state's loop structure: attach chains, bound-inferred
 * extents of attached stages, affine buffer indices. Returns the number of rows and sets
 * *rows (rows x PP_FEATURES_PER_STORE floats, caller frees), or a negative pt_err. */
int pp_features_state(const pc_state *s, int cache_line_bytes, float **rows, pt_diag *d);
/* The name of feature i ("float_mad", "B0.bytes", ...), written to buf when composed. */
const char *pp_feature_name(int i, char *buf, size_t cap);

typedef struct pp_xgb_opts {
  int rounds;        /* boosting rounds per training (default 60) */
  int max_depth;     /* Ansor: 10 */
  double eta;        /* Ansor: 0.2 */
  double gamma;      /* Ansor: 0.001 */
  int threads;       /* XGBoost nthread (default 1; 0: XGBoost's own default) */
  uint64_t seed;
  int cache_line_bytes; /* 64 */
} pp_xgb_opts;
void pp_xgb_opts_default(pp_xgb_opts *o);

/* Ansor's XGBoost model: a program's score is the sum of its stores' predictions; trained
 * on every result update() gave it (retrained from scratch each time), squared error against
 * throughput normalized by the best of its workload, weighted by that throughput. Before
 * any training the scores are random (the search then behaves as with the random model).
 * Free with pp_cost_model_free. */
pc_cost_model *pp_cost_model_xgb(const pp_xgb_opts *o, pt_diag *d);

/* ---------------------------------------------------------------- XGBoost with feature importance
 * The second seed of issue 15 ("基于特征重要性的深度学习自动调度优化研究"), docs/learning.md:
 * XGBoost's importance of each of Ansor's features, pruning of the unimportant ones, and the
 * program's label redistributed among its stores. */

/* Feature rows of programs: row r belongs to program row_prog[r] (0..n_prog-1), whose label is
 * label[program] (throughput over the best of its workload; 0 for a failed run, which then
 * weighs nothing in training). */
typedef struct pp_xgb_view {
  const float *X; /* n_rows x PP_FEATURES_PER_STORE */
  int *row_prog;
  int n_rows;
  double *label;
  int n_prog;
} pp_xgb_view;

typedef struct pp_xgb_fit_opts {
  const unsigned char *keep;      /* per feature: 1 = a column of the model; NULL: all */
  const double *share_importance; /* NULL: Ansor's pack-sum objective; else each row is fitted to
                                     its share of the label (pp_xgb_redistribute) */
} pp_xgb_fit_opts;

typedef struct pp_xgb_booster pp_xgb_booster;
/* Trains o->rounds boosting rounds. Returns 0 with *out NULL when no program has a positive
 * label (nothing to learn), or a negative pt_err. */
int pp_xgb_fit(const pp_xgb_opts *o, const pp_xgb_view *v, const pp_xgb_fit_opts *f, pp_xgb_booster **out, pt_diag *d);
/* scores[p] = sum of the predictions of program p's rows (rows in full PP_FEATURES_PER_STORE
 * layout: the booster picks its columns). */
int pp_xgb_booster_predict(const pp_xgb_booster *b, const float *X, const int *row_prog, int n_rows, int n_prog,
                           double *scores, pt_diag *d);
/* XGBoost's "weight" (splits), "gain" (mean gain per split) and "cover" (mean cover per split)
 * per feature (XGBoosterFeatureScore); 0 for features no split uses or the booster lacks. */
int pp_xgb_booster_importance(const pp_xgb_booster *b, double weight[PP_FEATURES_PER_STORE],
                              double gain[PP_FEATURES_PER_STORE], double cover[PP_FEATURES_PER_STORE], pt_diag *d);
int pp_xgb_booster_n_cols(const pp_xgb_booster *b);
void pp_xgb_booster_free(pp_xgb_booster *b);

typedef struct pp_xgb_importance {
  double weight[PP_FEATURES_PER_STORE], gain[PP_FEATURES_PER_STORE], cover[PP_FEATURES_PER_STORE];
  double rho[PP_FEATURES_PER_STORE];   /* Spearman of the feature with the row's label */
  double score[PP_FEATURES_PER_STORE]; /* sign(rho) x mean of the three min-max normalized
                                          measures, in [-1, 1]; 0 for a feature no split uses */
} pp_xgb_importance;
/* Spearman rank correlation (ties at mean rank) of each feature with its row's program label,
 * over the view's rows; 0 for a constant feature. */
void pp_xgb_spearman(const pp_xgb_view *v, double rho[PP_FEATURES_PER_STORE]);
/* score from weight, gain, cover and rho (already filled). */
void pp_xgb_importance_combine(pp_xgb_importance *imp);
/* All of the above for a booster trained on all columns of v. */
int pp_xgb_importance_compute(const pp_xgb_booster *b, const pp_xgb_view *v, pp_xgb_importance *imp, pt_diag *d);
/* keep[f] = |score[f]| > threshold; returns the number kept. */
int pp_xgb_prune(const pp_xgb_importance *imp, double threshold, unsigned char keep[PP_FEATURES_PER_STORE]);
/* The seed's eq. 5: row_label[r] = label[p] x s_r / sum of s over p's rows, with
 * s_r = sum_f |importance[f]| x |X[r][f]| (equal shares when every s of p is 0). */
void pp_xgb_redistribute(const pp_xgb_view *v, const double importance[PP_FEATURES_PER_STORE], float *row_label);

/* Measured programs as feature rows, in the order added. cost[p] is seconds (0: failed). */
typedef struct pp_xgb_data {
  float *X;
  int *row_prog;
  int n_rows, cap_rows;
  double *cost;
  int *workload;     /* index into keys */
  double *extract_s; /* CPU seconds spent building the state and its features */
  int n_prog, cap_prog;
  char (*keys)[512];
  int n_keys;
} pp_xgb_data;
/* Appends n states of one workload (key) with their costs (seconds, 0 for failed runs). */
int pp_xgb_data_add(pp_xgb_data *dd, const char *key, int n, pc_state *const *states, const double *cost,
                    int cache_line_bytes, pt_diag *d);
/* Appends every record of a TVM log whose workload portent builds and whose steps replay;
 * *n_skipped counts the others (unreadable lines included). */
int pp_xgb_data_read(pp_xgb_data *dd, const char *path, int cache_line_bytes, int *n_skipped, pt_diag *d);
/* Programs order[0..n-1] of src appended to dst, in that order. */
void pp_xgb_data_append_programs(pp_xgb_data *dst, const pp_xgb_data *src, const int *order, int n);
/* The rows of programs [p0, p1) (contiguous: programs are appended whole), labelled with
 * throughput over the best of their workload within the range. Free with pp_xgb_view_release. */
void pp_xgb_data_view(const pp_xgb_data *dd, int p0, int p1, pp_xgb_view *v);
void pp_xgb_view_release(pp_xgb_view *v);
void pp_xgb_data_free(pp_xgb_data *dd);

typedef struct pp_xgb_imp_opts {
  pp_xgb_opts xgb;
  double threshold;     /* prune features with |importance| <= threshold (default 0.01) */
  bool redistribute;    /* the seed's label redistribution (default true) */
  const char *prefit;   /* a TVM log: importance fitted once on it at creation (the seed's
                           offline pre-fit); NULL: refitted online whenever the data doubled */
} pp_xgb_imp_opts;
void pp_xgb_imp_opts_default(pp_xgb_imp_opts *o);
/* The xgb model on the pruned columns with redistributed labels. Importance comes from a full
 * pack-sum model, fitted on o->prefit's records, or online on the data seen so far, again each
 * time it doubled. Free with pp_cost_model_free. */
pc_cost_model *pp_cost_model_xgb_imp(const pp_xgb_imp_opts *o, pt_diag *d);

#endif
