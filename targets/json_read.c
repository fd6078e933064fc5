/* Reads a target description from JSON into ptg_target (the only place that sees cJSON
 * on the way in); every error names the file and the JSON path, e.g.
 * "zen4.json: instructions[3].latency: expected a number or null". */
#include <cjson/cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

typedef struct {
  pt_diag *d;
  const char *what;
  pt_arena *a;
  int err;
} reader;

#define PATH_MAX_LEN 160

static void bad(reader *r, const char *path, const char *key, const char *msg) {
  if (r->err) return; /* the first error is the useful one */
  r->err = pt_fail(r->d, PT_ERR_INPUT, "%s: %s%s%s: %s", r->what, path, *path && key ? "." : "", key ? key : "", msg);
}

static const cJSON *field(reader *r, const cJSON *obj, const char *path, const char *key, bool required) {
  const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, key);
  if (!v && required) bad(r, path, key, "missing");
  return v;
}

static double num(reader *r, const cJSON *obj, const char *path, const char *key, bool required, double dflt) {
  const cJSON *v = field(r, obj, path, key, required);
  if (!v) return dflt;
  if (!cJSON_IsNumber(v)) {
    bad(r, path, key, "expected a number");
    return dflt;
  }
  return v->valuedouble;
}

static int integer(reader *r, const cJSON *obj, const char *path, const char *key, bool required, int dflt) {
  double v = num(r, obj, path, key, required, dflt);
  if (v != floor(v) || fabs(v) > 2e9) {
    bad(r, path, key, "expected an integer");
    return dflt;
  }
  return (int)v;
}

static int64_t integer64(reader *r, const cJSON *obj, const char *path, const char *key, bool required) {
  double v = num(r, obj, path, key, required, 0);
  if (v != floor(v) || fabs(v) > 9e15) {
    bad(r, path, key, "expected an integer");
    return 0;
  }
  return (int64_t)v;
}

static const char *str(reader *r, const cJSON *obj, const char *path, const char *key, bool required) {
  const cJSON *v = field(r, obj, path, key, required);
  if (!v || cJSON_IsNull(v)) return NULL;
  if (!cJSON_IsString(v)) {
    bad(r, path, key, "expected a string");
    return NULL;
  }
  return pt_strdup(r->a, v->valuestring);
}

/* A figure: a number, null (unknown), or {"value", "spread", "reps", "source"}. */
static ptg_figure fig(reader *r, const cJSON *obj, const char *path, const char *key, bool required) {
  ptg_figure f = ptg_fig(NAN);
  const cJSON *v = field(r, obj, path, key, required);
  if (!v || cJSON_IsNull(v)) return f;
  if (cJSON_IsNumber(v)) {
    f.value = v->valuedouble;
    return f;
  }
  if (!cJSON_IsObject(v)) {
    bad(r, path, key, "expected a number, null or {\"value\": ...}");
    return f;
  }
  char sub[PATH_MAX_LEN];
  snprintf(sub, sizeof sub, "%s%s%s", path, *path ? "." : "", key);
  const cJSON *val = field(r, v, sub, "value", true);
  if (val && !cJSON_IsNull(val)) f.value = num(r, v, sub, "value", true, NAN);
  f.spread = num(r, v, sub, "spread", false, 0);
  f.reps = integer(r, v, sub, "reps", false, 0);
  f.source = str(r, v, sub, "source", false);
  return f;
}

static const cJSON *array(reader *r, const cJSON *obj, const char *path, const char *key, bool required) {
  const cJSON *v = field(r, obj, path, key, required);
  if (v && !cJSON_IsArray(v)) {
    bad(r, path, key, "expected an array");
    return NULL;
  }
  return v;
}

static const cJSON *object(reader *r, const cJSON *obj, const char *path, const char *key, bool required) {
  const cJSON *v = field(r, obj, path, key, required);
  if (v && !cJSON_IsObject(v)) {
    bad(r, path, key, "expected an object");
    return NULL;
  }
  return v;
}

