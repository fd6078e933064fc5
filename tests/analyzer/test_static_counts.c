/* Static block counts (pa_profile_static_counts) against the instrumented count-only run, block
 * by block and exactly, on a pool of 3 threads so chunks differ in size: every suite workload
 * at full size under its default schedule and the two random ones of eight seeds that execute
 * the fewest instructions (quick mode: the default only; parallel bodies, non-dividing splits
 * and their guards), and random schedules of any cost on a small twin of each; a schedule without
 * static counts is printed by name and must fail for the one documented reason. Then a matmul
 * and a conv loop nest whose counts are worked out by hand, checked against the static counts
 * and the instrumented run's alike. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analyzer/analyzer.h"
#include "compiler/compiler.h"
#include "schedules.h"
#include "test.h"
#include "util.h"

#define THREADS 3

typedef struct {
  int lowered, counted, compared;
  double static_s, run_s;
} tally;

static pa_profile *static_of(pc_kernel *k, int threads, pt_diag *d) {
  pa_module *m = pa_module_from_llvm(pc_kernel_module(k));
  pa_static_opts so = {pc_kernel_name(k), threads};
  pa_profile *p = pa_profile_static_counts(m, &so, d);
  pa_module_free(m);
  return p;
}

static pa_profile *instrumented_of(pc_kernel *k, int threads, pt_diag *d) {
  int nb = pc_kernel_n_buffers(k);
  int64_t sizes[PC_MAX_STAGES];
  for (int b = 0; b < nb; b++) sizes[b] = pc_kernel_buffer_numel(k, b);
  pa_run_spec *spec = pa_run_spec_portent(pc_kernel_name(k), nb, sizes, threads, 1);
  spec->timeout_s = 30;
  pa_options opt = {.no_reuse = true};
  pa_profile *p = pa_profile_llvm(pc_kernel_module(k), spec, &opt, d);
  pa_run_spec_free(spec);
  return p;
}

/* Every field the predictor reads from counts: equal, not close. */
static void same_counts(const char *what, const pa_profile *s, const pa_profile *r) {
  CHECK_MSG(strcmp(s->counts_source, "static") == 0, "%s: counts_source %s", what, s->counts_source);
  CHECK_MSG(s->n_functions == r->n_functions && s->threads == r->threads, "%s: %d/%d functions, %d/%d threads", what,
            s->n_functions, r->n_functions, s->threads, r->threads);
  for (int i = 0; i < s->n_functions && i < r->n_functions; i++) {
    const pa_function *fs = &s->functions[i], *fr = &r->functions[i];
    CHECK_MSG(fs->calls == fr->calls && fs->threads == fr->threads && fs->parallel == fr->parallel,
              "%s: %s: calls %llu/%llu threads %d/%d parallel %d/%d (static/instrumented)", what, fs->name,
              (unsigned long long)fs->calls, (unsigned long long)fr->calls, fs->threads, fr->threads, fs->parallel,
              fr->parallel);
    for (int b = 0; b < fs->n_blocks && b < fr->n_blocks; b++)
      CHECK_MSG(fs->blocks[b].count == fr->blocks[b].count && fs->blocks[b].count_per_call == fr->blocks[b].count_per_call,
                "%s: %s/%s: static %llu (%g per call), instrumented %llu (%g per call)", what, fs->name,
                fs->blocks[b].name, (unsigned long long)fs->blocks[b].count, fs->blocks[b].count_per_call,
                (unsigned long long)fr->blocks[b].count, fr->blocks[b].count_per_call);
    /* the run's profile gets the same split of a parallel body's work over its iterations */
    bool same_chunks = fs->chunk_iterations == fr->chunk_iterations && fs->n_chunk_work == fr->n_chunk_work;
    for (int k = 0; k < fs->n_chunk_work && same_chunks; k++) same_chunks = fs->chunk_work[k] == fr->chunk_work[k];
    CHECK_MSG(same_chunks, "%s: %s: chunk work over %lld/%lld iterations in %d/%d parts (static/instrumented)", what,
              fs->name, (long long)fs->chunk_iterations, (long long)fr->chunk_iterations, fs->n_chunk_work,
              fr->n_chunk_work);
  }
}

