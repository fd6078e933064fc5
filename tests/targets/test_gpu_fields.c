/* The gpu section's figures (PTG_GPU_FIGURES): a file written before the tensor-core, latency and
 * L2/shared-memory rows existed still loads, with those figures null (NaN); every row survives a
 * save/load round trip with its spread, reps and source; `targets show` prints them; an
 * out-of-range or mistyped value fails validation naming its JSON path. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "targets/targets.h"
#include "test.h"

/* a target file as session 3's characterize --gpu wrote it (no new keys) */
static const char old_file[] =
    "{\"version\": 1, \"name\": \"h\",\n"
    " \"provenance\": {\"kind\": \"measured\"},\n"
    " \"cpu\": {\"isa\": \"x86_64\", \"microarchitecture\": \"x\", \"cores\": 16, \"frequency_ghz\": 3.0,\n"
    "         \"native_vector_bits\": 512, \"issue_width\": 4},\n"
    " \"instructions\": [{\"op\": \"add\", \"type\": \"f32\", \"bits\": 256, \"latency\": 3, \"recip_throughput\": 0.5}],\n"
    " \"caches\": [{\"level\": 1, \"size\": 32768, \"line\": 64, \"latency_cycles\": 4}],\n"
    " \"memory\": {\"latency_ns\": 80},\n"
    " \"gpu\": {\"name\": \"NVIDIA H100 80GB HBM3\", \"compute_capability\": \"9.0\", \"sms\": 132,\n"
    "         \"clock_ghz\": 1.98, \"l2_bytes\": 52428800,\n"
    "         \"launch_us\": {\"value\": 4.5, \"spread\": 0.1, \"reps\": 20},\n"
    "         \"memory_bandwidth_gbs\": {\"value\": 2900, \"spread\": 0.01, \"reps\": 5},\n"
    "         \"h2d_gbs\": null, \"d2h_gbs\": 26, \"fp32_tflops\": 60,\n"
    "         \"source\": \"CUDA driver API attributes; PTX kernels timed with cuCtxSynchronize\"}}\n";

static char *replace(const char *text, const char *find, const char *with) {
  const char *at = strstr(text, find);
  if (!at) return NULL;
  char *out = malloc(strlen(text) + strlen(with) + 1);
  size_t pre = (size_t)(at - text);
  memcpy(out, text, pre);
  strcpy(out + pre, with);
  strcat(out, at + strlen(find));
  return out;
}

