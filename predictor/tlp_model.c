/* The TLP network (TLP's AttentionModule): linear+ReLU encoder up to width D, 8-head
 * self-attention with a residual connection, residual linear+ReLU blocks, then per output head
 * (one for TLP, one per platform for MTL-TLP) a linear+ReLU decoder to one value per step,
 * summed over the sequence. Parameters live in one flat array, named as PyTorch would. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tlp.h"

#define MAX_TENSORS 160
#define MAX_RES 8
#define MAX_OUT 16

typedef struct {
  char name[96];
  int rows, cols; /* cols 0: a vector */
  size_t off;
} param;

struct pp_tlp_model {
  pp_tlp_config c;
  int n_t;
  param t[MAX_TENSORS];
  size_t n_params;
  float *w, *g;
  float *mean, *std;
  pp_tlp_vocab vocab;
  char *platform[MAX_OUT];
  /* tensor indices (weight; bias is the next one) */
  int enc[6], in_proj, out_proj, res[MAX_RES], dec[MAX_OUT][7];
  /* activations of the last forward, for `cap` samples */
  int cap, b;
  float *x, *enc_a[6], *qkv, *p, *o, *r[MAX_RES + 1], *res_t[MAX_RES], *dec_a[MAX_OUT][6], *y[MAX_OUT];
  float *d1, *d2, *dqkv;
  float *gates, *cell; /* LSTM backbone */
};

void pp_tlp_config_default(pp_tlp_config *c) {
  *c = (pp_tlp_config){.seq_len = PP_TLP_SEQ_LEN,
                       .emb = PP_TLP_EMB,
                       .n_enc = 4,
                       .enc = {64, 128, 256, 256},
                       .heads = 8,
                       .res_blocks = 2,
                       .n_dec = 3,
                       .dec = {256, 128, 64},
                       .n_out = 1};
}

static int add_linear(pp_tlp_model *m, const char *name, int out, int in) {
  int i = m->n_t;
  snprintf(m->t[i].name, sizeof m->t[i].name, "%s.weight", name);
  m->t[i].rows = out, m->t[i].cols = in, m->t[i].off = m->n_params;
  m->n_params += (size_t)out * in;
  snprintf(m->t[i + 1].name, sizeof m->t[i + 1].name, "%s.bias", name);
  m->t[i + 1].rows = out, m->t[i + 1].cols = 0, m->t[i + 1].off = m->n_params;
  m->n_params += (size_t)out;
  m->n_t += 2;
  return i;
}

static float *W(pp_tlp_model *m, int t) { return m->w + m->t[t].off; }
static float *G(pp_tlp_model *m, int t) { return m->g + m->t[t].off; }

static int check_config(const pp_tlp_config *c, pt_diag *d) {
  if (c->seq_len < 1 || c->seq_len > 1024 || c->emb < 1 || c->emb > 1024 || c->heads > 64 || c->n_enc < 1 || c->n_enc > 6 || c->n_dec < 0 || c->n_dec > 6 || c->heads < 1 ||
      c->res_blocks < 0 || c->res_blocks > MAX_RES || c->n_out < 1 || c->n_out > MAX_OUT)
    return pt_fail(d, PT_ERR_INVALID, "TLP config out of range (encoder 1..6 layers, decoder 0..6, residual blocks "
                                      "0..%d, heads >= 1, 1..%d output heads)", MAX_RES, MAX_OUT);
  for (int i = 0; i < c->n_enc; i++)
    if (c->enc[i] < 1 || c->enc[i] > 4096) return pt_fail(d, PT_ERR_INVALID, "TLP config: encoder width %d", c->enc[i]);
  for (int i = 0; i < c->n_dec; i++)
    if (c->dec[i] < 1 || c->dec[i] > 4096) return pt_fail(d, PT_ERR_INVALID, "TLP config: decoder width %d", c->dec[i]);
  if (!c->lstm && c->enc[c->n_enc - 1] % c->heads)
    return pt_fail(d, PT_ERR_INVALID, "TLP config: width %d not divisible by %d heads", c->enc[c->n_enc - 1], c->heads);
  return 0;
}

