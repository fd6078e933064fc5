/* TLP's training losses: LambdaRank (TLP's default, after allRank) or MSE on one list of scores, and
 * the loss of a whole training batch over its platform heads, one list per head spanning the batch
 * (TLP's mix) or one per task and head (whole-task batches). tlp_train.c calls them per batch. */
#include <math.h>
#include <stdlib.h>

#include "tlp.h"

typedef struct {
  float v;
  int i;
} keyed;

static int by_value_desc(const void *a, const void *b) {
  float x = ((const keyed *)a)->v, y = ((const keyed *)b)->v;
  return x > y ? -1 : x < y ? 1 : ((const keyed *)a)->i - ((const keyed *)b)->i;
}

/* TLP's LambdaRankLoss (after allRank): candidates sorted by predicted score, position i has
 * discount D_i = log2(2 + i) (0-based) and gain G = (2^label - 1) / maxDCG; each pair with
 * label_i > label_j costs -|1/D_i - 1/D_j| |G_i - G_j| log2 sigmoid(s_i - s_j). rank->ndcg_k = k
 * makes 1/D zero from position k on and maxDCG the ideal top k's, so the weight is the change of
 * NDCG@k when the pair swaps (pairs both below the top k weigh 0); rank->gain_scale = c makes the
 * gain 2^(c label) - 1. */
static double lambdarank(const pp_tlp_rank *rank, int n, const float *s, const float *t, float *g) {
  int k = rank->ndcg_k > 0 && rank->ndcg_k < n ? rank->ndcg_k : n;
  double c = rank->gain_scale;
  keyed *bp = malloc(sizeof *bp * (size_t)n), *bt = malloc(sizeof *bt * (size_t)n);
  double *inv_d = malloc(sizeof(double) * (size_t)n), *gain = malloc(sizeof(double) * (size_t)n);
  if (!bp || !bt || !inv_d || !gain) { /* out of memory: a loss that is not finite stops training */
    free(bp), free(bt), free(inv_d), free(gain);
    return NAN;
  }
  for (int i = 0; i < n; i++) bp[i] = (keyed){s[i], i}, bt[i] = (keyed){t[i], i};
  qsort(bp, (size_t)n, sizeof *bp, by_value_desc);
  qsort(bt, (size_t)n, sizeof *bt, by_value_desc);
  double max_dcg = 0;
  for (int i = 0; i < k; i++) max_dcg += (exp2(c * fmax(bt[i].v, 0)) - 1) / log2(2.0 + i);
  if (max_dcg < 1e-10) max_dcg = 1e-10;
  for (int i = 0; i < n; i++) {
    inv_d[i] = i < k ? 1 / log2(2.0 + i) : 0;
    gain[i] = (exp2(c * fmax(t[bp[i].i], 0)) - 1) / max_dcg;
  }
  double loss = 0;
  for (int i = 0; i < n; i++)
    for (int j = 0; j < (i < k ? n : k); j++) { /* both at or below position k: no weight */
      int a = bp[i].i, b = bp[j].i;
      if (!(t[a] > t[b])) continue;
      double w = fabs(inv_d[i] - inv_d[j]) * fabs(gain[i] - gain[j]);
      if (w == 0) continue;
      double x = (double)s[a] - s[b];
      double log_sig = x > 0 ? -log1p(exp(-x)) : x - log1p(exp(x)); /* log sigmoid(x), stable */
      loss -= w * log_sig / M_LN2;
      double dx = -w * (1 - 1 / (1 + exp(-x))) / M_LN2; /* d loss / d x */
      g[a] += (float)dx, g[b] -= (float)dx;
    }
  free(bp), free(bt), free(inv_d), free(gain);
  return loss;
}

double pp_tlp_loss_eval(pp_tlp_loss kind, const pp_tlp_rank *rank, int n, const float *scores, const float *labels,
                        const bool *has, float *grad) {
  static const pp_tlp_rank tlp_rank = {.ndcg_k = 0, .gain_scale = 1};
  int *idx = malloc(sizeof(int) * (size_t)(n + 1));
  for (int i = 0; i < n; i++) grad[i] = 0;
  if (!idx) return NAN; /* out of memory: a loss that is not finite stops training */
  int k = 0;
  for (int i = 0; i < n; i++)
    if (!has || has[i]) idx[k++] = i;
  double loss = 0;
  if (k > 0) {
    float *s = malloc(sizeof(float) * (size_t)k * 3), *t = s + k, *g = s + 2 * k;
    if (!s) {
      free(idx);
      return NAN;
    }
    for (int i = 0; i < k; i++) s[i] = scores[idx[i]], t[i] = labels[idx[i]], g[i] = 0;
    if (kind == PP_LOSS_MSE) {
      for (int i = 0; i < k; i++) {
        double e = (double)s[i] - t[i];
        loss += e * e / k;
        g[i] = (float)(2 * e / k);
      }
    } else
      loss = lambdarank(rank ? rank : &tlp_rank, k, s, t, g);
    for (int i = 0; i < k; i++) grad[idx[i]] = g[i];
    free(s);
  }
  free(idx);
  return loss;
}

double pp_tlp_batch_loss(pp_tlp_loss kind, const pp_tlp_rank *rank, int b, int n_out, const float *scores,
                         const float *labels, const bool *has, const int *group, const float *head_weight,
                         const float *sample_weight, float *dscores, float *work) {
  float *sc = work, *gs = work + b; /* one head's scores, then their gradient */
  double loss = 0;
  for (int out = 0; out < n_out; out++) {
    const float *lab = labels + (size_t)out * b;
    const bool *hs = has + (size_t)out * b;
    float hw = head_weight ? head_weight[out] : 1.0f;
    for (int i = 0; i < b; i++) sc[i] = scores[i * n_out + out];
    for (int i0 = 0, i1; i0 < b; i0 = i1) { /* a list: one task's run of samples, or the whole batch */
      i1 = i0 + 1;
      if (group)
        while (i1 < b && group[i1] == group[i0]) i1++;
      else
        i1 = b;
      double l = pp_tlp_loss_eval(kind, rank, i1 - i0, sc + i0, lab + i0, hs + i0, gs + i0);
      loss += (double)hw * (sample_weight ? sample_weight[i0] : 1.0f) * l;
    }
    for (int i = 0; i < b; i++) {
      float tw = sample_weight ? sample_weight[i] : 1.0f;
      dscores[i * n_out + out] = hw * tw * gs[i];
    }
  }
  return loss;
}
