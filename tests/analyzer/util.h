/* Helpers the analyzer tests share: find blocks by IR label, compare successor sets. */
#ifndef PA_TEST_UTIL_H
#define PA_TEST_UTIL_H
#include <stdarg.h>
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
#endif