/* The one reason a lowered schedule may lack static counts (docs/validation.md, "Block counts
 * without running"): a guard not affine in one loop index (urem/udiv of fused indices) around
 * loops too long to enumerate within counts.c's step budget; callers then run it instrumented.
 * Any other reason fails the test. */
#define GUARD_TOO_LONG "enumerating the iterations around a guard would take too many steps"

/* Lowers one schedule and counts it statically (pool of THREADS); NULL when the lowering
 * refuses it (the compiler's tests' business) or it has no static counts (then reported by
 * name, with the reason and its steps). */
static pa_profile *counted(const char *what, const pc_state *s, pc_kernel **kp, tally *t) {
  pt_diag d = {0};
  *kp = pc_lower(s, &(pc_lower_opts){0}, &d);
  if (!*kp) return NULL;
  t->lowered++;
  double t0 = pt_now();
  pa_profile *sp = static_of(*kp, THREADS, &d);
  t->static_s += pt_now() - t0;
  if (sp) {
    t->counted++;
    return sp;
  }
  char *steps = pc_steps_to_json(s->n_steps, s->steps);
  printf("  %s: no static counts: %s\n    steps: %s\n", what, d.msg, steps);
  free(steps);
  CHECK_MSG(strstr(d.msg, GUARD_TOO_LONG), "%s: no static counts for another reason than a long guarded nest: %s", what,
            d.msg);
  return NULL;
}

/* The instrumented count-only run of k against its static counts sp, block by block. */
static void compare_run(const char *what, pc_kernel *k, const pa_profile *sp, tally *t) {
  double t0 = pt_now();
  pt_diag d = {0};
  pa_profile *rp = instrumented_of(k, THREADS, &d);
  t->run_s += pt_now() - t0;
  CHECK_MSG(rp, "%s: %s", what, d.msg);
  if (rp) {
    same_counts(what, sp, rp);
    t->compared++;
  }
  pa_profile_free(rp);
}

/* Instructions the schedule executes by its static counts (all threads). */
static double instructions_of(const pa_profile *p) {
  double n = 0;
  for (int op = 0; op < PA_OP_COUNT; op++) n += p->dynamic_by_op[op];
  return n;
}

/* The suite's operators at sizes whose instrumented runs take milliseconds under any
 * schedule (random ones are not vectorized or parallel): same loop nests, same guards. */
static const char *const small_of[][2] = {
    {"mm512", "matmul:64,72,80"},
    {"mm1024", "matmul:96,64,48"},
    {"bert_qkv", "matmul:32,96,144"},
    {"bert_ffn1", "matmul_relu:32,96,192"},
    {"conv_r50_1", "conv2d_nchw:1,3,30,30,16,7,7,2,3,1,1"},
    {"conv_r50_2", "conv2d_nchw:1,16,14,14,16,3,3,1,1,1,1"},
    {"conv_r50_3", "conv2d_nchw:1,24,10,10,24,3,3,1,1,1,1"},
    {"conv_r50_4", "conv2d_nchw:1,32,7,7,32,3,3,1,1,1,1"},
    {"conv_r50_5", "conv2d_nchw:1,64,5,5,64,3,3,1,1,1,1"},
    {"conv_pw", "conv2d_nchw:1,16,14,14,64,1,1,1,0,1,1"},
    {"dwconv_mb", "depthwise_conv2d_nchw:1,8,28,28,3,3,1,1"},
};

/* Random schedules a suite workload is tried under (seeds seed..seed+n_seeds-1, one generator
 * each, as `bench analyze`), of which the n_runs that execute the fewest instructions by their
 * static counts are run: full-size random schedules are neither vectorized nor parallel, and
 * the costliest take minutes instrumented. 8 and 2; none in quick mode (the sanitizer build,
 * where lowering and counting cost 3x and the tests run beside each other: one of two seeds
 * there added 26 s alone, 80 s in CI), whose random schedules are the small twins'. */
enum { RANDOM_SEEDS = 8, RANDOM_RUNS = 2 };

/* A suite workload at full size: its default schedule and n_runs random ones against the
 * instrumented run; every random one lowered is counted statically or reported. */