pp_tlp_model *pp_tlp_model_new(const pp_tlp_config *c, uint64_t seed, pt_diag *d) {
  if (check_config(c, d) < 0) return NULL;
  pp_tlp_model *m = calloc(1, sizeof *m);
  m->c = *c;
  char name[64];
  int in = c->emb, dim = c->enc[c->n_enc - 1];
  for (int i = 0; i < c->n_enc; i++) {
    snprintf(name, sizeof name, "encoder.%d", 2 * i); /* nn.Sequential(Linear, ReLU, ...) numbering */
    m->enc[i] = add_linear(m, name, c->enc[i], in);
    in = c->enc[i];
  }
  if (c->lstm) { /* nn.LSTM(D, D) names */
    m->in_proj = add_linear(m, "lstm.ih", 4 * dim, dim);
    snprintf(m->t[m->in_proj].name, sizeof m->t[0].name, "lstm.weight_ih_l0");
    snprintf(m->t[m->in_proj + 1].name, sizeof m->t[0].name, "lstm.bias_ih_l0");
    m->out_proj = add_linear(m, "lstm.hh", 4 * dim, dim);
    snprintf(m->t[m->out_proj].name, sizeof m->t[0].name, "lstm.weight_hh_l0");
    snprintf(m->t[m->out_proj + 1].name, sizeof m->t[0].name, "lstm.bias_hh_l0");
  } else {
    m->in_proj = add_linear(m, "attention.in_proj", 3 * dim, dim);
    snprintf(m->t[m->in_proj].name, sizeof m->t[0].name, "attention.in_proj_weight");
    snprintf(m->t[m->in_proj + 1].name, sizeof m->t[0].name, "attention.in_proj_bias");
    m->out_proj = add_linear(m, "attention.out_proj", dim, dim);
  }
  for (int i = 0; i < c->res_blocks; i++) {
    snprintf(name, sizeof name, "res.%d", i);
    m->res[i] = add_linear(m, name, dim, dim);
  }
  for (int o = 0; o < c->n_out; o++) {
    int prev = dim;
    for (int j = 0; j <= c->n_dec; j++) {
      int out = j < c->n_dec ? c->dec[j] : 1;
      snprintf(name, sizeof name, "head.%d.decoder.%d", o, 2 * j);
      m->dec[o][j] = add_linear(m, name, out, prev);
      prev = out;
    }
  }
  m->w = calloc(m->n_params, sizeof(float));
  m->g = calloc(m->n_params, sizeof(float));
  m->mean = calloc((size_t)c->emb, sizeof(float));
  m->std = malloc(sizeof(float) * (size_t)c->emb);
  for (int i = 0; i < c->emb; i++) m->std[i] = 1;
  /* PyTorch's nn.Linear default: U(-1/sqrt(in), 1/sqrt(in)) for weights and biases. */
  pt_rng rng = {seed};
  for (int i = 0; i < m->n_t; i += 2) {
    int fan_in = m->t[i].cols;
    float bound = 1.0f / sqrtf((float)fan_in);
    size_t n = (size_t)m->t[i].rows * (m->t[i].cols + 1); /* weight and bias are contiguous */
    for (size_t k = 0; k < n; k++) m->w[m->t[i].off + k] = (float)(2 * pt_rng_uniform(&rng) - 1) * bound;
  }
  return m;
}

static void free_workspace(pp_tlp_model *m) {
  free(m->x), free(m->qkv), free(m->p), free(m->o), free(m->d1), free(m->d2), free(m->dqkv);
  free(m->gates), free(m->cell);
  m->gates = m->cell = NULL;
  for (int i = 0; i < 6; i++) free(m->enc_a[i]), m->enc_a[i] = NULL;
  for (int i = 0; i <= MAX_RES; i++) free(m->r[i]), m->r[i] = NULL;
  for (int i = 0; i < MAX_RES; i++) free(m->res_t[i]), m->res_t[i] = NULL;
  for (int o = 0; o < MAX_OUT; o++) {
    free(m->y[o]), m->y[o] = NULL;
    for (int j = 0; j < 6; j++) free(m->dec_a[o][j]), m->dec_a[o][j] = NULL;
  }
  m->x = m->qkv = m->p = m->o = m->d1 = m->d2 = m->dqkv = NULL;
  m->cap = 0;
}

void pp_tlp_model_free(pp_tlp_model *m) {
  if (!m) return;
  free_workspace(m);
  free(m->w), free(m->g), free(m->mean), free(m->std);
  for (int o = 0; o < MAX_OUT; o++) free(m->platform[o]);
  pp_tlp_vocab_clear(&m->vocab);
  free(m);
}

