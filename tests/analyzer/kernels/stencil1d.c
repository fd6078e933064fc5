/* A 3-point 1-d stencil over n elements (n is a run-time argument: no static trip count). */
void stencil1d(float *restrict b, const float *restrict a, int n) {
  for (int i = 1; i < n - 1; i++) b[i] = (a[i - 1] + a[i] + a[i + 1]) * (1.0f / 3);
}