static const char **strings(reader *r, const cJSON *obj, const char *path, const char *key, int *n) {
  const cJSON *arr = array(r, obj, path, key, false);
  *n = arr ? cJSON_GetArraySize(arr) : 0;
  const char **out = pt_alloc(r->a, sizeof(char *) * (size_t)(*n + 1));
  for (int i = 0; i < *n; i++) {
    const cJSON *s = cJSON_GetArrayItem(arr, i);
    if (!cJSON_IsString(s)) {
      char idx[32];
      snprintf(idx, sizeof idx, "%s[%d]", key, i);
      bad(r, path, idx, "expected a string");
      *n = i;
      break;
    }
    out[i] = pt_strdup(r->a, s->valuestring);
  }
  return out;
}

/* An optional array of objects obj[key], one row_size-byte row each, read by read_row into an
 * arena array with one spare zeroed row; *n gets the length. Rows stop at the first error (the
 * file is refused then anyway). The caches' set walks, streams and loads, the bandwidths and the
 * memory's strided walks are all such arrays; only their fields differ. */
typedef void row_reader(reader *r, const cJSON *e, const char *path, void *row);
static void *rows(reader *r, const cJSON *obj, const char *path, const char *key, size_t row_size, row_reader *read_row,
                  int *n) {
  const cJSON *arr = array(r, obj, path, key, false);
  *n = arr ? cJSON_GetArraySize(arr) : 0;
  char *out = pt_alloc(r->a, row_size * (size_t)(*n + 1));
  for (int i = 0; i < *n && !r->err; i++) {
    char p[PATH_MAX_LEN + 32]; /* path: a caches[] entry's or "memory" */
    snprintf(p, sizeof p, "%.*s%s%s[%d]", PATH_MAX_LEN - 1, path, *path ? "." : "", key, i);
    const cJSON *e = cJSON_GetArrayItem(arr, i);
    if (!cJSON_IsObject(e)) {
      bad(r, p, NULL, "expected an object");
      break;
    }
    read_row(r, e, p, out + row_size * (size_t)i);
  }
  return out;
}

static void bandwidth_row(reader *r, const cJSON *e, const char *p, void *row) {
  ptg_bandwidth *b = row;
  b->threads = integer(r, e, p, "threads", true, 1);
  b->read = fig(r, e, p, "read", false);
  b->write = fig(r, e, p, "write", false);
  b->copy = fig(r, e, p, "copy", false);
  b->triad = fig(r, e, p, "triad", false);
}

static ptg_bandwidth *bandwidths(reader *r, const cJSON *obj, const char *path, int *n) {
  return rows(r, obj, path, "bandwidth_gbs", sizeof(ptg_bandwidth), bandwidth_row, n);
}

static void read_provenance(reader *r, ptg_target *t, const cJSON *root) {
  const cJSON *p = object(r, root, "", "provenance", true);
  if (!p) return;
  t->provenance = str(r, p, "provenance", "kind", true);
  t->date = str(r, p, "provenance", "date", false);
  t->tool = str(r, p, "provenance", "tool", false);
  t->host = str(r, p, "provenance", "host", false);
  t->repetitions = integer(r, p, "provenance", "repetitions", false, 0);
  t->sources = strings(r, p, "provenance", "sources", &t->n_sources);
  t->counters = str(r, p, "provenance", "counters", false);
  t->notes = str(r, p, "provenance", "notes", false);
}

static void read_cpu(reader *r, ptg_target *t, const cJSON *root) {
  const cJSON *c = object(r, root, "", "cpu", true);
  if (!c) return;
  t->isa = str(r, c, "cpu", "isa", true);
  t->vendor = str(r, c, "cpu", "vendor", false);
  t->family = integer(r, c, "cpu", "family", false, 0);
  t->model = integer(r, c, "cpu", "model", false, 0);
  t->microarchitecture = str(r, c, "cpu", "microarchitecture", true);
  t->model_name = str(r, c, "cpu", "model_name", false);
  t->features = strings(r, c, "cpu", "features", &t->n_features);
  t->cores = integer(r, c, "cpu", "cores", true, 0);
  t->threads_per_core = integer(r, c, "cpu", "threads_per_core", false, 1);
  t->sockets = integer(r, c, "cpu", "sockets", false, 1);
  t->numa_nodes = integer(r, c, "cpu", "numa_nodes", false, 1);
  t->frequency_ghz = fig(r, c, "cpu", "frequency_ghz", true);
  t->native_vector_bits = integer(r, c, "cpu", "native_vector_bits", true, 0);
  t->max_vector_bits = integer(r, c, "cpu", "max_vector_bits", false, t->native_vector_bits);
  t->issue_width = fig(r, c, "cpu", "issue_width", true);
  t->store_forward_fail_cycles = fig(r, c, "cpu", "store_forward_fail_cycles", false);
  t->store_forward_cycles = fig(r, c, "cpu", "store_forward_cycles", false);
  t->spill_update_cycles = fig(r, c, "cpu", "spill_update_cycles", false);
}

