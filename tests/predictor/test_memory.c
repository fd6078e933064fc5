/* Memory model on synthetic reuse histograms: every distance below the L1 size -> L1
 * latency; every distance between L1 and L2 -> L2 latency; beyond the last level -> DRAM;
 * a shared level divided among more threads serves fewer hits. */
#include "predictor/synthetic.h"
#include "test.h"

int main(void) {
  ptg_target *t = synthetic_target(512, 4);
  double hit[PP_MAX_LEVELS + 1];
  pa_reuse_hist h = {0};
  h.bins[5] = 1000; /* distances 16..31 lines: 2 KiB, far below L1's 512 lines */
  h.accesses = 1000;
  double lat = pp_memory_model(t, &h, 1, hit);
  CHECK_MSG(fabs(lat - 4) < 1e-9 && fabs(hit[0] - 1) < 1e-9, "L1: %g", lat);

  memset(&h, 0, sizeof h);
  h.bins[12] = 1000; /* 2048..4095 lines = 128..256 KiB: L2 */
  h.accesses = 1000;
  lat = pp_memory_model(t, &h, 1, hit);
  CHECK_MSG(fabs(lat - 14) < 1e-9 && fabs(hit[1] - 1) < 1e-9, "L2: %g", lat);
  /* L2 shared by 4 threads: 4096 lines each, still holds 2048..4095 */
  lat = pp_memory_model(t, &h, 4, hit);
  CHECK_MSG(fabs(lat - 14) < 1e-6, "L2 / 4: %g", lat);

  memset(&h, 0, sizeof h);
  h.bins[14] = 1000; /* 8192..16383 lines = 0.5..1 MiB: fits L2 alone, not a quarter of it */
  h.accesses = 1000;
  double alone = pp_memory_model(t, &h, 1, hit), shared = pp_memory_model(t, &h, 4, hit);
  CHECK_MSG(alone < shared && fabs(shared - 200) < 1e-6, "alone %g shared %g", alone, shared);

  memset(&h, 0, sizeof h);
  h.bins[20] = 500, h.cold = 100000; /* far beyond L2, and first touches of 6.4 MB */
  h.accesses = 100500;
  lat = pp_memory_model(t, &h, 1, hit);
  CHECK_MSG(fabs(lat - 200) < 1e-6 && fabs(hit[PP_MAX_LEVELS] - 1) < 1e-9, "DRAM: %g", lat);

  /* a footprint that fits L1: the first touches find the previous run's lines there */
  memset(&h, 0, sizeof h);
  h.bins[3] = 900, h.cold = 100;
  h.accesses = 1000;
  lat = pp_memory_model(t, &h, 1, hit);
  CHECK_MSG(fabs(lat - 4) < 1e-9, "warm footprint: %g", lat);
  ptg_target_free(t);
  TEST_DONE();
}
