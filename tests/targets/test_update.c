/* characterize --update's merge: measured rows replace theirs or are added, units are kept
 * (or replaced with the rows' names dropped), unmeasured sections stay, provenance says what
 * changed, and a description of another CPU is refused. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "targets/targets.h"
#include "test.h"

static ptg_target *machine(const char *date, int family) {
  ptg_target *t = ptg_target_new("box");
  t->provenance = "measured";
  t->date = date;
  t->isa = "x86_64";
  t->vendor = "AuthenticAMD";
  t->family = family;
  t->model = 2;
  t->microarchitecture = "testarch";
  t->cores = 2;
  t->threads_per_core = 1;
  t->sockets = 1;
  t->numa_nodes = 1;
  t->frequency_ghz.value = 3.0;
  t->native_vector_bits = t->max_vector_bits = 512;
  t->issue_width.value = 6;
  return t;
}

static void row(ptg_target *t, ptg_op op, ptg_elem e, int bits, double lat, double rtp, const char *unit) {
  ptg_inst *r = ptg_target_add_inst(t, op, e, bits);
  r->latency.value = lat;
  r->recip_throughput.value = rtp;
  r->unit = unit;
}

static ptg_target *base_target(void) {
  ptg_target *t = machine("2026-01-01T00:00:00Z", 26);
  row(t, PTG_OP_ADD, PTG_ELEM_I64, 64, 1, 0.25, "alu");
  row(t, PTG_OP_LOAD, PTG_ELEM_I64, 64, 4, 0.33, "ls");
  row(t, PTG_OP_LOAD, PTG_ELEM_F32, 512, 7, 0.5, "ls");
  t->n_units = 2;
  t->units = pt_alloc(t->arena, 2 * sizeof(ptg_unit));
  t->units[0] = (ptg_unit){.name = "alu", .pipes = 4, .classes = "add.i64.64"};
  t->units[1] = (ptg_unit){.name = "ls", .pipes = 3, .classes = "load.i64.64"};
  t->n_caches = 1;
  t->caches = pt_alloc(t->arena, sizeof(ptg_cache));
  t->caches[0] = (ptg_cache){.level = 1, .size_bytes = 49152, .line_bytes = 64, .associativity = 12, .shared_by = 1,
                             .latency_cycles = {.value = 4}, .latency_ns = {.value = NAN}};
  t->memory.latency_ns.value = 90;
  t->n_runtime = 1;
  t->runtime = pt_alloc(t->arena, sizeof(ptg_runtime));
  t->runtime[0] = (ptg_runtime){.threads = 2, .fork_join_ns = {.value = 100}, .barrier_ns = {.value = 50}};
  return t;
}

/* What `characterize --only load:i64:64,load:i32:32 --skip memory,runtime,units` measures. */
static ptg_target *fresh_target(int family) {
  ptg_target *t = machine("2026-02-02T00:00:00Z", family);
  row(t, PTG_OP_LOAD, PTG_ELEM_I64, 64, 4, 0.25, NULL);
  row(t, PTG_OP_LOAD, PTG_ELEM_I32, 32, 4, 0.25, NULL);
  t->n_caches = 1; /* topology only: no latency measured */
  t->caches = pt_alloc(t->arena, sizeof(ptg_cache));
  t->caches[0] = (ptg_cache){.level = 1, .size_bytes = 49152, .line_bytes = 64, .associativity = 12, .shared_by = 1,
                             .latency_cycles = {.value = NAN}, .latency_ns = {.value = NAN}};
  return t;
}

