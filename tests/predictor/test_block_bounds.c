/* The bound each block's breakdown names: issue (its uops over the issue width), unit (one
 * execution-unit class's pipes, named), latency (a dependence chain or recurrence) and memory
 * (loads waiting on misses), for loop bodies on the synthetic target (issue 4; "fp" 2 pipes,
 * add latency 4; "ld" 2 pipes; DRAM 200 cycles). The program's bound is its one block's. The
 * bandwidth bound is a function's: test_bandwidth. */
#include "predictor/synthetic.h"
#include "test.h"

/* Predicts the one-loop profile under preset and checks the block's cycles per iteration
 * (within 2%), its bound, the unit it names (NULL: none) and the program's bound. */
static void check_block(const char *what, const pa_profile *p, const ptg_target *t, const char *preset, double want,
                        pp_bound bound, const char *unit) {
  pt_diag d = {0};
  pp_options o = {.threads = 1};
  CHECK(pp_options_preset(&o, preset) == 0);
  pp_prediction *r = pp_predict_profile(p, t, &o, &d);
  CHECK_MSG(r, "%s: %s", what, d.msg);
  if (!r) return;
  const pp_block_pred *b = &r->blocks[0];
  CHECK_MSG(fabs(b->cycles - want) <= 0.02 * want, "%s: %g cycles per iteration, want %g", what, b->cycles, want);
  CHECK_MSG(b->bound == bound && r->bound == bound && r->functions[0].bound == bound, "%s: bound %s (program %s), want %s",
            what, pp_bound_name(b->bound), pp_bound_name(r->bound), pp_bound_name(bound));
  CHECK_MSG(unit ? b->unit && strcmp(b->unit, unit) == 0 : !b->unit, "%s: unit %s, want %s", what,
            b->unit ? b->unit : "none", unit ? unit : "none");
  pp_prediction_free(r);
}

int main(void) {
  ptg_target *t = synthetic_target(512, 4);
  pa_node nodes[17];
  pa_edge edges[16];
  synthetic_loop s;
  const pa_node br = {.op = PA_OP_OTHER, .opcode = "br", .elem = "void", .lanes = 1};

  /* issue: 16 independent i64 adds (no unit: the target lists none for them) and the branch,
   * 17 uops at 4 a cycle */
  for (int i = 0; i < 16; i++) nodes[i] = (pa_node){.op = PA_OP_ADD, .opcode = "add", .elem = "i64", .lanes = 1, .bits = 64};
  nodes[16] = br;
  pa_profile *p = synthetic_loop_profile(&s, nodes, 17, NULL, 0, 10000, NULL);
  check_block("issue", p, t, "steady", 17 / 4.0, PP_BOUND_ISSUE, NULL);

  /* unit: 16 independent <16 x float> multiplies, a cycle each of one of fp's 2 pipes: 8 */
  for (int i = 0; i < 16; i++) nodes[i] = synthetic_node(PA_OP_MUL, "fmul", 16);
  check_block("unit", p, t, "steady", 8, PP_BOUND_UNIT, "fp");

  /* latency: an accumulator through 8 dependent adds an iteration (a header phi, each add on
   * the previous one, the last back to the phi): 8 x 4 cycles */
  nodes[0] = (pa_node){.op = PA_OP_OTHER, .opcode = "phi", .elem = "f32", .lanes = 16, .bits = 512};
  for (int i = 1; i <= 8; i++) nodes[i] = synthetic_node(PA_OP_ADD, "fadd", 16), edges[i - 1] = (pa_edge){i - 1, i, PA_EDGE_DATA};
  edges[8] = (pa_edge){8, 0, PA_EDGE_LOOP_CARRIED};
  nodes[9] = br;
  p = synthetic_loop_profile(&s, nodes, 10, edges, 9, 10000, NULL);
  check_block("latency", p, t, "steady", 32, PP_BOUND_LATENCY, NULL);

  /* memory: 16 independent loads, every line from DRAM, scheduled once as the patent does:
   * the block waits 200 cycles for them after issuing them over 8 (the load pipes) */
  int n = synthetic_line_loads(nodes, 16);
  pa_reuse_hist h = {0};
  h.cold = h.accesses = 160000;
  p = synthetic_loop_profile(&s, nodes, n, NULL, 0, 10000, &h);
  check_block("memory (patent)", p, t, "patent", 207, PP_BOUND_MEMORY, NULL);
  /* the steady state overlaps the misses of consecutive iterations: the load pipes bound it */
  check_block("memory (steady)", p, t, "steady", 8, PP_BOUND_UNIT, "ld");
  /* unless the misses in flight are bounded (Little's law: 16 x 196 / 10) */
  check_block("memory (steady+mlp)", p, t, "steady+mlp", 313.6, PP_BOUND_MEMORY, NULL);
  /* the same loads all L1 hits: issued over 8 cycles, the last ready 4 later; a makespan the
   * load pipes fill for less than 90% is bound by its latency, no longer by memory */
  p = synthetic_loop_profile(&s, nodes, n, NULL, 0, 10000, NULL);
  check_block("L1 hits (patent)", p, t, "patent", 11, PP_BOUND_LATENCY, NULL);
  ptg_target_free(t);
  TEST_DONE();
}
