/* The roofline extension (+bw): a function takes at least the bytes each level delivers over
 * that level's read bandwidth, and reports that level and the bandwidth bound. A loop of 16
 * independent 64-byte loads run 10,000 times moves 10.24 MB; streamed from DRAM at 2 GB/s it
 * takes 5.12 ms, far above its pipeline cycles (patent 207, steady state 8 per iteration at
 * 1 GHz: 2.07 and 0.08 ms), which is what it takes without the bound. */
#include "predictor/synthetic.h"
#include "test.h"

#define LINES 160000.0 /* 16 lines x 10,000 iterations */
#define BYTES (LINES * 64)

static bool near(double x, double want) { return fabs(x - want) <= 1e-9 * fabs(want); }

/* The prediction of profile p on t under a preset, one thread. */
static pp_prediction *predict(const pa_profile *p, const ptg_target *t, const char *preset) {
  pt_diag d = {0};
  pp_options o = {.threads = 1};
  if (pp_options_preset(&o, preset) != 0) return NULL;
  pp_prediction *r = pp_predict_profile(p, t, &o, &d);
  if (!r) fprintf(stderr, "%s: %s\n", preset, d.msg);
  return r;
}

/* Checks that `with` (a +bw preset) predicts seconds `want` bound by bandwidth at `level`, and
 * `without` (the same preset without +bw) the pipeline's `pipeline_s`, faster. */
static void check_bound(const pa_profile *p, const ptg_target *t, const char *with, const char *without, double want,
                        int level, double pipeline_s) {
  pp_prediction *a = predict(p, t, without), *b = predict(p, t, with);
  CHECK(a && b);
  if (!a || !b) goto done;
  CHECK_MSG(near(a->seconds, pipeline_s) && a->seconds < want, "%s: %.9g s, want the pipeline's %.9g", without,
            a->seconds, pipeline_s);
  CHECK_MSG(a->functions[0].bound != PP_BOUND_BANDWIDTH && a->bandwidth_extra_seconds == 0, "%s: bound %s", without,
            pp_bound_name(a->functions[0].bound));
  const pp_function_pred *f = &b->functions[0];
  CHECK_MSG(near(b->seconds, want) && near(f->bandwidth_seconds, want), "%s: %.9g s (bandwidth %.9g), want %.9g", with,
            b->seconds, f->bandwidth_seconds, want);
  CHECK_MSG(f->bandwidth_level == level, "%s: bandwidth level %d, want %d", with, f->bandwidth_level, level);
  CHECK_MSG(f->bound == PP_BOUND_BANDWIDTH && b->bound == PP_BOUND_BANDWIDTH, "%s: bound %s / %s", with,
            pp_bound_name(f->bound), pp_bound_name(b->bound));
  /* the bound adds time, not cycles: the pipeline's are the same, the difference is reported */
  CHECK_MSG(b->cycles == a->cycles && near(b->bandwidth_extra_seconds, want - pipeline_s), "%s: cycles %g / %g, extra %g",
            with, b->cycles, a->cycles, b->bandwidth_extra_seconds);
done:
  pp_prediction_free(a), pp_prediction_free(b);
}

