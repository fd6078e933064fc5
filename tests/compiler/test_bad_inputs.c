/* Bad inputs give clear errors and the process survives: invalid steps (table-driven),
 * bad workload specs, and generated kernels that crash, hang or compute the wrong thing. */
#include <stdlib.h>
#include <string.h>

#include "compiler/compiler.h"
#include "test.h"

/* Steps on matmul_add (A=0 B=1 matmul=2 C=3 out=4), each row: steps JSON, expected text. */
static const struct {
  const char *steps, *error;
} step_rows[] = {
    {"[[\"SP\", 2, 7, 64, [4], 1]]", "iterator 7 out of range"},
    {"[[\"SP\", 9, 0, 64, [4], 1]]", "stage 9 out of range"},
    {"[[\"SP\", 0, 0, 64, [4], 1]]", "placeholder"},
    {"[[\"SP\", 2, 0, 64, [4294967296000], 1]]", "length 0 is 4294967296000"},
    {"[[\"RE\", 2, [0, 0, 1]]]", "not a permutation"},
    {"[[\"RE\", 2, [0, 1]]]", "2 iterators given, stage 2 has 3"},
    {"[[\"FU\", 2, [0, 2]]]", "consecutive"},
    {"[[\"FU\", 2, [1, 2]]]", "fusing spatial and reduction"},
    {"[[\"AN\", 2, 2, 2]]", "cannot vectorize"},
    {"[[\"AN\", 2, 2, 3]]", "cannot parallelize"},
    {"[[\"AN\", 2, 0, 6]]", "not supported on CPU"},
    {"[[\"PR\", 2, 0, \"auto_unroll_max_step$x\"]]", "bad auto_unroll_max_step"},
    {"[[\"PR\", 2, 0, \"mystery\"]]", "unknown pragma"},
    {"[[\"FSP\", 4, 0, 0, 2]]", "source step 0 out of range"},
    {"[[\"SP\", 2, 0, 64, [4], 1], [\"FSP\", 4, 0, 0, 3]]", "n_split 3 must be in 1..2"},
    {"[[\"RE\", 2, [1, 0, 2]], [\"FSP\", 4, 0, 0, 2]]", "is RE, not a split"},
    {"[[\"FFSP\", 4, 0, [0], 5, 1]]", "out of range"},
    {"[[\"CA\", 2, 1, 0]]", "placeholder"},
    {"[[\"CA\", 4, 2, 0]]", "does not consume"},
    {"[[\"CA\", 2, 4, 5]]", "target iterator 5 out of range"},
    {"[[\"CA\", 2, 2, 0]]", "invalid"},
    {"[[\"CI\", 2]]", "is a reduction"},
    {"[[\"CI\", 4]]", "is an output"},
    {"[[\"SA\", 2, 0, 0, 0]]", "factor > 0"},
    {"[[\"CHW\", 0, \"local\"]]", "placeholder"},
    {"[[\"RF\", 4, 0, 0]]", "not a reduction"},
    {"[[\"RF\", 2, 0, 0]]", "not a reduction iterator"},
    {"[[\"CHR\", 0, \"shared\", [4]]]", "does not read stage 0"},
};

static const struct {
  const char *spec, *error;
} workload_rows[] = {
    {"", "empty workload"},
    {"mm9999", "not a suite name"},
    {"matmul:0,4,4", "parameter 1 is 0"},
    {"matmul:4,4", "takes parameters N L M (2 given)"},
    {"matmul:4,x,4", "column 10: expected an integer"},
    {"[\"matmul\", 4, 4]", "takes parameters"},
    {"[\"matmul\", 4, 4, 4, \"float16\"]", "only float32"},
    {"[\"nosuchop\", 1]", "unknown operator"},
    {"[\"matmul\", 4.5, 4, 4]", "not an integer"},
    {"[\"matmul\", 4, 4", "expected a JSON array"},
    {"conv2d_nchw:1,3,4,4,8,7,7,1,0", "larger than the padded input"},
    {"conv2d_nchw:1,3,8,8,8,3,3,1,1,1,2", "groups 2 must divide C=3"},
    {"matmul:100000000,100000000,4", "parameter 1 is"},
};