static int reserve(pp_tlp_model *m, int b) {
  if (b <= m->cap) return 0;
  free_workspace(m);
  const pp_tlp_config *c = &m->c;
  size_t rows = (size_t)b * c->seq_len, dim = (size_t)c->enc[c->n_enc - 1], proj = (c->lstm ? 4 : 3) * dim,
         widest = proj;
  for (int i = 0; i < c->n_enc; i++) widest = (size_t)c->enc[i] > widest ? (size_t)c->enc[i] : widest;
  for (int i = 0; i < c->n_dec; i++) widest = (size_t)c->dec[i] > widest ? (size_t)c->dec[i] : widest;
  widest = (size_t)c->emb > widest ? (size_t)c->emb : widest;
  bool ok = true;
#define ALLOC(p, n) ok &= ((p) = malloc(sizeof(float) * (n))) != NULL
  ALLOC(m->x, rows * c->emb);
  for (int i = 0; i < c->n_enc; i++) ALLOC(m->enc_a[i], rows * c->enc[i]);
  ALLOC(m->qkv, rows * proj);
  if (c->lstm) {
    ALLOC(m->gates, rows * proj);
    ALLOC(m->cell, rows * dim);
  }
  ALLOC(m->p, (size_t)b * c->heads * c->seq_len * c->seq_len);
  ALLOC(m->o, rows * dim);
  for (int i = 0; i <= c->res_blocks; i++) ALLOC(m->r[i], rows * dim);
  for (int i = 0; i < c->res_blocks; i++) ALLOC(m->res_t[i], rows * dim);
  for (int o = 0; o < c->n_out; o++) {
    for (int j = 0; j < c->n_dec; j++) ALLOC(m->dec_a[o][j], rows * c->dec[j]);
    ALLOC(m->y[o], rows);
  }
  ALLOC(m->d1, rows * widest);
  ALLOC(m->d2, rows * widest);
  ALLOC(m->dqkv, rows * proj);
#undef ALLOC
  if (!ok) {
    free_workspace(m);
    return PT_ERR_NOMEM;
  }
  m->cap = b;
  return 0;
}

static void relu(size_t n, float *a) {
  for (size_t i = 0; i < n; i++) a[i] = a[i] > 0 ? a[i] : 0;
}

int pp_tlp_model_forward(pp_tlp_model *m, int b, const float *x, float *scores) {
  if (reserve(m, b) < 0) return PT_ERR_NOMEM;
  const pp_tlp_config *c = &m->c;
  int rows = b * c->seq_len, dim = c->enc[c->n_enc - 1];
  m->b = b;
  memcpy(m->x, x, sizeof(float) * (size_t)rows * c->emb);
  const float *a = m->x;
  int in = c->emb;
  for (int i = 0; i < c->n_enc; i++) {
    pp_nn_linear_fwd(rows, in, c->enc[i], a, W(m, m->enc[i]), W(m, m->enc[i] + 1), m->enc_a[i]);
    relu((size_t)rows * c->enc[i], m->enc_a[i]);
    a = m->enc_a[i], in = c->enc[i];
  }
  if (c->lstm) { /* r0 = lstm(h) + h */
    pp_nn_linear_fwd(rows, dim, 4 * dim, a, W(m, m->in_proj), W(m, m->in_proj + 1), m->qkv);
    pp_nn_lstm_fwd(b, c->seq_len, dim, m->qkv, W(m, m->out_proj), W(m, m->out_proj + 1), m->gates, m->cell, m->o);
    memcpy(m->r[0], m->o, sizeof(float) * (size_t)rows * dim);
  } else { /* r0 = out_proj(attention(h)) + h */
    pp_nn_linear_fwd(rows, dim, 3 * dim, a, W(m, m->in_proj), W(m, m->in_proj + 1), m->qkv);
    pp_nn_attention_fwd(b, c->seq_len, dim, c->heads, m->qkv, m->p, m->o);
    pp_nn_linear_fwd(rows, dim, dim, m->o, W(m, m->out_proj), W(m, m->out_proj + 1), m->r[0]);
  }
  for (size_t k = 0; k < (size_t)rows * dim; k++) m->r[0][k] += a[k];
  for (int i = 0; i < c->res_blocks; i++) {
    pp_nn_linear_fwd(rows, dim, dim, m->r[i], W(m, m->res[i]), W(m, m->res[i] + 1), m->res_t[i]);
    relu((size_t)rows * dim, m->res_t[i]);
    for (size_t k = 0; k < (size_t)rows * dim; k++) m->r[i + 1][k] = m->res_t[i][k] + m->r[i][k];
  }
  const float *top = m->r[c->res_blocks];
  for (int o = 0; o < c->n_out; o++) {
    const float *h = top;
    int prev = dim;
    for (int j = 0; j < c->n_dec; j++) {
      pp_nn_linear_fwd(rows, prev, c->dec[j], h, W(m, m->dec[o][j]), W(m, m->dec[o][j] + 1), m->dec_a[o][j]);
      relu((size_t)rows * c->dec[j], m->dec_a[o][j]);
      h = m->dec_a[o][j], prev = c->dec[j];
    }
    pp_nn_linear_fwd(rows, prev, 1, h, W(m, m->dec[o][c->n_dec]), W(m, m->dec[o][c->n_dec] + 1), m->y[o]);
    for (int s = 0; s < b; s++) {
      double sum = 0;
      for (int l = 0; l < c->seq_len; l++) sum += m->y[o][s * c->seq_len + l];
      scores[s * c->n_out + o] = (float)sum;
    }
  }
  return 0;
}

