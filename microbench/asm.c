/* Reading the assembly of generated kernels: a function's body, and the instruction its loop
 * repeats most (what the table records as "instruction", and what the tests check). */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

char *pmb_asm_function(const char *s, const char *name) {
  size_t n = strlen(name);
  const char *p = s;
  while ((p = strstr(p, name))) {
    bool at_line = p == s || p[-1] == '\n';
    if (at_line && p[n] == ':') break;
    p += n;
  }
  if (!p) return NULL;
  const char *end = strstr(p, ".Lfunc_end");
  if (!end) end = p + strlen(p);
  char *body = malloc((size_t)(end - p) + 1);
  memcpy(body, p, (size_t)(end - p));
  body[end - p] = 0;
  return body;
}

/* Loop bookkeeping and operand set-up (moves, sign extension for division, the all-ones
 * mask a gather consumes), never what a kernel measures unless there is nothing else. */
static bool overhead(const char *mn) {
  static const char *const names[] = {"incq", "decq", "cmpq", "jl", "jne", "jb", "jge", "b.ne", "cmp", "b.lt",
                                      "cltd", "cqto", "kxnorw", "kxnorb", "kxnorq", "kmovw", "kmovb"};
  for (size_t i = 0; i < PT_ARRAY_LEN(names); i++)
    if (strcmp(mn, names[i]) == 0) return true;
  return strncmp(mn, "mov", 3) == 0;
}

/* "vxorps %xmm1, %xmm1, %xmm1": the zeroing idiom, set-up rather than work. */
static bool zeroing(const char *mn, const char *operands, size_t len) {
  if (!strstr(mn, "xor")) return false;
  char ops[128];
  snprintf(ops, sizeof ops, "%.*s", (int)(len < 127 ? len : 127), operands);
  char *a = strtok(ops, ", \t"), *b = strtok(NULL, ", \t");
  return a && b && strcmp(a, b) == 0;
}

void pmb_asm_main_instruction(const char *s, const char *name, char *out, size_t n) {
  out[0] = 0;
  char *body = pmb_asm_function(s, name);
  if (!body) return;
  /* the kernels' only loop: from the first basic-block label to its closing branch */
  char *loop = strstr(body, "\n.LBB");
  loop = loop ? loop + 1 : body;
  for (char *p = strchr(loop, '\n'); p; p = strchr(p + 1, '\n'))
    if (p[1] == '\t' && p[2] == 'j') {
      p[1] = 0;
      break;
    }
  struct { char mn[32], reg[8]; int count; } seen[64];
  int n_seen = 0;
  for (char *line = loop; line && *line; line = strchr(line, '\n') ? strchr(line, '\n') + 1 : NULL) {
    const char *p = line;
    while (*p == ' ' || *p == '\t') p++;
    if (strncmp(p, "{vex}", 5) == 0) p += 5; /* AVX-VNNI's VEX form of an EVEX mnemonic */
    while (*p == ' ' || *p == '\t') p++;
    if (!isalpha((unsigned char)*p)) continue;
    char mn[32];
    int k = 0;
    while (k < 31 && p[k] && !isspace((unsigned char)p[k])) mn[k] = p[k], k++;
    mn[k] = 0;
    const char *eol = strchr(p, '\n');
    size_t len = eol ? (size_t)(eol - p) : strlen(p);
    char reg[8] = "";
    for (const char *r = p; r < p + len; r++)
      if (*r == '%' && (r[1] == 'x' || r[1] == 'y' || r[1] == 'z') && r[2] == 'm' && r[3] == 'm') {
        memcpy(reg, r + 1, 3), reg[3] = 0;
        break;
      }
    if (zeroing(mn, p + k, len > (size_t)k ? len - (size_t)k : 0)) continue;
    int i = 0;
    while (i < n_seen && (strcmp(seen[i].mn, mn) || strcmp(seen[i].reg, reg))) i++;
    if (i == n_seen && n_seen < 64) {
      strcpy(seen[n_seen].mn, mn);
      strcpy(seen[n_seen].reg, reg);
      seen[n_seen++].count = 0;
    }
    if (i < n_seen) seen[i].count++;
  }
  int best = -1;
  for (int i = 0; i < n_seen; i++) {
    bool better = best < 0 || seen[i].count > seen[best].count;
    if (best >= 0 && overhead(seen[i].mn) != overhead(seen[best].mn)) better = !overhead(seen[i].mn);
    if (better) best = i;
  }
  if (best >= 0) snprintf(out, n, "%s%s%s", seen[best].mn, seen[best].reg[0] ? " " : "", seen[best].reg);
  free(body);
}
