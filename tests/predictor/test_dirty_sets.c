/* +dirty: a column of c read, added to and stored back (c[i * 512 + j] += a[j], rows 2048 bytes
 * apart: 2 of Zen 4's 64 L1 sets) misses L1 on every access as a loaded column does, and each
 * fill also evicts a dirty line: on Zen 4's file it takes at least 512 x 512 x the target's
 * read-modify-write walk figure for 2 sets (set_walks[].rmw_ns_per_access), slower than +sets
 * alone prices it. The same column only loaded, a read-modify-write walk whose next loop moves
 * it a whole line (+far's: its next sweep falls in other sets), and a target without the
 * figure are unchanged. */
#include <math.h>
#include <stdio.h>

#include "test.h"
#include "synthetic.h"

/* for j < 512: for i < 512: c[i * 512 + j * COL] (+)= a[j]; COL 1: the next j reuses the lines */
static const char *ir_fmt =
    "define void @walk(ptr %%a, ptr %%c) {\n"
    "entry:\n  br label %%j\n"
    "j:\n  %%jv = phi i64 [0, %%entry], [%%jn, %%jl]\n  %%ap = getelementptr float, ptr %%a, i64 %%jv\n"
    "  %%av = load float, ptr %%ap\n  %%col = mul i64 %%jv, %d\n  br label %%i\n"
    "i:\n  %%iv = phi i64 [0, %%j], [%%in, %%i]\n"
    "  %%row = mul i64 %%iv, 512\n  %%idx = add i64 %%row, %%col\n"
    "  %%p = getelementptr float, ptr %%c, i64 %%idx\n  %%x = load float, ptr %%p\n"
    "%s"
    "  %%in = add i64 %%iv, 1\n  %%d = icmp eq i64 %%in, 512\n"
    "  br i1 %%d, label %%jl, label %%i\n"
    "jl:\n  %%jn = add i64 %%jv, 1\n  %%e = icmp eq i64 %%jn, 512\n  br i1 %%e, label %%exit, label %%j\n"
    "exit:\n  ret void\n}\n";
static const char *rmw = "  %s = fadd float %x, %av\n  store float %s, ptr %p\n";
static const char *load_only = "  %s = fadd float %x, %av\n  store float %s, ptr %ap\n";

static pa_profile *profile(int col, const char *body, pt_diag *d) {
  char ir[4096];
  snprintf(ir, sizeof ir, ir_fmt, col, body);
  return synthetic_profile_ir(ir, "walk", d);
}

static double predict(const pa_profile *p, const ptg_target *t, bool dirty, pt_diag *d) {
  return SYNTHETIC_SWITCH_SECONDS(p, t, dirty_sets, dirty, d);
}

int main(void) {
  pt_diag d = {0};
  ptg_target *t = synthetic_test_target("zen4-epyc-2c", &d);
  if (!t) TEST_DONE();
  pp_options def = synthetic_defaults(), parsed = synthetic_preset("steady+bw+overlap+strides+lanes+sets+forward+dirty");
  CHECK(def.dirty_sets && def.l1_sets);
  CHECK(parsed.dirty_sets && parsed.forward && parsed.l1_sets);
  double rmw2 = ptg_target_set_rmw_ns(t, 2);
  CHECK_MSG(rmw2 > t->caches[0].set_walks[0].ns_per_access.value / 4 && rmw2 > 0, "rmw figure for 2 sets: %g ns", rmw2);
  CHECK(isnan(ptg_target_set_rmw_ns(&(ptg_target){0}, 2)));

  pa_profile *col = profile(1, rmw, &d), *loads = profile(1, load_only, &d), *far = profile(16, rmw, &d);
  CHECK_MSG(col && loads && far, "%s", d.msg);
  if (col && loads && far) {
    double need = 512.0 * 512.0 * rmw2 * 1e-9;
    double cd = predict(col, t, true, &d), cn = predict(col, t, false, &d);
    CHECK_MSG(cd >= 0.999 * need && cd > 1.3 * cn, "read-modify-write column: %g s with +dirty (bound %g), %g without", cd,
              need, cn);
    double ld = predict(loads, t, true, &d), ln = predict(loads, t, false, &d);
    CHECK_MSG(fabs(ld - ln) <= 1e-9 * ln, "loaded column: %g vs %g", ld, ln);
    double fd = predict(far, t, true, &d), fn = predict(far, t, false, &d);
    CHECK_MSG(fabs(fd - fn) <= 1e-9 * fn, "walk moving a line per sweep: %g vs %g", fd, fn);
    /* no read-modify-write figures in the target: the option changes nothing */
    for (int i = 0; i < t->caches[0].n_set_walks; i++) t->caches[0].set_walks[i].rmw_ns_per_access.value = NAN;
    double cz = predict(col, t, true, &d);
    CHECK_MSG(fabs(cz - cn) <= 1e-9 * cn, "no figure: %g vs %g", cz, cn);
  }
  pa_profile_free(col), pa_profile_free(loads), pa_profile_free(far);
  ptg_target_free(t);
  TEST_DONE();
}
