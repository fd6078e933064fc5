/* TLP as the search's cost model: the states' steps become features with the model's frozen
 * vocabulary (unknown tokens -> 0) and the network's scores rank them (higher = faster, as
 * pc_cost_model wants). Offline, the pretrained network ranks alone (no update). Online,
 * update() keeps the task's measured records and the next predict() first fine-tunes the
 * network on all of them: the tuner calls update() in chunks of 32 states, so fine-tuning
 * lazily costs one fine-tuning per measured round, not one per chunk. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "predictor.h"
#include "tlp.h"

typedef struct {
  pp_tlp_model *m;
  int out;
  bool online;
  pp_tlp_finetune_opts o;
  pp_tlp_adam adam;
  pt_rng rng;
  int n, cap, n_tuned; /* records kept; records at the last fine-tuning */
  float *x;            /* n x seq_len x emb normalized features */
  double *latency;
  int rounds;
  double seconds;
} tlp_cost;

/* A state's network input as fine-tuning takes it: raw features, then the model's normalization. */
static int encode(tlp_cost *t, const pc_program *p, const pc_state *s, float *x) {
  const pp_tlp_config *c = pp_tlp_model_config(t->m);
  float *raw = malloc(sizeof(float) * (size_t)c->seq_len * c->emb);
  if (!raw) return PT_ERR_NOMEM;
  int rows = pp_tlp_features(s->n_steps, s->steps, p, pp_tlp_model_vocab(t->m), false, c->seq_len, c->emb, raw);
  pp_tlp_model_normalize(t->m, raw, rows, x);
  free(raw);
  return 0;
}

/* Fine-tunes on every record kept when some arrived since the last time. */
static int finetune(tlp_cost *t, pt_diag *d) {
  if (!t->online || t->n == t->n_tuned) return 0;
  double t0 = pt_now(), best = INFINITY;
  for (int i = 0; i < t->n; i++) best = fmin(best, t->latency[i]);
  float *label = malloc(sizeof(float) * (size_t)(t->n + 1));
  if (!label) return pt_fail(d, PT_ERR_NOMEM, "tlp cost model: out of memory for %d records", t->n);
  for (int i = 0; i < t->n; i++) label[i] = (float)(best / t->latency[i]);
  int rc = pp_tlp_finetune(t->m, t->out, t->n, t->x, label, &t->o, &t->adam, &t->rng, d);
  free(label);
  t->n_tuned = t->n;
  t->rounds++;
  t->seconds += pt_now() - t0;
  return rc;
}

static int tlp_predict(void *self, const pc_program *p, int n, pc_state *const *states, double *scores, pt_diag *d) {
  tlp_cost *t = self;
  if (finetune(t, d) < 0) return d->err;
  const pp_tlp_config *c = pp_tlp_model_config(t->m);
  size_t per = (size_t)c->seq_len * c->emb;
  float *raw = malloc(sizeof(float) * per * (size_t)(n ? n : 1)), *sc = malloc(sizeof(float) * (size_t)(n ? n : 1));
  const float **xs = malloc(sizeof(float *) * (size_t)(n ? n : 1));
  int *rows = malloc(sizeof(int) * (size_t)(n ? n : 1));
  int rc = raw && sc && xs && rows ? 0 : PT_ERR_NOMEM;
  for (int i = 0; i < n && rc == 0; i++) {
    rows[i] = pp_tlp_features(states[i]->n_steps, states[i]->steps, p, pp_tlp_model_vocab(t->m), false, c->seq_len,
                              c->emb, raw + per * i);
    xs[i] = raw + per * i;
  }
  if (rc == 0 && n > 0) rc = pp_tlp_model_predict(t->m, n, xs, rows, t->out, sc); /* normalizes, in slices */
  for (int i = 0; i < n && rc == 0; i++) scores[i] = sc[i];
  free(raw), free(sc), free(xs), free(rows);
  return rc < 0 ? pt_fail(d, rc, "tlp cost model: prediction failed (%s)", pt_err_name(rc)) : 0;
}

/* Keeps the successful measurements (a failed one has no latency to rank by, as in training). */
static int tlp_update(void *self, const pc_program *p, int n, pc_state *const *states, const pc_measure_result *res,
                      pt_diag *d) {
  tlp_cost *t = self;
  const pp_tlp_config *c = pp_tlp_model_config(t->m);
  size_t per = (size_t)c->seq_len * c->emb;
  if (t->n + n > t->cap) {
    int cap = t->cap ? t->cap : 64;
    while (cap < t->n + n) cap *= 2;
    float *x = realloc(t->x, sizeof(float) * per * (size_t)cap);
    if (x) t->x = x;
    double *l = realloc(t->latency, sizeof(double) * (size_t)cap);
    if (l) t->latency = l;
    if (!x || !l) return pt_fail(d, PT_ERR_NOMEM, "tlp cost model: out of memory for %d records", cap);
    t->cap = cap;
  }
  for (int i = 0; i < n; i++) {
    if (res[i].error != PC_MEASURE_OK || !(res[i].median_s > 0) || !isfinite(res[i].median_s)) continue;
    int rc = encode(t, p, states[i], t->x + per * t->n);
    if (rc < 0) return pt_fail(d, rc, "tlp cost model: out of memory");
    t->latency[t->n++] = res[i].median_s;
  }
  return 0;
}

static void tlp_free(void *self) {
  tlp_cost *t = self;
  if (t->online && t->rounds)
    fprintf(stderr, "tlp online: %d fine-tunings (%d epochs, batch %d, %s) on up to %d records, %.2f s, %.3f s each\n",
            t->rounds, t->o.epochs, t->o.batch, t->o.head_only ? "head and residual blocks" : "whole network", t->n,
            t->seconds, t->seconds / t->rounds);
  pp_tlp_model_free(t->m);
  pp_tlp_adam_free(&t->adam);
  free(t->x), free(t->latency);
  free(t);
}

pc_cost_model *pp_cost_model_tlp(const char *path, const char *platform, const pp_tlp_finetune_opts *online,
                                 pt_diag *d) {
  pp_tlp_model *m = pp_tlp_model_load(path, d);
  if (!m) return NULL;
  int out = 0;
  if (platform) {
    int n = pp_tlp_model_config(m)->n_out;
    for (out = 0; out < n && strcmp(pp_tlp_model_platform(m, out), platform) != 0; out++) {}
    if (out == n) {
      pt_fail(d, PT_ERR_INPUT, "%s: no output head for platform '%s'", path, platform);
      pp_tlp_model_free(m);
      return NULL;
    }
  }
  tlp_cost *t = calloc(1, sizeof *t);
  pc_cost_model *cm = calloc(1, sizeof *cm);
  if (!t || !cm || (online && pp_tlp_adam_init(&t->adam, pp_tlp_model_n_params(m)) < 0)) {
    pt_fail(d, PT_ERR_NOMEM, "%s: out of memory", path);
    if (t) pp_tlp_adam_free(&t->adam);
    pp_tlp_model_free(m), free(t), free(cm);
    return NULL;
  }
  t->m = m, t->out = out, t->online = online != NULL;
  if (online) t->o = *online, t->rng.s = online->seed ^ 0x71f3ull;
  *cm = (pc_cost_model){.name = online ? "tlp-online" : "tlp", .self = t, .predict = tlp_predict,
                        .update = online ? tlp_update : NULL, .free = tlp_free};
  return cm;
}
