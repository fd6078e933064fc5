/* +far for gathers and scatters: a gather's first lane walks like a load (analyzer/access.c
 * follows the splat base of its vector getelementptr: strides and offset in the profile), and
 * lanes a page or more apart whose lines come back only past L1's capacity miss L1 at every
 * execution (predictor/memory.c pp_gather_lanes_missing_l1), each charged an L2 fill over L1's
 * misses in flight on the gather unit (conv_r50_2 #6: 64 output channels 12544 bytes apart under
 * a yy loop, the yy sweep's 3584 lines back only at the next xx; docs/validation.md); and when a
 * loop's gathers touch more pages per iteration than the L1 DTLB holds, each page-apart lane
 * waits for an L2-TLB hit. The scatter that writes the gathered lines back finds them in L1 and
 * their entries in the TLB. A sweep that L1 holds, or lanes less than a page apart, change
 * nothing. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "test.h"
#include "synthetic.h"

/* for x < 8: for y < Y: out[c][y][x] += 1 for LANES channels c at once (gather + scatter,
 * lanes STEP floats apart; the base moves 56 floats per y, 1 per x) */
static const char *ir_fmt =
    "define void @lanes(ptr %%out) {\n"
    "entry:\n  br label %%x\n"
    "x:\n  %%xv = phi i64 [0, %%entry], [%%xn, %%xl]\n  br label %%y\n"
    "y:\n  %%yv = phi i64 [0, %%x], [%%yn, %%y]\n  %%row = mul i64 %%yv, 56\n  %%at = add i64 %%row, %%xv\n"
    "  %%i = insertelement <%1$d x i64> poison, i64 %%at, i64 0\n"
    "  %%s = shufflevector <%1$d x i64> %%i, <%1$d x i64> poison, <%1$d x i32> zeroinitializer\n"
    "  %%idx = add <%1$d x i64> %%s, %2$s\n"
    "  %%p = getelementptr float, ptr %%out, <%1$d x i64> %%idx\n"
    "  %%v = call <%1$d x float> @llvm.masked.gather.v%1$df32.v%1$dp0(<%1$d x ptr> %%p, i32 4, <%1$d x i1> %3$s, <%1$d x float> poison)\n"
    "  %%w = fadd <%1$d x float> %%v, %4$s\n"
    "  call void @llvm.masked.scatter.v%1$df32.v%1$dp0(<%1$d x float> %%w, <%1$d x ptr> %%p, i32 4, <%1$d x i1> %3$s)\n"
    "  %%yn = add i64 %%yv, 1\n  %%yd = icmp eq i64 %%yn, %5$d\n  br i1 %%yd, label %%xl, label %%y\n"
    "xl:\n  %%xn = add i64 %%xv, 1\n  %%xd = icmp eq i64 %%xn, 8\n  br i1 %%xd, label %%exit, label %%x\n"
    "exit:\n  ret void\n}\n"
    "declare <%1$d x float> @llvm.masked.gather.v%1$df32.v%1$dp0(<%1$d x ptr>, i32, <%1$d x i1>, <%1$d x float>)\n"
    "declare void @llvm.masked.scatter.v%1$df32.v%1$dp0(<%1$d x float>, <%1$d x ptr>, i32, <%1$d x i1>)\n";

static pa_profile *profile(int n_lanes, int step, int y) {
  char lanes[2048], mask[1024], ones[2048], ir[16384];
  int a = snprintf(lanes, sizeof lanes, "<"), b = snprintf(mask, sizeof mask, "<"), c = snprintf(ones, sizeof ones, "<");
  for (int k = 0; k < n_lanes; k++) {
    const char *sep = k + 1 < n_lanes ? ", " : ">";
    a += snprintf(lanes + a, sizeof lanes - (size_t)a, "i64 %d%s", k * step, sep);
    b += snprintf(mask + b, sizeof mask - (size_t)b, "i1 true%s", sep);
    c += snprintf(ones + c, sizeof ones - (size_t)c, "float 1.0%s", sep);
  }
  snprintf(ir, sizeof ir, ir_fmt, n_lanes, lanes, mask, ones, y);
  pt_diag d = {0};
  pa_profile *p = synthetic_profile_ir(ir, "lanes", &d);
  CHECK_MSG(p, "%s", d.msg);
  return p;
}

/* The gather (i = 0) or the scatter (i = 1) of block y. */
static pa_node *lanes_node(pa_profile *p, int i) {
  pa_function *f = &p->functions[0];
  for (int b = 0; b < f->n_blocks; b++)
    for (int k = 0; strcmp(f->blocks[b].name, "y") == 0 && k < f->blocks[b].n_nodes; k++)
      if (f->blocks[b].nodes[k].op == PA_OP_GATHER && i-- == 0) return &f->blocks[b].nodes[k];
  return NULL;
}

