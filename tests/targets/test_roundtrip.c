/* Target descriptions: a small description survives save -> load unchanged (misses in flight
 * and strided walks included), the lookup's nearest-class fallback picks the documented row,
 * accessors answer per level, and bad strided walks are refused naming their JSON path. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "targets/targets.h"
#include "test.h"

static ptg_target *sample(void) {
  ptg_target *t = ptg_target_new("sample");
  t->provenance = "published";
  t->isa = "x86_64";
  t->microarchitecture = "testarch";
  t->cores = 4;
  t->threads_per_core = 1;
  t->sockets = 1;
  t->numa_nodes = 1;
  t->frequency_ghz.value = 3.0;
  t->native_vector_bits = 256;
  t->max_vector_bits = 512;
  t->issue_width.value = 4;
  t->store_forward_fail_cycles = (ptg_figure){.value = 21.3, .spread = 0.05, .reps = 5, .source = "probe"};
  ptg_inst *r = ptg_target_add_inst(t, PTG_OP_FMA, PTG_ELEM_F32, 256);
  r->latency.value = 4;
  r->recip_throughput = (ptg_figure){.value = 0.5, .spread = 0.02, .reps = 5};
  r->unit = "fma";
  r->counter_cycles = 4.02;
  r->counter_instructions = 1.04;
  r = ptg_target_add_inst(t, PTG_OP_FMA, PTG_ELEM_F32, 128);
  r->latency.value = 4;
  r->recip_throughput.value = 0.5;
  r = ptg_target_add_inst(t, PTG_OP_ADD, PTG_ELEM_I64, 64);
  r->latency.value = 1;
  r->recip_throughput.value = 0.25;
  r = ptg_target_add_inst(t, PTG_OP_DIV, PTG_ELEM_F64, 64);
  r->latency.value = 13;
  r->recip_throughput.value = 4;
  r->source = "Agner Fog, instruction tables";
  t->n_caches = 2;
  t->caches = pt_alloc(t->arena, 2 * sizeof(ptg_cache));
  for (int i = 0; i < 2; i++) {
    t->caches[i] = (ptg_cache){.level = i + 1, .size_bytes = 32768 << (4 * i), .line_bytes = 64, .associativity = 8,
                               .shared_by = 1, .latency_cycles = {.value = 4 + 10 * i}, .latency_ns = {.value = NAN},
                               .overlapping_misses = {.value = NAN}};
  }
  t->caches[1].overlapping_misses = (ptg_figure){.value = 17.2, .spread = 0.03, .reps = 5, .source = "32 random chases"};
  t->memory.n_strided = 2;
  t->memory.strided = pt_alloc(t->arena, 2 * sizeof(ptg_strided_walk));
  t->memory.strided[0] = (ptg_strided_walk){4096, 4096, {.value = 9.85, .spread = 0.1, .reps = 5}, {.value = 16.9, .spread = 0.1, .reps = 5}};
  t->memory.strided[1] = (ptg_strided_walk){4160, 2 << 20, {.value = 2.5}, {.value = 66.3}};
  t->caches[0].n_set_walks = 3;
  t->caches[0].set_walks = pt_alloc(t->arena, 3 * sizeof(ptg_set_walk));
  t->caches[0].set_walks[0] = (ptg_set_walk){4096, 1, 64, {.value = 4.7}, {.value = 2.75}, {.value = 1.7, .reps = 5}};
  t->caches[0].set_walks[1] = (ptg_set_walk){2048, 2, 128, {.value = 4.3}, {.value = 2.15}, {.value = 2.0}, {.value = 6.2, .reps = 9}};
  t->caches[0].set_walks[2] = (ptg_set_walk){512, 8, 512, {.value = 4.0}, {.value = 0.5}, {.value = 8.0}};
  t->caches[0].n_set_streams = 3;
  t->caches[0].set_streams = pt_alloc(t->arena, 3 * sizeof(ptg_set_stream));
  t->caches[0].set_streams[0] = (ptg_set_stream){8, 0, {.value = 0.3, .reps = 7}};
  t->caches[0].set_streams[1] = (ptg_set_stream){16, 0, {.value = 0.7}};
  t->caches[0].set_streams[2] = (ptg_set_stream){16, 16, {.value = 6.7}};
  t->caches[0].n_set_loads = 3;
  t->caches[0].set_loads = pt_alloc(t->arena, 3 * sizeof(ptg_set_load));
  t->caches[0].set_loads[0] = (ptg_set_load){2048, 2, 128, 1, {.value = 1.6, .reps = 9}};
  t->caches[0].set_loads[1] = (ptg_set_load){2048, 2, 128, 4, {.value = 2.0}};
  t->caches[0].set_loads[2] = (ptg_set_load){2048, 2, 128, 16, {.value = 2.4}};
  t->caches[0].n_bandwidth = 1;
  t->caches[0].bandwidth = pt_alloc(t->arena, sizeof(ptg_bandwidth));
  t->caches[0].bandwidth[0] = (ptg_bandwidth){.threads = 1, .read = {.value = 200}, .write = {.value = 100},
                                              .copy = {.value = NAN}, .triad = {.value = NAN}};
  t->memory.latency_ns.value = 90;
  t->n_runtime = 2;
  t->runtime = pt_alloc(t->arena, 2 * sizeof(ptg_runtime));
  t->runtime[0] = (ptg_runtime){.threads = 1, .fork_join_ns = {.value = 20}, .barrier_ns = {.value = 10}};
  t->runtime[1] = (ptg_runtime){.threads = 2, .fork_join_ns = {.value = 2000}, .barrier_ns = {.value = 300}};
  t->gpu = (ptg_gpu){.present = true, .name = "NVIDIA H100 80GB HBM3", .compute_capability = "9.0", .sms = 132,
                     .clock_ghz = 1.98, .memory_clock_ghz = 2.619, .memory_bytes = 85e9, .l2_bytes = 52428800,
                     .memory_bus_bits = 5120, .launch_us = {.value = 4.5, .spread = 0.1, .reps = 5},
                     .memory_bandwidth_gbs = {.value = 2900}, .h2d_gbs = {.value = 25}, .d2h_gbs = {.value = 26},
                     .fp32_tflops = {.value = NAN}, .sm_clock_ghz = {.value = NAN}, .source = "fixture"};
  return t;
}

int main(void) {
  pt_diag d = {0};
  ptg_target *t = sample();
  char path[] = "/tmp/portent_target_XXXXXX";
  int fd = mkstemp(path);
  CHECK(fd >= 0);
  close(fd);
  CHECK_MSG(ptg_target_save(t, path, &d) == 0, "%s", d.msg);
  char *first = ptg_target_to_json(t, &d);
  ptg_target *u = ptg_target_load(path, &d);
  CHECK_MSG(u != NULL, "%s", d.msg);
  if (u) {
    char *second = ptg_target_to_json(u, &d);
    CHECK(first && second && strcmp(first, second) == 0);
    free(second);
    CHECK(u->n_insts == 4 && u->n_caches == 2);
    const ptg_inst *fma = ptg_target_find_inst(u, PTG_OP_FMA, PTG_ELEM_F32, 256);
    CHECK(fma && fma->recip_throughput.reps == 5 && fabs(fma->recip_throughput.spread - 0.02) < 1e-9);
    CHECK(fma && fma->counter_cycles == 4.02 && fma->counter_instructions == 1.04);
    CHECK(isnan(ptg_target_find_inst(u, PTG_OP_DIV, PTG_ELEM_F64, 64)->counter_cycles));
    CHECK(u->caches[1].size_bytes == 32768 << 4);
    CHECK(u->store_forward_fail_cycles.value == 21.3 && u->store_forward_fail_cycles.reps == 5);
    CHECK(isnan(u->caches[0].overlapping_misses.value) && u->caches[1].overlapping_misses.value == 17.2 &&
          u->caches[1].overlapping_misses.reps == 5 && strcmp(u->caches[1].overlapping_misses.source, "32 random chases") == 0);
    const ptg_strided_walk *w = ptg_target_strided_walk(u, 4096, 4096);
    CHECK(u->memory.n_strided == 2 && w && w->ns_per_access.value == 9.85 && w->overlapping_misses.value == 16.9 &&
          w->overlapping_misses.reps == 5);
    CHECK(ptg_target_strided_walk(u, 4160, 2 << 20) && !ptg_target_strided_walk(u, 4160, 4096));
    CHECK(u->gpu.present && u->gpu.sms == 132 && strcmp(u->gpu.name, "NVIDIA H100 80GB HBM3") == 0 &&
          u->gpu.launch_us.reps == 5 && u->gpu.memory_bandwidth_gbs.value == 2900 && isnan(u->gpu.fp32_tflops.value));
    CHECK(strcmp(ptg_target_find_inst(u, PTG_OP_DIV, PTG_ELEM_F64, 64)->source, "Agner Fog, instruction tables") == 0);
    /* rule 1 */
    ptg_inst_cost c = ptg_target_inst(u, PTG_OP_FMA, PTG_ELEM_F32, 128);
    CHECK(c.fallback == 1 && c.split == 1 && c.recip_throughput == 0.5);
    /* rule 2: 512-bit FMA on a 256-bit row is two instructions */
    c = ptg_target_inst(u, PTG_OP_FMA, PTG_ELEM_F32, 512);
    CHECK(c.fallback == 2 && c.split == 2 && c.recip_throughput == 1.0 && c.latency == 4);
    /* rule 2: scalar FMA takes the narrowest wider row */
    c = ptg_target_inst(u, PTG_OP_FMA, PTG_ELEM_F32, 32);
    CHECK(c.fallback == 2 && c.row && c.row->vector_bits == 128);
    /* rule 3: f64 FMA of 4 lanes uses the f32 row of 4 lanes (128 bits) */
    c = ptg_target_inst(u, PTG_OP_FMA, PTG_ELEM_F64, 256);
    CHECK(c.fallback == 3 && c.row && c.row->elem == PTG_ELEM_F32 && c.row->vector_bits == 128);
    /* rule 4: nothing for shuffles -> scalar i64 add */
    c = ptg_target_inst(u, PTG_OP_SHUFFLE, PTG_ELEM_I8, 128);
    CHECK(c.fallback == 4 && c.latency == 1 && c.recip_throughput == 0.25);
    CHECK(ptg_target_cache_levels(u) == 2 && ptg_target_llc(u)->level == 2);
    CHECK(ptg_target_cache(u, 3) == NULL);
    CHECK(ptg_target_fork_join_ns(u, 2) == 2000 && ptg_target_fork_join_ns(u, 4) == 4000);
    CHECK(ptg_target_bandwidth(u, 1, 8, PTG_BW_READ) == 200);
    CHECK(isnan(ptg_target_bandwidth(u, 1, 1, PTG_BW_COPY)));
    /* L1's set walks: a measured set count answers its row, 4 sets lies halfway (in log) between
     * 2 and 8, fewer or more than measured take the nearest row; no rows: unknown */
    CHECK(u->caches[0].n_set_walks == 3 && u->caches[0].set_walks[0].overlapping_misses.reps == 5);
    CHECK(fabs(ptg_target_set_inflight(u, 2) - 2.0) < 1e-9 && fabs(ptg_target_set_inflight(u, 4) - 5.0) < 1e-9);
    CHECK(fabs(ptg_target_set_inflight(u, 1) - 1.7) < 1e-9 && fabs(ptg_target_set_inflight(u, 64) - 8.0) < 1e-9);
    /* the read-modify-write figure: written only where measured, read back; one row answers all */
    CHECK(fabs(u->caches[0].set_walks[1].rmw_ns_per_access.value - 6.2) < 1e-9 && u->caches[0].set_walks[1].rmw_ns_per_access.reps == 9);
    CHECK(!(u->caches[0].set_walks[0].rmw_ns_per_access.value > 0));
    CHECK(fabs(ptg_target_set_rmw_ns(u, 1) - 6.2) < 1e-9 && fabs(ptg_target_set_rmw_ns(u, 8) - 6.2) < 1e-9);
    u->caches[0].n_set_walks = 0;
    CHECK(isnan(ptg_target_set_inflight(u, 2)) && isnan(ptg_target_set_rmw_ns(u, 2)));
    u->caches[0].n_set_walks = 3;
    /* L1's set streams: read back; linear in streams between measured counts and in the stored-
     * back share at one count, the nearest row beyond them; none: unknown */
    CHECK(u->caches[0].n_set_streams == 3 && u->caches[0].set_streams[0].ns_per_access.reps == 7 &&
          u->caches[0].set_streams[2].rmw_streams == 16);
    CHECK(fabs(ptg_target_set_stream_ns(u, 16, 8) - 3.7) < 1e-9 && fabs(ptg_target_set_stream_ns(u, 12, 0) - 0.5) < 1e-9);
    CHECK(fabs(ptg_target_set_stream_ns(u, 12, 6) - 0.3 - 0.5 * (3.7 - 0.3)) < 1e-9);
    CHECK(fabs(ptg_target_set_stream_ns(u, 4, 2) - 0.3) < 1e-9 && fabs(ptg_target_set_stream_ns(u, 32, 32) - 6.7) < 1e-9);
    u->caches[0].n_set_streams = 0;
    CHECK(isnan(ptg_target_set_stream_ns(u, 12, 6)));
    u->caches[0].n_set_streams = 3;
    /* L1's set walks by loads: read back; the ratio to one load, linear in log2(loads) */
    CHECK(u->caches[0].n_set_loads == 3 && u->caches[0].set_loads[0].ns_per_access.reps == 9 &&
          u->caches[0].set_loads[2].loads == 16 && u->caches[0].set_loads[1].lines == 128);
    CHECK(fabs(ptg_target_set_loads_ratio(u, 2, 4) - 1.25) < 1e-9 && fabs(ptg_target_set_loads_ratio(u, 2, 8) - 1.375) < 1e-9);
    u->caches[0].n_set_loads = 0;
    CHECK(ptg_target_set_loads_ratio(u, 2, 8) == 1);
    u->caches[0].n_set_loads = 3;
  }
  /* a set walk by loads with no loads: refused, naming the path */
  t->caches[0].set_loads[1].loads = 0;
  pt_diag_clear(&d);
  CHECK_MSG(ptg_target_validate(t, "t", &d) < 0 && strstr(d.msg, "caches[0].set_loads[1].loads"), "%s", d.msg);
  t->caches[0].set_loads[1].loads = 4;
  /* more streams stored back than there are: refused, naming the path */
  t->caches[0].set_streams[1].rmw_streams = 17;
  pt_diag_clear(&d);
  CHECK_MSG(ptg_target_validate(t, "t", &d) < 0 && strstr(d.msg, "caches[0].set_streams[1].rmw_streams"), "%s", d.msg);
  t->caches[0].set_streams[1].rmw_streams = 0;
  /* a set walk on L2, or with no sets: refused, naming the path */
  ptg_cache *l2 = &t->caches[1];
  l2->n_set_walks = 1, l2->set_walks = t->caches[0].set_walks;
  pt_diag_clear(&d);
  CHECK_MSG(ptg_target_validate(t, "t", &d) < 0 && strstr(d.msg, "caches[1].set_walks"), "%s", d.msg);
  l2->n_set_walks = 0;
  t->caches[0].set_walks[1].sets = 0;
  pt_diag_clear(&d);
  CHECK_MSG(ptg_target_validate(t, "t", &d) < 0 && strstr(d.msg, "caches[0].set_walks[1].sets"), "%s", d.msg);
  t->caches[0].set_walks[1].sets = 2;
  pt_diag_clear(&d);
  /* a strided walk on pages smaller than 4 KiB, a negative figure, a repeated walk: refused */
  static const struct {
    const char *walk, *path;
  } bad[] = {
      {"{\"stride\": 4096, \"page\": 1024, \"ns_per_access\": 9, \"overlapping_misses\": 17}", "strided_walks[0].page"},
      {"{\"stride\": 4096, \"page\": 4096, \"ns_per_access\": 9, \"overlapping_misses\": -1}", "strided_walks[0].overlapping_misses"},
      {"{\"stride\": 4096, \"page\": 4096, \"ns_per_access\": 9, \"overlapping_misses\": 17}", "duplicate of memory.strided_walks[0]"},
      {"{\"stride\": 4096, \"page\": 4096, \"overlapping_misses\": 17}", "strided_walks[0].ns_per_access"},
  };
  for (size_t i = 0; i < PT_ARRAY_LEN(bad) && first; i++) {
    char *at = strstr(first, "\"strided_walks\":");
    if (at) at = strchr(at, '[');
    CHECK(at != NULL);
    if (!at) break;
    at++;
    size_t n = strlen(first) + strlen(bad[i].walk) + 8;
    char *text = malloc(n);
    snprintf(text, n, "%.*s%s, %s", (int)(at - first), first, bad[i].walk, at);
    pt_diag e = {0};
    ptg_target *x = ptg_target_parse(text, "bad.json", &e);
    CHECK_MSG(x == NULL && strstr(e.msg, bad[i].path), "walk %zu: %s", i, e.msg);
    ptg_target_free(x);
    free(text);
  }
  /* names round-trip through the X-macro tables */
  for (int op = 0; op < PTG_OP_COUNT; op++) CHECK(ptg_op_from_name(ptg_op_name(op)) == op);
  for (int e = 0; e < PTG_ELEM_COUNT; e++) CHECK(ptg_elem_from_name(ptg_elem_name(e)) == e);
  CHECK(ptg_op_from_name("frobnicate") == -1);
  /* an unwritable path fails without leaving a file */
  pt_diag_clear(&d);
  CHECK(ptg_target_save(t, "/nonexistent-dir/x.json", &d) < 0 && strstr(d.msg, "/nonexistent-dir/x.json"));
  free(first);
  unlink(path);
  ptg_target_free(u);
  ptg_target_free(t);
  TEST_DONE();
}
