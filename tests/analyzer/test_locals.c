/* Static locals moved to a region of their own (analyzer/locals.c): a kernel's local array
 * gives the same sampled profile whatever else its frame holds (frame_local.ll against
 * frame_local_shifted.ll, whose extra local moves the array on the stack), and the kernel still
 * reads back what it stored (it traps otherwise: a failed run). */
#include <stdlib.h>

#include "analyzer/analyzer.h"
#include "test.h"
#include "util.h"

static pa_profile *profile(const char *fixture, const pa_options *opt) {
  pt_diag d = {0};
  pa_profile *p = fixture_profile(fixture,
                                  "{\"entry\":\"kernel\",\"args\":[{\"kind\":\"buffer\",\"type\":\"i64\","
                                  "\"count\":1},{\"kind\":\"scalar\",\"type\":\"i64\",\"value\":0}]}",
                                  opt, &d);
  CHECK_MSG(p, "%s: %s", fixture, d.msg);
  return p;
}

static int same_hist(const pa_reuse_hist *a, const pa_reuse_hist *b) {
  int same = a->accesses == b->accesses && a->cold == b->cold && a->has_quarters == b->has_quarters &&
             a->has_sets == b->has_sets;
  for (int k = 0; k < PA_REUSE_BINS; k++) {
    same &= a->bins[k] == b->bins[k];
    for (int q = 0; q < 4; q++) same &= a->quarters[k][q] == b->quarters[k][q];
  }
  for (int k = 0; k < PA_SET_BINS; k++) same &= a->sets[k] == b->sets[k];
  return same;
}

int main(void) {
  const pa_options opts[] = {{.sample_rate = 0.05}, {.sample_rate = 0.05, .line_filter = true}, {.sample_rate = 1}};
  const char *names[] = {"sampled 5%", "sampled 5%, line filter", "every access"};
  for (size_t i = 0; i < sizeof opts / sizeof *opts; i++) {
    pa_profile *a = profile("frame_local", &opts[i]), *b = profile("frame_local_shifted", &opts[i]);
    if (a && b) {
      const pa_reuse_hist *ha = &a->reuse_total, *hb = &b->reuse_total;
      CHECK_MSG(same_hist(ha, hb), "%s: the extra local changed the profile: accesses %g / %g, cold %g / %g",
                names[i], ha->accesses, hb->accesses, ha->cold, hb->cold);
      if (opts[i].sample_rate == 1) /* 20 x (4096 stores + 4096 loads) + the result; 256 + 1 lines */
        CHECK_MSG(ha->accesses == 163841 && ha->cold == 257, "accesses %g, cold %g", ha->accesses, ha->cold);
    }
    pa_profile_free(a);
    pa_profile_free(b);
  }
  TEST_DONE();
}
