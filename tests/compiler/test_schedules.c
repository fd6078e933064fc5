/* For every workload family: the unscheduled program, the default schedule and 50 random
 * valid step sequences compile, run in the measuring child and match the reference. */
#include <stdlib.h>

#include "compiler/compiler.h"
#include "test.h"

static const char *families[] = {
    "matmul:24,20,32",
    "matmul_relu:16,12,48",
    "matmul_add:32,16,24",
    "batch_matmul:2,12,8,20",
    "dense:8,24,20,1,1",
    "conv2d_nchw:1,4,9,9,6,3,3,1,1",
    "conv2d_nchw:1,4,11,11,8,3,3,2,1,2,2",
    "conv2d_nhwc:1,5,8,8,6,3,3,1,1",
    "depthwise_conv2d_nchw:1,6,10,10,3,3,1,1",
    "max_pool2d:1,3,10,10,3,2,1",
    "avg_pool2d:1,3,9,9,2,2,0",
    "softmax:6,40",
    "capsule_conv2d:1,6,6,2,3,3,3,1,1,2",
};

int main(void) {
  int kinds[PC_STEP_COUNT] = {0};
  int per_family = getenv("PORTENT_TEST_QUICK") ? 10 : 50;
  pc_measure_opts o;
  pc_measure_opts_default(&o);
  o.threads = 2;
  o.min_time_s = 0;
  o.min_repeats = 1;
  o.timeout_s = 20;
  for (size_t f = 0; f < PT_ARRAY_LEN(families); f++) {
    pt_diag d = {0};
    pc_program *p = pc_workload_build(families[f], &d);
    CHECK_MSG(p != NULL, "%s: %s", families[f], d.msg);
    if (!p) continue;
    pc_reference *ref = pc_reference_new(p, &o, &d);
    CHECK_MSG(ref != NULL, "%s: reference: %s", families[f], d.msg);
    if (!ref) {
      pc_program_free(p);
      continue;
    }
    pt_rng rng = {1234 + f};
    double t0 = pt_now();
    int ok = 0;
    for (int i = -1; i < per_family; i++) {
      pc_state *s = pc_state_new(p);
      pt_diag_clear(&d);
      int rc = i < 0 ? pc_schedule_default(s, 16, &d) : pc_schedule_random(s, &rng, &d);
      CHECK_MSG(rc == 0, "%s: schedule %d: %s", families[f], i, d.msg);
      for (int k = 0; k < s->n_steps; k++) kinds[s->steps[k].kind]++;
      pc_measure_result r;
      rc = pc_measure(s, ref, &o, &r, &d);
      bool good = rc == 0 && r.error == PC_MEASURE_OK;
      if (!good) {
        char *steps = pc_steps_to_json(s->n_steps, s->steps);
        fprintf(stderr, "%s: schedule %d failed (error %d): %s %s\n  steps: %s\n", families[f], i, r.error, r.message,
                rc ? d.msg : "", steps);
        free(steps);
      }
      CHECK(good);
      ok += good;
      pc_state_free(s);
    }
    printf("%-44s %d/%d schedules match the reference (%.1f s)\n", families[f], ok, per_family + 1, pt_now() - t0);
    pc_reference_free(ref);
    pc_program_free(p);
  }
  /* Every step kind the random generator can emit was exercised (and so checked). */
  static const pc_step_kind used[] = {PC_STEP_SP, PC_STEP_RE, PC_STEP_FU, PC_STEP_AN, PC_STEP_PR, PC_STEP_CA,
                                      PC_STEP_CI, PC_STEP_CHW, PC_STEP_CHR, PC_STEP_RF, PC_STEP_SA};
  for (size_t k = 0; k < PT_ARRAY_LEN(used); k++) {
    printf("%s: %d ", pc_step_code(used[k]), kinds[used[k]]);
    CHECK(kinds[used[k]] > 0);
  }
  printf("\n");
  TEST_DONE();
}
