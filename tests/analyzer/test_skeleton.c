/* The address skeleton (pa_options.addresses_only, analyzer/skeleton.c): the instrumented run
 * without the floating-point loads, stores and arithmetic gives the same profile, byte for byte,
 * as the whole module's, at rate 1 and at 1% with the line filter and static counts (what the
 * analytic cost model runs), on suite operators under their default and random schedules and on
 * clang-compiled C kernels; there it must apply (instructions left out). Where a branch or an
 * address depends on memory the removed stores write (fixtures/skeleton_*.ll) it must not apply,
 * and the profile is still the whole module's. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analyzer/internal.h"
#include "compiler/compiler.h"
#include "schedules.h"
#include "test.h"
#include "util.h"

static const pa_options modes[] = {{.sample_rate = 1},
                                   {.sample_rate = 0.01, .static_counts = true, .line_filter = true}};
static const char *const mode_names[] = {"rate 1", "1% line-filtered"};

/* Profiles of m under spec with and without the skeleton, compared; *removed: the skeleton's. */
static void compare(const char *what, pa_module *m, const pa_run_spec *spec, bool must_apply) {
  for (size_t i = 0; i < PT_ARRAY_LEN(modes); i++) {
    pt_diag d = {0};
    pa_options sk = modes[i];
    sk.addresses_only = true;
    pa_profile *whole = pa_profile_build(m, spec, &modes[i], &d);
    CHECK_MSG(whole, "%s, %s: %s", what, mode_names[i], d.msg);
    pa_profile *skel = whole ? pa_profile_build(m, spec, &sk, &d) : NULL;
    CHECK_MSG(!whole || skel, "%s, %s, skeleton: %s", what, mode_names[i], d.msg);
    if (whole && skel) {
      char *a = pa_profile_to_json(whole), *b = pa_profile_to_json(skel);
      CHECK_MSG(strcmp(a, b) == 0, "%s, %s: the skeleton's profile differs from the whole module's", what, mode_names[i]);
      CHECK_MSG(whole->addresses_removed == 0, "%s: removed without being asked", what);
      CHECK_MSG(must_apply ? skel->addresses_removed > 0 : skel->addresses_removed == 0,
                "%s, %s: %d instructions removed (%s)", what, mode_names[i], skel->addresses_removed,
                must_apply ? "must apply" : "must not apply");
      CHECK_MSG(must_apply == !skel->addresses_whole, "%s, %s: %s", what, mode_names[i],
                skel->addresses_whole ? skel->addresses_whole : "no reason given for the whole module");
      if (!must_apply && i == 0 && skel->addresses_whole) printf("  %s: whole module: %s\n", what, skel->addresses_whole);
      if (i == 0) printf("  %s: %d instructions left out of the run; run %.2f ms -> %.2f ms\n", what, skel->addresses_removed,
                         whole->run_seconds * 1e3, skel->run_seconds * 1e3);
      free(a), free(b);
    }
    pa_profile_free(whole);
    pa_profile_free(skel);
  }
}

static void check_schedule(const char *what, const pc_state *s, bool is_default, void *ctx) {
  (void)is_default, (void)ctx;
  pt_diag d = {0};
  pc_kernel *k = pc_lower(s, &(pc_lower_opts){0}, &d);
  CHECK_MSG(k, "%s: lower: %s", what, d.msg);
  if (!k) return;
  int nb = pc_kernel_n_buffers(k);
  int64_t sizes[PC_MAX_STAGES];
  for (int b = 0; b < nb; b++) sizes[b] = pc_kernel_buffer_numel(k, b);
  pa_run_spec *spec = pa_run_spec_portent(pc_kernel_name(k), nb, sizes, 1, 1);
  spec->timeout_s = 60;
  pa_module *m = pa_module_from_llvm(pc_kernel_module(k));
  compare(what, m, spec, true);
  pa_module_free(m);
  pa_run_spec_free(spec);
  pc_kernel_free(k);
}

static void kernel(const char *path, const char *spec_json, bool must_apply) {
  pt_diag d = {0};
  pa_module *m = pa_module_load(path, &d);
  CHECK_MSG(m, "%s", d.msg);
  pa_run_spec *s = m ? pa_run_spec_parse(spec_json, "inline spec", &d) : NULL;
  CHECK_MSG(!m || s, "%s", d.msg);
  if (s) {
    char what[160];
    snprintf(what, sizeof what, "%s %s", strrchr(path, '/') + 1, s->entry);
    compare(what, m, s, must_apply);
  }
  pa_run_spec_free(s);
  pa_module_free(m);
}

#define BUF(n) "{\"kind\":\"buffer\",\"type\":\"f32\",\"count\":" #n "}"

int main(void) {
  bool quick = getenv("PORTENT_TEST_QUICK") != NULL;
  int randoms = quick ? 1 : 3;
  const char *const workloads[] = {"matmul:96,96,96", "conv2d_nchw:1,16,14,14,16,3,3,1,1", "depthwise_conv2d_nchw:1,16,28,28,3,3,1,1",
                                   "dense:32,64,48,1,1", "max_pool2d:1,8,28,28,3,2,1", "softmax:32,64"};
  for (size_t i = 0; i < PT_ARRAY_LEN(workloads); i++) for_each_schedule(workloads[i], randoms, 5, check_schedule, NULL);
  kernel(PA_KERNEL_DIR "/gemm.ll", "{\"entry\":\"gemm\",\"args\":[" BUF(1440) "," BUF(1760) "," BUF(1584) "]}", true);
  kernel(PA_KERNEL_DIR "/stencil1d.ll",
         "{\"entry\":\"stencil1d\",\"args\":[" BUF(1000) "," BUF(1000) ",{\"kind\":\"scalar\",\"type\":\"i32\",\"value\":1000}]}", true);
  kernel(PA_FIXTURE_DIR "/skeleton_branch.ll", "{\"entry\":\"relu_branch\",\"args\":[" BUF(512) "," BUF(512) "]}", false);
  kernel(PA_FIXTURE_DIR "/skeleton_index.ll",
         "{\"entry\":\"gather_index\",\"args\":[" BUF(64) ",{\"kind\":\"buffer\",\"type\":\"i32\",\"count\":512}," BUF(512) "]}", false);
  TEST_DONE();
}
