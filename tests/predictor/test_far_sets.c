/* +far (predictor/memory.c far_walk): a column walk of b (rows 2048 bytes apart: 2 of Zen 4's
 * 64 L1 sets) whose next enclosing loop moves it a whole line (mm512 #10: j.0 steps 16 floats)
 * comes back only after more lines than L1 holds, so every access misses L1: the reuse
 * histogram's misses, which the memory model let overlap up to the target's misses in flight.
 * They fall in the walk's two sets as a set-conflicting walk's do, so +sets' bound applies:
 * about L2 latency / set_inflight(2) cycles per access. The same nest with few enough lines
 * between returns (its lines stay in L1) is unchanged, and so is a target without set walks.
 * An unrolled loop's rows (one object, one stride, offsets apart) come back after the lines of
 * all of them: sixteen such walks whose one sweep fits L1 and whose sixteen do not are far
 * (mm1024 #93), one of them alone is not; rows a whole sweep apart are separate walks too. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "test.h"
#include "synthetic.h"

/* for i < 4: for jo < JO: for k < K: acc += b[k * 512 + jo * 16]; c[i * 32 + jo] = acc */
static const char *ir_fmt =
    "define void @far(ptr %%b, ptr %%c) {\n"
    "entry:\n  br label %%i\n"
    "i:\n  %%iv = phi i64 [0, %%entry], [%%in, %%il]\n  br label %%jo\n"
    "jo:\n  %%jv = phi i64 [0, %%i], [%%jn, %%jl]\n  %%col = shl i64 %%jv, 4\n  br label %%k\n"
    "k:\n  %%kv = phi i64 [0, %%jo], [%%kn, %%k]\n  %%acc = phi float [0.0, %%jo], [%%s, %%k]\n"
    "  %%row = shl i64 %%kv, 9\n  %%idx = add i64 %%row, %%col\n"
    "  %%p = getelementptr float, ptr %%b, i64 %%idx\n  %%x = load float, ptr %%p\n"
    "  %%s = fadd float %%acc, %%x\n  %%kn = add i64 %%kv, 1\n  %%kd = icmp eq i64 %%kn, %d\n"
    "  br i1 %%kd, label %%jl, label %%k\n"
    "jl:\n  %%o = shl i64 %%iv, 5\n  %%oj = add i64 %%o, %%jv\n  %%q = getelementptr float, ptr %%c, i64 %%oj\n"
    "  store float %%s, ptr %%q\n  %%jn = add i64 %%jv, 1\n  %%jd = icmp eq i64 %%jn, %d\n"
    "  br i1 %%jd, label %%il, label %%jo\n"
    "il:\n  %%in = add i64 %%iv, 1\n  %%e = icmp eq i64 %%in, 4\n  br i1 %%e, label %%exit, label %%i\n"
    "exit:\n  ret void\n}\n";

/* Cycles per k iteration with and without +far. */
static void cycles(int k, int jo, const ptg_target *t, double *with, double *without) {
  char ir[4096];
  pt_diag d = {0};
  snprintf(ir, sizeof ir, ir_fmt, k, jo);
  pa_profile *p = synthetic_profile_ir(ir, "far", &d);
  CHECK_MSG(p, "%s", d.msg);
  *with = *without = NAN;
  if (!p) return;
  pp_options o;
  pp_options_default(&o);
  o.threads = 1;
  CHECK(o.far_sets && o.l1_sets);
  for (int pass = 0; pass < 2; pass++) {
    o.far_sets = pass == 0;
    pp_prediction *r = pp_predict_profile(p, t, &o, &d);
    CHECK_MSG(r, "%s", d.msg);
    double c = r ? r->seconds * r->frequency_ghz * 1e9 / (4.0 * jo * k) : NAN;
    *(pass == 0 ? with : without) = c;
    pp_prediction_free(r);
  }
  pa_profile_free(p);
}

/* for i < 4: for jo < 8: for k < trip: acc += sum over u < rows of b[(k * step + u * gap) * 512 + jo * 16]:
 * `rows` walks of b `step` rows of 2048 bytes apart (all in 2 of Zen 4's 64 L1 sets), `gap` rows
 * apart from each other, `trip` lines each per sweep of k, moved a line by jo, back at the next
 * i: 8 x trip lines a walk, 8 x trip x rows for all of them. step 16, gap 1, trip 8: rows 32 KiB
 * apart, a row apart from each other; step 1, gap 16, trip 16: rows a row apart, each starting
 * where the one before it ends (one object, one stride, offsets a whole number of strides apart,
 * which never meet within the sweep: bert_ffn1 #13). */
