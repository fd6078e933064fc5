/* The results directory of `portent bench tune`: per workload and model a records log and a
 * stats file (time split and wall clock per measurement, rewritten atomically after each
 * round), per workload the library baselines. A rerun continues each search from its log, so
 * the benchmark can be killed, resumed and split over processes (one per workload or model). */
#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_tune.h"

void bt_run_free(bt_run *r) {
  free(r->curve);
  free(r->wall);
  r->curve = r->wall = NULL;
  r->n = 0;
}

/* DIR/WORKLOAD_MODEL + suffix, the model's slashes (tlp:PATH) made underscores so that the file
 * stays in DIR. */
static void run_file(char *out, size_t cap, const char *dir, const char *workload, const char *model, const char *suffix) {
  int n = snprintf(out, cap, "%s/%s_", dir, workload);
  size_t at = n < 0 ? 0 : (size_t)n;
  for (const char *c = model; *c && at + 1 < cap; c++) out[at++] = *c == '/' ? '_' : *c;
  if (at < cap) out[at] = 0;
  if (at < cap) snprintf(out + at, cap - at, "%s", suffix);
}

void bt_log_path(char *out, size_t cap, const char *dir, const char *workload, const char *model) {
  run_file(out, cap, dir, workload, model, ".jsonl");
}

static void stats_path(char *out, size_t cap, const char *dir, const char *workload, const char *model) {
  run_file(out, cap, dir, workload, model, ".stats.json");
}

static cJSON *load_json(const char *path, bool *absent, pt_diag *d) {
  FILE *f = fopen(path, "rb");
  *absent = !f;
  if (!f) return NULL;
  fclose(f);
  size_t len = 0;
  char *text = pt_read_file(path, &len, d);
  if (!text) return NULL;
  cJSON *j = cJSON_ParseWithLength(text, len);
  free(text);
  if (!cJSON_IsObject(j)) {
    cJSON_Delete(j);
    pt_fail(d, PT_ERR_INPUT, "%s: not a JSON object", path);
    return NULL;
  }
  return j;
}

static double num(const cJSON *o, const char *key) {
  const cJSON *e = cJSON_GetObjectItemCaseSensitive(o, key);
  return cJSON_IsNumber(e) ? e->valuedouble : 0;
}

int bt_stats_load(const char *dir, bt_run *r, pt_diag *d) {
  char path[1024];
  stats_path(path, sizeof path, dir, r->workload, r->model);
  bool absent;
  cJSON *j = load_json(path, &absent, d);
  if (!j) return absent ? 0 : d->err;
  const cJSON *s = cJSON_GetObjectItemCaseSensitive(j, "seconds");
  r->t_model = num(s, "model"), r->t_train = num(s, "train"), r->t_search = num(s, "search");
  r->t_compile = num(s, "compile"), r->t_measure = num(s, "measure"), r->t_total = num(s, "total");
  r->t_rerank = num(s, "rerank");
  r->n_scored = num(j, "scored"), r->n_reranked = num(j, "reranked");
  r->threads = (int)num(j, "threads");
  const cJSON *w = cJSON_GetObjectItemCaseSensitive(j, "wall");
  int n = cJSON_GetArraySize(w);
  free(r->wall);
  r->wall = calloc((size_t)n + 1, sizeof(double));
  for (int i = 0; i < n; i++) r->wall[i] = cJSON_GetArrayItem(w, i)->valuedouble;
  r->n = n;
  cJSON_Delete(j);
  return 0;
}

int bt_stats_save(const char *dir, const bt_run *r, pt_diag *d) {
  char path[1024];
  stats_path(path, sizeof path, dir, r->workload, r->model);
  cJSON *j = cJSON_CreateObject();
  cJSON_AddNumberToObject(j, "version", 1);
  cJSON_AddStringToObject(j, "workload", r->workload);
  cJSON_AddStringToObject(j, "model", r->model);
  cJSON_AddNumberToObject(j, "threads", r->threads);
  cJSON_AddNumberToObject(j, "measured", r->n);
  cJSON_AddNumberToObject(j, "scored", r->n_scored);
  cJSON_AddNumberToObject(j, "reranked", r->n_reranked);
  cJSON *s = cJSON_AddObjectToObject(j, "seconds");
  cJSON_AddNumberToObject(s, "model", r->t_model);
  cJSON_AddNumberToObject(s, "train", r->t_train);
  cJSON_AddNumberToObject(s, "rerank", r->t_rerank);
  cJSON_AddNumberToObject(s, "search", r->t_search);
  cJSON_AddNumberToObject(s, "compile", r->t_compile);
  cJSON_AddNumberToObject(s, "measure", r->t_measure);
  cJSON_AddNumberToObject(s, "total", r->t_total);
  cJSON_AddItemToObject(j, "wall", cJSON_CreateDoubleArray(r->wall, r->n));
  char *text = cJSON_PrintUnformatted(j);
  cJSON_Delete(j);
  int rc = pt_write_file_atomic(path, text, strlen(text), d);
  free(text);
  return rc;
}

static void baselines_path(char *out, size_t cap, const char *dir, const char *workload) {
  snprintf(out, cap, "%s/%s.baselines.json", dir, workload);
}

static int read_samples(const cJSON *j, const char *key, double *out, int cap) {
  const cJSON *a = cJSON_GetObjectItemCaseSensitive(j, key);
  int n = cJSON_GetArraySize(a);
  for (int i = 0; i < n && i < cap; i++) out[i] = cJSON_GetArrayItem(a, i)->valuedouble;
  return n < cap ? n : cap;
}

