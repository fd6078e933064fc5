/* Task graphs of a handwritten block (every node and edge, including a phi loop-carried edge
 * and store->load memory edges) and the trip-count matcher on loop shapes clang -O1 does not
 * emit (top-tested, counting down, unsigned, data-dependent), checked against the run. */
#include <stdlib.h>

#include "analyzer/analyzer.h"
#include "test.h"
#include "util.h"

static bool has_edge(const pa_block *b, int src, int dst, pa_edge_kind k) {
  for (int i = 0; i < b->n_edges; i++)
    if (b->edges[i].src == src && b->edges[i].dst == dst && b->edges[i].kind == k) return true;
  return false;
}

static void test_graph(void) {
  pt_diag d = {0};
  pa_module *m = pa_module_load(PA_FIXTURE_DIR "/taskgraph.ll", &d);
  CHECK_MSG(m, "%s", d.msg);
  if (!m) return;
  pa_profile *p = pa_profile_static(m, &d);
  const pa_function *f = pa_profile_function(p, "tg");
  const pa_block *b = block_named(f, "loop");
  CHECK(b && b->n_nodes == 15);
  if (!b || b->n_nodes != 15) return;
  /* nodes: 0 %i  1 %acc  2 %pa  3 %x  4 %y  5 store y->b  6 %z  7 %acc.next  8 %v  9 %w
   *        10 store w->a  11 store acc.next->b  12 %i.next  13 %c  14 br */
  static const struct { pa_opclass op; const char *elem; int lanes, bits; bool mem; int bytes; } want[] = {
      {PA_OP_OTHER, "i64", 1, 64, 0, 0},   {PA_OP_OTHER, "f32", 1, 32, 0, 0},  {PA_OP_OTHER, "ptr", 1, 64, 0, 0},
      {PA_OP_LOAD, "f32", 1, 32, 1, 4},    {PA_OP_MUL, "f32", 1, 32, 0, 0},    {PA_OP_STORE, "f32", 1, 32, 1, 4},
      {PA_OP_LOAD, "f32", 1, 32, 1, 4},    {PA_OP_FMA, "f32", 1, 32, 0, 0},    {PA_OP_LOAD, "f32", 8, 256, 1, 32},
      {PA_OP_ADD, "f32", 8, 256, 0, 0},    {PA_OP_STORE, "f32", 8, 256, 1, 32}, {PA_OP_STORE, "f32", 1, 32, 1, 4},
      {PA_OP_ADD, "i64", 1, 64, 0, 0},     {PA_OP_CMPSEL, "i64", 1, 64, 0, 0}, {PA_OP_OTHER, "void", 1, 0, 0, 0},
  };
  for (int i = 0; i < 15; i++) {
    const pa_node *n = &b->nodes[i];
    CHECK_MSG(n->op == want[i].op && strcmp(n->elem, want[i].elem) == 0 && n->lanes == want[i].lanes &&
                  n->bits == want[i].bits && n->is_memory == want[i].mem && n->bytes == want[i].bytes,
              "node %d: %s %s x%d (%d bits) mem=%d bytes=%d", i, pa_opclass_name(n->op), n->elem, n->lanes, n->bits,
              n->is_memory, n->bytes);
  }
  CHECK(strcmp(b->nodes[7].opcode, "llvm.fmuladd.f32") == 0 && strcmp(b->nodes[0].opcode, "phi") == 0);
  static const int data[][2] = {{0, 2}, {2, 3}, {3, 4}, {4, 5}, {6, 7}, {3, 7}, {1, 7}, {8, 9},
                                {9, 10}, {7, 11}, {0, 12}, {12, 13}, {13, 14}};
  int n_data = 0, n_mem = 0, n_loop = 0;
  for (size_t i = 0; i < PT_ARRAY_LEN(data); i++)
    CHECK_MSG(has_edge(b, data[i][0], data[i][1], PA_EDGE_DATA), "data edge %d -> %d", data[i][0], data[i][1]);
  /* store y->b orders the load of b and the later store to b; nothing orders the loads of a. */
  CHECK(has_edge(b, 5, 6, PA_EDGE_MEMORY));
  CHECK(has_edge(b, 5, 11, PA_EDGE_MEMORY));
  /* the recurrences: i.next feeds i, acc.next feeds acc, in the next iteration */
  CHECK(has_edge(b, 12, 0, PA_EDGE_LOOP_CARRIED));
  CHECK(has_edge(b, 7, 1, PA_EDGE_LOOP_CARRIED));
  for (int i = 0; i < b->n_edges; i++) {
    n_data += b->edges[i].kind == PA_EDGE_DATA;
    n_mem += b->edges[i].kind == PA_EDGE_MEMORY;
    n_loop += b->edges[i].kind == PA_EDGE_LOOP_CARRIED;
  }
  CHECK_MSG(n_data == (int)PT_ARRAY_LEN(data) && n_mem == 2 && n_loop == 2, "edges: %d data, %d memory, %d loop",
            n_data, n_mem, n_loop);
  /* features: phis are not instructions; 3 loads (40 bytes), 3 stores (40 bytes), 3 vector ops */
  CHECK(b->features.instructions == 13);
  CHECK(b->features.loads == 3 && b->features.load_bytes == 40);
  CHECK(b->features.stores == 3 && b->features.store_bytes == 40);
  CHECK(b->features.vector_instructions == 3);
  CHECK(f->loops[0].trip_count == 100);
  pa_profile_free(p);
  pa_module_free(m);
}

