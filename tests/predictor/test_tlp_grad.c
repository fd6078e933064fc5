/* TLP's layers against finite differences: linear, multi-head attention, the whole network
 * (encoder, attention residual, residual blocks, per-platform decoders, sum over steps), and
 * the LambdaRank and MSE losses. Central differences in float, relative tolerance. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "predictor/tlp.h"
#include "test.h"

static void fill(pt_rng *r, int n, float *v, float scale) {
  for (int i = 0; i < n; i++) v[i] = (float)(2 * pt_rng_uniform(r) - 1) * scale;
}

static double dot(int n, const float *a, const float *b) {
  double s = 0;
  for (int i = 0; i < n; i++) s += (double)a[i] * b[i];
  return s;
}

static bool close_enough(double analytic, double numeric, double tol) {
  return fabs(analytic - numeric) <= tol * fmax(1.0, fmax(fabs(analytic), fabs(numeric)));
}

/* loss = sum(linear(x) * R) */
static double linear_loss(int rows, int in, int out, const float *x, const float *w, const float *b, const float *r) {
  float y[64];
  pp_nn_linear_fwd(rows, in, out, x, w, b, y);
  return dot(rows * out, y, r);
}

static void test_linear(void) {
  enum { ROWS = 3, IN = 4, OUT = 5 };
  pt_rng rng = {1};
  float x[ROWS * IN], w[OUT * IN], b[OUT], r[ROWS * OUT], dx[ROWS * IN], dw[OUT * IN] = {0}, db[OUT] = {0};
  fill(&rng, ROWS * IN, x, 1), fill(&rng, OUT * IN, w, 1), fill(&rng, OUT, b, 1), fill(&rng, ROWS * OUT, r, 1);
  pp_nn_linear_bwd(ROWS, IN, OUT, x, w, r, dx, dw, db);
  float *params[] = {x, w, b}, *grads[] = {dx, dw, db};
  int sizes[] = {ROWS * IN, OUT * IN, OUT};
  for (int p = 0; p < 3; p++)
    for (int i = 0; i < sizes[p]; i++) {
      float keep = params[p][i], h = 1e-2f;
      params[p][i] = keep + h;
      double up = linear_loss(ROWS, IN, OUT, x, w, b, r);
      params[p][i] = keep - h;
      double down = linear_loss(ROWS, IN, OUT, x, w, b, r);
      params[p][i] = keep;
      double num = (up - down) / (2 * h);
      CHECK_MSG(close_enough(grads[p][i], num, 1e-3), "linear param %d[%d]: %g vs %g", p, i, grads[p][i], num);
    }
}

static double attention_loss(int b, int l, int dim, int heads, const float *qkv, const float *r) {
  float p[2 * 2 * 4 * 4], o[2 * 4 * 4];
  pp_nn_attention_fwd(b, l, dim, heads, qkv, p, o);
  return dot(b * l * dim, o, r);
}

static void test_attention(void) {
  enum { B = 2, L = 4, DIM = 4, H = 2 };
  pt_rng rng = {2};
  float qkv[B * L * 3 * DIM], r[B * L * DIM], p[B * H * L * L], o[B * L * DIM], dqkv[B * L * 3 * DIM];
  fill(&rng, B * L * 3 * DIM, qkv, 1.5f), fill(&rng, B * L * DIM, r, 1);
  pp_nn_attention_fwd(B, L, DIM, H, qkv, p, o);
  for (int s = 0; s < B * H * L; s++) { /* probabilities: rows sum to 1 */
    double sum = 0;
    for (int j = 0; j < L; j++) sum += p[s * L + j];
    CHECK(fabs(sum - 1) < 1e-5);
  }
  pp_nn_attention_bwd(B, L, DIM, H, qkv, p, r, dqkv);
  for (int i = 0; i < B * L * 3 * DIM; i++) {
    float keep = qkv[i], h = 1e-2f;
    qkv[i] = keep + h;
    double up = attention_loss(B, L, DIM, H, qkv, r);
    qkv[i] = keep - h;
    double down = attention_loss(B, L, DIM, H, qkv, r);
    qkv[i] = keep;
    double num = (up - down) / (2 * h);
    CHECK_MSG(close_enough(dqkv[i], num, 2e-3), "attention dqkv[%d]: %g vs %g", i, dqkv[i], num);
  }
}