int bt_baselines_load(const char *dir, const char *workload, bt_baselines *b, pt_diag *d) {
  memset(b, 0, sizeof *b);
  char path[1024];
  baselines_path(path, sizeof path, dir, workload);
  bool absent;
  cJSON *j = load_json(path, &absent, d);
  if (!j) return absent ? 0 : d->err;
  b->threads = (int)num(j, "threads");
  b->n = read_samples(j, "onednn_s", b->dnnl, 64);
  read_samples(j, "onednn_native_s", b->dnnl_native, 64);
  read_samples(j, "openblas_s", b->blas, 64);
  cJSON_Delete(j);
  return 0;
}

int bt_baselines_add(const char *dir, const char *workload, int threads, double dnnl, double dnnl_native, double blas,
                     pt_diag *d) {
  bt_baselines b;
  int rc = bt_baselines_load(dir, workload, &b, d);
  if (rc) return rc;
  if (b.n > 0 && b.threads != threads)
    return pt_fail(d, PT_ERR_INVALID, "%s/%s.baselines.json: measured on %d threads, this run uses %d (use another results directory)",
                   dir, workload, b.threads, threads);
  if (b.n == 64) { /* keep the latest 63 */
    memmove(b.dnnl, b.dnnl + 1, sizeof(double) * 63);
    memmove(b.dnnl_native, b.dnnl_native + 1, sizeof(double) * 63);
    memmove(b.blas, b.blas + 1, sizeof(double) * 63);
    b.n = 63;
  }
  b.dnnl[b.n] = dnnl, b.dnnl_native[b.n] = dnnl_native, b.blas[b.n] = blas;
  b.n++;
  cJSON *j = cJSON_CreateObject();
  cJSON_AddNumberToObject(j, "version", 1);
  cJSON_AddStringToObject(j, "workload", workload);
  cJSON_AddNumberToObject(j, "threads", threads);
  cJSON_AddItemToObject(j, "onednn_s", cJSON_CreateDoubleArray(b.dnnl, b.n));
  cJSON_AddItemToObject(j, "onednn_native_s", cJSON_CreateDoubleArray(b.dnnl_native, b.n));
  cJSON_AddItemToObject(j, "openblas_s", cJSON_CreateDoubleArray(b.blas, b.n));
  char *text = cJSON_PrintUnformatted(j), path[1024];
  cJSON_Delete(j);
  baselines_path(path, sizeof path, dir, workload);
  rc = pt_write_file_atomic(path, text, strlen(text), d);
  free(text);
  return rc;
}

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

/* Median of the positive samples (a failed library run is stored as 0). */
static double median(const double *v, int n) {
  double t[64];
  int k = 0;
  for (int i = 0; i < n && k < 64; i++)
    if (v[i] > 0) t[k++] = v[i];
  if (k == 0) return 0;
  qsort(t, (size_t)k, sizeof(double), cmp_double);
  return k % 2 ? t[k / 2] : 0.5 * (t[k / 2 - 1] + t[k / 2]);
}

void bt_baselines_median(const bt_baselines *b, double *dnnl, double *dnnl_native, double *blas) {
  *dnnl = median(b->dnnl, b->n);
  *dnnl_native = median(b->dnnl_native, b->n);
  *blas = median(b->blas, b->n);
}

static void ignore_bad(int line, const char *reason, void *ctx) {
  (void)line, (void)reason, (void)ctx; /* the tuner names them when it resumes the log */
}

int bt_run_load(const char *dir, const pc_program *p, const char *model, bt_run *r, pt_diag *d) {
  memset(r, 0, sizeof *r);
  snprintf(r->workload, sizeof r->workload, "%.63s", p->name);
  snprintf(r->model, sizeof r->model, "%.255s", model);
  char log[1024];
  bt_log_path(log, sizeof log, dir, p->name, model);
  FILE *f = fopen(log, "rb");
  if (!f) return 0;
  fclose(f);
  /* The tuner's resume rebuilds the curve exactly as a continued search sees it (dedupe,
   * failed records, median of repeats); the random model trains nothing. */
  pc_tune_opts o;
  pc_tune_opts_default(&o);
  pc_cost_model cm = pc_cost_model_random(1);
  pc_tuner *t = pc_tuner_new(p, &cm, &o, d);
  int rc = t ? pc_tuner_resume(t, log, ignore_bad, NULL, NULL, d) : d->err;
  if (rc >= 0) {
    const pc_tune_stats *st = pc_tuner_stats(t);
    if ((rc = bt_stats_load(dir, r, d)) == 0) {
      int n_wall = r->n;
      r->n = st->n_curve;
      r->curve = malloc(sizeof(double) * (size_t)(r->n + 1));
      memcpy(r->curve, st->curve, sizeof(double) * (size_t)r->n);
      r->wall = realloc(r->wall, sizeof(double) * (size_t)(r->n + 1));
      /* records appended after the last stats write (a killed round): wall clock unknown,
       * the last one known stands in */
      for (int i = n_wall; i < r->n; i++) r->wall[i] = n_wall > 0 ? r->wall[n_wall - 1] : 0;
      r->failed = st->n_failed;
      rc = 1;
    }
  }
  pc_tuner_free(t);
  cm.free(cm.self);
  return rc;
}
