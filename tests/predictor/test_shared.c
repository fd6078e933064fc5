/* +shared: a parallel body whose store moves fewer bytes per iteration of the parallel loop than
 * a line holds over a thread's chunk (false sharing) takes at least its shared stores x the
 * shared level's latency / the misses in flight on the way (the Emerald Rapids host's file:
 * L3 latency over L2's overlapping misses). The outer loop is the parallel one (7 iterations,
 * dwconv_mb #28's x % 7), the inner one stores a[i * 112 + x] 10000 times per outer iteration.
 * At 16 threads each thread gets one x: every line is written by 7 threads, bounded; at one
 * thread, or with x 16 floats apart (a line each), or without the option: unchanged. With 9
 * iterations 36 bytes apart, 16 threads (chunks of 1) share lines and 8 (chunks of 2, 72 bytes)
 * do not. */
#include "predictor/synthetic.h"
#include "test.h"

static double predict(int64_t outer_stride, int64_t outer_n, int threads, bool shared, const ptg_target *t, pt_diag *d) {
  pa_node head[1] = {synthetic_node(PA_OP_ADD, "add", 1)};
  pa_node body[2] = {synthetic_node(PA_OP_ADD, "fadd", 1), synthetic_node(PA_OP_STORE, "store", 1)};
  int64_t strides[2] = {448, outer_stride};
  body[1].n_strides = 2, body[1].strides = strides, body[1].array = 1;
  pa_edge e = {0, 1, PA_EDGE_DATA};
  pa_block blocks[2] = {{.name = "x", .count = (double)outer_n, .loop = 0, .n_nodes = 1, .nodes = head},
                        {.name = "i", .count = outer_n * 10000.0, .loop = 1, .n_nodes = 2, .nodes = body, .n_edges = 1,
                         .edges = &e}};
  pa_loop loops[2] = {{.header = 0, .parent = -1, .depth = 1, .n_blocks = 2, .blocks = (int[]){0, 1}, .trip_count = outer_n},
                      {.header = 1, .parent = 0, .depth = 2, .n_blocks = 1, .blocks = (int[]){1}, .trip_count = 10000}};
  pa_function f = {.name = "k_par0", .calls = 1, .threads = 1, .n_blocks = 2, .blocks = blocks, .n_loops = 2, .loops = loops,
                   .chunk_iterations = outer_n};
  pa_profile p = {.version = PA_PROFILE_VERSION, .source = "shared", .counts_source = "instrumented", .n_functions = 1,
                  .functions = &f};
  pp_options o;
  pp_options_default(&o);
  o.threads = threads, o.shared = shared;
  pp_prediction *r = pp_predict_profile(&p, t, &o, d);
  double s = r ? r->seconds : NAN;
  pp_prediction_free(r);
  return s;
}

int main(void) {
  pt_diag d = {0};
  ptg_target *t = synthetic_test_target("h100", &d);
  if (!t) TEST_DONE();
  pp_options parsed = synthetic_preset("steady+bw+overlap+strides+lanes+sets+carried+shared");
  CHECK(parsed.shared && parsed.carried && parsed.l1_sets);
  /* Emerald Rapids: L3 (shared by 16) at 107 cycles over L2's 11 L1 misses outstanding */
  CHECK(t->n_caches == 3 && t->caches[2].shared_by > 1 &&
        t->caches[1].overlapping_misses.value < t->memory.overlapping_misses.value);
  double per_store = t->caches[2].latency_cycles.value / t->caches[1].overlapping_misses.value;
  double hz = t->frequency_ghz.value * 1e9;
  double on = predict(4, 7, 16, true, t, &d), off = predict(4, 7, 16, false, t, &d);
  double need = 10000.0 * per_store / hz; /* one x per thread */
  CHECK_MSG(on >= 0.999 * need && on > 1.5 * off, "x %% 7 at 16 threads: %g s with +shared (bound %g), %g without", on, need,
            off);
  double one_on = predict(4, 7, 1, true, t, &d), one_off = predict(4, 7, 1, false, t, &d);
  CHECK_MSG(fabs(one_on - one_off) <= 1e-9 * one_off, "one thread: %g vs %g", one_on, one_off);
  double line_on = predict(64, 7, 16, true, t, &d), line_off = predict(64, 7, 16, false, t, &d);
  CHECK_MSG(fabs(line_on - line_off) <= 1e-9 * line_off, "a line per iteration: %g vs %g", line_on, line_off);
  double n9_16 = predict(36, 9, 16, true, t, &d), n9_16off = predict(36, 9, 16, false, t, &d);
  double n9_8 = predict(36, 9, 8, true, t, &d), n9_8off = predict(36, 9, 8, false, t, &d);
  CHECK_MSG(n9_16 > 1.5 * n9_16off && fabs(n9_8 - n9_8off) <= 1e-9 * n9_8off, "36 bytes: 16 threads %g / %g, 8 threads %g / %g",
            n9_16, n9_16off, n9_8, n9_8off);
  ptg_target_free(t);
  TEST_DONE();
}