/* Kernels that misbehave, with the error class each must give. */
static const struct {
  const char *ir;
  pc_measure_error error;
  const char *message;
} kernel_rows[] = {
    {"define void @portent_matmul(ptr %b, ptr %p) {\n  store float 1.0, ptr null\n  ret void\n}\n",
     PC_MEASURE_RUNTIME_DEVICE, "crashed"},
    {"define void @portent_matmul(ptr %b, ptr %p) {\nentry:\n  br label %l\nl:\n  br label %l\n}\n", PC_MEASURE_RUN_TIMEOUT,
     "timed out"},
    {"define void @portent_matmul(ptr %b, ptr %p) {\n  ret void\n}\n", PC_MEASURE_WRONG_ANSWER, "reference"},
};

int main(void) {
  pt_diag d = {0};
  pc_program *p = pc_workload_build("matmul_add:64,64,64", &d);
  CHECK(p != NULL);
  for (size_t i = 0; p && i < PT_ARRAY_LEN(step_rows); i++) {
    pc_state *s = pc_state_new(p);
    static pc_step steps[PC_MAX_STEPS];
    int n = 0;
    pt_diag_clear(&d);
    int rc = pc_steps_from_json(step_rows[i].steps, &n, steps, PC_MAX_STEPS, &d);
    CHECK_MSG(rc == 0, "row %zu parses: %s", i, d.msg);
    pc_state before = *s;
    rc = pc_state_apply_all(s, n, steps, &d);
    CHECK_MSG(rc < 0 && strstr(d.msg, step_rows[i].error), "row %zu: %s: got '%s'", i, step_rows[i].steps, d.msg);
    /* A failed step leaves the state as it was before that step. */
    if (n == 1) CHECK(memcmp(&before, s, sizeof before) == 0);
    pc_state_free(s);
  }
  pc_program_free(p);

  for (size_t i = 0; i < PT_ARRAY_LEN(workload_rows); i++) {
    pt_diag_clear(&d);
    pc_program *w = pc_workload_build(workload_rows[i].spec, &d);
    CHECK_MSG(w == NULL && strstr(d.msg, workload_rows[i].error), "'%s': got '%s'", workload_rows[i].spec, d.msg);
    pc_program_free(w);
  }

  p = pc_workload_build("matmul:16,16,16", &d);
  pc_measure_opts o;
  pc_measure_opts_default(&o);
  o.timeout_s = 1;
  o.min_time_s = 0;
  pc_reference *ref = pc_reference_new(p, &o, &d);
  CHECK(ref != NULL);
  pc_state *s = pc_state_new(p);
  for (size_t i = 0; ref && i < PT_ARRAY_LEN(kernel_rows); i++) {
    pt_diag_clear(&d);
    pc_kernel *k = pc_kernel_from_ir(s, kernel_rows[i].ir, "bad.ll", &d);
    CHECK_MSG(k != NULL, "row %zu: %s", i, d.msg);
    if (!k) continue;
    pc_measure_result r;
    CHECK(pc_measure_kernel(k, p, ref, &o, &r, &d) == 0);
    CHECK_MSG(r.error == kernel_rows[i].error && strstr(r.message, kernel_rows[i].message), "row %zu: error %d '%s'", i,
              r.error, r.message);
    pc_kernel_free(k);
  }
  /* Malformed IR and IR without the entry function are refused with the parser's words. */
  pt_diag_clear(&d);
  CHECK(pc_kernel_from_ir(s, "define void @f( {", "broken.ll", &d) == NULL && strstr(d.msg, "broken.ll"));
  pt_diag_clear(&d);
  CHECK(pc_kernel_from_ir(s, "define void @other() {\n  ret void\n}\n", "other.ll", &d) == NULL &&
        strstr(d.msg, "no definition"));
  pc_state_free(s);
  pc_reference_free(ref);
  pc_program_free(p);
  TEST_DONE();
}
