/* Fine-tuning a trained TLP network on one task's measured schedules (the tuner's online
 * update): the same LambdaRank loss and Adam as training, the task's records one ranking list,
 * the loss on one output head. The Adam state lives with the caller so that successive
 * fine-tunings continue where the last one stopped. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tlp.h"

void pp_tlp_finetune_opts_default(pp_tlp_finetune_opts *o) {
  *o = (pp_tlp_finetune_opts){.epochs = 10, .batch = 128, .lr = 7e-4, .head_only = false, .seed = 1};
}

void pp_tlp_adam_step(pp_tlp_adam *a, int n, float *w, const float *g, double lr) {
  const double b1 = 0.9, b2 = 0.999, eps = 1e-8; /* torch.optim.Adam's defaults */
  a->step++;
  double c1 = 1 - pow(b1, (double)a->step), c2 = 1 - pow(b2, (double)a->step);
  for (int k = 0; k < n; k++) {
    a->m[k] = (float)(b1 * a->m[k] + (1 - b1) * g[k]);
    a->v[k] = (float)(b2 * a->v[k] + (1 - b2) * (double)g[k] * g[k]);
    w[k] -= (float)(lr * (a->m[k] / c1) / (sqrt(a->v[k] / c2) + eps));
  }
}

int pp_tlp_adam_init(pp_tlp_adam *a, int n) {
  a->step = 0;
  a->m = calloc((size_t)n + 1, sizeof(float));
  a->v = calloc((size_t)n + 1, sizeof(float));
  return a->m && a->v ? 0 : PT_ERR_NOMEM;
}

void pp_tlp_adam_free(pp_tlp_adam *a) {
  free(a->m), free(a->v);
  a->m = a->v = NULL;
}

/* Zeroes the gradient outside what head-only fine-tuning trains: head `out`'s decoder and the
 * residual blocks before it (TLP's "last layers"). */
static void keep_head_grads(pp_tlp_model *m, int out, float *g) {
  float *w0 = pp_tlp_model_params(m);
  char head[32];
  snprintf(head, sizeof head, "head.%d.", out);
  for (int i = 0; i < pp_tlp_model_tensor_count(m); i++) {
    int rows, cols;
    float *data;
    const char *name = pp_tlp_model_tensor(m, i, &rows, &cols, &data);
    if (strncmp(name, head, strlen(head)) == 0 || strncmp(name, "res.", 4) == 0) continue;
    memset(g + (data - w0), 0, sizeof(float) * (size_t)rows * (size_t)(cols ? cols : 1));
  }
}

int pp_tlp_finetune(pp_tlp_model *m, int out, int n, const float *x, const float *label, const pp_tlp_finetune_opts *o,
                    pp_tlp_adam *adam, pt_rng *rng, pt_diag *d) {
  const pp_tlp_config *c = pp_tlp_model_config(m);
  if (out < 0 || out >= c->n_out || o->epochs < 0 || o->batch < 1 || !(o->lr > 0))
    return pt_fail(d, PT_ERR_INVALID, "TLP fine-tuning: head %d of %d, epochs %d, batch %d, lr %g", out, c->n_out,
                   o->epochs, o->batch, o->lr);
  if (n < 2) return 0; /* nothing to rank */
  size_t per = (size_t)c->seq_len * c->emb;
  int bmax = o->batch < n ? o->batch : n, n_params = pp_tlp_model_n_params(m);
  float *bx = malloc(sizeof(float) * per * (size_t)bmax), *sc = malloc(sizeof(float) * (size_t)bmax * c->n_out);
  float *ds = calloc((size_t)bmax * c->n_out, sizeof(float)), *s1 = malloc(sizeof(float) * (size_t)bmax * 3);
  int *order = malloc(sizeof(int) * (size_t)n);
  int rc = bx && sc && ds && s1 && order ? 0 : PT_ERR_NOMEM;
  float *w = pp_tlp_model_params(m), *g = pp_tlp_model_grads(m);
  for (int i = 0; i < n && rc == 0; i++) order[i] = i;
  for (int e = 0; e < o->epochs && rc == 0; e++) {
    pt_rng_shuffle(rng, order, n);
    for (int at = 0, b; at < n && rc == 0; at += b) {
      b = n - at < bmax ? n - at : bmax;
      if (b < 2) break; /* a lone leftover ranks against nothing */
      for (int i = 0; i < b; i++) memcpy(bx + per * i, x + per * order[at + i], sizeof(float) * per);
      if ((rc = pp_tlp_model_forward(m, b, bx, sc)) < 0) break;
      float *s = s1, *t = s1 + bmax, *gs = s1 + 2 * bmax;
      for (int i = 0; i < b; i++) s[i] = sc[i * c->n_out + out], t[i] = label[order[at + i]];
      double loss = pp_tlp_loss_eval(PP_LOSS_LAMBDARANK, NULL, b, s, t, NULL, gs);
      if (!isfinite(loss)) {
        rc = pt_fail(d, PT_ERR_RUNTIME, "TLP fine-tuning diverged (loss not finite: out of memory, or a learning rate too high)");
        break;
      }
      for (int i = 0; i < b; i++) ds[i * c->n_out + out] = gs[i]; /* the other heads stay zero */
      memset(g, 0, sizeof(float) * (size_t)n_params);
      pp_tlp_model_backward(m, ds);
      if (o->head_only) keep_head_grads(m, out, g);
      pp_tlp_adam_step(adam, n_params, w, g, o->lr);
    }
  }
  free(bx), free(sc), free(ds), free(s1), free(order);
  return rc < 0 ? (d->err ? rc : pt_fail(d, rc, "TLP fine-tuning: %s", pt_err_name(rc))) : 0;
}
