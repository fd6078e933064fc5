/* Refreshes part of a measured target description: the rows and sections a new (partial)
 * characterization of the same machine measured replace the old ones, everything else stays.
 * Works on the JSON form, so every string and figure is copied by cJSON, and the result goes
 * through the same parser and validation as a file read from disk. */
#include <cjson/cJSON.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

static cJSON *to_tree(const ptg_target *t, pt_diag *d) {
  char *text = ptg_target_to_json(t, d);
  if (!text) return NULL;
  cJSON *tree = cJSON_Parse(text);
  free(text);
  if (!tree) pt_fail(d, PT_ERR_INVALID, "%s: its own JSON did not parse", t->name);
  return tree;
}

static bool same_str(const cJSON *a, const cJSON *b) {
  return cJSON_IsString(a) && cJSON_IsString(b) && strcmp(a->valuestring, b->valuestring) == 0;
}

static bool same_row(const cJSON *a, const cJSON *b, bool bits_too) {
  if (!same_str(cJSON_GetObjectItem(a, "op"), cJSON_GetObjectItem(b, "op"))) return false;
  if (!same_str(cJSON_GetObjectItem(a, "type"), cJSON_GetObjectItem(b, "type"))) return false;
  return !bits_too || cJSON_GetObjectItem(a, "bits")->valuedouble == cJSON_GetObjectItem(b, "bits")->valuedouble;
}

/* The unit name of the old table for a row measured now, when units were not measured again:
 * the same row's, else the same op and type at another width (same pipes, split or not). */
static const char *old_unit(const cJSON *rows, const cJSON *row) {
  const cJSON *r, *other = NULL;
  cJSON_ArrayForEach(r, rows) {
    if (!cJSON_GetObjectItem(r, "unit")) continue;
    if (same_row(r, row, true)) return cJSON_GetObjectItem(r, "unit")->valuestring;
    if (!other && same_row(r, row, false)) other = r;
  }
  if (other) return cJSON_GetObjectItem(other, "unit")->valuestring;
  /* a class the table has no row of (added since): the unit of the class it falls back to */
  const cJSON *op = cJSON_GetObjectItem(row, "op");
  int k = cJSON_IsString(op) ? ptg_op_from_name(op->valuestring) : -1;
  if (k < 0 || ptg_op_fallback((ptg_op)k) == (ptg_op)k) return NULL;
  cJSON *base = cJSON_Duplicate(row, true);
  cJSON_ReplaceItemInObjectCaseSensitive(base, "op", cJSON_CreateString(ptg_op_name(ptg_op_fallback((ptg_op)k))));
  const char *u = old_unit(rows, base);
  cJSON_Delete(base);
  return u;
}

static void take(cJSON *dst, const cJSON *src, const char *key) {
  cJSON *v = cJSON_GetObjectItem(src, key);
  cJSON_DeleteItemFromObjectCaseSensitive(dst, key);
  if (v) cJSON_AddItemToObject(dst, key, cJSON_Duplicate(v, true));
}

/* The misses-in-flight figures of src (per cache level, by level number, and memory's) into
 * dst: measured by their own probe, so they survive or replace the memory section apart. */
static void take_mlp(cJSON *dst, const cJSON *src) {
  const cJSON *sc;
  cJSON *dc;
  cJSON_ArrayForEach(dc, cJSON_GetObjectItem(dst, "caches")) {
    cJSON_DeleteItemFromObjectCaseSensitive(dc, "overlapping_misses");
    cJSON_ArrayForEach(sc, cJSON_GetObjectItem(src, "caches")) {
      const cJSON *la = cJSON_GetObjectItem(dc, "level"), *lb = cJSON_GetObjectItem(sc, "level");
      if (cJSON_IsNumber(la) && cJSON_IsNumber(lb) && la->valuedouble == lb->valuedouble) take(dc, sc, "overlapping_misses");
    }
  }
  cJSON *dm = cJSON_GetObjectItem(dst, "memory");
  const cJSON *sm = cJSON_GetObjectItem(src, "memory");
  if (dm && sm) {
    take(dm, sm, "overlapping_misses");
    take(dm, sm, "strided_walks");
  }
}

