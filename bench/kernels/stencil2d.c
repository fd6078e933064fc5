/* portent bench analyze: a 9-point (3 x 3 box) 2-d stencil, one sweep over an N x N grid
 * (2 x 1 MiB: each output row reads three input rows). */
#define N 512
void bench_stencil2d(float *restrict out, const float *restrict in) {
  for (int i = 1; i < N - 1; i++)
    for (int j = 1; j < N - 1; j++) {
      float s = 0;
      for (int di = -1; di <= 1; di++)
        for (int dj = -1; dj <= 1; dj++) s += in[(i + di) * N + j + dj];
      out[i * N + j] = s * (1.0f / 9);
    }
}
