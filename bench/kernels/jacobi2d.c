/* portent bench analyze: PolyBench jacobi-2d, T sweeps of a 5-point stencil on an N x N
 * grid, A -> B then B -> A (2 x 625 KiB). The analyzer tests compile this file too, smaller
 * (-DN=34 -DT=3, tests/analyzer/CMakeLists.txt). */
#ifndef N
#define N 400
#endif
#ifndef T
#define T 2
#endif
void bench_jacobi2d(float *restrict A, float *restrict B) {
  for (int t = 0; t < T; t++) {
    for (int i = 1; i < N - 1; i++)
      for (int j = 1; j < N - 1; j++)
        B[i * N + j] = 0.2f * (A[i * N + j] + A[i * N + j - 1] + A[i * N + j + 1] + A[(i + 1) * N + j] +
                               A[(i - 1) * N + j]);
    for (int i = 1; i < N - 1; i++)
      for (int j = 1; j < N - 1; j++)
        A[i * N + j] = 0.2f * (B[i * N + j] + B[i * N + j - 1] + B[i * N + j + 1] + B[(i + 1) * N + j] +
                               B[(i - 1) * N + j]);
  }
}
