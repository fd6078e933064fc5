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

static void add_bandwidth(cJSON *obj, const ptg_bandwidth *bw, int n) {
  if (!n) return;
  cJSON *arr = cJSON_AddArrayToObject(obj, "bandwidth_gbs");
  for (int i = 0; i < n; i++) {
    cJSON *e = cJSON_CreateObject();
    cJSON_AddNumberToObject(e, "threads", bw[i].threads);
    add_fig(e, "read", bw[i].read);
    add_fig(e, "write", bw[i].write);
    add_fig(e, "copy", bw[i].copy);
    add_fig(e, "triad", bw[i].triad);
    cJSON_AddItemToArray(arr, e);
  }
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
  if (k->n_set_walks) {
    cJSON *walks = cJSON_AddArrayToObject(e, "set_walks");
    for (int i = 0; i < k->n_set_walks; i++) {
      const ptg_set_walk *w = &k->set_walks[i];
      cJSON *x = cJSON_CreateObject();
      cJSON_AddNumberToObject(x, "stride", (double)w->stride_bytes);
      cJSON_AddNumberToObject(x, "sets", w->sets);
      cJSON_AddNumberToObject(x, "lines", (double)w->lines);
      add_fig(x, "latency_ns", w->latency_ns);
      add_fig(x, "ns_per_access", w->ns_per_access);
      add_fig(x, "overlapping_misses", w->overlapping_misses);
      if (w->rmw_ns_per_access.value > 0) add_fig(x, "rmw_ns_per_access", w->rmw_ns_per_access);
      cJSON_AddItemToArray(walks, x);
    }
  }
  if (k->n_set_streams) {
    cJSON *rows = cJSON_AddArrayToObject(e, "set_streams");
    for (int i = 0; i < k->n_set_streams; i++) {
      cJSON *x = cJSON_CreateObject();
      cJSON_AddNumberToObject(x, "streams", k->set_streams[i].streams);
      cJSON_AddNumberToObject(x, "rmw_streams", k->set_streams[i].rmw_streams);
      add_fig(x, "ns_per_access", k->set_streams[i].ns_per_access);
      cJSON_AddItemToArray(rows, x);
    }
  }
  if (k->n_set_loads) {
    cJSON *rows = cJSON_AddArrayToObject(e, "set_loads");
    for (int i = 0; i < k->n_set_loads; i++) {
      const ptg_set_load *w = &k->set_loads[i];
      cJSON *x = cJSON_CreateObject();
      cJSON_AddNumberToObject(x, "stride", (double)w->stride_bytes);
      cJSON_AddNumberToObject(x, "sets", w->sets);
      cJSON_AddNumberToObject(x, "lines", (double)w->lines);
      cJSON_AddNumberToObject(x, "loads", w->loads);
      add_fig(x, "ns_per_access", w->ns_per_access);
      cJSON_AddItemToArray(rows, x);
    }
  }
  add_bandwidth(e, k->bandwidth, k->n_bandwidth);
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
  if (t->n_units) {
    cJSON *units = cJSON_AddArrayToObject(root, "units");
    for (int i = 0; i < t->n_units; i++) {
      cJSON *u = cJSON_CreateObject();
      cJSON_AddStringToObject(u, "name", t->units[i].name);
      cJSON_AddNumberToObject(u, "pipes", t->units[i].pipes);
      add_str(u, "classes", t->units[i].classes);
      cJSON_AddItemToArray(units, u);
    }
  }
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
  add_bandwidth(m, t->memory.bandwidth, t->memory.n_bandwidth);
  if (t->memory.n_strided) {
    cJSON *walks = cJSON_AddArrayToObject(m, "strided_walks");
    for (int i = 0; i < t->memory.n_strided; i++) {
      const ptg_strided_walk *w = &t->memory.strided[i];
      cJSON *e = cJSON_CreateObject();
      cJSON_AddNumberToObject(e, "stride", (double)w->stride_bytes);
      cJSON_AddNumberToObject(e, "page", (double)w->page_bytes);
      add_fig(e, "ns_per_access", w->ns_per_access);
      add_fig(e, "overlapping_misses", w->overlapping_misses);
      cJSON_AddItemToArray(walks, e);
    }
  }
  add_str(m, "source", t->memory.source);
  if (t->n_runtime) {
    cJSON *rt = cJSON_AddArrayToObject(root, "runtime");
    for (int i = 0; i < t->n_runtime; i++) {
      cJSON *e = cJSON_CreateObject();
      cJSON_AddNumberToObject(e, "threads", t->runtime[i].threads);
      add_fig(e, "fork_join_ns", t->runtime[i].fork_join_ns);
      add_fig(e, "barrier_ns", t->runtime[i].barrier_ns);
      cJSON_AddItemToArray(rt, e);
    }
  }
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
