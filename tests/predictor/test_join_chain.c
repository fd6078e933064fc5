/* An accumulator passed from block to block of a loop through join phis (as a padded
 * convolution's guard blocks pass it, one tap per block: conv_r50_2 #8, docs/validation.md
 * session 6): each block's add waits for the previous block's, so a loop iteration takes at
 * least the three multiply-adds of the chain, in the default model, not the first one alone. */
#define _GNU_SOURCE
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "test.h"
#include "synthetic.h"

/* for j < 16: acc = 0; for i < 4096: acc += a[i]*w[i] (t0), += a[i+1]*w[i+1] (t1), += a[i+2]*w[i+2]
 * (t2); c[j] = acc. t1 and t2 take the accumulator through a phi of their own (one incoming
 * block here; a guard's join in the real kernels). */
static const char *ir =
    "define void @pad(ptr %a, ptr %w, ptr %c) {\n"
    "entry:\n  br label %j\n"
    "j:\n  %jv = phi i64 [0, %entry], [%jn, %jl]\n  br label %h\n"
    "h:\n  %iv = phi i64 [0, %j], [%in, %t2]\n  %acc = phi float [0.0, %j], [%s2, %t2]\n"
    "  %d = icmp eq i64 %iv, 4096\n  br i1 %d, label %jl, label %t0\n"
    "t0:\n  %pa0 = getelementptr float, ptr %a, i64 %iv\n  %x0 = load float, ptr %pa0\n"
    "  %pw0 = getelementptr float, ptr %w, i64 %iv\n  %w0 = load float, ptr %pw0\n"
    "  %m0 = fmul float %x0, %w0\n  %s0 = fadd float %acc, %m0\n  br label %t1\n"
    "t1:\n  %a1 = phi float [%s0, %t0]\n  %pa1 = getelementptr float, ptr %pa0, i64 1\n  %x1 = load float, ptr %pa1\n"
    "  %pw1 = getelementptr float, ptr %pw0, i64 1\n  %w1 = load float, ptr %pw1\n"
    "  %m1 = fmul float %x1, %w1\n  %s1 = fadd float %a1, %m1\n  br label %t2\n"
    "t2:\n  %a2 = phi float [%s1, %t1]\n  %pa2 = getelementptr float, ptr %pa0, i64 2\n  %x2 = load float, ptr %pa2\n"
    "  %pw2 = getelementptr float, ptr %pw0, i64 2\n  %w2 = load float, ptr %pw2\n"
    "  %m2 = fmul float %x2, %w2\n  %s2 = fadd float %a2, %m2\n  %in = add i64 %iv, 1\n  br label %h\n"
    "jl:\n  %q = getelementptr float, ptr %c, i64 %jv\n  store float %acc, ptr %q\n"
    "  %jn = add i64 %jv, 1\n  %e = icmp eq i64 %jn, 16\n  br i1 %e, label %exit, label %j\n"
    "exit:\n  ret void\n}\n";

int main(void) {
  pt_diag d = {0};
  ptg_target *t = synthetic_shipped_target("zen4-epyc-2c", &d);
  CHECK_MSG(t, "%s", d.msg);
  if (!t) TEST_DONE();
  pa_profile *p = synthetic_profile_ir(ir, "pad", &d);
  CHECK_MSG(p, "%s", d.msg);
  if (!p) TEST_DONE();

  double per_iteration = synthetic_cycles_per_iteration(p, t, 4096.0 * 16, &d);
  CHECK_MSG(!isnan(per_iteration), "%s", d.msg);
  double chain = 3 * ptg_target_inst(t, PTG_OP_FMA, PTG_ELEM_F32, 32).latency;
  CHECK_MSG(per_iteration >= 0.9 * chain && per_iteration <= 1.5 * chain,
            "%g cycles per iteration, want the 3-FMA chain, %g", per_iteration, chain);
  pa_profile_free(p);
  ptg_target_free(t);
  TEST_DONE();
}