int main(void) {
  ptg_target *t = synthetic_target(512, 4); /* 1 GHz, L1 32 KiB, L2 1 MiB, DRAM 200 cycles */
  pa_node nodes[17];
  int n = synthetic_line_loads(nodes, 16);
  synthetic_loop s;

  /* DRAM: every line a first touch of 10.24 MB, beyond L2 */
  pa_reuse_hist h = {0};
  h.cold = h.accesses = LINES;
  pa_profile *p = synthetic_loop_profile(&s, nodes, n, NULL, 0, 10000, &h);
  synthetic_read_bandwidth(t, 0, 2);
  check_bound(p, t, "patent+bw", "patent", BYTES / 2e9, PP_MAX_LEVELS + 1, 207 * 10000 / 1e9);
  check_bound(p, t, "steady+bw", "steady", BYTES / 2e9, PP_MAX_LEVELS + 1, 8 * 10000 / 1e9);
  synthetic_read_bandwidth(t, 0, 1); /* half the bandwidth: twice the time */
  check_bound(p, t, "steady+bw", "steady", BYTES / 1e9, PP_MAX_LEVELS + 1, 8 * 10000 / 1e9);
  check_bound(p, t, "full", "steady+mlp", BYTES / 1e9, PP_MAX_LEVELS + 1, 16 * 196 / 10.0 * 10000 / 1e9);

  /* L2: 8192 lines (512 KiB) walked again and again, warm in L2 from the previous run; DRAM's
   * bandwidth binds nothing (no bytes come from it) */
  memset(&h, 0, sizeof h);
  h.cold = 8192, h.bins[13] = LINES - 8192, h.accesses = LINES; /* distances 4096..8191 lines */
  p = synthetic_loop_profile(&s, nodes, n, NULL, 0, 10000, &h);
  synthetic_read_bandwidth(t, 2, 4);
  check_bound(p, t, "patent+bw", "patent", BYTES / 4e9, 2, 21 * 10000 / 1e9);
  synthetic_read_bandwidth(t, 2, 2);
  check_bound(p, t, "patent+bw", "patent", BYTES / 2e9, 2, 21 * 10000 / 1e9);

  /* L1: every access a hit (no histogram); L1 delivers the loads' bytes */
  p = synthetic_loop_profile(&s, nodes, n, NULL, 0, 10000, NULL);
  synthetic_read_bandwidth(t, 1, 8);
  check_bound(p, t, "steady+bw", "steady", BYTES / 8e9, 1, 8 * 10000 / 1e9);
  synthetic_read_bandwidth(t, 1, 4);
  check_bound(p, t, "steady+bw", "steady", BYTES / 4e9, 1, 8 * 10000 / 1e9);
  /* a bandwidth the loop does not reach: the pipeline's time, bound as without +bw */
  synthetic_read_bandwidth(t, 1, 1000);
  pp_prediction *r = predict(p, t, "steady+bw");
  CHECK_MSG(r && near(r->seconds, 8 * 10000 / 1e9) && r->functions[0].bound != PP_BOUND_BANDWIDTH &&
                near(r->functions[0].bandwidth_seconds, BYTES / 1e12),
            "L1 at 1000 GB/s: %g s, bound %s", r ? r->seconds : -1, r ? pp_bound_name(r->functions[0].bound) : "-");
  pp_prediction_free(r);

  /* Parallel: the DRAM stream as a parallel body on 4 threads, each a quarter of the
   * iterations and of the bytes; the target's row for 4 threads (4 GB/s, all of them together)
   * gives each 1 GB/s: 2.56 MB / 1 GB/s = 2.56 ms, the whole 10.24 MB over 4 GB/s (the
   * one-thread row's 2 GB/s would say 1.28 ms) */
  memset(&h, 0, sizeof h);
  h.cold = h.accesses = LINES;
  p = synthetic_loop_profile(&s, nodes, n, NULL, 0, 10000, &h);
  s.function.parallel = true, s.function.threads = 4;
  ptg_bandwidth *rows = pt_alloc(t->arena, sizeof *rows * 2);
  rows[0] = (ptg_bandwidth){.threads = 1}, rows[1] = (ptg_bandwidth){.threads = 4};
  rows[0].read.value = 2, rows[1].read.value = 4;
  t->memory.n_bandwidth = 2, t->memory.bandwidth = rows;
  t->caches[0].n_bandwidth = t->caches[1].n_bandwidth = 0; /* DRAM's alone */
  pt_diag d = {0};
  pp_options o = {.threads = 4};
  CHECK(pp_options_preset(&o, "steady+bw") == 0);
  r = pp_predict_profile(p, t, &o, &d);
  CHECK_MSG(r && near(r->functions[0].work_fraction, 0.25) && near(r->functions[0].bytes_from[PP_MAX_LEVELS], BYTES / 4),
            "4 threads: work %g, DRAM bytes %g", r ? r->functions[0].work_fraction : -1,
            r ? r->functions[0].bytes_from[PP_MAX_LEVELS] : -1);
  CHECK_MSG(r && near(r->seconds, BYTES / 4e9) && r->functions[0].bound == PP_BOUND_BANDWIDTH,
            "4 threads: %g s, want %g", r ? r->seconds : -1, BYTES / 4e9);
  pp_prediction_free(r);
  ptg_target_free(t);
  TEST_DONE();
}
