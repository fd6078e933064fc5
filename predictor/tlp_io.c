/* TLP weights files: every parameter as an F32 tensor under its PyTorch-style name, the
 * normalization as "norm.mean" / "norm.std", and in __metadata__ the format tag, the network
 * config, the vocabulary and the output heads' platforms (JSON strings), so one file carries
 * everything prediction needs. docs/learning.md documents the layout. */
#include <cjson/cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tlp.h"

#define TLP_FORMAT "portent-tlp"
#define TLP_VERSION "1"

static cJSON *int_array(int n, const int *v) {
  cJSON *a = cJSON_CreateArray();
  for (int i = 0; i < n; i++) cJSON_AddItemToArray(a, cJSON_CreateNumber(v[i]));
  return a;
}

int pp_tlp_model_save(const pp_tlp_model *cm, const char *path, pt_diag *d) {
  pp_tlp_model *m = (pp_tlp_model *)cm; /* the tensor accessor hands out mutable pointers */
  const pp_tlp_config *c = pp_tlp_model_config(m);
  int n = pp_tlp_model_tensor_count(m);
  pp_st_tensor *t = calloc((size_t)n + 2, sizeof *t);
  for (int i = 0; i < n; i++) {
    int rows, cols;
    float *data;
    const char *name = pp_tlp_model_tensor(m, i, &rows, &cols, &data);
    snprintf(t[i].name, sizeof t[i].name, "%s", name);
    t[i].ndim = cols ? 2 : 1;
    t[i].shape[0] = rows, t[i].shape[1] = cols;
    t[i].data = data;
  }
  snprintf(t[n].name, sizeof t[n].name, "norm.mean");
  t[n].ndim = 1, t[n].shape[0] = c->emb, t[n].data = pp_tlp_model_norm_mean(m);
  snprintf(t[n + 1].name, sizeof t[n + 1].name, "norm.std");
  t[n + 1].ndim = 1, t[n + 1].shape[0] = c->emb, t[n + 1].data = pp_tlp_model_norm_std(m);

  cJSON *cfg = cJSON_CreateObject();
  cJSON_AddNumberToObject(cfg, "seq_len", c->seq_len);
  cJSON_AddNumberToObject(cfg, "emb", c->emb);
  cJSON_AddItemToObject(cfg, "encoder", int_array(c->n_enc, c->enc));
  cJSON_AddNumberToObject(cfg, "heads", c->heads);
  cJSON_AddStringToObject(cfg, "backbone", c->lstm ? "lstm" : "attention");
  cJSON_AddNumberToObject(cfg, "res_blocks", c->res_blocks);
  cJSON_AddItemToObject(cfg, "decoder", int_array(c->n_dec, c->dec));
  cJSON_AddNumberToObject(cfg, "outputs", c->n_out);
  cJSON *voc = cJSON_CreateArray(), *plat = cJSON_CreateArray();
  const pp_tlp_vocab *v = pp_tlp_model_vocab(m);
  for (int i = 0; i < v->n; i++) cJSON_AddItemToArray(voc, cJSON_CreateString(v->tokens[i]));
  for (int o = 0; o < c->n_out; o++) cJSON_AddItemToArray(plat, cJSON_CreateString(pp_tlp_model_platform(m, o)));
  char *cfg_s = cJSON_PrintUnformatted(cfg), *voc_s = cJSON_PrintUnformatted(voc), *plat_s = cJSON_PrintUnformatted(plat);
  cJSON_Delete(cfg), cJSON_Delete(voc), cJSON_Delete(plat);
  pp_st_meta meta[] = {{"format", TLP_FORMAT}, {"version", TLP_VERSION}, {"config", cfg_s},
                       {"vocab", voc_s},       {"platforms", plat_s}};
  int rc = pp_st_write(path, n + 2, t, (int)PT_ARRAY_LEN(meta), meta, d);
  free(cfg_s), free(voc_s), free(plat_s), free(t);
  return rc;
}

static int read_ints(const cJSON *a, int cap, int *v, int *n) {
  if (!cJSON_IsArray(a) || cJSON_GetArraySize(a) > cap) return -1;
  *n = 0;
  const cJSON *e;
  cJSON_ArrayForEach(e, a) {
    if (!cJSON_IsNumber(e)) return -1;
    v[(*n)++] = e->valueint;
  }
  return 0;
}

static int get_int(const cJSON *o, const char *k, int *v) {
  const cJSON *e = cJSON_GetObjectItemCaseSensitive(o, k);
  if (!cJSON_IsNumber(e)) return -1;
  *v = e->valueint;
  return 0;
}

