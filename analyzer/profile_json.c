/* The program-profile file (docs/formats.md, "Program profile"): writing it (deterministic,
 * atomically) and reading it back into the typed structs the predictor uses. */
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "internal.h"

/* ------------------------------------------------------------------ writing */
static cJSON *int_array(const int *xs, int n) {
  cJSON *a = cJSON_CreateArray();
  for (int i = 0; i < n; i++) cJSON_AddItemToArray(a, cJSON_CreateNumber(xs[i]));
  return a;
}

static cJSON *features_json(const pa_features *f) {
  cJSON *o = cJSON_CreateObject();
  cJSON_AddNumberToObject(o, "instructions", (double)f->instructions);
  cJSON *ops = cJSON_AddObjectToObject(o, "by_op");
  for (int k = 0; k < PA_OP_COUNT; k++)
    if (f->by_op[k]) cJSON_AddNumberToObject(ops, pa_opclass_name(k), (double)f->by_op[k]);
  cJSON_AddNumberToObject(o, "loads", (double)f->loads);
  cJSON_AddNumberToObject(o, "stores", (double)f->stores);
  cJSON_AddNumberToObject(o, "load_bytes", (double)f->load_bytes);
  cJSON_AddNumberToObject(o, "store_bytes", (double)f->store_bytes);
  cJSON_AddNumberToObject(o, "vector_instructions", (double)f->vector_instructions);
  return o;
}

static cJSON *hist_json(const pa_reuse_hist *h) {
  cJSON *o = cJSON_CreateObject();
  cJSON *b = cJSON_AddArrayToObject(o, "bins");
  int last = PA_REUSE_BINS - 1;
  while (last >= 0 && h->bins[last] == 0) last--;
  for (int k = 0; k <= last; k++) cJSON_AddItemToArray(b, cJSON_CreateNumber(h->bins[k]));
  cJSON_AddNumberToObject(o, "cold", h->cold);
  cJSON_AddNumberToObject(o, "accesses", h->accesses);
  if (h->has_quarters) { /* optional (session 10): older readers ignore them */
    cJSON *qs = cJSON_AddArrayToObject(o, "quarters");
    for (int k = 0; k <= last; k++) {
      cJSON *q = cJSON_CreateArray();
      for (int i = 0; i < 4; i++) cJSON_AddItemToArray(q, cJSON_CreateNumber(h->quarters[k][i]));
      cJSON_AddItemToArray(qs, q);
    }
  }
  if (h->has_sets) {
    cJSON *ss = cJSON_AddArrayToObject(o, "sets");
    int top = PA_SET_BINS - 1;
    while (top >= 0 && h->sets[top] == 0) top--;
    for (int k = 0; k <= top; k++) cJSON_AddItemToArray(ss, cJSON_CreateNumber(h->sets[k]));
  }
  if (h->n_llc) { /* optional (session 24): only profiles asked for them (pa_options.llc_sets) */
    cJSON *ls = cJSON_AddArrayToObject(o, "llc_sets");
    for (int i = 0; i < h->n_llc; i++) {
      cJSON *l = cJSON_CreateObject(), *lb;
      cJSON_AddNumberToObject(l, "sets", h->llc[i].sets);
      lb = cJSON_AddArrayToObject(l, "bins");
      int top = PA_SET_BINS - 1;
      while (top >= 0 && h->llc[i].bins[top] == 0) top--;
      for (int k = 0; k <= top; k++) cJSON_AddItemToArray(lb, cJSON_CreateNumber(h->llc[i].bins[k]));
      cJSON_AddItemToArray(ls, l);
    }
  }
  return o;
}

