/* Aggregation: total = sum of cost(BB) x ECount(BB); a parallel function's executions are
 * divided over the threads in whole chunks of its parallel loop (or as the profile's chunk
 * work falls on them), plus fork/join per call; an
 * accumulator carried across a loop's blocks bounds the loop (steady state). */
#include "predictor/synthetic.h"
#include "test.h"

int main(void) {
  pt_diag d = {0};
  ptg_target *t = synthetic_target(512, 4);
  t->n_runtime = 1;
  t->runtime = pt_alloc(t->arena, sizeof *t->runtime);
  t->runtime[0].threads = 4;
  t->runtime[0].fork_join_ns.value = 1000; /* 1 us */
  t->runtime[0].barrier_ns.value = NAN;

  /* one block of 8 dependent adds (32 cycles as a DAG) executed 1000 times, outside loops */
  pa_node nodes[8];
  pa_edge chain[7];
  for (int i = 0; i < 8; i++) nodes[i] = synthetic_node(PA_OP_ADD, "fadd", 16);
  for (int i = 0; i < 7; i++) chain[i] = (pa_edge){i, i + 1, PA_EDGE_DATA};
  pa_block b = {.name = "b", .count = 1000, .loop = -1, .n_nodes = 8, .nodes = nodes, .n_edges = 7, .edges = chain};
  pa_function f = {.name = "serial", .calls = 1, .threads = 1, .n_blocks = 1, .blocks = &b};
  pa_profile p = {.version = PA_PROFILE_VERSION, .source = "agg", .counts_source = "instrumented", .n_functions = 1,
                  .functions = &f};
  pp_options o = {.threads = 1};
  pp_prediction *r = pp_predict_profile(&p, t, &o, &d);
  CHECK_MSG(r && fabs(r->cycles - 32000) < 100, "cycles %g", r ? r->cycles : -1);
  CHECK(r && fabs(r->seconds - 32e-6) < 1e-7);
  pp_prediction_free(r);

  /* the same as a parallel body (KERNEL_par0) whose outer loop has 10 iterations: on 4
   * threads one thread runs ceil(10/4) = 3 of them, so 3/10 of the work, plus 1 us fork/join */
  pa_loop loop = {.header = 0, .parent = -1, .depth = 1, .n_blocks = 1, .trip_count = 10};
  b.count = 10, b.loop = 0;
  f.name = "k_par0", f.n_loops = 1, f.loops = &loop;
  loop.blocks = (int[]){0};
  o.threads = 4;
  r = pp_predict_profile(&p, t, &o, &d);
  CHECK_MSG(r && fabs(r->functions[0].work_fraction - 0.3) < 1e-9, "work %g", r ? r->functions[0].work_fraction : -1);
  CHECK_MSG(r && fabs(r->fork_join_seconds - 1e-6) < 1e-12, "fork/join %g", r ? r->fork_join_seconds : -1);
  pp_prediction_free(r);

  /* the profile says where the work falls (chunk_work, one part per iteration): only the first
   * 3 iterations pass a guard, all in the first thread's chunk, so it runs all of the work:
   * no faster than one thread (mm512 #12 of the saved sets) */
  double work[10] = {5, 5, 5, 0.01, 0.01, 0.01, 0.01, 0.01, 0.01, 0.01};
  f.chunk_iterations = 10, f.n_chunk_work = 10, f.chunk_work = work;
  r = pp_predict_profile(&p, t, &o, &d);
  CHECK_MSG(r && r->functions[0].work_fraction > 0.99, "first 3 iterations: work %g", r ? r->functions[0].work_fraction : -1);
  pp_prediction_free(r);
  /* the same work spread evenly: whole chunks again (3 of 10 iterations) */
  for (int i = 0; i < 10; i++) work[i] = 1;
  r = pp_predict_profile(&p, t, &o, &d);
  CHECK_MSG(r && fabs(r->functions[0].work_fraction - 0.3) < 1e-9, "even: work %g", r ? r->functions[0].work_fraction : -1);
  pp_prediction_free(r);
  /* parts coarser than the threads' chunks: 100 iterations in 4 parts, the work in the first
   * part only (iterations 0-24); thread 0 of 4 runs 0-24: all of it; of 8, 0-12: 13/25 of it */
  double coarse[4] = {1, 0, 0, 0};
  f.chunk_iterations = 100, f.n_chunk_work = 4, f.chunk_work = coarse;
  CHECK(fabs(pa_chunk_share(&f, 4) - 1) < 1e-12 && fabs(pa_chunk_share(&f, 8) - 13.0 / 25) < 1e-12);
  CHECK(pa_chunk_share(&f, 1) == 1);
  f.chunk_iterations = 0, f.n_chunk_work = 0, f.chunk_work = NULL;

  /* a two-block loop: the header holds the float accumulator phi, the body adds into it
   * (fmul -> fadd with the accumulator from the header: no in-block edge). Each block alone is
   * throughput bound (< 1 cycle); the accumulator makes every iteration wait one FMA (4). */
  pa_node head[2] = {{.op = PA_OP_OTHER, .opcode = "phi", .elem = "f32", .lanes = 1, .bits = 32},
                     {.op = PA_OP_OTHER, .opcode = "br", .elem = "void", .lanes = 1}};
  pa_node body[3] = {synthetic_node(PA_OP_MUL, "fmul", 1), synthetic_node(PA_OP_ADD, "fadd", 1),
                     {.op = PA_OP_OTHER, .opcode = "br", .elem = "void", .lanes = 1}};
  pa_edge body_edges[1] = {{0, 1, PA_EDGE_DATA}};
  pa_block blocks[2] = {
      {.name = "head", .count = 1000, .loop = 0, .n_nodes = 2, .nodes = head},
      {.name = "body", .count = 1000, .loop = 0, .n_nodes = 3, .nodes = body, .n_edges = 1, .edges = body_edges}};
  pa_loop l2 = {.header = 0, .parent = -1, .depth = 1, .n_blocks = 2, .blocks = (int[]){0, 1}, .trip_count = 1000};
  pa_function g = {.name = "acc", .calls = 1, .threads = 1, .n_blocks = 2, .blocks = blocks, .n_loops = 1, .loops = &l2};
  p.functions = &g;
  o = (pp_options){.threads = 1, .steady_state = true};
  r = pp_predict_profile(&p, t, &o, &d);
  CHECK_MSG(r && fabs(r->cycles - 4000) < 50, "accumulator loop %g cycles, want 4000", r ? r->cycles : -1);
  pp_prediction_free(r);
  /* without the float phi the body's iterations overlap */
  head[0].elem = "i64";
  r = pp_predict_profile(&p, t, &o, &d);
  CHECK_MSG(r && r->cycles < 2000, "no accumulator: %g cycles", r ? r->cycles : -1);
  pp_prediction_free(r);

  /* +overlap: a 16-iteration accumulator loop entered 100 times from a block with no float
   * phi. Alone each instance waits one add per iteration (4 cycles); the next instance's
   * chain is independent, so the reorder window (224 entries: no microarchitecture) overlaps
   * 1 + 224 / (16 x 3 uops) of them, down to the resource bound (3 uops / issue 4 = 0.75). */
  pa_node inner[4] = {{.op = PA_OP_OTHER, .opcode = "phi", .elem = "f32", .lanes = 1, .bits = 32},
                      synthetic_node(PA_OP_LOAD, "load", 1), synthetic_node(PA_OP_ADD, "fadd", 1),
                      {.op = PA_OP_OTHER, .opcode = "br", .elem = "void", .lanes = 1}};
  pa_edge inner_edges[3] = {{2, 0, PA_EDGE_LOOP_CARRIED}, {0, 2, PA_EDGE_DATA}, {1, 2, PA_EDGE_DATA}};
  pa_node pre_nodes[1] = {{.op = PA_OP_OTHER, .opcode = "br", .elem = "void", .lanes = 1}};
  pa_block nest[2] = {{.name = "pre", .count = 100, .loop = -1, .n_nodes = 1, .nodes = pre_nodes},
                      {.name = "inner", .count = 1600, .loop = 0, .n_nodes = 4, .nodes = inner, .n_edges = 3,
                       .edges = inner_edges}};
  pa_loop l3 = {.header = 1, .parent = -1, .depth = 1, .preheader = 0, .n_blocks = 1, .blocks = (int[]){1},
                .trip_count = 16};
  pa_function h = {.name = "rows", .calls = 1, .threads = 1, .n_blocks = 2, .blocks = nest, .n_loops = 1, .loops = &l3};
  p.functions = &h;
  o = (pp_options){.threads = 1, .steady_state = true};
  r = pp_predict_profile(&p, t, &o, &d);
  double alone = r ? r->blocks[1].cycles : NAN;
  CHECK_MSG(r && fabs(alone - 4) < 0.2, "one instance at a time: %g cycles per iteration, want 4", alone);
  pp_prediction_free(r);
  CHECK(pp_options_preset(&o, "steady+overlap") == 0 && o.overlap && o.steady_state);
  o.threads = 1;
  r = pp_predict_profile(&p, t, &o, &d);
  double overlapped = r ? r->blocks[1].cycles : NAN;
  CHECK_MSG(r && fabs(overlapped - 0.75) < 0.05, "overlapped: %g cycles per iteration, want the bound 0.75",
            overlapped);
  pp_prediction_free(r);
  /* a long loop overlaps little: 1 + 224 / (1024 x 3) */
  nest[1].count = 102400;
  r = pp_predict_profile(&p, t, &o, &d);
  CHECK_MSG(r && fabs(r->blocks[1].cycles - 4 / (1 + 224.0 / 3072)) < 0.1, "1024 iterations: %g",
            r ? r->blocks[1].cycles : -1);
  pp_prediction_free(r);
  ptg_target_free(t);
  TEST_DONE();
}
