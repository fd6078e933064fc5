/* A vectorized loop fused from a row and a column loop ((y, x) of a 7x7 image, 49 lanes, and
 * (y, x) of 2 rows of a 4x8 image, 16 lanes) reads its row-major tensors with contiguous
 * (masked, for the padding) vector loads, not gathers: the fused index's quotient and
 * remainder stay lane-affine in lowering. The output still matches the reference. */
#include <stdlib.h>
#include <string.h>

#include "compiler/compiler.h"
#include "test.h"

typedef struct {
  const char *workload, *steps;
} row;

static const row rows[] = {
    {"conv2d_nchw:1,4,7,7,8,3,3,1,1", "[[\"CI\",1],[\"RE\",3,[0,1,4,5,6,2,3]],[\"FU\",3,[5,6]],[\"AN\",3,5,2]]"},
    {"conv2d_nchw:1,3,4,8,4,3,3,1,1",
     "[[\"CI\",1],[\"SP\",3,2,4,[2],1],[\"RE\",3,[0,1,2,5,6,7,3,4]],[\"FU\",3,[6,7]],[\"AN\",3,6,2]]"},
};

int main(void) {
  pc_measure_opts o;
  pc_measure_opts_default(&o);
  o.threads = 1;
  o.min_time_s = 0;
  o.min_repeats = 1;
  o.timeout_s = 20;
  for (size_t r = 0; r < PT_ARRAY_LEN(rows); r++) {
    pt_diag d = {0};
    pc_program *p = pc_workload_build(rows[r].workload, &d);
    CHECK_MSG(p != NULL, "%s", d.msg);
    if (!p) continue;
    pc_step steps[16];
    int n = 0;
    CHECK_MSG(pc_steps_from_json(rows[r].steps, &n, steps, 16, &d) == 0, "%s", d.msg);
    pc_state *s = pc_state_new(p);
    CHECK_MSG(pc_state_apply_all(s, n, steps, &d) == 0, "row %zu: %s", r, d.msg);
    pc_kernel *k = pc_lower(s, NULL, &d);
    CHECK_MSG(k != NULL, "row %zu: %s", r, d.msg);
    if (k) {
      char *ir = pc_kernel_ir(k);
      CHECK_MSG(ir && !strstr(ir, "masked.gather") && strstr(ir, "masked.load"),
                "row %zu: the fused vector loop should load contiguously", r);
      free(ir);
      pc_kernel_free(k);
    }
    pc_reference *ref = pc_reference_new(p, &o, &d);
    CHECK_MSG(ref != NULL, "%s", d.msg);
    pc_measure_result res;
    if (ref) {
      int rc = pc_measure(s, ref, &o, &res, &d);
      CHECK_MSG(rc == 0 && res.error == PC_MEASURE_OK, "row %zu: error %d %s %s", r, res.error, res.message, d.msg);
      pc_reference_free(ref);
    }
    pc_state_free(s);
    pc_program_free(p);
  }
  TEST_DONE();
}