static cJSON *block_json(const pa_block *b) {
  cJSON *o = cJSON_CreateObject();
  cJSON_AddStringToObject(o, "name", b->name);
  cJSON_AddItemToObject(o, "preds", int_array(b->preds, b->n_preds));
  cJSON_AddItemToObject(o, "succs", int_array(b->succs, b->n_succs));
  cJSON_AddNumberToObject(o, "idom", b->idom);
  cJSON_AddNumberToObject(o, "loop", b->loop);
  cJSON_AddNumberToObject(o, "count", (double)b->count);
  cJSON_AddNumberToObject(o, "count_per_call", b->count_per_call);
  cJSON_AddNumberToObject(o, "static_count_per_call", b->static_count_per_call);
  cJSON_AddItemToObject(o, "features", features_json(&b->features));
  cJSON *nodes = cJSON_AddArrayToObject(o, "nodes");
  for (int i = 0; i < b->n_nodes; i++) {
    const pa_node *n = &b->nodes[i];
    cJSON *x = cJSON_CreateObject();
    cJSON_AddStringToObject(x, "op", pa_opclass_name(n->op));
    cJSON_AddStringToObject(x, "opcode", n->opcode);
    cJSON_AddStringToObject(x, "type", n->elem);
    cJSON_AddNumberToObject(x, "lanes", n->lanes);
    cJSON_AddNumberToObject(x, "bits", n->bits);
    cJSON_AddBoolToObject(x, "memory", n->is_memory);
    if (n->is_memory) cJSON_AddNumberToObject(x, "bytes", n->bytes);
    if (n->masked) { /* only on masked nodes: older readers see the nodes they knew */
      cJSON_AddBoolToObject(x, "masked", true);
      cJSON_AddNumberToObject(x, "mask", n->mask);
      cJSON_AddNumberToObject(x, "mask_lanes", n->mask_lanes);
    }
    if (n->n_strides > 0) { /* bytes per iteration of each enclosing loop; null: not affine */
      cJSON *st = cJSON_AddArrayToObject(x, "strides");
      for (int k = 0; k < n->n_strides; k++)
        cJSON_AddItemToArray(st, n->strides[k] == PA_STRIDE_UNKNOWN ? cJSON_CreateNull()
                                                                   : cJSON_CreateNumber((double)n->strides[k]));
    }
    if (n->array > 0) cJSON_AddNumberToObject(x, "array", n->array);
    if (n->n_strides > 0 && n->periods) { /* iterations after which a wrapping address is back (0: no wrap) */
      cJSON *pe = cJSON_AddArrayToObject(x, "periods"), *ps = cJSON_AddArrayToObject(x, "period_strides");
      for (int k = 0; k < n->n_strides; k++) {
        cJSON_AddItemToArray(pe, cJSON_CreateNumber((double)n->periods[k]));
        cJSON_AddItemToArray(ps, cJSON_CreateNumber((double)n->period_strides[k]));
      }
    }
    if (n->array > 0 && n->has_offset) cJSON_AddNumberToObject(x, "offset", (double)n->offset);
    if (n->lane_step != 0) cJSON_AddNumberToObject(x, "lane_step", (double)n->lane_step);
    cJSON_AddItemToArray(nodes, x);
  }
  cJSON *edges = cJSON_AddArrayToObject(o, "edges");
  for (int i = 0; i < b->n_edges; i++) {
    cJSON *e = cJSON_CreateArray();
    cJSON_AddItemToArray(e, cJSON_CreateNumber(b->edges[i].src));
    cJSON_AddItemToArray(e, cJSON_CreateNumber(b->edges[i].dst));
    cJSON_AddItemToArray(e, cJSON_CreateString(pa_edge_kind_name(b->edges[i].kind)));
    cJSON_AddItemToArray(edges, e);
  }
  return o;
}

static cJSON *function_json(const pa_function *f) {
  cJSON *o = cJSON_CreateObject();
  cJSON_AddStringToObject(o, "name", f->name);
  cJSON_AddNumberToObject(o, "calls", (double)f->calls);
  cJSON_AddBoolToObject(o, "parallel", f->parallel);
  cJSON_AddNumberToObject(o, "threads", f->threads);
  cJSON_AddItemToObject(o, "features", features_json(&f->features));
  cJSON *loops = cJSON_AddArrayToObject(o, "loops");
  for (int i = 0; i < f->n_loops; i++) {
    const pa_loop *l = &f->loops[i];
    cJSON *x = cJSON_CreateObject();
    cJSON_AddNumberToObject(x, "header", l->header);
    cJSON_AddNumberToObject(x, "parent", l->parent);
    cJSON_AddNumberToObject(x, "depth", l->depth);
    cJSON_AddNumberToObject(x, "preheader", l->preheader);
    cJSON_AddItemToObject(x, "blocks", int_array(l->blocks, l->n_blocks));
    cJSON_AddItemToObject(x, "latches", int_array(l->latches, l->n_latches));
    cJSON_AddNumberToObject(x, "trip_count", (double)l->trip_count);
    cJSON_AddItemToArray(loops, x);
  }
  cJSON *blocks = cJSON_AddArrayToObject(o, "blocks");
  for (int i = 0; i < f->n_blocks; i++) cJSON_AddItemToArray(blocks, block_json(&f->blocks[i]));
  cJSON *carried = cJSON_AddArrayToObject(o, "carried_edges");
  for (int i = 0; i < f->n_carried; i++) {
    const pa_carried_edge *e = &f->carried[i];
    int v[7] = {e->src_block, e->src_node, e->phi_block, e->phi_node, e->dst_block, e->dst_node, e->distance};
    cJSON_AddItemToArray(carried, int_array(v, 7));
  }
  if (f->n_chunk_work > 0) { /* optional: parallel bodies with static parts only */
    cJSON *chunks = cJSON_AddObjectToObject(o, "chunks");
    cJSON_AddNumberToObject(chunks, "iterations", (double)f->chunk_iterations);
    cJSON_AddItemToObject(chunks, "work", cJSON_CreateDoubleArray(f->chunk_work, f->n_chunk_work));
  }
  return o;
}

