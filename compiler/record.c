/* TVM auto_scheduler measure records (JSON lines): parsing every layout TVM wrote (v0.2..v0.6)
 * into pc_record, writing v0.6, atomic appends and reading whole logs line by line. Layout facts
 * from TVM's src/auto_scheduler/measure_record.cc (SearchTask / MeasureResult JSON handlers). */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "record_json.h"

/* TVM's MeasureErrorNo runs from NO_ERROR (0) to UNKNOWN_ERROR (8). */
#define MAX_ERROR_CODE 8

static int copy_string(const cJSON *v, char *dst, size_t cap, const char *path, const char *what, pt_diag *d) {
  char got[96];
  if (!cJSON_IsString(v))
    return pt_fail(d, PT_ERR_INPUT, "record: %s: %s must be a string, got %s", path, what,
                   pc_json_describe(v, got, sizeof got));
  size_t n = strlen(v->valuestring);
  if (n >= cap)
    return pt_fail(d, PT_ERR_INPUT, "record: %s: %s is %zu bytes, over portent's limit of %zu", path, what, n,
                   cap - 1);
  memcpy(dst, v->valuestring, n + 1);
  return 0;
}

/* A finite, non-negative number of seconds (or a timestamp). */
static int read_seconds(const cJSON *v, double *out, const char *path, const char *what, pt_diag *d) {
  char got[96];
  if (!cJSON_IsNumber(v))
    return pt_fail(d, PT_ERR_INPUT, "record: %s: %s is not a number, got %s", path, what,
                   pc_json_describe(v, got, sizeof got));
  if (!isfinite(v->valuedouble) || v->valuedouble < 0)
    return pt_fail(d, PT_ERR_INPUT, "record: %s: %s must be finite and non-negative, got %g", path, what,
                   v->valuedouble);
  *out = v->valuedouble;
  return 0;
}

/* "i"[0]: [workload_key, target, hw_params?, target_host?, layout_rewrite?, task_inputs?]. */
static int parse_task(const cJSON *t, pc_record *r, pt_diag *d) {
  char got[96], path[32];
  int64_t x;
  int n = cJSON_IsArray(t) ? cJSON_GetArraySize(t) : -1;
  if (n < 2 || n > 6)
    return pt_fail(d, PT_ERR_INPUT,
                   "record: i[0]: expected the task [workload_key, target, hardware params, target host, "
                   "layout rewrite, task inputs] with 2 to 6 items, got %s",
                   pc_json_describe(t, got, sizeof got));
  const cJSON *v = t->child;
  int rc = copy_string(v, r->workload_key, sizeof r->workload_key, "i[0][0]", "workload key", d);
  if (rc < 0) return rc;
  if (!r->workload_key[0]) return pt_fail(d, PT_ERR_INPUT, "record: i[0][0]: workload key is empty");
  v = v->next;
  if ((rc = copy_string(v, r->target, sizeof r->target, "i[0][1]", "target", d)) < 0) return rc;
  if (!(v = v->next)) return 0; /* v0.2 */
  if (!cJSON_IsArray(v) || cJSON_GetArraySize(v) != (int)PT_ARRAY_LEN(r->hw_params))
    return pt_fail(d, PT_ERR_INPUT, "record: i[0][2]: hardware params must be an array of %zu integers, got %s",
                   PT_ARRAY_LEN(r->hw_params), pc_json_describe(v, got, sizeof got));
  int k = 0;
  for (const cJSON *e = v->child; e; e = e->next, k++) {
    if (!pc_json_int(e, INT64_MIN, INT64_MAX, &x))
      return pt_fail(d, PT_ERR_INPUT, "record: i[0][2][%d]: hardware param is not an integer, got %s", k,
                     pc_json_describe(e, got, sizeof got));
    r->hw_params[k] = x;
  }
  r->has_hw_params = true;
  if (!(v = v->next)) return 0; /* v0.3, v0.4 */
  if ((rc = copy_string(v, r->target_host, sizeof r->target_host, "i[0][3]", "target host", d)) < 0) return rc;
  if (!(v = v->next)) return pt_fail(d, PT_ERR_INPUT, "record: i[0][4]: layout rewrite option missing after the target host");
  if (!pc_json_int(v, 0, 1000, &x))
    return pt_fail(d, PT_ERR_INPUT, "record: i[0][4]: layout rewrite option must be a non-negative integer, got %s",
                   pc_json_describe(v, got, sizeof got));
  r->layout_rewrite = (int)x;
  r->has_host = true;
  if (!(v = v->next)) return 0; /* v0.5 */
  if (!cJSON_IsArray(v))
    return pt_fail(d, PT_ERR_INPUT, "record: i[0][5]: task input names must be an array of strings, got %s",
                   pc_json_describe(v, got, sizeof got));
  if (cJSON_GetArraySize(v) > PC_RECORD_MAX_TASK_INPUTS)
    return pt_fail(d, PT_ERR_INPUT, "record: i[0][5]: %d task input names, over portent's limit of %d",
                   cJSON_GetArraySize(v), PC_RECORD_MAX_TASK_INPUTS);
  k = 0;
  for (const cJSON *e = v->child; e; e = e->next, k++) {
    snprintf(path, sizeof path, "i[0][5][%d]", k);
    if ((rc = copy_string(e, r->task_inputs[k], sizeof r->task_inputs[k], path, "task input name", d)) < 0) return rc;
  }
  r->n_task_inputs = k;
  return 0;
}

