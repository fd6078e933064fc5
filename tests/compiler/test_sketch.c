/* Sketch generation: the sketch counts Ansor's CPU rules give (matmul 3: cache_write fused at
 * levels 1 and 2, plain tiling; matmul_add 3 with the consumer fused instead), and for every
 * sketch of matmul, matmul_add, conv2d with padding, softmax and dense+relu, random
 * annotations that apply, lower, run and match the reference in the measuring child. */
#include <stdlib.h>
#include <string.h>

#include "compiler/compiler.h"
#include "test.h"

typedef struct {
  const char *spec;
  int min_sketches, max_sketches;
} family;

static const family families[] = {
    {"matmul:24,20,32", 3, 3},
    {"matmul_add:32,16,24", 3, 3},
    {"conv2d_nchw:1,4,9,9,8,3,3,1,1", 3, 3},
    {"softmax:6,40", 2, 9},
    {"dense:8,24,32,0,1", 3, 3},
};

static bool has_step(const pc_state *s, pc_step_kind k) {
  for (int i = 0; i < s->n_steps; i++)
    if (s->steps[i].kind == k) return true;
  return false;
}

int main(void) {
  int per_sketch = getenv("PORTENT_TEST_QUICK") ? 2 : 6;
  pc_measure_opts o;
  pc_measure_opts_default(&o);
  o.threads = 2;
  o.min_time_s = 0;
  o.min_repeats = 1;
  o.timeout_s = 20;
  pc_sketch_opts so;
  pc_sketch_opts_default(&so);
  so.vector_lanes = 8;
  int n_vectorized = 0, n_parallel = 0, n_total = 0;
  for (size_t f = 0; f < PT_ARRAY_LEN(families); f++) {
    pt_diag d = {0};
    pc_program *p = pc_workload_build(families[f].spec, &d);
    CHECK_MSG(p != NULL, "%s: %s", families[f].spec, d.msg);
    if (!p) continue;
    pc_sketches *sk = pc_sketches_generate(p, &so, &d);
    CHECK_MSG(sk != NULL, "%s: %s", families[f].spec, d.msg);
    if (!sk) {
      pc_program_free(p);
      continue;
    }
    int n = pc_sketches_count(sk);
    printf("%s: %d sketches\n", families[f].spec, n);
    for (int i = 0; i < n; i++) printf("  %d: %s\n", i, pc_sketch_describe(sk, i));
    CHECK_MSG(n >= families[f].min_sketches && n <= families[f].max_sketches, "%s: %d sketches", families[f].spec, n);
    pc_reference *ref = pc_reference_new(p, &o, &d);
    CHECK_MSG(ref != NULL, "%s: reference: %s", families[f].spec, d.msg);
    pt_rng rng = {99 + f};
    for (int i = 0; ref && i < n; i++) {
      for (int k = 0; k < per_sketch; k++) {
        pt_diag_clear(&d);
        pc_state *s = pc_sketch_sample(sk, i, &rng, &d);
        CHECK_MSG(s != NULL, "%s sketch %d: %s", families[f].spec, i, d.msg);
        if (!s) continue;
        pc_measure_result r;
        int rc = pc_measure(s, ref, &o, &r, &d);
        bool good = rc == 0 && r.error == PC_MEASURE_OK;
        if (!good) {
          char *js = pc_steps_to_json(s->n_steps, s->steps);
          fprintf(stderr, "%s sketch %d sample %d: error %d %s %s\n  %s\n", families[f].spec, i, k, r.error, r.message,
                  rc ? d.msg : "", js);
          free(js);
        }
        CHECK(good);
        n_total++;
        for (int st = 0; st < s->n_steps; st++) {
          if (s->steps[st].kind == PC_STEP_AN && s->steps[st].annotation == PC_ANN_PARALLEL) n_parallel++;
          if (s->steps[st].kind == PC_STEP_AN && s->steps[st].annotation == PC_ANN_VECTORIZE) n_vectorized++;
        }
        pc_state_free(s);
      }
    }
    /* The matmul_add sketches fuse the consumer as Ansor's record does: FSP + CA. */
    if (strncmp(families[f].spec, "matmul_add", 10) == 0) {
      bool fused = false;
      for (int i = 0; i < n; i++) fused = fused || (has_step(pc_sketch_state(sk, i), PC_STEP_FSP) && has_step(pc_sketch_state(sk, i), PC_STEP_CA));
      CHECK(fused);
    }
    if (strncmp(families[f].spec, "matmul:", 7) == 0) {
      bool chw = false;
      for (int i = 0; i < n; i++) chw = chw || has_step(pc_sketch_state(sk, i), PC_STEP_CHW);
      CHECK(chw);
    }
    if (strncmp(families[f].spec, "softmax", 7) == 0) {
      bool rf = false;
      for (int i = 0; i < n; i++) rf = rf || has_step(pc_sketch_state(sk, i), PC_STEP_RF);
      CHECK(rf);
    }
    pc_reference_free(ref);
    pc_sketches_free(sk);
    pc_program_free(p);
  }
  printf("%d samples, %d parallel and %d vectorized loops\n", n_total, n_parallel, n_vectorized);
  CHECK(n_parallel >= n_total);
  CHECK(n_vectorized > n_total / 2);
  TEST_DONE();
}