/* Cycles per y iteration with and without +far. */
static void cycles(const pa_profile *p, int y, const ptg_target *t, double *with, double *without) {
  pp_options o;
  pp_options_default(&o);
  o.threads = 1;
  CHECK(o.far_sets && o.lanes && o.strides);
  pt_diag d = {0};
  for (int pass = 0; pass < 2; pass++) {
    o.far_sets = pass == 0;
    pp_prediction *r = pp_predict_profile(p, t, &o, &d);
    CHECK_MSG(r, "%s", d.msg);
    *(pass == 0 ? with : without) = r ? r->seconds * r->frequency_ghz * 1e9 / (8.0 * y) : NAN;
    pp_prediction_free(r);
  }
}

int main(void) {
  pt_diag d = {0};
  ptg_target *t = synthetic_shipped_target("zen4-epyc-2c", &d);
  CHECK_MSG(t, "%s", d.msg);
  pa_profile *far = profile(16, 3136, 56), *near = profile(16, 3136, 8), *close = profile(16, 576, 56);
  pa_profile *pages = profile(96, 3136, 4);
  if (!t || !far || !near || !close || !pages) TEST_DONE();

  /* the analysis: both lanes nodes walk their first lane, 224 bytes per y and 4 per x, from the
   * same object at the same offset; the format keeps them */
  for (int i = 0; i < 2; i++) {
    const pa_node *n = lanes_node(far, i);
    CHECK_MSG(n && n->lane_step == 12544 && n->n_strides == 2 && n->strides[0] == 224 && n->strides[1] == 4,
              "lanes node %d: lane step %lld, strides %lld %lld", i, n ? (long long)n->lane_step : 0,
              n && n->n_strides > 0 ? (long long)n->strides[0] : -1, n && n->n_strides > 1 ? (long long)n->strides[1] : -1);
    CHECK(n && n->array == 1 && n->has_offset && n->offset == 0);
  }
  char *json = pa_profile_to_json(far);
  pa_profile *back = json ? pa_profile_parse(json, "lanes", &d) : NULL;
  CHECK_MSG(back, "%s", d.msg);
  const pa_node *g = back ? lanes_node(back, 0) : NULL;
  CHECK(g && g->n_strides == 2 && g->strides[0] == 224 && g->has_offset && g->offset == 0);
  pa_profile_free(back);
  free(json);

  /* the model: 56 rows x 16 lanes = 896 lines between returns, past L1's 512: the gather's 16
   * lanes miss L1 at every y, each an L2 fill over L1's misses in flight (L2's figure); the
   * scatter finds the lines. The gather unit bounds the block, so the cycles grow by that much. */
  double with, without;
  cycles(far, 56, t, &with, &without);
  const ptg_cache *l2 = &t->caches[1];
  double fills = 16 * (l2->latency_cycles.value - t->caches[0].latency_cycles.value) / l2->overlapping_misses.value;
  CHECK_MSG(fabs((with - without) / fills - 1) < 0.05, "far lanes: %g cycles per y with +far, %g without, want +%g",
            with, without, fills);
  /* 8 rows (128 lines) between returns stay in L1; lanes 2304 bytes apart are not page-apart */
  cycles(near, 8, t, &with, &without);
  CHECK_MSG(fabs(with - without) <= 1e-9 * without, "near sweep: %g vs %g", with, without);
  cycles(close, 56, t, &with, &without);
  CHECK_MSG(fabs(with - without) <= 1e-9 * without, "lanes within a page: %g vs %g", with, without);

  /* 96 lanes a page apart: 96 pages an iteration, past Zen 4's 72-entry L1 DTLB (memory.c's
   * published figures: an L2-TLB hit adds 7 cycles), while their 4 rows (384 lines) stay in L1:
   * each lane of the gather waits 7 cycles, overlapped up to memory's misses in flight */
  cycles(pages, 4, t, &with, &without);
  double tlb = 96 * 7 / t->memory.overlapping_misses.value;
  CHECK_MSG(fabs((with - without) / tlb - 1) < 0.05, "pages past the DTLB: %g cycles per y with +far, %g without, want +%g",
            with, without, tlb);

  pa_profile_free(far), pa_profile_free(near), pa_profile_free(close), pa_profile_free(pages);
  ptg_target_free(t);
  TEST_DONE();
}
