/* Writes a ptg_target as JSON (the format json_read.c reads back); figures with spread or
 * repetitions become {"value", "spread", "reps"} objects, bare published figures stay numbers. */
#include <cjson/cJSON.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

/* Rounds to 4 significant digits so files diff well and do not claim false precision. */
static double round4(double v) {
  if (v == 0 || isnan(v) || isinf(v)) return v;
  double scale = pow(10, 3 - (int)floor(log10(fabs(v))));
  return round(v * scale) / scale;
}

static void add_fig(cJSON *obj, const char *key, ptg_figure f) {
  if (isnan(f.value) && !f.source) { /* unknown: null, so required keys stay present */
    cJSON_AddNullToObject(obj, key);
    return;
  }
  if (f.reps == 0 && f.spread == 0 && !f.source) {
    cJSON_AddNumberToObject(obj, key, round4(f.value));
    return;
  }
  cJSON *o = cJSON_AddObjectToObject(obj, key);
  if (isnan(f.value))
    cJSON_AddNullToObject(o, "value");
  else
    cJSON_AddNumberToObject(o, "value", round4(f.value));
  if (f.reps) {
    cJSON_AddNumberToObject(o, "spread", round4(f.spread));
    cJSON_AddNumberToObject(o, "reps", f.reps);
  }
  if (f.source) cJSON_AddStringToObject(o, "source", f.source);
}

static void add_str(cJSON *obj, const char *key, const char *s) {
  if (s) cJSON_AddStringToObject(obj, key, s);
}

static void add_strings(cJSON *obj, const char *key, const char **s, int n) {
  if (!n) return;
  cJSON *arr = cJSON_AddArrayToObject(obj, key);
  for (int i = 0; i < n; i++) cJSON_AddItemToArray(arr, cJSON_CreateString(s[i]));
}

/* obj[key] = an array of n objects, row i written by write_row from the row_size-byte row i;
 * nothing when n is 0. The counterpart of json_read.c's rows(). */
typedef void row_writer(cJSON *x, const void *row);
static void add_rows(cJSON *obj, const char *key, const void *rows, int n, size_t row_size, row_writer *write_row) {
  if (!n) return;
  cJSON *arr = cJSON_AddArrayToObject(obj, key);
  for (int i = 0; i < n; i++) {
    cJSON *x = cJSON_CreateObject();
    write_row(x, (const char *)rows + row_size * (size_t)i);
    cJSON_AddItemToArray(arr, x);
  }
}

static void bandwidth_row(cJSON *x, const void *row) {
  const ptg_bandwidth *b = row;
  cJSON_AddNumberToObject(x, "threads", b->threads);
  add_fig(x, "read", b->read);
  add_fig(x, "write", b->write);
  add_fig(x, "copy", b->copy);
  add_fig(x, "triad", b->triad);
}

static void unit_row(cJSON *x, const void *row) {
  const ptg_unit *u = row;
  cJSON_AddStringToObject(x, "name", u->name);
  cJSON_AddNumberToObject(x, "pipes", u->pipes);
  add_str(x, "classes", u->classes);
}

static void runtime_row(cJSON *x, const void *row) {
  const ptg_runtime *r = row;
  cJSON_AddNumberToObject(x, "threads", r->threads);
  add_fig(x, "fork_join_ns", r->fork_join_ns);
  add_fig(x, "barrier_ns", r->barrier_ns);
}

static void set_walk_row(cJSON *x, const void *row) {
  const ptg_set_walk *w = row;
  cJSON_AddNumberToObject(x, "stride", (double)w->stride_bytes);
  cJSON_AddNumberToObject(x, "sets", w->sets);
  cJSON_AddNumberToObject(x, "lines", (double)w->lines);
  add_fig(x, "latency_ns", w->latency_ns);
  add_fig(x, "ns_per_access", w->ns_per_access);
  add_fig(x, "overlapping_misses", w->overlapping_misses);
  if (w->rmw_ns_per_access.value > 0) add_fig(x, "rmw_ns_per_access", w->rmw_ns_per_access);
}

static void set_stream_row(cJSON *x, const void *row) {
  const ptg_set_stream *w = row;
  cJSON_AddNumberToObject(x, "streams", w->streams);
  cJSON_AddNumberToObject(x, "rmw_streams", w->rmw_streams);
  add_fig(x, "ns_per_access", w->ns_per_access);
}

static void set_load_row(cJSON *x, const void *row) {
  const ptg_set_load *w = row;
  cJSON_AddNumberToObject(x, "stride", (double)w->stride_bytes);
  cJSON_AddNumberToObject(x, "sets", w->sets);
  cJSON_AddNumberToObject(x, "lines", (double)w->lines);
  cJSON_AddNumberToObject(x, "loads", w->loads);
  add_fig(x, "ns_per_access", w->ns_per_access);
}

