/* Traced reuse (pa_profile_traced: addresses interpreted, no run) against the full instrumented
 * run: with every iteration traced the histograms are equal bin for bin; with the default time
 * windows the miss-ratio curves stay within 0.05 over 4 KiB..64 MiB (the bound), on
 * default and random schedules; an address loaded from memory is refused, not guessed. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "analyzer/analyzer.h"
#include "compiler/compiler.h"
#include "schedules.h"
#include "test.h"

static pa_profile *full_of(pc_kernel *k, pt_diag *d) {
  int nb = pc_kernel_n_buffers(k);
  int64_t sizes[PC_MAX_STAGES];
  for (int b = 0; b < nb; b++) sizes[b] = pc_kernel_buffer_numel(k, b);
  pa_run_spec *spec = pa_run_spec_portent(pc_kernel_name(k), nb, sizes, 1, 1);
  spec->timeout_s = 60;
  pa_profile *p = pa_profile_llvm(pc_kernel_module(k), spec, &(pa_options){.sample_rate = 1}, d);
  pa_run_spec_free(spec);
  return p;
}

static pa_profile *traced_of(pc_kernel *k, const pa_trace_opts *o, pt_diag *d) {
  pa_module *m = pa_module_from_llvm(pc_kernel_module(k));
  pa_profile *p = pa_profile_traced(m, &(pa_static_opts){pc_kernel_name(k), 1}, o, d);
  pa_module_free(m);
  return p;
}

/* One schedule: exact equality at share 1, and the windows' curve within 0.05. Returns the
 * windows' distance (-1 when not traced). */
static double check(const char *what, const pc_state *s, bool windows) {
  pt_diag d = {0};
  pc_kernel *k = pc_lower(s, &(pc_lower_opts){0}, &d);
  if (!k) return -1;
  pa_profile *full = full_of(k, &d);
  CHECK_MSG(full, "%s: full run: %s", what, d.msg);
  pa_profile *all = traced_of(k, &(pa_trace_opts){.share = 1}, &d);
  double dist = -1;
  if (!all) {
    CHECK_MSG(d.err == PT_ERR_UNSUPPORTED, "%s: trace failed: %s", what, d.msg);
    printf("  %s: not traced: %s\n", what, d.msg);
  } else if (full) {
    const pa_reuse_hist *a = &full->reuse_total, *b = &all->reuse_total;
    bool same = a->cold == b->cold && a->accesses == b->accesses;
    for (int i = 0; i < PA_REUSE_BINS; i++) same &= a->bins[i] == b->bins[i];
    CHECK_MSG(same, "%s: every iteration traced: %.0f accesses %.0f cold, run: %.0f / %.0f (or bins differ)", what,
              b->accesses, b->cold, a->accesses, a->cold);
    CHECK_MSG(strcmp(all->counts_source, "static") == 0, "%s: counts %s", what, all->counts_source);
    if (windows) {
      pa_profile *w = traced_of(k, NULL, &d);
      CHECK_MSG(w, "%s: windows: %s", what, d.msg);
      if (w) {
        dist = pa_reuse_mrc_distance(a, &w->reuse_total, 4096 / PA_LINE_BYTES, (64 << 20) / PA_LINE_BYTES);
        printf("  %s: windows' miss-ratio curve within %.4f of the run's\n", what, dist);
        CHECK_MSG(dist <= 0.05, "%s: windows' miss-ratio curve %.4f from the run's (bound 0.05)", what, dist);
      }
      pa_profile_free(w);
    }
  }
  pa_profile_free(all);
  pa_profile_free(full);
  pc_kernel_free(k);
  return dist;
}

static void check_schedule(const char *what, const pc_state *s, bool is_default, void *windows) {
  (void)is_default;
  check(what, s, *(bool *)windows);
}

static void workload(const char *name, int randoms, bool windows) {
  for_each_schedule(name, randoms, 7, check_schedule, &windows);
}

/* An index read from memory decides the address: the trace must refuse it. */
static void refuses_indirect(void) {
  const char *ir = "define void @k(ptr %a, ptr %idx) {\n"
                   "entry:\n  br label %l\n"
                   "l:\n  %i = phi i64 [0, %entry], [%n, %l]\n"
                   "  %p = getelementptr i64, ptr %idx, i64 %i\n  %j = load i64, ptr %p\n"
                   "  %q = getelementptr float, ptr %a, i64 %j\n  store float 1.0, ptr %q\n"
                   "  %n = add i64 %i, 1\n  %c = icmp ult i64 %n, 100\n  br i1 %c, label %l, label %x\n"
                   "x:\n  ret void\n}\n";
  char path[] = "/tmp/pa_trace_XXXXXX.ll";
  int fd = mkstemps(path, 3);
  CHECK(fd >= 0);
  if (fd < 0) return;
  CHECK(write(fd, ir, strlen(ir)) == (ssize_t)strlen(ir));
  close(fd);
  pt_diag d = {0};
  pa_module *m = pa_module_load(path, &d);
  CHECK_MSG(m, "%s", d.msg);
  pa_profile *p = m ? pa_profile_traced(m, &(pa_static_opts){"k", 1}, NULL, &d) : NULL;
  CHECK_MSG(!p && d.err == PT_ERR_UNSUPPORTED && strstr(d.msg, "loaded from memory"), "indirect address: %s",
            p ? "traced" : d.msg);
  pa_profile_free(p);
  pa_module_free(m);
  unlink(path);
}

int main(void) {
  bool quick = getenv("PORTENT_TEST_QUICK") != NULL;
  refuses_indirect();
  workload("matmul:40,24,36", quick ? 1 : 3, false);
  workload("conv2d_nchw:1,8,14,14,8,3,3,1,1", quick ? 0 : 2, false);
  /* windows need a parallel range several times the windows: 256 x 256 x 256 */
  workload("matmul:256,256,256", quick ? 0 : 2, true);
  TEST_DONE();
}
