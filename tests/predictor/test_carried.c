/* Recurrences through several blocks (predictor/recurrence.c, the "+carried" model): a loop of
 * two blocks whose header phi accumulates 8 dependent float adds in the body takes at least 8 add
 * latencies per iteration, even beside a second float phi that accumulates nothing (the rule
 * without carried edges splits the chain over both); and consecutive instances of a short
 * reduction overlap in the reorder window under +overlap, a long one's hardly. */
#define _GNU_SOURCE
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "test.h"
#include "synthetic.h"

/* for j < OUTER: acc = 0; for i < TRIP: acc += a[8i] + ... + a[8i+7] (in order); c[j] = acc.
 * %m is a float phi of the header that only feeds a multiply: no accumulator. */
static const char *ir_fmt =
    "define void @red(ptr %%a, ptr %%c) {\n"
    "entry:\n  br label %%j\n"
    "j:\n  %%jv = phi i64 [0, %%entry], [%%jn, %%jl]\n  br label %%h\n"
    "h:\n  %%iv = phi i64 [0, %%j], [%%in, %%b]\n  %%acc = phi float [0.0, %%j], [%%s8, %%b]\n"
    "  %%m = phi float [1.0, %%j], [%%y, %%b]\n"
    "  %%d = icmp eq i64 %%iv, %d\n  br i1 %%d, label %%jl, label %%b\n"
    "b:\n  %%base = mul i64 %%iv, 8\n  %%p0 = getelementptr float, ptr %%a, i64 %%base\n"
    "  %%x0 = load float, ptr %%p0\n  %%s1 = fadd float %%acc, %%x0\n"
    "  %%p1 = getelementptr float, ptr %%p0, i64 1\n  %%x1 = load float, ptr %%p1\n  %%s2 = fadd float %%s1, %%x1\n"
    "  %%p2 = getelementptr float, ptr %%p0, i64 2\n  %%x2 = load float, ptr %%p2\n  %%s3 = fadd float %%s2, %%x2\n"
    "  %%p3 = getelementptr float, ptr %%p0, i64 3\n  %%x3 = load float, ptr %%p3\n  %%s4 = fadd float %%s3, %%x3\n"
    "  %%p4 = getelementptr float, ptr %%p0, i64 4\n  %%x4 = load float, ptr %%p4\n  %%s5 = fadd float %%s4, %%x4\n"
    "  %%p5 = getelementptr float, ptr %%p0, i64 5\n  %%x5 = load float, ptr %%p5\n  %%s6 = fadd float %%s5, %%x5\n"
    "  %%p6 = getelementptr float, ptr %%p0, i64 6\n  %%x6 = load float, ptr %%p6\n  %%s7 = fadd float %%s6, %%x6\n"
    "  %%p7 = getelementptr float, ptr %%p0, i64 7\n  %%x7 = load float, ptr %%p7\n  %%s8 = fadd float %%s7, %%x7\n"
    "  %%y = fmul float %%x0, 2.0\n  %%in = add i64 %%iv, 1\n  br label %%h\n"
    "jl:\n  %%q = getelementptr float, ptr %%c, i64 %%jv\n  store float %%acc, ptr %%q\n"
    "  %%jn = add i64 %%jv, 1\n  %%e = icmp eq i64 %%jn, %d\n  br i1 %%e, label %%exit, label %%j\n"
    "exit:\n  ret void\n}\n";

static pa_profile *profile(int trip, int outer, pt_diag *d) {
  char ir[4096];
  snprintf(ir, sizeof ir, ir_fmt, trip, outer);
  return synthetic_profile_ir(ir, "red", d);
}

/* Predicted cycles per iteration of the inner loop under `model`. */
static double cycles_per_iteration(const pa_profile *p, const ptg_target *t, const char *model, double iterations) {
  pp_options o = {0};
  pt_diag d = {0};
  if (pp_options_preset(&o, model) != 0) return NAN;
  o.threads = 1;
  pp_prediction *r = pp_predict_profile(p, t, &o, &d);
  if (!r) return NAN;
  double c = r->seconds * r->frequency_ghz * 1e9 / iterations;
  pp_prediction_free(r);
  return c;
}

int main(void) {
  pt_diag d = {0};
  ptg_target *t = synthetic_shipped_target("zen5-epyc-2c", &d);
  CHECK_MSG(t, "%s", d.msg);
  pa_profile *lng = profile(4096, 16, &d), *shrt = profile(4, 16384, &d);
  CHECK_MSG(lng && shrt, "%s", d.msg);
  if (!t || !lng || !shrt) TEST_DONE();

  /* the profile: the accumulator's edge from the body's last add through the header phi */
  const pa_function *f = &lng->functions[0];
  int found = 0;
  for (int c = 0; c < f->n_carried; c++)
    found += strcmp(f->blocks[f->carried[c].phi_block].name, "h") == 0 &&
             strcmp(f->blocks[f->carried[c].src_block].name, "b") == 0 &&
             strcmp(f->blocks[f->carried[c].src_block].nodes[f->carried[c].src_node].opcode, "fadd") == 0;
  CHECK_MSG(found >= 1, "%d carried edges of the accumulator", found);

  ptg_inst_cost add = ptg_target_inst(t, PTG_OP_ADD, PTG_ELEM_F32, 32);
  double chain = 8 * add.latency;
  double with = cycles_per_iteration(lng, t, "steady+bw+carried", 4096.0 * 16);
  double without = cycles_per_iteration(lng, t, "steady+bw", 4096.0 * 16);
  CHECK_MSG(with >= 0.95 * chain && with <= 1.3 * chain, "with carried edges: %g cycles per iteration, chain %g", with,
            chain);
  CHECK_MSG(without < 0.8 * with, "without: %g cycles per iteration (two float phis share the chain), with: %g",
            without, with);

  /* overlap: a 4-iteration reduction restarts every ~100 uops, so the window holds several;
   * a 4096-iteration one restarts every ~90,000 uops */
  double s_ov = cycles_per_iteration(shrt, t, "steady+bw+overlap+carried", 4.0 * 16384);
  double s_no = cycles_per_iteration(shrt, t, "steady+bw+carried", 4.0 * 16384);
  double l_ov = cycles_per_iteration(lng, t, "steady+bw+overlap+carried", 4096.0 * 16);
  printf("cycles per iteration: chain %.2f; long: carried %.2f, without %.2f, +overlap %.2f; short: +overlap %.2f, "
         "without %.2f\n", chain, with, without, l_ov, s_ov, s_no);
  CHECK_MSG(s_ov < 0.6 * s_no, "short reductions: %g cycles per iteration overlapped, %g not", s_ov, s_no);
  CHECK_MSG(l_ov > 0.9 * with, "long reductions: %g cycles per iteration overlapped, %g not", l_ov, with);
  /* the default model has both since session 10: the short reductions overlap there too */
  pp_options def;
  pp_options_default(&def);
  CHECK(def.carried && def.overlap && def.steady_state);
  double s_def = cycles_per_iteration(shrt, t, "steady+bw+overlap+strides+lanes+sets+carried", 4.0 * 16384);
  CHECK_MSG(fabs(s_def - s_ov) < 0.05 * s_ov, "default: %g cycles per iteration, +overlap+carried %g", s_def, s_ov);

  pa_profile_free(lng), pa_profile_free(shrt);
  ptg_target_free(t);
  TEST_DONE();
}