static void strided_walk_row(cJSON *x, const void *row) {
  const ptg_strided_walk *w = row;
  cJSON_AddNumberToObject(x, "stride", (double)w->stride_bytes);
  cJSON_AddNumberToObject(x, "page", (double)w->page_bytes);
  add_fig(x, "ns_per_access", w->ns_per_access);
  add_fig(x, "overlapping_misses", w->overlapping_misses);
}

static cJSON *cpu_json(const ptg_target *t) {
  cJSON *c = cJSON_CreateObject();
  add_str(c, "isa", t->isa);
  add_str(c, "vendor", t->vendor);
  if (t->family) cJSON_AddNumberToObject(c, "family", t->family);
  if (t->model) cJSON_AddNumberToObject(c, "model", t->model);
  add_str(c, "microarchitecture", t->microarchitecture);
  add_str(c, "model_name", t->model_name);
  add_strings(c, "features", t->features, t->n_features);
  cJSON_AddNumberToObject(c, "cores", t->cores);
  cJSON_AddNumberToObject(c, "threads_per_core", t->threads_per_core);
  cJSON_AddNumberToObject(c, "sockets", t->sockets);
  cJSON_AddNumberToObject(c, "numa_nodes", t->numa_nodes);
  add_fig(c, "frequency_ghz", t->frequency_ghz);
  cJSON_AddNumberToObject(c, "native_vector_bits", t->native_vector_bits);
  cJSON_AddNumberToObject(c, "max_vector_bits", t->max_vector_bits);
  add_fig(c, "issue_width", t->issue_width);
  if (!isnan(t->store_forward_fail_cycles.value)) add_fig(c, "store_forward_fail_cycles", t->store_forward_fail_cycles);
  if (!isnan(t->store_forward_cycles.value)) add_fig(c, "store_forward_cycles", t->store_forward_cycles);
  if (!isnan(t->spill_update_cycles.value)) add_fig(c, "spill_update_cycles", t->spill_update_cycles);
  return c;
}

static cJSON *inst_json(const ptg_inst *in) {
  cJSON *e = cJSON_CreateObject();
  cJSON_AddStringToObject(e, "op", ptg_op_name(in->op));
  cJSON_AddStringToObject(e, "type", ptg_elem_name(in->elem));
  cJSON_AddNumberToObject(e, "bits", in->vector_bits);
  if (isnan(in->latency.value) && !in->latency.source)
    cJSON_AddNullToObject(e, "latency");
  else
    add_fig(e, "latency", in->latency);
  if (isnan(in->recip_throughput.value) && !in->recip_throughput.source)
    cJSON_AddNullToObject(e, "recip_throughput");
  else
    add_fig(e, "recip_throughput", in->recip_throughput);
  add_str(e, "unit", in->unit);
  if (!isnan(in->counter_cycles)) cJSON_AddNumberToObject(e, "counter_cycles", round4(in->counter_cycles));
  if (!isnan(in->counter_instructions)) cJSON_AddNumberToObject(e, "counter_instructions", round4(in->counter_instructions));
  add_str(e, "instruction", in->instruction);
  add_str(e, "source", in->source);
  return e;
}

static cJSON *cache_json(const ptg_cache *k) {
  cJSON *e = cJSON_CreateObject();
  cJSON_AddNumberToObject(e, "level", k->level);
  cJSON_AddNumberToObject(e, "size", (double)k->size_bytes);
  cJSON_AddNumberToObject(e, "line", k->line_bytes);
  cJSON_AddNumberToObject(e, "associativity", k->associativity);
  cJSON_AddNumberToObject(e, "shared_by", k->shared_by);
  if (isnan(k->latency_cycles.value))
    cJSON_AddNullToObject(e, "latency_cycles");
  else
    add_fig(e, "latency_cycles", k->latency_cycles);
  add_fig(e, "latency_ns", k->latency_ns);
  if (!isnan(k->overlapping_misses.value) || k->overlapping_misses.source) add_fig(e, "overlapping_misses", k->overlapping_misses);
  if (k->detected_bytes) cJSON_AddNumberToObject(e, "detected_size", (double)k->detected_bytes);
  add_rows(e, "set_walks", k->set_walks, k->n_set_walks, sizeof(ptg_set_walk), set_walk_row);
  add_rows(e, "set_streams", k->set_streams, k->n_set_streams, sizeof(ptg_set_stream), set_stream_row);
  add_rows(e, "set_loads", k->set_loads, k->n_set_loads, sizeof(ptg_set_load), set_load_row);
  add_rows(e, "bandwidth_gbs", k->bandwidth, k->n_bandwidth, sizeof(ptg_bandwidth), bandwidth_row);
  add_str(e, "source", k->source);
  return e;
}

