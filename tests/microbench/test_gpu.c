/* GPU probes: the PTX kernels assemble (ptxas, where the CUDA toolkit is installed); with a
 * GPU, a tiny --gpu characterization fills the gpu section with plausible figures; without
 * one, --gpu fails with a clear "no GPU" error instead of measuring anything, and the test
 * then exits 77 (skipped: the device figures were not checked). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "microbench/microbench.h"
#include "test.h"

static const char *find_ptxas(void) {
  static const char *const where[] = {"/usr/local/cuda/bin/ptxas", "/usr/bin/ptxas"};
  for (size_t i = 0; i < PT_ARRAY_LEN(where); i++)
    if (access(where[i], X_OK) == 0) return where[i];
  return NULL;
}

int main(void) {
  const char *ptxas = find_ptxas();
  if (ptxas) {
    char path[] = "/tmp/portent_ptx_XXXXXX";
    int fd = mkstemp(path);
    CHECK(fd >= 0 && write(fd, pmb_gpu_ptx(), strlen(pmb_gpu_ptx())) == (ssize_t)strlen(pmb_gpu_ptx()));
    close(fd);
    char cmd[512];
    snprintf(cmd, sizeof cmd, "%s -arch=sm_80 -o /dev/null %s", ptxas, path);
    CHECK_MSG(system(cmd) == 0, "ptxas rejects the GPU kernels: %s", cmd);
    unlink(path);
  } else {
    fprintf(stderr, "no ptxas: PTX not checked\n");
  }
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
    ptg_target_free(t);
  }
  TEST_DONE();
}
