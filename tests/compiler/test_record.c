/* Record I/O against real TVM logs (tests/data/tvm_logs): every line parses and round-trips
 * through portent's writer, bad lines fail with messages naming the JSON position, mutated and
 * truncated lines never crash, and concurrent appends never interleave. */
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "compiler/compiler.h"
#include "test.h"

static const char *const tvm_logs[] = {
    "tests/data/tvm_logs/matmul.json",
    "tests/data/tvm_logs/conv2d.json",
    "tests/data/tvm_logs/resnet-50-NHWC-B1-llvm.json",
};

/* Record lines of a log (comments and blank lines dropped), as separate strings. */
typedef struct lines {
  int n;
  char *line[64];
} lines;

static void read_lines(const char *path, lines *out) {
  out->n = 0;
  pt_diag d = {0};
  char *text = pt_read_file(path, NULL, &d);
  CHECK_MSG(text != NULL, "%s", d.msg);
  if (!text) return;
  for (char *save = NULL, *l = strtok_r(text, "\n", &save); l; l = strtok_r(NULL, "\n", &save))
    if (l[0] != '#' && l[0] && out->n < 64) out->line[out->n++] = strdup(l);
  free(text);
}

static void free_lines(lines *l) {
  for (int i = 0; i < l->n; i++) free(l->line[i]);
  l->n = 0;
}

/* Same content except the version (formatting always writes v0.6). */
static bool same_record(const pc_record *a, const pc_record *b) {
  pc_record *t = malloc(sizeof *t);
  memcpy(t, b, sizeof *t);
  memcpy(t->version, a->version, sizeof t->version);
  bool same = memcmp(a, t, sizeof *t) == 0;
  free(t);
  return same;
}

/* ---------------------------------------------------------------- step codes */

static void test_codes(void) {
  for (int k = 0; k < PC_STEP_COUNT; k++) {
    const char *c = pc_step_code((pc_step_kind)k);
    CHECK(c != NULL);
    if (c) CHECK(pc_step_kind_from_code(c) == k);
  }
  CHECK(strcmp(pc_step_code(PC_STEP_FFSP), "FFSP") == 0);
  CHECK(pc_step_kind_from_code("XX") == -1);
  CHECK(pc_step_kind_from_code("sp") == -1);
  CHECK(pc_step_kind_from_code(NULL) == -1);
  CHECK(pc_step_code(PC_STEP_COUNT) == NULL);
}

/* ---------------------------------------------------------------- real logs */

typedef struct log_stats {
  int records;
  int by_version[8]; /* index = minor version of "v0.N" */
  int roundtrip_bad;
} log_stats;

static int on_log_record(const pc_record *r, int line, void *ctx) {
  log_stats *st = ctx;
  st->records++;
  if (strncmp(r->version, "v0.", 3) == 0 && r->version[3] >= '0' && r->version[3] < '8' && !r->version[4])
    st->by_version[r->version[3] - '0']++;
  /* parse -> format -> parse keeps every field. */
  char *text = pc_record_format(r);
  pc_record *back = malloc(sizeof *back);
  pt_diag d = {0};
  int rc = text ? pc_record_parse(text, back, &d) : -1;
  if (rc != 0 || !same_record(r, back) || strcmp(back->version, PC_RECORD_VERSION) != 0) {
    fprintf(stderr, "round trip differs at line %d: rc %d %s\n%s\n", line, rc, d.msg, text ? text : "(null)");
    st->roundtrip_bad++;
  }
  free(back);
  free(text);
  return 0;
}

static void test_tvm_logs(void) {
  log_stats st = {0};
  for (size_t i = 0; i < PT_ARRAY_LEN(tvm_logs); i++) {
    pt_diag d = {0};
    int n_bad = -1;
    int n = pc_record_read_file(tvm_logs[i], on_log_record, NULL, &st, &n_bad, &d);
    CHECK_MSG(n > 0 && n_bad == 0, "%s: %d records, %d bad: %s", tvm_logs[i], n, n_bad, d.msg);
  }
  CHECK(st.records == 28);
  CHECK(st.roundtrip_bad == 0);
  CHECK(st.by_version[2] == 1 && st.by_version[3] == 1 && st.by_version[5] == 26);
}

static pc_record *parse_first(const char *path) {
  lines l;
  read_lines(path, &l);
  pc_record *r = malloc(sizeof *r);
  pt_diag d = {0};
  int rc = l.n ? pc_record_parse(l.line[0], r, &d) : -1;
  CHECK_MSG(rc == 0, "%s: %s", path, d.msg);
  free_lines(&l);
  if (rc != 0) {
    free(r);
    return NULL;
  }
  return r;
}