int main(void) {
  pt_diag d = {0};
  ptg_target *base = base_target(), *fresh = fresh_target(26);
  ptg_update_summary s = {0};
  ptg_target *u = ptg_target_update(base, fresh, &s, &d);
  CHECK_MSG(u != NULL, "%s", d.msg);
  if (u) {
    CHECK(s.replaced == 1 && s.added == 1 && u->n_insts == 4);
    const ptg_inst *l = ptg_target_find_inst(u, PTG_OP_LOAD, PTG_ELEM_I64, 64);
    CHECK(l && fabs(l->recip_throughput.value - 0.25) < 1e-9);
    CHECK_MSG(l && l->unit && strcmp(l->unit, "ls") == 0, "kept unit %s", l && l->unit ? l->unit : "(none)");
    const ptg_inst *n = ptg_target_find_inst(u, PTG_OP_LOAD, PTG_ELEM_I32, 32);
    CHECK(n && n->unit == NULL); /* no old row of load i32 at any width */
    const ptg_inst *v = ptg_target_find_inst(u, PTG_OP_LOAD, PTG_ELEM_F32, 512);
    CHECK(v && fabs(v->latency.value - 7) < 1e-9 && v->unit && strcmp(v->unit, "ls") == 0);
    CHECK(u->n_units == 2 && u->n_runtime == 1 && fabs(u->runtime[0].fork_join_ns.value - 100) < 1e-9);
    CHECK(u->n_caches == 1 && fabs(u->caches[0].latency_cycles.value - 4) < 1e-9); /* memory not measured: kept */
    CHECK(u->date && strcmp(u->date, "2026-02-02T00:00:00Z") == 0);
    CHECK_MSG(u->notes && strstr(u->notes, "1 instruction rows measured again, 1 added"), "%s", u->notes ? u->notes : "");
    CHECK(ptg_target_validate(u, "updated", &d) == 0);
    ptg_target_free(u);
  }

  /* units measured again: theirs replace the old, and old rows not measured lose their names */
  ptg_target *f2 = fresh_target(26);
  f2->n_units = 1;
  f2->units = pt_alloc(f2->arena, sizeof(ptg_unit));
  f2->units[0] = (ptg_unit){.name = "u0", .pipes = 4, .classes = "load.i64.64"};
  f2->insts[0].unit = f2->insts[1].unit = "u0";
  f2->issue_width.value = 8;
  ptg_update_summary s2 = {.units = true};
  u = ptg_target_update(base, f2, &s2, &d);
  CHECK_MSG(u != NULL, "%s", d.msg);
  if (u) {
    CHECK(u->n_units == 1 && strcmp(u->units[0].name, "u0") == 0 && fabs(u->issue_width.value - 8) < 1e-9);
    const ptg_inst *a = ptg_target_find_inst(u, PTG_OP_ADD, PTG_ELEM_I64, 64);
    CHECK(a && a->unit == NULL);
    const ptg_inst *l = ptg_target_find_inst(u, PTG_OP_LOAD, PTG_ELEM_I64, 64);
    CHECK(l && l->unit && strcmp(l->unit, "u0") == 0);
    ptg_target_free(u);
  }

  /* another CPU family: refused, naming both */
  ptg_target *other = fresh_target(25);
  ptg_update_summary s3 = {0};
  pt_diag d3 = {0};
  CHECK(ptg_target_update(base, other, &s3, &d3) == NULL);
  CHECK_MSG(strstr(d3.msg, "family 26") && strstr(d3.msg, "family 25"), "%s", d3.msg);

  /* misses in flight measured alone (--only mlp): the per-level and memory figures and the
   * strided walks replace base's, every other cache and memory figure stays */
  base->caches[0].overlapping_misses = (ptg_figure){.value = NAN};
  base->memory.overlapping_misses.value = 40;
  ptg_target *f4 = fresh_target(26);
  f4->n_insts = 0;
  f4->caches[0].overlapping_misses = (ptg_figure){.value = 12, .reps = 5, .spread = 0.1};
  f4->memory.overlapping_misses.value = 42;
  f4->memory.n_strided = 1;
  f4->memory.strided = pt_alloc(f4->arena, sizeof(ptg_strided_walk));
  f4->memory.strided[0] = (ptg_strided_walk){4096, 4096, {.value = 10}, {.value = 17}};
  ptg_update_summary s4 = {.mlp = true};
  u = ptg_target_update(base, f4, &s4, &d);
  CHECK_MSG(u != NULL, "%s", d.msg);
  if (u) {
    CHECK(fabs(u->caches[0].latency_cycles.value - 4) < 1e-9 && fabs(u->caches[0].overlapping_misses.value - 12) < 1e-9);
    CHECK(fabs(u->memory.latency_ns.value - 90) < 1e-9 && fabs(u->memory.overlapping_misses.value - 42) < 1e-9);
    CHECK(u->memory.n_strided == 1 && ptg_target_strided_walk(u, 4096, 4096));
    CHECK(u->n_insts == 3 && strstr(u->notes, "misses in flight"));
    CHECK(isnan(u->store_forward_fail_cycles.value)); /* not measured by that part */
    /* then the memory section alone: its latencies replace base's, the misses in flight stay */
    ptg_target *f5 = fresh_target(26);
    f5->n_insts = 0;
    f5->caches[0].latency_cycles.value = 5;
    f5->memory.latency_ns.value = 100;
    ptg_update_summary s5 = {.memory = true};
    ptg_target *v = ptg_target_update(u, f5, &s5, &d);
    CHECK_MSG(v != NULL, "%s", d.msg);
    if (v) {
      CHECK(fabs(v->caches[0].latency_cycles.value - 5) < 1e-9 && fabs(v->memory.latency_ns.value - 100) < 1e-9);
      CHECK(fabs(v->caches[0].overlapping_misses.value - 12) < 1e-9 && fabs(v->memory.overlapping_misses.value - 42) < 1e-9);
      CHECK(v->memory.n_strided == 1);
      ptg_target_free(v);
    }
    ptg_target_free(f5);
    ptg_target_free(u);
  }
  ptg_target_free(f4);

  /* L1's set walks measured alone (--only l1sets): they replace base's (none), the L1 latency
   * stays; then the memory section alone keeps them */
  ptg_target *f6 = fresh_target(26);
  f6->n_insts = 0;
  f6->caches[0].n_set_walks = 1;
  f6->caches[0].set_walks = pt_alloc(f6->arena, sizeof(ptg_set_walk));
  f6->caches[0].set_walks[0] = (ptg_set_walk){2048, 2, 128, {.value = 4.3}, {.value = 2.2}, {.value = 1.95}};
  ptg_update_summary s6 = {.sets = true};
  u = ptg_target_update(base, f6, &s6, &d);
  CHECK_MSG(u != NULL, "%s", d.msg);
  if (u) {
    CHECK(fabs(u->caches[0].latency_cycles.value - 4) < 1e-9 && u->caches[0].n_set_walks == 1 &&
          u->caches[0].set_walks[0].sets == 2 && fabs(u->caches[0].set_walks[0].overlapping_misses.value - 1.95) < 1e-9);
    CHECK(strstr(u->notes, "L1 set walks"));
    ptg_target *f7 = fresh_target(26);
    f7->n_insts = 0;
    f7->caches[0].latency_cycles.value = 5;
    ptg_update_summary s7 = {.memory = true};
    ptg_target *v = ptg_target_update(u, f7, &s7, &d);
    CHECK_MSG(v && v->caches[0].n_set_walks == 1 && fabs(v->caches[0].latency_cycles.value - 5) < 1e-9, "%s", d.msg);
    ptg_target_free(v);
    ptg_target_free(f7);
    ptg_target_free(u);
  }
  ptg_target_free(f6);

  /* store forwarding measured alone (--only forward): the figure comes in, nothing else moves;
   * a later update without the part keeps it */
  ptg_target *f8 = fresh_target(26);
  f8->n_insts = 0;
  f8->store_forward_fail_cycles = (ptg_figure){.value = 21.3, .reps = 5, .spread = 0.05};
  ptg_update_summary s8 = {.forward = true};
  u = ptg_target_update(base, f8, &s8, &d);
  CHECK_MSG(u && fabs(u->store_forward_fail_cycles.value - 21.3) < 1e-9 && strstr(u->notes, "store forwarding") &&
                fabs(u->issue_width.value - base->issue_width.value) < 1e-9,
            "%s", d.msg);
  if (u) {
    ptg_target *f9 = fresh_target(26);
    f9->n_insts = 0;
    ptg_update_summary s9 = {.mlp = true};
    ptg_target *v = ptg_target_update(u, f9, &s9, &d);
    CHECK(v && fabs(v->store_forward_fail_cycles.value - 21.3) < 1e-9);
    ptg_target_free(v);
    ptg_target_free(f9);
    ptg_target_free(u);
  }
  ptg_target_free(f8);

  /* the read-modify-write walks measured alone (--only l1rmw): their figure joins the set walk
   * of the same stride, whose load figures stay; a later --only l1sets keeps it */
  ptg_target *fa = fresh_target(26);
  fa->n_insts = 0;
  fa->caches[0].n_set_walks = 1;
  fa->caches[0].set_walks = pt_alloc(fa->arena, sizeof(ptg_set_walk));
  fa->caches[0].set_walks[0] = (ptg_set_walk){2048, 2, 128, {.value = 4.3}, {.value = 2.2}, {.value = 1.95}};
  ptg_update_summary sa = {.sets = true};
  u = ptg_target_update(base, fa, &sa, &d);
  CHECK_MSG(u != NULL, "%s", d.msg);
  if (u) {
    ptg_target *fb = fresh_target(26);
    fb->n_insts = 0;
    fb->caches[0].n_set_walks = 2;
    fb->caches[0].set_walks = pt_alloc(fb->arena, 2 * sizeof(ptg_set_walk));
    ptg_figure none = {.value = NAN};
    fb->caches[0].set_walks[0] = (ptg_set_walk){2048, 2, 128, none, none, none, {.value = 6.2, .reps = 9}};
    fb->caches[0].set_walks[1] = (ptg_set_walk){4096, 1, 64, none, none, none, {.value = 11.8}};
    ptg_update_summary sb = {.rmw = true};
    ptg_target *v = ptg_target_update(u, fb, &sb, &d);
    CHECK_MSG(v != NULL, "%s", d.msg);
    if (v) {
      const ptg_set_walk *w = &v->caches[0].set_walks[0];
      CHECK(v->caches[0].n_set_walks == 1 && fabs(w->overlapping_misses.value - 1.95) < 1e-9 &&
            fabs(w->rmw_ns_per_access.value - 6.2) < 1e-9 && w->rmw_ns_per_access.reps == 9);
      CHECK(strstr(v->notes, "L1 read-modify-write walks"));
      CHECK(fabs(ptg_target_set_rmw_ns(v, 2) - 6.2) < 1e-9 && fabs(ptg_target_set_rmw_ns(v, 8) - 6.2) < 1e-9);
      ptg_target *fc = fresh_target(26);
      fc->n_insts = 0;
      fc->caches[0].n_set_walks = 1;
      fc->caches[0].set_walks = pt_alloc(fc->arena, sizeof(ptg_set_walk));
      fc->caches[0].set_walks[0] = (ptg_set_walk){2048, 2, 128, {.value = 4.4}, {.value = 2.1}, {.value = 2.1}};
      ptg_update_summary sc = {.sets = true};
      ptg_target *x = ptg_target_update(v, fc, &sc, &d);
      CHECK_MSG(x && fabs(x->caches[0].set_walks[0].overlapping_misses.value - 2.1) < 1e-9 &&
                    fabs(x->caches[0].set_walks[0].rmw_ns_per_access.value - 6.2) < 1e-9,
                "%s", d.msg);
      ptg_target_free(x);
      ptg_target_free(fc);
      ptg_target_free(v);
    }
    ptg_target_free(fb);
    ptg_target_free(u);
  }
  ptg_target_free(fa);

  /* the set streams measured alone (--only l1streams): they replace the file's rows; an update
   * of other parts keeps them */
  ptg_target *fs = fresh_target(26);
  fs->n_insts = 0;
  fs->caches[0].n_set_streams = 1;
  fs->caches[0].set_streams = pt_alloc(fs->arena, sizeof(ptg_set_stream));
  fs->caches[0].set_streams[0] = (ptg_set_stream){12, 6, {.value = 1.1, .reps = 9}};
  ptg_update_summary ss = {.streams = true};
  u = ptg_target_update(base, fs, &ss, &d);
  CHECK_MSG(u != NULL, "%s", d.msg);
  if (u) {
    CHECK(u->caches[0].n_set_streams == 1 && u->caches[0].set_streams[0].streams == 12 &&
          fabs(u->caches[0].set_streams[0].ns_per_access.value - 1.1) < 1e-9 && strstr(u->notes, "L1 set streams"));
    ptg_target *fo = fresh_target(26);
    ptg_update_summary so = {.units = true};
    ptg_target *v = ptg_target_update(u, fo, &so, &d);
    CHECK_MSG(v && v->caches[0].n_set_streams == 1 && fabs(ptg_target_set_stream_ns(v, 12, 6) - 1.1) < 1e-9, "%s", d.msg);
    ptg_target_free(v);
    ptg_target_free(fo);
    ptg_target_free(u);
  }
  ptg_target_free(fs);

  /* the set walks by loads measured alone (--only l1loads): they join the file; an update of
   * other parts keeps them */
  ptg_target *fl = fresh_target(26);
  fl->n_insts = 0;
  fl->caches[0].n_set_loads = 2;
  fl->caches[0].set_loads = pt_alloc(fl->arena, 2 * sizeof(ptg_set_load));
  fl->caches[0].set_loads[0] = (ptg_set_load){2048, 2, 128, 1, {.value = 1.5, .reps = 9}};
  fl->caches[0].set_loads[1] = (ptg_set_load){2048, 2, 128, 8, {.value = 2.1, .reps = 9}};
  ptg_update_summary sl = {.loads = true};
  u = ptg_target_update(base, fl, &sl, &d);
  CHECK_MSG(u != NULL, "%s", d.msg);
  if (u) {
    CHECK(u->caches[0].n_set_loads == 2 && fabs(ptg_target_set_loads_ratio(u, 2, 8) - 1.4) < 1e-9 &&
          strstr(u->notes, "L1 set walks by loads"));
    CHECK(u->caches[0].n_set_walks == base->caches[0].n_set_walks);
    ptg_target *fo = fresh_target(26);
    ptg_update_summary so = {.units = true};
    ptg_target *v = ptg_target_update(u, fo, &so, &d);
    CHECK_MSG(v && v->caches[0].n_set_loads == 2 && fabs(ptg_target_set_loads_ratio(v, 2, 8) - 1.4) < 1e-9, "%s", d.msg);
    ptg_target_free(v);
    ptg_target_free(fo);
    ptg_target_free(u);
  }
  ptg_target_free(fl);

  ptg_target_free(base);
  ptg_target_free(fresh);
  ptg_target_free(f2);
  ptg_target_free(other);
  TEST_DONE();
}
