/* Cache levels from synthetic latency curves (microbench/levels.c): a clean three-level
 * curve gives each level its plateau latency and an effective capacity near its size; a
 * curve whose last level holds nothing (a VM's shared L3 taken by other tenants) is marked as
 * having no plateau of its own instead of reporting memory latency as L3 latency; one
 * disturbed point neither ends a level early nor becomes its latency. */
#include <math.h>

#include "microbench/internal.h"
#include "test.h"

#define KiB 1024LL
#define MiB (1024 * KiB)

/* Caches 48 KiB / 1 MiB / 32 MiB and a curve of 4 points per doubling from 4 KiB to 128 MiB:
 * latency(bytes) gives the ns of each point. */
static ptg_target *curve(double (*latency)(int64_t), double *best, double *ghz) {
  ptg_target *t = ptg_target_new("synthetic");
  t->n_caches = 3;
  t->caches = pt_alloc(t->arena, 3 * sizeof *t->caches);
  int64_t sizes[3] = {48 * KiB, 1 * MiB, 32 * MiB};
  for (int k = 0; k < 3; k++) t->caches[k] = (ptg_cache){.level = k + 1, .size_bytes = sizes[k], .line_bytes = 64};
  t->latency_curve = pt_alloc(t->arena, 64 * sizeof *t->latency_curve);
  for (double s = 4096; s <= 128.0 * MiB * 1.0001 && t->n_latency_curve < 64; s *= pow(2, 0.25)) {
    int64_t b = ((int64_t)s / 64) * 64;
    int i = t->n_latency_curve++;
    t->latency_curve[i] = (ptg_latency_point){b, latency(b), 4 * latency(b)};
    best[i] = latency(b);
    ghz[i] = 4;
  }
  return t;
}

static double clean(int64_t b) { return b <= 40 * KiB ? 1.0 : b <= 900 * KiB ? 3.5 : b <= 24 * MiB ? 12.5 : 120; }
static double no_l3(int64_t b) { return b <= 40 * KiB ? 1.0 : b <= 900 * KiB ? 3.5 : 150; }
static double small_l3(int64_t b) { /* L3 holds 4 MiB of ours; a spike at 1.5 MiB */
  if (b > 1400 * KiB && b < 1600 * KiB) return 90;
  return b <= 40 * KiB ? 1.0 : b <= 900 * KiB ? 3.5 : b <= 4 * MiB ? 12.5 : 150;
}

static void fit_all(ptg_target *t, const double *best, const double *ghz, pmb_level_fit *f) {
  double below = 0, mem = pmb_curve_memory_ns(t);
  for (int k = 0; k < 3; k++) {
    f[k] = pmb_fit_level(t, k, best, ghz, below, mem);
    if (f[k].idx >= 0) below = f[k].ns;
  }
}

int main(void) {
  double best[64], ghz[64];
  pmb_level_fit f[3];

  ptg_target *t = curve(clean, best, ghz);
  CHECK(fabs(pmb_curve_memory_ns(t) - 120) < 1e-9);
  fit_all(t, best, ghz, f);
  CHECK_MSG(fabs(f[0].ns - 1.0) < 1e-9 && fabs(f[1].ns - 3.5) < 1e-9 && fabs(f[2].ns - 12.5) < 1e-9,
            "levels %g %g %g ns", f[0].ns, f[1].ns, f[2].ns);
  CHECK(f[0].own_plateau && f[1].own_plateau && f[2].own_plateau);
  CHECK(fabs(f[2].ns * f[2].ghz - 50) < 1e-9); /* cycles at the clock of the chosen point */
  int64_t l3 = pmb_effective_bytes(t, best, 512 * KiB, 12.5, 120);
  CHECK_MSG(l3 > 16 * MiB && l3 <= 24 * MiB, "clean L3 effective %lld", (long long)l3);
  int64_t l2 = pmb_effective_bytes(t, best, 24 * KiB, 3.5, 12.5);
  CHECK_MSG(l2 > 512 * KiB && l2 <= 900 * KiB, "L2 effective %lld", (long long)l2);
  ptg_target_free(t);

  t = curve(no_l3, best, ghz);
  fit_all(t, best, ghz, f);
  CHECK(f[1].own_plateau && !f[2].own_plateau);
  CHECK_MSG(fabs(f[2].ns - 150) < 1e-9, "no-plateau L3 %g ns", f[2].ns);
  ptg_target_free(t);

  t = curve(small_l3, best, ghz);
  fit_all(t, best, ghz, f);
  CHECK_MSG(f[2].own_plateau && fabs(f[2].ns - 12.5) < 1e-9, "small L3 %g ns", f[2].ns);
  l3 = pmb_effective_bytes(t, best, 512 * KiB, 12.5, 150);
  CHECK_MSG(l3 > 3 * MiB && l3 <= 4 * MiB, "small L3 effective %lld (the spike must not end it)", (long long)l3);
  ptg_target_free(t);
  TEST_DONE();
}
