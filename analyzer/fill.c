/* The instrumented run's argument data: pt_rng_next's draws after state s0, each computed from
 * its index (common.h), so the fill is a loop of independent multiplies and shifts. On hosts
 * with AVX-512 (64-bit vector multiplies and integer-to-double conversions) a second clone of
 * the same loop is vectorized: 3M floats in 1.2 ms instead of 4.1 (session 11's prototype);
 * the values are the same bits either way (integer arithmetic, one rounding each). */
#include "internal.h"

#define PA_DRAW(i) pt_rng_mix(s0 + ((uint64_t)(i) + 1) * PT_RNG_STEP)

#if defined(__x86_64__) && defined(__has_attribute)
#if __has_attribute(target_clones)
__attribute__((target_clones("arch=x86-64-v4", "default"))) /* elsewhere: the one loop */
#endif
#endif
void pa_fill_random(void *dst, pa_scalar_type t, int64_t count, uint64_t s0) {
  switch (t) { /* floats in [-1, 1); integers in [0, 100) so they are safe as small indices */
  case PA_T_F32:
    for (int64_t i = 0; i < count; i++) ((float *)dst)[i] = (float)(2 * pt_rng_unit(PA_DRAW(i)) - 1);
    break;
  case PA_T_F64:
    for (int64_t i = 0; i < count; i++) ((double *)dst)[i] = 2 * pt_rng_unit(PA_DRAW(i)) - 1;
    break;
  case PA_T_I8: for (int64_t i = 0; i < count; i++) ((int8_t *)dst)[i] = (int8_t)(PA_DRAW(i) % 100); break;
  case PA_T_I16: for (int64_t i = 0; i < count; i++) ((int16_t *)dst)[i] = (int16_t)(PA_DRAW(i) % 100); break;
  case PA_T_I32: for (int64_t i = 0; i < count; i++) ((int32_t *)dst)[i] = (int32_t)(PA_DRAW(i) % 100); break;
  case PA_T_I64: for (int64_t i = 0; i < count; i++) ((int64_t *)dst)[i] = (int64_t)(PA_DRAW(i) % 100); break;
  }
}