static void relu_grad(size_t n, const float *act, float *g) {
  for (size_t i = 0; i < n; i++)
    if (act[i] <= 0) g[i] = 0;
}

void pp_tlp_model_backward(pp_tlp_model *m, const float *dscores) {
  const pp_tlp_config *c = &m->c;
  int b = m->b, rows = b * c->seq_len, dim = c->enc[c->n_enc - 1];
  size_t nd = (size_t)rows * dim;
  size_t widest = (size_t)dim; /* dR is reused for the encoder's gradients */
  for (int i = 0; i < c->n_enc; i++) widest = (size_t)c->enc[i] > widest ? (size_t)c->enc[i] : widest;
  float *dR = calloc((size_t)rows * widest, sizeof(float));
  if (!dR) return;
  const float *top = m->r[c->res_blocks];
  for (int o = 0; o < c->n_out; o++) {
    float *dy = m->d1;
    bool any = false;
    for (int s = 0; s < b; s++) {
      float g = dscores[s * c->n_out + o];
      any |= g != 0;
      for (int l = 0; l < c->seq_len; l++) dy[s * c->seq_len + l] = g;
    }
    if (!any) continue;
    int j = c->n_dec, out = 1;
    float *cur = m->d1, *other = m->d2;
    for (; j >= 0; j--) {
      int in = j > 0 ? c->dec[j - 1] : dim;
      const float *x = j > 0 ? m->dec_a[o][j - 1] : top;
      if (j < c->n_dec) relu_grad((size_t)rows * out, m->dec_a[o][j], cur);
      pp_nn_linear_bwd(rows, in, out, x, W(m, m->dec[o][j]), cur, other, G(m, m->dec[o][j]), G(m, m->dec[o][j] + 1));
      float *t = cur;
      cur = other, other = t;
      out = in;
    }
    for (size_t k = 0; k < nd; k++) dR[k] += cur[k];
  }
  for (int i = c->res_blocks - 1; i >= 0; i--) {
    memcpy(m->d1, dR, sizeof(float) * nd);
    relu_grad(nd, m->res_t[i], m->d1);
    pp_nn_linear_bwd(rows, dim, dim, m->r[i], W(m, m->res[i]), m->d1, m->d2, G(m, m->res[i]), G(m, m->res[i] + 1));
    for (size_t k = 0; k < nd; k++) dR[k] += m->d2[k];
  }
  const float *h = m->enc_a[c->n_enc - 1];
  if (c->lstm) { /* r0 = lstm(h) + h */
    pp_nn_lstm_bwd(b, c->seq_len, dim, m->gates, m->cell, m->o, W(m, m->out_proj), dR, m->dqkv, G(m, m->out_proj),
                   G(m, m->out_proj + 1));
    pp_nn_linear_bwd(rows, dim, 4 * dim, h, W(m, m->in_proj), m->dqkv, m->d2, G(m, m->in_proj), G(m, m->in_proj + 1));
  } else { /* r0 = out_proj(attention(h)) + h */
    pp_nn_linear_bwd(rows, dim, dim, m->o, W(m, m->out_proj), dR, m->d1, G(m, m->out_proj), G(m, m->out_proj + 1));
    pp_nn_attention_bwd(b, c->seq_len, dim, c->heads, m->qkv, m->p, m->d1, m->dqkv);
    pp_nn_linear_bwd(rows, dim, 3 * dim, h, W(m, m->in_proj), m->dqkv, m->d2, G(m, m->in_proj), G(m, m->in_proj + 1));
  }
  for (size_t k = 0; k < nd; k++) dR[k] += m->d2[k];
  float *cur = dR, *other = m->d1;
  for (int i = c->n_enc - 1; i >= 0; i--) {
    int in = i > 0 ? c->enc[i - 1] : c->emb;
    const float *x = i > 0 ? m->enc_a[i - 1] : m->x;
    relu_grad((size_t)rows * c->enc[i], m->enc_a[i], cur);
    pp_nn_linear_bwd(rows, in, c->enc[i], x, W(m, m->enc[i]), cur, i > 0 ? other : NULL, G(m, m->enc[i]),
                     G(m, m->enc[i] + 1));
    float *t = cur;
    cur = other, other = t;
  }
  free(dR);
}