static void suite_workload(const char *name, uint64_t seed, int n_seeds, int n_runs, tally *t) {
  pt_diag d = {0};
  pc_program *prog = pc_workload_build(name, &d);
  CHECK_MSG(prog, "%s: %s", name, d.msg);
  if (!prog) return;
  char what[96];
  int compared = t->compared;
  pc_state *s = pc_state_new(prog);
  int rc = pc_schedule_default(s, 16, &d);
  CHECK_MSG(rc == 0, "%s: default schedule: %s", name, d.msg);
  pc_kernel *k = NULL;
  snprintf(what, sizeof what, "%s default", name);
  pa_profile *sp = rc == 0 ? counted(what, s, &k, t) : NULL;
  CHECK_MSG(sp, "%s: the default schedule has no static counts", name);
  double t0 = t->run_s;
  if (sp) compare_run(what, k, sp, t);
  double default_s = t->run_s - t0;
  pa_profile_free(sp);
  pc_kernel_free(k);
  pc_state_free(s);
  struct {
    pc_kernel *k;
    pa_profile *sp;
    double instructions;
  } cand[RANDOM_SEEDS] = {0};
  for (int i = 0; i < n_seeds; i++) {
    pt_rng rng = {seed + (uint64_t)i};
    s = pc_state_new(prog);
    rc = pc_schedule_random(s, &rng, &d);
    CHECK_MSG(rc == 0, "%s: random schedule of seed %llu: %s", name, (unsigned long long)(seed + i), d.msg);
    snprintf(what, sizeof what, "%s random(seed %llu)", name, (unsigned long long)(seed + i));
    cand[i].sp = rc == 0 ? counted(what, s, &cand[i].k, t) : NULL;
    cand[i].instructions = cand[i].sp ? instructions_of(cand[i].sp) : -1;
    pc_state_free(s);
  }
  printf("%s: default %.2f s", name, default_s);
  for (int run = 0; run < n_runs; run++) {
    int best = -1;
    for (int i = 0; i < n_seeds; i++)
      if (cand[i].instructions >= 0 && (best < 0 || cand[i].instructions < cand[best].instructions)) best = i;
    if (best < 0) break;
    snprintf(what, sizeof what, "%s random(seed %llu)", name, (unsigned long long)(seed + best));
    double t0 = t->run_s;
    compare_run(what, cand[best].k, cand[best].sp, t);
    printf(", random(seed %llu) %.3g instructions %.2f s", (unsigned long long)(seed + best), cand[best].instructions,
           t->run_s - t0);
    cand[best].instructions = -1; /* run */
  }
  printf(": %d compared with the instrumented run\n", t->compared - compared);
  CHECK_MSG(t->compared - compared == 1 + n_runs, "%s: %d schedules compared, not %d", name, t->compared - compared,
            1 + n_runs);
  for (int i = 0; i < n_seeds; i++) pa_profile_free(cand[i].sp), pc_kernel_free(cand[i].k);
  pc_program_free(prog);
}

static void check_twin(const char *what, const pc_state *s, bool is_default, void *ctx) {
  (void)is_default;
  pc_kernel *k = NULL;
  pa_profile *sp = counted(what, s, &k, ctx);
  if (sp) compare_run(what, k, sp, ctx);
  pa_profile_free(sp);
  pc_kernel_free(k);
}

static void test_suite(bool quick) {
  CHECK(pc_suite_count() == (int)PT_ARRAY_LEN(small_of)); /* a new suite workload needs a small twin here */
  tally full = {0}, small = {0};
  double t0 = pt_now();
  for (int w = 0; w < pc_suite_count(); w++) {
    const char *name = pc_suite_name(w), *twin = NULL;
    for (size_t i = 0; i < PT_ARRAY_LEN(small_of); i++)
      if (strcmp(small_of[i][0], name) == 0) twin = small_of[i][1];
    CHECK_MSG(twin, "%s has no small twin", name);
    suite_workload(name, 7001 + 100 * (uint64_t)w, quick ? 0 : RANDOM_SEEDS, quick ? 0 : RANDOM_RUNS, &full);
    /* the operator's small twin: random schedules of any cost, every one run */
    if (twin) for_each_schedule(twin, quick ? 1 : 2, 9001 + (uint64_t)w, check_twin, &small);
  }
  printf("suite sizes: %d schedules lowered, %d counted statically, %d compared with the instrumented run "
         "(static %.3f s, instrumented %.3f s in all)\n", full.lowered, full.counted, full.compared, full.static_s, full.run_s);
  printf("small twins: %d schedules lowered, %d counted statically, %d compared with the instrumented run "
         "(static %.3f s, instrumented %.3f s in all)\n", small.lowered, small.counted, small.compared, small.static_s,
         small.run_s);
  printf("suite comparison: %.1f s\n", pt_now() - t0);
}