static void test_matmul_fields(void) {
  pc_record *r = parse_first(tvm_logs[0]);
  if (!r) return;
  CHECK(strcmp(r->workload_key, "[\"matmul_add\", 1024, 1024, 1024, \"float32\"]") == 0);
  CHECK(strcmp(r->target, "llvm -keys=cpu") == 0);
  CHECK(r->has_hw_params && !r->has_host);
  CHECK(r->hw_params[0] == 18 && r->hw_params[1] == 64 && r->hw_params[2] == 64 && r->hw_params[7] == 0);
  CHECK(r->n_steps == 13);
  const pc_step *s = &r->steps[0];
  CHECK(s->kind == PC_STEP_SP && s->stage_id == 2 && s->iter_id == 0 && s->extent == 1024);
  CHECK(s->n_lengths == 3 && s->lengths[0] == 2 && s->lengths[1] == 1 && s->lengths[2] == 4);
  CHECK(s->inner_to_outer);
  s = &r->steps[3]; /* ["RE", 2, [0, 4, 1, 5, 8, 2, 6, 9, 3, 7]] */
  CHECK(s->kind == PC_STEP_RE && s->stage_id == 2 && s->n_ids == 10 && s->ids[1] == 4 && s->ids[9] == 7);
  s = &r->steps[4]; /* ["FSP", 4, 0, 0, 2] */
  CHECK(s->kind == PC_STEP_FSP && s->stage_id == 4 && s->iter_id == 0 && s->src_step_id == 0 && s->n_split == 2);
  s = &r->steps[7];
  CHECK(s->kind == PC_STEP_CA && s->stage_id == 2 && s->target_stage_id == 4 && s->target_iter_id == 3);
  s = &r->steps[8];
  CHECK(s->kind == PC_STEP_FU && s->stage_id == 4 && s->n_ids == 2 && s->ids[0] == 0 && s->ids[1] == 1);
  s = &r->steps[9];
  CHECK(s->kind == PC_STEP_AN && s->stage_id == 4 && s->iter_id == 0 && s->annotation == PC_ANN_PARALLEL);
  s = &r->steps[10];
  CHECK(s->kind == PC_STEP_PR && s->stage_id == 2 && strcmp(s->pragma, "auto_unroll_max_step$8") == 0);
  s = &r->steps[12];
  CHECK(s->kind == PC_STEP_AN && s->stage_id == 4 && s->iter_id == 4 && s->annotation == PC_ANN_VECTORIZE);
  CHECK(r->n_costs == 1 && r->costs[0] == 0.0044742);
  CHECK(r->error_code == 0 && r->all_cost == 0.335558 && r->timestamp == 1607112214);
  CHECK(strcmp(r->version, "v0.3") == 0);

  /* The writer spaces lines as TVM does: the v0.3 line comes back byte for byte but the version. */
  lines l;
  read_lines(tvm_logs[0], &l);
  char *text = pc_record_format(r);
  char *want = l.n ? strdup(l.line[0]) : NULL;
  char *v = want ? strstr(want, "\"v0.3\"") : NULL;
  if (v) memcpy(v, "\"v0.6\"", 6);
  CHECK_MSG(text && v && strcmp(text, want) == 0, "\n got %s\nwant %s", text ? text : "(null)", want ? want : "");
  free(want);
  free(text);
  free_lines(&l);
  free(r);
}

static void test_other_logs(void) {
  pc_record *r = parse_first(tvm_logs[1]); /* v0.2: [key, target] only */
  if (r) {
    CHECK(!r->has_hw_params && !r->has_host && strcmp(r->version, "v0.2") == 0);
    CHECK(strncmp(r->target, "cuda -keys=cuda,gpu", 19) == 0);
    CHECK(r->n_steps == 37);
    CHECK(r->steps[0].kind == PC_STEP_CI && r->steps[0].stage_id == 5);
    const pc_step *s = &r->steps[15]; /* ["CHR", 2, "shared", [3]] */
    CHECK(s->kind == PC_STEP_CHR && s->stage_id == 2 && strcmp(s->scope, "shared") == 0 && s->n_ids == 1 &&
          s->ids[0] == 3);
    s = &r->steps[29]; /* ["FFSP", 4, 0, [4, 3, 2, 1], 1, 1] */
    CHECK(s->kind == PC_STEP_FFSP && s->stage_id == 4 && s->n_ids == 4 && s->ids[0] == 4 && s->level == 1 &&
          s->factor_or_nparts);
    free(r);
  }
  r = parse_first(tvm_logs[2]); /* v0.5: hash key, target host "", layout rewrite 2 */
  if (r) {
    CHECK(strcmp(r->workload_key, "[\"d7b65649a4dd54becea0a52aabbc5af5\", 1, 1000, 1, 1000]") == 0);
    CHECK(r->has_hw_params && r->has_host && r->target_host[0] == 0 && r->layout_rewrite == 2);
    CHECK(r->hw_params[0] == 8);
    const pc_step *s = &r->steps[1]; /* ["RF", 3, 2, 1] */
    CHECK(s->kind == PC_STEP_RF && s->stage_id == 3 && s->iter_id == 2 && s->factor_iter_id == 1);
    CHECK(r->steps[6].kind == PC_STEP_CR && r->steps[6].stage_id == 6);
    CHECK(r->n_costs == 10 && r->timestamp == 1606960872);
    free(r);
  }
}

