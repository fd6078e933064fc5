/* The layers of the TLP network, forward and backward, with OpenBLAS's cblas_sgemm for the
 * matrix products: linear (PyTorch layout, W is out x in) and the scaled dot-product core of
 * multi-head self-attention (Vaswani et al. 2017, as torch.nn.MultiheadAttention computes it). */
#include <cblas.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "tlp.h"

void pp_nn_linear_fwd(int rows, int in, int out, const float *x, const float *w, const float *b, float *y) {
  for (int r = 0; r < rows; r++) memcpy(y + (size_t)r * out, b, sizeof(float) * (size_t)out);
  cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, rows, out, in, 1.0f, x, in, w, in, 1.0f, y, out);
}

void pp_nn_linear_bwd(int rows, int in, int out, const float *x, const float *w, const float *dy, float *dx, float *dw,
                      float *db) {
  if (dx) cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, rows, in, out, 1.0f, dy, out, w, in, 0.0f, dx, in);
  cblas_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, out, in, rows, 1.0f, dy, out, x, in, 1.0f, dw, in);
  for (int r = 0; r < rows; r++) {
    const float *g = dy + (size_t)r * out;
    for (int o = 0; o < out; o++) db[o] += g[o];
  }
}

/* qkv rows are [q (dim) | k (dim) | v (dim)]; head h uses columns h*dh .. (h+1)*dh of each. */
void pp_nn_attention_fwd(int b, int l, int dim, int heads, const float *qkv, float *p, float *o) {
  int dh = dim / heads, ld = 3 * dim;
  float scale = 1.0f / sqrtf((float)dh);
  for (int s = 0; s < b; s++)
    for (int h = 0; h < heads; h++) {
      const float *q = qkv + (size_t)s * l * ld + h * dh, *k = q + dim, *v = q + 2 * dim;
      float *ps = p + ((size_t)s * heads + h) * l * l;
      cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, l, l, dh, scale, q, ld, k, ld, 0.0f, ps, l);
      for (int i = 0; i < l; i++) {
        float *row = ps + (size_t)i * l, mx = row[0], sum = 0;
        for (int j = 1; j < l; j++) mx = row[j] > mx ? row[j] : mx;
        for (int j = 0; j < l; j++) sum += row[j] = expf(row[j] - mx);
        for (int j = 0; j < l; j++) row[j] /= sum;
      }
      cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, l, dh, l, 1.0f, ps, l, v, ld, 0.0f,
                  o + (size_t)s * l * dim + h * dh, dim);
    }
}

void pp_nn_attention_bwd(int b, int l, int dim, int heads, const float *qkv, const float *p, const float *dout,
                         float *dqkv) {
  int dh = dim / heads, ld = 3 * dim;
  float scale = 1.0f / sqrtf((float)dh);
  float dp[l * l > 0 ? l * l : 1];
  for (int s = 0; s < b; s++)
    for (int h = 0; h < heads; h++) {
      const float *q = qkv + (size_t)s * l * ld + h * dh, *k = q + dim, *v = q + 2 * dim;
      float *dq = dqkv + (size_t)s * l * ld + h * dh, *dk = dq + dim, *dv = dq + 2 * dim;
      const float *ps = p + ((size_t)s * heads + h) * l * l;
      const float *dO = dout + (size_t)s * l * dim + h * dh;
      /* dV = P^T dO;  dP = dO V^T */
      cblas_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, l, dh, l, 1.0f, ps, l, dO, dim, 0.0f, dv, ld);
      cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, l, l, dh, 1.0f, dO, dim, v, ld, 0.0f, dp, l);
      /* softmax backward: dS = P o (dP - rowsum(dP o P)), then the scale */
      for (int i = 0; i < l; i++) {
        const float *pr = ps + (size_t)i * l;
        float *g = dp + (size_t)i * l, dot = 0;
        for (int j = 0; j < l; j++) dot += g[j] * pr[j];
        for (int j = 0; j < l; j++) g[j] = pr[j] * (g[j] - dot) * scale;
      }
      /* dQ = dS K;  dK = dS^T Q */
      cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, l, dh, l, 1.0f, dp, l, k, ld, 0.0f, dq, ld);
      cblas_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, l, dh, l, 1.0f, dp, l, q, ld, 0.0f, dk, ld);
    }
}

/* OpenBLAS picks its kernels when it loads (OPENBLAS_CORETYPE overrides the detection);
 * commands print the core they got so a timing can be reproduced. */