static pc_kernel *lower_steps(const char *workload, const char *steps_json, pc_program **prog) {
  pt_diag d = {0};
  *prog = pc_workload_build(workload, &d);
  CHECK_MSG(*prog, "%s", d.msg);
  if (!*prog) return NULL;
  pc_state *s = pc_state_new(*prog);
  pc_step steps[16];
  int n = 0;
  int rc = steps_json ? pc_steps_from_json(steps_json, &n, steps, 16, &d) : 0;
  if (!rc) rc = pc_state_apply_all(s, n, steps, &d);
  CHECK_MSG(rc == 0, "%s", d.msg);
  pc_lower_opts lo = {0};
  pc_kernel *k = rc ? NULL : pc_lower(s, &lo, &d);
  CHECK_MSG(k, "%s", d.msg);
  pc_state_free(s);
  return k;
}

static uint64_t count_of(const pa_function *f, const char *block) {
  const pa_block *b = block_named(f, block);
  CHECK_MSG(b, "%s: no block %s", f ? f->name : "?", block);
  return b ? b->count : 0;
}

/* C[64,40] = A[64,48] x B[48,40] with i split by 5 (13 x 5 covers 65 rows: a guard) and the
 * outer i parallel over 3 threads: chunks of 5, 4 and 4 iterations of i.0. O3 unrolls i.1
 * into five copies of the j/k nest, copy u guarded by 5 i.0 + u < 64. */
static void matmul_by_hand(const pa_profile *p, const pa_profile *p1, const char *source) {
  const pa_function *f = p ? pa_profile_function(p, "portent_matmul_par0") : NULL;
  CHECK_MSG(f && f->calls == 3 && f->threads == 3 && f->parallel, "%s: the parallel body", source);
  const pa_function *kf = p ? pa_profile_function(p, "portent_matmul") : NULL;
  CHECK_MSG(kf && kf->calls == 1 && kf->threads == 1 && !kf->parallel, "%s: the kernel", source);
  if (f) {
    CHECK_MSG(count_of(f, "i.0") == 13, "%s", source);                 /* i.0 over all chunks */
    CHECK_MSG(count_of(f, "k.us.us") == 13 * 40 * 48, "%s", source);   /* copy 0: 5 i.0 < 64 for all 13 */
    CHECK_MSG(count_of(f, "k.us.us.4") == 12 * 40 * 48, "%s", source); /* copy 4: 5 i.0 + 4 < 64 for i.0 <= 11 */
    CHECK_MSG(count_of(f, "j.us.4") == 12 * 40, "%s", source);
    uint64_t k_total = 0; /* the k loop body runs once per multiply-add: N x M x L */
    for (int b = 0; b < f->n_blocks; b++)
      if (strncmp(f->blocks[b].name, "k.", 2) == 0) k_total += f->blocks[b].count;
    CHECK_MSG(k_total == 64 * 40 * 48, "%s: k bodies ran %llu times", source, (unsigned long long)k_total);
    CHECK_MSG(block_named(f, "k.us.us.4") && block_named(f, "k.us.us.4")->count_per_call == 12 * 40 * 48 / 3.0, "%s",
              source);
  }
  /* one thread: one call over all 13 iterations */
  const pa_function *f1 = p1 ? pa_profile_function(p1, "portent_matmul_par0") : NULL;
  CHECK_MSG(f1 && f1->calls == 1 && f1->threads == 1 && !f1->parallel && count_of(f1, "k.us.us.4") == 12 * 40 * 48,
            "%s: one thread", source);
}