/* ---------------------------------------------------------------- hand-written lines */

/* Every step kind once, in a v0.6 line with task input names. */
static const char all_kinds_line[] =
    "{\"i\": [[\"[\\\"matmul\\\", 64, 64, 64, \\\"float32\\\"]\", \"llvm -keys=cpu -mcpu=znver4\", "
    "[2, 64, 64, 0, 0, 0, 0, 0], \"llvm -keys=cpu\", 1, [\"A\", \"B\"]], [[], ["
    "[\"CHW\", 2, \"local\"], [\"SP\", 3, 0, 64, [4, 2], 0], [\"RF\", 3, 2, 0], [\"SA\", 2, 1, 16, 1], "
    "[\"FSP\", 3, 3, 1, 2], [\"FFSP\", 3, 1, [1, 4], 0, 1], [\"RE\", 3, [1, 0]], [\"FU\", 3, [0, 1]], "
    "[\"AN\", 3, 0, 3], [\"PR\", 3, 0, \"auto_unroll_max_step$512\"], [\"CA\", 2, 3, 0], [\"CI\", 1], "
    "[\"CR\", 2], [\"CHR\", 0, \"shared\", [2, 3]]]]], "
    "\"r\": [[1e-05, 2.5e-05, 1e+10], 5, 1.25, 1700000000.5], \"v\": \"v0.6\"}";

static void test_all_kinds(void) {
  pc_record *r = malloc(sizeof *r), *back = malloc(sizeof *back);
  pt_diag d = {0};
  int rc = pc_record_parse(all_kinds_line, r, &d);
  CHECK_MSG(rc == 0, "%s", d.msg);
  if (rc == 0) {
    bool seen[PC_STEP_COUNT] = {0};
    for (int i = 0; i < r->n_steps; i++) seen[r->steps[i].kind] = true;
    for (int k = 0; k < PC_STEP_COUNT; k++) CHECK_MSG(seen[k], "kind %s", pc_step_code((pc_step_kind)k));
    CHECK(r->n_task_inputs == 2 && strcmp(r->task_inputs[1], "B") == 0);
    CHECK(strcmp(r->target_host, "llvm -keys=cpu") == 0 && r->layout_rewrite == 1);
    CHECK(r->steps[1].kind == PC_STEP_SP && !r->steps[1].inner_to_outer);
    CHECK(r->steps[3].kind == PC_STEP_SA && r->steps[3].factor == 16 && r->steps[3].offset == 1);
    CHECK(r->steps[13].kind == PC_STEP_CHR && r->steps[13].n_ids == 2 && r->steps[13].ids[1] == 3);
    CHECK(r->error_code == 5 && r->costs[2] == 1e10 && r->timestamp == 1700000000.5);
    /* A v0.6 line is written back exactly as it was. */
    char *text = pc_record_format(r);
    CHECK_MSG(text && strcmp(text, all_kinds_line) == 0, "\n got %s\nwant %s", text ? text : "(null)",
              all_kinds_line);
    rc = text ? pc_record_parse(text, back, &d) : -1;
    CHECK(rc == 0 && same_record(r, back));
    free(text);
  }
  /* Comments and blank lines are not records. */
  CHECK(pc_record_parse("# a comment", r, &d) == PC_RECORD_SKIP);
  CHECK(pc_record_parse("   \t\r\n", r, &d) == PC_RECORD_SKIP);
  CHECK(pc_record_parse("", r, &d) == PC_RECORD_SKIP);
  free(r);
  free(back);
}

/* ---------------------------------------------------------------- bad lines */

#define KEY "\"[\\\"mm\\\", 4]\""
#define TASK "[" KEY ", \"llvm\"]"
#define RES_OK "\"r\": [[0.1], 0, 1, 2]"
#define LINE(steps) "{\"i\": [" TASK ", [[], [" steps "]]], " RES_OK "}"