char *pa_profile_to_json(const pa_profile *p) {
  cJSON *o = cJSON_CreateObject();
  cJSON_AddNumberToObject(o, "version", p->version);
  cJSON_AddStringToObject(o, "kind", "portent-profile");
  cJSON_AddStringToObject(o, "module_id", p->module_id);
  cJSON_AddStringToObject(o, "source", p->source);
  cJSON_AddStringToObject(o, "counts_source", p->counts_source);
  if (p->entry) cJSON_AddStringToObject(o, "entry", p->entry);
  else cJSON_AddNullToObject(o, "entry");
  cJSON_AddNumberToObject(o, "seed", (double)p->seed);
  cJSON_AddNumberToObject(o, "threads", p->threads);
  cJSON_AddItemToObject(o, "features", features_json(&p->features));
  cJSON *dyn = cJSON_AddObjectToObject(o, "dynamic_by_op");
  for (int k = 0; k < PA_OP_COUNT; k++)
    if (p->dynamic_by_op[k] != 0) cJSON_AddNumberToObject(dyn, pa_opclass_name(k), p->dynamic_by_op[k]);
  cJSON *fns = cJSON_AddArrayToObject(o, "functions");
  for (int i = 0; i < p->n_functions; i++) cJSON_AddItemToArray(fns, function_json(&p->functions[i]));
  cJSON *reuse = cJSON_AddObjectToObject(o, "reuse");
  cJSON_AddNumberToObject(reuse, "line_bytes", PA_LINE_BYTES);
  cJSON_AddNumberToObject(reuse, "sample_rate", p->sample_rate);
  cJSON_AddNumberToObject(reuse, "exact_window", (double)p->exact_window);
  if (p->trace_share > 0) cJSON_AddNumberToObject(reuse, "trace_share", p->trace_share);
  if (p->window_share > 0) cJSON_AddNumberToObject(reuse, "window_share", p->window_share);
  if (p->line_filter) cJSON_AddBoolToObject(reuse, "line_filter", 1);
  if (p->locals_lines > 0) cJSON_AddNumberToObject(reuse, "locals_lines", (double)p->locals_lines);
  cJSON_AddItemToObject(reuse, "total", hist_json(&p->reuse_total));
  cJSON *byf = cJSON_AddArrayToObject(reuse, "functions");
  for (int i = 0; i < p->n_functions; i++) {
    if (p->reuse_by_function[i].accesses == 0) continue;
    cJSON *x = hist_json(&p->reuse_by_function[i]);
    cJSON_AddNumberToObject(x, "function", i);
    cJSON_AddItemToArray(byf, x);
  }
  cJSON *byt = cJSON_AddArrayToObject(reuse, "threads");
  for (int i = 0; i < p->n_reuse; i++) {
    cJSON *x = hist_json(&p->reuse[i].hist);
    cJSON_AddNumberToObject(x, "function", p->reuse[i].function);
    cJSON_AddNumberToObject(x, "thread", p->reuse[i].thread);
    cJSON_AddItemToArray(byt, x);
  }
  cJSON *prov = cJSON_AddObjectToObject(o, "provenance");
  cJSON_AddStringToObject(prov, "tool", "portent " PORTENT_VERSION);
  cJSON_AddStringToObject(prov, "llvm", "19");
  char *s = cJSON_PrintUnformatted(o);
  cJSON_Delete(o);
  return s;
}

int pa_profile_save(const pa_profile *p, const char *path, pt_diag *d) {
  char *s = pa_profile_to_json(p);
  if (!s) return pt_fail(d, PT_ERR_NOMEM, "%s: cannot print the profile", path);
  size_t n = strlen(s);
  s[n] = '\n'; /* replace the terminator: the file ends with a newline */
  int err = pt_write_file_atomic(path, s, n + 1, d);
  free(s);
  return err;
}