/* The whole network: loss = sum over samples and heads of score * R. */
static double model_loss(pp_tlp_model *m, int b, const float *x, const float *r, float *scores) {
  pp_tlp_model_forward(m, b, x, scores);
  return dot(b * pp_tlp_model_config(m)->n_out, scores, r);
}

static double lstm_loss(int b, int l, int dim, const float *xg, const float *w, const float *bh, const float *r) {
  float gates[2 * 3 * 12], cell[2 * 3 * 3], h[2 * 3 * 3];
  pp_nn_lstm_fwd(b, l, dim, xg, w, bh, gates, cell, h);
  return dot(b * l * dim, h, r);
}

static void test_lstm(void) {
  enum { B = 2, L = 3, D = 3 };
  pt_rng rng = {6};
  float xg[B * L * 4 * D], w[4 * D * D], bh[4 * D], r[B * L * D];
  float gates[B * L * 4 * D], cell[B * L * D], h[B * L * D], dxg[B * L * 4 * D], dw[4 * D * D] = {0}, db[4 * D] = {0};
  fill(&rng, B * L * 4 * D, xg, 1), fill(&rng, 4 * D * D, w, 1), fill(&rng, 4 * D, bh, 1), fill(&rng, B * L * D, r, 1);
  pp_nn_lstm_fwd(B, L, D, xg, w, bh, gates, cell, h);
  pp_nn_lstm_bwd(B, L, D, gates, cell, h, w, r, dxg, dw, db);
  float *params[] = {xg, w, bh}, *grads[] = {dxg, dw, db};
  int sizes[] = {B * L * 4 * D, 4 * D * D, 4 * D};
  for (int p = 0; p < 3; p++)
    for (int i = 0; i < sizes[p]; i++) {
      float keep = params[p][i], hh = 1e-2f;
      params[p][i] = keep + hh;
      double up = lstm_loss(B, L, D, xg, w, bh, r);
      params[p][i] = keep - hh;
      double down = lstm_loss(B, L, D, xg, w, bh, r);
      params[p][i] = keep;
      double num = (up - down) / (2 * hh);
      CHECK_MSG(close_enough(grads[p][i], num, 2e-3), "lstm param %d[%d]: %g vs %g", p, i, grads[p][i], num);
    }
}

static void test_model(bool lstm) {
  pp_tlp_config c = {.seq_len = 5, .emb = 6, .n_enc = 2, .enc = {8, 8}, .heads = 2, .lstm = lstm, .res_blocks = 2,
                     .n_dec = 1, .dec = {6}, .n_out = 2};
  pt_diag d = {0};
  pp_tlp_model *m = pp_tlp_model_new(&c, 3, &d);
  CHECK(m);
  if (!m) return;
  enum { B = 3 };
  pt_rng rng = {4};
  float x[B * 5 * 6], r[B * 2], scores[B * 2];
  fill(&rng, B * 5 * 6, x, 1), fill(&rng, B * 2, r, 1);
  int n = pp_tlp_model_n_params(m);
  float *w = pp_tlp_model_params(m), *g = pp_tlp_model_grads(m);
  for (int i = 0; i < n; i++) g[i] = 0;
  model_loss(m, B, x, r, scores);
  pp_tlp_model_backward(m, r);
  float *analytic = malloc(sizeof(float) * n);
  for (int i = 0; i < n; i++) analytic[i] = g[i];
  int bad = 0, checked = 0;
  for (int i = 0; i < n; i++) {
    float keep = w[i], h = 5e-4f;
    w[i] = keep + h;
    double up = model_loss(m, B, x, r, scores);
    w[i] = keep - h;
    double down = model_loss(m, B, x, r, scores);
    w[i] = keep;
    double num = (up - down) / (2 * h);
    checked++;
    if (!close_enough(analytic[i], num, 2e-2)) {
      if (bad < 10) fprintf(stderr, "model param %d: %g vs %g\n", i, analytic[i], num);
      bad++;
    }
  }
  /* h is small enough that no ReLU input crosses zero here (2e-3 crossed two). */
  CHECK_MSG(bad == 0, "%s: %d of %d parameter gradients differ from finite differences", lstm ? "lstm" : "attention",
            bad, checked);
  free(analytic);
  pp_tlp_model_free(m);
}