static void test_trip_counts(void) {
  pt_diag d = {0};
  pa_module *m = pa_module_load(PA_FIXTURE_DIR "/loops.ll", &d);
  CHECK_MSG(m, "%s", d.msg);
  if (!m) return;
  pa_run_spec *s = pa_run_spec_parse(
      "{\"entry\":\"all\",\"args\":[{\"kind\":\"buffer\",\"type\":\"i32\",\"count\":16}]}", "spec", &d);
  pa_options opt = {.no_reuse = true};
  pa_profile *p = pa_profile_build(m, s, &opt, &d);
  CHECK_MSG(p, "%s", d.msg);
  if (!p) return;
  /* top-tested i = 0..9: the header runs 11 times, the body 10. */
  const pa_function *f = pa_profile_function(p, "top_tested");
  CHECK(loop_at(f, "cond") && loop_at(f, "cond")->trip_count == 11);
  CHECK(block_named(f, "cond")->count == 11 && block_named(f, "body")->count == 10);
  /* 17, 15, ..., 1: i.next > 0 holds for i = 17..3, so 9 iterations; called twice. */
  f = pa_profile_function(p, "down_by_two");
  CHECK(loop_at(f, "loop")->trip_count == 9);
  CHECK(f->calls == 2 && block_named(f, "loop")->count == 18 && block_named(f, "loop")->count_per_call == 9);
  /* i8: 3, 8, ..., 198, 203: the test i <= 200 fails at 203, the 41st value. */
  f = pa_profile_function(p, "unsigned_le");
  CHECK_MSG(loop_at(f, "loop")->trip_count == 41, "%lld", (long long)loop_at(f, "loop")->trip_count);
  CHECK(block_named(f, "loop")->count == 41);
  /* Without running: the same counts per call from the trip counts (top-tested included). */
  for (int i = 0; i < p->n_functions; i++) {
    const pa_function *g = &p->functions[i];
    for (int j = 0; j < g->n_blocks; j++) {
      const pa_block *b = &g->blocks[j];
      bool expect_static = strcmp(g->name, "data_dependent") != 0;
      CHECK_MSG((b->static_count_per_call >= 0) == expect_static, "%s/%s", g->name, b->name);
      if (b->static_count_per_call >= 0 && g->calls)
        CHECK_MSG(b->static_count_per_call == b->count_per_call, "%s/%s: static %g, run %g", g->name, b->name,
                  b->static_count_per_call, b->count_per_call);
    }
  }
  CHECK(block_named(pa_profile_function(p, "top_tested"), "body")->static_count_per_call == 10);
  f = pa_profile_function(p, "data_dependent");
  CHECK(loop_at(f, "loop")->trip_count == -1);
  CHECK(f->calls == 0 && block_named(f, "loop")->count == 0);
  CHECK(strcmp(p->counts_source, "instrumented") == 0 && p->sample_rate == 0 && p->n_reuse == 0);
  pa_profile_free(p);
  pa_run_spec_free(s);
  pa_module_free(m);
}