/* ------------------------------------------------------------------ reading */
/* JSON paths for messages; a long path is cut, which is fine for a message. */
static void path_fmt(char *buf, size_t n, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void path_fmt(char *buf, size_t n, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(buf, n, fmt, ap);
  va_end(ap);
}

typedef struct {
  pt_arena *a;
  const char *file;
  pt_diag *d;
  int err;
  char path[400];
  /* opcode and type names, one copy each: equal names are one pointer, which the predictor
   * hashes in place of the characters (predictor/predict.c block_key) */
  const char *names[256];
  int n_names;
} reader;

static bool bad(reader *r, const char *what) {
  if (!r->err) r->err = pt_fail(r->d, PT_ERR_INPUT, "%s: %s: expected %s", r->file, r->path, what);
  return false;
}

static const cJSON *field(reader *r, const cJSON *o, const char *key, const char *ctx) {
  path_fmt(r->path, sizeof r->path, "%s.%s", ctx, key);
  return cJSON_GetObjectItemCaseSensitive(o, key);
}

static double num(reader *r, const cJSON *o, const char *key, const char *ctx) {
  const cJSON *x = field(r, o, key, ctx);
  if (!cJSON_IsNumber(x)) return bad(r, "a number"), 0;
  return x->valuedouble;
}

/* Integers: whole numbers in the C type's range (casting anything else is undefined). */
static double whole(reader *r, const cJSON *o, const char *key, const char *ctx, double lo, double hi) {
  double v = num(r, o, key, ctx);
  if (!(v >= lo && v <= hi && v == floor(v))) return bad(r, "an integer in range"), 0;
  return v;
}

static int inum(reader *r, const cJSON *o, const char *key, const char *ctx) {
  return (int)whole(r, o, key, ctx, INT_MIN, INT_MAX);
}

static int64_t lnum(reader *r, const cJSON *o, const char *key, const char *ctx) {
  return (int64_t)whole(r, o, key, ctx, -9.2e18, 9.2e18);
}

static uint64_t unum(reader *r, const cJSON *o, const char *key, const char *ctx) {
  return (uint64_t)whole(r, o, key, ctx, 0, 1.8e19);
}

/* A string field's text in the document (NULL, reported, when it is not a string). */
static const char *text(reader *r, const cJSON *o, const char *key, const char *ctx) {
  const cJSON *x = field(r, o, key, ctx);
  if (!cJSON_IsString(x)) return bad(r, "a string"), NULL;
  return x->valuestring;
}

static const char *str(reader *r, const cJSON *o, const char *key, const char *ctx) {
  const char *t = text(r, o, key, ctx);
  return t ? pt_strdup(r->a, t) : "";
}

/* A string field, interned among the reader's names (up to 256 distinct; copies beyond). */
static const char *name(reader *r, const cJSON *o, const char *key, const char *ctx) {
  const char *t = text(r, o, key, ctx);
  if (!t) return "";
  for (int i = 0; i < r->n_names; i++)
    if (strcmp(r->names[i], t) == 0) return r->names[i];
  const char *s = pt_strdup(r->a, t);
  if (r->n_names < (int)PT_ARRAY_LEN(r->names)) r->names[r->n_names++] = s;
  return s;
}

static int *ints(reader *r, const cJSON *o, const char *key, const char *ctx, int *n, int limit) {
  const cJSON *x = field(r, o, key, ctx);
  *n = 0;
  if (!cJSON_IsArray(x)) return bad(r, "an array of indices"), NULL;
  int cnt = cJSON_GetArraySize(x);
  int *v = pt_alloc(r->a, sizeof(int) * (size_t)(cnt + 1));
  for (int i = 0; i < cnt; i++) {
    const cJSON *e = cJSON_GetArrayItem(x, i);
    if (!cJSON_IsNumber(e) || e->valueint < 0 || e->valueint >= limit) return bad(r, "indices in range"), NULL;
    v[i] = e->valueint;
  }
  *n = cnt;
  return v;
}

static void read_features(reader *r, const cJSON *o, const char *ctx, pa_features *f) {
  char c[160];
  path_fmt(c, sizeof c, "%s.features", ctx);
  const cJSON *x = field(r, o, "features", ctx);
  if (!cJSON_IsObject(x)) {
    bad(r, "an object");
    return;
  }
  f->instructions = lnum(r, x, "instructions", c);
  f->loads = lnum(r, x, "loads", c);
  f->stores = lnum(r, x, "stores", c);
  f->load_bytes = lnum(r, x, "load_bytes", c);
  f->store_bytes = lnum(r, x, "store_bytes", c);
  f->vector_instructions = lnum(r, x, "vector_instructions", c);
  const cJSON *ops = field(r, x, "by_op", c), *e;
  if (!cJSON_IsObject(ops)) {
    bad(r, "an object");
    return;
  }
  cJSON_ArrayForEach(e, ops) {
    int k = pa_opclass_from_name(e->string);
    if (k < 0 || !cJSON_IsNumber(e) || !(fabs(e->valuedouble) <= 9.2e18)) {
      path_fmt(r->path, sizeof r->path, "%s.by_op.%s", c, e->string);
      bad(r, "a known operation class with a count");
      return;
    }
    f->by_op[k] = (int64_t)e->valuedouble;
  }
}

static void read_hist(reader *r, const cJSON *o, const char *ctx, pa_reuse_hist *h) {
  const cJSON *b = field(r, o, "bins", ctx);
  if (!cJSON_IsArray(b) || cJSON_GetArraySize(b) > PA_REUSE_BINS) {
    bad(r, "an array of at most 48 bin counts");
    return;
  }
  for (int k = 0; k < cJSON_GetArraySize(b); k++) h->bins[k] = cJSON_GetArrayItem(b, k)->valuedouble;
  h->cold = num(r, o, "cold", ctx);
  h->accesses = num(r, o, "accesses", ctx);
  const cJSON *qs = cJSON_GetObjectItemCaseSensitive(o, "quarters"), *ss = cJSON_GetObjectItemCaseSensitive(o, "sets");
  if (qs) { /* optional: profiles before session 10 have neither */
    path_fmt(r->path, sizeof r->path, "%s.quarters", ctx);
    if (!cJSON_IsArray(qs) || cJSON_GetArraySize(qs) > PA_REUSE_BINS) {
      bad(r, "an array of at most 48 arrays of 4 counts");
      return;
    }
    for (int k = 0; k < cJSON_GetArraySize(qs); k++) {
      const cJSON *q = cJSON_GetArrayItem(qs, k);
      if (!cJSON_IsArray(q) || cJSON_GetArraySize(q) != 4) {
        bad(r, "an array of at most 48 arrays of 4 counts");
        return;
      }
      for (int i = 0; i < 4; i++) h->quarters[k][i] = cJSON_GetArrayItem(q, i)->valuedouble;
    }
    h->has_quarters = true;
  }
  if (ss) {
    path_fmt(r->path, sizeof r->path, "%s.sets", ctx);
    if (!cJSON_IsArray(ss) || cJSON_GetArraySize(ss) > PA_SET_BINS) {
      bad(r, "an array of at most 48 per-set bin counts");
      return;
    }
    for (int k = 0; k < cJSON_GetArraySize(ss); k++) h->sets[k] = cJSON_GetArrayItem(ss, k)->valuedouble;
    h->has_sets = true;
  }
  const cJSON *ls = cJSON_GetObjectItemCaseSensitive(o, "llc_sets");
  if (ls) { /* optional: only profiles made with llc_sets (session 24) have them */
    path_fmt(r->path, sizeof r->path, "%s.llc_sets", ctx);
    if (!cJSON_IsArray(ls) || cJSON_GetArraySize(ls) > PA_LLC_COUNTS) {
      bad(r, "an array of at most 4 objects {\"sets\", \"bins\"}");
      return;
    }
    int n = cJSON_GetArraySize(ls), sets[PA_LLC_COUNTS];
    for (int i = 0; i < n; i++) {
      const cJSON *l = cJSON_GetArrayItem(ls, i), *lb = cJSON_GetObjectItemCaseSensitive(l, "bins");
      const cJSON *sn = cJSON_GetObjectItemCaseSensitive(l, "sets");
      path_fmt(r->path, sizeof r->path, "%s.llc_sets[%d]", ctx, i);
      if (!cJSON_IsNumber(sn) || !cJSON_IsArray(lb) || cJSON_GetArraySize(lb) > PA_SET_BINS) {
        bad(r, "{\"sets\": N, \"bins\": an array of at most 33 per-set bin counts}");
        return;
      }
      sets[i] = sn->valuedouble >= 1 && sn->valuedouble <= PA_LLC_SETS_MAX ? (int)sn->valuedouble : 0;
      h->llc[i].sets = sets[i];
      for (int k = 0; k < cJSON_GetArraySize(lb); k++) h->llc[i].bins[k] = cJSON_GetArrayItem(lb, k)->valuedouble;
    }
    if (pa_llc_sets_invalid(n, sets)) {
      path_fmt(r->path, sizeof r->path, "%s.llc_sets", ctx);
      bad(r, "distinct set counts, each a power of two in 128..32768");
      return;
    }
    h->n_llc = n;
  }
}

static void read_block(reader *r, const cJSON *o, const char *ctx, int n_blocks, int n_loops, pa_block *b) {
  b->name = str(r, o, "name", ctx);
  b->preds = ints(r, o, "preds", ctx, &b->n_preds, n_blocks);
  b->succs = ints(r, o, "succs", ctx, &b->n_succs, n_blocks);
  b->idom = inum(r, o, "idom", ctx);
  b->loop = inum(r, o, "loop", ctx);
  if (b->idom < -1 || b->idom >= n_blocks || b->loop < -1 || b->loop >= n_loops) bad(r, "an index in range");
  b->count = unum(r, o, "count", ctx);
  b->count_per_call = num(r, o, "count_per_call", ctx);
  b->static_count_per_call = num(r, o, "static_count_per_call", ctx);
  read_features(r, o, ctx, &b->features);
  const cJSON *nodes = field(r, o, "nodes", ctx), *edges;
  if (!cJSON_IsArray(nodes)) {
    bad(r, "an array");
    return;
  }
  b->n_nodes = cJSON_GetArraySize(nodes);
  b->nodes = pt_alloc(r->a, sizeof *b->nodes * (size_t)(b->n_nodes + 1));
  char c[160];
  for (int i = 0; i < b->n_nodes && !r->err; i++) {
    const cJSON *x = cJSON_GetArrayItem(nodes, i);
    pa_node *n = &b->nodes[i];
    path_fmt(c, sizeof c, "%s.nodes[%d]", ctx, i);
    int op = pa_opclass_from_name(str(r, x, "op", c));
    if (op < 0) bad(r, "a known operation class");
    n->op = op < 0 ? PA_OP_OTHER : (pa_opclass)op;
    n->opcode = name(r, x, "opcode", c);
    n->elem = name(r, x, "type", c);
    n->lanes = inum(r, x, "lanes", c);
    n->bits = inum(r, x, "bits", c);
    n->is_memory = cJSON_IsTrue(field(r, x, "memory", c));
    n->bytes = n->is_memory ? inum(r, x, "bytes", c) : 0;
    n->masked = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(x, "masked")); /* absent before masks were recorded */
    n->mask = n->mask_lanes = -1;
    if (n->masked) {
      n->mask = inum(r, x, "mask", c);
      n->mask_lanes = inum(r, x, "mask_lanes", c);
      if (n->mask < -1 || n->mask >= b->n_nodes || n->mask_lanes < -1) bad(r, "mask and mask_lanes in range");
    }
    const cJSON *st = cJSON_GetObjectItemCaseSensitive(x, "strides"); /* absent before strides were recorded */
    if (st) {
      if (!cJSON_IsArray(st) || !n->is_memory) {
        path_fmt(r->path, sizeof r->path, "%s.strides", c);
        bad(r, "an array of byte strides (or null) on a memory node");
      } else {
        n->n_strides = cJSON_GetArraySize(st);
        n->strides = pt_alloc(r->a, sizeof(int64_t) * (size_t)(n->n_strides + 1));
        for (int k = 0; k < n->n_strides; k++) {
          const cJSON *e = cJSON_GetArrayItem(st, k);
          if (cJSON_IsNull(e)) n->strides[k] = PA_STRIDE_UNKNOWN;
          else if (cJSON_IsNumber(e) && e->valuedouble > -9e15 && e->valuedouble < 9e15) n->strides[k] = (int64_t)e->valuedouble;
          else {
            path_fmt(r->path, sizeof r->path, "%s.strides[%d]", c, k);
            bad(r, "a byte stride or null");
          }
        }
      }
    }
    const cJSON *pe = cJSON_GetObjectItemCaseSensitive(x, "periods"); /* absent without wraps, and before session 16 */
    const cJSON *ps = cJSON_GetObjectItemCaseSensitive(x, "period_strides");
    if (pe || ps) {
      if (!cJSON_IsArray(pe) || !cJSON_IsArray(ps) || cJSON_GetArraySize(pe) != n->n_strides ||
          cJSON_GetArraySize(ps) != n->n_strides || n->n_strides == 0) {
        path_fmt(r->path, sizeof r->path, "%s.%s", c, pe ? "periods" : "period_strides");
        bad(r, "periods and period_strides: arrays as long as strides");
      } else {
        n->periods = pt_alloc(r->a, 2 * sizeof(int64_t) * (size_t)n->n_strides);
        n->period_strides = n->periods + n->n_strides;
        for (int k = 0; k < n->n_strides; k++) {
          const cJSON *e = cJSON_GetArrayItem(pe, k), *q = cJSON_GetArrayItem(ps, k);
          if (cJSON_IsNumber(e) && e->valuedouble >= 0 && e->valuedouble < 9e15) n->periods[k] = (int64_t)e->valuedouble;
          else {
            path_fmt(r->path, sizeof r->path, "%s.periods[%d]", c, k);
            bad(r, "a period in iterations (0: no wrap)");
            continue;
          }
          if (cJSON_IsNumber(q) && q->valuedouble > -9e15 && q->valuedouble < 9e15) n->period_strides[k] = (int64_t)q->valuedouble;
          else {
            path_fmt(r->path, sizeof r->path, "%s.period_strides[%d]", c, k);
            bad(r, "a byte stride over a period");
          }
        }
      }
    }
    const cJSON *ar = cJSON_GetObjectItemCaseSensitive(x, "array"); /* absent before arrays were recorded */
    if (ar) {
      n->array = inum(r, x, "array", c);
      if (n->array < 0 || !n->is_memory) bad(r, "array: a non-negative object index on a memory node");
    }
    const cJSON *of = cJSON_GetObjectItemCaseSensitive(x, "offset"); /* absent before offsets were recorded */
    if (of) {
      if (!cJSON_IsNumber(of) || !(of->valuedouble > -9e15 && of->valuedouble < 9e15) || n->array <= 0) {
        path_fmt(r->path, sizeof r->path, "%s.offset", c);
        bad(r, "a byte offset on a memory node with an array");
      } else {
        n->has_offset = true, n->offset = (int64_t)of->valuedouble;
      }
    }
    const cJSON *ls = cJSON_GetObjectItemCaseSensitive(x, "lane_step"); /* absent before lane steps were recorded */
    if (ls) {
      if (!cJSON_IsNumber(ls) || !(ls->valuedouble > -9e15 && ls->valuedouble < 9e15) || n->op != PA_OP_GATHER) {
        path_fmt(r->path, sizeof r->path, "%s.lane_step", c);
        bad(r, "a byte step on a gather or scatter node");
      } else {
        n->lane_step = (int64_t)ls->valuedouble;
      }
    }
  }
  edges = field(r, o, "edges", ctx);
  if (!cJSON_IsArray(edges)) {
    bad(r, "an array");
    return;
  }
  b->n_edges = cJSON_GetArraySize(edges);
  b->edges = pt_alloc(r->a, sizeof *b->edges * (size_t)(b->n_edges + 1));
  for (int i = 0; i < b->n_edges && !r->err; i++) {
    const cJSON *e = cJSON_GetArrayItem(edges, i);
    path_fmt(r->path, sizeof r->path, "%s.edges[%d]", ctx, i);
    const cJSON *s = cJSON_GetArrayItem(e, 0), *t = cJSON_GetArrayItem(e, 1), *k = cJSON_GetArrayItem(e, 2);
    if (!cJSON_IsNumber(s) || !cJSON_IsNumber(t) || !cJSON_IsString(k) || s->valueint < 0 ||
        s->valueint >= b->n_nodes || t->valueint < 0 || t->valueint >= b->n_nodes) {
      bad(r, "[src, dst, kind] with node indices in range");
      return;
    }
    pa_edge_kind kind = strcmp(k->valuestring, "data") == 0     ? PA_EDGE_DATA
                        : strcmp(k->valuestring, "memory") == 0 ? PA_EDGE_MEMORY
                        : strcmp(k->valuestring, "loop") == 0   ? PA_EDGE_LOOP_CARRIED
                                                                : (pa_edge_kind)-1;
    if ((int)kind < 0) bad(r, "kind data, memory or loop");
    b->edges[i] = (pa_edge){s->valueint, t->valueint, kind};
  }
}

