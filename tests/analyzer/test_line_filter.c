/* The per-reference line filter (pa_options.line_filter, analyzer/line_filter.c): on a
 * hand-written loop the repeats land in the bin the bound names and the profile equals the
 * full run's bin for bin; on portent kernels (default and random schedules) the filter applies
 * to some accesses, at rate 1 it keeps every access and first touch exactly and the miss-ratio
 * curve within 0.02 of the full run's over 4 KiB..64 MiB (the LRU order of skipped repeats is
 * the only approximation). At 1% both the plain sampled profile and the line-filtered one keep
 * the curve within 0.05 absolute of the full run's (issue 11's bound for the sampling mode, no
 * slack: the largest per kernel is printed), over the default and 10 random schedules of each
 * (conv random 4 measured 0.1056 before bursts were post-stratified by block, reuse.c). The matmul's default schedule must filter
 * something (its broadcast loads of A); the conv's innermost loop touches more than 64 lines
 * per iteration, so there the filter stands aside. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <llvm-c/Analysis.h>
#include <llvm-c/Core.h>

#include "analyzer/internal.h"
#include "compiler/compiler.h"
#include "schedules.h"
#include "test.h"

static bool same_hist(const pa_reuse_hist *a, const pa_reuse_hist *b) {
  bool same = a->cold == b->cold && a->accesses == b->accesses;
  for (int i = 0; i < PA_REUSE_BINS; i++) same &= a->bins[i] == b->bins[i];
  return same;
}

static double mrc(const pa_reuse_hist *a, const pa_reuse_hist *b) {
  return pa_reuse_mrc_distance(a, b, 4096 / PA_LINE_BYTES, (64 << 20) / PA_LINE_BYTES);
}

/* Accesses of module `mod` the filter applies to (planned on a copy). */
static int planned(LLVMModuleRef mod) {
  LLVMModuleRef copy = LLVMCloneModule(mod);
  pa_module *m = pa_module_from_llvm(copy);
  pt_diag d = {0};
  pa_profile *p = pa_profile_static(m, &d);
  LLVMValueRef *fns;
  int nf = pa_defined_functions(copy, &fns), n = 0;
  LLVMBuilderRef b = LLVMCreateBuilderInContext(LLVMGetModuleContext(copy));
  for (int i = 0; p && i < nf; i++) {
    pa_filtered_access *fa;
    n += pa_line_filter_plan(b, fns[i], &p->functions[i], &fa);
    free(fa);
  }
  LLVMDisposeBuilder(b);
  char *msg = NULL;
  CHECK_MSG(!LLVMVerifyModule(copy, LLVMReturnStatusAction, &msg), "the planned module does not verify: %s", msg);
  LLVMDisposeMessage(msg);
  free(fns);
  pa_profile_free(p);
  pa_module_free(m);
  LLVMDisposeModule(copy);
  return n;
}

static void fixture(void) {
  pt_diag d = {0};
  pa_module *m = pa_module_load(PA_FIXTURE_DIR "/line_filter.ll", &d);
  CHECK_MSG(m, "%s", d.msg);
  if (!m) return;
  CHECK_MSG(planned(pa_module_llvm(m)) == 1, "the filter applies to a[i] only");
  pa_run_spec *s = pa_run_spec_parse("{\"version\": 1, \"entry\": \"walk\", \"args\": [{\"kind\": \"buffer\", \"type\": "
                                     "\"f32\", \"count\": 1024}, {\"kind\": \"buffer\", \"type\": \"f32\", \"count\": 16384}]}",
                                     "inline spec", &d);
  CHECK_MSG(s, "%s", d.msg);
  pa_profile *full = s ? pa_profile_build(m, s, &(pa_options){.sample_rate = 1}, &d) : NULL;
  pa_profile *filt = s ? pa_profile_build(m, s, &(pa_options){.sample_rate = 1, .line_filter = true}, &d) : NULL;
  CHECK_MSG(full && filt, "%s", d.msg);
  if (full && filt) {
    const pa_reuse_hist *h = &filt->reuse_total;
    /* 1024 - 64 repeats of a's lines at distance 1; 64 + 1024 first touches */
    CHECK_MSG(h->bins[1] == 960 && h->cold == 1088 && h->accesses == 2048, "bin 1 %.0f cold %.0f accesses %.0f",
              h->bins[1], h->cold, h->accesses);
    CHECK_MSG(same_hist(&full->reuse_total, h), "the filtered profile differs from the full run's");
    CHECK(filt->line_filter && !full->line_filter);
  }
  pa_profile_free(full);
  pa_profile_free(filt);
  pa_run_spec_free(s);
  pa_module_free(m);
}

