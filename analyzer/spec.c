/* Run specs: which function to call on what arguments (buffers filled with seeded random
 * data, scalars, a thread pool). Parsed at the edge into pa_run_spec; errors name the JSON path. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "internal.h"

static const char *const type_names[] = {"i8", "i16", "i32", "i64", "f32", "f64"};

static int parse_type(const cJSON *o, const char *name, int i, pa_scalar_type *t, pt_diag *d) {
  const cJSON *ty = cJSON_GetObjectItemCaseSensitive(o, "type");
  if (!cJSON_IsString(ty)) return pt_fail(d, PT_ERR_INPUT, "%s: args[%d].type: expected a string (f32, i64, ...)", name, i);
  for (int k = 0; k < (int)PT_ARRAY_LEN(type_names); k++)
    if (strcmp(ty->valuestring, type_names[k]) == 0) {
      *t = (pa_scalar_type)k;
      return PT_OK;
    }
  return pt_fail(d, PT_ERR_INPUT, "%s: args[%d].type: unknown type '%s'", name, i, ty->valuestring);
}

static int parse_count(const cJSON *c, const char *name, const char *path, int64_t *out, pt_diag *d) {
  if (!cJSON_IsNumber(c) || c->valuedouble < 1 || c->valuedouble != floor(c->valuedouble) || c->valuedouble > 1e12)
    return pt_fail(d, PT_ERR_INPUT, "%s: %s: expected a positive integer element count", name, path);
  *out = (int64_t)c->valuedouble;
  return PT_OK;
}

static int parse_arg(pt_arena *a, const cJSON *o, const char *name, int i, pa_arg *arg, pt_diag *d) {
  char path[64];
  const cJSON *kind = cJSON_GetObjectItemCaseSensitive(o, "kind");
  if (!cJSON_IsObject(o) || !cJSON_IsString(kind))
    return pt_fail(d, PT_ERR_INPUT, "%s: args[%d].kind: expected buffer, buffers, scalar, pool or null", name, i);
  const char *k = kind->valuestring;
  if (strcmp(k, "buffer") == 0) {
    arg->kind = PA_ARG_BUFFER;
    snprintf(path, sizeof path, "args[%d].count", i);
    int e = parse_type(o, name, i, &arg->type, d);
    return e ? e : parse_count(cJSON_GetObjectItemCaseSensitive(o, "count"), name, path, &arg->count, d);
  }
  if (strcmp(k, "buffers") == 0) {
    arg->kind = PA_ARG_BUFFER_ARRAY;
    int e = parse_type(o, name, i, &arg->type, d);
    if (e) return e;
    const cJSON *cs = cJSON_GetObjectItemCaseSensitive(o, "counts");
    if (!cJSON_IsArray(cs) || cJSON_GetArraySize(cs) < 1)
      return pt_fail(d, PT_ERR_INPUT, "%s: args[%d].counts: expected a non-empty array of element counts", name, i);
    arg->n_counts = cJSON_GetArraySize(cs);
    arg->counts = pt_alloc(a, sizeof(int64_t) * (size_t)arg->n_counts);
    for (int j = 0; j < arg->n_counts; j++) {
      snprintf(path, sizeof path, "args[%d].counts[%d]", i, j);
      if ((e = parse_count(cJSON_GetArrayItem(cs, j), name, path, &arg->counts[j], d))) return e;
    }
    return PT_OK;
  }
  if (strcmp(k, "scalar") == 0) {
    arg->kind = PA_ARG_SCALAR;
    int e = parse_type(o, name, i, &arg->type, d);
    if (e) return e;
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, "value");
    if (!cJSON_IsNumber(v)) return pt_fail(d, PT_ERR_INPUT, "%s: args[%d].value: expected a number", name, i);
    arg->value = v->valuedouble;
    if (arg->type <= PA_T_I64) {
      static const int bits[] = {8, 16, 32, 64};
      double lo = -ldexp(1, bits[arg->type] - 1), hi = ldexp(1, bits[arg->type]) - 1; /* signed or unsigned */
      if (arg->type == PA_T_I64) hi = ldexp(1, 63) - 1024; /* the largest double below 2^63 */
      if (arg->value != floor(arg->value) || arg->value < lo || arg->value > hi)
        return pt_fail(d, PT_ERR_INPUT, "%s: args[%d].value: expected an integer that fits %s", name, i,
                       type_names[arg->type]);
    }
    return PT_OK;
  }
  if (strcmp(k, "pool") == 0) {
    arg->kind = PA_ARG_POOL;
    const cJSON *t = cJSON_GetObjectItemCaseSensitive(o, "threads");
    double n = cJSON_IsNumber(t) ? t->valuedouble : 1;
    if (!(n >= 1 && n <= PA_MAX_THREADS) || n != floor(n))
      return pt_fail(d, PT_ERR_INPUT, "%s: args[%d].threads: expected 1..%d", name, i, PA_MAX_THREADS);
    arg->threads = (int)n;
    return PT_OK;
  }
  if (strcmp(k, "null") == 0) {
    arg->kind = PA_ARG_NULL;
    return PT_OK;
  }
  return pt_fail(d, PT_ERR_INPUT, "%s: args[%d].kind: unknown kind '%s'", name, i, k);
}

