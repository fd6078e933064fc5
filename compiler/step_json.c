/* Transform steps in TVM auto_scheduler record encoding (["SP", 2, 0, 1024, [2, 1, 4], 1], ...):
 * one layout table says which pc_step fields each step code carries, in TVM's order (the
 * WriteToRecord functions of src/auto_scheduler/transform_step.cc), and both directions expand it. */
#include <assert.h>
#include <inttypes.h>
#include <limits.h>
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "record_json.h"

static const char *const step_codes[] = {
#define X(code, text, name) text,
    PC_STEP_KINDS(X)
#undef X
};
static_assert(PT_ARRAY_LEN(step_codes) == PC_STEP_COUNT, "one record code per step kind");

const char *pc_step_code(pc_step_kind k) {
  return (unsigned)k < PC_STEP_COUNT ? step_codes[k] : NULL;
}

int pc_step_kind_from_code(const char *code) {
  if (!code) return -1;
  for (int k = 0; k < PC_STEP_COUNT; k++)
    if (strcmp(step_codes[k], code) == 0) return k;
  return -1;
}

/* ---------------------------------------------------------------- layouts */

typedef enum { FT_INT, FT_I64, FT_BOOL, FT_IDS, FT_LENGTHS, FT_STR } field_type;

typedef struct step_field {
  const char *name; /* TVM's member name, used in messages */
  field_type type;
  size_t off;       /* FT_INT FT_I64 FT_BOOL FT_STR: member of pc_step */
  size_t size;      /* FT_STR: buffer size */
  int64_t lo, hi;   /* FT_INT FT_I64: accepted range; FT_IDS FT_LENGTHS: element range */
} step_field;

#define F_INT(m, lo, hi) {#m, FT_INT, offsetof(pc_step, m), 0, lo, hi}
#define F_NAT(m) F_INT(m, 0, INT_MAX)
#define F_BOOL(m) {#m, FT_BOOL, offsetof(pc_step, m), 0, 0, 1}
#define F_STR(m, name) {name, FT_STR, offsetof(pc_step, m), sizeof(((pc_step *)0)->m), 0, 0}
#define F_IDS(name) {name, FT_IDS, 0, 0, 0, INT_MAX}
#define STAGE F_NAT(stage_id)
#define ITER F_NAT(iter_id)

/* AN annotations are TVM's IteratorAnnotation values kNone (0) .. kTensorize (11). */
static const step_field an_f[] = {STAGE, ITER, F_INT(annotation, 0, 11)};
static const step_field fu_f[] = {STAGE, F_IDS("fused_ids")};
static const step_field pr_f[] = {STAGE, ITER, F_STR(pragma, "pragma_type")};
static const step_field re_f[] = {STAGE, F_IDS("after_ids")};
/* SP extent 0 means "unknown" (TVM writes 0 when the extent is not a constant). */
static const step_field sp_f[] = {STAGE, ITER, {"extent", FT_I64, offsetof(pc_step, extent), 0, 0, INT64_MAX},
                                  {"lengths", FT_LENGTHS, 0, 0, 1, INT64_MAX}, F_BOOL(inner_to_outer)};
static const step_field fsp_f[] = {STAGE, ITER, F_NAT(src_step_id), F_NAT(n_split)};
static const step_field ffsp_f[] = {STAGE, ITER, F_IDS("src_step_ids"), F_NAT(level), F_BOOL(factor_or_nparts)};
static const step_field sa_f[] = {STAGE, ITER, F_NAT(factor), F_NAT(offset)};
static const step_field ca_f[] = {STAGE, F_NAT(target_stage_id), F_NAT(target_iter_id)};
static const step_field ci_f[] = {STAGE};
static const step_field cr_f[] = {STAGE};
static const step_field chr_f[] = {STAGE, F_STR(scope, "scope_name"), F_IDS("reader_stage_ids")};
static const step_field chw_f[] = {STAGE, F_STR(scope, "scope_name")};
static const step_field rf_f[] = {STAGE, ITER, F_NAT(factor_iter_id)};

typedef struct step_layout {
  const step_field *f;
  int n;
} step_layout;

