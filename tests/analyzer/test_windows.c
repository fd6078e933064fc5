/* The windowed run (pa_options.windowed: the compiled kernel runs natively except in time
 * windows of its block executions, whose exact histograms are scaled to the whole run) against
 * the full instrumented run: with every block measured the histograms are equal bin for bin;
 * with the default windows the miss-ratio curves stay within 0.05 over 4 KiB..64 MiB and the
 * scaled access count within 3%, on default and random schedules (whose parallel ranges are
 * too short for pa_profile_traced's windows); more than one thread is refused. (Within 1%
 * while masked loads counted their whole vector; their active lanes now vary over the run,
 * fewer on conv2d's padded rows than elsewhere, which windows in time sample: -2.2% on its
 * default schedule.) */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analyzer/analyzer.h"
#include "compiler/compiler.h"
#include "schedules.h"
#include "test.h"

static pa_profile *run_of(pc_kernel *k, int threads, const pa_options *o, pt_diag *d) {
  int nb = pc_kernel_n_buffers(k);
  int64_t sizes[PC_MAX_STAGES];
  for (int b = 0; b < nb; b++) sizes[b] = pc_kernel_buffer_numel(k, b);
  pa_run_spec *spec = pa_run_spec_portent(pc_kernel_name(k), nb, sizes, threads, 1);
  spec->timeout_s = 60;
  pa_profile *p = pa_profile_llvm(pc_kernel_module(k), spec, o, d);
  pa_run_spec_free(spec);
  return p;
}

static bool same_hist(const pa_reuse_hist *a, const pa_reuse_hist *b) {
  bool same = a->cold == b->cold && a->accesses == b->accesses;
  for (int i = 0; i < PA_REUSE_BINS; i++) same &= a->bins[i] == b->bins[i];
  return same;
}

static void check(const char *what, const pc_state *s) {
  pt_diag d = {0};
  pc_kernel *k = pc_lower(s, &(pc_lower_opts){0}, &d);
  if (!k) return;
  pa_profile *full = run_of(k, 1, &(pa_options){.sample_rate = 1}, &d);
  CHECK_MSG(full, "%s: full run: %s", what, d.msg);
  pa_profile *all = run_of(k, 1, &(pa_options){.windowed = true, .windows = {.share = 1}}, &d);
  CHECK_MSG(all, "%s: windowed, share 1: %s", what, d.msg);
  pa_profile *w = run_of(k, 1, &(pa_options){.windowed = true}, &d);
  CHECK_MSG(w, "%s: windowed: %s", what, d.msg);
  if (full && all && w) {
    const pa_reuse_hist *a = &full->reuse_total;
    CHECK_MSG(same_hist(a, &all->reuse_total), "%s: every block measured: %.0f accesses %.0f cold, run: %.0f / %.0f (or bins differ)",
              what, all->reuse_total.accesses, all->reuse_total.cold, a->accesses, a->cold);
    double dist = pa_reuse_mrc_distance(a, &w->reuse_total, 4096 / PA_LINE_BYTES, (64 << 20) / PA_LINE_BYTES);
    double acc = w->reuse_total.accesses / a->accesses - 1;
    printf("  %s: windows' miss-ratio curve within %.4f of the run's, accesses %+.4f%%\n", what, dist, 100 * acc);
    CHECK_MSG(dist <= 0.05, "%s: windows' miss-ratio curve %.4f from the run's (bound 0.05)", what, dist);
    CHECK_MSG(acc > -0.03 && acc < 0.03, "%s: windows scaled to %.0f accesses, the run made %.0f", what,
              w->reuse_total.accesses, a->accesses);
    CHECK_MSG(w->window_share == 0.05 && strcmp(w->counts_source, "static") == 0, "%s: window_share %g, counts %s", what,
              w->window_share, w->counts_source);
    for (int f = 0; f < full->n_functions; f++)
      for (int b = 0; b < full->functions[f].n_blocks; b++)
        CHECK_MSG(full->functions[f].blocks[b].count == w->functions[f].blocks[b].count, "%s: block %d:%d count %llu vs %llu",
                  what, f, b, (unsigned long long)w->functions[f].blocks[b].count,
                  (unsigned long long)full->functions[f].blocks[b].count);
  }
  pa_profile_free(all);
  pa_profile_free(w);
  pa_profile_free(full);
  pc_kernel_free(k);
}

static void check_schedule(const char *what, const pc_state *s, bool is_default, void *ctx) {
  (void)is_default, (void)ctx;
  check(what, s);
}

static void workload(const char *name, int randoms) { for_each_schedule(name, randoms, 11, check_schedule, NULL); }

/* Windows are per thread and placed by one thread's static counts: two threads are refused. */
static void refuses_threads(void) {
  pt_diag d = {0};
  pc_program *p = pc_workload_build("matmul:64,64,64", &d);
  CHECK_MSG(p, "%s", d.msg);
  if (!p) return;
  pc_state *s = pc_state_new(p);
  CHECK(pc_schedule_default(s, 16, &d) == 0);
  pc_kernel *k = pc_lower(s, &(pc_lower_opts){0}, &d);
  CHECK_MSG(k, "%s", d.msg);
  pa_profile *w = k ? run_of(k, 2, &(pa_options){.windowed = true}, &d) : NULL;
  CHECK_MSG(!w && d.err == PT_ERR_UNSUPPORTED && strstr(d.msg, "one thread"), "two threads: %s", w ? "windowed" : d.msg);
  pa_profile_free(w);
  pc_kernel_free(k);
  pc_state_free(s);
  pc_program_free(p);
}

int main(void) {
  bool quick = getenv("PORTENT_TEST_QUICK") != NULL;
  refuses_threads();
  workload("matmul:192,192,192", quick ? 0 : 1);
  workload("conv2d_nchw:1,32,28,28,32,3,3,1,1", quick ? 0 : 1);
  TEST_DONE();
}
