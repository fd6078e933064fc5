/* A loop whose float header phi takes, around the back edge, the next element's load (a
 * rotated load: dwconv_mb #9, docs/validation.md session 7) carries no chain of adds from one
 * iteration to the next: the adds of its blocks start from memory at each iteration, so the
 * iterations overlap. The same loop with the phi fed by its last add is an accumulator, and
 * takes the two multiply-adds' chain per iteration. */
#define _GNU_SOURCE
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "test.h"
#include "synthetic.h"

/* for i < 4096: c = phi(a[0], next); t0: s0 = c + x[i]*w[i]; t1: s1 = s0 + x[i+1]*w[i+1];
 * a[i] = s1; c's next value a[i + 1] (reload) or s1 (accumulator) */
static const char *ir_fmt =
    "define void @rot(ptr %%a, ptr %%x, ptr %%w) {\n"
    "entry:\n  %%c0 = load float, ptr %%a\n  br label %%h\n"
    "h:\n  %%iv = phi i64 [0, %%entry], [%%in, %%t1]\n  %%c = phi float [%%c0, %%entry], [%%%s, %%t1]\n"
    "  %%d = icmp eq i64 %%iv, 4096\n  br i1 %%d, label %%exit, label %%t0\n"
    "t0:\n  %%px0 = getelementptr float, ptr %%x, i64 %%iv\n  %%x0 = load float, ptr %%px0\n"
    "  %%pw0 = getelementptr float, ptr %%w, i64 %%iv\n  %%w0 = load float, ptr %%pw0\n"
    "  %%m0 = fmul float %%x0, %%w0\n  %%s0 = fadd float %%c, %%m0\n  br label %%t1\n"
    "t1:\n  %%j = phi float [%%s0, %%t0]\n  %%px1 = getelementptr float, ptr %%px0, i64 1\n  %%x1 = load float, ptr %%px1\n"
    "  %%pw1 = getelementptr float, ptr %%pw0, i64 1\n  %%w1 = load float, ptr %%pw1\n"
    "  %%m1 = fmul float %%x1, %%w1\n  %%s1 = fadd float %%j, %%m1\n"
    "  %%pa = getelementptr float, ptr %%a, i64 %%iv\n  store float %%s1, ptr %%pa\n"
    "  %%in = add i64 %%iv, 1\n  %%pn = getelementptr float, ptr %%a, i64 %%in\n  %%r = load float, ptr %%pn\n"
    "  br label %%h\n"
    "exit:\n  ret void\n}\n";

static double cycles_per_iteration(const ptg_target *t, bool reload) {
  pt_diag d = {0};
  char ir[4096];
  snprintf(ir, sizeof ir, ir_fmt, reload ? "r" : "s1");
  double c = synthetic_ir_cycles_per_iteration(ir, "rot", t, 4096, &d);
  CHECK_MSG(!isnan(c), "%s", d.msg);
  return c;
}

int main(void) {
  pt_diag d = {0};
  ptg_target *t = synthetic_shipped_target("zen4-epyc-2c", &d);
  CHECK_MSG(t, "%s", d.msg);
  if (!t) TEST_DONE();
  double chain = 2 * ptg_target_inst(t, PTG_OP_FMA, PTG_ELEM_F32, 32).latency;
  double reload = cycles_per_iteration(t, true), accumulate = cycles_per_iteration(t, false);
  CHECK_MSG(accumulate >= 0.9 * chain, "accumulator: %g cycles per iteration, want the 2-FMA chain, %g", accumulate,
            chain);
  CHECK_MSG(reload < 0.75 * chain, "reloaded phi: %g cycles per iteration, want below the chain (%g): no recurrence",
            reload, chain);
  ptg_target_free(t);
  TEST_DONE();
}