#define L(arr) {arr, (int)PT_ARRAY_LEN(arr)}
static const step_layout layouts[] = {
    [PC_STEP_AN] = L(an_f),   [PC_STEP_FU] = L(fu_f),     [PC_STEP_PR] = L(pr_f),
    [PC_STEP_RE] = L(re_f),   [PC_STEP_SP] = L(sp_f),     [PC_STEP_FSP] = L(fsp_f),
    [PC_STEP_FFSP] = L(ffsp_f), [PC_STEP_SA] = L(sa_f),   [PC_STEP_CA] = L(ca_f),
    [PC_STEP_CI] = L(ci_f),   [PC_STEP_CR] = L(cr_f),     [PC_STEP_CHR] = L(chr_f),
    [PC_STEP_CHW] = L(chw_f), [PC_STEP_RF] = L(rf_f),
};
#undef L
static_assert(PT_ARRAY_LEN(layouts) == PC_STEP_COUNT, "one field layout per step kind");

/* ---------------------------------------------------------------- JSON text writer */

static void jb_grow(pc_jbuf *b, size_t extra) {
  if (b->oom || b->len + extra + 1 <= b->cap) return;
  size_t cap = b->cap ? b->cap : 256;
  while (cap < b->len + extra + 1) cap *= 2;
  char *s = realloc(b->s, cap);
  if (!s) {
    b->oom = true;
    return;
  }
  b->s = s;
  b->cap = cap;
}

static void jb_bytes(pc_jbuf *b, const char *s, size_t n) {
  jb_grow(b, n);
  if (b->oom) return;
  memcpy(b->s + b->len, s, n);
  b->len += n;
  b->s[b->len] = 0;
}

void pc_jb_raw(pc_jbuf *b, const char *s) { jb_bytes(b, s, strlen(s)); }

void pc_jb_str(pc_jbuf *b, const char *s, size_t max) {
  size_t n = strnlen(s, max);
  jb_bytes(b, "\"", 1);
  for (size_t i = 0; i < n; i++) {
    unsigned char c = (unsigned char)s[i];
    char esc[8];
    if (c == '"' || c == '\\') {
      esc[0] = '\\', esc[1] = (char)c;
      jb_bytes(b, esc, 2);
    } else if (c < 0x20) {
      snprintf(esc, sizeof esc, "\\u%04x", c);
      jb_bytes(b, esc, 6);
    } else {
      jb_bytes(b, (const char *)&c, 1);
    }
  }
  jb_bytes(b, "\"", 1);
}

void pc_jb_i64(pc_jbuf *b, int64_t v) {
  char t[32];
  snprintf(t, sizeof t, "%" PRId64, v);
  pc_jb_raw(b, t);
}

/* The shortest %g text that reads back exactly, so 1e10 is "1e+10" and 0.0044742 stays
 * "0.0044742" as in TVM's logs. */
static void shortest_g(double v, char *t, size_t cap) {
  for (int prec = 1; prec <= 17; prec++) {
    snprintf(t, cap, "%.*g", prec, v);
    if (strtod(t, NULL) == v) break;
  }
  /* A program that set LC_NUMERIC to a comma locale must still write JSON. */
  for (char *p = t; *p; p++)
    if (*p == ',') *p = '.';
}

void pc_jb_num(pc_jbuf *b, double v) {
  char t[40];
  shortest_g(v, t, sizeof t);
  pc_jb_raw(b, t);
}

/* ---------------------------------------------------------------- reading helpers */

const char *pc_json_describe(const cJSON *j, char *buf, size_t cap) {
  if (!j) {
    snprintf(buf, cap, "nothing");
  } else if (cJSON_IsString(j)) {
    char t[28];
    size_t n = 0;
    const char *s = j->valuestring ? j->valuestring : "";
    for (; s[n] && n + 1 < sizeof t; n++) t[n] = (s[n] >= 0x20 && s[n] < 0x7f) ? s[n] : '?';
    t[n] = 0;
    snprintf(buf, cap, "string \"%s\"%s", t, s[n] ? "..." : "");
  } else if (cJSON_IsNumber(j)) {
    char t[40];
    shortest_g(j->valuedouble, t, sizeof t);
    snprintf(buf, cap, "number %s", t);
  } else if (cJSON_IsBool(j)) {
    snprintf(buf, cap, "%s", cJSON_IsTrue(j) ? "true" : "false");
  } else if (cJSON_IsNull(j)) {
    snprintf(buf, cap, "null");
  } else if (cJSON_IsArray(j)) {
    snprintf(buf, cap, "an array of %d items", cJSON_GetArraySize(j));
  } else if (cJSON_IsObject(j)) {
    snprintf(buf, cap, "an object");
  } else {
    snprintf(buf, cap, "an invalid value");
  }
  return buf;
}

