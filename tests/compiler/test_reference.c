/* The reference itself, checked against loops written by hand in C: matmul, a padded
 * strided conv2d, max pooling and softmax on the seeded inputs. */
#include <math.h>

#include "compiler/compiler.h"
#include "test.h"

static const pc_reference *make(const char *spec, pc_program **p) {
  pt_diag d = {0};
  pc_measure_opts o;
  pc_measure_opts_default(&o);
  *p = pc_workload_build(spec, &d);
  CHECK_MSG(*p != NULL, "%s", d.msg);
  pc_reference *r = *p ? pc_reference_new(*p, &o, &d) : NULL;
  CHECK_MSG(r != NULL, "%s", d.msg);
  return r;
}

static bool close_to(double got, double want) { return fabs(got - want) <= 1e-4 * (1 + fabs(want)); }

int main(void) {
  pc_program *p;
  const pc_reference *r = make("matmul:5,7,3", &p);
  if (r) {
    const float *A = pc_reference_data(r, pc_program_find(p, "A")), *B = pc_reference_data(r, pc_program_find(p, "B"));
    const float *C = pc_reference_data(r, pc_program_find(p, "C"));
    for (int i = 0; i < 5; i++)
      for (int j = 0; j < 3; j++) {
        double s = 0;
        for (int k = 0; k < 7; k++) s += (double)A[i * 7 + k] * B[k * 3 + j];
        CHECK_MSG(close_to(C[i * 3 + j], s), "C[%d,%d] = %g, want %g", i, j, C[i * 3 + j], s);
      }
    pc_reference_free((pc_reference *)r);
    pc_program_free(p);
  }
  /* conv2d NCHW, C=2 H=W=6 K=3 3x3 stride 2 pad 1 -> 3x3 output */
  r = make("conv2d_nchw:1,2,6,6,3,3,3,2,1", &p);
  if (r) {
    const float *X = pc_reference_data(r, pc_program_find(p, "data")), *W = pc_reference_data(r, pc_program_find(p, "kernel"));
    const float *Y = pc_reference_data(r, pc_program_find(p, "conv2d_nchw"));
    for (int k = 0; k < 3; k++)
      for (int y = 0; y < 3; y++)
        for (int x = 0; x < 3; x++) {
          double s = 0;
          for (int c = 0; c < 2; c++)
            for (int ry = 0; ry < 3; ry++)
              for (int rx = 0; rx < 3; rx++) {
                int h = y * 2 + ry - 1, w = x * 2 + rx - 1;
                if (h >= 0 && h < 6 && w >= 0 && w < 6) s += (double)X[(c * 6 + h) * 6 + w] * W[((k * 2 + c) * 3 + ry) * 3 + rx];
              }
          CHECK_MSG(close_to(Y[(k * 3 + y) * 3 + x], s), "conv[%d,%d,%d] = %g, want %g", k, y, x, Y[(k * 3 + y) * 3 + x], s);
        }
    pc_reference_free((pc_reference *)r);
    pc_program_free(p);
  }
  /* max pool 3x3 stride 2 pad 1 on 1x1x5x5 -> 3x3 */
  r = make("max_pool2d:1,1,5,5,3,2,1", &p);
  if (r) {
    const float *X = pc_reference_data(r, pc_program_find(p, "data")), *Y = pc_reference_data(r, pc_program_find(p, "pool_max"));
    for (int y = 0; y < 3; y++)
      for (int x = 0; x < 3; x++) {
        double m = -INFINITY;
        for (int ry = 0; ry < 3; ry++)
          for (int rx = 0; rx < 3; rx++) {
            int h = y * 2 + ry - 1, w = x * 2 + rx - 1;
            if (h >= 0 && h < 5 && w >= 0 && w < 5) m = fmax(m, X[h * 5 + w]);
          }
        CHECK_MSG(close_to(Y[y * 3 + x], m), "pool[%d,%d] = %g, want %g", y, x, Y[y * 3 + x], m);
      }
    pc_reference_free((pc_reference *)r);
    pc_program_free(p);
  }
  r = make("softmax:3,10", &p);
  if (r) {
    const float *X = pc_reference_data(r, pc_program_find(p, "data")), *Y = pc_reference_data(r, pc_program_find(p, "T_softmax_norm"));
    for (int i = 0; i < 3; i++) {
      double mx = -INFINITY, sum = 0;
      for (int j = 0; j < 10; j++) mx = fmax(mx, X[i * 10 + j]);
      for (int j = 0; j < 10; j++) sum += exp(X[i * 10 + j] - mx);
      for (int j = 0; j < 10; j++) CHECK(close_to(Y[i * 10 + j], exp(X[i * 10 + j] - mx) / sum));
    }
    pc_reference_free((pc_reference *)r);
    pc_program_free(p);
  }
  TEST_DONE();
}