static const struct {
  const char *line;
  const char *want; /* substring of the message */
} bad_lines[] = {
    {"{}", "record: missing \"i\""},
    {"[]", "record: expected an object"},
    {"42", "record: expected an object"},
    {"{\"i\": [" TASK ", [[], []]]}", "record: missing \"r\""},
    {"{\"i\": 3, " RES_OK "}", "record: i: expected [task, state], got number 3"},
    {"{\"i\": [" TASK "], " RES_OK "}", "record: i: expected [task, state]"},
    {"{\"i\": [[], [[], []]], " RES_OK "}", "record: i[0]: expected the task"},
    {"{\"i\": [[5, \"llvm\"], [[], []]], " RES_OK "}", "record: i[0][0]: workload key must be a string, got number 5"},
    {"{\"i\": [[\"\", \"llvm\"], [[], []]], " RES_OK "}", "record: i[0][0]: workload key is empty"},
    {"{\"i\": [[" KEY ", null], [[], []]], " RES_OK "}", "record: i[0][1]: target must be a string, got null"},
    {"{\"i\": [[" KEY ", \"llvm\", [1, 2]], [[], []]], " RES_OK "}", "record: i[0][2]: hardware params must be an array of 8"},
    {"{\"i\": [[" KEY ", \"llvm\", [1, 2, 3, 4, 5, 6, 7, \"x\"]], [[], []]], " RES_OK "}", "record: i[0][2][7]: hardware param is not an integer"},
    {"{\"i\": [[" KEY ", \"llvm\", [1, 2, 3, 4, 5, 6, 7, 8], \"\"], [[], []]], " RES_OK "}", "record: i[0][4]: layout rewrite option missing"},
    {"{\"i\": [[" KEY ", \"llvm\", [1, 2, 3, 4, 5, 6, 7, 8], \"\", 1, [3]], [[], []]], " RES_OK "}", "record: i[0][5][0]: task input name must be a string"},
    {"{\"i\": [" TASK ", [[], {}]], " RES_OK "}", "record: i[1][1]: expected the array of steps, got an object"},
    {"{\"i\": [" TASK ", [[]]], " RES_OK "}", "record: i[1]: expected the state"},
    {LINE("[\"SP\", 2, 0, 1024]"), "record: i[1][1][0]: step \"SP\": expected 6 fields, got 4"},
    {LINE("[\"CI\", 1], [\"XY\", 2]"), "record: i[1][1][1][0]: unknown step code (string \"XY\")"},
    {LINE("[3, 1]"), "record: i[1][1][0][0]: step code must be a string, got number 3"},
    {LINE("[]"), "record: i[1][1][0]: empty step"},
    {LINE("\"CI\""), "record: i[1][1][0]: expected a step"},
    {LINE("[\"SP\", 2, 0, 1024, [2, null, 4], 1]"), "record: i[1][1][0][4]: step \"SP\" lengths[1] is null"},
    {LINE("[\"SP\", 2, 0, 1024, [2, 0], 1]"), "record: i[1][1][0][4]: step \"SP\" lengths[1]: expected a positive integer, got number 0"},
    {LINE("[\"SP\", 2, 0, 1024, 4, 1]"), "step \"SP\" lengths: expected an array of integers, got number 4"},
    {LINE("[\"SP\", 2, 0, 1024, [1,1,1,1,1,1,1,1,1], 1]"), "step \"SP\" lengths has 9 items, over portent's limit of 8"},
    {LINE("[\"SP\", 2, 0, 1024, [4], 2]"), "step \"SP\" inner_to_outer: expected 0 or 1, got number 2"},
    {LINE("[\"SP\", \"2\", 0, 1024, [4], 1]"), "record: i[1][1][0][1]: step \"SP\" stage_id: expected a non-negative integer, got string \"2\""},
    {LINE("[\"CI\", -1]"), "step \"CI\" stage_id: expected a non-negative integer, got number -1"},
    {LINE("[\"CI\", 1.5]"), "step \"CI\" stage_id: expected a non-negative integer, got number 1.5"},
    {LINE("[\"AN\", 1, 0, 12]"), "step \"AN\" annotation: expected an integer in [0, 11], got number 12"},
    {LINE("[\"RE\", 1, [0, \"a\"]]"), "record: i[1][1][0][2]: step \"RE\" after_ids[1]: expected a non-negative integer"},
    {LINE("[\"PR\", 1, 0, 64]"), "step \"PR\" pragma_type: expected a string, got number 64"},
    {LINE("[\"PR\", 1, 0, \"auto_unroll_max_step$64_and_a_very_long_tail_that_does_not_fit_in_the_pragma_buffer\"]"), "step \"PR\" pragma_type is 83 bytes, over portent's limit of 63"},
    {LINE("[\"CHW\", 1, [\"local\"]]"), "step \"CHW\" scope_name: expected a string, got an array of 1 items"},
    {LINE("[\"FFSP\", 1, 0, [1], 0, true]"), NULL}, /* JSON booleans are accepted */
    {"{\"i\": [" TASK ", [[], []]], \"r\": {}}", "record: r: expected [[costs...], error code, all cost, timestamp], got an object"},
    {"{\"i\": [" TASK ", [[], []]], \"r\": [[0.1], 0, 1]}", "record: r: expected [[costs...]"},
    {"{\"i\": [" TASK ", [[], []]], \"r\": [0.1, 0, 1, 2]}", "record: r[0]: costs must be an array of numbers"},
    {"{\"i\": [" TASK ", [[], []]], \"r\": [[0.1, \"x\"], 0, 1, 2]}", "record: r[0][1]: cost is not a number, got string \"x\""},
    {"{\"i\": [" TASK ", [[], []]], \"r\": [[-0.1], 0, 1, 2]}", "record: r[0][0]: cost must be finite and non-negative, got -0.1"},
    {"{\"i\": [" TASK ", [[], []]], \"r\": [[1e999], 0, 1, 2]}", "record: r[0][0]: cost must be finite and non-negative, got inf"},
    {"{\"i\": [" TASK ", [[], []]], \"r\": [[NaN], 0, 1, 2]}", "record: not valid JSON: parsing stopped at byte 50 of 65, near \"NaN]"},
    {"{\"i\": [" TASK ", [[], []]], \"r\": [[nan], 0, 1, 2]}", "record: not valid JSON: parsing stopped at byte 50 of 65, near \"nan]"},
    {"{\"i\": [" TASK ", [[], []]], \"r\": [[0.1], \"0\", 1, 2]}", "record: r[1]: error code is not an integer, got string \"0\""},
    {"{\"i\": [" TASK ", [[], []]], \"r\": [[0.1], 0.5, 1, 2]}", "record: r[1]: error code is not an integer, got number 0.5"},
    {"{\"i\": [" TASK ", [[], []]], \"r\": [[0.1], 9, 1, 2]}", "record: r[1]: error code 9 is not a TVM MeasureErrorNo"},
    {"{\"i\": [" TASK ", [[], []]], \"r\": [[0.1], 0, null, 2]}", "record: r[2]: all_cost is not a number, got null"},
    {"{\"i\": [" TASK ", [[], []]], \"r\": [[0.1], 0, 1, -2]}", "record: r[3]: timestamp must be finite and non-negative"},
    {"{\"i\": [" TASK ", [[], []]], " RES_OK ", \"v\": 6}", "record: v: version must be a string, got number 6"},
    {"{\"i\": [" TASK ", [[], []]], " RES_OK ", \"v\": \"v0.6\"} trailing", "record: not valid JSON: parsing stopped at byte 79 of 87, near \"trailing\""},
    {"{\"i\": [" TASK ", [[], []]], " RES_OK ", \"portent\": {\"x\": 1}}", NULL}, /* extra keys are ignored */
    {"{\"i\": [" TASK ", [[], []]], " RES_OK "}\n", NULL},
    {"{\"i\": [" TASK ", [[], []]], \"r\": [[], 8, 0, 0]}", NULL},
    {"{\"i\": [" TASK ", [[], [", "record: not valid JSON: the text ends at byte 38 with 4 brackets unclosed (truncated?)"},
    {"\x01\x02", "record: not valid JSON: parsing stopped at byte 2 of 2"},
};

