/* Where the harness starts a measured kernel's buffers in their page does not depend on what the
 * process allocated and freed before: glibc raises its mmap threshold to each large block freed,
 * after which posix_memalign put large buffers in the heap at offsets that follow the run's
 * history (a replay of a saved set and a fresh `portent run` placed them differently). The
 * reference's buffers (the inputs every measured child reads) start at PC_INPUT_PAGE_OFFSET,
 * before and after such frees. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "compiler/compiler.h"
#include "test.h"

static int64_t page_offset(const void *p) { return (int64_t)((uintptr_t)p & 4095); }

/* Large blocks allocated, touched and freed. */
static void churn(void) {
  for (size_t mb = 1; mb <= 8; mb *= 2) {
    char *p = malloc(mb << 20);
    CHECK(p != NULL);
    if (p) memset(p, 1, mb << 20);
    free(p);
  }
}

static void check_reference(const char *spec, const char *const *names, int n) {
  pt_diag d = {0};
  pc_measure_opts o;
  pc_measure_opts_default(&o);
  pc_program *p = pc_workload_build(spec, &d);
  CHECK_MSG(p != NULL, "%s", d.msg);
  pc_reference *r = p ? pc_reference_new(p, &o, &d) : NULL;
  CHECK_MSG(r != NULL, "%s", d.msg);
  for (int i = 0; r && i < n; i++) {
    const float *x = pc_reference_data(r, pc_program_find(p, names[i]));
    CHECK_MSG(x && page_offset(x) == PC_INPUT_PAGE_OFFSET, "%s: %s at page offset %lld", spec, names[i],
              (long long)(x ? page_offset(x) : -1));
  }
  pc_reference_free(r);
  pc_program_free(p);
}

int main(void) {
  static const char *const abc[] = {"A", "B", "C"};
  check_reference("matmul:256,384,512", abc, 3); /* a fresh process */
  churn();
  check_reference("matmul:256,384,512", abc, 3);
  check_reference("matmul:5,7,3", abc, 3); /* small buffers too */
  churn();
  check_reference("matmul:128,768,1024", abc, 3);
  TEST_DONE();
}