/* A target's L1 entry (caches[] level 1), NULL if it has none. */
static cJSON *l1_cache(const cJSON *t) {
  cJSON *c;
  cJSON_ArrayForEach(c, cJSON_GetObjectItem(t, "caches")) {
    const cJSON *l = cJSON_GetObjectItem(c, "level");
    if (cJSON_IsNumber(l) && l->valuedouble == 1) return c;
  }
  return NULL;
}

/* One of L1's own probes (`key`: "set_walks", "set_streams", "set_loads") of src into dst, so they survive
 * or replace the caches apart. */
static void take_l1_probe(cJSON *dst, const cJSON *src, const char *key) {
  cJSON *dc = l1_cache(dst), *sc = l1_cache(src);
  if (!dc) return;
  cJSON_DeleteItemFromObjectCaseSensitive(dc, key);
  if (sc) take(dc, sc, key);
}

/* The read-modify-write figure of each of src's L1 set walks into dst's walk of the same
 * stride: a probe of its own, over the walks the set-walk probe measured. */
static void take_rmw(cJSON *dst, const cJSON *src) {
  cJSON *dc = l1_cache(dst), *sc = l1_cache(src), *dw, *sw;
  if (!dc || !sc) return;
  cJSON_ArrayForEach(dw, cJSON_GetObjectItem(dc, "set_walks")) {
    const cJSON *ds = cJSON_GetObjectItem(dw, "stride");
    cJSON_DeleteItemFromObjectCaseSensitive(dw, "rmw_ns_per_access");
    cJSON_ArrayForEach(sw, cJSON_GetObjectItem(sc, "set_walks")) {
      const cJSON *ss = cJSON_GetObjectItem(sw, "stride");
      if (cJSON_IsNumber(ds) && cJSON_IsNumber(ss) && ds->valuedouble == ss->valuedouble) take(dw, sw, "rmw_ns_per_access");
    }
  }
}

static void merge_rows(cJSON *out, const cJSON *fresh, bool units, ptg_update_summary *s) {
  cJSON *rows = cJSON_GetObjectItem(out, "instructions");
  if (!rows) rows = cJSON_AddArrayToObject(out, "instructions");
  cJSON *old = cJSON_Duplicate(rows, true); /* units are looked up in the table as it was */
  const cJSON *r;
  cJSON_ArrayForEach(r, cJSON_GetObjectItem(fresh, "instructions")) {
    cJSON *row = cJSON_Duplicate(r, true);
    if (!units) {
      const char *u = old_unit(old, row);
      cJSON_DeleteItemFromObjectCaseSensitive(row, "unit");
      if (u) cJSON_AddStringToObject(row, "unit", u);
    }
    int i = 0, at = -1;
    const cJSON *o;
    cJSON_ArrayForEach(o, rows) {
      if (same_row(o, row, true)) at = i;
      i++;
    }
    if (at >= 0) {
      cJSON_ReplaceItemInArray(rows, at, row);
      s->replaced++;
    } else {
      cJSON_AddItemToArray(rows, row);
      s->added++;
    }
  }
  if (units) { /* old rows not measured again name units of the old grouping: drop those names */
    cJSON *o;
    cJSON_ArrayForEach(o, rows) {
      bool measured = false;
      cJSON_ArrayForEach(r, cJSON_GetObjectItem(fresh, "instructions")) measured |= same_row(o, r, true);
      if (!measured) cJSON_DeleteItemFromObjectCaseSensitive(o, "unit");
    }
  }
  cJSON_Delete(old);
}