static void read_insts(reader *r, ptg_target *t, const cJSON *root) {
  const cJSON *arr = array(r, root, "", "instructions", true);
  for (int i = 0; arr && i < cJSON_GetArraySize(arr) && !r->err; i++) {
    char p[PATH_MAX_LEN];
    snprintf(p, sizeof p, "instructions[%d]", i);
    const cJSON *e = cJSON_GetArrayItem(arr, i);
    if (!cJSON_IsObject(e)) {
      bad(r, p, NULL, "expected an object");
      return;
    }
    const char *op = str(r, e, p, "op", true), *type = str(r, e, p, "type", true);
    if (r->err) return;
    int opi = ptg_op_from_name(op), ei = ptg_elem_from_name(type);
    if (opi < 0) bad(r, p, "op", "unknown operation class (see PTG_OP_CLASSES in targets/targets.h)");
    if (ei < 0) bad(r, p, "type", "unknown element type (i8 i16 i32 i64 f16 bf16 f32 f64)");
    if (r->err) return;
    ptg_inst *in = ptg_target_add_inst(t, opi, ei, integer(r, e, p, "bits", true, 0));
    in->latency = fig(r, e, p, "latency", true);
    in->recip_throughput = fig(r, e, p, "recip_throughput", true);
    in->unit = str(r, e, p, "unit", false);
    in->counter_cycles = num(r, e, p, "counter_cycles", false, NAN);
    in->counter_instructions = num(r, e, p, "counter_instructions", false, NAN);
    in->instruction = str(r, e, p, "instruction", false);
    in->source = str(r, e, p, "source", false);
  }
}

static void read_units(reader *r, ptg_target *t, const cJSON *root) {
  const cJSON *arr = array(r, root, "", "units", false);
  t->n_units = arr ? cJSON_GetArraySize(arr) : 0;
  t->units = pt_alloc(r->a, sizeof(ptg_unit) * (size_t)(t->n_units + 1));
  for (int i = 0; i < t->n_units && !r->err; i++) {
    char p[PATH_MAX_LEN];
    snprintf(p, sizeof p, "units[%d]", i);
    const cJSON *e = cJSON_GetArrayItem(arr, i);
    t->units[i].name = str(r, e, p, "name", true);
    t->units[i].pipes = integer(r, e, p, "pipes", false, 1);
    t->units[i].classes = str(r, e, p, "classes", false);
  }
}

static void set_walk_row(reader *r, const cJSON *e, const char *p, void *row) {
  ptg_set_walk *w = row;
  w->stride_bytes = integer64(r, e, p, "stride", true);
  w->sets = integer(r, e, p, "sets", true, 0);
  w->lines = integer64(r, e, p, "lines", true);
  w->latency_ns = fig(r, e, p, "latency_ns", true);
  w->ns_per_access = fig(r, e, p, "ns_per_access", true);
  w->overlapping_misses = fig(r, e, p, "overlapping_misses", true);
  w->rmw_ns_per_access = fig(r, e, p, "rmw_ns_per_access", false);
}

static void set_stream_row(reader *r, const cJSON *e, const char *p, void *row) {
  ptg_set_stream *w = row;
  w->streams = integer(r, e, p, "streams", true, 0);
  w->rmw_streams = integer(r, e, p, "rmw_streams", true, 0);
  w->ns_per_access = fig(r, e, p, "ns_per_access", true);
}

static void set_load_row(reader *r, const cJSON *e, const char *p, void *row) {
  ptg_set_load *w = row;
  w->stride_bytes = integer64(r, e, p, "stride", true);
  w->sets = integer(r, e, p, "sets", true, 0);
  w->lines = integer64(r, e, p, "lines", true);
  w->loads = integer(r, e, p, "loads", true, 0);
  w->ns_per_access = fig(r, e, p, "ns_per_access", true);
}