/* The hand counts hold for the static counts and for the instrumented run alike. */
static void test_matmul_by_hand(void) {
  pc_program *prog;
  pc_kernel *k = lower_steps("matmul:64,48,40", "[[\"SP\",2,0,64,[5],1],[\"AN\",2,0,3]]", &prog);
  if (!k) return;
  pt_diag d = {0};
  pa_profile *p = static_of(k, THREADS, &d);
  CHECK_MSG(p, "%s", d.msg);
  pa_profile *p1 = static_of(k, 1, &d);
  CHECK_MSG(p1, "%s", d.msg);
  matmul_by_hand(p, p1, "static");
  pa_profile *r = instrumented_of(k, THREADS, &d);
  CHECK_MSG(r, "%s", d.msg);
  pa_profile *r1 = instrumented_of(k, 1, &d);
  CHECK_MSG(r1, "%s", d.msg);
  if (r && r1) matmul_by_hand(r, r1, "instrumented");
  pa_profile_free(r1);
  pa_profile_free(r);
  pa_profile_free(p1);
  pa_profile_free(p);
  pc_kernel_free(k);
  pc_program_free(prog);
}

/* How a parallel body's work falls on its iterations (chunk_work), and the busiest thread's
 * share of it. i split [64, 4] and fused whole: 256 iterations of which only the first 64
 * pass the guard i < 64, so with 4 threads the first chunk holds all the work (mm512 #12 of
 * the saved sets, measured as slow on 16 threads as on one). */
static void test_chunk_work_by_hand(void) {
  pc_program *prog;
  pc_kernel *k = lower_steps("matmul:64,48,40", "[[\"SP\",2,0,64,[64,4],1],[\"FU\",2,[0,1,2]],[\"AN\",2,0,3]]", &prog);
  if (!k) return;
  pt_diag d = {0};
  pa_profile *p = static_of(k, 1, &d);
  CHECK_MSG(p, "%s", d.msg);
  const pa_function *f = p ? pa_profile_function(p, "portent_matmul_par0") : NULL;
  CHECK(f && f->chunk_iterations == 256 && f->n_chunk_work == PA_CHUNK_PARTS);
  if (f && f->n_chunk_work == PA_CHUNK_PARTS) {
    for (int s = 1; s < 16; s++) CHECK(f->chunk_work[s] == f->chunk_work[0]); /* 4 iterations that pass */
    for (int s = 16; s < PA_CHUNK_PARTS; s++) CHECK(f->chunk_work[s] * 1000 < f->chunk_work[0]);
    CHECK(pa_chunk_share(f, 1) == 1);
    CHECK_MSG(pa_chunk_share(f, 4) > 0.99, "4 threads: the first holds %g of the work", pa_chunk_share(f, 4));
    CHECK(fabs(pa_chunk_share(f, 8) - 0.5) < 0.01);
    /* the JSON keeps it */
    char *json = pa_profile_to_json(p);
    pa_profile *q = pa_profile_parse(json, "chunks", &d);
    const pa_function *g = q ? pa_profile_function(q, "portent_matmul_par0") : NULL;
    CHECK_MSG(g && g->chunk_iterations == 256 && g->n_chunk_work == PA_CHUNK_PARTS &&
                  memcmp(g->chunk_work, f->chunk_work, sizeof(double) * PA_CHUNK_PARTS) == 0,
              "%s", d.msg);
    pa_profile_free(q);
    /* more parts than iterations is a corrupted file: an error naming the field */
    char *it = strstr(json, "\"iterations\":");
    if (it) {
      it += strlen("\"iterations\":");
      while (*it == ' ') it++;
      memcpy(it, "016", 3); /* was 256 */
      pt_diag_clear(&d);
      CHECK(pa_profile_parse(json, "chunks.json", &d) == NULL);
      CHECK_MSG(strstr(d.msg, "chunks.json") && strstr(d.msg, "chunks"), "%s", d.msg);
    }
    CHECK(it);
    free(json);
  }
  const pa_function *kf = p ? pa_profile_function(p, "portent_matmul") : NULL;
  CHECK(kf && kf->n_chunk_work == 0 && pa_chunk_share(kf, 4) < 0); /* not a parallel body */
  pa_profile_free(p);
  pc_kernel_free(k);
  pc_program_free(prog);
  /* split by 5: 13 iterations, the last with 4 of its 5 rows; one part per iteration */
  k = lower_steps("matmul:64,48,40", "[[\"SP\",2,0,64,[5],1],[\"AN\",2,0,3]]", &prog);
  if (!k) return;
  p = static_of(k, THREADS, &d);
  f = p ? pa_profile_function(p, "portent_matmul_par0") : NULL;
  CHECK(f && f->chunk_iterations == 13 && f->n_chunk_work == 13);
  if (f && f->n_chunk_work == 13) {
    CHECK(f->chunk_work[12] < f->chunk_work[0] && f->chunk_work[12] > 0.75 * f->chunk_work[0]);
    double share = pa_chunk_share(f, THREADS), total = 0; /* chunks of 5, 4, 4 iterations */
    for (int s = 0; s < 13; s++) total += f->chunk_work[s];
    CHECK(fabs(share - 5 * f->chunk_work[0] / total) < 1e-12);
  }
  pa_profile_free(p);
  pc_kernel_free(k);
  pc_program_free(prog);
}