static void merge_provenance(cJSON *out, const cJSON *fresh, const ptg_update_summary *s, pt_arena *a) {
  cJSON *p = cJSON_GetObjectItem(out, "provenance"), *fp = cJSON_GetObjectItem(fresh, "provenance");
  if (!p || !fp) return;
  take(p, fp, "date");
  take(p, fp, "tool");
  cJSON *sources = cJSON_GetObjectItem(p, "sources");
  if (!sources) sources = cJSON_AddArrayToObject(p, "sources");
  const cJSON *src;
  cJSON_ArrayForEach(src, cJSON_GetObjectItem(fp, "sources")) {
    if (!cJSON_IsString(src)) continue;
    cJSON_AddItemToArray(sources, cJSON_CreateString(pt_sprintf(a, "update: %s", src->valuestring)));
  }
  const cJSON *date = cJSON_GetObjectItem(fp, "date"), *notes = cJSON_GetObjectItem(p, "notes");
  char *note = pt_sprintf(a, "%s%supdated %s: %d instruction rows measured again, %d added%s%s%s%s%s%s%s%s%s%s%s",
                          cJSON_IsString(notes) ? notes->valuestring : "", cJSON_IsString(notes) ? "; " : "",
                          cJSON_IsString(date) ? date->valuestring : "?", s->replaced, s->added,
                          s->units ? ", execution units and issue width" : "", s->memory ? ", caches and memory" : "",
                          s->mlp ? ", misses in flight" : "", s->sets ? ", L1 set walks" : "", s->rmw ? ", L1 read-modify-write walks" : "",
                          s->streams ? ", L1 set streams" : "", s->loads ? ", L1 set walks by loads" : "", s->forward ? ", store forwarding" : "", s->spills ? ", spilled register tiles" : "", s->runtime ? ", thread pool" : "", s->gpu ? ", GPU" : "");
  cJSON_DeleteItemFromObjectCaseSensitive(p, "notes");
  cJSON_AddStringToObject(p, "notes", note);
}

int ptg_target_check_same_cpu(const ptg_target *base, const ptg_target *host, const char *what, pt_diag *d) {
  if (base->vendor && host->vendor && strcmp(base->vendor, host->vendor) == 0 && base->family == host->family &&
      base->model == host->model)
    return PT_OK;
  return pt_fail(d, PT_ERR_INVALID, "%s describes a %s CPU of family %d model %d (%s); this machine is %s family %d model %d (%s)",
                 what, base->vendor ? base->vendor : "?", base->family, base->model,
                 base->microarchitecture ? base->microarchitecture : "?", host->vendor ? host->vendor : "?", host->family,
                 host->model, host->microarchitecture ? host->microarchitecture : "?");
}

ptg_target *ptg_target_update(const ptg_target *base, const ptg_target *fresh, ptg_update_summary *s, pt_diag *d) {
  if (ptg_target_check_same_cpu(base, fresh, base->name, d) < 0) return NULL;
  cJSON *out = to_tree(base, d), *in = out ? to_tree(fresh, d) : NULL;
  ptg_target *t = NULL;
  if (!in) goto done;
  s->replaced = s->added = 0;
  merge_rows(out, in, s->units, s);
  cJSON *cpu = cJSON_GetObjectItem(out, "cpu"), *fcpu = cJSON_GetObjectItem(in, "cpu");
  if (s->units) {
    take(out, in, "units");
    if (cpu && fcpu) take(cpu, fcpu, "issue_width");
  }
  if (s->forward && cpu && fcpu) take(cpu, fcpu, "store_forward_fail_cycles"), take(cpu, fcpu, "store_forward_cycles");
  if (s->spills && cpu && fcpu) take(cpu, fcpu, "spill_update_cycles");
  cJSON *old = cJSON_Duplicate(out, true);
  if (s->memory) {
    take(out, in, "caches");
    take(out, in, "memory");
    take(out, in, "latency_curve");
  }
  take_mlp(out, s->mlp ? in : old);
  take_l1_probe(out, s->sets ? in : old, "set_walks");
  take_rmw(out, s->rmw ? in : old);
  take_l1_probe(out, s->streams ? in : old, "set_streams");
  take_l1_probe(out, s->loads ? in : old, "set_loads");
  cJSON_Delete(old);
  if (s->runtime) take(out, in, "runtime");
  if (s->gpu) take(out, in, "gpu");
  pt_arena *a = pt_arena_new();
  merge_provenance(out, in, s, a);
  pt_arena_free(a);
  char *text = cJSON_PrintUnformatted(out);
  if (!text) {
    pt_fail(d, PT_ERR_NOMEM, "%s: out of memory serializing the update", base->name);
    goto done;
  }
  t = ptg_target_parse(text, base->name, d);
  free(text);
done:
  cJSON_Delete(out);
  cJSON_Delete(in);
  return t;
}