static void test_vector(void) {
  pt_diag d = {0};
  pa_module *m = pa_module_load(PA_FIXTURE_DIR "/vector.ll", &d);
  CHECK_MSG(m, "%s", d.msg);
  if (!m) return;
  pa_run_spec *s = pa_run_spec_parse("{\"entry\":\"vec\",\"args\":[{\"kind\":\"buffer\",\"type\":\"f32\",\"count\":100},"
                                     "{\"kind\":\"buffer\",\"type\":\"i32\",\"count\":4},"
                                     "{\"kind\":\"buffer\",\"type\":\"f32\",\"count\":8}]}",
                                     "spec", &d);
  pa_profile *p = pa_profile_build(m, s, &(pa_options){.sample_rate = 1}, &d);
  CHECK_MSG(p, "%s", d.msg);
  if (p) {
    const pa_block *b = &p->functions[0].blocks[0];
    static const struct { pa_opclass op; const char *elem; int lanes; int bytes; } want[] = {
        {PA_OP_LOAD, "i32", 4, 16},   {PA_OP_CONVERT, "i64", 4, 0}, {PA_OP_OTHER, "ptr", 4, 0},
        {PA_OP_GATHER, "f32", 4, 16}, {PA_OP_SQRT, "f32", 4, 0},    {PA_OP_MINMAX, "f32", 4, 0},
        {PA_OP_SHUFFLE, "f32", 4, 0}, {PA_OP_DIV, "f32", 4, 0},     {PA_OP_CMPSEL, "f32", 4, 0},
        {PA_OP_CMPSEL, "f32", 4, 0},  {PA_OP_STORE, "f32", 4, 16},  {PA_OP_OTHER, "ptr", 4, 0},
        {PA_OP_GATHER, "f32", 4, 16}, {PA_OP_OTHER, "void", 1, 0},
    };
    CHECK(b->n_nodes == (int)PT_ARRAY_LEN(want));
    for (int i = 0; i < b->n_nodes && i < (int)PT_ARRAY_LEN(want); i++)
      CHECK_MSG(b->nodes[i].op == want[i].op && strcmp(b->nodes[i].elem, want[i].elem) == 0 &&
                    b->nodes[i].lanes == want[i].lanes && b->nodes[i].bytes == want[i].bytes,
                "node %d: %s %s x%d %d bytes", i, pa_opclass_name(b->nodes[i].op), b->nodes[i].elem,
                b->nodes[i].lanes, b->nodes[i].bytes);
    CHECK(b->features.loads == 2 && b->features.stores == 2 && b->features.vector_instructions == 13);
    /* load of idx (1) + 4 gather lanes + masked store (1) + 4 scatter lanes */
    CHECK_MSG(p->reuse_total.accesses == 10, "%g", p->reuse_total.accesses);
    pa_profile_free(p);
  }
  pa_run_spec_free(s);
  pa_module_free(m);
}

static bool has_carried(const pa_function *f, const char *sb, int s, const char *pb, int ph, const char *db, int dn,
                        int distance) {
  for (int i = 0; i < f->n_carried; i++) {
    const pa_carried_edge *e = &f->carried[i];
    if (e->src_block == block_index(f, sb) && e->src_node == s && e->phi_block == block_index(f, pb) &&
        e->phi_node == ph && e->dst_block == block_index(f, db) && e->dst_node == dn && e->distance == distance)
      return true;
  }
  return false;
}

