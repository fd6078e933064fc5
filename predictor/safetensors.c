/* The safetensors format (huggingface/safetensors): u64 little-endian header length N, N bytes
 * of JSON ({"name": {"dtype","shape","data_offsets"}, "__metadata__": {str: str}}), then the
 * data. TLP weights are written as F32 so PyTorch users read them with safetensors.torch. */
#include <cjson/cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tlp.h"

/* The format caps the header at 100 MB (safetensors' MAX_HEADER_SIZE). */
#define ST_MAX_HEADER (100u << 20)

struct pp_st_file {
  char *bytes;
  size_t len;
  int n;
  pp_st_tensor *t;
  int n_meta;
  char **meta_key, **meta_val;
};

int64_t pp_st_numel(const pp_st_tensor *t) {
  int64_t n = 1;
  for (int i = 0; i < t->ndim; i++) n *= t->shape[i];
  return n;
}

int pp_st_write(const char *path, int n, const pp_st_tensor *t, int n_meta, const pp_st_meta *meta, pt_diag *d) {
  cJSON *h = cJSON_CreateObject();
  if (n_meta > 0) {
    cJSON *m = cJSON_AddObjectToObject(h, "__metadata__");
    for (int i = 0; i < n_meta; i++) cJSON_AddStringToObject(m, meta[i].key, meta[i].value);
  }
  size_t off = 0;
  for (int i = 0; i < n; i++) {
    cJSON *e = cJSON_AddObjectToObject(h, t[i].name);
    cJSON_AddStringToObject(e, "dtype", "F32");
    cJSON *sh = cJSON_AddArrayToObject(e, "shape");
    for (int k = 0; k < t[i].ndim; k++) cJSON_AddItemToArray(sh, cJSON_CreateNumber((double)t[i].shape[k]));
    size_t bytes = (size_t)pp_st_numel(&t[i]) * 4;
    cJSON *o = cJSON_AddArrayToObject(e, "data_offsets");
    cJSON_AddItemToArray(o, cJSON_CreateNumber((double)off));
    cJSON_AddItemToArray(o, cJSON_CreateNumber((double)(off + bytes)));
    off += bytes;
  }
  char *json = cJSON_PrintUnformatted(h);
  cJSON_Delete(h);
  if (!json) return pt_fail(d, PT_ERR_NOMEM, "%s: out of memory", path);
  size_t hlen = strlen(json);
  size_t padded = (hlen + 7) & ~(size_t)7; /* data 8-byte aligned; the spec pads with spaces */
  size_t total = 8 + padded + off;
  unsigned char *buf = malloc(total);
  if (!buf) {
    free(json);
    return pt_fail(d, PT_ERR_NOMEM, "%s: out of memory", path);
  }
  for (int k = 0; k < 8; k++) buf[k] = (unsigned char)((uint64_t)padded >> (8 * k));
  memcpy(buf + 8, json, hlen);
  memset(buf + 8 + hlen, ' ', padded - hlen);
  free(json);
  size_t at = 8 + padded;
  for (int i = 0; i < n; i++) {
    /* little-endian floats: this is x86-64/aarch64, both little-endian */
    size_t bytes = (size_t)pp_st_numel(&t[i]) * 4;
    memcpy(buf + at, t[i].data, bytes);
    at += bytes;
  }
  int rc = pt_write_file_atomic(path, buf, total, d);
  free(buf);
  return rc;
}

void pp_st_free(pp_st_file *f) {
  if (!f) return;
  for (int i = 0; i < f->n_meta; i++) free(f->meta_key[i]), free(f->meta_val[i]);
  free(f->meta_key), free(f->meta_val);
  free(f->t);
  free(f->bytes);
  free(f);
}

static int cmp_tensor_offset(const void *a, const void *b) {
  const pp_st_tensor *x = a, *y = b;
  return x->data < y->data ? -1 : x->data > y->data;
}

