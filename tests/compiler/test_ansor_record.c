/* A real Ansor record (apache/tvm's tutorial log for matmul_add 1024), applied unchanged to
 * portent's own workload built from the record's key: the program must match the reference.
 * DAG-hash keys (the ResNet-50 log) cannot be built and say so. */
#include <string.h>

#include "compiler/compiler.h"
#include "test.h"

typedef struct {
  pc_record rec;
  int n;
} first_ctx;

static int keep_first(const pc_record *r, int line, void *ctx) {
  first_ctx *c = ctx;
  (void)line;
  if (c->n++ == 0) c->rec = *r;
  return 0;
}

int main(void) {
  pt_diag d = {0};
  static first_ctx c;
  int n = pc_record_read_file("tests/data/tvm_logs/matmul.json", keep_first, NULL, &c, NULL, &d);
  CHECK_MSG(n == 1, "%s", d.msg);
  if (n != 1) TEST_DONE();
  pc_program *p = pc_workload_build(c.rec.workload_key, &d);
  CHECK_MSG(p != NULL, "%s", d.msg);
  if (!p) TEST_DONE();
  pc_state *s = pc_state_new(p);
  int rc = pc_state_apply_all(s, c.rec.n_steps, c.rec.steps, &d);
  CHECK_MSG(rc == 0, "applying the record: %s", d.msg);
  /* The record computes matmul inside out's loop and parallelizes the fused outer loop. */
  CHECK(s->stages[2].at == PC_AT_ITER && s->stages[2].attach_stage == 4);
  pc_measure_opts o;
  pc_measure_opts_default(&o);
  o.threads = 2;
  o.min_time_s = 0;
  o.min_repeats = 1;
  o.timeout_s = 120;
  pc_reference *ref = pc_reference_new(p, &o, &d);
  CHECK_MSG(ref != NULL, "%s", d.msg);
  if (ref && rc == 0) {
    pc_measure_result r;
    CHECK(pc_measure(s, ref, &o, &r, &d) == 0);
    CHECK_MSG(r.error == PC_MEASURE_OK, "error %d: %s", r.error, r.message);
    printf("Ansor's matmul_add record: %.2f ms, max relative error %.2g\n", r.median_s * 1e3, r.max_rel_err);
  }
  pc_reference_free(ref);
  pc_state_free(s);
  pc_program_free(p);

  /* ResNet-50 records carry DAG-hash keys: readable, not buildable, with a clear reason. */
  c.n = 0;
  n = pc_record_read_file("tests/data/tvm_logs/resnet-50-NHWC-B1-llvm.json", keep_first, NULL, &c, NULL, &d);
  CHECK(n > 20);
  pt_diag_clear(&d);
  CHECK(pc_workload_build(c.rec.workload_key, &d) == NULL);
  CHECK_MSG(strstr(d.msg, "unknown operator") != NULL, "%s", d.msg);
  TEST_DONE();
}