bool pc_json_int(const cJSON *j, int64_t lo, int64_t hi, int64_t *out) {
  if (!cJSON_IsNumber(j)) return false;
  double v = j->valuedouble;
  /* 2^63 bounds keep the conversion defined; record integers are far smaller. */
  if (!isfinite(v) || v != floor(v) || v < -9.2e18 || v > 9.2e18) return false;
  int64_t i = (int64_t)v;
  if (i < lo || i > hi) return false;
  if (out) *out = i;
  return true;
}

static const char *range_text(int64_t lo, int64_t hi, char *buf, size_t cap) {
  if (lo == 0 && (hi == INT_MAX || hi == INT64_MAX)) snprintf(buf, cap, "a non-negative integer");
  else if (lo == 1 && (hi == INT_MAX || hi == INT64_MAX)) snprintf(buf, cap, "a positive integer");
  else snprintf(buf, cap, "an integer in [%" PRId64 ", %" PRId64 "]", lo, hi);
  return buf;
}

/* ---------------------------------------------------------------- decoding */

/* `at` names the field's position, e.g. "record: i[1][1][3][4]", and `code` the step. */
static int decode_field(const cJSON *v, const step_field *f, const char *at, const char *code,
                        pc_step *s, pt_diag *d) {
  char got[96], want[64];
  char *base = (char *)s;
  int64_t x;
  switch (f->type) {
  case FT_INT:
  case FT_I64:
    if (!pc_json_int(v, f->lo, f->hi, &x))
      return pt_fail(d, PT_ERR_INPUT, "%s: step \"%s\" %s: expected %s, got %s", at, code, f->name,
                     range_text(f->lo, f->hi, want, sizeof want), pc_json_describe(v, got, sizeof got));
    if (f->type == FT_INT) *(int *)(base + f->off) = (int)x;
    else *(int64_t *)(base + f->off) = x;
    return 0;
  case FT_BOOL:
    /* TVM writes these as 0/1; JSON booleans are accepted too. */
    if (cJSON_IsBool(v)) x = cJSON_IsTrue(v);
    else if (!pc_json_int(v, 0, 1, &x))
      return pt_fail(d, PT_ERR_INPUT, "%s: step \"%s\" %s: expected 0 or 1, got %s", at, code, f->name,
                     pc_json_describe(v, got, sizeof got));
    *(bool *)(base + f->off) = x != 0;
    return 0;
  case FT_STR: {
    if (!cJSON_IsString(v))
      return pt_fail(d, PT_ERR_INPUT, "%s: step \"%s\" %s: expected a string, got %s", at, code, f->name,
                     pc_json_describe(v, got, sizeof got));
    size_t n = strlen(v->valuestring);
    if (n >= f->size)
      return pt_fail(d, PT_ERR_INPUT, "%s: step \"%s\" %s is %zu bytes, over portent's limit of %zu", at,
                     code, f->name, n, f->size - 1);
    memcpy(base + f->off, v->valuestring, n + 1);
    return 0;
  }
  case FT_IDS:
  case FT_LENGTHS: {
    bool lengths = f->type == FT_LENGTHS;
    int cap = lengths ? PC_MAX_DIMS : PC_MAX_LEAVES;
    if (!cJSON_IsArray(v))
      return pt_fail(d, PT_ERR_INPUT, "%s: step \"%s\" %s: expected an array of integers, got %s", at, code,
                     f->name, pc_json_describe(v, got, sizeof got));
    int n = cJSON_GetArraySize(v);
    if (n > cap)
      return pt_fail(d, PT_ERR_INPUT, "%s: step \"%s\" %s has %d items, over portent's limit of %d", at, code,
                     f->name, n, cap);
    int k = 0;
    for (const cJSON *e = v->child; e; e = e->next, k++) {
      if (lengths && cJSON_IsNull(e))
        return pt_fail(d, PT_ERR_INPUT,
                       "%s: step \"%s\" lengths[%d] is null (a tile size TVM left unknown cannot be applied)",
                       at, code, k);
      if (!pc_json_int(e, f->lo, f->hi, &x))
        return pt_fail(d, PT_ERR_INPUT, "%s: step \"%s\" %s[%d]: expected %s, got %s", at, code, f->name, k,
                       range_text(f->lo, f->hi, want, sizeof want), pc_json_describe(e, got, sizeof got));
      if (lengths) s->lengths[k] = x;
      else s->ids[k] = (int)x;
    }
    if (lengths) s->n_lengths = n;
    else s->n_ids = n;
    return 0;
  }
  }
  return pt_fail(d, PT_ERR_INVALID, "%s: internal: bad field type", at);
}

