/* The layers of the TLP network, forward and backward, with OpenBLAS's cblas_sgemm for the
 * matrix products: linear (PyTorch layout, W is out x in) and the scaled dot-product core of
 * multi-head self-attention (Vaswani et al. 2017, as torch.nn.MultiheadAttention computes it). */
#include <cblas.h>
#include <math.h>
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
