/* B = A^T for a R x S matrix: the stores walk B with stride R (a transposed access). */
#define R 48
#define S 56
void transpose(float *restrict B, const float *restrict A) {
  for (int i = 0; i < R; i++)
    for (int j = 0; j < S; j++) B[j * R + i] = A[i * S + j];
}