int pc_step_decode(const cJSON *j, const char *path, pc_step *s, pt_diag *d) {
  char got[96], at[256];
  memset(s, 0, sizeof *s);
  if (!cJSON_IsArray(j))
    return pt_fail(d, PT_ERR_INPUT, "%s: expected a step such as [\"CI\", 1], got %s", path,
                   pc_json_describe(j, got, sizeof got));
  const cJSON *c = j->child;
  if (!c) return pt_fail(d, PT_ERR_INPUT, "%s: empty step (no step code)", path);
  if (!cJSON_IsString(c))
    return pt_fail(d, PT_ERR_INPUT, "%s[0]: step code must be a string, got %s", path,
                   pc_json_describe(c, got, sizeof got));
  int k = pc_step_kind_from_code(c->valuestring);
  if (k < 0)
    return pt_fail(d, PT_ERR_INPUT, "%s[0]: unknown step code (%s)", path, pc_json_describe(c, got, sizeof got));
  const step_layout *L = &layouts[k];
  int n = cJSON_GetArraySize(j);
  if (n != L->n + 1)
    return pt_fail(d, PT_ERR_INPUT, "%s: step \"%s\": expected %d fields, got %d", path, step_codes[k], L->n + 1, n);
  s->kind = (pc_step_kind)k;
  const cJSON *v = c->next;
  for (int i = 0; i < L->n; i++, v = v->next) {
    snprintf(at, sizeof at, "%s[%d]", path, i + 1);
    int rc = decode_field(v, &L->f[i], at, step_codes[k], s, d);
    if (rc < 0) return rc;
  }
  return 0;
}

/* ---------------------------------------------------------------- encoding */

int pc_step_encode(pc_jbuf *b, const pc_step *s, const char *what, pt_diag *d) {
  if ((unsigned)s->kind >= PC_STEP_COUNT)
    return pt_fail(d, PT_ERR_INVALID, "%s: unknown step kind %d", what, (int)s->kind);
  const step_layout *L = &layouts[s->kind];
  const char *base = (const char *)s;
  pc_jb_raw(b, "[");
  pc_jb_str(b, step_codes[s->kind], 8);
  for (int i = 0; i < L->n; i++) {
    const step_field *f = &L->f[i];
    pc_jb_raw(b, ", ");
    switch (f->type) {
    case FT_INT: pc_jb_i64(b, *(const int *)(base + f->off)); break;
    case FT_I64: pc_jb_i64(b, *(const int64_t *)(base + f->off)); break;
    case FT_BOOL: pc_jb_i64(b, *(const bool *)(base + f->off) ? 1 : 0); break;
    case FT_STR: pc_jb_str(b, base + f->off, f->size); break;
    case FT_IDS:
    case FT_LENGTHS: {
      bool lengths = f->type == FT_LENGTHS;
      int n = lengths ? s->n_lengths : s->n_ids, cap = lengths ? PC_MAX_DIMS : PC_MAX_LEAVES;
      if (n < 0 || n > cap)
        return pt_fail(d, PT_ERR_INVALID, "%s: step \"%s\" has %d %s (0..%d allowed)", what, step_codes[s->kind],
                       n, f->name, cap);
      pc_jb_raw(b, "[");
      for (int k = 0; k < n; k++) {
        if (k) pc_jb_raw(b, ", ");
        pc_jb_i64(b, lengths ? s->lengths[k] : s->ids[k]);
      }
      pc_jb_raw(b, "]");
      break;
    }
    }
  }
  pc_jb_raw(b, "]");
  return 0;
}

