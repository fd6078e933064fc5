/* libFuzzer target for the record and step-list parsers: any input either fails with a
 * diagnostic or parses into something that formats and reads back unchanged.
 * Build: cmake -DCMAKE_C_COMPILER=clang-19 -DPORTENT_FUZZ=ON; run: fuzz_record SCRATCH_DIR tests/fuzz/corpus_record */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "compiler/compiler.h"

static void require(int ok, const char *what, const char *text) {
  if (ok) return;
  fprintf(stderr, "fuzz_record: %s\n%s\n", what, text ? text : "(null)");
  abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  char *text = malloc(size + 1);
  memcpy(text, data, size);
  text[size] = 0;
  pc_record *r = malloc(sizeof *r), *back = malloc(sizeof *back);
  pt_diag d = {0};
  int rc = pc_record_parse(text, r, &d);
  require(rc == 0 || rc == PC_RECORD_SKIP || (rc == PT_ERR_INPUT && d.msg[0]), "parse result without a message", text);
  if (rc == 0) {
    char *line = pc_record_format(r);
    require(line != NULL, "a parsed record does not format", text);
    pt_diag_clear(&d);
    require(pc_record_parse(line, back, &d) == 0, d.msg, line);
    memcpy(back->version, r->version, sizeof back->version);
    require(memcmp(r, back, sizeof *r) == 0, "record changed in a round trip", line);
    free(line);
  }
  int n = 0, n2 = 0;
  pt_diag_clear(&d);
  if (pc_steps_from_json(text, &n, r->steps, PC_MAX_STEPS, &d) == 0) {
    char *json = pc_steps_to_json(n, r->steps);
    require(json != NULL, "parsed steps do not format", text);
    pt_diag_clear(&d);
    require(pc_steps_from_json(json, &n2, back->steps, PC_MAX_STEPS, &d) == 0 && n2 == n, d.msg, json);
    require(memcmp(r->steps, back->steps, (size_t)n * sizeof(pc_step)) == 0, "steps changed in a round trip", json);
    free(json);
  }
  free(back);
  free(r);
  free(text);
  return 0;
}
