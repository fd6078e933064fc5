/* What record.c and step_json.c share, and nothing else includes: a small JSON text writer
 * (so portent's lines are spaced like TVM's) and the transform-step codec over cJSON trees.
 * cJSON stays inside these two files: everything past them sees only pc_step / pc_record. */
#ifndef PORTENT_COMPILER_RECORD_JSON_H
#define PORTENT_COMPILER_RECORD_JSON_H

#include <cjson/cJSON.h>

#include "internal.h"

/* Growable text; `oom` latches an allocation failure so callers check once at the end. */
typedef struct pc_jbuf {
  char *s;
  size_t len, cap;
  bool oom;
} pc_jbuf;

void pc_jb_raw(pc_jbuf *b, const char *s); /* text as is */
void pc_jb_str(pc_jbuf *b, const char *s, size_t max); /* JSON string of s[0..strnlen(s,max)) */
void pc_jb_i64(pc_jbuf *b, int64_t v);
/* Shortest %g text that reads back to v; callers reject non-finite values first. */
void pc_jb_num(pc_jbuf *b, double v);

/* Parses a whole text; on failure names `what` and the byte offset where parsing stopped, or
 * says the text ends with brackets unclosed (a truncated line). */
cJSON *pc_json_parse(const char *text, const char *what, pt_diag *d);
/* Short human description of a JSON value for messages: `string "SP"`, `number 1.5`, `null`. */
const char *pc_json_describe(const cJSON *j, char *buf, size_t cap);
/* True when j is an integral number in [lo, hi]. */
bool pc_json_int(const cJSON *j, int64_t lo, int64_t hi, int64_t *out);

/* One step in record encoding, e.g. ["SP", 2, 0, 1024, [2, 1, 4], 1]. Fails (naming `what`)
 * when the step cannot be written: unknown kind, too many lengths or ids. */
int pc_step_encode(pc_jbuf *b, const pc_step *s, const char *what, pt_diag *d);
/* Decodes one step; `path` names it in messages (e.g. "record: i[1][1][3]"). */
int pc_step_decode(const cJSON *j, const char *path, pc_step *s, pt_diag *d);

#endif
