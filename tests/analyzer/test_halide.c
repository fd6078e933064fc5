/* IR that Halide emitted (fixtures/halide_matmul.bc, written by scripts/halide_fixture.py with
 * Halide 14: LLVM 14 bitcode, read by LLVM 19's auto-upgrade): C = A x B, C 128 x 64, K = 64,
 * update loops yo (16) > yi (4, unrolled by Halide's LLVM passes) > xo (16) > k (64) > xi
 * (vectorized 8 wide). Static analysis only: the functions, the loop nest (depths, parents,
 * trip counts), the static block counts, the vector widths as Halide wrote them and the
 * strides of the loads. No run: halide_matmul takes halide_buffer_t pointers, which a run spec
 * cannot build (it passes element buffers and scalars). */
#include <stdlib.h>
#include <string.h>

#include "analyzer/analyzer.h"
#include "test.h"
#include "util.h"

#define YO 16 /* H / 4 */
#define YI 4
#define XO 16 /* W / 8 */
#define K 64

/* header label of the xo loop (copy u of the unrolled yi) and of the k loop inside it */
static void labels(int u, char *xo, char *k, size_t n) {
  snprintf(xo, n, u ? "for C.s1.x.xo.%d" : "for C.s1.x.xo", u);
  snprintf(k, n, u ? "for C.s1.k$x.%d" : "for C.s1.k$x", u);
}

static void check_loops(const pa_function *f) {
  CHECK_MSG(f->n_loops == 1 + 2 * YI, "%d loops", f->n_loops);
  const pa_loop *yo = loop_at(f, "for C.s1.y.yo");
  CHECK(yo && yo->depth == 1 && yo->parent == -1 && yo->trip_count == YO);
  int max_depth = 0;
  for (int i = 0; i < f->n_loops; i++) max_depth = f->loops[i].depth > max_depth ? f->loops[i].depth : max_depth;
  CHECK_MSG(max_depth == 3, "nest depth %d", max_depth);
  for (int u = 0; u < YI; u++) {
    char xo_name[48], k_name[48];
    labels(u, xo_name, k_name, sizeof xo_name);
    const pa_loop *xo = loop_at(f, xo_name), *k = loop_at(f, k_name);
    CHECK_MSG(xo && xo->depth == 2 && yo && &f->loops[xo->parent] == yo && xo->trip_count == XO, "%s", xo_name);
    CHECK_MSG(k && k->depth == 3 && xo && &f->loops[k->parent] == xo && k->trip_count == K && k->n_blocks == 1,
              "%s", k_name);
  }
}

/* The k body: B's row as two <4 x float> loads joined into 8 lanes, A's element broadcast to 8,
 * an <8 x float> fmul and fadd (xi vectorized by 8), and the accumulator carried in two
 * <4 x float> phis. */
static void check_k_body(const pa_function *f) {
  const pa_block *b = block_named(f, "for C.s1.k$x");
  CHECK(b);
  if (!b) return;
  int fmul = -1, fadd = -1, vec_loads = 0, scalar_loads = 0, carried = 0;
  for (int i = 0; i < b->n_nodes; i++) {
    const pa_node *n = &b->nodes[i];
    if (strcmp(n->opcode, "fmul") == 0) fmul = i;
    if (strcmp(n->opcode, "fadd") == 0) fadd = i;
    if (n->op != PA_OP_LOAD) continue;
    CHECK_MSG(n->n_strides == 3, "load %d: %d strides", i, n->n_strides);
    if (n->lanes == 4 && n->bytes == 16) { /* B(xo x 8 + 0..3 or 4..7, k): a row of K floats a k */
      vec_loads++;
      CHECK_MSG(n->n_strides == 3 && n->strides[0] == 128 * 4 && n->strides[1] == 8 * 4 && n->strides[2] == 0,
                "B load %d: strides %lld %lld %lld (k, xo, yo)", i, (long long)n->strides[0],
                (long long)n->strides[1], (long long)n->strides[2]);
    } else if (n->lanes == 1 && n->bytes == 4) { /* A(k, y): y moves 4 rows of K a yo */
      scalar_loads++;
      CHECK_MSG(n->n_strides == 3 && n->strides[0] == 4 && n->strides[1] == 0 && n->strides[2] == YI * K * 4,
                "A load %d: strides %lld %lld %lld (k, xo, yo)", i, (long long)n->strides[0],
                (long long)n->strides[1], (long long)n->strides[2]);
    }
  }
  CHECK_MSG(vec_loads == 2 && scalar_loads == 1, "%d <4 x float> loads, %d float loads", vec_loads, scalar_loads);
  CHECK(fmul >= 0 && fadd >= 0);
  if (fmul < 0 || fadd < 0) return;
  const pa_node *m = &b->nodes[fmul], *a = &b->nodes[fadd];
  CHECK_MSG(m->op == PA_OP_MUL && strcmp(m->elem, "f32") == 0 && m->lanes == 8 && m->bits == 256 && !m->is_memory,
            "fmul: %s %s x%d", pa_opclass_name(m->op), m->elem, m->lanes);
  CHECK_MSG(a->op == PA_OP_ADD && strcmp(a->elem, "f32") == 0 && a->lanes == 8 && a->bits == 256, "fadd: %s %s x%d",
            pa_opclass_name(a->op), a->elem, a->lanes);
  bool mul_to_add = false;
  for (int e = 0; e < b->n_edges; e++) {
    mul_to_add |= b->edges[e].src == fmul && b->edges[e].dst == fadd && b->edges[e].kind == PA_EDGE_DATA;
    /* the accumulator's halves, from the fadd's split back to the header's phis */
    if (b->edges[e].kind == PA_EDGE_LOOP_CARRIED && b->nodes[b->edges[e].dst].lanes == 4) carried++;
  }
  CHECK(mul_to_add);
  CHECK_MSG(carried == 2, "%d loop-carried edges into <4 x float> phis", carried);
}

