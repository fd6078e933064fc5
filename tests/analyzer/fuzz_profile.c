/* libFuzzer target for the analyzer's two parsers, the program profile and the run spec: any
 * input fails with a diagnostic or parses into a profile that prints and reads back unchanged.
 * Build: cmake -DCMAKE_C_COMPILER=clang-19 -DPORTENT_FUZZ=ON; run:
 *   fuzz_profile -max_total_time=60 SCRATCH_DIR tests/analyzer/fuzz_corpus */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analyzer/analyzer.h"

static void require(int ok, const char *what, const char *text) {
  if (ok) return;
  fprintf(stderr, "fuzz_profile: %s\n%s\n", what, text ? text : "(null)");
  abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  char *text = malloc(size + 1);
  memcpy(text, data, size);
  text[size] = 0;
  pt_diag d = {0};
  pa_profile *p = pa_profile_parse(text, "input", &d);
  require(p || (d.err && d.msg[0]), "a profile failed without a message", text);
  if (p) {
    char *once = pa_profile_to_json(p);
    pt_diag_clear(&d);
    pa_profile *q = pa_profile_parse(once, "printed", &d);
    require(q != NULL, d.msg, once);
    char *twice = pa_profile_to_json(q);
    require(strcmp(once, twice) == 0, "a printed profile reads back differently", once);
    free(once);
    free(twice);
    pa_profile_free(q);
    pa_profile_free(p);
  }
  pt_diag_clear(&d);
  pa_run_spec *s = pa_run_spec_parse(text, "input", &d);
  require(s || (d.err && d.msg[0]), "a run spec failed without a message", text);
  pa_run_spec_free(s);
  free(text);
  return 0;
}