/* ---------------------------------------------------------------- step lists */

/* Unclosed brackets at the end of the text (and whether it ends inside a string): the sign of
 * a line cut short, which cJSON's error position alone does not show (it points at the start
 * of the value it was reading). */
static int unclosed_at_end(const char *text, bool *in_string) {
  int depth = 0;
  bool str = false;
  for (const char *p = text; *p; p++) {
    if (str) {
      if (*p == '\\' && p[1]) p++;
      else if (*p == '"') str = false;
    } else if (*p == '"') {
      str = true;
    } else if (*p == '[' || *p == '{') {
      depth++;
    } else if ((*p == ']' || *p == '}') && depth > 0) {
      depth--;
    }
  }
  *in_string = str;
  return depth;
}

cJSON *pc_json_parse(const char *text, const char *what, pt_diag *d) {
  const char *end = NULL;
  cJSON *root = cJSON_ParseWithOpts(text, &end, 1);
  if (root) return root;
  size_t len = strlen(text), off = end && end >= text ? (size_t)(end - text) : len;
  if (off > len) off = len;
  bool in_string;
  int depth = unclosed_at_end(text, &in_string);
  if (depth > 0 || in_string) {
    pt_fail(d, PT_ERR_INPUT, "%s: not valid JSON: the text ends at byte %zu%s with %d bracket%s unclosed (truncated?)",
            what, len, in_string ? " inside a string" : "", depth, depth == 1 ? "" : "s");
    return NULL;
  }
  char near[24];
  size_t n = 0;
  for (; text[off + n] && n + 1 < sizeof near; n++) {
    char c = text[off + n];
    near[n] = (c >= 0x20 && c < 0x7f && c != '"') ? c : '?';
  }
  near[n] = 0;
  pt_fail(d, PT_ERR_INPUT, "%s: not valid JSON: parsing stopped at byte %zu of %zu, near \"%s\"", what, off, len, near);
  return NULL;
}

char *pc_steps_to_json(int n, const pc_step *steps) {
  if (n < 0 || (n > 0 && !steps)) return NULL;
  pc_jbuf b = {0};
  pc_jb_raw(&b, "[");
  for (int i = 0; i < n; i++) {
    if (i) pc_jb_raw(&b, ", ");
    if (pc_step_encode(&b, &steps[i], "steps", NULL) < 0) b.oom = true;
  }
  pc_jb_raw(&b, "]");
  if (b.oom) {
    free(b.s);
    return NULL;
  }
  return b.s;
}

int pc_steps_from_json(const char *json, int *n, pc_step *steps, int cap, pt_diag *d) {
  char got[96], path[32];
  *n = 0;
  if (!json) return pt_fail(d, PT_ERR_INVALID, "steps: no text given");
  cJSON *root = pc_json_parse(json, "steps", d);
  if (!root) return PT_ERR_INPUT;
  int rc = 0, k = 0;
  if (!cJSON_IsArray(root)) {
    rc = pt_fail(d, PT_ERR_INPUT, "steps: expected an array of steps, got %s", pc_json_describe(root, got, sizeof got));
    goto done;
  }
  for (const cJSON *e = root->child; e; e = e->next, k++) {
    if (k >= cap) {
      rc = pt_fail(d, PT_ERR_INPUT, "steps: %d steps, more than the %d there is room for", cJSON_GetArraySize(root),
                   cap);
      goto done;
    }
    snprintf(path, sizeof path, "steps[%d]", k);
    rc = pc_step_decode(e, path, &steps[k], d);
    if (rc < 0) goto done;
  }
  *n = k;
done:
  cJSON_Delete(root);
  return rc;
}