/* Copies a tensor after checking its shape and that every value is finite. */
static int take(const pp_st_file *f, const char *path, const char *name, int rows, int cols, float *dst, pt_diag *d) {
  const pp_st_tensor *t = pp_st_find(f, name);
  if (!t) return pt_fail(d, PT_ERR_INPUT, "%s: tensor '%s' missing", path, name);
  bool ok = cols ? t->ndim == 2 && t->shape[0] == rows && t->shape[1] == cols : t->ndim == 1 && t->shape[0] == rows;
  if (!ok)
    return pt_fail(d, PT_ERR_INPUT, "%s: tensor '%s' has shape [%lld%s%lld], the config wants [%d%s%d]", path, name,
                   (long long)t->shape[0], t->ndim > 1 ? ", " : "", t->ndim > 1 ? (long long)t->shape[1] : 0LL, rows,
                   cols ? ", " : "", cols);
  size_t n = (size_t)pp_st_numel(t);
  memcpy(dst, (const void *)t->data, n * sizeof(float));
  for (size_t i = 0; i < n; i++)
    if (!isfinite(dst[i])) return pt_fail(d, PT_ERR_INPUT, "%s: tensor '%s'[%zu] is not finite", path, name, i);
  return 0;
}

pp_tlp_model *pp_tlp_model_load(const char *path, pt_diag *d) {
  pp_st_file *f = pp_st_read(path, d);
  if (!f) return NULL;
  pp_tlp_model *m = NULL;
  cJSON *cfg = NULL, *voc = NULL, *plat = NULL;
  const char *fmt = pp_st_meta_get(f, "format");
  if (!fmt || strcmp(fmt, TLP_FORMAT) != 0) {
    pt_fail(d, PT_ERR_INPUT, "%s: __metadata__.format is %s%s%s, not \"" TLP_FORMAT "\": not a portent TLP model", path,
            fmt ? "\"" : "", fmt ? fmt : "missing", fmt ? "\"" : "");
    goto fail;
  }
  const char *cs = pp_st_meta_get(f, "config"), *vs = pp_st_meta_get(f, "vocab"), *ps = pp_st_meta_get(f, "platforms");
  cfg = cs ? cJSON_Parse(cs) : NULL;
  voc = vs ? cJSON_Parse(vs) : NULL;
  plat = ps ? cJSON_Parse(ps) : NULL;
  pp_tlp_config c = {0};
  if (!cfg || get_int(cfg, "seq_len", &c.seq_len) || get_int(cfg, "emb", &c.emb) || get_int(cfg, "heads", &c.heads) ||
      get_int(cfg, "res_blocks", &c.res_blocks) || get_int(cfg, "outputs", &c.n_out) ||
      read_ints(cJSON_GetObjectItemCaseSensitive(cfg, "encoder"), 6, c.enc, &c.n_enc) ||
      read_ints(cJSON_GetObjectItemCaseSensitive(cfg, "decoder"), 6, c.dec, &c.n_dec)) {
    pt_fail(d, PT_ERR_INPUT, "%s: __metadata__.config missing or malformed", path);
    goto fail;
  }
  const cJSON *bb = cJSON_GetObjectItemCaseSensitive(cfg, "backbone");
  if (bb && (!cJSON_IsString(bb) || (strcmp(bb->valuestring, "lstm") != 0 && strcmp(bb->valuestring, "attention") != 0))) {
    pt_fail(d, PT_ERR_INPUT, "%s: __metadata__.config.backbone is neither \"attention\" nor \"lstm\"", path);
    goto fail;
  }
  c.lstm = bb && strcmp(bb->valuestring, "lstm") == 0;
  if (!cJSON_IsArray(voc) || !cJSON_IsArray(plat) || cJSON_GetArraySize(plat) != c.n_out) {
    pt_fail(d, PT_ERR_INPUT, "%s: __metadata__.vocab or .platforms missing or malformed", path);
    goto fail;
  }
  m = pp_tlp_model_new(&c, 0, d);
  if (!m) goto fail;
  int n = pp_tlp_model_tensor_count(m);
  for (int i = 0; i < n; i++) {
    int rows, cols;
    float *data;
    const char *name = pp_tlp_model_tensor(m, i, &rows, &cols, &data);
    if (take(f, path, name, rows, cols, data, d) < 0) goto fail;
  }
  if (take(f, path, "norm.mean", c.emb, 0, pp_tlp_model_norm_mean(m), d) < 0 ||
      take(f, path, "norm.std", c.emb, 0, pp_tlp_model_norm_std(m), d) < 0)
    goto fail;
  for (int k = 0; k < c.emb; k++)
    if (!(pp_tlp_model_norm_std(m)[k] > 0)) {
      pt_fail(d, PT_ERR_INPUT, "%s: norm.std[%d] is not positive", path, k);
      goto fail;
    }
  const cJSON *e;
  int i = 0;
  cJSON_ArrayForEach(e, voc) {
    if (!cJSON_IsString(e)) {
      pt_fail(d, PT_ERR_INPUT, "%s: __metadata__.vocab[%d] is not a string", path, i);
      goto fail;
    }
    pp_tlp_vocab_id(pp_tlp_model_vocab(m), e->valuestring, true);
    i++;
  }
  i = 0;
  cJSON_ArrayForEach(e, plat) pp_tlp_model_set_platform(m, i++, cJSON_IsString(e) ? e->valuestring : "");
  cJSON_Delete(cfg), cJSON_Delete(voc), cJSON_Delete(plat);
  pp_st_free(f);
  return m;
fail:
  cJSON_Delete(cfg), cJSON_Delete(voc), cJSON_Delete(plat);
  pp_tlp_model_free(m);
  pp_st_free(f);
  return NULL;
}