static pa_profile *run_of(pc_kernel *k, const pa_options *o, pt_diag *d) {
  int nb = pc_kernel_n_buffers(k);
  int64_t sizes[PC_MAX_STAGES];
  for (int b = 0; b < nb; b++) sizes[b] = pc_kernel_buffer_numel(k, b);
  pa_run_spec *spec = pa_run_spec_portent(pc_kernel_name(k), nb, sizes, 1, 1);
  spec->timeout_s = 60;
  pa_profile *p = pa_profile_llvm(pc_kernel_module(k), spec, o, d);
  pa_run_spec_free(spec);
  return p;
}

/* The largest 1% distances over a workload's schedules: plain SHARDS and line-filtered. */
typedef struct {
  double plain, filtered;
} worst_1pct;

static void check(const char *what, const pc_state *s, bool must_filter, worst_1pct *worst) {
  pt_diag d = {0};
  pc_kernel *k = pc_lower(s, &(pc_lower_opts){0}, &d);
  if (!k) return;
  int n = planned(pc_kernel_module(k));
  CHECK_MSG(n > 0 || !must_filter, "%s: the filter applies to no access", what);
  pa_profile *full = run_of(k, &(pa_options){.sample_rate = 1}, &d);
  CHECK_MSG(full, "%s: full run: %s", what, d.msg);
  pa_profile *exact = run_of(k, &(pa_options){.sample_rate = 1, .line_filter = true}, &d);
  CHECK_MSG(exact, "%s: filtered, rate 1: %s", what, d.msg);
  pa_profile *sampled = run_of(k, &(pa_options){.sample_rate = 0.01, .line_filter = true, .static_counts = true}, &d);
  CHECK_MSG(sampled, "%s: filtered, rate 0.01: %s", what, d.msg);
  pa_profile *plain = run_of(k, &(pa_options){.sample_rate = 0.01, .static_counts = true}, &d);
  CHECK_MSG(plain, "%s: rate 0.01: %s", what, d.msg);
  if (full && exact && sampled && plain) {
    const pa_reuse_hist *a = &full->reuse_total;
    double de = mrc(a, &exact->reuse_total), ds = mrc(a, &sampled->reuse_total), dp = mrc(a, &plain->reuse_total);
    double acc = sampled->reuse_total.accesses / a->accesses - 1;
    printf("  %s: %d filtered accesses; miss-ratio curve within %.4f (rate 1) and %.4f (1%%; %.4f unfiltered) of the "
           "run's, 1%% accesses %+.2f%%\n", what, n, de, ds, dp, 100 * acc);
    CHECK_MSG(exact->reuse_total.accesses == a->accesses && exact->reuse_total.cold == a->cold,
              "%s: rate 1: %.0f accesses %.0f cold, run: %.0f / %.0f", what, exact->reuse_total.accesses,
              exact->reuse_total.cold, a->accesses, a->cold);
    CHECK_MSG(de <= 0.02, "%s: rate 1: miss-ratio curve %.4f from the run's (bound 0.02)", what, de);
    /* the sampling mode's bound, for the plain 1% profile and the filtered one alike */
    CHECK_MSG(dp <= 0.05, "%s: 1%%: miss-ratio curve %.4f from the run's (bound 0.05)", what, dp);
    CHECK_MSG(ds <= 0.05, "%s: 1%% line-filtered: miss-ratio curve %.4f from the run's (bound 0.05)", what, ds);
    if (dp > worst->plain) worst->plain = dp;
    if (ds > worst->filtered) worst->filtered = ds;
  }
  pa_profile_free(plain);
  pa_profile_free(full);
  pa_profile_free(exact);
  pa_profile_free(sampled);
  pc_kernel_free(k);
}

typedef struct {
  const char *name;
  worst_1pct worst;
} workload_ctx;

/* The matmul's default schedule must filter its broadcast loads of A. */
static void check_schedule(const char *what, const pc_state *s, bool is_default, void *ctx) {
  workload_ctx *w = ctx;
  check(what, s, is_default && strncmp(w->name, "matmul", 6) == 0, &w->worst);
}

static void workload(const char *name, int randoms) {
  workload_ctx w = {name, {0, 0}};
  for_each_schedule(name, randoms, 11, check_schedule, &w);
  printf("%s, %d schedules: largest 1%% miss-ratio distance %.4f (line-filtered %.4f), bound 0.05\n", name,
         randoms + 1, w.worst.plain, w.worst.filtered);
}

int main(void) {
  bool quick = getenv("PORTENT_TEST_QUICK") != NULL;
  const char *env = getenv("PORTENT_LF_RANDOMS"); /* another count of random schedules, to explore */
  int randoms = env ? atoi(env) : quick ? 0 : 10;
  fixture();
  workload("matmul:192,192,192", randoms);
  workload("conv2d_nchw:1,32,28,28,32,3,3,1,1", randoms);
  TEST_DONE();
}