/* NDCG@k (k = 0: the whole list) of the order that sorts scores s descending, gain 2^(c t) - 1. */
static double ndcg_at(int n, const float *s, const float *t, int k, double c) {
  int ord[16], ideal[16];
  for (int i = 0; i < n; i++) ord[i] = ideal[i] = i;
  for (int i = 0; i < n; i++) /* selection sorts: few items */
    for (int j = i + 1; j < n; j++) {
      if (s[ord[j]] > s[ord[i]]) { int x = ord[i]; ord[i] = ord[j], ord[j] = x; }
      if (t[ideal[j]] > t[ideal[i]]) { int x = ideal[i]; ideal[i] = ideal[j], ideal[j] = x; }
    }
  int top = k > 0 && k < n ? k : n;
  double dcg = 0, max_dcg = 0;
  for (int i = 0; i < top; i++) {
    dcg += (exp2(c * t[ord[i]]) - 1) / log2(2.0 + i);
    max_dcg += (exp2(c * t[ideal[i]]) - 1) / log2(2.0 + i);
  }
  return dcg / max_dcg;
}

/* LambdaRank from its definition: each pair with t_a > t_b weighs the change of NDCG@k when the
 * two swap places in the predicted order, times -log2 sigmoid(s_a - s_b). */
static double lambdarank_by_swaps(int n, const float *s, const float *t, int k, double c) {
  double base = ndcg_at(n, s, t, k, c), loss = 0;
  float sw[16];
  for (int a = 0; a < n; a++)
    for (int b = 0; b < n; b++) {
      if (!(t[a] > t[b])) continue;
      for (int i = 0; i < n; i++) sw[i] = s[i];
      sw[a] = s[b], sw[b] = s[a];
      double w = fabs(ndcg_at(n, sw, t, k, c) - base);
      loss -= w * log2(1 / (1 + exp(-((double)s[a] - s[b]))));
    }
  return loss;
}

static void test_losses(void) {
  enum { N = 7 };
  pt_rng rng = {5};
  float s[N], t[N] = {1, 0.5f, 0.8f, 0.2f, 0.5f, 0.9f, 0.1f}, g[N], gi[N];
  bool has[N] = {true, true, true, false, true, true, true};
  fill(&rng, N, s, 2);
  /* MSE, TLP's LambdaRank (NULL and {0, 1}), and the top-heavy variants: NDCG@k, a steeper gain. */
  const pp_tlp_rank ranks[] = {{0, 1}, {0, 1}, {1, 1}, {3, 1}, {0, 4}, {2, 3}, {6, 1}};
  for (int v = -1; v < (int)(sizeof ranks / sizeof *ranks); v++) {
    pp_tlp_loss kind = v < 0 ? PP_LOSS_MSE : PP_LOSS_LAMBDARANK;
    const pp_tlp_rank *rank = v <= 0 ? NULL : &ranks[v];
    pp_tlp_loss_eval(kind, rank, N, s, t, has, g);
    CHECK(g[3] == 0); /* ignored entry: no gradient */
    for (int i = 0; i < N; i++) {
      float keep = s[i], h = 1e-3f;
      s[i] = keep + h;
      double up = pp_tlp_loss_eval(kind, rank, N, s, t, has, gi);
      s[i] = keep - h;
      double down = pp_tlp_loss_eval(kind, rank, N, s, t, has, gi);
      s[i] = keep;
      double num = (up - down) / (2 * h);
      CHECK_MSG(close_enough(g[i], num, 2e-2), "loss variant %d d/ds[%d]: %g vs %g", v, i, g[i], num);
    }
  }
  /* Every LambdaRank variant is the definition's: pair weights are |delta NDCG(@k)| of the swap. Ties
   * in t are left out (a swap of equal labels changes nothing, and the loss skips such pairs). */
  float u[N] = {1, 0.45f, 0.8f, 0.2f, 0.55f, 0.9f, 0.1f};
  for (int v = 1; v < (int)(sizeof ranks / sizeof *ranks); v++) {
    double want = lambdarank_by_swaps(N, s, u, ranks[v].ndcg_k, ranks[v].gain_scale);
    double got = pp_tlp_loss_eval(PP_LOSS_LAMBDARANK, &ranks[v], N, s, u, NULL, g);
    CHECK_MSG(fabs(got - want) <= 1e-5 * fmax(1, fabs(want)), "rank {%d, %g}: loss %.9g, by swaps %.9g",
              ranks[v].ndcg_k, ranks[v].gain_scale, got, want);
  }
  /* A cut-off at or past the list's length is the whole list, bit for bit. */
  pp_tlp_rank whole = {0, 1}, past = {N, 1};
  float g2[N];
  CHECK(pp_tlp_loss_eval(PP_LOSS_LAMBDARANK, &whole, N, s, u, NULL, g) ==
        pp_tlp_loss_eval(PP_LOSS_LAMBDARANK, &past, N, s, u, NULL, g2));
  CHECK(memcmp(g, g2, sizeof g) == 0);
  /* LambdaRank is lower when the scores order the labels right. */
  float right[N], wrong[N];
  for (int i = 0; i < N; i++) right[i] = t[i] * 4, wrong[i] = -t[i] * 4;
  CHECK(pp_tlp_loss_eval(PP_LOSS_LAMBDARANK, NULL, N, right, t, NULL, g) <
        pp_tlp_loss_eval(PP_LOSS_LAMBDARANK, NULL, N, wrong, t, NULL, g));
  for (int v = 2; v < (int)(sizeof ranks / sizeof *ranks); v++)
    CHECK(pp_tlp_loss_eval(PP_LOSS_LAMBDARANK, &ranks[v], N, right, t, NULL, g) <
          pp_tlp_loss_eval(PP_LOSS_LAMBDARANK, &ranks[v], N, wrong, t, NULL, g));
}

