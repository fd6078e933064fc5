/* Memory-level parallelism (+mlp): at most the target's memory.overlapping_misses accesses
 * beyond L1 are in flight, so by Little's law a loop body takes at least its lines x their
 * latency beyond L1 / overlapping_misses. A loop of 16 independent loads, each a new line from
 * DRAM (200 cycles, L1 4), overlaps them all in the steady-state pipeline (8 cycles per
 * iteration, the load pipes); with 10 misses in flight it takes 16 x 196 / 10 = 313.6. */
#include "predictor/synthetic.h"
#include "test.h"

/* Cycles per iteration of the loop (block 0) under a preset, one thread; NAN on failure. */
static double cycles(const pa_profile *p, const ptg_target *t, const char *preset, pp_bound *bound) {
  pt_diag d = {0};
  pp_options o = {.threads = 1};
  if (pp_options_preset(&o, preset) != 0) return NAN;
  pp_prediction *r = pp_predict_profile(p, t, &o, &d);
  double c = r ? r->blocks[0].cycles : NAN;
  if (r && fabs(r->cycles - c * r->blocks[0].ecount) > 1e-6 * r->cycles) c = NAN; /* the block is the program */
  if (r) *bound = r->blocks[0].bound;
  else fprintf(stderr, "%s: %s\n", preset, d.msg);
  pp_prediction_free(r);
  return c;
}

static bool near(double x, double want) { return fabs(x - want) <= 1e-9 * fabs(want); }

int main(void) {
  ptg_target *t = synthetic_target(512, 4); /* memory.overlapping_misses 10 */
  pa_node nodes[17];
  int n = synthetic_line_loads(nodes, 16);
  synthetic_loop s;
  pa_reuse_hist h = {0};
  h.cold = h.accesses = 160000; /* 10 MB of first touches: every line from DRAM */
  pa_profile *p = synthetic_loop_profile(&s, nodes, n, NULL, 0, 10000, &h);
  pp_bound bound = PP_BOUND_COUNT;

  double off = cycles(p, t, "steady", &bound);
  CHECK_MSG(near(off, 8) && bound != PP_BOUND_MEMORY, "without +mlp: %g cycles, bound %s (want 8, the load pipes)", off,
            pp_bound_name(bound));
  double on = cycles(p, t, "steady+mlp", &bound);
  CHECK_MSG(near(on, 16 * 196 / 10.0) && bound == PP_BOUND_MEMORY, "+mlp: %g cycles, bound %s (want 313.6, memory)", on,
            pp_bound_name(bound));
  /* twice the misses in flight: half the time; a quarter: four times it */
  t->memory.overlapping_misses.value = 20;
  on = cycles(p, t, "steady+mlp", &bound);
  CHECK_MSG(near(on, 16 * 196 / 20.0), "20 in flight: %g cycles, want 156.8", on);
  t->memory.overlapping_misses.value = 2.5;
  on = cycles(p, t, "steady+mlp", &bound);
  CHECK_MSG(near(on, 16 * 196 / 2.5), "2.5 in flight: %g cycles, want 1254.4", on);
  off = cycles(p, t, "steady", &bound);
  CHECK_MSG(near(off, 8), "without +mlp the figure changes nothing: %g cycles", off);
  t->memory.overlapping_misses.value = 10;

  /* half the accesses L1 hits (reuse at 8..15 lines): the expected latency is 102, its excess
   * over L1 98, so half the bound */
  memset(&h, 0, sizeof h);
  h.bins[4] = h.cold = 80000, h.accesses = 160000;
  p = synthetic_loop_profile(&s, nodes, n, NULL, 0, 10000, &h);
  on = cycles(p, t, "steady+mlp", &bound);
  CHECK_MSG(near(on, 16 * 98 / 10.0), "half from DRAM: %g cycles, want 156.8", on);
  /* one access in 64 from DRAM: 16 x 196 / 64 / 10 = 4.9 cycles in flight, under the pipes' 8:
   * the bound is a floor, not added */
  h.bins[4] = 157500, h.cold = 0, h.bins[20] = 2500; /* 2500 at 2^19 lines and more: beyond L2 */
  p = synthetic_loop_profile(&s, nodes, n, NULL, 0, 10000, &h);
  on = cycles(p, t, "steady+mlp", &bound);
  CHECK_MSG(near(on, 8) && bound != PP_BOUND_MEMORY, "1/64 from DRAM: %g cycles, bound %s (want 8)", on,
            pp_bound_name(bound));
  ptg_target_free(t);
  TEST_DONE();
}