/* Recurrences through several blocks and masks, also after a save and load of the profile. */
static void test_carried_and_masks(void) {
  pt_diag d = {0};
  pa_module *m = pa_module_load(PA_FIXTURE_DIR "/carried.ll", &d);
  CHECK_MSG(m, "%s", d.msg);
  if (!m) return;
  pa_profile *p0 = pa_profile_static(m, &d);
  char *js = pa_profile_to_json(p0);
  pa_profile *p1 = pa_profile_parse(js, "carried.json", &d);
  CHECK_MSG(p1, "%s", d.msg);
  free(js);
  for (int round = 0; round < 2 && p1; round++) {
    const pa_profile *p = round ? p1 : p0;
    const pa_function *f = pa_profile_function(p, "rec");
    /* %i.next (body #1) feeds %i (loop #0), used by %p (loop #2, back edge only: distance 1) and
     * by %i.next itself (loop -> mid -> body: 1 + 2); %acc.next (body #0) feeds %acc (loop #1),
     * used by %acc.next (1 + 2). The store after the loop uses %acc.next directly: no edge. */
    CHECK_MSG(f && f->n_carried == 3, "%d carried edges", f ? f->n_carried : -1);
    CHECK(f && has_carried(f, "body", 1, "loop", 0, "loop", 2, 1));
    CHECK(f && has_carried(f, "body", 1, "loop", 0, "body", 1, 3));
    CHECK(f && has_carried(f, "body", 0, "loop", 1, "body", 0, 3));
    const pa_block *b = block_named(pa_profile_function(p, "masks"), "entry");
    CHECK(b && b->n_nodes == 5);
    if (!b || b->n_nodes != 5) continue;
    CHECK(!b->nodes[0].masked && !b->nodes[1].masked && !b->nodes[4].masked);
    CHECK(b->nodes[2].masked && b->nodes[2].mask == 1 && b->nodes[2].mask_lanes == -1 && b->nodes[2].op == PA_OP_GATHER);
    CHECK(has_edge(b, 1, 2, PA_EDGE_DATA)); /* the mask operand's edge */
    CHECK(b->nodes[3].masked && b->nodes[3].mask == -1 && b->nodes[3].mask_lanes == 2 && b->nodes[3].op == PA_OP_STORE);
  }
  pa_profile_free(p1);
  pa_profile_free(p0);
  pa_module_free(m);
}

/* A gather's lane step from its getelementptr (splat + constant vector, or a constant vector),
 * none for indices from memory; a scatter orders a later gather of the same pointers (a memory
 * edge, as store -> load) and counts as a store; the step survives the profile's JSON. */
static void test_lanes(void) {
  pt_diag d = {0};
  pa_module *m = pa_module_load(PA_FIXTURE_DIR "/lanes.ll", &d);
  CHECK_MSG(m, "%s", d.msg);
  if (!m) return;
  pa_profile *p = pa_profile_static(m, &d);
  const pa_function *f = p ? pa_profile_function(p, "lanes") : NULL;
  const pa_block *b = f ? block_named(f, "entry") : NULL;
  CHECK(b && b->n_nodes == 13);
  if (!b || b->n_nodes != 13) return;
  /* 4 %g  6 scatter  7 %g2  9 %d  11 %h */
  CHECK_MSG(b->nodes[4].lane_step == 4096 && b->nodes[6].lane_step == 4096 && b->nodes[7].lane_step == 4096,
            "lane steps %lld %lld %lld", (long long)b->nodes[4].lane_step, (long long)b->nodes[6].lane_step,
            (long long)b->nodes[7].lane_step);
  CHECK_MSG(b->nodes[9].lane_step == 16, "double lanes 2 apart: %lld", (long long)b->nodes[9].lane_step);
  CHECK(b->nodes[11].lane_step == 0 && b->nodes[2].lane_step == 0);
  CHECK(has_edge(b, 6, 7, PA_EDGE_MEMORY) && !has_edge(b, 4, 6, PA_EDGE_MEMORY));
  CHECK(b->features.stores == 1 && b->features.loads == 4);
  char *json = pa_profile_to_json(p);
  pa_profile *back = json ? pa_profile_parse(json, "lanes", &d) : NULL;
  CHECK_MSG(back, "%s", d.msg);
  const pa_function *fb = back ? pa_profile_function(back, "lanes") : NULL;
  const pa_block *bb = fb ? block_named(fb, "entry") : NULL;
  CHECK(bb && bb->nodes[4].lane_step == 4096 && bb->nodes[9].lane_step == 16 && bb->nodes[11].lane_step == 0);
  free(json);
  pa_profile_free(back);
  pa_profile_free(p);
  pa_module_free(m);
}

int main(void) {
  test_lanes();
  test_graph();
  test_carried_and_masks();
  test_vector();
  test_trip_counts();
  TEST_DONE();
}