static void strided_walk_row(reader *r, const cJSON *e, const char *p, void *row) {
  ptg_strided_walk *w = row;
  w->stride_bytes = integer64(r, e, p, "stride", true);
  w->page_bytes = integer64(r, e, p, "page", true);
  w->ns_per_access = fig(r, e, p, "ns_per_access", true);
  w->overlapping_misses = fig(r, e, p, "overlapping_misses", true);
}

static void read_caches(reader *r, ptg_target *t, const cJSON *root) {
  const cJSON *arr = array(r, root, "", "caches", true);
  t->n_caches = arr ? cJSON_GetArraySize(arr) : 0;
  t->caches = pt_alloc(r->a, sizeof(ptg_cache) * (size_t)(t->n_caches + 1));
  for (int i = 0; i < t->n_caches && !r->err; i++) {
    char p[PATH_MAX_LEN];
    snprintf(p, sizeof p, "caches[%d]", i);
    const cJSON *e = cJSON_GetArrayItem(arr, i);
    if (!cJSON_IsObject(e)) {
      bad(r, p, NULL, "expected an object");
      return;
    }
    ptg_cache *c = &t->caches[i];
    c->level = integer(r, e, p, "level", true, 0);
    c->size_bytes = integer64(r, e, p, "size", true);
    c->line_bytes = integer(r, e, p, "line", true, 64);
    c->associativity = integer(r, e, p, "associativity", false, 0);
    c->shared_by = integer(r, e, p, "shared_by", false, 1);
    c->latency_cycles = fig(r, e, p, "latency_cycles", true);
    c->latency_ns = fig(r, e, p, "latency_ns", false);
    c->overlapping_misses = fig(r, e, p, "overlapping_misses", false);
    c->detected_bytes = integer64(r, e, p, "detected_size", false);
    c->set_walks = rows(r, e, p, "set_walks", sizeof(ptg_set_walk), set_walk_row, &c->n_set_walks);
    c->set_streams = rows(r, e, p, "set_streams", sizeof(ptg_set_stream), set_stream_row, &c->n_set_streams);
    c->set_loads = rows(r, e, p, "set_loads", sizeof(ptg_set_load), set_load_row, &c->n_set_loads);
    c->bandwidth = bandwidths(r, e, p, &c->n_bandwidth);
    c->source = str(r, e, p, "source", false);
  }
}

static void read_memory(reader *r, ptg_target *t, const cJSON *root) {
  const cJSON *m = object(r, root, "", "memory", true);
  if (!m) return;
  t->memory.latency_ns = fig(r, m, "memory", "latency_ns", true);
  t->memory.latency_cycles = fig(r, m, "memory", "latency_cycles", false);
  t->memory.overlapping_misses = fig(r, m, "memory", "overlapping_misses", false);
  t->memory.bandwidth = bandwidths(r, m, "memory", &t->memory.n_bandwidth);
  t->memory.strided = rows(r, m, "memory", "strided_walks", sizeof(ptg_strided_walk), strided_walk_row, &t->memory.n_strided);
  t->memory.source = str(r, m, "memory", "source", false);
}

static void read_runtime(reader *r, ptg_target *t, const cJSON *root) {
  const cJSON *arr = array(r, root, "", "runtime", false);
  t->n_runtime = arr ? cJSON_GetArraySize(arr) : 0;
  t->runtime = pt_alloc(r->a, sizeof(ptg_runtime) * (size_t)(t->n_runtime + 1));
  for (int i = 0; i < t->n_runtime && !r->err; i++) {
    char p[PATH_MAX_LEN];
    snprintf(p, sizeof p, "runtime[%d]", i);
    const cJSON *e = cJSON_GetArrayItem(arr, i);
    t->runtime[i].threads = integer(r, e, p, "threads", true, 1);
    t->runtime[i].fork_join_ns = fig(r, e, p, "fork_join_ns", true);
    t->runtime[i].barrier_ns = fig(r, e, p, "barrier_ns", false);
  }
}

