/* Gathers and scatters by where their lanes fall: a scatter is priced with the target's scatter
 * row, lanes >= 4096 bytes apart (the profile's lane_step) with the page-apart rows, under the
 * "+lanes" option; a target without a class (Zen 5's file, the published ones) prices it as the
 * class it falls back to and the prediction lists that fallback; without the option every one
 * is a gather, as before. */
#include <math.h>
#include <string.h>

#include "predictor/predictor.h"
#include "synthetic.h"
#include "test.h"

static pa_node lanes_node(const char *opcode, int64_t step) {
  pa_node n = synthetic_node(PA_OP_GATHER, opcode, 16);
  n.is_memory = true, n.bytes = 64, n.masked = true, n.mask = n.mask_lanes = -1, n.lane_step = step;
  return n;
}

static void add_row(ptg_target *t, ptg_op op, double lat, double rt) {
  ptg_inst *r = ptg_target_add_inst(t, op, PTG_ELEM_F32, 512);
  r->latency.value = lat, r->recip_throughput.value = rt, r->unit = "ld";
}

/* Whether the prediction of a one-node profile lists `note` among its fallbacks. */
static bool notes(pp_predictor *pp, pa_node *n, const char *note) {
  pa_block b = {.name = "b", .count = 1, .loop = -1, .n_nodes = 1, .nodes = n};
  pa_function f = {.name = "f", .calls = 1, .threads = 1, .n_blocks = 1, .blocks = &b};
  pa_profile prof = {.version = PA_PROFILE_VERSION, .source = "synthetic", .counts_source = "instrumented",
                     .n_functions = 1, .functions = &f};
  pt_diag d = {0};
  pp_prediction *r = pp_predict(pp, &prof, &d);
  bool found = false;
  for (int i = 0; r && i < r->n_fallbacks; i++) found |= strstr(r->fallbacks[i], note) != NULL;
  pp_prediction_free(r);
  return found;
}

int main(void) {
  pa_node near = lanes_node("llvm.masked.gather.v16f32.v16p0", 4), far = lanes_node("llvm.masked.gather.v16f32.v16p0", 50176);
  pa_node back = lanes_node("llvm.masked.gather.v16f32.v16p0", -4096), old = lanes_node("llvm.masked.gather.v16f32.v16p0", 0);
  pa_node sc = lanes_node("llvm.masked.scatter.v16f32.v16p0", 4), scfar = lanes_node("llvm.masked.scatter.v16f32.v16p0", 4096);
  CHECK(pp_node_class(&near) == PTG_OP_GATHER && pp_node_class(&far) == PTG_OP_GATHER_PAGE);
  CHECK(pp_node_class(&back) == PTG_OP_GATHER_PAGE && pp_node_class(&old) == PTG_OP_GATHER);
  CHECK(pp_node_class(&sc) == PTG_OP_SCATTER && pp_node_class(&scfar) == PTG_OP_SCATTER_PAGE);

  pt_diag d = {0};
  pp_options lanes = {0}, plain = {0};
  CHECK(pp_options_preset(&lanes, "steady+bw+lanes") == 0 && lanes.lanes);
  CHECK(pp_options_preset(&plain, "steady+bw") == 0 && !plain.lanes);
  /* every class measured: each its own row */
  ptg_target *t = synthetic_target(512, 1);
  add_row(t, PTG_OP_GATHER, 30, 16);
  add_row(t, PTG_OP_SCATTER, NAN, 24);
  add_row(t, PTG_OP_GATHER_PAGE, 90, 40);
  add_row(t, PTG_OP_SCATTER_PAGE, NAN, 60);
  pp_predictor *pp = pp_predictor_new(t, &lanes, &d);
  CHECK_MSG(pp, "predictor: %s", d.msg);
  if (!pp) TEST_DONE();
  pp_op g = pp_legalize_node(pp, &near), gf = pp_legalize_node(pp, &far), s = pp_legalize_node(pp, &sc),
        sf = pp_legalize_node(pp, &scfar);
  CHECK_MSG(g.latency == 30 && gf.latency == 90, "gather latency %g, page-apart %g", g.latency, gf.latency);
  CHECK_MSG(gf.occupancy == 2.5 * g.occupancy && s.occupancy == 1.5 * g.occupancy && sf.occupancy == 3.75 * g.occupancy,
            "occupancy %g %g %g %g", g.occupancy, gf.occupancy, s.occupancy, sf.occupancy);
  CHECK(g.is_load && gf.is_load && !s.is_load && s.is_store && sf.is_store);
  CHECK(!notes(pp, &far, "gather_page") && !notes(pp, &scfar, "scatter_page"));
  pp_predictor_free(pp);
  /* without the option: all as gathers */
  pp = pp_predictor_new(t, &plain, &d);
  gf = pp_legalize_node(pp, &far), s = pp_legalize_node(pp, &sc);
  CHECK(gf.latency == 30 && gf.occupancy == g.occupancy && s.occupancy == g.occupancy && s.is_store);
  pp_predictor_free(pp);
  ptg_target_free(t);

  /* a target with the gather row only: everything priced as the gather, the fallback listed */
  t = synthetic_target(512, 1);
  add_row(t, PTG_OP_GATHER, 30, 16);
  pp = pp_predictor_new(t, &lanes, &d);
  gf = pp_legalize_node(pp, &far), sf = pp_legalize_node(pp, &scfar);
  CHECK(gf.latency == 30 && gf.occupancy == g.occupancy && sf.occupancy == g.occupancy && sf.is_store);
  CHECK(notes(pp, &far, "gather_page.f32.512 -> gather.f32.512"));
  CHECK(notes(pp, &scfar, "scatter_page.f32.512 -> gather.f32.512"));
  pp_predictor_free(pp);
  ptg_target_free(t);
  TEST_DONE();
}