static void normalize(const pp_tlp_model *m, const float *raw, int n_rows, float *out) {
  const pp_tlp_config *c = &m->c;
  memset(out, 0, sizeof(float) * (size_t)c->seq_len * c->emb);
  for (int r = 0; r < n_rows && r < c->seq_len; r++)
    for (int k = 0; k < c->emb; k++) out[r * c->emb + k] = (raw[r * c->emb + k] - m->mean[k]) / m->std[k];
}

int pp_tlp_model_predict(pp_tlp_model *m, int b, const float *const *x, const int *n_rows, int out, float *scores) {
  const pp_tlp_config *c = &m->c;
  if (out < 0 || out >= c->n_out) return PT_ERR_INVALID;
  enum { CHUNK = 256 };
  size_t per = (size_t)c->seq_len * c->emb;
  float *in = malloc(sizeof(float) * per * CHUNK), *s = malloc(sizeof(float) * CHUNK * c->n_out);
  int rc = in && s ? 0 : PT_ERR_NOMEM;
  for (int at = 0; at < b && rc == 0; at += CHUNK) {
    int n = b - at < CHUNK ? b - at : CHUNK;
    for (int i = 0; i < n; i++) normalize(m, x[at + i], n_rows[at + i], in + per * i);
    rc = pp_tlp_model_forward(m, n, in, s);
    for (int i = 0; i < n && rc == 0; i++) scores[at + i] = s[i * c->n_out + out];
  }
  free(in), free(s);
  return rc;
}

void pp_tlp_model_normalize(const pp_tlp_model *m, const float *raw, int n_rows, float *out) {
  normalize(m, raw, n_rows, out);
}

const pp_tlp_config *pp_tlp_model_config(const pp_tlp_model *m) { return &m->c; }
int pp_tlp_model_n_params(const pp_tlp_model *m) { return (int)m->n_params; }
float *pp_tlp_model_params(pp_tlp_model *m) { return m->w; }
float *pp_tlp_model_grads(pp_tlp_model *m) { return m->g; }
float *pp_tlp_model_norm_mean(pp_tlp_model *m) { return m->mean; }
float *pp_tlp_model_norm_std(pp_tlp_model *m) { return m->std; }
pp_tlp_vocab *pp_tlp_model_vocab(pp_tlp_model *m) { return &m->vocab; }

void pp_tlp_model_set_platform(pp_tlp_model *m, int out, const char *name) {
  if (out < 0 || out >= m->c.n_out) return;
  free(m->platform[out]);
  m->platform[out] = strdup(name);
}

const char *pp_tlp_model_platform(const pp_tlp_model *m, int out) {
  return out >= 0 && out < m->c.n_out && m->platform[out] ? m->platform[out] : "";
}

/* Each decoder layer's weight and bias are contiguous (rows x (cols + 1) floats). */
void pp_tlp_model_copy_head(pp_tlp_model *m, int from, int to) {
  if (from < 0 || to < 0 || from >= m->c.n_out || to >= m->c.n_out || from == to) return;
  for (int j = 0; j <= m->c.n_dec; j++) {
    const param *a = &m->t[m->dec[from][j]], *b = &m->t[m->dec[to][j]];
    memcpy(m->w + b->off, m->w + a->off, sizeof(float) * (size_t)a->rows * (size_t)(a->cols + 1));
  }
}

int pp_tlp_model_tensor_count(const pp_tlp_model *m) { return m->n_t; }
const char *pp_tlp_model_tensor(pp_tlp_model *m, int i, int *rows, int *cols, float **data) {
  *rows = m->t[i].rows, *cols = m->t[i].cols, *data = m->w + m->t[i].off;
  return m->t[i].name;
}