const char *pp_tlp_blas_core(void) { return openblas_get_corename(); }
int pp_tlp_blas_threads(void) { return openblas_get_num_threads(); }

/* ---------------------------------------------------------------- LSTM (TLP's other backbone) */

static float sigm(float x) { return 1.0f / (1.0f + expf(-x)); }

/* One-layer LSTM over each sample's l steps, gates in PyTorch's order (i, f, g, o). xg holds
 * the input projections x W_ih^T + b_ih (b*l x 4D); the recurrent part h W_hh^T + b_hh is added
 * step by step. Keeps the activated gates and the cell states for the backward pass. */
void pp_nn_lstm_fwd(int b, int l, int dim, const float *xg, const float *w_hh, const float *b_hh, float *gates,
                    float *cell, float *h) {
  int g4 = 4 * dim;
  for (int t = 0; t < l; t++) {
    for (int s = 0; s < b; s++) {
      float *gr = gates + ((size_t)s * l + t) * g4;
      const float *xr = xg + ((size_t)s * l + t) * g4;
      for (int k = 0; k < g4; k++) gr[k] = xr[k] + b_hh[k];
    }
    if (t > 0) /* rows of step t across the batch are l rows apart */
      cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, b, g4, dim, 1.0f, h + (size_t)(t - 1) * dim, l * dim, w_hh,
                  dim, 1.0f, gates + (size_t)t * g4, l * g4);
    for (int s = 0; s < b; s++) {
      size_t row = (size_t)s * l + t;
      float *gr = gates + row * g4, *c = cell + row * dim, *hr = h + row * dim;
      const float *c_prev = t > 0 ? cell + (row - 1) * dim : NULL;
      for (int k = 0; k < dim; k++) {
        float i = sigm(gr[k]), f = sigm(gr[dim + k]), g = tanhf(gr[2 * dim + k]), o = sigm(gr[3 * dim + k]);
        gr[k] = i, gr[dim + k] = f, gr[2 * dim + k] = g, gr[3 * dim + k] = o;
        c[k] = (c_prev ? f * c_prev[k] : 0) + i * g;
        hr[k] = o * tanhf(c[k]);
      }
    }
  }
}

/* Backpropagation through time: dxg (b*l x 4D) receives the gradient of the gates'
 * pre-activations (which is also d loss / d xg); dw_hh and db_hh accumulate. */
void pp_nn_lstm_bwd(int b, int l, int dim, const float *gates, const float *cell, const float *h, const float *w_hh,
                    const float *dh_out, float *dxg, float *dw_hh, float *db_hh) {
  int g4 = 4 * dim;
  size_t per = (size_t)b * dim;
  float *dh_next = calloc(per, sizeof(float)), *dc_next = calloc(per, sizeof(float));
  for (int t = l - 1; t >= 0; t--) {
    for (int s = 0; s < b; s++) {
      size_t row = (size_t)s * l + t;
      const float *gr = gates + row * g4, *c = cell + row * dim;
      const float *c_prev = t > 0 ? cell + (row - 1) * dim : NULL;
      float *da = dxg + row * g4, *dhn = dh_next + (size_t)s * dim, *dcn = dc_next + (size_t)s * dim;
      for (int k = 0; k < dim; k++) {
        float i = gr[k], f = gr[dim + k], g = gr[2 * dim + k], o = gr[3 * dim + k], tc = tanhf(c[k]);
        float dh = dh_out[row * dim + k] + dhn[k];
        float dc = dcn[k] + dh * o * (1 - tc * tc);
        da[k] = dc * g * i * (1 - i);
        da[dim + k] = (c_prev ? dc * c_prev[k] : 0) * f * (1 - f);
        da[2 * dim + k] = dc * i * (1 - g * g);
        da[3 * dim + k] = dh * tc * o * (1 - o);
        dcn[k] = dc * f;
      }
    }
    const float *da_t = dxg + (size_t)t * g4;
    /* dh_{t-1} = dA_t W_hh;  dW_hh += dA_t^T h_{t-1} */
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, b, dim, g4, 1.0f, da_t, l * g4, w_hh, dim, 0.0f, dh_next,
                dim);
    if (t > 0)
      cblas_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, g4, dim, b, 1.0f, da_t, l * g4, h + (size_t)(t - 1) * dim,
                  l * dim, 1.0f, dw_hh, dim);
    for (int s = 0; s < b; s++)
      for (int k = 0; k < g4; k++) db_hh[k] += da_t[(size_t)s * l * g4 + k];
  }
  free(dh_next), free(dc_next);
}
