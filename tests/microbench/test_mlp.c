/* The misses-in-flight kernels (microbench/chase.c) do what mlp.c claims: a chase kernel with k
 * chains makes k x steps dependent pointer loads per iteration and leaves each chain where a
 * plain C walk of the same cycle would be; the stride kernel loads every stride-th word once per
 * pass (the xor of what it loaded equals the xor of those words) and nothing else; the plateau
 * of an overlap curve is not made by one outlier. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "asm_loop.h"
#include "microbench/internal.h"
#include "test.h"

/* movq (%reg), %reg or movq 8(%reg), %reg: a load into a register; spill reloads come from
 * (%rsp) and are not counted. */
static bool is_pointer_load(const char *insn, const char *line, const void *ctx) {
  (void)line, (void)ctx;
  return (strncmp(insn, "movq\t", 5) == 0 || strncmp(insn, "movq ", 5) == 0) && strstr(insn, "(%r") && !strstr(insn, "%rsp") &&
         strrchr(insn, ',') > strchr(insn, '(');
}
static int loads_in_loop(const char *body) { return asm_count_lines(body, false, is_pointer_load, NULL); }

static void check_chase(pmb_jit *j, int chains) {
  pt_diag d = {0};
  char name[32];
  snprintf(name, sizeof name, "chase_%d", chains);
  LLVMModuleRef m = pmb_jit_module(j, name);
  CHECK(pmb_chase_kernel_build(j, m, chains, name, &d) == 0);
  char *text = pmb_jit_asm(j, m, &d), *body = text ? pmb_asm_function(text, name) : NULL;
  CHECK_MSG(body && loads_in_loop(body) == chains * pmb_chase_steps(chains), "%d chains: %d loads in the loop, expected %d",
            chains, body ? loads_in_loop(body) : -1, chains * pmb_chase_steps(chains));
  free(body);
  free(text);
  CHECK(pmb_jit_add(j, m, &d) == 0);
  pmb_kernel_fn fn = (pmb_kernel_fn)pmb_jit_lookup(j, name, &d);
  CHECK(fn != NULL);
  if (!fn) return;
  /* a random cycle over 64 KiB, chains started 3 lines apart along it */
  const int line = 64;
  const size_t bytes = 64 << 10;
  char *buf = aligned_alloc(64, bytes);
  pt_rng rng = {7};
  uint32_t *order;
  pmb_make_cycle(buf, bytes, line, &rng, &order);
  void *pos[PMB_MAX_CHASES], *want[PMB_MAX_CHASES], *sink = NULL;
  for (int k = 0; k < chains; k++) pos[k] = want[k] = buf + (size_t)order[3 * k] * line;
  const int64_t iters = 5;
  fn(iters, pos, &sink);
  for (int k = 0; k < chains; k++)
    for (int64_t s = 0; s < iters * pmb_chase_steps(chains); s++) want[k] = *(void **)want[k];
  int wrong = 0;
  for (int k = 0; k < chains; k++) wrong += pos[k] != want[k];
  CHECK_MSG(wrong == 0, "%d chains: %d chains ended elsewhere than a C walk", chains, wrong);
  CHECK(sink == want[0]);
  free(order);
  free(buf);
}

static void check_stride(pmb_jit *j) {
  pt_diag d = {0};
  LLVMModuleRef m = pmb_jit_module(j, "stride");
  CHECK(pmb_stride_kernel_build(j, m, "stride_walk", false, &d) == 0);
  char *text = pmb_jit_asm(j, m, &d), *body = text ? pmb_asm_function(text, "stride_walk") : NULL;
  /* volatile: 4 loads per unrolled group, none merged or vectorized away */
  CHECK_MSG(body && strstr(body, "xorq") && !strstr(body, "gather"), "stride kernel: %s", body ? body : "(none)");
  free(body);
  free(text);
  CHECK(pmb_jit_add(j, m, &d) == 0);
  pmb_kernel_fn fn = (pmb_kernel_fn)pmb_jit_lookup(j, "stride_walk", &d);
  CHECK(fn != NULL);
  if (!fn) return;
  const int64_t strides[] = {64, 4096 + 64, 4096, 2048};
  const int64_t bytes = 1 << 20;
  uint64_t *buf = aligned_alloc(4096, (size_t)bytes);
  for (int64_t i = 0; i < bytes / 8; i++) buf[i] = (uint64_t)1 << (i % 61) ^ (uint64_t)i * 0x9e3779b97f4a7c15ULL;
  for (size_t s = 0; s < PT_ARRAY_LEN(strides); s++) {
    struct {
      void *base;
      int64_t bytes, stride;
    } in = {buf, bytes, strides[s]};
    int64_t n = pmb_stride_accesses(bytes, strides[s]);
    uint64_t want = 0, got = 0;
    for (int64_t i = 0; i < n; i++) want ^= buf[i * strides[s] / 8];
    CHECK_MSG((n - 1) * strides[s] + 8 <= bytes && n * strides[s] + 8 > bytes - 4 * strides[s],
              "stride %lld: %lld accesses do not cover the buffer", (long long)strides[s], (long long)n);
    fn(3, &in, &got); /* three passes: x ^ x ^ x = x */
    CHECK_MSG(got == want, "stride %lld: the walk loaded other words than every %lld bytes", (long long)strides[s],
              (long long)strides[s]);
  }
  free(buf);
}

static void check_plateau(void) {
  /* L2-like: rises to 10.5, one lucky 12.9 at k = 96, unmeasured points (NaN) skipped */
  const double l2[] = {1, 2, 4, 6, 7.7, 9.4, 10.4, 10.6, 10.5, NAN, 10.5, 10.6, 10.4, 10.5, 10.5, 12.9, 10.4};
  int knee = -1, at = pmb_mlp_plateau(l2, (int)PT_ARRAY_LEN(l2), &knee);
  CHECK_MSG(at >= 0 && fabs(l2[at] - 10.6) < 1e-9, "plateau %g, not the outlier", at >= 0 ? l2[at] : NAN);
  CHECK_MSG(knee == 6, "knee at index %d (10.4 is the first within 10%% of 10.6)", knee);
  /* still rising at the end: the second highest */
  const double rising[] = {1, 2, 4, 8, 16, 32, 48};
  CHECK(pmb_mlp_plateau(rising, 7, NULL) == 5);
  const double two[] = {1, 1.9};
  CHECK(pmb_mlp_plateau(two, 2, &knee) == 1 && knee == 1);
  const double none[] = {NAN, NAN};
  CHECK(pmb_mlp_plateau(none, 2, NULL) == -1);
}

int main(void) {
  check_plateau();
  pt_diag d = {0};
  pmb_jit *j = pmb_jit_new(&d);
  CHECK(j != NULL);
  if (!j) TEST_DONE();
  static const int chains[] = {1, 2, 8, 12, 16, 24, 48, 128};
  for (size_t i = 0; i < PT_ARRAY_LEN(chains); i++) check_chase(j, chains[i]);
  pt_diag bad = {0};
  LLVMModuleRef m = pmb_jit_module(j, "bad");
  CHECK(pmb_chase_kernel_build(j, m, PMB_MAX_CHASES + 1, "bad", &bad) < 0);
  LLVMDisposeModule(m);
  check_stride(j);
  pmb_jit_free(j);
  TEST_DONE();
}