pp_st_file *pp_st_read(const char *path, pt_diag *d) {
  pp_st_file *f = calloc(1, sizeof *f);
  cJSON *h = NULL;
  f->bytes = pt_read_file(path, &f->len, d);
  if (!f->bytes) goto fail;
  if (f->len < 8) {
    pt_fail(d, PT_ERR_INPUT, "%s: not a safetensors file: %zu bytes, shorter than the 8-byte header length", path,
            f->len);
    goto fail;
  }
  uint64_t hlen = 0;
  for (int k = 0; k < 8; k++) hlen |= (uint64_t)(unsigned char)f->bytes[k] << (8 * k);
  if (hlen > ST_MAX_HEADER || hlen > f->len - 8) {
    pt_fail(d, PT_ERR_INPUT, "%s: header length %llu exceeds the file (%zu bytes): truncated or not safetensors",
            path, (unsigned long long)hlen, f->len);
    goto fail;
  }
  h = cJSON_ParseWithLength(f->bytes + 8, (size_t)hlen);
  if (!h || !cJSON_IsObject(h)) {
    pt_fail(d, PT_ERR_INPUT, "%s: header is not a JSON object", path);
    goto fail;
  }
  const char *data = f->bytes + 8 + hlen;
  size_t data_len = f->len - 8 - (size_t)hlen;
  int count = cJSON_GetArraySize(h);
  f->t = calloc((size_t)count + 1, sizeof *f->t);
  f->meta_key = calloc((size_t)count + 1, sizeof(char *));
  f->meta_val = calloc((size_t)count + 1, sizeof(char *));
  const cJSON *e;
  cJSON_ArrayForEach(e, h) {
    if (strcmp(e->string, "__metadata__") == 0) {
      const cJSON *m;
      int nm = cJSON_GetArraySize(e);
      /* += : a header may (wrongly) repeat the key; keep every entry rather than overrun */
      f->meta_key = realloc(f->meta_key, sizeof(char *) * ((size_t)(f->n_meta + nm) + 1));
      f->meta_val = realloc(f->meta_val, sizeof(char *) * ((size_t)(f->n_meta + nm) + 1));
      cJSON_ArrayForEach(m, e) {
        if (!cJSON_IsString(m)) {
          pt_fail(d, PT_ERR_INPUT, "%s: __metadata__.%s is not a string", path, m->string);
          goto fail;
        }
        f->meta_key[f->n_meta] = strdup(m->string);
        f->meta_val[f->n_meta++] = strdup(m->valuestring);
      }
      continue;
    }
    pp_st_tensor *t = &f->t[f->n];
    if (strlen(e->string) >= sizeof t->name) {
      pt_fail(d, PT_ERR_INPUT, "%s: tensor name '%.40s...' too long", path, e->string);
      goto fail;
    }
    snprintf(t->name, sizeof t->name, "%s", e->string);
    const cJSON *dt = cJSON_GetObjectItemCaseSensitive(e, "dtype");
    const cJSON *sh = cJSON_GetObjectItemCaseSensitive(e, "shape");
    const cJSON *of = cJSON_GetObjectItemCaseSensitive(e, "data_offsets");
    if (!cJSON_IsString(dt) || strcmp(dt->valuestring, "F32") != 0) {
      pt_fail(d, PT_ERR_UNSUPPORTED, "%s: tensor '%s': dtype %s, only F32 is read", path, t->name,
              cJSON_IsString(dt) ? dt->valuestring : "missing");
      goto fail;
    }
    if (!cJSON_IsArray(sh) || cJSON_GetArraySize(sh) > PP_ST_MAX_DIMS || !cJSON_IsArray(of) ||
        cJSON_GetArraySize(of) != 2) {
      pt_fail(d, PT_ERR_INPUT, "%s: tensor '%s': shape (at most %d dims) or data_offsets [begin, end] malformed",
              path, t->name, PP_ST_MAX_DIMS);
      goto fail;
    }
    const cJSON *v;
    cJSON_ArrayForEach(v, sh) {
      if (!cJSON_IsNumber(v) || v->valuedouble < 0 || v->valuedouble > 1e12 || v->valuedouble != floor(v->valuedouble)) {
        pt_fail(d, PT_ERR_INPUT, "%s: tensor '%s': shape entry is not a non-negative integer", path, t->name);
        goto fail;
      }
      t->shape[t->ndim++] = (int64_t)v->valuedouble;
    }
    double b0 = cJSON_GetArrayItem(of, 0)->valuedouble, b1 = cJSON_GetArrayItem(of, 1)->valuedouble;
    double numel = 1;
    for (int k = 0; k < t->ndim; k++) numel *= (double)t->shape[k];
    if (!(b0 >= 0 && b1 >= b0 && b1 <= (double)data_len) || b1 - b0 != numel * 4 || fmod(b0, 4) != 0) {
      pt_fail(d, PT_ERR_INPUT,
              "%s: tensor '%s': data_offsets [%.0f, %.0f] do not hold %.0f F32 values inside the %zu data bytes "
              "(truncated or corrupted file)",
              path, t->name, b0, b1, numel, data_len);
      goto fail;
    }
    t->data = (const float *)(const void *)(data + (size_t)b0);
    f->n++;
  }
  /* Tensors may not overlap (the format requires a contiguous, non-overlapping layout). */
  pp_st_tensor *sorted = malloc(sizeof *sorted * ((size_t)f->n + 1));
  memcpy(sorted, f->t, sizeof *sorted * (size_t)f->n);
  qsort(sorted, (size_t)f->n, sizeof *sorted, cmp_tensor_offset);
  for (int i = 1; i < f->n; i++)
    if (sorted[i - 1].data + pp_st_numel(&sorted[i - 1]) > sorted[i].data) {
      pt_fail(d, PT_ERR_INPUT, "%s: tensors '%s' and '%s' overlap", path, sorted[i - 1].name, sorted[i].name);
      free(sorted);
      goto fail;
    }
  free(sorted);
  cJSON_Delete(h);
  return f;
fail:
  cJSON_Delete(h);
  pp_st_free(f);
  return NULL;
}

const pp_st_tensor *pp_st_find(const pp_st_file *f, const char *name) {
  for (int i = 0; i < f->n; i++)
    if (strcmp(f->t[i].name, name) == 0) return &f->t[i];
  return NULL;
}

int pp_st_count(const pp_st_file *f) { return f->n; }
const pp_st_tensor *pp_st_at(const pp_st_file *f, int i) { return &f->t[i]; }

const char *pp_st_meta_get(const pp_st_file *f, const char *key) {
  for (int i = 0; i < f->n_meta; i++)
    if (strcmp(f->meta_key[i], key) == 0) return f->meta_val[i];
  return NULL;
}
