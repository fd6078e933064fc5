/* GPU probes (the PTX itself is assembled by test_gpu_ptx.c): with a GPU, a tiny --gpu
 * characterization fills the gpu section with plausible, ordered figures; without one, --gpu fails with a clear "no GPU" error instead of measuring anything, and the test
 * then exits 77 (skipped: the device figures were not checked). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "microbench/microbench.h"
#include "test.h"

int main(void) {
  char desc[160];
  pt_diag d = {0};
  pmb_options o = {.gpu = true, .quick = true, .repetitions = 2, .min_seconds = 0.0002, .only = "add:f32",
                   .skip_memory = true, .skip_units = true, .skip_runtime = true};
  if (pmb_gpu_probe(desc, sizeof desc, &d) < 0) {
    CHECK(d.err == PT_ERR_UNSUPPORTED && strstr(d.msg, "no GPU"));
    pt_diag_clear(&d);
    CHECK(pmb_characterize(&o, &d) == NULL && d.err == PT_ERR_UNSUPPORTED && strstr(d.msg, "no GPU"));
    if (test_failures) TEST_DONE();
    fprintf(stderr, "skipped: %s; the device probes were not run\n", d.msg);
    return 77;
  }
  fprintf(stderr, "GPU: %s\n", desc);
  ptg_target *t = pmb_characterize(&o, &d);
  CHECK_MSG(t != NULL, "%s", d.msg);
  if (t) {
    const ptg_gpu *g = &t->gpu;
    CHECK(g->present && g->sms >= 1 && g->memory_bytes > 0);
    CHECK_MSG(g->launch_us.value > 0.5 && g->launch_us.value < 1000, "launch %g us", g->launch_us.value);
    CHECK_MSG(g->memory_bandwidth_gbs.value > 10 && g->memory_bandwidth_gbs.value < 20000, "copy %g GB/s", g->memory_bandwidth_gbs.value);
    CHECK_MSG(g->h2d_gbs.value > 0.5 && g->h2d_gbs.value < 1000, "h2d %g GB/s", g->h2d_gbs.value);
    CHECK_MSG(g->fp32_tflops.value > 0.1 && g->fp32_tflops.value < 1000, "fp32 %g TFLOP/s", g->fp32_tflops.value);
    CHECK_MSG(g->timer != NULL, "no timer named");
    fprintf(stderr, "kernels timed by %s\n", g->timer ? g->timer : "?");
    if (g->l2_bytes > 0)
      CHECK_MSG(g->l2_bandwidth_gbs.value > 10 && g->l2_bandwidth_gbs.value < 1e5, "L2 copy %g GB/s", g->l2_bandwidth_gbs.value);
    if (g->compute_capability && atoi(g->compute_capability) >= 8) {
      CHECK_MSG(g->fp16_mma_tflops.value > 1 && g->fp16_mma_tflops.value < 1e4, "fp16 mma %g", g->fp16_mma_tflops.value);
      CHECK_MSG(g->bf16_mma_tflops.value > 1 && g->bf16_mma_tflops.value < 1e4, "bf16 mma %g", g->bf16_mma_tflops.value);
      /* tensor cores beat the FP32 pipes on every GPU that has them */
      CHECK(g->fp16_mma_tflops.value > g->fp32_tflops.value);
    }
    CHECK_MSG(g->smem_bandwidth_gbs.value > 10 && g->smem_bandwidth_gbs.value < 1e6, "shared %g GB/s", g->smem_bandwidth_gbs.value);
    /* latencies: every level measured, in order (shared <= L1 < L2 < memory, small slack) */
    double lat[4] = {g->smem_latency_ns.value, g->l1_latency_ns.value, g->l2_latency_ns.value, g->memory_latency_ns.value};
    for (int i = 0; i < 4; i++) CHECK_MSG(lat[i] > 1 && lat[i] < 1e4, "latency %d: %g ns", i, lat[i]);
    CHECK_MSG(lat[0] <= lat[1] * 1.5 && lat[1] < lat[2] && lat[2] < lat[3], "latencies out of order: %g %g %g %g ns",
              lat[0], lat[1], lat[2], lat[3]);
    CHECK_MSG(g->sm_clock_ghz.value > 0.2 && g->sm_clock_ghz.value < 4, "SM clock %g GHz", g->sm_clock_ghz.value);
    CHECK_MSG(ptg_target_validate(t, "measured", &d) == 0, "%s", d.msg);
    ptg_target_free(t);
  }
  TEST_DONE();
}