static void read_curve(reader *r, ptg_target *t, const cJSON *root) {
  const cJSON *arr = array(r, root, "", "latency_curve", false);
  t->n_latency_curve = arr ? cJSON_GetArraySize(arr) : 0;
  t->latency_curve = pt_alloc(r->a, sizeof(ptg_latency_point) * (size_t)(t->n_latency_curve + 1));
  for (int i = 0; i < t->n_latency_curve && !r->err; i++) {
    char p[PATH_MAX_LEN];
    snprintf(p, sizeof p, "latency_curve[%d]", i);
    const cJSON *e = cJSON_GetArrayItem(arr, i);
    if (!cJSON_IsArray(e) || cJSON_GetArraySize(e) != 3 || !cJSON_IsNumber(cJSON_GetArrayItem(e, 0)) ||
        !cJSON_IsNumber(cJSON_GetArrayItem(e, 1)) || !cJSON_IsNumber(cJSON_GetArrayItem(e, 2))) {
      bad(r, p, NULL, "expected [bytes, ns, cycles]");
      return;
    }
    t->latency_curve[i].bytes = (int64_t)cJSON_GetArrayItem(e, 0)->valuedouble;
    t->latency_curve[i].ns = cJSON_GetArrayItem(e, 1)->valuedouble;
    t->latency_curve[i].cycles = cJSON_GetArrayItem(e, 2)->valuedouble;
  }
}

static void read_gpu(reader *r, ptg_target *t, const cJSON *root) {
  const cJSON *g = object(r, root, "", "gpu", false);
  if (!g) return;
  ptg_gpu *u = &t->gpu;
  u->present = true;
  u->name = str(r, g, "gpu", "name", true);
  u->compute_capability = str(r, g, "gpu", "compute_capability", false);
  u->sms = integer(r, g, "gpu", "sms", true, 0);
  u->clock_ghz = num(r, g, "gpu", "clock_ghz", false, NAN);
  u->memory_clock_ghz = num(r, g, "gpu", "memory_clock_ghz", false, NAN);
  u->memory_bytes = integer64(r, g, "gpu", "memory_bytes", false);
  u->l2_bytes = integer64(r, g, "gpu", "l2_bytes", false);
  u->memory_bus_bits = integer(r, g, "gpu", "memory_bus_bits", false, 0);
#define PTG_X(field, key, lo, hi, doc) u->field = fig(r, g, "gpu", key, false);
  PTG_GPU_FIGURES(PTG_X)
#undef PTG_X
  u->timer = str(r, g, "gpu", "timer", false);
  u->source = str(r, g, "gpu", "source", false);
}

ptg_target *ptg_target_parse(const char *json, const char *what, pt_diag *d) {
  cJSON *root = cJSON_Parse(json);
  if (!root) {
    const char *at = cJSON_GetErrorPtr();
    size_t off = at && at >= json ? (size_t)(at - json) : 0;
    pt_fail(d, PT_ERR_INPUT, "%s: not valid JSON (near byte %zu)", what, off);
    return NULL;
  }
  ptg_target *t = ptg_target_new(NULL);
  reader r = {.d = d, .what = what, .a = t->arena};
  if (!cJSON_IsObject(root)) bad(&r, "", NULL, "expected a JSON object at the top level");
  if (!r.err) {
    t->version = integer(&r, root, "", "version", true, 0);
    if (!r.err && t->version != PTG_FORMAT_VERSION) {
      char msg[96];
      snprintf(msg, sizeof msg, "unsupported version %d (this portent reads %d)", t->version, PTG_FORMAT_VERSION);
      bad(&r, "", "version", msg);
    }
  }
  if (!r.err) t->name = str(&r, root, "", "name", true);
  if (!r.err) read_provenance(&r, t, root);
  if (!r.err) read_cpu(&r, t, root);
  if (!r.err) read_units(&r, t, root);
  if (!r.err) read_insts(&r, t, root);
  if (!r.err) read_caches(&r, t, root);
  if (!r.err) read_memory(&r, t, root);
  if (!r.err) read_runtime(&r, t, root);
  if (!r.err) read_curve(&r, t, root);
  if (!r.err) read_gpu(&r, t, root);
  cJSON_Delete(root);
  if (!r.err && ptg_target_validate(t, what, d) < 0) r.err = PT_ERR_INVALID;
  if (r.err) {
    ptg_target_free(t);
    return NULL;
  }
  return t;
}

ptg_target *ptg_target_load(const char *path, pt_diag *d) {
  char *text = pt_read_file(path, NULL, d);
  if (!text) return NULL;
  ptg_target *t = ptg_target_parse(text, path, d);
  free(text);
  return t;
}
