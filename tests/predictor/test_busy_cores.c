/* +busy: a parallel body's threads each keep the share of a core that the target's L1
 * bandwidth per thread at that many threads shows (ptg_target_core_share); serial code, one
 * thread and a target without the rows are unchanged. */
#include "predictor/synthetic.h"
#include "test.h"

static ptg_bandwidth l1_row(int threads, double read, double write, double copy, double triad) {
  ptg_bandwidth b = {.threads = threads};
  b.read.value = read, b.write.value = write, b.copy.value = copy, b.triad.value = triad;
  return b;
}

static void set_l1_rows(ptg_target *t, int n, const ptg_bandwidth *rows) {
  t->caches[0].n_bandwidth = n;
  t->caches[0].bandwidth = pt_alloc(t->arena, sizeof *rows * (n ? n : 1));
  memcpy(t->caches[0].bandwidth, rows, sizeof *rows * n);
}

int main(void) {
  pt_diag d = {0};
  ptg_target *t = synthetic_target(512, 8);

  /* per thread at 4 threads over 1: read 0.8, write 1, copy 0.8, triad 1: geometric mean sqrt(0.8) */
  ptg_bandwidth rows[2] = {l1_row(1, 100, 50, 80, 80), l1_row(4, 320, 200, 256, 320)};
  set_l1_rows(t, 2, rows);
  double s = sqrt(0.8);
  CHECK_MSG(fabs(ptg_target_core_share(t, 4) - s) < 1e-12, "share %g", ptg_target_core_share(t, 4));
  CHECK(fabs(ptg_target_core_share(t, 8) - s) < 1e-12); /* the 4-thread row, as ptg_target_bandwidth */
  CHECK(ptg_target_core_share(t, 3) == 1 && ptg_target_core_share(t, 1) == 1 && ptg_target_core_share(t, 0) == 1);
  /* a kind one row lacks is left out: read and copy alone, 0.8 */
  rows[1].write.value = NAN, rows[1].triad.value = NAN;
  set_l1_rows(t, 2, rows);
  CHECK_MSG(fabs(ptg_target_core_share(t, 4) - 0.8) < 1e-12, "share %g", ptg_target_core_share(t, 4));
  /* more than linear (a second thread that fills idle pipes) is no speedup */
  ptg_bandwidth fast[2] = {l1_row(1, 100, 50, 80, 80), l1_row(4, 500, 250, 400, 400)};
  set_l1_rows(t, 2, fast);
  CHECK(ptg_target_core_share(t, 4) == 1);
  /* without the one-thread row there is nothing to compare with */
  set_l1_rows(t, 1, &rows[1]);
  CHECK(ptg_target_core_share(t, 4) == 1);
  rows[1] = l1_row(4, 320, 200, 256, 320);
  set_l1_rows(t, 2, rows);

  /* a parallel body of 40 iterations of 8 dependent adds, and a serial copy of it */
  pa_node nodes[8];
  pa_edge chain[7];
  for (int i = 0; i < 8; i++) nodes[i] = synthetic_node(PA_OP_ADD, "fadd", 16);
  for (int i = 0; i < 7; i++) chain[i] = (pa_edge){i, i + 1, PA_EDGE_DATA};
  pa_loop loop = {.header = 0, .parent = -1, .depth = 1, .n_blocks = 1, .blocks = (int[]){0}, .trip_count = 40};
  pa_block b = {.name = "b", .count = 40, .loop = 0, .n_nodes = 8, .nodes = nodes, .n_edges = 7, .edges = chain};
  pa_function fns[2] = {
      {.name = "k_par0", .calls = 1, .threads = 1, .n_blocks = 1, .blocks = &b, .n_loops = 1, .loops = &loop},
      {.name = "serial", .calls = 1, .threads = 1, .n_blocks = 1, .blocks = &b, .n_loops = 1, .loops = &loop}};
  pa_profile p = {.version = PA_PROFILE_VERSION, .source = "busy", .counts_source = "instrumented", .n_functions = 2,
                  .functions = fns};
  pp_options o = {.threads = 4};
  CHECK(pp_options_preset(&o, "steady+bw") == 0);
  pp_prediction *plain = pp_predict_profile(&p, t, &o, &d);
  CHECK(pp_options_preset(&o, "steady+bw+busy") == 0 && o.busy && o.threads == 4);
  pp_prediction *busy = pp_predict_profile(&p, t, &o, &d);
  CHECK_MSG(plain && busy, "%s", d.msg);
  if (plain && busy) {
    double ratio = busy->functions[0].cycles / plain->functions[0].cycles;
    CHECK_MSG(fabs(ratio - 1 / s) < 1e-9, "parallel body %g x", ratio);
    CHECK(busy->functions[1].cycles == plain->functions[1].cycles);
    CHECK(busy->blocks[0].total_cycles > plain->blocks[0].total_cycles);
  }
  pp_prediction_free(plain), pp_prediction_free(busy);

  /* one thread, or a target without the rows: the same prediction as without +busy */
  for (int k = 0; k < 2; k++) {
    if (k == 1) set_l1_rows(t, 0, rows), o.threads = 4;
    else o.threads = 1;
    CHECK(pp_options_preset(&o, "steady+bw") == 0);
    plain = pp_predict_profile(&p, t, &o, &d);
    CHECK(pp_options_preset(&o, "steady+bw+busy") == 0);
    busy = pp_predict_profile(&p, t, &o, &d);
    CHECK_MSG(plain && busy && busy->seconds == plain->seconds, "case %d", k);
    pp_prediction_free(plain), pp_prediction_free(busy);
  }
  ptg_target_free(t);
  TEST_DONE();
}
