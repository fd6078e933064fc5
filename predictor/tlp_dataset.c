/* Training data for TLP / MTL-TLP from TVM records: one sample per distinct schedule, its
 * features, its latency on each platform, and labels min_latency/latency within each task
 * (workload key x target), as TLP labels them. MTL-TLP joins the platforms' records of the
 * same schedule into one sample whose missing platforms carry no label. */
#include <cjson/cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tlp.h"

void pp_tlp_platform(const char *target, char *buf, size_t cap) {
  const char *m = strstr(target, "-mcpu=");
  size_t n;
  if (m) {
    m += 6;
    n = strcspn(m, " ");
  } else {
    m = target;
    n = strcspn(m, " ");
  }
  int cores = 0;
  const char *c = strstr(target, "-num-cores=");
  if (c) cores = atoi(c + 11);
  if (cores > 0) snprintf(buf, cap, "%.*s/%dc", (int)n, m, cores);
  else snprintf(buf, cap, "%.*s", (int)n, m);
}

/* ---------------------------------------------------------------- string -> index table */

typedef struct {
  char **keys;
  int *vals;
  size_t cap, n;
} str_table;

static uint64_t fnv(const char *s) {
  uint64_t h = 1469598103934665603ull;
  for (; *s; s++) h = (h ^ (unsigned char)*s) * 1099511628211ull;
  return h;
}

static int table_get(const str_table *t, const char *k) {
  if (!t->cap) return -1;
  for (size_t i = fnv(k) & (t->cap - 1);; i = (i + 1) & (t->cap - 1)) {
    if (!t->keys[i]) return -1;
    if (strcmp(t->keys[i], k) == 0) return t->vals[i];
  }
}

static void table_put(str_table *t, const char *k, int v) {
  if (2 * (t->n + 1) > t->cap) {
    str_table g = {calloc(t->cap ? t->cap * 2 : 1024, sizeof(char *)), NULL, t->cap ? t->cap * 2 : 1024, 0};
    g.vals = calloc(g.cap, sizeof(int));
    for (size_t i = 0; i < t->cap; i++)
      if (t->keys[i]) {
        size_t j = fnv(t->keys[i]) & (g.cap - 1);
        while (g.keys[j]) j = (j + 1) & (g.cap - 1);
        g.keys[j] = t->keys[i], g.vals[j] = t->vals[i], g.n++;
      }
    free(t->keys), free(t->vals);
    *t = g;
  }
  size_t i = fnv(k) & (t->cap - 1);
  while (t->keys[i]) i = (i + 1) & (t->cap - 1);
  t->keys[i] = strdup(k), t->vals[i] = v, t->n++;
}

static void table_free(str_table *t) {
  for (size_t i = 0; i < t->cap; i++) free(t->keys[i]);
  free(t->keys), free(t->vals);
  memset(t, 0, sizeof *t);
}

typedef struct {
  str_table samples, groups, platforms;
} join_index;

/* ---------------------------------------------------------------- splits */

int pp_tlp_split_read(const char *path, pp_tlp_split *sp, pt_diag *d) {
  memset(sp, 0, sizeof *sp);
  char *text = pt_read_file(path, NULL, d);
  if (!text) return d->err;
  cJSON *j = cJSON_Parse(text);
  free(text);
  const cJSON *test = cJSON_GetObjectItemCaseSensitive(j, "test");
  if (!cJSON_IsArray(test)) {
    cJSON_Delete(j);
    return pt_fail(d, PT_ERR_INPUT, "%s: expected {\"test\": [workload keys...]}", path);
  }
  sp->test_keys = calloc((size_t)cJSON_GetArraySize(test) + 1, sizeof(char *));
  const cJSON *e;
  int i = 0;
  cJSON_ArrayForEach(e, test) {
    if (!cJSON_IsString(e)) {
      cJSON_Delete(j);
      pp_tlp_split_free(sp);
      return pt_fail(d, PT_ERR_INPUT, "%s: test[%d] is not a string (a workload key)", path, i);
    }
    sp->test_keys[sp->n_test++] = strdup(e->valuestring);
    i++;
  }
  cJSON_Delete(j);
  return 0;
}

void pp_tlp_split_free(pp_tlp_split *sp) {
  for (int i = 0; i < sp->n_test; i++) free(sp->test_keys[i]);
  free(sp->test_keys);
  memset(sp, 0, sizeof *sp);
}

