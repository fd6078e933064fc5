/* Random steps with random (often invalid) arguments: every one is applied or refused with
 * a message, never a crash; states that accept them still lower, and a sample runs and
 * matches the reference. */
#include <stdlib.h>
#include <string.h>

#include "compiler/compiler.h"
#include "test.h"

static pc_step random_step(pt_rng *r, const pc_state *s) {
  pc_step st;
  memset(&st, 0, sizeof st);
  st.kind = (pc_step_kind)pt_rng_range(r, PC_STEP_COUNT);
  int ns = s->n_stages;
  st.stage_id = (int)pt_rng_range(r, ns + 2) - 1;
  int nl = st.stage_id >= 0 && st.stage_id < ns ? s->stages[st.stage_id].n_leaves : 4;
  st.iter_id = (int)pt_rng_range(r, nl + 2) - 1;
  st.n_lengths = 1 + (int)pt_rng_range(r, 3);
  for (int i = 0; i < st.n_lengths; i++) st.lengths[i] = 1 + pt_rng_range(r, 9);
  st.inner_to_outer = pt_rng_range(r, 2);
  st.n_ids = (int)pt_rng_range(r, nl + 2);
  for (int i = 0; i < st.n_ids; i++) st.ids[i] = pt_rng_range(r, 4) ? i : (int)pt_rng_range(r, nl + 1);
  if (pt_rng_range(r, 2) && st.n_ids > 1) { /* a real permutation half of the time */
    int j = (int)pt_rng_range(r, st.n_ids), t = st.ids[0];
    st.ids[0] = st.ids[j], st.ids[j] = t;
  }
  st.annotation = (int)pt_rng_range(r, 5);
  static const char *pragmas[] = {"auto_unroll_max_step$16", "auto_unroll_max_step$512", "auto_unroll_max_step$-1", "x"};
  snprintf(st.pragma, sizeof st.pragma, "%s", pragmas[pt_rng_range(r, 4)]);
  snprintf(st.scope, sizeof st.scope, "%s", pt_rng_range(r, 2) ? "local" : "shared");
  st.target_stage_id = (int)pt_rng_range(r, ns + 1);
  st.target_iter_id = (int)pt_rng_range(r, 6);
  st.src_step_id = (int)pt_rng_range(r, s->n_steps + 2) - 1;
  st.n_split = (int)pt_rng_range(r, 4);
  st.level = (int)pt_rng_range(r, 3);
  st.factor_or_nparts = pt_rng_range(r, 2);
  st.factor = (int)pt_rng_range(r, 5);
  st.offset = (int)pt_rng_range(r, 5);
  st.factor_iter_id = (int)pt_rng_range(r, 4);
  return st;
}

int main(void) {
  const char *specs[] = {"matmul_add:16,8,12", "conv2d_nchw:1,3,6,6,4,3,3,1,1", "softmax:4,12", "dense:4,8,6,1,1"};
  int rounds = getenv("PORTENT_TEST_QUICK") ? 40 : 150, applied = 0, refused = 0, ran = 0;
  pc_measure_opts o;
  pc_measure_opts_default(&o);
  o.min_time_s = 0;
  o.min_repeats = 1;
  o.timeout_s = 20;
  pt_rng r = {99};
  for (size_t w = 0; w < PT_ARRAY_LEN(specs); w++) {
    pt_diag d = {0};
    pc_program *p = pc_workload_build(specs[w], &d);
    pc_reference *ref = p ? pc_reference_new(p, &o, &d) : NULL;
    CHECK_MSG(ref != NULL, "%s", d.msg);
    for (int round = 0; ref && round < rounds; round++) {
      pc_state *s = pc_state_new(p);
      for (int k = 0; k < 12; k++) {
        pc_step st = random_step(&r, s);
        pt_diag_clear(&d);
        int rc = pc_state_apply(s, &st, &d);
        if (rc == 0) applied++;
        else {
          refused++;
          CHECK_MSG(d.msg[0] != 0, "a refused %s step has no message", pc_step_code(st.kind));
        }
      }
      /* Whatever was accepted must lower to valid IR or be refused by lowering with a message. */
      pt_diag_clear(&d);
      pc_lower_opts lo = {0};
      pc_kernel *k = pc_lower(s, &lo, &d);
      CHECK_MSG(k != NULL || d.msg[0], "lowering failed without a message");
      if (k && round % 4 == 0) {
        pc_measure_result res;
        CHECK(pc_measure_kernel(k, s->prog, ref, &o, &res, &d) == 0);
        if (res.error != PC_MEASURE_OK) {
          char *js = pc_steps_to_json(s->n_steps, s->steps);
          fprintf(stderr, "%s: error %d %s\n  steps %s\n", specs[w], res.error, res.message, js);
          free(js);
        }
        CHECK(res.error == PC_MEASURE_OK);
        ran++;
      }
      pc_kernel_free(k);
      pc_state_free(s);
    }
    pc_reference_free(ref);
    pc_program_free(p);
  }
  printf("%d steps applied, %d refused, %d random states run and matched\n", applied, refused, ran);
  CHECK(applied > 100 && refused > 100 && ran > 20);
  TEST_DONE();
}