char *ptg_target_to_json(const ptg_target *t, pt_diag *d) {
  if (ptg_target_validate(t, t->name, d) < 0) return NULL;
  cJSON *root = cJSON_CreateObject();
  cJSON_AddNumberToObject(root, "version", t->version);
  cJSON_AddStringToObject(root, "name", t->name);
  cJSON *p = cJSON_AddObjectToObject(root, "provenance");
  add_str(p, "kind", t->provenance);
  add_str(p, "date", t->date);
  add_str(p, "tool", t->tool);
  add_str(p, "host", t->host);
  if (t->repetitions) cJSON_AddNumberToObject(p, "repetitions", t->repetitions);
  add_strings(p, "sources", t->sources, t->n_sources);
  add_str(p, "counters", t->counters);
  add_str(p, "notes", t->notes);
  cJSON_AddItemToObject(root, "cpu", cpu_json(t));
  add_rows(root, "units", t->units, t->n_units, sizeof(ptg_unit), unit_row);
  cJSON *insts = cJSON_AddArrayToObject(root, "instructions");
  for (int i = 0; i < t->n_insts; i++) cJSON_AddItemToArray(insts, inst_json(&t->insts[i]));
  cJSON *caches = cJSON_AddArrayToObject(root, "caches");
  for (int i = 0; i < t->n_caches; i++) cJSON_AddItemToArray(caches, cache_json(&t->caches[i]));
  cJSON *m = cJSON_AddObjectToObject(root, "memory");
  if (isnan(t->memory.latency_ns.value))
    cJSON_AddNullToObject(m, "latency_ns");
  else
    add_fig(m, "latency_ns", t->memory.latency_ns);
  add_fig(m, "latency_cycles", t->memory.latency_cycles);
  add_fig(m, "overlapping_misses", t->memory.overlapping_misses);
  add_rows(m, "bandwidth_gbs", t->memory.bandwidth, t->memory.n_bandwidth, sizeof(ptg_bandwidth), bandwidth_row);
  add_rows(m, "strided_walks", t->memory.strided, t->memory.n_strided, sizeof(ptg_strided_walk), strided_walk_row);
  add_str(m, "source", t->memory.source);
  add_rows(root, "runtime", t->runtime, t->n_runtime, sizeof(ptg_runtime), runtime_row);
  if (t->n_latency_curve) {
    cJSON *lc = cJSON_AddArrayToObject(root, "latency_curve");
    for (int i = 0; i < t->n_latency_curve; i++) {
      const ptg_latency_point *q = &t->latency_curve[i];
      double row[3] = {(double)q->bytes, round4(q->ns), round4(q->cycles)};
      cJSON_AddItemToArray(lc, cJSON_CreateDoubleArray(row, 3));
    }
  }
  if (t->gpu.present) {
    const ptg_gpu *u = &t->gpu;
    cJSON *g = cJSON_AddObjectToObject(root, "gpu");
    add_str(g, "name", u->name);
    add_str(g, "compute_capability", u->compute_capability);
    cJSON_AddNumberToObject(g, "sms", u->sms);
    if (!isnan(u->clock_ghz)) cJSON_AddNumberToObject(g, "clock_ghz", round4(u->clock_ghz));
    if (!isnan(u->memory_clock_ghz)) cJSON_AddNumberToObject(g, "memory_clock_ghz", round4(u->memory_clock_ghz));
    if (u->memory_bytes) cJSON_AddNumberToObject(g, "memory_bytes", (double)u->memory_bytes);
    if (u->l2_bytes) cJSON_AddNumberToObject(g, "l2_bytes", (double)u->l2_bytes);
    if (u->memory_bus_bits) cJSON_AddNumberToObject(g, "memory_bus_bits", u->memory_bus_bits);
#define PTG_X(field, key, lo, hi, doc) add_fig(g, key, u->field);
    PTG_GPU_FIGURES(PTG_X)
#undef PTG_X
    add_str(g, "timer", u->timer);
    add_str(g, "source", u->source);
  }
  char *text = cJSON_Print(root);
  cJSON_Delete(root);
  if (!text) pt_fail(d, PT_ERR_NOMEM, "%s: cannot serialize", t->name);
  return text;
}

int ptg_target_save(const ptg_target *t, const char *path, pt_diag *d) {
  char *text = ptg_target_to_json(t, d);
  if (!text) return d && d->err ? d->err : PT_ERR_INVALID;
  size_t n = strlen(text);
  int err = pt_write_file_atomic(path, text, n, d);
  free(text);
  return err;
}