static void test_bad_lines(void) {
  pc_record *r = malloc(sizeof *r);
  for (size_t i = 0; i < PT_ARRAY_LEN(bad_lines); i++) {
    pt_diag d = {0};
    int rc = pc_record_parse(bad_lines[i].line, r, &d);
    if (!bad_lines[i].want) {
      CHECK_MSG(rc == 0, "row %zu should parse: %s", i, d.msg);
      continue;
    }
    CHECK_MSG(rc == PT_ERR_INPUT && strstr(d.msg, bad_lines[i].want) != NULL,
              "row %zu: rc %d\n   message %s\n   wanted  %s", i, rc, d.msg, bad_lines[i].want);
  }
  free(r);
}

/* Every record line cut short is an error that says where the text ended. */
static void test_truncated(void) {
  pc_record *r = malloc(sizeof *r);
  int cuts = 0, wrong = 0;
  for (size_t f = 0; f < PT_ARRAY_LEN(tvm_logs); f++) {
    lines l;
    read_lines(tvm_logs[f], &l);
    for (int i = 0; i < l.n; i++) {
      size_t len = strlen(l.line[i]);
      char *cut = malloc(len + 1);
      for (size_t at = 1; at < len; at += (at > len - 40 || at < 40) ? 1 : 13) {
        memcpy(cut, l.line[i], at);
        cut[at] = 0;
        pt_diag d = {0};
        int rc = pc_record_parse(cut, r, &d);
        char want[64];
        snprintf(want, sizeof want, "ends at byte %zu", at);
        /* (a prefix of an object always leaves a bracket or a string open) */
        cuts++;
        if (rc != PT_ERR_INPUT || strstr(d.msg, want) == NULL) {
          if (wrong++ < 5) fprintf(stderr, "%s line %d cut at %zu: rc %d: %s\n", tvm_logs[f], i, at, rc, d.msg);
        }
      }
      free(cut);
    }
    free_lines(&l);
  }
  CHECK(cuts > 1000);
  CHECK(wrong == 0);
  free(r);
}

/* Seeded mutations of real lines and random garbage never crash; whatever parses also formats
 * and reads back the same. */
