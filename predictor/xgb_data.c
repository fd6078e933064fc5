/* Measured programs as Ansor feature rows for the xgb models: appended online from the tuner's
 * states, or read from a TVM log (the offline pre-fit and `portent bench xgbi`); views of a
 * range of programs with labels normalized by the best of each workload in that range. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "learned.h"

/* CPU seconds of the calling thread: what extraction costs, whatever else shares the cores. */
static double cpu_now(void) {
  struct timespec t;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static int key_index(pp_xgb_data *dd, const char *key) {
  for (int k = 0; k < dd->n_keys; k++)
    if (strcmp(dd->keys[k], key) == 0) return k;
  dd->keys = realloc(dd->keys, sizeof(*dd->keys) * (size_t)(dd->n_keys + 1));
  snprintf(dd->keys[dd->n_keys], sizeof dd->keys[0], "%s", key);
  return dd->n_keys++;
}

static void reserve(pp_xgb_data *dd, int progs, int rows) {
  if (dd->n_prog + progs > dd->cap_prog) {
    dd->cap_prog = 2 * (dd->n_prog + progs);
    dd->cost = realloc(dd->cost, sizeof(double) * (size_t)dd->cap_prog);
    dd->workload = realloc(dd->workload, sizeof(int) * (size_t)dd->cap_prog);
    dd->extract_s = realloc(dd->extract_s, sizeof(double) * (size_t)dd->cap_prog);
  }
  if (dd->n_rows + rows > dd->cap_rows) {
    dd->cap_rows = 2 * (dd->n_rows + rows);
    dd->X = realloc(dd->X, sizeof(float) * PP_FEATURES_PER_STORE * (size_t)dd->cap_rows);
    dd->row_prog = realloc(dd->row_prog, sizeof(int) * (size_t)dd->cap_rows);
  }
}

/* One program's rows (k of them) appended. */
static void push(pp_xgb_data *dd, int w, double cost, double extract_s, const float *rows, int k) {
  reserve(dd, 1, k);
  memcpy(dd->X + (size_t)dd->n_rows * PP_FEATURES_PER_STORE, rows, sizeof(float) * PP_FEATURES_PER_STORE * (size_t)k);
  for (int j = 0; j < k; j++) dd->row_prog[dd->n_rows + j] = dd->n_prog;
  dd->n_rows += k;
  dd->cost[dd->n_prog] = cost;
  dd->workload[dd->n_prog] = w;
  dd->extract_s[dd->n_prog] = extract_s;
  dd->n_prog++;
}

int pp_xgb_data_add(pp_xgb_data *dd, const char *key, int n, pc_state *const *states, const double *cost,
                    int cache_line_bytes, pt_diag *d) {
  int w = key_index(dd, key);
  for (int i = 0; i < n; i++) {
    double t0 = cpu_now();
    float *rows = NULL;
    int k = pp_features_state(states[i], cache_line_bytes, &rows, d);
    if (k < 0) return k;
    push(dd, w, cost[i], cpu_now() - t0, rows, k);
    free(rows);
  }
  return 0;
}

typedef struct {
  pp_xgb_data *dd;
  int cache_line_bytes;
  int skipped;
  /* Programs built from the keys met so far (NULL: the key did not build). */
  char (*keys)[512];
  pc_program **progs;
  int n_keys;
} read_ctx;

static const pc_program *program_of(read_ctx *c, const char *key) {
  for (int k = 0; k < c->n_keys; k++)
    if (strcmp(c->keys[k], key) == 0) return c->progs[k];
  pt_diag d = {0};
  c->keys = realloc(c->keys, sizeof(*c->keys) * (size_t)(c->n_keys + 1));
  c->progs = realloc(c->progs, sizeof(*c->progs) * (size_t)(c->n_keys + 1));
  snprintf(c->keys[c->n_keys], sizeof c->keys[0], "%s", key);
  c->progs[c->n_keys] = pc_workload_build(key, &d);
  return c->progs[c->n_keys++];
}

static int on_record(const pc_record *r, int line, void *ctx) {
  (void)line;
  read_ctx *c = ctx;
  double t0 = cpu_now();
  const pc_program *p = program_of(c, r->workload_key);
  pc_state *s = p ? pc_state_new(p) : NULL;
  pt_diag d = {0};
  float *rows = NULL;
  int k = -1;
  if (s && pc_state_apply_all(s, r->n_steps, r->steps, &d) == 0) k = pp_features_state(s, c->cache_line_bytes, &rows, &d);
  pc_state_free(s);
  if (k < 0) {
    c->skipped++;
    return 0;
  }
  /* TenSet's latency of a record: the mean of its costs; a failed run has no throughput. */
  double cost = 0;
  if (r->error_code == 0 && r->n_costs > 0) {
    for (int i = 0; i < r->n_costs; i++) cost += r->costs[i];
    cost /= r->n_costs;
  }
  if (!(cost > 0 && cost < 1e30)) cost = 0;
  push(c->dd, key_index(c->dd, r->workload_key), cost, cpu_now() - t0, rows, k);
  free(rows);
  return 0;
}

static void on_bad(int line, const char *reason, void *ctx) {
  (void)line, (void)reason;
  ((read_ctx *)ctx)->skipped++;
}

int pp_xgb_data_read(pp_xgb_data *dd, const char *path, int cache_line_bytes, int *n_skipped, pt_diag *d) {
  read_ctx c = {.dd = dd, .cache_line_bytes = cache_line_bytes};
  int rc = pc_record_read_file(path, on_record, on_bad, &c, NULL, d);
  for (int k = 0; k < c.n_keys; k++) pc_program_free(c.progs[k]);
  free(c.keys), free(c.progs);
  if (n_skipped) *n_skipped = c.skipped;
  return rc < 0 ? rc : 0;
}

void pp_xgb_data_append_programs(pp_xgb_data *dst, const pp_xgb_data *src, const int *order, int n) {
  /* First row of each source program: rows of a program are contiguous. */
  int *first = malloc(sizeof(int) * (size_t)(src->n_prog + 1));
  for (int p = 0; p <= src->n_prog; p++) first[p] = src->n_rows;
  for (int r = src->n_rows - 1; r >= 0; r--) first[src->row_prog[r]] = r;
  for (int p = src->n_prog - 1; p >= 0; p--)
    if (first[p] > first[p + 1]) first[p] = first[p + 1];
  for (int i = 0; i < n; i++) {
    int p = order[i];
    push(dst, key_index(dst, src->keys[src->workload[p]]), src->cost[p], src->extract_s[p],
         src->X + (size_t)first[p] * PP_FEATURES_PER_STORE, first[p + 1] - first[p]);
  }
  free(first);
}

void pp_xgb_data_view(const pp_xgb_data *dd, int p0, int p1, pp_xgb_view *v) {
  int r0 = 0;
  while (r0 < dd->n_rows && dd->row_prog[r0] < p0) r0++;
  int r1 = r0;
  while (r1 < dd->n_rows && dd->row_prog[r1] < p1) r1++;
  v->X = dd->X + (size_t)r0 * PP_FEATURES_PER_STORE;
  v->n_rows = r1 - r0;
  v->n_prog = p1 - p0;
  v->row_prog = malloc(sizeof(int) * (size_t)(v->n_rows + 1));
  for (int r = 0; r < v->n_rows; r++) v->row_prog[r] = dd->row_prog[r0 + r] - p0;
  v->label = calloc((size_t)v->n_prog + 1, sizeof(double));
  double *best = calloc((size_t)dd->n_keys + 1, sizeof(double));
  for (int p = p0; p < p1; p++) {
    double c = dd->cost[p];
    int w = dd->workload[p];
    if (c > 0 && (best[w] == 0 || c < best[w])) best[w] = c;
  }
  for (int p = p0; p < p1; p++) v->label[p - p0] = dd->cost[p] > 0 ? best[dd->workload[p]] / dd->cost[p] : 0;
  free(best);
}

void pp_xgb_view_release(pp_xgb_view *v) {
  free(v->row_prog), free(v->label);
  v->row_prog = NULL, v->label = NULL;
}

void pp_xgb_data_free(pp_xgb_data *dd) {
  free(dd->X), free(dd->row_prog), free(dd->cost), free(dd->workload), free(dd->extract_s), free(dd->keys);
  memset(dd, 0, sizeof *dd);
}
