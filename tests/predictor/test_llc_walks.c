/* +llcwalk (in the default since session 16): bert_qkv's default schedule in small: a fused loop f over 16 x J tiles (split by
 * udiv and urem) around a k loop of 768 that walks B's column, 128 bytes 9216 apart. B's lines
 * come back when f wraps, after J x 768 x 2 lines: 7.1 MB at J = 72, past where the Zen 4
 * file's latency curve leaves its last level, so on that file the k loop takes at least its
 * iterations x the curve's memory share there x the strided walk's ns per access at 8192 bytes,
 * slower than without the switch. The same walk coming back after 8 tiles (786 KB), a k loop
 * over 24 rows (fewer pages than the L1 DTLB holds), and a target without the latency curve are
 * unchanged. */
#include <math.h>
#include <stdio.h>

#include "test.h"
#include "synthetic.h"

/* for f < 16 * J: q = f / J, r = f mod J; for k < K: acc += a[q*6144 + k] * b[k*2304 + r*32 .. +32] */
static const char *ir_fmt =
    "define void @body(ptr %%a, ptr %%b, ptr %%c) {\n"
    "entry:\n  br label %%f\n"
    "f:\n  %%fv = phi i64 [0, %%entry], [%%fn, %%fl]\n  %%fz = freeze i64 %%fv\n"
    "  %%q = udiv i64 %%fz, %d\n  %%r = urem i64 %%fz, %d\n"
    "  %%ai0 = mul i64 %%q, 6144\n  %%r32 = shl i64 %%r, 5\n  br label %%k\n"
    "k:\n  %%kv = phi i64 [0, %%f], [%%kn, %%k]\n  %%acc = phi <32 x float> [zeroinitializer, %%f], [%%s, %%k]\n"
    "  %%ai = add i64 %%ai0, %%kv\n  %%pa = getelementptr float, ptr %%a, i64 %%ai\n"
    "  %%x = load float, ptr %%pa\n  %%xi = insertelement <32 x float> poison, float %%x, i64 0\n"
    "  %%xs = shufflevector <32 x float> %%xi, <32 x float> poison, <32 x i32> zeroinitializer\n"
    "  %%kr = mul i64 %%kv, 2304\n  %%bi = add i64 %%kr, %%r32\n"
    "  %%pb = getelementptr float, ptr %%b, i64 %%bi\n  %%y = load <32 x float>, ptr %%pb, align 4\n"
    "  %%m = fmul <32 x float> %%xs, %%y\n  %%s = fadd <32 x float> %%acc, %%m\n"
    "  %%kn = add i64 %%kv, 1\n  %%kd = icmp eq i64 %%kn, %d\n  br i1 %%kd, label %%fl, label %%k\n"
    "fl:\n  %%ci = add i64 %%ai0, %%r32\n"
    "  %%pc = getelementptr float, ptr %%c, i64 %%ci\n  store <32 x float> %%s, ptr %%pc, align 4\n"
    "  %%fn = add i64 %%fv, 1\n  %%e = icmp eq i64 %%fn, %d\n  br i1 %%e, label %%exit, label %%f\n"
    "exit:\n  ret void\n}\n";

static pa_profile *profile(int tiles, int k, pt_diag *d) {
  char ir[4096];
  snprintf(ir, sizeof ir, ir_fmt, tiles, tiles, k, 16 * tiles);
  return synthetic_profile_ir(ir, "body", d);
}

static double predict(const pa_profile *p, const ptg_target *t, bool llc, pt_diag *d) {
  return SYNTHETIC_SWITCH_SECONDS(p, t, llc_walks, llc, d);
}

/* The latency curve's ns at the point nearest `bytes` from below. */
static double curve_ns(const ptg_target *t, double bytes) {
  double ns = NAN;
  for (int i = 0; i < t->n_latency_curve && (double)t->latency_curve[i].bytes <= bytes; i++) ns = t->latency_curve[i].ns;
  return ns;
}

int main(void) {
  pt_diag d = {0};
  ptg_target *t = synthetic_test_target("zen4-epyc-2c", &d);
  if (!t) TEST_DONE();
  pp_options def = synthetic_defaults(), parsed = synthetic_preset("steady+bw+overlap+strides+lanes+sets+dirty+llcwalk");
  CHECK(def.llc_walks);
  CHECK(parsed.llc_walks && parsed.dirty_sets && parsed.strides);
  const ptg_strided_walk *walk = ptg_target_strided_walk(t, 8192, 4096);
  double ns = walk ? walk->ns_per_access.value : NAN, b_bytes = 72.0 * 768 * 128;
  double llc_ns = t->caches[t->n_caches - 1].latency_ns.value, mem_ns = t->memory.latency_ns.value;
  double share = (curve_ns(t, b_bytes) - llc_ns) / (mem_ns - llc_ns); /* the curve's point below: a lower bound */
  CHECK_MSG(ns > 0 && share > 0.3 && share <= 1, "Zen 4 file: strided walk %g ns at 8192 B, memory share %g at %g B", ns,
            share, b_bytes);

  pa_profile *far = profile(72, 768, &d), *near = profile(8, 768, &d), *short_sweep = profile(72, 24, &d);
  CHECK_MSG(far && near && short_sweep, "%s", d.msg);
  if (far && near && short_sweep) {
    double need = 16.0 * 72 * 768 * share * ns * 1e-9;
    double fl = predict(far, t, true, &d), fn = predict(far, t, false, &d);
    CHECK_MSG(fl >= 0.999 * need && fl > 1.1 * fn, "B back after 7.1 MB: %g s with +llcwalk (bound %g), %g without", fl, need, fn);
    double nl = predict(near, t, true, &d), nn = predict(near, t, false, &d);
    CHECK_MSG(fabs(nl - nn) <= 1e-9 * nn, "B back after 786 KB: %g vs %g", nl, nn);
    double sl = predict(short_sweep, t, true, &d), sn = predict(short_sweep, t, false, &d);
    CHECK_MSG(fabs(sl - sn) <= 1e-9 * sn, "a sweep of 24 pages: %g vs %g", sl, sn);
    /* no latency curve in the target: the switch changes nothing */
    t->n_latency_curve = 0;
    double zl = predict(far, t, true, &d);
    CHECK_MSG(fabs(zl - fn) <= 1e-9 * fn, "no latency curve: %g vs %g", zl, fn);
  }
  pa_profile_free(far), pa_profile_free(near), pa_profile_free(short_sweep);
  ptg_target_free(t);
  TEST_DONE();
}
