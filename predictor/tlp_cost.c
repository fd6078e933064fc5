/* TLP as the search's cost model: the states' steps become features with the model's frozen
 * vocabulary (unknown tokens -> 0) and the network's scores rank them (higher = faster, as
 * pc_cost_model wants). The model is trained offline (portent train), so update() is absent. */
#include <stdlib.h>
#include <string.h>

#include "predictor.h"
#include "tlp.h"

typedef struct {
  pp_tlp_model *m;
  int out;
} tlp_cost;

static int tlp_predict(void *self, const pc_program *p, int n, pc_state *const *states, double *scores, pt_diag *d) {
  (void)p;
  tlp_cost *t = self;
  const pp_tlp_config *c = pp_tlp_model_config(t->m);
  size_t per = (size_t)c->seq_len * c->emb;
  float *raw = malloc(sizeof(float) * per * (size_t)(n ? n : 1)), *sc = malloc(sizeof(float) * (size_t)(n ? n : 1));
  const float **xs = malloc(sizeof(float *) * (size_t)(n ? n : 1));
  int *rows = malloc(sizeof(int) * (size_t)(n ? n : 1));
  int rc = raw && sc && xs && rows ? 0 : PT_ERR_NOMEM;
  for (int i = 0; i < n && rc == 0; i++) {
    rows[i] = pp_tlp_features(states[i]->n_steps, states[i]->steps, pp_tlp_model_vocab(t->m), false, c->seq_len,
                              c->emb, raw + per * i);
    xs[i] = raw + per * i;
  }
  if (rc == 0 && n > 0) rc = pp_tlp_model_predict(t->m, n, xs, rows, t->out, sc);
  for (int i = 0; i < n && rc == 0; i++) scores[i] = sc[i];
  free(raw), free(sc), free(xs), free(rows);
  return rc < 0 ? pt_fail(d, rc, "tlp cost model: prediction failed (%s)", pt_err_name(rc)) : 0;
}

static void tlp_free(void *self) {
  tlp_cost *t = self;
  pp_tlp_model_free(t->m);
  free(t);
}

pc_cost_model *pp_cost_model_tlp(const char *path, const char *platform, pt_diag *d) {
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
  tlp_cost *t = malloc(sizeof *t);
  pc_cost_model *cm = calloc(1, sizeof *cm);
  t->m = m, t->out = out;
  *cm = (pc_cost_model){.name = "tlp", .self = t, .predict = tlp_predict, .update = NULL, .free = tlp_free};
  return cm;
}
