/* Gathers and scatters whose lanes crowd a few L1 sets (predictor/legalize.c, +lanes): lanes
 * `lane_step` bytes apart fall on (line number mod sets); where a set gets more lines than L1
 * has ways, those lanes are served by L2 each time, which holds the gather unit for the lanes x
 * (L2 - L1 latency) / L2's overlapping misses. conv_r50_1 #20's 64 lanes 50176 bytes apart
 * (784 lines: 4 of 64 sets, 16 lines a set) were predicted 2.3x fast on Zen 4 without it. */
#include <math.h>

#include "predictor/predictor.h"
#include "synthetic.h"
#include "test.h"

static pa_node lanes_node(const char *opcode, int lanes, int64_t step) {
  pa_node n = synthetic_node(PA_OP_GATHER, opcode, lanes);
  n.is_memory = true, n.bytes = 4 * lanes, n.masked = true, n.mask = n.mask_lanes = -1, n.lane_step = step;
  return n;
}

/* every gather and scatter class priced alike, so that only the crowded lanes differ */
static ptg_target *target(int l1_ways) {
  ptg_target *t = synthetic_target(512, 1);
  const ptg_op ops[] = {PTG_OP_GATHER, PTG_OP_GATHER_PAGE, PTG_OP_SCATTER, PTG_OP_SCATTER_PAGE};
  for (int i = 0; i < 4; i++) {
    ptg_inst *r = ptg_target_add_inst(t, ops[i], PTG_ELEM_F32, 512);
    r->latency.value = 20, r->recip_throughput.value = 16, r->unit = "ld";
  }
  t->caches[0].associativity = l1_ways;          /* 32 KiB: 64 sets at 8 ways, 32 at 16 */
  t->caches[1].overlapping_misses.value = 5;     /* L1 4 cycles, L2 14 (synthetic_target) */
  return t;
}

int main(void) {
  static const struct {
    int ways, lanes;
    int64_t step;
    double crowded; /* lanes served by L2 */
    const char *why;
  } rows[] = {
      {8, 64, 4160, 0, "65 lines apart: 64 sets, one line each"},
      {8, 64, 4608, 0, "72 lines apart: 8 sets, 8 lines each, as many as the ways"},
      {8, 64, 5120, 64, "80 lines apart: 4 sets, 16 lines each"},
      {8, 64, 50176, 64, "784 lines apart (conv_r50_1 #20): 4 sets, 16 lines each"},
      {8, 64, -50176, 64, "the same walked down"},
      {8, 16, 50176, 0, "16 lanes: 4 a set"},
      {8, 64, 4, 0, "neighbours: one line holds 16 lanes"},
      {16, 64, 4608, 0, "16 ways at 32 sets, 72 lines apart: 4 sets, 16 lines each"},
      {16, 64, 50176, 64, "16 ways at 32 sets: 784 = 16 mod 32, 2 sets of 32 lines"},
      {16, 64, 2048, 64, "32 lines apart, 16 ways at 32 sets: 1 set of 64 lines"},
  };
  pt_diag d = {0};
  pp_options lanes = {0}, plain = {0};
  CHECK(pp_options_preset(&lanes, "steady+bw+lanes") == 0 && lanes.lanes);
  CHECK(pp_options_preset(&plain, "steady+bw") == 0 && !plain.lanes);
  for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
    ptg_target *t = target(rows[i].ways);
    pp_predictor *pp = pp_predictor_new(t, &lanes, &d);
    CHECK_MSG(pp, "predictor: %s", d.msg);
    if (!pp) TEST_DONE();
    pa_node g = lanes_node("llvm.masked.gather.v64f32.v64p0", rows[i].lanes, rows[i].step);
    pa_node s = lanes_node("llvm.masked.scatter.v64f32.v64p0", rows[i].lanes, rows[i].step);
    pa_node near = lanes_node("llvm.masked.gather.v64f32.v64p0", rows[i].lanes, 4160);
    pp_op og = pp_legalize_node(pp, &g), os = pp_legalize_node(pp, &s), on = pp_legalize_node(pp, &near);
    /* 64 f32 lanes are 4 parts of 512 bits; each part carries its share */
    double want = rows[i].crowded * (14 - 4) / 5.0 / og.parts;
    CHECK_MSG(fabs(og.occupancy - on.occupancy - want) < 1e-9 && fabs(os.occupancy - on.occupancy - want) < 1e-9,
              "%s: gather %g, scatter %g over %g per part, want %g", rows[i].why, og.occupancy, os.occupancy,
              on.occupancy, want);
    pp_predictor_free(pp);
    /* without +lanes every gather is priced by its row alone */
    pp = pp_predictor_new(t, &plain, &d);
    og = pp_legalize_node(pp, &g), on = pp_legalize_node(pp, &near);
    CHECK_MSG(og.occupancy == on.occupancy, "%s without +lanes: %g vs %g", rows[i].why, og.occupancy, on.occupancy);
    pp_predictor_free(pp);
    ptg_target_free(t);
  }
  TEST_DONE();
}