pa_run_spec *pa_run_spec_parse(const char *json, const char *name, pt_diag *d) {
  cJSON *root = cJSON_Parse(json);
  if (!root) {
    pt_fail(d, PT_ERR_INPUT, "%s:%d: malformed JSON", name, pa_json_error_line(json));
    return NULL;
  }
  pt_arena *a = pt_arena_new();
  pa_run_spec *s = pt_alloc(a, sizeof *s);
  s->arena = a;
  s->seed = 1;
  s->timeout_s = 60;
  const cJSON *v = cJSON_GetObjectItemCaseSensitive(root, "version");
  const cJSON *entry = cJSON_GetObjectItemCaseSensitive(root, "entry");
  const cJSON *args = cJSON_GetObjectItemCaseSensitive(root, "args");
  if (v && (!cJSON_IsNumber(v) || v->valuedouble != 1)) {
    pt_fail(d, PT_ERR_INPUT, "%s: version: expected 1", name);
    goto fail;
  }
  if (!cJSON_IsString(entry)) {
    pt_fail(d, PT_ERR_INPUT, "%s: entry: expected the name of the function to run", name);
    goto fail;
  }
  s->entry = pt_strdup(a, entry->valuestring);
  const cJSON *seed = cJSON_GetObjectItemCaseSensitive(root, "seed");
  if (seed) {
    if (!cJSON_IsNumber(seed) || !(seed->valuedouble >= 0 && seed->valuedouble <= 9007199254740992.0) ||
        seed->valuedouble != floor(seed->valuedouble)) {
      pt_fail(d, PT_ERR_INPUT, "%s: seed: expected an integer in [0, 2^53]", name);
      goto fail;
    }
    s->seed = (uint64_t)seed->valuedouble;
  }
  const cJSON *to = cJSON_GetObjectItemCaseSensitive(root, "timeout_s");
  if (to) {
    if (!cJSON_IsNumber(to) || to->valuedouble <= 0) {
      pt_fail(d, PT_ERR_INPUT, "%s: timeout_s: expected a positive number of seconds", name);
      goto fail;
    }
    s->timeout_s = to->valuedouble;
  }
  if (!cJSON_IsArray(args)) {
    pt_fail(d, PT_ERR_INPUT, "%s: args: expected an array (one object per parameter)", name);
    goto fail;
  }
  s->n_args = cJSON_GetArraySize(args);
  s->args = pt_alloc(a, sizeof *s->args * (size_t)(s->n_args + 1));
  for (int i = 0; i < s->n_args; i++)
    if (parse_arg(a, cJSON_GetArrayItem(args, i), name, i, &s->args[i], d)) goto fail;
  cJSON_Delete(root);
  return s;
fail:
  cJSON_Delete(root);
  pt_arena_free(a);
  return NULL;
}

pa_run_spec *pa_run_spec_load(const char *path, pt_diag *d) {
  char *text = pt_read_file(path, NULL, d);
  if (!text) return NULL;
  pa_run_spec *s = pa_run_spec_parse(text, path, d);
  free(text);
  return s;
}

pa_run_spec *pa_run_spec_portent(const char *entry, int n_buffers, const int64_t *floats_per_buffer, int threads,
                                 uint64_t seed) {
  pt_arena *a = pt_arena_new();
  pa_run_spec *s = pt_alloc(a, sizeof *s);
  s->arena = a;
  s->entry = pt_strdup(a, entry);
  s->seed = seed;
  s->timeout_s = 60;
  s->n_args = 2;
  s->args = pt_alloc(a, sizeof *s->args * 2);
  s->args[0].kind = PA_ARG_BUFFER_ARRAY;
  s->args[0].type = PA_T_F32;
  s->args[0].n_counts = n_buffers;
  s->args[0].counts = pt_alloc(a, sizeof(int64_t) * (size_t)(n_buffers + 1));
  memcpy(s->args[0].counts, floats_per_buffer, sizeof(int64_t) * (size_t)n_buffers);
  s->args[1].kind = PA_ARG_POOL;
  s->args[1].threads = threads < 1 ? 1 : threads;
  return s;
}

void pa_run_spec_free(pa_run_spec *s) {
  if (s) pt_arena_free(s->arena);
}
