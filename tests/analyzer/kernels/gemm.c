/* C[M][N] = A[M][K] x B[K][N]: the textbook triple loop (i, j, k). */
#define M 40
#define N 36
#define K 44
void gemm(float *restrict C, const float *restrict A, const float *restrict B) {
  for (int i = 0; i < M; i++)
    for (int j = 0; j < N; j++) {
      float acc = 0;
      for (int k = 0; k < K; k++) acc += A[i * K + k] * B[k * N + j];
      C[i * N + j] = acc;
    }
}