int main(void) {
  pt_diag d = {0};
  ptg_target *t = ptg_target_parse(old_file, "old.json", &d);
  CHECK_MSG(t != NULL, "%s", d.msg);
  if (!t) TEST_DONE();
  ptg_gpu *g = &t->gpu;
  CHECK(g->present && g->sms == 132 && g->launch_us.reps == 20 && g->d2h_gbs.value == 26 && isnan(g->h2d_gbs.value));
  CHECK(isnan(g->fp16_mma_tflops.value) && isnan(g->bf16_mma_tflops.value) && isnan(g->smem_latency_ns.value) &&
        isnan(g->smem_bandwidth_gbs.value) && isnan(g->l1_latency_ns.value) && isnan(g->l2_latency_ns.value) &&
        isnan(g->memory_latency_ns.value) && isnan(g->l2_bandwidth_gbs.value) && isnan(g->sm_clock_ghz.value) &&
        g->timer == NULL);

  /* fill the new rows, each with its own value, and round-trip */
  g->fp16_mma_tflops = (ptg_figure){.value = 650, .spread = 0.02, .reps = 5};
  g->bf16_mma_tflops = (ptg_figure){.value = 651, .spread = 0.03, .reps = 5, .source = "host clock around cuCtxSynchronize"};
  g->smem_latency_ns = (ptg_figure){.value = 15.5, .spread = 0.001, .reps = 5};
  g->smem_bandwidth_gbs = (ptg_figure){.value = 30000, .spread = 0.01, .reps = 5};
  g->l1_latency_ns = (ptg_figure){.value = 19.25, .reps = 5};
  g->l2_latency_ns = (ptg_figure){.value = 135, .reps = 5};
  g->memory_latency_ns = (ptg_figure){.value = 480, .reps = 5};
  g->l2_bandwidth_gbs = (ptg_figure){.value = 7000, .reps = 5};
  g->sm_clock_ghz = (ptg_figure){.value = 1.755, .reps = 5};
  g->timer = "CUPTI activity records (GPU clock)";
  CHECK_MSG(ptg_target_validate(t, "filled", &d) == 0, "%s", d.msg);
  char *first = ptg_target_to_json(t, &d);
  ptg_target *u = first ? ptg_target_parse(first, "first.json", &d) : NULL;
  CHECK_MSG(u != NULL, "%s", d.msg);
  if (u) {
    const ptg_gpu *v = &u->gpu;
    char *second = ptg_target_to_json(u, &d);
    CHECK(second && strcmp(first, second) == 0);
    free(second);
    CHECK(v->fp16_mma_tflops.value == 650 && v->fp16_mma_tflops.reps == 5 && fabs(v->fp16_mma_tflops.spread - 0.02) < 1e-9);
    CHECK(v->bf16_mma_tflops.value == 651 && v->bf16_mma_tflops.source &&
          strcmp(v->bf16_mma_tflops.source, "host clock around cuCtxSynchronize") == 0);
    CHECK(v->smem_latency_ns.value == 15.5 && v->smem_bandwidth_gbs.value == 30000 && v->l1_latency_ns.value == 19.25 &&
          v->l2_latency_ns.value == 135 && v->memory_latency_ns.value == 480 && v->l2_bandwidth_gbs.value == 7000);
    CHECK(v->sm_clock_ghz.value == 1.755);
    CHECK(v->timer && strcmp(v->timer, "CUPTI activity records (GPU clock)") == 0);
    char *shown = NULL;
    size_t n = 0;
    FILE *f = open_memstream(&shown, &n);
    ptg_target_print(f, u);
    fclose(f);
    CHECK_MSG(shown && strstr(shown, "mma fp16 650, bf16 651 TFLOP/s") && strstr(shown, "L2 copy 7000 GB/s") &&
                  strstr(shown, "shared 15.50, L1 19.25") && strstr(shown, "L2 135, memory 480") &&
                  strstr(shown, "timed by CUPTI") && strstr(shown, "SM clock while running 1.75"),
              "targets show:\n%s", shown ? shown : "");
    free(shown);
    ptg_target_free(u);
  }

  /* bad values name their path */
  static const struct {
    const char *with, *expect;
  } bad[] = {
      {"\"fp32_tflops\": 60, \"bf16_mma_tflops\": -5,", "gpu.bf16_mma_tflops: -5 is out of range"},
      {"\"fp32_tflops\": 60, \"l2_latency_ns\": \"slow\",", "gpu.l2_latency_ns: expected a number"},
      {"\"fp32_tflops\": 60, \"sm_clock_ghz\": 0.001,", "gpu.sm_clock_ghz: 0.001 is out of range"},
      {"\"fp32_tflops\": 60, \"memory_latency_ns\": {\"value\": 500, \"reps\": -1},", "gpu.memory_latency_ns: negative"},
  };
  for (size_t i = 0; i < PT_ARRAY_LEN(bad); i++) {
    char *text = replace(old_file, "\"fp32_tflops\": 60,", bad[i].with);
    pt_diag_clear(&d);
    ptg_target *b = text ? ptg_target_parse(text, "bad.json", &d) : NULL;
    CHECK_MSG(b == NULL && strstr(d.msg, bad[i].expect), "row %zu: got '%s'", i, d.msg);
    ptg_target_free(b);
    free(text);
  }
  free(first);
  ptg_target_free(t);
  TEST_DONE();
}