/* conv2d NCHW, 1x4x10x10 input, 6 filters of 3x3, stride 1, pad 1, unscheduled: the padding
 * stage is a 4 x 12 x 12 nest whose rows 1..10 copy data and rows 0 and 11 are zero; O3
 * unrolls the 4 channels and the 3 x 3 x 4 reduction, leaving ff (6) x yy (10) x xx (10). */
static void conv_by_hand(const pa_profile *p, const char *source) {
  const pa_function *f = p ? pa_profile_function(p, "portent_conv2d_nchw") : NULL;
  CHECK_MSG(f && f->calls == 1, "%s", source);
  if (!f) return;
  CHECK_MSG(count_of(f, "entry") == 1, "%s", source);
  for (int c = 0; c < 4; c++) { /* one unrolled copy per channel */
    char row[32], inner[32], edge[48];
    snprintf(row, sizeof row, c ? "i2.%d" : "i2", c);
    snprintf(inner, sizeof inner, c ? "sel.j.11.%d" : "sel.j.11", c);
    snprintf(edge, sizeof edge, c ? "i3.us.preheader.%d" : "i3.us.preheader", c);
    CHECK_MSG(count_of(f, row) == 12, "%s: %s", source, row);
    CHECK_MSG(count_of(f, inner) == 10, "%s: %s", source, inner); /* rows 1..10 */
    CHECK_MSG(count_of(f, edge) == 2, "%s: %s", source, edge);    /* rows 0 and 11 */
  }
  CHECK_MSG(count_of(f, "ff") == 6, "%s", source);
  CHECK_MSG(count_of(f, "yy") == 6 * 10, "%s", source);
  CHECK_MSG(count_of(f, "xx") == 6 * 10 * 10, "%s", source);
}

/* The hand counts hold for the static counts and for the instrumented run alike. */
static void test_conv_by_hand(void) {
  pc_program *prog;
  pc_kernel *k = lower_steps("conv2d_nchw:1,4,10,10,6,3,3,1,1,1,1", NULL, &prog);
  if (!k) return;
  pt_diag d = {0};
  pa_profile *p = static_of(k, THREADS, &d);
  CHECK_MSG(p, "%s", d.msg);
  conv_by_hand(p, "static");
  pa_profile *r = instrumented_of(k, THREADS, &d);
  CHECK_MSG(r, "%s", d.msg);
  if (r) conv_by_hand(r, "instrumented");
  pa_profile_free(r);
  pa_profile_free(p);
  pc_kernel_free(k);
  pc_program_free(prog);
}

int main(void) {
  bool quick = getenv("PORTENT_TEST_QUICK") != NULL;
  test_matmul_by_hand();
  test_conv_by_hand();
  test_chunk_work_by_hand();
  test_suite(quick);
  TEST_DONE();
}
