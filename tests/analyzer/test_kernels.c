/* Textbook kernels compiled by clang-19 -O1: CFG edges, loop nests, static trip counts and
 * instrumented block counts against the values computed by hand from the C sources. */
#include <stdlib.h>

#include "analyzer/analyzer.h"
#include "test.h"
#include "util.h"

/* Counts derived from trip counts without running equal the instrumented ones, block by block;
 * returns how many blocks had a static count. */
static int static_matches(const pa_function *f) {
  int known = 0;
  for (int i = 0; i < f->n_blocks; i++) {
    const pa_block *b = &f->blocks[i];
    if (b->static_count_per_call < 0) continue;
    known++;
    CHECK_MSG(b->static_count_per_call == b->count_per_call, "%s/%s: static %g, instrumented %g", f->name, b->name,
              b->static_count_per_call, b->count_per_call);
  }
  return known;
}

static pa_profile *run(const char *kernel, const char *spec_json, pa_module **mod) {
  char path[512];
  snprintf(path, sizeof path, "%s/%s.ll", PA_KERNEL_DIR, kernel);
  pt_diag d = {0};
  *mod = pa_module_load(path, &d);
  CHECK_MSG(*mod, "%s", d.msg);
  if (!*mod) return NULL;
  pa_run_spec *s = pa_run_spec_parse(spec_json, "inline spec", &d);
  CHECK_MSG(s, "%s", d.msg);
  if (!s) return NULL;
  pa_options opt = {.sample_rate = 1};
  pa_profile *p = pa_profile_build(*mod, s, &opt, &d);
  CHECK_MSG(p, "%s", d.msg);
  pa_run_spec_free(s);
  return p;
}

#define COUNT(f, name, want)                                                                       \
  do {                                                                                             \
    const pa_block *b_ = block_named(f, name);                                                     \
    CHECK_MSG(b_ && b_->count == (uint64_t)(want), "%s: count %llu, want %llu", name,              \
              b_ ? (unsigned long long)b_->count : 0ULL, (unsigned long long)(want));              \
  } while (0)

static void test_gemm(void) {
  pa_module *m;
  pa_profile *p = run("gemm",
                      "{\"entry\":\"gemm\",\"args\":[{\"kind\":\"buffer\",\"type\":\"f32\",\"count\":1440},"
                      "{\"kind\":\"buffer\",\"type\":\"f32\",\"count\":1760},{\"kind\":\"buffer\",\"type\":\"f32\",\"count\":1584}]}",
                      &m);
  if (!p) return;
  const pa_function *f = pa_profile_function(p, "gemm");
  CHECK(f && f->n_blocks == 7 && f->n_loops == 3);
  if (!f) return;
  /* CFG, by hand from the IR's branches: every block's successors. */
  static const char *const succs[][3] = {
      {"entry", "for.cond1.preheader", NULL},
      {"for.cond1.preheader", "for.cond5.preheader", NULL},
      {"for.cond.cleanup", NULL, NULL},
      {"for.cond5.preheader", "for.body8", NULL},
      {"for.cond.cleanup3", "for.cond.cleanup", "for.cond1.preheader"},
      {"for.cond.cleanup7", "for.cond.cleanup3", "for.cond5.preheader"},
      {"for.body8", "for.cond.cleanup7", "for.body8"},
  };
  for (size_t i = 0; i < PT_ARRAY_LEN(succs); i++) {
    const pa_block *b = block_named(f, succs[i][0]);
    CHECK_MSG(b && same_blocks(f, b->succs, b->n_succs, succs[i][1], succs[i][2], NULL), "%s", succs[i][0]);
  }
  int n_edges = 0, n_pred_edges = 0;
  for (int i = 0; i < f->n_blocks; i++) {
    n_edges += f->blocks[i].n_succs;
    n_pred_edges += f->blocks[i].n_preds;
  }
  CHECK(n_edges == 9 && n_pred_edges == 9);
  const pa_block *body = block_named(f, "for.body8");
  CHECK(body && same_blocks(f, body->succs, body->n_succs, "for.cond.cleanup7", "for.body8", NULL));
  CHECK(body && same_blocks(f, body->preds, body->n_preds, "for.cond5.preheader", "for.body8", NULL));
  const pa_block *c3 = block_named(f, "for.cond.cleanup3");
  CHECK(c3 && same_blocks(f, c3->succs, c3->n_succs, "for.cond.cleanup", "for.cond1.preheader", NULL));
  CHECK(c3 && same_blocks(f, c3->preds, c3->n_preds, "for.cond.cleanup7", NULL));
  CHECK(block_named(f, "entry")->idom == -1);
  CHECK(body && body->idom == block_index(f, "for.cond5.preheader"));
  /* Loops: i (40) contains j (36) contains k (44). */
  const pa_loop *li = loop_at(f, "for.cond1.preheader"), *lj = loop_at(f, "for.cond5.preheader"),
                *lk = loop_at(f, "for.body8");
  CHECK(li && lj && lk);
  if (!li || !lj || !lk) return;
  CHECK(li->depth == 1 && lj->depth == 2 && lk->depth == 3);
  CHECK(li->parent == -1 && &f->loops[lj->parent] == li && &f->loops[lk->parent] == lj);
  CHECK(li->n_blocks == 5 && lj->n_blocks == 3 && lk->n_blocks == 1);
  CHECK_MSG(li->trip_count == 40 && lj->trip_count == 36 && lk->trip_count == 44, "trips %lld %lld %lld",
            (long long)li->trip_count, (long long)lj->trip_count, (long long)lk->trip_count);
  CHECK(body->loop == (int)(lk - f->loops));
  /* Block counts: one call. */
  CHECK(f->calls == 1 && f->threads == 1 && !f->parallel);
  COUNT(f, "entry", 1);
  COUNT(f, "for.cond1.preheader", 40);
  COUNT(f, "for.cond5.preheader", 40 * 36);
  COUNT(f, "for.cond.cleanup7", 40 * 36);
  COUNT(f, "for.body8", 40 * 36 * 44);
  COUNT(f, "for.cond.cleanup3", 40);
  COUNT(f, "for.cond.cleanup", 1);
  /* Static counts from trip counts agree with the instrumented ones. */
  CHECK(body->count == (uint64_t)(li->trip_count * lj->trip_count * lk->trip_count));
  CHECK(static_matches(f) == f->n_blocks);
  /* The body: 2 loads, 1 fma, no stores; the reduction is a loop-carried recurrence. */
  CHECK(body->features.loads == 2 && body->features.stores == 0 && body->features.by_op[PA_OP_FMA] == 1);
  CHECK(body->features.load_bytes == 8);
  int carried = 0;
  for (int i = 0; i < body->n_edges; i++)
    if (body->edges[i].kind == PA_EDGE_LOOP_CARRIED) {
      carried++;
      CHECK(body->nodes[body->edges[i].dst].op == PA_OP_OTHER); /* a phi */
    }
  CHECK(carried == 2); /* iv.next -> iv, fmuladd -> acc */
  /* Reuse: every access was tracked: 2 loads per k iteration + 1 store per (i, j). */
  CHECK_MSG(p->reuse_total.accesses == 2.0 * 40 * 36 * 44 + 40 * 36, "accesses %g", p->reuse_total.accesses);
  /* Cold misses: every line of A, B and C is touched once first: (1440+1760+1584)*4/64 lines
   * when the buffers are 64-byte aligned, as the run allocates them. */
  CHECK_MSG(p->reuse_total.cold == (1440 + 1760 + 1584) * 4 / 64, "cold %g", p->reuse_total.cold);
  pa_profile_free(p);
  pa_module_free(m);
}