static double unrolled_cycles(int rows, int step, int gap, int trip, const ptg_target *t, bool far) {
  char ir[8192];
  int at = snprintf(ir, sizeof ir,
                    "define void @rows(ptr %%b, ptr %%c) {\n"
                    "entry:\n  br label %%i\n"
                    "i:\n  %%iv = phi i64 [0, %%entry], [%%in, %%il]\n  br label %%jo\n"
                    "jo:\n  %%jv = phi i64 [0, %%i], [%%jn, %%jl]\n  %%col = shl i64 %%jv, 4\n  br label %%k\n"
                    "k:\n  %%kv = phi i64 [0, %%jo], [%%kn, %%k]\n  %%acc = phi float [0.0, %%jo], [%%s%d, %%k]\n"
                    "  %%row = mul i64 %%kv, %d\n  %%idx = add i64 %%row, %%col\n  %%s0 = fadd float %%acc, 0.0\n",
                    rows, step * 512);
  for (int u = 0; u < rows; u++)
    at += snprintf(ir + at, sizeof ir - (size_t)at,
                   "  %%x%d = add i64 %%idx, %d\n  %%p%d = getelementptr float, ptr %%b, i64 %%x%d\n"
                   "  %%v%d = load float, ptr %%p%d\n  %%s%d = fadd float %%s%d, %%v%d\n",
                   u, u * gap * 512, u, u, u, u, u + 1, u, u);
  snprintf(ir + at, sizeof ir - (size_t)at,
           "  %%kn = add i64 %%kv, 1\n  %%kd = icmp eq i64 %%kn, %d\n  br i1 %%kd, label %%jl, label %%k\n"
           "jl:\n  %%o = shl i64 %%iv, 3\n  %%oj = add i64 %%o, %%jv\n  %%q = getelementptr float, ptr %%c, i64 %%oj\n"
           "  store float %%s%d, ptr %%q\n  %%jn = add i64 %%jv, 1\n  %%jd = icmp eq i64 %%jn, 8\n"
           "  br i1 %%jd, label %%il, label %%jo\n"
           "il:\n  %%in = add i64 %%iv, 1\n  %%e = icmp eq i64 %%in, 4\n  br i1 %%e, label %%exit, label %%i\n"
           "exit:\n  ret void\n}\n",
           trip, rows);
  pt_diag d = {0};
  pa_profile *p = synthetic_profile_ir(ir, "rows", &d);
  CHECK_MSG(p, "%s", d.msg);
  if (!p) return NAN;
  pp_options o;
  pp_options_default(&o);
  o.threads = 1;
  o.far_sets = far;
  pp_prediction *r = pp_predict_profile(p, t, &o, &d);
  CHECK_MSG(r, "%s", d.msg);
  double c = r ? r->seconds * r->frequency_ghz * 1e9 / (4.0 * 8 * trip * rows) : NAN; /* per access */
  pp_prediction_free(r);
  pa_profile_free(p);
  return c;
}

int main(void) {
  pt_diag d = {0};
  ptg_target *zen4 = synthetic_shipped_target("zen4-epyc-2c", &d), *zen5 = synthetic_shipped_target("zen5-epyc-2c", &d);
  CHECK_MSG(zen4 && zen5, "%s", d.msg);
  pp_options parsed = synthetic_preset("steady+bw+overlap+strides+lanes+sets+carried+shared+far");
  CHECK(parsed.far_sets);
  if (!zen4 || !zen5) TEST_DONE();
  CHECK(zen4->caches[0].n_set_walks > 0 && zen5->caches[0].n_set_walks == 0);

  /* 512 rows x 32 columns of lines between returns: every access an L1 miss, in 2 sets */
  double with, without;
  cycles(512, 32, zen4, &with, &without);
  double fill = zen4->caches[1].latency_cycles.value / ptg_target_set_inflight(zen4, 2);
  CHECK_MSG(fabs(with / fill - 1) < 0.05, "far column walk: %g cycles per access with +far, want %g", with, fill);
  CHECK_MSG(with > 1.5 * without, "far column walk: %g cycles per access with +far, %g without", with, without);

  /* 8 rows x 4 columns (32 lines) between returns: they stay in L1, nothing changes */
  cycles(8, 4, zen4, &with, &without);
  CHECK_MSG(fabs(with - without) <= 1e-9 * without, "near walk: %g vs %g", with, without);

  /* sixteen unrolled rows: 1024 lines between returns, every access an L1 miss in the rows' 2
   * sets; one row alone (64 lines) stays in L1 */
  double rows_with = unrolled_cycles(16, 16, 1, 8, zen4, true), rows_without = unrolled_cycles(16, 16, 1, 8, zen4, false);
  CHECK_MSG(fabs(rows_with / fill - 1) < 0.05, "16 unrolled rows: %g cycles per access with +far, want %g", rows_with,
            fill);
  CHECK_MSG(rows_with > 1.5 * rows_without, "16 unrolled rows: %g with +far, %g without", rows_with, rows_without);
  double row_with = unrolled_cycles(1, 16, 1, 8, zen4, true), row_without = unrolled_cycles(1, 16, 1, 8, zen4, false);
  CHECK_MSG(fabs(row_with - row_without) <= 1e-9 * row_without, "one row: %g vs %g", row_with, row_without);

  /* eight rows a whole sweep apart (offsets 16 strides apart, 16 iterations): eight walks, 1024
   * lines between returns, every access an L1 miss; taken as one stream they were one walk of 128
   * lines that stays in L1 */
  double apart_with = unrolled_cycles(8, 1, 16, 16, zen4, true), apart_without = unrolled_cycles(8, 1, 16, 16, zen4, false);
  CHECK_MSG(fabs(apart_with / fill - 1) < 0.05, "8 rows a sweep apart: %g cycles per access with +far, want %g",
            apart_with, fill);
  CHECK_MSG(apart_with > 1.5 * apart_without, "8 rows a sweep apart: %g with +far, %g without", apart_with,
            apart_without);

  /* no set walks in the target: no bound */
  cycles(512, 32, zen5, &with, &without);
  CHECK_MSG(fabs(with - without) <= 1e-9 * without, "zen5: %g vs %g", with, without);

  ptg_target_free(zen4), ptg_target_free(zen5);
  TEST_DONE();
}
