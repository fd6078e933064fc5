/* +cmpbr and +fold: on an x86 target an integer compare whose only user is the block's branch,
 * and a load whose only user is an arithmetic op of its width (one per op), take no issue slot;
 * their units still work. The rows schedule mm1024's scalar j loop (two loads, fmul + fadd
 * contracted into one FMA, a store, the induction add, icmp, br: 7 slots) on a 4-wide target
 * whose store unit takes 1 cycle: 7/4 cycles an iteration, 6/4 with the compare fused, and with
 * one load folded 5/4, where the store unit binds too. The same loop on an aarch64 target, a
 * compare that a select also uses, and a load with two users: unchanged. */
#include "predictor/synthetic.h"
#include "test.h"

enum { N = 11 };

/* phi, gep, load b, fmul, gep, load c, fadd, store, add, icmp, br */
static void j_loop(pa_node *nodes, pa_edge *edges, int *n_edges) {
  nodes[0] = synthetic_node(PA_OP_OTHER, "phi", 1);
  nodes[1] = synthetic_node(PA_OP_OTHER, "getelementptr", 1);
  nodes[2] = synthetic_node(PA_OP_LOAD, "load", 1);
  nodes[3] = synthetic_node(PA_OP_MUL, "fmul", 1);
  nodes[4] = synthetic_node(PA_OP_OTHER, "getelementptr", 1);
  nodes[5] = synthetic_node(PA_OP_LOAD, "load", 1);
  nodes[6] = synthetic_node(PA_OP_ADD, "fadd", 1);
  nodes[7] = synthetic_node(PA_OP_STORE, "store", 1);
  nodes[8] = synthetic_node(PA_OP_ADD, "add", 1);
  nodes[9] = synthetic_node(PA_OP_CMPSEL, "icmp", 1);
  nodes[10] = synthetic_node(PA_OP_OTHER, "br", 1);
  for (int i = 0; i < N; i++)
    if (i == 0 || i == 1 || i == 4 || i >= 8) nodes[i].elem = "i64", nodes[i].bits = 64;
  static const int pairs[][2] = {{0, 1}, {0, 4}, {0, 8}, {1, 2}, {4, 5}, {2, 3}, {3, 6},
                                 {5, 6}, {6, 7}, {4, 7}, {8, 9}, {9, 10}};
  int e = 0;
  for (size_t k = 0; k < sizeof pairs / sizeof pairs[0]; k++)
    edges[e++] = (pa_edge){pairs[k][0], pairs[k][1], PA_EDGE_DATA};
  edges[e++] = (pa_edge){8, 0, PA_EDGE_LOOP_CARRIED};
  *n_edges = e;
}

/* Steady-state cycles an iteration of the block under `model` on t. */
static double cycles(ptg_target *t, const char *model, pa_node *nodes, int n, pa_edge *edges, int n_edges) {
  pp_options o = {.threads = 1};
  CHECK(pp_options_preset(&o, model) == 0);
  pt_diag d = {0};
  pp_predictor *pp = pp_predictor_new(t, &o, &d);
  CHECK_MSG(pp, "%s", d.msg);
  if (!pp) return NAN;
  pa_block b = {.name = "j", .count = 1000, .loop = 0, .n_nodes = n, .nodes = nodes, .n_edges = n_edges, .edges = edges};
  pp_op ops[N + 1];
  pp_legalize_block(pp, &b, 4, ops);
  double c = pp_schedule(pp, n, ops, n_edges, edges, true);
  pp_predictor_free(pp);
  return c;
}

int main(void) {
  ptg_target *t = synthetic_target(512, 1);
  t->isa = "x86_64";
  pa_node nodes[N + 1];
  pa_edge edges[32];
  int n_edges;
  j_loop(nodes, edges, &n_edges);
  double plain = cycles(t, "steady", nodes, N, edges, n_edges), cmpbr = cycles(t, "steady+cmpbr", nodes, N, edges, n_edges),
         both = cycles(t, "steady+cmpbr+fold", nodes, N, edges, n_edges),
         fold = cycles(t, "steady+fold", nodes, N, edges, n_edges);
  CHECK_MSG(fabs(plain - 7 / 4.0) < 0.03, "7 slots: %g cycles", plain);
  CHECK_MSG(fabs(cmpbr - 6 / 4.0) < 0.03, "compare fused: %g cycles", cmpbr);
  CHECK_MSG(fabs(both - 5 / 4.0) < 0.03, "and one load folded: %g cycles", both);
  CHECK_MSG(fabs(fold - 6 / 4.0) < 0.03, "one load folded: %g cycles", fold);

  /* aarch64: no memory operands, and the target files give no fusion */
  t->isa = "aarch64";
  double arm = cycles(t, "steady+cmpbr+fold", nodes, N, edges, n_edges);
  CHECK_MSG(fabs(arm - plain) < 1e-9, "aarch64: %g against %g", arm, plain);
  t->isa = "x86_64";

  /* the compare also feeds a select: it stays an instruction of its own */
  nodes[N] = synthetic_node(PA_OP_CMPSEL, "select", 1);
  nodes[N].elem = "i64", nodes[N].bits = 64;
  edges[n_edges] = (pa_edge){9, N, PA_EDGE_DATA};
  double two_users = cycles(t, "steady+cmpbr", nodes, N + 1, edges, n_edges + 1),
         two_plain = cycles(t, "steady", nodes, N + 1, edges, n_edges + 1);
  CHECK_MSG(fabs(two_users - two_plain) < 1e-9, "compare with two users: %g against %g", two_users, two_plain);

  /* load c also stored elsewhere (two users): only load b, through the contracted fmul, folds */
  j_loop(nodes, edges, &n_edges);
  edges[n_edges++] = (pa_edge){5, 7, PA_EDGE_DATA};
  double shared = cycles(t, "steady+fold", nodes, N, edges, n_edges);
  CHECK_MSG(fabs(shared - 6 / 4.0) < 0.03, "one load with one user folded: %g cycles", shared);
  /* ... and with load b's value used twice too, none */
  edges[n_edges++] = (pa_edge){2, 7, PA_EDGE_DATA};
  double none = cycles(t, "steady+fold", nodes, N, edges, n_edges);
  CHECK_MSG(fabs(none - plain) < 0.03, "no load with one user: %g against %g", none, plain);

  ptg_target_free(t);
  TEST_DONE();
}
