/* Consecutive loops that hand one accumulator on (a reduction loop split and unrolled, as
 * mm512 #26's eight k loops; docs/validation.md session 7): the second loop's preheader is the
 * first loop's own block, so its entries are the first loop's, not that block's executions, and
 * neither loop overlaps its next instance in the reorder window: the work independent of an
 * instance lies past the whole chain. With a store of the first result between them, the
 * second loop starts afresh and the instances may overlap. */
#define _GNU_SOURCE
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "test.h"
#include "synthetic.h"

/* for j < 16: acc = 0; for i < 256: acc += a[i]*w[i] (k1); for i < 256: acc += a[256+i]*w[256+i]
 * (k2, entered from k1's block with k1's accumulator); c[j] = acc. `handoff` false: k1's sum is
 * stored in a block between the loops and k2 starts from 0. */
static char *loops_ir(bool handoff) {
  char *s = NULL;
  size_t len = 0;
  FILE *f = open_memstream(&s, &len);
  fprintf(f, "define void @chain(ptr %%a, ptr %%w, ptr %%c) {\n"
             "entry:\n  br label %%j\n"
             "j:\n  %%jv = phi i64 [0, %%entry], [%%jn, %%jl]\n  br label %%k1\n"
             "k1:\n  %%i1 = phi i64 [0, %%j], [%%n1, %%k1]\n  %%acc1 = phi float [0.0, %%j], [%%s1, %%k1]\n"
             "  %%p1 = getelementptr float, ptr %%a, i64 %%i1\n  %%x1 = load float, ptr %%p1\n"
             "  %%q1 = getelementptr float, ptr %%w, i64 %%i1\n  %%y1 = load float, ptr %%q1\n"
             "  %%m1 = fmul float %%x1, %%y1\n  %%s1 = fadd float %%acc1, %%m1\n"
             "  %%n1 = add i64 %%i1, 1\n  %%e1 = icmp eq i64 %%n1, 256\n  br i1 %%e1, label %%%s, label %%k1\n",
          handoff ? "k2" : "mid");
  if (!handoff)
    fprintf(f, "mid:\n  %%r = getelementptr float, ptr %%c, i64 %%jv\n  store float %%s1, ptr %%r\n  br label %%k2\n");
  fprintf(f, "k2:\n  %%i2 = phi i64 [0, %%%s], [%%n2, %%k2]\n  %%acc2 = phi float [%s, %%%s], [%%s2, %%k2]\n"
             "  %%o2 = add i64 %%i2, 256\n  %%p2 = getelementptr float, ptr %%a, i64 %%o2\n  %%x2 = load float, ptr %%p2\n"
             "  %%q2 = getelementptr float, ptr %%w, i64 %%o2\n  %%y2 = load float, ptr %%q2\n"
             "  %%m2 = fmul float %%x2, %%y2\n  %%s2 = fadd float %%acc2, %%m2\n"
             "  %%n2 = add i64 %%i2, 1\n  %%e2 = icmp eq i64 %%n2, 256\n  br i1 %%e2, label %%jl, label %%k2\n"
             "jl:\n  %%t = getelementptr float, ptr %%c, i64 %%jv\n  store float %%s2, ptr %%t\n"
             "  %%jn = add i64 %%jv, 1\n  %%e = icmp eq i64 %%jn, 16\n  br i1 %%e, label %%exit, label %%j\n"
             "exit:\n  ret void\n}\n",
          handoff ? "k1" : "mid", handoff ? "%s1" : "0.0", handoff ? "k1" : "mid");
  fclose(f);
  return s;
}

/* Predicted cycles per inner iteration (both loops), default model, one thread; NAN on error. */
static double cycles_per_iteration(const ptg_target *t, bool handoff) {
  pt_diag d = {0};
  char *ir = loops_ir(handoff);
  double c = synthetic_ir_cycles_per_iteration(ir, "chain", t, 16.0 * 2 * 256, &d);
  CHECK_MSG(!isnan(c), "%s", d.msg);
  free(ir);
  return c;
}

int main(void) {
  pt_diag d = {0};
  ptg_target *t = synthetic_shipped_target("zen4-epyc-2c", &d);
  CHECK_MSG(t, "%s", d.msg);
  if (!t) TEST_DONE();
  double chain = ptg_target_inst(t, PTG_OP_FMA, PTG_ELEM_F32, 32).latency;
  double handed = cycles_per_iteration(t, true), fresh = cycles_per_iteration(t, false);
  /* before: k2's entries were k1's block executions (256 per entry), so k2 counted one
   * iteration per entry and overlapped down to its resource bound (0.68 of the chain here) */
  CHECK_MSG(handed >= 0.85 * chain && handed <= 1.2 * chain, "%g cycles per iteration, want about the FMA chain, %g",
            handed, chain);
  CHECK_MSG(fresh < handed, "a fresh second loop (%g cycles per iteration) overlaps, the handed-on one (%g) not", fresh,
            handed);
  ptg_target_free(t);
  TEST_DONE();
}
