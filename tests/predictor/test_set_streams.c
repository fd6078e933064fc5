/* +streams: twelve rows walked side by side (one float of each per iteration, 128 iterations a
 * sweep, 1000 sweeps), rows a page apart so their current lines share one L1 set position, six
 * of them read and stored back: on Zen 4's file the loop takes at least 1000 x 128 x 12 x the
 * target's set-stream figure for 12 streams, 6 read-modify-written (caches[0].set_streams),
 * slower than without the option. The same rows split over two objects (six loaded, six stored
 * back) cost the same when both objects are written (the harness starts both at
 * PC_OUTPUT_PAGE_OFFSET), and nothing when the loaded one is only read (it starts at
 * PC_INPUT_PAGE_OFFSET, other lines of the page: six rows in each position). Rows padded by a
 * line (twelve positions), eight rows (the ways) and a target without the figure are unchanged. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "test.h"
#include "synthetic.h"

/* for k < 1000: for j < 128: row r of obj(r) at j + r x row_floats; rows r < loaded summed,
 * the others read, added to the sum and stored back. One object (%c), or the summed rows in %a,
 * where the sum is stored at the end when a_written */
static pa_profile *profile(int rows, int loaded, int row_floats, bool two_objects, bool a_written, pt_diag *d) {
  char ir[16384], body[12288] = "";
  size_t at = 0;
  at += (size_t)snprintf(body + at, sizeof body - at, "  %%s0 = fadd float 0.0, 0.0\n");
  for (int r = 0; r < rows; r++) {
    const char *obj = two_objects && r < loaded ? "%a" : "%c";
    int row = two_objects && r >= loaded ? r - loaded : r;
    at += (size_t)snprintf(body + at, sizeof body - at,
                           "  %%i%d = add i64 %%jv, %d\n  %%p%d = getelementptr float, ptr %s, i64 %%i%d\n"
                           "  %%x%d = load float, ptr %%p%d\n",
                           r, row * row_floats, r, obj, r, r, r);
    if (r < loaded)
      at += (size_t)snprintf(body + at, sizeof body - at, "  %%s%d = fadd float %%s%d, %%x%d\n", r + 1, r, r);
    else
      at += (size_t)snprintf(body + at, sizeof body - at,
                             "  %%y%d = fadd float %%x%d, %%s%d\n  store float %%y%d, ptr %%p%d\n  %%s%d = fadd float %%s%d, 0.0\n",
                             r, r, r, r, r, r + 1, r);
  }
  snprintf(ir, sizeof ir,
           "define void @rows(ptr %%a, ptr %%c, ptr %%out) {\n"
           "entry:\n  br label %%k\n"
           "k:\n  %%kv = phi i64 [0, %%entry], [%%kn, %%kl]\n  br label %%j\n"
           "j:\n  %%jv = phi i64 [0, %%k], [%%jn, %%j]\n%s"
           "  store float %%s%d, ptr %s\n"
           "  %%jn = add i64 %%jv, 1\n  %%dj = icmp eq i64 %%jn, 128\n  br i1 %%dj, label %%kl, label %%j\n"
           "kl:\n  %%kn = add i64 %%kv, 1\n  %%dk = icmp eq i64 %%kn, 1000\n  br i1 %%dk, label %%exit, label %%k\n"
           "exit:\n  ret void\n}\n",
           body, rows, a_written ? "%a" : "%out");
  return synthetic_profile_ir(ir, "rows", d);
}

static double predict(const pa_profile *p, const ptg_target *t, bool streams, pt_diag *d) {
  return SYNTHETIC_SWITCH_SECONDS(p, t, set_streams, streams, d);
}

static bool unchanged(const pa_profile *p, const ptg_target *t, pt_diag *d, const char *what) {
  double on = predict(p, t, true, d), off = predict(p, t, false, d);
  CHECK_MSG(fabs(on - off) <= 1e-9 * off, "%s: %g s with +streams, %g without", what, on, off);
  return fabs(on - off) <= 1e-9 * off;
}

int main(void) {
  pt_diag d = {0};
  ptg_target *t = synthetic_test_target("zen4-epyc-2c", &d);
  if (!t) TEST_DONE();
  pp_options parsed = synthetic_preset("steady+bw+overlap+strides+lanes+sets+dirty+streams");
  CHECK(parsed.set_streams && parsed.dirty_sets && parsed.l1_sets);
  /* the figure: measured rows, interpolated between them, none without rows */
  const ptg_cache *l1 = &t->caches[0];
  CHECK(l1->n_set_streams > 0);
  double ns12 = ptg_target_set_stream_ns(t, 12, 6);
  CHECK_MSG(ns12 > 0, "12 streams, 6 read-modify-write: %g ns", ns12);
  for (int i = 0; i < l1->n_set_streams; i++)
    if (l1->set_streams[i].streams == 12 && l1->set_streams[i].rmw_streams == 6)
      CHECK_MSG(fabs(ns12 - l1->set_streams[i].ns_per_access.value) < 1e-12, "a measured row is returned as it is: %g", ns12);
  double lo = ptg_target_set_stream_ns(t, 12, 0), hi = ptg_target_set_stream_ns(t, 12, 12), mid = ptg_target_set_stream_ns(t, 12, 3);
  CHECK_MSG(mid >= fmin(lo, ns12) - 1e-12 && mid <= fmax(lo, ns12) + 1e-12, "3 of 12 between 0 and 6: %g (%g, %g)", mid, lo, ns12);
  CHECK(hi > 0);
  CHECK(isnan(ptg_target_set_stream_ns(&(ptg_target){0}, 12, 6)));

  pa_profile *one = profile(12, 6, 1024, false, false, &d), *two = profile(12, 6, 1024, true, true, &d);
  pa_profile *read_only = profile(12, 6, 1024, true, false, &d);
  pa_profile *padded = profile(12, 6, 1040, false, false, &d), *eight = profile(8, 4, 1024, false, false, &d);
  CHECK_MSG(one && two && read_only && padded && eight, "%s", d.msg);
  if (one && two && read_only && padded && eight) {
    double need = 1000.0 * 128 * 12 * ns12 * 1e-9;
    double on = predict(one, t, true, &d), off = predict(one, t, false, &d);
    CHECK_MSG(on >= 0.999 * need && on > 1.3 * off, "12 rows in one position: %g s with +streams (bound %g), %g without", on,
              need, off);
    double on2 = predict(two, t, true, &d);
    CHECK_MSG(on2 >= 0.999 * need, "the rows over two written objects: %g s (bound %g)", on2, need);
    unchanged(read_only, t, &d, "the loaded rows in a read-only object");
    unchanged(padded, t, &d, "rows a line out of step");
    unchanged(eight, t, &d, "eight rows");
    t->caches[0].n_set_streams = 0; /* no figure in the target: the option changes nothing */
    unchanged(one, t, &d, "no figure");
  }
  pa_profile_free(one), pa_profile_free(two), pa_profile_free(read_only), pa_profile_free(padded), pa_profile_free(eight);
  ptg_target_free(t);
  TEST_DONE();
}
