/* The run's argument data (fill.c) against pt_rng_next drawn one by one: every element type,
 * counts that leave a vector tail, and a state that is not the first, bit for bit (the host's
 * clone: the AVX-512 one on such a CPU). */
#include <stdlib.h>
#include <string.h>

#include "analyzer/internal.h"
#include "test.h"

static void expected(void *dst, pa_scalar_type t, int64_t count, uint64_t s0) {
  pt_rng r = {s0};
  for (int64_t i = 0; i < count; i++) {
    uint64_t x = pt_rng_next(&r);
    double u = 2 * ((double)(x >> 11) / 9007199254740992.0) - 1;
    switch (t) {
    case PA_T_F32: ((float *)dst)[i] = (float)u; break;
    case PA_T_F64: ((double *)dst)[i] = u; break;
    case PA_T_I8: ((int8_t *)dst)[i] = (int8_t)(x % 100); break;
    case PA_T_I16: ((int16_t *)dst)[i] = (int16_t)(x % 100); break;
    case PA_T_I32: ((int32_t *)dst)[i] = (int32_t)(x % 100); break;
    case PA_T_I64: ((int64_t *)dst)[i] = (int64_t)(x % 100); break;
    }
  }
}

int main(void) {
  static const size_t bytes[] = {1, 2, 4, 8, 4, 8}; /* pa_scalar_type order */
  static const int64_t counts[] = {0, 1, 7, 33, 1000, 4099};
  static const uint64_t states[] = {1, 0x9e3779b97f4a7c15ULL * 42 + 3};
  for (int t = PA_T_I8; t <= PA_T_F64; t++)
    for (size_t c = 0; c < sizeof counts / sizeof *counts; c++)
      for (size_t s = 0; s < 2; s++) {
        int64_t n = counts[c];
        char *got = malloc(bytes[t] * (size_t)n + 1), *want = malloc(bytes[t] * (size_t)n + 1);
        pa_fill_random(got, (pa_scalar_type)t, n, states[s]);
        expected(want, (pa_scalar_type)t, n, states[s]);
        CHECK_MSG(memcmp(got, want, bytes[t] * (size_t)n) == 0, "type %d, count %lld, state %zu", t, (long long)n, s);
        free(got), free(want);
      }
  /* the floats span [-1, 1): not a constant fill */
  float f[64];
  pa_fill_random(f, PA_T_F32, 64, 7);
  int negative = 0;
  for (int i = 0; i < 64; i++) {
    negative += f[i] < 0;
    CHECK(f[i] >= -1 && f[i] < 1);
  }
  CHECK(negative > 8 && negative < 56);
  TEST_DONE();
}
