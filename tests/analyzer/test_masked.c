/* Masked accesses record only the lines their active lanes touch: a masked load or store from
 * its first active lane to its last (none when no lane is), a gather or scatter lane by lane,
 * with masks known only at run time and constant ones, through every kind of hook (the rate-1
 * buffer, a block that calls out, the sampled block's inline test and slow path, a cold block's
 * out-of-line call, the windowed run). fixtures/masked.ll: each case makes one masked access
 * into its own 4-line buffer, then loads one float of each line in order; the case's histogram
 * then names the lines the access touched (a line it touched is reused by its probe, one it did
 * not is first touched there). */
#include <stdlib.h>

#include "analyzer/analyzer.h"
#include "test.h"
#include "util.h"

/* A case's accesses (the masked access's lines + 4 probes; 4 cold: the buffer's lines) and its
 * probes' reuse bins (bin 1: distance 1, bin 2: distance 2 or 3). */
static const struct {
  const char *name;
  int accesses;
  int bins[3];
} cases[] = {
    {"load_partial", 5, {0, 1, 0}},    /* line 1; the whole vector: lines 0-1 */
    {"load_none", 4, {0, 0, 0}},       /* nothing */
    {"store_partial", 5, {0, 1, 0}},   /* line 1; the whole vector: lines 0-2 */
    {"store_two_lines", 6, {0, 0, 2}}, /* lines 1-2; the whole vector: lines 0-2 */
    {"const_masks", 5, {0, 1, 0}},     /* line 1 (and no lane of the load) */
    {"gather_partial", 6, {0, 0, 2}},  /* lines 1 and 2 of the lanes' 0-3 */
    {"scatter_const", 6, {0, 1, 1}},   /* lines 0 and 3 */
    {"load_direct", 5, {1, 0, 0}},     /* line 0 */
    {"store_cold", 5, {0, 1, 0}},      /* line 1; the whole vector: lines 0-2 */
};

static const char *const spec = "{\"entry\":\"masks\",\"args\":["
                                "{\"kind\":\"buffer\",\"type\":\"f32\",\"count\":64},{\"kind\":\"buffer\",\"type\":\"f32\",\"count\":64},"
                                "{\"kind\":\"buffer\",\"type\":\"f32\",\"count\":64},{\"kind\":\"buffer\",\"type\":\"f32\",\"count\":64},"
                                "{\"kind\":\"buffer\",\"type\":\"f32\",\"count\":64},{\"kind\":\"buffer\",\"type\":\"f32\",\"count\":64},"
                                "{\"kind\":\"buffer\",\"type\":\"f32\",\"count\":64},{\"kind\":\"buffer\",\"type\":\"f32\",\"count\":64},"
                                "{\"kind\":\"buffer\",\"type\":\"f32\",\"count\":64}]}";

static void check_hooks(const char *what, const pa_options *o) {
  pt_diag d = {0};
  pa_profile *p = fixture_profile("masked", spec, o, &d);
  CHECK_MSG(p, "%s: %s", what, d.msg);
  if (!p) return;
  for (size_t i = 0; i < PT_ARRAY_LEN(cases); i++) {
    const pa_function *f = pa_profile_function(p, cases[i].name);
    CHECK_MSG(f, "%s: no function %s", what, cases[i].name);
    if (!f) continue;
    const pa_reuse_hist *h = &p->reuse_by_function[f - p->functions];
    bool same = h->accesses == cases[i].accesses && h->cold == 4;
    for (int b = 0; b < PA_REUSE_BINS; b++) same &= h->bins[b] == (b < 3 ? cases[i].bins[b] : 0);
    CHECK_MSG(same, "%s: %s: %g accesses, %g cold, bins %g %g %g; want %d, 4, %d %d %d", what, cases[i].name, h->accesses,
              h->cold, h->bins[0], h->bins[1], h->bins[2], cases[i].accesses, cases[i].bins[0], cases[i].bins[1],
              cases[i].bins[2]);
  }
  pa_profile_free(p);
}

/* The trace computes no vectors: it refuses a mask that is not a constant. */
static void trace_refuses(void) {
  pt_diag d = {0};
  pa_module *m = pa_module_load(PA_FIXTURE_DIR "/masked.ll", &d);
  CHECK_MSG(m, "%s", d.msg);
  pa_profile *p = m ? pa_profile_traced(m, &(pa_static_opts){"masks", 1}, NULL, &d) : NULL;
  CHECK_MSG(!p && d.err == PT_ERR_UNSUPPORTED && strstr(d.msg, "mask is not a constant"), "traced: %s", p ? "a profile" : d.msg);
  pa_profile_free(p);
  pa_module_free(m);
}

int main(void) {
  check_hooks("buffered (rate 1)", &(pa_options){.sample_rate = 1});
  /* the sampled hooks at rate 1: every inline test passes, the runtime takes each item's lines */
  check_hooks("sampled, inline tests", &(pa_options){.sample_rate = 1, .line_filter = true, .inline_cold_blocks = true});
  check_hooks("sampled, cold blocks out of line", &(pa_options){.sample_rate = 1, .line_filter = true});
  check_hooks("windowed, every block measured", &(pa_options){.windowed = true, .windows = {.share = 1}});
  trace_refuses();
  TEST_DONE();
}