static void read_function(reader *r, const cJSON *o, const char *ctx, pa_function *f) {
  f->name = str(r, o, "name", ctx);
  f->calls = unum(r, o, "calls", ctx);
  f->parallel = cJSON_IsTrue(field(r, o, "parallel", ctx));
  f->threads = inum(r, o, "threads", ctx);
  read_features(r, o, ctx, &f->features);
  const cJSON *blocks = field(r, o, "blocks", ctx), *loops = field(r, o, "loops", ctx);
  if (!cJSON_IsArray(blocks) || !cJSON_IsArray(loops)) {
    bad(r, "blocks and loops arrays");
    return;
  }
  f->n_blocks = cJSON_GetArraySize(blocks);
  f->n_loops = cJSON_GetArraySize(loops);
  f->blocks = pt_alloc(r->a, sizeof *f->blocks * (size_t)(f->n_blocks + 1));
  f->loops = pt_alloc(r->a, sizeof *f->loops * (size_t)(f->n_loops + 1));
  char c[160];
  for (int i = 0; i < f->n_loops && !r->err; i++) {
    const cJSON *x = cJSON_GetArrayItem(loops, i);
    pa_loop *l = &f->loops[i];
    path_fmt(c, sizeof c, "%s.loops[%d]", ctx, i);
    l->header = inum(r, x, "header", c);
    l->parent = inum(r, x, "parent", c);
    l->depth = inum(r, x, "depth", c);
    l->preheader = inum(r, x, "preheader", c);
    l->blocks = ints(r, x, "blocks", c, &l->n_blocks, f->n_blocks);
    l->latches = ints(r, x, "latches", c, &l->n_latches, f->n_blocks);
    l->trip_count = lnum(r, x, "trip_count", c);
    if (l->header < 0 || l->header >= f->n_blocks || l->parent < -1 || l->parent >= f->n_loops)
      bad(r, "header and parent indices in range");
  }
  for (int i = 0; i < f->n_blocks && !r->err; i++) {
    path_fmt(c, sizeof c, "%s.blocks[%d]", ctx, i);
    read_block(r, cJSON_GetArrayItem(blocks, i), c, f->n_blocks, f->n_loops, &f->blocks[i]);
  }
  /* optional: profiles written before cross-block recurrences were recorded lack it */
  const cJSON *carried = cJSON_GetObjectItemCaseSensitive(o, "carried_edges");
  f->n_carried = cJSON_IsArray(carried) ? cJSON_GetArraySize(carried) : 0;
  f->carried = pt_alloc(r->a, sizeof *f->carried * (size_t)(f->n_carried + 1));
  for (int i = 0; i < f->n_carried && !r->err; i++) {
    const cJSON *e = cJSON_GetArrayItem(carried, i);
    path_fmt(r->path, sizeof r->path, "%s.carried_edges[%d]", ctx, i);
    int v[7];
    bool ok = cJSON_IsArray(e) && cJSON_GetArraySize(e) == 7;
    for (int k = 0; k < 7 && ok; k++) {
      const cJSON *x = cJSON_GetArrayItem(e, k);
      ok = cJSON_IsNumber(x) && x->valuedouble >= 0 && x->valuedouble < 1e9;
      v[k] = ok ? x->valueint : 0;
    }
    for (int k = 0; k < 6 && ok; k += 2) /* (block, node) pairs in range */
      ok = v[k] < f->n_blocks && v[k + 1] < f->blocks[v[k]].n_nodes;
    if (!ok || v[6] < 1) {
      bad(r, "[src_block, src, phi_block, phi, dst_block, dst, distance] with indices in range");
      return;
    }
    f->carried[i] = (pa_carried_edge){v[0], v[1], v[2], v[3], v[4], v[5], v[6]};
  }
  /* optional: how a parallel body's work falls on its iterations (absent in older files) */
  const cJSON *chunks = cJSON_GetObjectItemCaseSensitive(o, "chunks");
  if (chunks && !r->err) {
    char c2[160];
    path_fmt(c2, sizeof c2, "%s.chunks", ctx);
    int64_t n = lnum(r, chunks, "iterations", c2);
    const cJSON *work = field(r, chunks, "work", c2);
    int parts = cJSON_IsArray(work) ? cJSON_GetArraySize(work) : -1;
    if (r->err) return;
    if (n < 1 || parts < 1 || parts > PA_CHUNK_PARTS || parts > n) {
      bad(r, "iterations >= 1 and 1 to 64 parts of work, no more than the iterations");
      return;
    }
    f->chunk_iterations = n, f->n_chunk_work = parts;
    f->chunk_work = pt_alloc(r->a, sizeof *f->chunk_work * (size_t)parts);
    for (int k = 0; k < parts; k++) {
      const cJSON *x = cJSON_GetArrayItem(work, k);
      if (!cJSON_IsNumber(x) || !(x->valuedouble >= 0)) {
        bad(r, "work of each part a number >= 0");
        return;
      }
      f->chunk_work[k] = x->valuedouble;
    }
  }
}