static void test_jacobi(void) {
  pa_module *m;
  pa_profile *p = run("jacobi2d",
                      "{\"entry\":\"jacobi2d\",\"args\":[{\"kind\":\"buffer\",\"type\":\"f32\",\"count\":1156},"
                      "{\"kind\":\"buffer\",\"type\":\"f32\",\"count\":1156}]}",
                      &m);
  if (!p) return;
  const pa_function *f = pa_profile_function(p, "jacobi2d");
  CHECK(f && f->n_loops == 5);
  if (!f) return;
  const pa_loop *lt = loop_at(f, "for.cond1.preheader"), *li1 = loop_at(f, "for.cond5.preheader"),
                *lj1 = loop_at(f, "for.body8"), *li2 = loop_at(f, "for.cond46.preheader"),
                *lj2 = loop_at(f, "for.body49");
  CHECK(lt && li1 && lj1 && li2 && lj2);
  if (!lt || !li1 || !lj1 || !li2 || !lj2) return;
  CHECK(lt->trip_count == 3 && li1->trip_count == 32 && lj1->trip_count == 32 && li2->trip_count == 32 &&
        lj2->trip_count == 32);
  CHECK(lt->depth == 1 && li1->depth == 2 && li2->depth == 2 && lj1->depth == 3 && lj2->depth == 3);
  CHECK(&f->loops[li1->parent] == lt && &f->loops[li2->parent] == lt && &f->loops[lj2->parent] == li2);
  const pa_block *c7 = block_named(f, "for.cond.cleanup7");
  CHECK(c7 && same_blocks(f, c7->succs, c7->n_succs, "for.cond46.preheader", "for.cond5.preheader", NULL));
  COUNT(f, "entry", 1);
  COUNT(f, "for.cond1.preheader", 3);
  COUNT(f, "for.cond5.preheader", 3 * 32);
  COUNT(f, "for.body8", 3 * 32 * 32);
  COUNT(f, "for.cond.cleanup7", 3 * 32);
  COUNT(f, "for.cond46.preheader", 3 * 32);
  COUNT(f, "for.body49", 3 * 32 * 32);
  COUNT(f, "for.cond.cleanup48", 3 * 32);
  COUNT(f, "for.cond.cleanup43", 3);
  COUNT(f, "for.cond.cleanup", 1);
  CHECK(static_matches(f) == f->n_blocks);
  /* 5 loads + 1 store per point per sweep. */
  CHECK_MSG(p->reuse_total.accesses == 6.0 * 2 * 3 * 32 * 32, "accesses %g", p->reuse_total.accesses);
  pa_profile_free(p);
  pa_module_free(m);
}