static void test_mutations(void) {
  static const char *const tokens[] = {"null", "[", "]", "{", "}", ",", "\"", "-1", "1e400", "\"SP\"", "[[", "0.5",
                                       "\\", "\"x\"", "true", "99999999999", ""};
  pc_record *r = malloc(sizeof *r), *back = malloc(sizeof *back);
  pt_rng rng = {42};
  lines l;
  read_lines(tvm_logs[2], &l);
  int parsed = 0, failed = 0;
  for (int it = 0; it < 3000 && l.n; it++) {
    const char *src = l.line[pt_rng_range(&rng, l.n)];
    size_t len = strlen(src);
    char *m = malloc(len + 64);
    size_t at = (size_t)pt_rng_range(&rng, (int64_t)len), drop = (size_t)pt_rng_range(&rng, 4);
    if (at + drop > len) drop = len - at;
    const char *tok = tokens[pt_rng_range(&rng, PT_ARRAY_LEN(tokens))];
    size_t tl = strlen(tok);
    memcpy(m, src, at);
    memcpy(m + at, tok, tl);
    memcpy(m + at + tl, src + at + drop, len - at - drop + 1);
    pt_diag d = {0};
    int rc = pc_record_parse(m, r, &d);
    if (rc == 0) {
      parsed++;
      char *text = pc_record_format(r);
      int rc2 = text ? pc_record_parse(text, back, &d) : -1;
      CHECK_MSG(rc2 == 0 && same_record(r, back), "mutant %s\nformatted %s", m, text ? text : "(null)");
      free(text);
    } else {
      failed++;
      CHECK_MSG(rc == PT_ERR_INPUT && strncmp(d.msg, "record: ", 8) == 0, "mutant %s: %s", m, d.msg);
    }
    free(m);
  }
  CHECK(parsed > 0 && failed > 0);
  free_lines(&l);

  /* Random bytes, and nesting deeper than cJSON's limit, are errors. */
  char buf[257];
  for (int it = 0; it < 2000; it++) {
    int n = 1 + (int)pt_rng_range(&rng, 256);
    for (int k = 0; k < n; k++) buf[k] = (char)(1 + pt_rng_range(&rng, 255));
    buf[n] = 0;
    pt_diag d = {0};
    int rc = pc_record_parse(buf, r, &d);
    CHECK(rc == PC_RECORD_SKIP || rc == PT_ERR_INPUT);
  }
  size_t depth = 100000;
  char *deep = malloc(2 * depth + 64);
  strcpy(deep, "{\"i\": ");
  size_t p = strlen(deep);
  memset(deep + p, '[', depth);
  memset(deep + p + depth, ']', depth);
  strcpy(deep + p + 2 * depth, ", " RES_OK "}");
  pt_diag d = {0};
  CHECK(pc_record_parse(deep, r, &d) == PT_ERR_INPUT && strstr(d.msg, "not valid JSON") != NULL);
  /* Nesting cJSON accepts (under its limit of 1000) but in the wrong place names the path. */
  depth = 500;
  p = strlen("{\"i\": [" TASK ", [[], [");
  memcpy(deep, "{\"i\": [" TASK ", [[], [", p);
  memset(deep + p, '[', depth);
  memset(deep + p + depth, ']', depth);
  strcpy(deep + p + 2 * depth, "]]], " RES_OK "}");
  pt_diag_clear(&d);
  CHECK_MSG(pc_record_parse(deep, r, &d) == PT_ERR_INPUT && strstr(d.msg, "i[1][1][0][0]: step code must be a string"),
            "%s", d.msg);
  free(deep);
  free(r);
  free(back);
}

/* ---------------------------------------------------------------- writing */

static void test_format_rejects(void) {
  pc_record *r = calloc(1, sizeof *r);
  strcpy(r->workload_key, "[\"mm\", 4]");
  strcpy(r->target, "llvm");
  r->n_costs = 1;
  r->costs[0] = 0.5;
  char *t = pc_record_format(r);
  CHECK(t && strcmp(t, "{\"i\": [[\"[\\\"mm\\\", 4]\", \"llvm\"], [[], []]], \"r\": [[0.5], 0, 0, 0], \"v\": \"v0.6\"}") == 0);
  free(t);
  r->costs[0] = NAN;
  CHECK(pc_record_format(r) == NULL);
  pt_diag d = {0};
  CHECK(pc_record_append("/tmp/portent-never-written.jsonl", r, &d) == PT_ERR_INVALID && strstr(d.msg, "cost 0 is nan"));
  r->costs[0] = 0.5;
  r->n_steps = 1;
  r->steps[0].kind = PC_STEP_RE;
  r->steps[0].n_ids = PC_MAX_LEAVES + 1;
  CHECK(pc_record_format(r) == NULL);
  r->steps[0].kind = (pc_step_kind)99;
  CHECK(pc_record_format(r) == NULL);
  r->n_steps = 0;
  /* Strings with quotes and control characters are escaped and read back. */
  strcpy(r->target, "llvm \"q\" \\ \t\x01");
  pc_record *back = malloc(sizeof *back);
  t = pc_record_format(r);
  pt_diag_clear(&d);
  CHECK(t && pc_record_parse(t, back, &d) == 0 && strcmp(back->target, r->target) == 0);
  free(t);
  /* Errors name the path. */
  pt_diag_clear(&d);
  CHECK(pc_record_append("/nonexistent-dir/x.jsonl", r, &d) == PT_ERR_IO && strstr(d.msg, "/nonexistent-dir/x.jsonl"));
  free(back);
  free(r);
}