/* MTL-TLP's batch: 9 samples of 3 tasks (contiguous), 3 heads; head 0 is a thinned target (task 0
 * keeps two labels, task 1 one, task 2 none), head 2 lacks two samples. */
enum { BB = 9, BO = 3 };
static const int batch_group[BB] = {0, 0, 0, 0, 1, 1, 1, 2, 2};
static const float batch_head_w[BO] = {1, 0.5f, 0.25f}, batch_task_w[3] = {1, 2, 0.5f};

static void batch_fill(float *labels, bool *has, float *sample_w) {
  pt_rng rng = {8};
  for (int k = 0; k < BO * BB; k++) labels[k] = (float)(0.1 + 0.9 * pt_rng_uniform(&rng)), has[k] = true;
  for (int i = 0; i < BB; i++) has[i] = i == 0 || i == 2 || i == 5, sample_w[i] = batch_task_w[batch_group[i]];
  has[2 * BB + 3] = has[2 * BB + 8] = false;
}

static double batch_loss_of(pp_tlp_loss kind, const pp_tlp_rank *rank, const float *scores, const float *labels,
                            const bool *has, const int *group, const float *sample_w, float *ds) {
  float work[2 * BB], unused[BB * BO];
  return pp_tlp_batch_loss(kind, rank, BB, BO, scores, labels, has, group, batch_head_w, sample_w, ds ? ds : unused,
                           work);
}

