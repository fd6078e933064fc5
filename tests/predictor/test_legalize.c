/* Legalization: a <16 x float> add is 1 operation at 512 bits, 2 at 256 and 4 at 128; a
 * narrow vector on a wide target stays one; a missing class falls back and is noted; a
 * float mul feeding an add becomes one FMA; a splat of a loaded scalar becomes one load;
 * a masked load or store costs the target's maskload / maskstore row, or the plain row
 * (noted) where the target has none; a phi of a vector that is neither a power of two lanes
 * nor narrower than a register crosses blocks as scalars (two shuffles per lane). */
#include "predictor/synthetic.h"
#include "test.h"

int main(void) {
  pt_diag d = {0};
  /* the legalizer maps classes by index: both tables must list the same names in order */
  for (int i = 0; i < PA_OP_COUNT; i++) CHECK(strcmp(pa_opclass_name((pa_opclass)i), ptg_op_name((ptg_op)i)) == 0);
  const int widths[3] = {512, 256, 128}, want[3] = {1, 2, 4};
  for (int w = 0; w < 3; w++) {
    ptg_target *t = synthetic_target(widths[w], 1);
    pp_predictor *pp = pp_predictor_new(t, NULL, &d);
    pa_node add = synthetic_node(PA_OP_ADD, "fadd", 16);
    pp_op op = pp_legalize_node(pp, &add);
    CHECK_MSG(op.parts == want[w], "%d bits: %d parts, want %d", widths[w], op.parts, want[w]);
    /* 16 such adds, independent, take parts x 16 x 0.5 / ... cycles: proportional to parts */
    pp_op ops[16];
    for (int i = 0; i < 16; i++) ops[i] = op;
    double c = pp_schedule(pp, 16, ops, 0, NULL, true);
    CHECK_MSG(fabs(c - 16 * 0.5 * want[w]) < 0.3, "%d bits: %g cycles", widths[w], c);
    pa_node narrow = synthetic_node(PA_OP_ADD, "fadd", 4);
    CHECK(pp_legalize_node(pp, &narrow).parts == 1);
    /* phis: <56 x float> is rebuilt lane by lane at every width; <64 x float> splits into
     * registers; <12 x float> widens into one register where 512 bits hold it */
    pa_node phi56 = synthetic_node(PA_OP_OTHER, "phi", 56), phi64 = synthetic_node(PA_OP_OTHER, "phi", 64),
            phi12 = synthetic_node(PA_OP_OTHER, "phi", 12);
    CHECK_MSG(pp_legalize_node(pp, &phi56).parts == 112, "%d bits: <56 x float> phi %d parts", widths[w],
              pp_legalize_node(pp, &phi56).parts);
    CHECK(pp_legalize_node(pp, &phi64).parts == 0);
    CHECK(pp_legalize_node(pp, &phi12).parts == (widths[w] == 512 ? 0 : 24));
    pp_predictor_free(pp);
    ptg_target_free(t);
  }

  ptg_target *t = synthetic_target(512, 1);
  pp_predictor *pp = pp_predictor_new(t, NULL, &d);
  /* no div row: the nearest class is used and the prediction says so */
  pp_prediction dummy = {0};
  (void)dummy;
  pa_node div = synthetic_node(PA_OP_DIV, "fdiv", 16);
  pp_op dv = pp_legalize_node(pp, &div);
  CHECK(dv.parts >= 1);
  pa_function f = {.name = "f", .calls = 1, .threads = 1, .n_blocks = 1};
  pa_block b = {.name = "b", .count = 1, .loop = -1, .n_nodes = 1, .nodes = &div};
  f.blocks = &b;
  pa_profile prof = {.version = PA_PROFILE_VERSION, .source = "synthetic", .counts_source = "instrumented",
                     .n_functions = 1, .functions = &f};
  pp_prediction *r = pp_predict(pp, &prof, &d);
  CHECK_MSG(r && r->n_fallbacks >= 1, "%s", d.msg);
  if (r && r->n_fallbacks) CHECK(strstr(r->fallbacks[0], "div.f32.512") != NULL);
  pp_prediction_free(r);

  /* fmul -> fadd contracts to one FMA; splat of a loaded scalar becomes a broadcast load */
  pa_node nodes[6] = {synthetic_node(PA_OP_LOAD, "load", 1), synthetic_node(PA_OP_SHUFFLE, "insertelement", 16),
                      synthetic_node(PA_OP_SHUFFLE, "shufflevector", 16), synthetic_node(PA_OP_MUL, "fmul", 16),
                      synthetic_node(PA_OP_ADD, "fadd", 16), synthetic_node(PA_OP_LOAD, "load", 16)};
  pa_edge edges[5] = {{0, 1, PA_EDGE_DATA}, {1, 2, PA_EDGE_DATA}, {2, 3, PA_EDGE_DATA}, {5, 3, PA_EDGE_DATA},
                      {3, 4, PA_EDGE_DATA}};
  pa_block blk = {.name = "fma", .n_nodes = 6, .nodes = nodes, .n_edges = 5, .edges = edges};
  pp_op ops[6];
  pp_legalize_block(pp, &blk, 4, ops);
  CHECK(ops[0].parts == 1 && ops[0].is_load); /* the broadcast load */
  CHECK(ops[1].parts == 0 && ops[2].parts == 0);
  CHECK(ops[3].parts == 0);                   /* the mul folded into ... */
  CHECK(ops[4].parts == 1 && ops[4].latency == 4); /* ... the FMA */
  pp_predictor_free(pp);
  ptg_target_free(t);

  /* masked loads and stores: the analyzer's mask fields (or, in older profiles, the
   * intrinsic's name) choose the masked rows */
  pa_node mload = synthetic_node(PA_OP_LOAD, "llvm.masked.load.v16f32.p0", 16);
  mload.masked = true, mload.mask = -1, mload.mask_lanes = -1;
  pa_node mstore = synthetic_node(PA_OP_STORE, "llvm.masked.store.v16f32.p0", 16);
  mstore.masked = true, mstore.mask = -1, mstore.mask_lanes = -1;
  pa_node old_profile = mload; /* written before the mask fields: name only */
  old_profile.masked = false, old_profile.mask_lanes = 0;
  pa_node full = mload; /* a constant mask with every lane on is a plain load */
  full.mask_lanes = 16;
  pa_node plain = synthetic_node(PA_OP_LOAD, "load", 16);
  CHECK(pp_node_class(&mload) == PTG_OP_MASKLOAD && pp_node_class(&mstore) == PTG_OP_MASKSTORE);
  CHECK(pp_node_class(&old_profile) == PTG_OP_MASKLOAD);
  CHECK(pp_node_class(&full) == PTG_OP_LOAD && pp_node_class(&plain) == PTG_OP_LOAD);
  pa_node gather = synthetic_node(PA_OP_GATHER, "llvm.masked.gather.v16f32.v16p0", 16);
  gather.masked = true, gather.mask_lanes = -1;
  CHECK(pp_node_class(&gather) == PTG_OP_GATHER);

  /* a target without the masked rows (published targets): the plain load row, noted */
  t = synthetic_target(512, 1);
  pp = pp_predictor_new(t, NULL, &d);
  pp_op m0 = pp_legalize_node(pp, &mload), p0 = pp_legalize_node(pp, &plain);
  CHECK(m0.is_load && m0.latency == p0.latency && m0.occupancy == p0.occupancy && m0.unit == p0.unit);
  b.nodes = &mload;
  r = pp_predict(pp, &prof, &d);
  bool noted = false;
  for (int i = 0; r && i < r->n_fallbacks; i++) noted |= strstr(r->fallbacks[i], "maskload.f32.512 -> load.f32.512") != NULL;
  CHECK_MSG(noted, "no maskload -> load fallback noted (%d notes)", r ? r->n_fallbacks : -1);
  pp_prediction_free(r);
  pp_predictor_free(pp);
  ptg_target_free(t);

  /* a target with them: the masked row's latency and throughput, on the load unit */
  t = synthetic_target(512, 1);
  ptg_inst *mr = ptg_target_add_inst(t, PTG_OP_MASKLOAD, PTG_ELEM_F32, 512);
  mr->latency.value = 9, mr->recip_throughput.value = 3, mr->unit = "ld";
  ptg_inst *sr = ptg_target_add_inst(t, PTG_OP_MASKSTORE, PTG_ELEM_F32, 512);
  sr->latency.value = NAN, sr->recip_throughput.value = 5, sr->unit = "st";
  pp = pp_predictor_new(t, NULL, &d);
  pp_op m1 = pp_legalize_node(pp, &mload), p1 = pp_legalize_node(pp, &plain), s1 = pp_legalize_node(pp, &mstore);
  CHECK(m1.is_load && !s1.is_load && s1.is_store);
  CHECK_MSG(m1.latency == 9 && p1.latency == 4, "masked load latency %g, plain %g", m1.latency, p1.latency);
  CHECK_MSG(fabs(m1.occupancy / p1.occupancy - 6) < 1e-9, "occupancy %g vs %g", m1.occupancy, p1.occupancy);
  CHECK(m1.unit == p1.unit);
  CHECK_MSG(fabs(s1.occupancy - 5) < 1e-9, "masked store occupancy %g", s1.occupancy);
  /* 16 independent masked loads take 6x the cycles of 16 plain ones */
  pp_op many[16];
  for (int i = 0; i < 16; i++) many[i] = m1;
  double cm = pp_schedule(pp, 16, many, 0, NULL, true);
  for (int i = 0; i < 16; i++) many[i] = p1;
  double cp = pp_schedule(pp, 16, many, 0, NULL, true);
  CHECK_MSG(cm > 4 * cp, "16 masked loads %g cycles, plain %g", cm, cp);
  r = pp_predict(pp, &prof, &d);
  CHECK(r != NULL);
  for (int i = 0; r && i < r->n_fallbacks; i++) CHECK_MSG(!strstr(r->fallbacks[i], "maskload"), "%s", r->fallbacks[i]);
  pp_prediction_free(r);
  pp_predictor_free(pp);
  ptg_target_free(t);
  TEST_DONE();
}
