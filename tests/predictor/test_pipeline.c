/* Pipeline simulator on hand-built task graphs: a dependent chain costs N x latency,
 * independent operations are bounded by throughput, a loop-carried recurrence bounds a loop
 * body's steady state. */
#include "predictor/synthetic.h"
#include "test.h"

#define N 16

int main(void) {
  pt_diag d = {0};
  ptg_target *t = synthetic_target(512, 4);
  pp_options o = {.threads = 1};
  pp_predictor *pp = pp_predictor_new(t, &o, &d);
  CHECK(pp);
  pa_node nodes[N];
  pp_op ops[N];
  pa_edge edges[N];
  for (int i = 0; i < N; i++) nodes[i] = synthetic_node(PA_OP_ADD, "fadd", 16), ops[i] = pp_legalize_node(pp, &nodes[i]);
  CHECK(ops[0].parts == 1 && ops[0].latency == 4);

  /* a dependent chain of N adds: N x latency */
  for (int i = 0; i + 1 < N; i++) edges[i] = (pa_edge){i, i + 1, PA_EDGE_DATA};
  double chain = pp_schedule(pp, N, ops, N - 1, edges, false);
  CHECK_MSG(fabs(chain - N * 4.0) < 1.0, "chain %g, want ~%d", chain, N * 4);

  /* independent adds: 2 pipes at 0.5 cycles each -> N x 0.5 plus one latency */
  double indep = pp_schedule(pp, N, ops, 0, edges, false);
  CHECK_MSG(indep >= N * 0.5 && indep <= N * 0.5 + 4 + 0.5, "independent %g", indep);
  /* repeated as a loop body, the steady state is the throughput bound: N x 0.5 per iteration */
  double thr = pp_schedule(pp, N, ops, 0, edges, true);
  CHECK_MSG(fabs(thr - N * 0.5) < 0.3, "throughput-bound loop %g, want %g", thr, N * 0.5);

  /* a loop body of N independent adds plus one accumulator recurrence of 4 dependent adds:
   * steady state >= 4 x latency = 16 cycles per iteration, above the 8-cycle resource bound */
  pa_edge rec[5] = {{0, 1, PA_EDGE_DATA}, {1, 2, PA_EDGE_DATA}, {2, 3, PA_EDGE_DATA}, {3, 0, PA_EDGE_LOOP_CARRIED}};
  double loop = pp_schedule(pp, N, ops, 4, rec, true);
  CHECK_MSG(fabs(loop - 16) < 0.5, "recurrence-bound loop %g, want 16", loop);
  /* without the loop-carried edge the same body is resource bound */
  double open = pp_schedule(pp, N, ops, 3, rec, true);
  CHECK_MSG(fabs(open - 8) < 0.5, "open loop %g, want 8", open);

  /* a body of 512 chained adds and no recurrence: the next copy's first add dispatches only
   * when the adds more than a reorder window (224 uops on a target of unknown
   * microarchitecture) older have retired, so copies overlap by at most 224 of the 2048-cycle
   * chain: >= (512 - 224) x 4 = 1152 cycles per iteration, far above the 128-cycle resources */
  {
    enum { L = 512 };
    static pp_op big[L];
    static pa_edge bige[L];
    for (int i = 0; i < L; i++) big[i] = ops[0];
    for (int i = 0; i + 1 < L; i++) bige[i] = (pa_edge){i, i + 1, PA_EDGE_DATA};
    double windowed = pp_schedule(pp, L, big, L - 1, bige, true);
    CHECK_MSG(windowed >= 1152 - 8 && windowed <= 2048 + 8, "512-add chain body %g per iteration, want 1152-2048",
              windowed);
  }

  /* a body of 100 chained adds (400 cycles) and 100 independent integer adds: 200 uops, issue
   * bound at 50 cycles, just under the 224-uop window. The first two copies start one dispatch
   * time (50 cycles) apart, which looks like the issue bound; the third waits for the first to
   * retire, so about two copies share each 400-cycle chain: ~200 cycles per iteration, not 50 */
  {
    enum { L = 200 };
    static pp_op body[L];
    static pa_edge be[L];
    pa_node ia = {.op = PA_OP_ADD, .opcode = "add", .elem = "i64", .lanes = 1, .bits = 64};
    for (int i = 0; i < L; i++) body[i] = i < L / 2 ? ops[0] : pp_legalize_node(pp, &ia);
    for (int i = 0; i + 1 < L / 2; i++) be[i] = (pa_edge){i, i + 1, PA_EDGE_DATA};
    double wide = pp_schedule(pp, L, body, L / 2 - 1, be, true);
    CHECK_MSG(wide >= 150 && wide <= 400 + 8, "chain body under the window %g per iteration, want 150-400", wide);
  }

  /* a body 7% above its resource bound (15 adds: 7.5 cycles; a 2-add recurrence: 8) keeps the
   * recurrence: the early stop at the resource bound must not take it */
  pa_edge rec2[2] = {{0, 1, PA_EDGE_DATA}, {1, 0, PA_EDGE_LOOP_CARRIED}};
  double tight = pp_schedule(pp, N - 1, ops, 2, rec2, true);
  CHECK_MSG(fabs(tight - 8) < 0.2, "recurrence just above the resource bound %g, want 8", tight);
  /* 13 independent adds: 6.5 cycles per iteration, in a whole-cycle timeline (6, 7, 6, ...) */
  double half_cycles = pp_schedule(pp, 13, ops, 0, edges, true);
  CHECK_MSG(fabs(half_cycles - 6.5) < 0.1, "13 adds %g, want 6.5", half_cycles);

  /* the issue width bounds cheap ops: 16 integer adds at width 4 -> 4 cycles per iteration */
  pa_node in = {.op = PA_OP_ADD, .opcode = "add", .elem = "i64", .lanes = 1, .bits = 64};
  for (int i = 0; i < N; i++) ops[i] = pp_legalize_node(pp, &in);
  double issue = pp_schedule(pp, N, ops, 0, edges, true);
  CHECK_MSG(fabs(issue - 4) < 0.3, "issue-bound loop %g, want 4", issue);

  pp_predictor_free(pp);
  ptg_target_free(t);
  TEST_DONE();
}