/* "i"[1]: the state, [stage info (TVM writes []), [steps...]]. */
static int parse_state(const cJSON *s, pc_record *r, pt_diag *d) {
  char got[96], path[48];
  if (!cJSON_IsArray(s) || cJSON_GetArraySize(s) != 2)
    return pt_fail(d, PT_ERR_INPUT, "record: i[1]: expected the state [[], [steps...]], got %s",
                   pc_json_describe(s, got, sizeof got));
  if (!cJSON_IsArray(s->child))
    return pt_fail(d, PT_ERR_INPUT, "record: i[1][0]: expected the stage list (an array), got %s",
                   pc_json_describe(s->child, got, sizeof got));
  const cJSON *steps = s->child->next;
  if (!cJSON_IsArray(steps))
    return pt_fail(d, PT_ERR_INPUT, "record: i[1][1]: expected the array of steps, got %s",
                   pc_json_describe(steps, got, sizeof got));
  int n = cJSON_GetArraySize(steps);
  if (n > PC_MAX_STEPS)
    return pt_fail(d, PT_ERR_INPUT, "record: i[1][1]: %d steps, over portent's limit of %d", n, PC_MAX_STEPS);
  int k = 0;
  for (const cJSON *e = steps->child; e; e = e->next, k++) {
    snprintf(path, sizeof path, "record: i[1][1][%d]", k);
    int rc = pc_step_decode(e, path, &r->steps[k], d);
    if (rc < 0) return rc;
  }
  r->n_steps = k;
  return 0;
}

/* "r": [[costs...], error_no, all_cost, timestamp]. */
static int parse_result(const cJSON *res, pc_record *r, pt_diag *d) {
  char got[96], path[32];
  int64_t x;
  if (!cJSON_IsArray(res) || cJSON_GetArraySize(res) != 4)
    return pt_fail(d, PT_ERR_INPUT, "record: r: expected [[costs...], error code, all cost, timestamp], got %s",
                   pc_json_describe(res, got, sizeof got));
  const cJSON *c = res->child;
  if (!cJSON_IsArray(c))
    return pt_fail(d, PT_ERR_INPUT, "record: r[0]: costs must be an array of numbers, got %s",
                   pc_json_describe(c, got, sizeof got));
  int n = cJSON_GetArraySize(c);
  if (n > (int)PT_ARRAY_LEN(r->costs))
    return pt_fail(d, PT_ERR_INPUT, "record: r[0]: %d costs, over portent's limit of %zu", n, PT_ARRAY_LEN(r->costs));
  int k = 0, rc;
  for (const cJSON *e = c->child; e; e = e->next, k++) {
    snprintf(path, sizeof path, "r[0][%d]", k);
    if ((rc = read_seconds(e, &r->costs[k], path, "cost", d)) < 0) return rc;
  }
  r->n_costs = k;
  const cJSON *v = c->next;
  if (!cJSON_IsNumber(v) || !pc_json_int(v, INT64_MIN, INT64_MAX, NULL))
    return pt_fail(d, PT_ERR_INPUT, "record: r[1]: error code is not an integer, got %s",
                   pc_json_describe(v, got, sizeof got));
  if (!pc_json_int(v, 0, MAX_ERROR_CODE, &x))
    return pt_fail(d, PT_ERR_INPUT, "record: r[1]: error code %.0f is not a TVM MeasureErrorNo (0..%d)",
                   v->valuedouble, MAX_ERROR_CODE);
  r->error_code = (int)x;
  if ((rc = read_seconds(v = v->next, &r->all_cost, "r[2]", "all_cost", d)) < 0) return rc;
  return read_seconds(v->next, &r->timestamp, "r[3]", "timestamp", d);
}

