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

#endif