static void append_many(const char *path, int writer, int n) {
  pc_record *r = calloc(1, sizeof *r);
  lines l;
  read_lines(tvm_logs[1], &l); /* the longest line: 37 steps */
  pt_diag d = {0};
  if (l.n == 0 || pc_record_parse(l.line[0], r, &d) != 0) _exit(3);
  free_lines(&l);
  for (int i = 0; i < n; i++) {
    r->error_code = writer;
    r->timestamp = i;
    if (pc_record_append(path, r, &d) != 0) {
      fprintf(stderr, "%s\n", d.msg);
      _exit(2);
    }
  }
  free(r);
}

typedef struct append_seen {
  int count[2][200];
  int odd;
} append_seen;

static int on_appended(const pc_record *r, int line, void *ctx) {
  append_seen *s = ctx;
  int w = r->error_code, i = (int)r->timestamp;
  if (w < 0 || w > 1 || i < 0 || i >= 200 || r->n_steps != 37) s->odd++;
  else s->count[w][i]++;
  return 0;
}

static void test_append_concurrent(void) {
  char path[] = "/tmp/portent-test-record-XXXXXX";
  int fd = mkstemp(path);
  CHECK(fd >= 0);
  if (fd < 0) return;
  close(fd);
  pid_t pid[2];
  for (int w = 0; w < 2; w++) {
    pid[w] = fork();
    if (pid[w] == 0) {
      append_many(path, w, 200);
      _exit(0);
    }
  }
  for (int w = 0; w < 2; w++) {
    int st = 0;
    CHECK(pid[w] > 0 && waitpid(pid[w], &st, 0) == pid[w] && WIFEXITED(st) && WEXITSTATUS(st) == 0);
  }
  append_seen seen = {0};
  int n_bad = -1;
  pt_diag d = {0};
  int n = pc_record_read_file(path, on_appended, NULL, &seen, &n_bad, &d);
  CHECK_MSG(n == 400 && n_bad == 0, "%d records, %d bad: %s", n, n_bad, d.msg);
  int missing = 0;
  for (int w = 0; w < 2; w++)
    for (int i = 0; i < 200; i++) missing += seen.count[w][i] != 1;
  CHECK(missing == 0 && seen.odd == 0);
  unlink(path);
}

/* ---------------------------------------------------------------- reading a log */

typedef struct bad_seen {
  int lines[8];
  int n;
  char first[256];
} bad_seen;

static void on_bad(int line, const char *reason, void *ctx) {
  bad_seen *b = ctx;
  if (b->n == 0) snprintf(b->first, sizeof b->first, "%s", reason);
  if (b->n < 8) b->lines[b->n] = line;
  b->n++;
}

static int stop_after_one(const pc_record *r, int line, void *ctx) { return 1; }
static int fail_at_once(const pc_record *r, int line, void *ctx) { return PT_ERR_INVALID; }

static void test_read_file(void) {
  char path[] = "/tmp/portent-test-log-XXXXXX";
  int fd = mkstemp(path);
  CHECK(fd >= 0);
  if (fd < 0) return;
  lines l;
  read_lines(tvm_logs[0], &l);
  char text[8192];
  snprintf(text, sizeof text, "# header\n%s\n\n{\"i\": 1}\n%s\n[\"SP\"\n%s", l.line[0], l.line[0], l.line[0]);
  free_lines(&l);
  CHECK(write(fd, text, strlen(text)) == (ssize_t)strlen(text));
  /* A NUL byte inside a line is reported, not silently cut. */
  CHECK(write(fd, "\n{\"i\"\0}\n", 8) == 8);
  close(fd);
  bad_seen b = {0};
  int n_bad = 0;
  pt_diag d = {0};
  int n = pc_record_read_file(path, NULL, on_bad, &b, &n_bad, &d);
  CHECK_MSG(n == 3 && n_bad == 3 && b.n == 3, "%d records, %d bad", n, n_bad);
  CHECK(b.lines[0] == 4 && b.lines[1] == 6 && b.lines[2] == 8);
  CHECK_MSG(strstr(b.first, "record: missing \"r\""), "%s", b.first);
  CHECK(pc_record_read_file(path, stop_after_one, on_bad, &b, NULL, &d) == 1);
  CHECK(pc_record_read_file(path, fail_at_once, on_bad, &b, NULL, &d) == PT_ERR_INVALID);
  unlink(path);
  pt_diag_clear(&d);
  CHECK(pc_record_read_file("/nonexistent/log.json", NULL, NULL, NULL, NULL, &d) == PT_ERR_IO &&
        strstr(d.msg, "/nonexistent/log.json"));
}