/* Counted without running: each of the 4 k copies runs YO x XO x K times, once per call. */
static void check_static_counts(const pa_module *m) {
  pt_diag d = {0};
  pa_profile *p = pa_profile_static_counts(m, &(pa_static_opts){"halide_matmul", 1}, &d);
  CHECK_MSG(p, "%s", d.msg);
  const pa_function *f = p ? pa_profile_function(p, "halide_matmul") : NULL;
  CHECK(f && f->calls == 1);
  if (f) {
    CHECK(block_named(f, "entry") && block_named(f, "entry")->count == 1);
    CHECK(block_named(f, "for C.s1.y.yo") && block_named(f, "for C.s1.y.yo")->count == YO);
    uint64_t k_total = 0;
    for (int u = 0; u < YI; u++) {
      char xo_name[48], k_name[48];
      labels(u, xo_name, k_name, sizeof xo_name);
      const pa_block *xo = block_named(f, xo_name), *k = block_named(f, k_name);
      CHECK_MSG(xo && xo->count == YO * XO, "%s: %llu", xo_name, xo ? (unsigned long long)xo->count : 0ull);
      CHECK_MSG(k && k->count == YO * XO * K, "%s: %llu", k_name, k ? (unsigned long long)k->count : 0ull);
      k_total += k ? k->count : 0;
    }
    CHECK_MSG(k_total == 64 * (128 / 8) * K, "k bodies: %llu (one per output row and vector of 8, per k)",
              (unsigned long long)k_total);
  }
  pa_profile_free(p);
}

int main(void) {
  pt_diag d = {0};
  pa_module *m = pa_module_load(PA_FIXTURE_DIR "/halide_matmul.bc", &d);
  CHECK_MSG(m, "%s", d.msg);
  if (!m) TEST_DONE();
  pa_profile *p = pa_profile_static(m, &d);
  CHECK_MSG(p, "%s", d.msg);
  if (p) {
    /* the pipeline, its argv wrapper and its metadata: Halide's runtime left out */
    CHECK_MSG(p->n_functions == 3, "%d functions", p->n_functions);
    const pa_function *f = pa_profile_function(p, "halide_matmul");
    const pa_function *argv = pa_profile_function(p, "halide_matmul_argv");
    const pa_function *meta = pa_profile_function(p, "halide_matmul_metadata");
    CHECK(f && argv && meta);
    CHECK(argv && argv->n_loops == 0 && meta && meta->n_loops == 0 && meta->n_blocks == 1);
    if (f) {
      check_loops(f);
      check_k_body(f);
      /* static counts per call where every branch is a loop's exit test */
      const pa_block *k = block_named(f, "for C.s1.k$x.3");
      CHECK(k && k->static_count_per_call == YO * XO * K);
    }
  }
  pa_profile_free(p);
  check_static_counts(m);
  pa_module_free(m);
  TEST_DONE();
}
