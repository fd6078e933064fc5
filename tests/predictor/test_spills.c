/* +regs (in the default since session 19): a k loop carrying R accumulators <32 x float> (a
 * matmul's register tile written for 32 zmm registers). On the Zen 3 file (16 ymm registers,
 * cpu.spill_update_cycles measured) R = 8 needs 32 registers: the loop takes at least its 32
 * ymm updates a k iteration at the figure, several times what it takes without the switch; R = 2
 * (8 registers and the tile's 5 temporaries fit) is unchanged, as is every tile on the Zen 4
 * file (32 registers, no figure) and on Zen 3 with the figure taken away. A tile of <14 x float>
 * accumulators lives lane by lane: 14 reloads and stores an iteration per accumulator besides
 * its ymm updates. */
#include <math.h>
#include <stdio.h>

#include "test.h"
#include "synthetic.h"

#define K 512

/* for k < K: acc_r += broadcast(a[r * K + k]) * b[k * 32 .. +lanes] for r < rows */
static pa_profile *tile(int rows, int lanes, pt_diag *d) {
  char ir[16384];
  int n = snprintf(ir, sizeof ir, "define void @body(ptr %%a, ptr %%b, ptr %%c) {\nentry:\n  br label %%k\nk:\n"
                                  "  %%kv = phi i64 [0, %%entry], [%%kn, %%k]\n");
  for (int r = 0; r < rows; r++)
    n += snprintf(ir + n, sizeof ir - (size_t)n, "  %%acc%d = phi <%d x float> [zeroinitializer, %%entry], [%%s%d, %%k]\n", r,
                  lanes, r);
  n += snprintf(ir + n, sizeof ir - (size_t)n,
                "  %%bi = mul i64 %%kv, 32\n  %%pb = getelementptr float, ptr %%b, i64 %%bi\n"
                "  %%y = load <%d x float>, ptr %%pb, align 4\n", lanes);
  for (int r = 0; r < rows; r++)
    n += snprintf(ir + n, sizeof ir - (size_t)n,
                  "  %%ai%d = add i64 %%kv, %d\n  %%pa%d = getelementptr float, ptr %%a, i64 %%ai%d\n"
                  "  %%x%d = load float, ptr %%pa%d\n  %%xi%d = insertelement <%d x float> poison, float %%x%d, i64 0\n"
                  "  %%xs%d = shufflevector <%d x float> %%xi%d, <%d x float> poison, <%d x i32> zeroinitializer\n"
                  "  %%m%d = fmul <%d x float> %%xs%d, %%y\n  %%s%d = fadd <%d x float> %%acc%d, %%m%d\n",
                  r, r * K, r, r, r, r, r, lanes, r, r, lanes, r, lanes, lanes, r, lanes, r, r, lanes, r, r);
  n += snprintf(ir + n, sizeof ir - (size_t)n, "  %%kn = add i64 %%kv, 1\n  %%kd = icmp eq i64 %%kn, %d\n"
                                               "  br i1 %%kd, label %%exit, label %%k\nexit:\n", K);
  for (int r = 0; r < rows; r++)
    n += snprintf(ir + n, sizeof ir - (size_t)n,
                  "  %%pc%d = getelementptr float, ptr %%c, i64 %d\n  store <%d x float> %%s%d, ptr %%pc%d, align 4\n", r,
                  r * 32, lanes, r, r);
  snprintf(ir + n, sizeof ir - (size_t)n, "  ret void\n}\n");
  return synthetic_profile_ir(ir, "body", d);
}

static double predict(const pa_profile *p, const ptg_target *t, bool regs, pt_diag *d) {
  return SYNTHETIC_SWITCH_SECONDS(p, t, spills, regs, d);
}

int main(void) {
  pt_diag d = {0};
  ptg_target *z3 = synthetic_shipped_target("zen3-epyc-2c", &d), *z4 = synthetic_shipped_target("zen4-epyc-2c", &d);
  CHECK_MSG(z3 && z4, "%s", d.msg);
  if (!z3 || !z4) TEST_DONE();
  pp_options def = synthetic_defaults(), parsed = synthetic_preset("steady+bw+llcwalk+regs");
  CHECK(def.spills);
  CHECK(parsed.spills && parsed.llc_walks);
  CHECK(ptg_target_vector_registers(z3) == 16 && ptg_target_vector_registers(z4) == 32);
  double per_update = z3->spill_update_cycles.value, ghz = z3->frequency_ghz.value;
  CHECK_MSG(per_update > 0.5 && per_update < 20, "zen3 spill_update_cycles %g", per_update);

  pa_profile *big = tile(8, 32, &d), *small = tile(2, 32, &d), *odd = tile(2, 14, &d);
  CHECK_MSG(big && small && odd, "%s", d.msg);
  if (big && small && odd) {
    /* 8 accumulators x 4 ymm = 32 registers: 32 ymm updates a k iteration, each at the figure */
    double with = predict(big, z3, true, &d), without = predict(big, z3, false, &d);
    double floor_s = K * 32 * per_update / (ghz * 1e9);
    fprintf(stderr, "8 x <32 x float> on zen3: %g s with +regs (floor %g), %g without\n", with, floor_s, without);
    CHECK_MSG(with >= 0.999 * floor_s && with > 2 * without, "%g s with +regs (floor %g), %g without", with, floor_s,
              without);
    /* 2 accumulators: 8 registers and the tile's temporaries fit */
    CHECK(predict(small, z3, true, &d) == predict(small, z3, false, &d));
    /* 32 zmm registers hold 8 x 2; the Zen 4 file has no figure anyway */
    CHECK(predict(big, z4, true, &d) == predict(big, z4, false, &d));
    /* lane by lane: 2 x 14 = 28 scalar registers; updates: 2 x 2 ymm fadds + 2 x 14 lanes */
    double odd_with = predict(odd, z3, true, &d), odd_floor = K * (4 + 28) * per_update / (ghz * 1e9);
    CHECK_MSG(odd_with >= 0.999 * odd_floor, "<14 x float>: %g s against the floor %g", odd_with, odd_floor);
    /* without the figure, the switch changes nothing */
    z3->spill_update_cycles.value = NAN;
    CHECK(predict(big, z3, true, &d) == without);
  }
  pa_profile_free(big), pa_profile_free(small), pa_profile_free(odd);
  ptg_target_free(z3), ptg_target_free(z4);
  TEST_DONE();
}