static int parse_root(const cJSON *root, pc_record *r, pt_diag *d) {
  char got[96];
  if (!cJSON_IsObject(root))
    return pt_fail(d, PT_ERR_INPUT, "record: expected an object {\"i\": ..., \"r\": ..., \"v\": ...}, got %s",
                   pc_json_describe(root, got, sizeof got));
  /* Other keys are ignored (DESIGN: portent's extras go under their own keys), though TVM's
   * own reader rejects them. */
  const cJSON *in = cJSON_GetObjectItemCaseSensitive(root, "i");
  const cJSON *res = cJSON_GetObjectItemCaseSensitive(root, "r");
  const cJSON *ver = cJSON_GetObjectItemCaseSensitive(root, "v");
  if (!in) return pt_fail(d, PT_ERR_INPUT, "record: missing \"i\" (the measure input)");
  if (!res) return pt_fail(d, PT_ERR_INPUT, "record: missing \"r\" (the measure result)");
  if (!cJSON_IsArray(in) || cJSON_GetArraySize(in) != 2)
    return pt_fail(d, PT_ERR_INPUT, "record: i: expected [task, state], got %s", pc_json_describe(in, got, sizeof got));
  int rc = parse_task(in->child, r, d);
  if (rc >= 0) rc = parse_state(in->child->next, r, d);
  if (rc >= 0) rc = parse_result(res, r, d);
  if (rc >= 0 && ver) rc = copy_string(ver, r->version, sizeof r->version, "v", "version", d);
  return rc;
}

int pc_record_parse(const char *line, pc_record *r, pt_diag *d) {
  if (!line || !r) return pt_fail(d, PT_ERR_INVALID, "record: no line given");
  const char *p = line;
  while (*p == ' ' || *p == '\t' || *p == '\r' || *p == '\n') p++;
  if (*p == 0 || *p == '#') return PC_RECORD_SKIP;
  memset(r, 0, sizeof *r);
  cJSON *root = pc_json_parse(line, "record", d);
  if (!root) return PT_ERR_INPUT;
  int rc = parse_root(root, r, d);
  cJSON_Delete(root);
  return rc;
}

/* ---------------------------------------------------------------- writing */

static int format_into(pc_jbuf *b, const pc_record *r, pt_diag *d) {
  if (r->n_steps < 0 || r->n_steps > PC_MAX_STEPS)
    return pt_fail(d, PT_ERR_INVALID, "record: %d steps (0..%d allowed)", r->n_steps, PC_MAX_STEPS);
  if (r->n_costs < 0 || r->n_costs > (int)PT_ARRAY_LEN(r->costs))
    return pt_fail(d, PT_ERR_INVALID, "record: %d costs (0..%zu allowed)", r->n_costs, PT_ARRAY_LEN(r->costs));
  if (r->n_task_inputs < 0 || r->n_task_inputs > PC_RECORD_MAX_TASK_INPUTS)
    return pt_fail(d, PT_ERR_INVALID, "record: %d task inputs (0..%d allowed)", r->n_task_inputs,
                   PC_RECORD_MAX_TASK_INPUTS);
  for (int k = 0; k < r->n_costs; k++)
    if (!isfinite(r->costs[k]) || r->costs[k] < 0)
      return pt_fail(d, PT_ERR_INVALID, "record: cost %d is %g; a record holds finite non-negative seconds (TVM "
                     "writes 1e10 for a failed measurement)", k, r->costs[k]);
  if (!isfinite(r->all_cost) || r->all_cost < 0 || !isfinite(r->timestamp) || r->timestamp < 0)
    return pt_fail(d, PT_ERR_INVALID, "record: all_cost %g and timestamp %g must be finite and non-negative",
                   r->all_cost, r->timestamp);
  if (r->error_code < 0 || r->error_code > MAX_ERROR_CODE)
    return pt_fail(d, PT_ERR_INVALID, "record: error code %d is not a TVM MeasureErrorNo", r->error_code);
  if (!r->workload_key[0]) return pt_fail(d, PT_ERR_INVALID, "record: empty workload key");

  pc_jb_raw(b, "{\"i\": [[");
  pc_jb_str(b, r->workload_key, sizeof r->workload_key);
  pc_jb_raw(b, ", ");
  pc_jb_str(b, r->target, sizeof r->target);
  if (r->has_hw_params || r->has_host) {
    pc_jb_raw(b, ", [");
    for (size_t k = 0; k < PT_ARRAY_LEN(r->hw_params); k++) {
      if (k) pc_jb_raw(b, ", ");
      pc_jb_i64(b, r->hw_params[k]);
    }
    pc_jb_raw(b, "]");
  }
  if (r->has_host) {
    pc_jb_raw(b, ", ");
    pc_jb_str(b, r->target_host, sizeof r->target_host);
    pc_jb_raw(b, ", ");
    pc_jb_i64(b, r->layout_rewrite);
    pc_jb_raw(b, ", [");
    for (int k = 0; k < r->n_task_inputs; k++) {
      if (k) pc_jb_raw(b, ", ");
      pc_jb_str(b, r->task_inputs[k], sizeof r->task_inputs[k]);
    }
    pc_jb_raw(b, "]");
  }
  pc_jb_raw(b, "], [[], [");
  for (int k = 0; k < r->n_steps; k++) {
    if (k) pc_jb_raw(b, ", ");
    int rc = pc_step_encode(b, &r->steps[k], "record", d);
    if (rc < 0) return rc;
  }
  pc_jb_raw(b, "]]], \"r\": [[");
  for (int k = 0; k < r->n_costs; k++) {
    if (k) pc_jb_raw(b, ", ");
    pc_jb_num(b, r->costs[k]);
  }
  pc_jb_raw(b, "], ");
  pc_jb_i64(b, r->error_code);
  pc_jb_raw(b, ", ");
  pc_jb_num(b, r->all_cost);
  pc_jb_raw(b, ", ");
  pc_jb_num(b, r->timestamp);
  pc_jb_raw(b, "], \"v\": \"" PC_RECORD_VERSION "\"}");
  if (b->oom) return pt_fail(d, PT_ERR_NOMEM, "record: out of memory while formatting");
  return 0;
}

