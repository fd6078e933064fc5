/* The DAG builder and TVM's topological order: matmul_add's stage ids as Ansor numbers them. */
#include "compiler/compiler.h"
#include "test.h"

int main(void) {
  pt_diag d = {0};
  pc_builder *b = pc_builder_new("matmul_add");
  int64_t s2[2] = {64, 64};
  int A = pc_placeholder(b, "A", 2, s2), B = pc_placeholder(b, "B", 2, s2), C = pc_placeholder(b, "C", 2, s2);
  int64_t red[1] = {64};
  const char *names[] = {"i", "j", "k"};
  int mm = pc_compute(b, "matmul", 2, s2, 1, red, names, PC_REDUCE_SUM);
  pc_expr *ia[2] = {pc_axis(b, 0), pc_axis(b, 2)}, *ib[2] = {pc_axis(b, 2), pc_axis(b, 1)};
  pc_set_body(b, mm, pc_bin(b, PC_E_MUL, pc_load(b, A, 2, ia), pc_load(b, B, 2, ib)));
  int out = pc_compute(b, "out", 2, s2, 0, NULL, names, PC_REDUCE_NONE);
  pc_expr *ij[2] = {pc_axis(b, 0), pc_axis(b, 1)};
  pc_set_body(b, out, pc_bin(b, PC_E_ADD, pc_load(b, mm, 2, ij), pc_load(b, C, 2, ij)));
  int args[4] = {A, B, C, out};
  pc_program *p = pc_builder_finish(b, 4, args, 0, &d);
  CHECK_MSG(p != NULL, "%s", d.msg);
  if (!p) TEST_DONE();
  /* Ansor's record for this workload addresses matmul as stage 2 and out as stage 4. */
  CHECK(p->n_ops == 5);
  CHECK(strcmp(p->ops[0].name, "A") == 0);
  CHECK(strcmp(p->ops[1].name, "B") == 0);
  CHECK(strcmp(p->ops[2].name, "matmul") == 0);
  CHECK(strcmp(p->ops[3].name, "C") == 0);
  CHECK(strcmp(p->ops[4].name, "out") == 0);
  CHECK(p->ops[4].is_output && !p->ops[2].is_output);
  char buf[2048];
  pc_program_print(p, buf, sizeof buf);
  CHECK(strstr(buf, "sum(k:64) (A[i, k] * B[k, j])") != NULL);
  pc_program_free(p);

  /* A body indexing a 2-d tensor with one index is rejected, naming the op. */
  b = pc_builder_new("bad");
  A = pc_placeholder(b, "A", 2, s2);
  int bad = pc_compute(b, "bad", 2, s2, 0, NULL, names, PC_REDUCE_NONE);
  pc_set_body(b, bad, pc_load(b, A, 1, ia));
  int args2[2] = {A, bad};
  pt_diag_clear(&d);
  CHECK(pc_builder_finish(b, 2, args2, 0, &d) == NULL);
  CHECK(strstr(d.msg, "bad") != NULL);
  TEST_DONE();
}
