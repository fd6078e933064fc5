/* A tiny characterization (three instruction classes, no memory sweep, very few repetitions)
 * gives plausible numbers: sanity bounds that hold on any x86 or Arm core of the last decade,
 * not timing targets. The result validates and survives a save/load round trip. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "microbench/microbench.h"
#include "test.h"

int main(void) {
  pmb_options o = {.quick = true, .repetitions = 3, .min_seconds = 0.0003, .only = "add:f32,fma:f32,add:i64,load:i64,load:f32",
                   .skip_memory = true, .max_threads = 2};
  pt_diag d = {0};
  ptg_target *t = pmb_characterize(&o, &d);
  CHECK_MSG(t != NULL, "%s", d.msg);
  if (!t) TEST_DONE();
  CHECK(t->cores >= 1 && t->n_caches >= 2);
  CHECK(t->caches[0].size_bytes >= 8192 && t->caches[0].line_bytes >= 32);
  CHECK_MSG(t->frequency_ghz.value > 0.3 && t->frequency_ghz.value < 7, "%g GHz", t->frequency_ghz.value);
  CHECK(strcmp(t->provenance, "measured") == 0 && t->date && t->tool && t->counters);
  int w = t->max_vector_bits;
  const ptg_inst *add = ptg_target_find_inst(t, PTG_OP_ADD, PTG_ELEM_F32, w);
  const ptg_inst *fma = ptg_target_find_inst(t, PTG_OP_FMA, PTG_ELEM_F32, w);
  const ptg_inst *iadd = ptg_target_find_inst(t, PTG_OP_ADD, PTG_ELEM_I64, 64);
  const ptg_inst *load = ptg_target_find_inst(t, PTG_OP_LOAD, PTG_ELEM_I64, 64);
  CHECK(add && fma && iadd && load);
  CHECK(ptg_target_find_inst(t, PTG_OP_MUL, PTG_ELEM_F32, w) == NULL); /* --only honoured */
  /* misses in flight (mlp.c, run without the memory part): independent chases overlap, at most
   * as many as there are chases (96 with --quick); every strided walk timed */
  const ptg_figure *l2 = &t->caches[1].overlapping_misses, *mem = &t->memory.overlapping_misses;
  CHECK_MSG(isnan(l2->value) ? l2->source != NULL : l2->value >= 1.5 && l2->value <= 96, "L2 in flight %g", l2->value);
  CHECK_MSG(mem->value >= 1.5 && mem->value <= 96, "memory in flight %g", mem->value);
  CHECK(t->memory.n_strided == 6);
  /* store forwarding (forward.c): measured, a difference of two loops, never negative */
  CHECK_MSG(t->store_forward_fail_cycles.value >= 0 && t->store_forward_fail_cycles.value < 200 &&
                t->store_forward_fail_cycles.source,
            "store forward fail %g cycles", t->store_forward_fail_cycles.value);
  for (int i = 0; i < t->memory.n_strided; i++)
    CHECK_MSG(t->memory.strided[i].ns_per_access.value > 0 && t->memory.strided[i].ns_per_access.value < 1000,
              "stride %lld: %g ns", (long long)t->memory.strided[i].stride_bytes, t->memory.strided[i].ns_per_access.value);
  /* L1 set walks (set_walks.c): every row timed, by increasing sets, in flight at least about
   * one (a miss is served) and no more than the lines walked */
  const ptg_cache *l1 = &t->caches[0];
  CHECK_MSG(l1->associativity < 1 || l1->n_set_walks >= 4, "%d set walks", l1->n_set_walks);
  /* L1 set streams (set_streams.c): below, at and past the ways, none, half and all stored
   * back; every row timed, at most a microsecond an access; all stored back never faster than a
   * tenth of the same rows loaded */
  CHECK_MSG(l1->associativity < 1 || l1->n_set_streams >= 9, "%d set-stream rows", l1->n_set_streams);
  for (int i = 0; i < l1->n_set_streams; i++) {
    const ptg_set_stream *st = &l1->set_streams[i];
    CHECK_MSG(st->ns_per_access.value > 0 && st->ns_per_access.value < 1000 && st->ns_per_access.source &&
                  st->rmw_streams >= 0 && st->rmw_streams <= st->streams,
              "%d streams, %d stored back: %g ns", st->streams, st->rmw_streams, st->ns_per_access.value);
    if (st->rmw_streams == st->streams)
      CHECK(st->ns_per_access.value > 0.1 * ptg_target_set_stream_ns(t, st->streams, 0));
  }
  /* L1 columns read by 1..16 loads (set_loads.c): the set walks in at most 4 sets, each by five
   * load counts in order; every row timed, an L2 fill or more per access at most a microsecond;
   * the ratio to one load is one at one load */
  CHECK_MSG(l1->associativity < 1 || (l1->n_set_loads >= 10 && l1->n_set_loads % 5 == 0), "%d set-load rows", l1->n_set_loads);
  for (int i = 0; i < l1->n_set_loads; i++) {
    const ptg_set_load *sl = &l1->set_loads[i];
    CHECK_MSG(sl->loads == (1 << (i % 5)) && sl->sets >= 1 && sl->sets <= 4 && sl->lines % 16 == 0 && sl->ns_per_access.value > 0 &&
                  sl->ns_per_access.value < 1000 && sl->ns_per_access.source,
              "row %d: %d loads, %d sets, %lld lines: %g ns", i, sl->loads, sl->sets, (long long)sl->lines, sl->ns_per_access.value);
    if (sl->loads == 1) CHECK(fabs(ptg_target_set_loads_ratio(t, sl->sets, 1) - 1) < 1e-12);
  }
  for (int i = 0; i < l1->n_set_walks; i++) {
    const ptg_set_walk *sw = &l1->set_walks[i];
    CHECK(i == 0 || sw->sets >= l1->set_walks[i - 1].sets);
    CHECK(sw->lines > (int64_t)sw->sets * l1->associativity);
    CHECK_MSG(sw->overlapping_misses.value >= 0.5 && sw->overlapping_misses.value <= sw->lines, "stride %lld: %g in flight",
              (long long)sw->stride_bytes, sw->overlapping_misses.value);
    /* the same walk read-modify-write (l1rmw): timed, an L1 miss or more per access, at most
     * a microsecond (a store back never makes the walk faster than a tenth of the loads) */
    CHECK_MSG(sw->rmw_ns_per_access.value > 0.1 * sw->ns_per_access.value && sw->rmw_ns_per_access.value < 1000 &&
                  sw->rmw_ns_per_access.source,
              "stride %lld: read-modify-write %g ns per access (loads %g)", (long long)sw->stride_bytes,
              sw->rmw_ns_per_access.value, sw->ns_per_access.value);
  }
  if (add && fma && iadd && load) {
    CHECK_MSG(add->latency.value >= 1 && add->latency.value <= 8, "f32 add latency %g", add->latency.value);
    CHECK_MSG(fma->latency.value >= 2 && fma->latency.value <= 8, "f32 fma latency %g", fma->latency.value);
    CHECK_MSG(fma->recip_throughput.value >= 0.2 && fma->recip_throughput.value <= fma->latency.value,
              "fma recip throughput %g", fma->recip_throughput.value);
    /* the clock is calibrated on this very chain: 1 cycle up to timing noise */
    CHECK_MSG(fabs(iadd->latency.value - 1) < 0.2, "i64 add latency %g", iadd->latency.value);
    CHECK_MSG(iadd->recip_throughput.value >= 0.15 && iadd->recip_throughput.value <= 1.05, "i64 add rthroughput %g",
              iadd->recip_throughput.value);
    CHECK_MSG(load->latency.value >= 2 && load->latency.value <= 8, "L1 load-to-use %g", load->latency.value);
    /* a vector load chases through a lane move whose round trip is timed and half taken off:
     * the row says so, and what is left is an L1 hit, not a multiple of it (two of Zen's 7-8-cycle
     * vector loads are 14; the ASan build beside other tests once measured 11.56 on a loaded
     * Zen 3, so the bound is 13, not 10) */
    const ptg_inst *vload = ptg_target_find_inst(t, PTG_OP_LOAD, PTG_ELEM_F32, w);
    CHECK(vload != NULL);
    if (vload) {
      CHECK_MSG(vload->latency.source && strstr(vload->latency.source, "round trip"), "source %s",
                vload->latency.source ? vload->latency.source : "(none)");
      CHECK_MSG(vload->latency.value >= 2 && vload->latency.value <= 13, "vector load-to-use %g", vload->latency.value);
    }
    CHECK(add->latency.reps == 3 && add->latency.spread >= 0);
    CHECK(add->instruction && strlen(add->instruction) > 0);
    CHECK(add->unit != NULL && fma->unit != NULL);
  }
  CHECK(t->n_runtime >= 1 && t->runtime[0].fork_join_ns.value > 0 && t->runtime[0].fork_join_ns.value < 1e6);
  CHECK(t->issue_width.value >= 1 && t->issue_width.value <= 16);
  char path[] = "/tmp/portent_quick_XXXXXX";
  int fd = mkstemp(path);
  close(fd);
  CHECK_MSG(ptg_target_save(t, path, &d) == 0, "%s", d.msg);
  ptg_target *u = ptg_target_load(path, &d);
  CHECK_MSG(u && u->n_insts == t->n_insts, "%s", d.msg);
  ptg_target_free(u);
  unlink(path);
  ptg_target_free(t);
  /* --gpu on a machine without one: a clear error, not a crash or a silent skip */
  char desc[128];
  pt_diag_clear(&d);
  if (pmb_gpu_probe(desc, sizeof desc, &d) < 0) {
    pmb_options g = {.gpu = true};
    pt_diag_clear(&d);
    CHECK(pmb_characterize(&g, &d) == NULL && d.err == PT_ERR_UNSUPPORTED && strstr(d.msg, "no GPU"));
  }
  TEST_DONE();
}
