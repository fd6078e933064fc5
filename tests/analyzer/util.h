/* Helpers the analyzer tests share: find blocks by IR label, compare successor sets, profile a
 * fixture. */
#ifndef PA_TEST_UTIL_H
#define PA_TEST_UTIL_H
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "analyzer/analyzer.h"

static inline int block_index(const pa_function *f, const char *name) {
  for (int i = 0; f && i < f->n_blocks; i++)
    if (strcmp(f->blocks[i].name, name) == 0) return i;
  return -1;
}

static inline const pa_block *block_named(const pa_function *f, const char *name) {
  int i = block_index(f, name);
  return i < 0 ? NULL : &f->blocks[i];
}

/* True when the names of a list (preds or succs) are exactly the given ones, in any order;
 * the list of names ends with NULL. */
static inline int same_blocks(const pa_function *f, const int *xs, int n, ...) {
  va_list ap;
  va_start(ap, n);
  int k = 0, ok = 1;
  for (const char *name; (name = va_arg(ap, const char *)); k++) {
    int want = block_index(f, name), found = 0;
    for (int i = 0; i < n; i++) found |= xs[i] == want;
    ok &= want >= 0 && found;
  }
  va_end(ap);
  return ok && k == n;
}

/* The loop whose header has this label, or NULL. */
static inline const pa_loop *loop_at(const pa_function *f, const char *header) {
  int h = block_index(f, header);
  for (int i = 0; f && i < f->n_loops; i++)
    if (f->loops[i].header == h) return &f->loops[i];
  return NULL;
}

#ifdef PA_FIXTURE_DIR
/* The profile of fixtures/NAME.ll run under spec (JSON text) with opt; NULL with d filled. */
static inline pa_profile *fixture_profile(const char *name, const char *spec, const pa_options *opt, pt_diag *d) {
  char path[512];
  snprintf(path, sizeof path, "%s/%s.ll", PA_FIXTURE_DIR, name);
  pa_module *m = pa_module_load(path, d);
  pa_run_spec *s = m ? pa_run_spec_parse(spec, "spec", d) : NULL;
  pa_profile *p = s ? pa_profile_build(m, s, opt, d) : NULL;
  pa_run_spec_free(s);
  pa_module_free(m);
  return p;
}
#endif
#endif
