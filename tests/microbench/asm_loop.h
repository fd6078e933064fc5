/* For the microbench tests that read a kernel's assembly (as pmb_asm_function returns it): count
 * the lines of its loop (from the first block label to the loop's closing branch), or of the
 * whole function, that a predicate accepts. */
#ifndef PORTENT_TEST_ASM_LOOP_H
#define PORTENT_TEST_ASM_LOOP_H
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

/* insn: the line without its leading blanks; line: the whole line (at most 255 characters). */
typedef bool (*asm_line_pred)(const char *insn, const char *line, const void *ctx);

static int asm_count_lines(const char *body, bool whole, asm_line_pred pred, const void *ctx) {
  int n = 0;
  const char *loop = whole ? NULL : strstr(body, "\n.LBB"); /* the loop starts at the first block label */
  for (const char *line = loop ? loop + 1 : body; line && *line;) {
    const char *eol = strchr(line, '\n');
    size_t len = eol ? (size_t)(eol - line) : strlen(line);
    char buf[256];
    snprintf(buf, sizeof buf, "%.*s", (int)(len < 255 ? len : 255), line);
    const char *p = buf;
    while (*p == ' ' || *p == '\t') p++;
    if (pred(p, buf, ctx)) n++;
    if (!whole && buf[0] == '\t' && buf[1] == 'j') break; /* the loop's closing branch */
    line = eol ? eol + 1 : NULL;
  }
  return n;
}
#endif