char *pc_record_format(const pc_record *r) {
  if (!r) return NULL;
  pc_jbuf b = {0};
  if (format_into(&b, r, NULL) < 0) {
    free(b.s);
    return NULL;
  }
  return b.s;
}

int pc_record_append(const char *path, const pc_record *r, pt_diag *d) {
  pc_jbuf b = {0};
  int rc = format_into(&b, r, d);
  if (rc < 0) {
    free(b.s);
    return rc;
  }
  pc_jb_raw(&b, "\n");
  if (b.oom) {
    free(b.s);
    return pt_fail(d, PT_ERR_NOMEM, "%s: out of memory while formatting a record", path);
  }
  int fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
  if (fd < 0) {
    rc = pt_fail(d, PT_ERR_IO, "%s: cannot open for appending: %s", path, strerror(errno));
    free(b.s);
    return rc;
  }
  /* One write() per line: with O_APPEND the kernel places it at the end as one piece, so
   * lines from concurrent writers never interleave. A short write cannot be completed
   * without that risk, so it is an error (disk full). */
  ssize_t w;
  do w = write(fd, b.s, b.len);
  while (w < 0 && errno == EINTR);
  if (w < 0) rc = pt_fail(d, PT_ERR_IO, "%s: write failed: %s", path, strerror(errno));
  else if ((size_t)w != b.len)
    rc = pt_fail(d, PT_ERR_IO, "%s: short write (%zd of %zu bytes); the last line is incomplete", path, w, b.len);
  else if (fsync(fd) != 0) rc = pt_fail(d, PT_ERR_IO, "%s: fsync failed: %s", path, strerror(errno));
  if (close(fd) != 0 && rc == 0) rc = pt_fail(d, PT_ERR_IO, "%s: close failed: %s", path, strerror(errno));
  free(b.s);
  return rc;
}

/* ---------------------------------------------------------------- reading logs */

int pc_record_read_file(const char *path, pc_record_fn on_record, pc_record_bad_fn on_bad, void *ctx,
                        int *n_bad, pt_diag *d) {
  if (n_bad) *n_bad = 0;
  bool is_stdin = strcmp(path, "-") == 0;
  FILE *f = is_stdin ? stdin : fopen(path, "rb");
  if (!f) return pt_fail(d, PT_ERR_IO, "%s: cannot open: %s", path, strerror(errno));
  pc_record *r = malloc(sizeof *r);
  char *line = NULL;
  size_t cap = 0;
  int count = 0, line_no = 0, rc = 0;
  if (!r) {
    rc = pt_fail(d, PT_ERR_NOMEM, "%s: out of memory", path);
    goto done;
  }
  ssize_t len;
  while ((len = getline(&line, &cap, f)) >= 0) {
    line_no++;
    pt_diag ld = {0};
    int prc;
    if (strlen(line) != (size_t)len)
      prc = pt_fail(&ld, PT_ERR_INPUT, "record: the line holds a NUL byte at byte %zu", strlen(line));
    else
      prc = pc_record_parse(line, r, &ld);
    if (prc == PC_RECORD_SKIP) continue;
    if (prc < 0) {
      if (n_bad) (*n_bad)++;
      if (on_bad) on_bad(line_no, ld.msg, ctx);
      else fprintf(stderr, "%s:%d: %s\n", path, line_no, ld.msg);
      continue;
    }
    count++;
    int s = on_record ? on_record(r, line_no, ctx) : 0;
    if (s < 0) {
      rc = s;
      goto done;
    }
    if (s > 0) break;
  }
  if (ferror(f)) rc = pt_fail(d, PT_ERR_IO, "%s:%d: read error", path, line_no + 1);
done:
  free(line);
  free(r);
  if (!is_stdin) fclose(f);
  return rc < 0 ? rc : count;
}