static void test_batch_loss(void) {
  float labels[BO * BB], sample_w[BB], s[BB * BO], ds[BB * BO];
  bool has[BO * BB];
  batch_fill(labels, has, sample_w);
  pt_rng rng = {9};
  fill(&rng, BB * BO, s, 2);
  const pp_tlp_rank tlp = {0, 1}, top2 = {2, 1};
  /* d loss / d scores: whole-task lists (task weights), and TLP's mix (no sample weight: a mixed list's
   * samples may weigh differently, and then dscores is not the returned loss's gradient). */
  for (int v = 0; v < 6; v++) {
    pp_tlp_loss kind = v % 3 == 2 ? PP_LOSS_MSE : PP_LOSS_LAMBDARANK;
    const pp_tlp_rank *rank = v % 3 == 1 ? &top2 : &tlp;
    const int *group = v < 3 ? batch_group : NULL;
    const float *sw = v < 3 ? sample_w : NULL;
    batch_loss_of(kind, rank, s, labels, has, group, sw, ds);
    for (int k = 0; k < BB * BO; k++) {
      float keep = s[k], h = 1e-3f;
      s[k] = keep + h;
      double up = batch_loss_of(kind, rank, s, labels, has, group, sw, NULL);
      s[k] = keep - h;
      double down = batch_loss_of(kind, rank, s, labels, has, group, sw, NULL);
      s[k] = keep;
      double num = (up - down) / (2 * h);
      CHECK_MSG(close_enough(ds[k], num, 2e-2), "batch loss variant %d d/ds[%d]: %g vs %g", v, k, ds[k], num);
    }
    /* No gradient where a head has no label, nor from LambdaRank on the target head's task that it
     * labels once (one label ranks nothing; MSE still pulls it toward its label). */
    for (int i = 0; i < BB; i++)
      for (int out = 0; out < BO; out++)
        if (!has[out * BB + i] || (group && kind == PP_LOSS_LAMBDARANK && out == 0 && batch_group[i] == 1))
          CHECK_MSG(ds[i * BO + out] == 0, "variant %d: sample %d head %d has a gradient", v, i, out);
  }
  /* Whole-task lists: each task and head ranked alone, weighted (no pair spans two tasks). The mix
   * ranks across tasks, another loss. */
  double whole = batch_loss_of(PP_LOSS_LAMBDARANK, &tlp, s, labels, has, batch_group, sample_w, ds), by_task = 0;
  for (int t0 = 0, t1; t0 < BB; t0 = t1) {
    for (t1 = t0 + 1; t1 < BB && batch_group[t1] == batch_group[t0];) t1++;
    for (int out = 0; out < BO; out++) {
      float sc[BB], g[BB];
      for (int i = t0; i < t1; i++) sc[i - t0] = s[i * BO + out];
      by_task += (double)batch_head_w[out] * sample_w[t0] *
                 pp_tlp_loss_eval(PP_LOSS_LAMBDARANK, NULL, t1 - t0, sc, labels + out * BB + t0, has + out * BB + t0, g);
    }
  }
  CHECK_MSG(fabs(whole - by_task) <= 1e-6 * fmax(1, fabs(whole)), "whole-task loss %.9g, tasks apart %.9g", whole,
            by_task);
  double mixed = batch_loss_of(PP_LOSS_LAMBDARANK, &tlp, s, labels, has, NULL, sample_w, NULL);
  CHECK(fabs(mixed - whole) > 1e-3);
}

/* The whole chain MTL-TLP trains: network forward, the whole-task batch loss over three heads, the
 * network's backward from its dscores, against finite differences of every parameter. */
static double chain_loss(pp_tlp_model *m, const float *x, const float *labels, const bool *has, const float *sample_w,
                         float *ds) {
  float scores[BB * BO];
  pp_tlp_model_forward(m, BB, x, scores);
  return batch_loss_of(PP_LOSS_LAMBDARANK, NULL, scores, labels, has, batch_group, sample_w, ds);
}

static void test_batch_through_model(void) {
  pp_tlp_config c = {.seq_len = 4, .emb = 5, .n_enc = 1, .enc = {8}, .heads = 2, .res_blocks = 2, .n_dec = 1,
                     .dec = {6}, .n_out = BO};
  pt_diag d = {0};
  pp_tlp_model *m = pp_tlp_model_new(&c, 5, &d);
  CHECK(m);
  if (!m) return;
  float labels[BO * BB], sample_w[BB], x[BB * 4 * 5], ds[BB * BO];
  bool has[BO * BB];
  batch_fill(labels, has, sample_w);
  pt_rng rng = {10};
  fill(&rng, BB * 4 * 5, x, 1);
  int n = pp_tlp_model_n_params(m);
  float *w = pp_tlp_model_params(m), *g = pp_tlp_model_grads(m), *analytic = malloc(sizeof(float) * n);
  for (int i = 0; i < n; i++) g[i] = 0;
  chain_loss(m, x, labels, has, sample_w, ds);
  pp_tlp_model_backward(m, ds);
  for (int i = 0; i < n; i++) analytic[i] = g[i];
  int bad = 0;
  for (int i = 0; i < n; i++) {
    float keep = w[i], h = 5e-4f;
    w[i] = keep + h;
    double up = chain_loss(m, x, labels, has, sample_w, ds);
    w[i] = keep - h;
    double down = chain_loss(m, x, labels, has, sample_w, ds);
    w[i] = keep;
    double num = (up - down) / (2 * h);
    if (!close_enough(analytic[i], num, 2e-2)) {
      if (bad < 10) fprintf(stderr, "batch chain param %d: %g vs %g\n", i, analytic[i], num);
      bad++;
    }
  }
  CHECK_MSG(bad == 0, "whole-task MTL batch: %d of %d parameter gradients differ from finite differences", bad, n);
  free(analytic);
  pp_tlp_model_free(m);
}

int main(void) {
  test_linear();
  test_attention();
  test_lstm();
  test_model(false);
  test_model(true);
  test_losses();
  test_batch_loss();
  test_batch_through_model();
  TEST_DONE();
}
