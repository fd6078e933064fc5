/* +forward: a loop block whose load spans narrower stores of the same object earlier in the
 * iteration (a scratch pad written float by float, read two at a time) takes the target's
 * cpu.store_forward_fail_cycles more per execution, once however many such loads; a load
 * before the stores, a load of other bytes, a store as wide as the load, the option off or a
 * target without the figure: unchanged. */
#include "predictor/synthetic.h"
#include "test.h"

static int64_t in_place[1] = {0}, moving[1] = {28};

static pa_node mem_node(pa_opclass op, int lanes, int array, int64_t *strides, bool has_offset, int64_t offset) {
  pa_node n = synthetic_node(op, op == PA_OP_LOAD ? "load" : "store", lanes);
  n.n_strides = 1, n.strides = strides, n.array = array, n.has_offset = has_offset, n.offset = offset;
  return n;
}

/* One loop of 1000 iterations, one block: the given nodes and a branch. */
static double loop_cycles(ptg_target *t, const char *model, pa_node *nodes, int n) {
  pa_loop loop = {.header = 0, .parent = -1, .depth = 1, .n_blocks = 1, .blocks = (int[]){0}, .trip_count = 1000};
  pa_block b = {.name = "body", .count = 1000, .loop = 0, .n_nodes = n, .nodes = nodes};
  pa_function f = {.name = "k", .calls = 1, .threads = 1, .n_blocks = 1, .blocks = &b, .n_loops = 1, .loops = &loop};
  pa_profile p = {.version = PA_PROFILE_VERSION, .source = "fwd", .counts_source = "instrumented", .n_functions = 1,
                  .functions = &f};
  pp_options o = {.threads = 1};
  pt_diag d = {0};
  CHECK(pp_options_preset(&o, model) == 0);
  pp_prediction *r = pp_predict_profile(&p, t, &o, &d);
  CHECK_MSG(r, "%s", d.msg);
  double c = r ? r->cycles : -1;
  pp_prediction_free(r);
  return c;
}

int main(void) {
  ptg_target *t = synthetic_target(512, 1);
  t->store_forward_fail_cycles.value = 20;

  /* two floats stored in place, then read back as one <2 x float> and as two floats */
  pa_node pad[3] = {mem_node(PA_OP_STORE, 1, 1, in_place, true, 0), mem_node(PA_OP_STORE, 1, 1, in_place, true, 4),
                    mem_node(PA_OP_LOAD, 2, 1, in_place, false, 0)};
  double plain = loop_cycles(t, "steady+bw", pad, 3), waits = loop_cycles(t, "steady+bw+forward", pad, 3);
  CHECK_MSG(fabs(waits - plain - 20 * 1000) < 1e-6, "%g -> %g", plain, waits);
  /* four such loads in the iteration wait once */
  pa_node pad4[6] = {pad[0], pad[1], pad[2], pad[2], pad[2], pad[2]};
  double four = loop_cycles(t, "steady+bw+forward", pad4, 6), four_plain = loop_cycles(t, "steady+bw", pad4, 6);
  CHECK_MSG(fabs(four - four_plain - 20 * 1000) < 1e-6, "%g -> %g", four_plain, four);

  /* the load first: it reads what the previous iteration stored, long since in L1 */
  pa_node before[3] = {pad[2], pad[0], pad[1]};
  CHECK(loop_cycles(t, "steady+bw+forward", before, 3) == loop_cycles(t, "steady+bw", before, 3));
  /* scalar loads of the same floats are forwarded */
  pa_node narrow[4] = {pad[0], pad[1], mem_node(PA_OP_LOAD, 1, 1, in_place, true, 0), mem_node(PA_OP_LOAD, 1, 1, in_place, true, 4)};
  CHECK(loop_cycles(t, "steady+bw+forward", narrow, 4) == loop_cycles(t, "steady+bw", narrow, 4));
  /* a walk (28 bytes an iteration) whose 16-byte load reads bytes 40..55, past the stores' 0..7 */
  pa_node apart[3] = {mem_node(PA_OP_STORE, 1, 1, moving, true, 0), mem_node(PA_OP_STORE, 1, 1, moving, true, 4),
                      mem_node(PA_OP_LOAD, 4, 1, moving, true, 40)};
  CHECK(loop_cycles(t, "steady+bw+forward", apart, 3) == loop_cycles(t, "steady+bw", apart, 3));
  /* ... and over them (bytes 0..15): it waits */
  apart[2].offset = 0;
  CHECK(loop_cycles(t, "steady+bw+forward", apart, 3) > loop_cycles(t, "steady+bw", apart, 3) + 19000);
  /* another object: no forwarding to fail */
  pad[2].array = 2;
  CHECK(loop_cycles(t, "steady+bw+forward", pad, 3) == loop_cycles(t, "steady+bw", pad, 3));
  pad[2].array = 1;

  /* a target that has not measured it */
  t->store_forward_fail_cycles.value = NAN;
  CHECK(loop_cycles(t, "steady+bw+forward", pad, 3) == plain);
  ptg_target_free(t);
  TEST_DONE();
}
