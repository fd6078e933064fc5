/* A kernel whose accesses are mostly to a small local array (fixtures/hot_local.ll: 16 hot lines
 * take two thirds of the line accesses): a 1% SHARDS sample of lines holds none or one of them,
 * so its estimate was off by about their share (531K accesses against 1.57M). The analyzer moves
 * the array to the locals region (locals.c) and tracks that region's lines at rate 1, weight 1,
 * beside the sample (reuse.c), so the sampled estimate is within a few percent of the full run,
 * plain and line-filtered, and the profile says how many lines were so tracked; not when the
 * array's pointer is passed to a function (hot_local_escaping.ll). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "analyzer/analyzer.h"
#include "test.h"
#include "util.h"

static pa_profile *profile(const char *fixture, const pa_options *opt) {
  pt_diag d = {0};
  pa_profile *p = fixture_profile(fixture,
                                  "{\"entry\": \"kernel\", \"args\": [{\"kind\": \"buffer\", \"type\": \"f32\", "
                                  "\"count\": 65536}, {\"kind\": \"buffer\", \"type\": \"f32\", \"count\": 1}]}",
                                  opt, &d);
  CHECK_MSG(p, "%s: %s", fixture, d.msg);
  return p;
}

static double rel(double x, double ref) { return ref != 0 ? fabs(x / ref - 1) : fabs(x); }

int main(void) {
  pa_profile *full = profile("hot_local", &(pa_options){.sample_rate = 1});
  const pa_options sampled[] = {{.sample_rate = 0.01}, {.sample_rate = 0.01, .line_filter = true}};
  const char *names[] = {"1%", "1%, line filter"};
  if (full) {
    const pa_reuse_hist *f = &full->reuse_total;
    /* 8 x 65536 x (a buffer load, a local load and store) + the result's load and store */
    CHECK_MSG(f->accesses == 1573122, "full run: %g accesses", f->accesses);
    CHECK_MSG(full->locals_lines == 0, "rate 1 tracks every line: locals_lines %lld", (long long)full->locals_lines);
    for (size_t i = 0; i < sizeof sampled / sizeof *sampled; i++) {
      pa_profile *p = profile("hot_local", &sampled[i]);
      if (!p) continue;
      const pa_reuse_hist *h = &p->reuse_total;
      CHECK_MSG(p->locals_lines == 16, "%s: locals_lines %lld, not the array's 16", names[i], (long long)p->locals_lines);
      CHECK_MSG(rel(h->accesses, f->accesses) < 0.01, "%s: %g accesses against %g", names[i], h->accesses, f->accesses);
      /* 64 lines: the array and a buffer line's 16 loads hit, each pass's first touch of a line
       * misses; 16384: only first touches miss (the buffer is 4096 lines; 1% plain: -4.9% when
       * the bursts' beyond-window share gave the first touches, +0.1% from the sample's own
       * count, reuse.c) */
      const int64_t sizes[] = {64, 16384};
      for (size_t k = 0; k < sizeof sizes / sizeof *sizes; k++) {
        double ms = pa_reuse_misses(h, sizes[k]), mf = pa_reuse_misses(f, sizes[k]);
        printf("%s: %.0f misses at %lld lines, the full run %.0f (%+.1f%%)\n", names[i], ms, (long long)sizes[k], mf,
               100 * (ms / mf - 1));
        CHECK_MSG(rel(ms, mf) < 0.05, "%s: %g misses at %lld lines against %g", names[i], ms, (long long)sizes[k], mf);
      }
      pa_profile_free(p);
    }
  }
  /* the array's pointer passed to a function: not tracked at weight 1 (a callee's accesses would
   * be tested by their hash alone), the same accesses at rate 1 */
  pa_profile *esc = profile("hot_local_escaping", &sampled[0]), *esc_full = profile("hot_local_escaping", &(pa_options){.sample_rate = 1});
  if (esc) CHECK_MSG(esc->locals_lines == 0, "escaping local: locals_lines %lld", (long long)esc->locals_lines);
  if (esc_full && full)
    CHECK_MSG(esc_full->reuse_total.accesses == full->reuse_total.accesses, "escaping local at rate 1: %g accesses",
              esc_full->reuse_total.accesses);
  pa_profile_free(esc);
  pa_profile_free(esc_full);
  pa_profile_free(full);
  TEST_DONE();
}