/* ---------------------------------------------------------------- step lists */

static void test_steps_json(void) {
  pc_step s[PC_STEP_COUNT] = {0}, back[PC_STEP_COUNT];
  for (int k = 0; k < PC_STEP_COUNT; k++) {
    s[k].kind = (pc_step_kind)k;
    s[k].stage_id = k + 1;
  }
  s[PC_STEP_SP].iter_id = 3, s[PC_STEP_SP].extent = 1024, s[PC_STEP_SP].n_lengths = 3;
  s[PC_STEP_SP].lengths[0] = 2, s[PC_STEP_SP].lengths[1] = 1, s[PC_STEP_SP].lengths[2] = 4;
  s[PC_STEP_SP].inner_to_outer = true;
  s[PC_STEP_RE].n_ids = 3, s[PC_STEP_RE].ids[0] = 2, s[PC_STEP_RE].ids[2] = 1;
  s[PC_STEP_AN].annotation = PC_ANN_VECTORIZE;
  strcpy(s[PC_STEP_PR].pragma, "auto_unroll_max_step$64");
  strcpy(s[PC_STEP_CHR].scope, "shared"), s[PC_STEP_CHR].n_ids = 1, s[PC_STEP_CHR].ids[0] = 7;
  strcpy(s[PC_STEP_CHW].scope, "local");
  s[PC_STEP_CA].target_stage_id = 4, s[PC_STEP_CA].target_iter_id = 2;
  s[PC_STEP_FSP].src_step_id = 0, s[PC_STEP_FSP].n_split = 2;
  s[PC_STEP_FFSP].n_ids = 2, s[PC_STEP_FFSP].ids[0] = 5, s[PC_STEP_FFSP].level = 1, s[PC_STEP_FFSP].factor_or_nparts = true;
  s[PC_STEP_SA].factor = 16, s[PC_STEP_SA].offset = 4;
  s[PC_STEP_RF].factor_iter_id = 1;
  char *json = pc_steps_to_json(PC_STEP_COUNT, s);
  CHECK(json != NULL);
  if (!json) return;
  CHECK_MSG(strstr(json, "[\"SP\", 5, 3, 1024, [2, 1, 4], 1]") && strstr(json, "[\"CHR\", 12, \"shared\", [7]]") &&
                strstr(json, "[\"FFSP\", 7, 0, [5, 0], 1, 1]") && strstr(json, "[\"SA\", 8, 0, 16, 4]") &&
                strstr(json, "[\"PR\", 3, 0, \"auto_unroll_max_step$64\"]"),
            "%s", json);
  int n = 0;
  pt_diag d = {0};
  CHECK_MSG(pc_steps_from_json(json, &n, back, PC_STEP_COUNT, &d) == 0 && n == PC_STEP_COUNT, "%s", d.msg);
  for (int k = 0; k < n; k++) CHECK_MSG(memcmp(&s[k], &back[k], sizeof s[k]) == 0, "step %s", pc_step_code((pc_step_kind)k));
  /* Too little room, bad text and bad steps are errors naming the position. */
  pt_diag_clear(&d);
  CHECK(pc_steps_from_json(json, &n, back, 3, &d) == PT_ERR_INPUT && n == 0 && strstr(d.msg, "more than the 3"));
  free(json);
  pt_diag_clear(&d);
  CHECK(pc_steps_from_json("[[\"CI\", 1], [\"CA\", 1, 2]]", &n, back, 4, &d) == PT_ERR_INPUT &&
        strstr(d.msg, "steps[1]: step \"CA\": expected 4 fields, got 3"));
  pt_diag_clear(&d);
  CHECK(pc_steps_from_json("{\"CI\": 1}", &n, back, 4, &d) == PT_ERR_INPUT && strstr(d.msg, "steps: expected an array"));
  pt_diag_clear(&d);
  CHECK(pc_steps_from_json("[[\"CI\", 1]", &n, back, 4, &d) == PT_ERR_INPUT && strstr(d.msg, "ends at byte 10"));
  CHECK(pc_steps_from_json("[]", &n, back, 4, &d) == 0 && n == 0);
  json = pc_steps_to_json(0, NULL);
  CHECK(json && strcmp(json, "[]") == 0);
  free(json);
  s[0].n_ids = -1;
  s[0].kind = PC_STEP_FU;
  CHECK(pc_steps_to_json(1, s) == NULL);
}

int main(void) {
  test_codes();
  test_tvm_logs();
  test_matmul_fields();
  test_other_logs();
  test_all_kinds();
  test_bad_lines();
  test_truncated();
  test_mutations();
  test_format_rejects();
  test_append_concurrent();
  test_read_file();
  test_steps_json();
  TEST_DONE();
}
