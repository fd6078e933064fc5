/* portent bench analyze: C[N][N] += A[N][N] x B[N][N], the textbook (i, j, k) nest; B is
 * walked down its columns. 3 x 156 KiB, between the D1 and LL sizes the bench simulates
 * (N = 200: the column walk spreads over every cache set; 192 would fold it onto 16). */
#define N 200
void bench_gemm(float *restrict C, const float *restrict A, const float *restrict B) {
  for (int i = 0; i < N; i++)
    for (int j = 0; j < N; j++) {
      float acc = C[i * N + j];
      for (int k = 0; k < N; k++) acc += A[i * N + k] * B[k * N + j];
      C[i * N + j] = acc;
    }
}