pa_profile *pa_profile_load(const char *path, pt_diag *d) {
  char *text = pt_read_file(path, NULL, d);
  if (!text) return NULL;
  pa_profile *p = pa_profile_parse(text, path, d);
  free(text);
  return p;
}

pa_profile *pa_profile_parse(const char *text, const char *path, pt_diag *d) {
  cJSON *o = cJSON_Parse(text);
  if (!o) {
    pt_fail(d, PT_ERR_INPUT, "%s:%d: malformed JSON", path, pa_json_error_line(text));
    return NULL;
  }
  pt_arena *a = pt_arena_new();
  pa_profile *p = pt_alloc(a, sizeof *p);
  p->arena = a;
  reader r = {.a = a, .file = path, .d = d};
  /* another portent file (a target, a prediction) passed as a profile: say so, not which of its
   * fields a profile lacks */
  const cJSON *kind = cJSON_GetObjectItemCaseSensitive(o, "kind");
  if (kind && !(cJSON_IsString(kind) && !strcmp(kind->valuestring, "portent-profile"))) {
    r.err = pt_fail(d, PT_ERR_INPUT, "%s: $.kind: %s, not a portent profile (portent-profile)", path,
                    cJSON_IsString(kind) ? kind->valuestring : "not a string");
    goto done;
  }
  p->version = inum(&r, o, "version", "$");
  if (!r.err && p->version != PA_PROFILE_VERSION) {
    r.err = pt_fail(d, PT_ERR_INPUT, "%s: $.version: %d is not a profile version this portent reads (%d)", path,
                    p->version, PA_PROFILE_VERSION);
    goto done;
  }
  p->module_id = str(&r, o, "module_id", "$");
  p->source = str(&r, o, "source", "$");
  p->counts_source = str(&r, o, "counts_source", "$");
  const cJSON *entry = cJSON_GetObjectItemCaseSensitive(o, "entry");
  p->entry = cJSON_IsString(entry) ? pt_strdup(a, entry->valuestring) : NULL;
  p->seed = unum(&r, o, "seed", "$");
  p->threads = inum(&r, o, "threads", "$");
  read_features(&r, o, "$", &p->features);
  const cJSON *dyn = field(&r, o, "dynamic_by_op", "$"), *e;
  if (cJSON_IsObject(dyn))
    cJSON_ArrayForEach(e, dyn) {
      int k = pa_opclass_from_name(e->string);
      if (k >= 0 && cJSON_IsNumber(e)) p->dynamic_by_op[k] = e->valuedouble;
    }
  const cJSON *fns = field(&r, o, "functions", "$");
  if (!cJSON_IsArray(fns)) {
    bad(&r, "an array");
    goto done;
  }
  p->n_functions = cJSON_GetArraySize(fns);
  p->functions = pt_alloc(a, sizeof *p->functions * (size_t)(p->n_functions + 1));
  p->reuse_by_function = pt_alloc(a, sizeof *p->reuse_by_function * (size_t)(p->n_functions + 1));
  char c[160];
  for (int i = 0; i < p->n_functions && !r.err; i++) {
    path_fmt(c, sizeof c, "$.functions[%d]", i);
    read_function(&r, cJSON_GetArrayItem(fns, i), c, &p->functions[i]);
  }
  const cJSON *reuse = field(&r, o, "reuse", "$");
  if (!cJSON_IsObject(reuse)) {
    bad(&r, "an object");
    goto done;
  }
  p->sample_rate = num(&r, reuse, "sample_rate", "$.reuse");
  p->exact_window = lnum(&r, reuse, "exact_window", "$.reuse");
  const cJSON *ts = cJSON_GetObjectItemCaseSensitive(reuse, "trace_share"); /* optional */
  if (cJSON_IsNumber(ts)) p->trace_share = ts->valuedouble;
  const cJSON *ws = cJSON_GetObjectItemCaseSensitive(reuse, "window_share"); /* optional */
  if (cJSON_IsNumber(ws)) p->window_share = ws->valuedouble;
  p->line_filter = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(reuse, "line_filter")); /* optional */
  const cJSON *ll = cJSON_GetObjectItemCaseSensitive(reuse, "locals_lines"); /* optional */
  if (cJSON_IsNumber(ll)) p->locals_lines = (int64_t)ll->valuedouble;
  const cJSON *total = field(&r, reuse, "total", "$.reuse");
  if (cJSON_IsObject(total)) read_hist(&r, total, "$.reuse.total", &p->reuse_total);
  const cJSON *byf = field(&r, reuse, "functions", "$.reuse"), *x;
  if (cJSON_IsArray(byf))
    cJSON_ArrayForEach(x, byf) {
      int f = inum(&r, x, "function", "$.reuse.functions[]");
      if (f < 0 || f >= p->n_functions) {
        bad(&r, "a function index in range");
        break;
      }
      read_hist(&r, x, "$.reuse.functions[]", &p->reuse_by_function[f]);
    }
  const cJSON *byt = field(&r, reuse, "threads", "$.reuse");
  if (cJSON_IsArray(byt)) {
    p->reuse = pt_alloc(a, sizeof *p->reuse * (size_t)(cJSON_GetArraySize(byt) + 1));
    cJSON_ArrayForEach(x, byt) {
      pa_reuse_entry *en = &p->reuse[p->n_reuse++];
      en->function = inum(&r, x, "function", "$.reuse.threads[]");
      en->thread = inum(&r, x, "thread", "$.reuse.threads[]");
      if (en->function < 0 || en->function >= p->n_functions) {
        bad(&r, "a function index in range");
        break;
      }
      read_hist(&r, x, "$.reuse.threads[]", &en->hist);
    }
  }
done:
  cJSON_Delete(o);
  if (r.err) {
    pt_arena_free(a);
    return NULL;
  }
  return p;
}