static bool split_is_test(const pp_tlp_split *sp, const char *key) {
  if (!sp) return false;
  for (int i = 0; i < sp->n_test; i++)
    if (strcmp(sp->test_keys[i], key) == 0) return true;
  return false;
}

/* ---------------------------------------------------------------- loading */

void pp_tlp_dataset_init(pp_tlp_dataset *ds, bool multi_platform) {
  memset(ds, 0, sizeof *ds);
  ds->seq_len = PP_TLP_SEQ_LEN;
  ds->emb = PP_TLP_EMB;
  ds->multi_platform = multi_platform;
  ds->index = calloc(1, sizeof(join_index));
}

int pp_tlp_platform_index(const pp_tlp_dataset *ds, const char *platform) {
  for (int i = 0; i < ds->n_platforms; i++)
    if (strcmp(ds->platforms[i], platform) == 0) return i;
  return -1;
}

static int intern(str_table *t, char ***names, int *n, const char *name) {
  int i = table_get(t, name);
  if (i >= 0) return i;
  *names = realloc(*names, sizeof(char *) * (size_t)(*n + 1));
  (*names)[*n] = strdup(name);
  table_put(t, name, *n);
  return (*n)++;
}

typedef struct {
  pp_tlp_dataset *ds;
  const pp_tlp_split *sp;
  pp_tlp_vocab *v;
  bool grow;
  bool pretrain;           /* pre-training records: samples of their own tasks, flagged */
  const char *as_platform; /* pre-training labels go to this platform's head (NULL: the record's) */
  char prog_key[512];      /* the workload whose program `prog` is (records come task by task) */
  pc_program *prog;        /* for the replayed extents; NULL when the key does not build */
} load_ctx;

/* The record's workload program when the features replay steps on it, NULL otherwise: a
 * workload portent cannot build still trains on its steps alone. */
static const pc_program *record_program(load_ctx *c, const char *key) {
  if (c->ds->emb <= PP_TLP_STEP_COLS) return NULL;
  if (strcmp(c->prog_key, key) != 0) {
    pc_program_free(c->prog);
    c->prog = pp_tlp_feature_program(c->ds->emb, key);
    snprintf(c->prog_key, sizeof c->prog_key, "%s", key);
  }
  return c->prog;
}

/* Latencies grow per sample when a new platform appears after samples exist. */
static void widen_platforms(pp_tlp_dataset *ds, int old_n) {
  for (int i = 0; i < ds->n; i++) {
    ds->s[i].latency = realloc(ds->s[i].latency, sizeof(float) * (size_t)ds->n_platforms);
    ds->s[i].label = realloc(ds->s[i].label, sizeof(float) * (size_t)ds->n_platforms);
    for (int p = old_n; p < ds->n_platforms; p++) ds->s[i].latency[p] = 0, ds->s[i].label[p] = 0;
  }
}

static int on_record(const pc_record *r, int line, void *vctx) {
  (void)line;
  load_ctx *c = vctx;
  pp_tlp_dataset *ds = c->ds;
  join_index *ix = ds->index;
  if (r->error_code != 0) {
    ds->n_failed++;
    return 0;
  }
  double lat = 0;
  bool ok = r->n_costs > 0;
  for (int i = 0; i < r->n_costs; i++) {
    if (!isfinite(r->costs[i]) || r->costs[i] <= 0) ok = false;
    lat += r->costs[i];
  }
  if (!ok) {
    ds->n_nonpositive++;
    return 0;
  }
  lat /= r->n_costs; /* TenSet labels a record with the mean of its costs */
  char platform[128];
  if (ds->multi_platform && c->as_platform) snprintf(platform, sizeof platform, "%s", c->as_platform);
  else if (ds->multi_platform) pp_tlp_platform(r->target, platform, sizeof platform);
  else snprintf(platform, sizeof platform, "all");
  int old_np = ds->n_platforms;
  int p = intern(&ix->platforms, &ds->platforms, &ds->n_platforms, platform);
  if (ds->n_platforms != old_np) widen_platforms(ds, old_np);

  size_t glen = strlen(r->workload_key) + strlen(r->target) + 16;
  char *group = malloc(glen);
  /* a pre-training record's task is its own: its labels are never ranked against measured ones */
  if (c->pretrain) snprintf(group, glen, "%s @ pretrain %s", r->workload_key, r->target);
  else if (ds->multi_platform) snprintf(group, glen, "%s", r->workload_key);
  else snprintf(group, glen, "%s @ %s", r->workload_key, r->target);
  char *steps = pc_steps_to_json(r->n_steps, r->steps);
  size_t klen = glen + strlen(steps ? steps : "") + 2;
  char *key = malloc(klen);
  snprintf(key, klen, "%s\n%s", group, steps ? steps : "");
  free(steps);
  int si = table_get(&ix->samples, key);
  if (si < 0) {
    if (ds->n == ds->cap) {
      ds->cap = ds->cap ? ds->cap * 2 : 256;
      ds->s = realloc(ds->s, sizeof *ds->s * (size_t)ds->cap);
    }
    pp_tlp_sample *s = &ds->s[ds->n];
    memset(s, 0, sizeof *s);
    s->group = intern(&ix->groups, &ds->groups, &ds->n_groups, group);
    s->test = split_is_test(c->sp, r->workload_key);
    s->x = malloc(sizeof(float) * (size_t)ds->seq_len * (size_t)ds->emb);
    s->n_rows = pp_tlp_features(r->n_steps, r->steps, record_program(c, r->workload_key), c->v, c->grow && !s->test,
                                ds->seq_len, ds->emb, s->x);
    s->latency = calloc((size_t)ds->n_platforms, sizeof(float));
    s->label = calloc((size_t)ds->n_platforms, sizeof(float));
    s->pretrain = c->pretrain;
    table_put(&ix->samples, key, ds->n);
    si = ds->n++;
  }
  free(key), free(group);
  float *l = &ds->s[si].latency[p];
  if (*l > 0) ds->n_duplicates++; /* the same schedule measured again: keep the fastest */
  if (*l == 0 || lat < *l) *l = (float)lat;
  return 0;
}

