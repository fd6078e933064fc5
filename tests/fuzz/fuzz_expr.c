/* libFuzzer target: the expression parser must return a program or a positioned error for
 * any input, never crash. */
#include <stdlib.h>
#include <string.h>

#include "compiler/compiler.h"

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size) {
  char *text = malloc(size + 1);
  memcpy(text, data, size);
  text[size] = 0;
  pt_diag d = {0};
  pc_program *p = pc_expr_parse(text, "fuzz.expr", &d);
  if (!p && d.msg[0] == 0) abort(); /* a refusal must say why */
  pc_program_free(p);
  free(text);
  return 0;
}
