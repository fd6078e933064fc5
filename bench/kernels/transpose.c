/* portent bench analyze: B = A^T for an R x S matrix; the stores walk B with a stride of R
 * floats, so each store of a row of A touches a different line (2 x 1.5 MiB; R = 520, not
 * 512, whose 2 KiB stride would fold the walk onto a 32nd of the cache sets). */
#define R 520
#define S 776
void bench_transpose(float *restrict B, const float *restrict A) {
  for (int i = 0; i < R; i++)
    for (int j = 0; j < S; j++) B[j * R + i] = A[i * S + j];
}