static void on_bad(int line, const char *reason, void *vctx) {
  (void)line, (void)reason;
  ((load_ctx *)vctx)->ds->n_bad_lines++;
}

int pp_tlp_dataset_load(pp_tlp_dataset *ds, const char *path, const pp_tlp_split *sp, pp_tlp_vocab *v, bool grow,
                        pt_diag *d) {
  load_ctx c = {ds, sp, v, grow, false, NULL, "", NULL};
  int n_bad = 0;
  int rc = pc_record_read_file(path, on_record, on_bad, &c, &n_bad, d);
  pc_program_free(c.prog);
  return rc < 0 ? rc : 0;
}

int pp_tlp_dataset_load_pretrain(pp_tlp_dataset *ds, const char *path, const pp_tlp_split *sp, pp_tlp_vocab *v,
                                 const char *platform, int *n_added, pt_diag *d) {
  load_ctx c = {ds, sp, v, true, true, platform, "", NULL};
  int n_bad = 0, n0 = ds->n;
  int rc = pc_record_read_file(path, on_record, on_bad, &c, &n_bad, d);
  pc_program_free(c.prog);
  if (n_added) *n_added = ds->n - n0;
  return rc < 0 ? rc : 0;
}

void pp_tlp_dataset_finish(pp_tlp_dataset *ds) {
  int np = ds->n_platforms, ng = ds->n_groups;
  float *best = malloc(sizeof(float) * (size_t)(np * ng + 1));
  for (int i = 0; i < np * ng; i++) best[i] = INFINITY;
  for (int i = 0; i < ds->n; i++)
    for (int p = 0; p < np; p++) {
      float l = ds->s[i].latency[p];
      float *b = &best[ds->s[i].group * np + p];
      if (l > 0 && l < *b) *b = l;
    }
  for (int i = 0; i < ds->n; i++)
    for (int p = 0; p < np; p++) {
      float l = ds->s[i].latency[p];
      ds->s[i].label[p] = l > 0 ? best[ds->s[i].group * np + p] / l : 0;
    }
  free(best);
  if (ds->index) {
    join_index *ix = ds->index;
    table_free(&ix->samples), table_free(&ix->groups), table_free(&ix->platforms);
    free(ix);
    ds->index = NULL;
  }
}

void pp_tlp_dataset_free(pp_tlp_dataset *ds) {
  for (int i = 0; i < ds->n; i++) free(ds->s[i].x), free(ds->s[i].latency), free(ds->s[i].label);
  free(ds->s);
  for (int i = 0; i < ds->n_groups; i++) free(ds->groups[i]);
  free(ds->groups);
  for (int i = 0; i < ds->n_platforms; i++) free(ds->platforms[i]);
  free(ds->platforms);
  if (ds->index) {
    join_index *ix = ds->index;
    table_free(&ix->samples), table_free(&ix->groups), table_free(&ix->platforms);
    free(ix);
  }
  memset(ds, 0, sizeof *ds);
}