static void test_stencil_and_transpose(void) {
  pa_module *m;
  pa_profile *p = run("stencil1d",
                      "{\"entry\":\"stencil1d\",\"args\":[{\"kind\":\"buffer\",\"type\":\"f32\",\"count\":1000},"
                      "{\"kind\":\"buffer\",\"type\":\"f32\",\"count\":1000},{\"kind\":\"scalar\",\"type\":\"i32\",\"value\":1000}]}",
                      &m);
  if (p) {
    const pa_function *f = pa_profile_function(p, "stencil1d");
    const pa_loop *l = loop_at(f, "for.body");
    CHECK(f && f->n_loops == 1 && l);
    CHECK(l && l->trip_count == -1); /* the bound is the argument n: not static */
    COUNT(f, "for.body", 998);
    COUNT(f, "for.body.preheader", 1);
    COUNT(f, "for.cond.cleanup", 1);
    CHECK(static_matches(f) == 0); /* the guard n > 2 and the bound n are run-time values */
    const pa_block *e = block_named(f, "entry");
    CHECK(e && same_blocks(f, e->succs, e->n_succs, "for.body.preheader", "for.cond.cleanup", NULL));
    /* a[0..999] and b[1..998] each span 63 lines of their 64-byte aligned buffers. Between two
     * touches of one line only the other array's current line(s) intervene: at most 2 lines,
     * so nothing reaches bin 3 (distance >= 4). */
    CHECK_MSG(p->reuse_total.cold == 63 + 63, "cold %g", p->reuse_total.cold);
    CHECK(p->reuse_total.accesses == 4.0 * 998);
    double far = 0;
    for (int k = 3; k < PA_REUSE_BINS; k++) far += p->reuse_total.bins[k];
    CHECK_MSG(far == 0, "far %g", far);
    pa_profile_free(p);
  }
  pa_module_free(m);
  p = run("transpose",
          "{\"entry\":\"transpose\",\"args\":[{\"kind\":\"buffer\",\"type\":\"f32\",\"count\":2688},"
          "{\"kind\":\"buffer\",\"type\":\"f32\",\"count\":2688}]}",
          &m);
  if (p) {
    const pa_function *f = pa_profile_function(p, "transpose");
    const pa_loop *li = loop_at(f, "for.cond1.preheader"), *lj = loop_at(f, "for.body4");
    CHECK(li && lj && li->trip_count == 48 && lj->trip_count == 56);
    COUNT(f, "for.body4", 48 * 56);
    COUNT(f, "for.cond.cleanup3", 48);
    CHECK(static_matches(f) == f->n_blocks);
    /* The stores to B walk a column: between two stores to one line of B (i and i+1) the
     * inner loop touches 56 lines of B and about 4 of A, so those reuses sit in bin 6 or 7
     * (distance 32..127); A's row is read sequentially (distance 0 or 1). */
    double mid = p->reuse_total.bins[6] + p->reuse_total.bins[7];
    CHECK_MSG(mid >= 56 * 47 * 0.9, "mid-distance reuses %g", mid);
    pa_profile_free(p);
  }
  pa_module_free(m);
}

/* Buffered and directly hooked accesses in program order (fixtures/order.ll): per iteration
 * A_i, B_0, A_i. A_i's first touch is cold, B_0 is cold once and then 2 lines away (A_i-1,
 * A_i), A_i's second touch 1 line away (B_0). Out of order, these distances change. */
static void test_order(void) {
  char path[512];
  snprintf(path, sizeof path, "%s/order.ll", PA_FIXTURE_DIR);
  pt_diag d = {0};
  pa_module *m = pa_module_load(path, &d);
  CHECK_MSG(m, "%s", d.msg);
  pa_run_spec *s = m ? pa_run_spec_parse("{\"entry\":\"order\",\"args\":[{\"kind\":\"buffer\",\"type\":\"f32\","
                                         "\"count\":1024},{\"kind\":\"buffer\",\"type\":\"f32\",\"count\":16}]}",
                                         "inline spec", &d)
                     : NULL;
  pa_profile *p = s ? pa_profile_build(m, s, &(pa_options){.sample_rate = 1}, &d) : NULL;
  CHECK_MSG(p, "%s", d.msg);
  if (p) {
    const pa_reuse_hist *h = &p->reuse_total;
    CHECK_MSG(h->accesses == 192 && h->cold == 65, "accesses %g cold %g", h->accesses, h->cold);
    CHECK_MSG(h->bins[0] == 0 && h->bins[1] == 64 && h->bins[2] == 63, "bins %g %g %g", h->bins[0], h->bins[1],
              h->bins[2]);
  }
  pa_profile_free(p);
  pa_run_spec_free(s);
  pa_module_free(m);
}

int main(void) {
  test_order();
  test_gemm();
  test_jacobi();
  test_stencil_and_transpose();
  TEST_DONE();
}
