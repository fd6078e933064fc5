/* bench learn's models: each trained on the training tasks and asked to score every validation
 * and test candidate — analytic (profiles, so only the first N of each test task), xgb and
 * xgb-imp (online models fed the training records task by task), TLP and MTL-TLP (trained
 * offline on the records; MTL-TLP's auxiliary platforms are the analytic predictor's labels on
 * shipped targets) — then the tables: weighted top-k, training time, TLP's throughput. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "learn_bench.h"
#include "predictor.h"
#include "tlp.h"
#include "tune_models.h"

static void print_row_now(const lb_data *data, const lb_opts *o, int m);

/* The states of candidates [0, n) of a task (NULL where the steps do not replay). */
static pc_state **task_states(const lb_task *t, const pc_program *p, int n) {
  pc_state **s = calloc((size_t)(n ? n : 1), sizeof *s);
  for (int i = 0; i < n; i++) {
    pt_diag d = {0};
    s[i] = pc_state_new(p);
    if (pc_state_apply_all(s[i], t->c[i].n_steps, t->c[i].steps, &d) < 0) pc_state_free(s[i]), s[i] = NULL;
  }
  return s;
}

static void free_states(pc_state **s, int n) {
  for (int i = 0; i < n; i++) pc_state_free(s[i]);
  free(s);
}

/* Scores candidates [0, limit) of the tasks of the given roles with a pc_cost_model. */
static void score_with(lb_data *data, int model, pc_cost_model *cm, bool val, bool test, int limit) {
  for (int i = 0; i < data->n_tasks; i++) {
    lb_task *t = &data->t[i];
    if (!((val && t->role == LB_VAL) || (test && t->role == LB_TEST))) continue;
    pt_diag d = {0};
    pc_program *p = pc_workload_build(t->key, &d);
    if (!p) continue; /* a workload portent cannot build: no model but TLP ranks it */
    int n = limit > 0 && limit < t->n ? limit : t->n;
    pc_state **s = task_states(t, p, n);
    pc_state **ok = malloc(sizeof *ok * (size_t)(n ? n : 1));
    int *idx = malloc(sizeof(int) * (size_t)(n ? n : 1)), m = 0;
    for (int c = 0; c < n; c++)
      if (s[c]) ok[m] = s[c], idx[m++] = c;
    double *sc = malloc(sizeof(double) * (size_t)(m ? m : 1));
    if (m && cm->predict(cm->self, p, m, ok, sc, &d) == 0)
      for (int c = 0; c < m; c++) t->scores[model][idx[c]] = sc[c];
    free(sc), free(idx), free(ok);
    free_states(s, n);
    pc_program_free(p);
  }
}

/* An online model (xgb, xgb-imp) fed every training task's records, then asked to score; with
 * --seeds N, N models seeded S..S+N-1, a row each (XGBoost's seed reaches only its random row
 * and column sampling, which Ansor's parameters leave off, so equal rows say it is deterministic). */
static void run_online_seed(lb_data *data, const lb_opts *o, const char *name, uint64_t seed) {
  pc_cost_model cm;
  pt_diag d = {0};
  if (tune_model_new(name, NULL, 0, seed, &cm, &d) < 0) {
    printf("%-24s not available in this build (%s)\n", name, d.msg);
    return;
  }
  char row[64];
  if (o->n_seeds > 1) snprintf(row, sizeof row, "%s seed %llu", name, (unsigned long long)seed);
  else snprintf(row, sizeof row, "%s", name);
  int model = lb_add_model(data, row);
  if (model < 0) {
    cm.free(cm.self);
    return;
  }
  double t0 = pt_now();
  for (int i = 0; i < data->n_tasks; i++) {
    lb_task *t = &data->t[i];
    if (t->role != LB_TRAIN || !cm.update) continue;
    pc_program *p = pc_workload_build(t->key, &d);
    if (!p) continue;
    pc_state **s = task_states(t, p, t->n);
    pc_state **ok = malloc(sizeof *ok * (size_t)t->n);
    pc_measure_result *res = calloc((size_t)t->n, sizeof *res);
    int m = 0;
    for (int c = 0; c < t->n; c++)
      if (s[c]) ok[m] = s[c], res[m].error = PC_MEASURE_OK, res[m].median_s = t->c[c].latency, m++;
    pt_diag ud = {0};
    if (m && cm.update(cm.self, p, m, ok, res, &ud) < 0) fprintf(stderr, "bench learn: %s: %s\n", name, ud.msg);
    free(ok), free(res);
    free_states(s, t->n);
    pc_program_free(p);
  }
  data->train_s[model] = pt_now() - t0;
  score_with(data, model, &cm, true, true, 0);
  print_row_now(data, o, model);
  cm.free(cm.self);
}

static void run_online(lb_data *data, const lb_opts *o, const char *name) {
  for (int s = 0; s < o->n_seeds; s++) run_online_seed(data, o, name, o->seed + (uint64_t)s);
}

static void run_analytic(lb_data *data, const lb_opts *o) {
  pt_diag d = {0};
  ptg_target *tg = ptg_target_load(o->target_path, &d);
  pc_cost_model cm;
  if (!tg || tune_model_new("analytic", tg, 0, o->seed, &cm, &d) < 0) {
    printf("%-30s skipped: %s\n", "analytic", d.msg);
    ptg_target_free(tg);
    return;
  }
  int model = lb_add_model(data, "analytic");
  double t0 = pt_now();
  score_with(data, model, &cm, false, true, o->analytic_per_task);
  fprintf(stderr, "bench learn: analytic ranked the first %d candidates of each test task in %.1f s\n",
          o->analytic_per_task, pt_now() - t0);
  print_row_now(data, o, model);
  cm.free(cm.self);
  ptg_target_free(tg);
}

/* ---------------------------------------------------------------- TLP and MTL-TLP */

/* The held-out keys (test and validation tasks, and those --quick leaves out) as a split. */
static void held_out_split(const lb_data *data, pp_tlp_split *sp) {
  sp->test_keys = calloc((size_t)data->n_tasks + 1, sizeof(char *));
  sp->n_test = 0;
  for (int i = 0; i < data->n_tasks; i++)
    if (data->t[i].role != LB_TRAIN) sp->test_keys[sp->n_test++] = strdup(data->t[i].key);
}

/* The model's scores of every validation and test candidate into out[task] (n entries each). */
static void score_tlp_into(lb_data *data, double **out, pp_tlp_model *m, int head) {
  const pp_tlp_config *c = pp_tlp_model_config(m);
  int stride = c->seq_len * c->emb;
  for (int i = 0; i < data->n_tasks; i++) {
    lb_task *t = &data->t[i];
    if (t->role != LB_VAL && t->role != LB_TEST) continue;
    float *x = calloc((size_t)stride * (size_t)t->n, sizeof(float)), *sc = malloc(sizeof(float) * (size_t)t->n);
    const float **xp = malloc(sizeof *xp * (size_t)t->n);
    int *rows = malloc(sizeof(int) * (size_t)t->n);
    pc_program *p = pp_tlp_feature_program(c->emb, t->key);
    for (int k = 0; k < t->n; k++) {
      rows[k] = pp_tlp_features(t->c[k].n_steps, t->c[k].steps, p, pp_tlp_model_vocab(m), false, c->seq_len, c->emb,
                                x + (size_t)k * stride);
      xp[k] = x + (size_t)k * stride;
    }
    if (pp_tlp_model_predict(m, t->n, xp, rows, head, sc) == 0)
      for (int k = 0; k < t->n; k++) out[i][k] = sc[k];
    pc_program_free(p);
    free(x), free(sc), free(xp), free(rows);
  }
}

/* dst += src standardized (mean 0, deviation 1) / n_models over one task's n candidates: seeds'
 * and heads' scores have arbitrary offsets and scales, and only the order within a task counts. */
static void add_standardized(int n, double *dst, const double *src, int n_models) {
  double s1 = 0, s2 = 0;
  for (int k = 0; k < n; k++) s1 += src[k], s2 += src[k] * src[k];
  double mu = s1 / n, var = s2 / n - mu * mu, sd = var > 1e-24 ? sqrt(var) : 1;
  for (int k = 0; k < n; k++) dst[k] += (src[k] - mu) / sd / n_models;
}

/* Adds one model's scores to an ensemble's, standardized within each task. */
static void ensemble_add(const lb_data *data, double **ens, double **one, int n_models) {
  for (int i = 0; i < data->n_tasks; i++) {
    const lb_task *t = &data->t[i];
    if ((t->role != LB_VAL && t->role != LB_TEST) || t->n == 0) continue;
    add_standardized(t->n, ens[i], one[i], n_models);
  }
}

/* Candidates ranked per second by the trained network, batched (features included, and the
 * network alone), over the test tasks' candidates. */
static double cpu_seconds(void) {
  struct timespec ts;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* Wall-clock rates, and the rate per CPU-second of this process (what the two cores would give
 * unshared; the VM's other jobs take most of the wall clock). */
static void tlp_throughput(const lb_data *data, pp_tlp_model *m, double secs, double *with_features, double *net_only,
                           double *per_cpu_s) {
  const pp_tlp_config *c = pp_tlp_model_config(m);
  int stride = c->seq_len * c->emb, cap = 512, n = 0;
  const lb_cand **cand = malloc(sizeof *cand * (size_t)cap);
  /* each task's program (for the replayed extents) is built before the clock starts, as the tuner has it */
  pc_program **task_prog = calloc((size_t)data->n_tasks + 1, sizeof *task_prog);
  const pc_program **prog = malloc(sizeof *prog * (size_t)cap);
  for (int i = 0; i < data->n_tasks && n < cap; i++) {
    if (data->t[i].role != LB_TEST) continue;
    task_prog[i] = pp_tlp_feature_program(c->emb, data->t[i].key);
    for (int k = 0; k < data->t[i].n && n < cap; k++) prog[n] = task_prog[i], cand[n++] = &data->t[i].c[k];
  }
  float *x = calloc((size_t)stride * (size_t)(n ? n : 1), sizeof(float)), *sc = malloc(sizeof(float) * (size_t)(n ? n : 1));
  const float **xp = malloc(sizeof *xp * (size_t)(n ? n : 1));
  int *rows = malloc(sizeof(int) * (size_t)(n ? n : 1));
  long done = 0;
  double t0 = pt_now(), c0 = cpu_seconds(), feat = 0;
  while (n && (pt_now() - t0 < secs || done == 0)) {
    double f0 = pt_now();
    for (int k = 0; k < n; k++) {
      memset(x + (size_t)k * stride, 0, sizeof(float) * (size_t)stride);
      rows[k] = pp_tlp_features(cand[k]->n_steps, cand[k]->steps, prog[k], pp_tlp_model_vocab(m), false, c->seq_len, c->emb,
                                x + (size_t)k * stride);
      xp[k] = x + (size_t)k * stride;
    }
    feat += pt_now() - f0;
    pp_tlp_model_predict(m, n, xp, rows, 0, sc);
    done += n;
  }
  double total = pt_now() - t0, cpu = cpu_seconds() - c0;
  *per_cpu_s = cpu > 0 ? done / cpu : 0;
  *with_features = total > 0 ? done / total : 0;
  *net_only = total - feat > 0 ? done / (total - feat) : 0;
  for (int i = 0; i < data->n_tasks; i++) pc_program_free(task_prog[i]);
  free(task_prog), free(prog), free(cand), free(x), free(sc), free(xp), free(rows);
}

/* Auxiliary target a's platform name in MTL-TLP: "<target file name>-analytic". */
static void aux_platform(const lb_opts *o, int a, char *out, size_t cap) {
  lb_analytic_platform(o->aux_paths[a], out, cap);
}

/* The analytic predictor's latency of the first aux_per_task schedules of each training task on
 * auxiliary target `a` (with aux_missing, only those the other real platform did not measure),
 * written as records whose target names the platform "<target file name>-analytic" (MTL-TLP's cheap
 * labels for machines nobody measured). */
static int write_aux_records(const lb_data *data, const lb_opts *o, int a, const char *path, int *n_written,
                             pt_diag *d) {
  FILE *f = fopen(path, "w");
  if (!f) return pt_fail(d, PT_ERR_IO, "%s: cannot write", path);
  *n_written = 0;
  ptg_target *tg = ptg_target_load(o->aux_paths[a], d);
  pc_cost_model cm;
  if (!tg || tune_model_new("analytic", tg, 0, o->seed, &cm, d) < 0) {
    ptg_target_free(tg);
    fclose(f);
    return d->err ? d->err : PT_ERR_INPUT;
  }
  char platform[160], target[256];
  aux_platform(o, a, platform, sizeof platform);
  snprintf(target, sizeof target, "llvm -keys=cpu -mcpu=%s", platform);
  for (int i = 0; i < data->n_tasks; i++) {
    const lb_task *t = &data->t[i];
    if (t->role != LB_TRAIN) continue;
    pt_diag pd = {0};
    pc_program *p = pc_workload_build(t->key, &pd);
    if (!p) continue;
    int n = o->aux_per_task < t->n ? o->aux_per_task : t->n;
    pc_state **s = task_states(t, p, n);
    for (int c = 0; c < n; c++) {
      double score = 0;
      if (o->aux_missing && t->c[c].other_latency > 0) continue;
      if (!s[c] || cm.predict(cm.self, p, 1, &s[c], &score, &pd) < 0 || !(score > 0)) continue;
      pc_record *r = calloc(1, sizeof *r);
      snprintf(r->workload_key, sizeof r->workload_key, "%s", t->key);
      snprintf(r->target, sizeof r->target, "%s", target);
      r->n_steps = t->c[c].n_steps;
      memcpy(r->steps, t->c[c].steps, sizeof(pc_step) * (size_t)r->n_steps);
      r->n_costs = 1, r->costs[0] = 1 / score;
      char *line = pc_record_format(r);
      if (line) fprintf(f, "%s\n", line), (*n_written)++;
      free(line);
      free(r);
    }
    free_states(s, n);
    pc_program_free(p);
  }
  cm.free(cm.self);
  ptg_target_free(tg);
  return fclose(f) == 0 ? 0 : pt_fail(d, PT_ERR_IO, "%s: write failed", path);
}

/* Auxiliary platform a's labels into `path`: read from --aux-cache's file when it holds them, else
 * made there (written under another name, then renamed, so that a run beside this one reads a whole
 * file or none) or, without --aux-cache, in a temporary file (*temp: delete it after). */
static int make_aux_labels(const lb_data *data, const lb_opts *o, int a, char *path, bool *temp, pt_diag *d) {
  const char *base = strrchr(o->aux_paths[a], '/');
  base = base ? base + 1 : o->aux_paths[a];
  char per[16], partial[LB_AUX_PATH + 32];
  if (o->aux_per_task >= LB_AUX_ALL) snprintf(per, sizeof per, "all");
  else snprintf(per, sizeof per, "%d", o->aux_per_task);
  *temp = !o->aux_cache;
  if (o->aux_cache) {
    snprintf(path, LB_AUX_PATH, "%s/%.*s-analytic-%s%s.jsonl", o->aux_cache, (int)strcspn(base, "."), base, per,
             o->aux_missing ? "-missing" : "");
    if (access(path, R_OK) == 0) {
      fprintf(stderr, "bench learn: auxiliary labels of %s read from %s\n", o->aux_paths[a], path);
      return 0;
    }
    snprintf(partial, sizeof partial, "%s.%ld.part", path, (long)getpid());
  } else {
    snprintf(path, LB_AUX_PATH, "/tmp/portent-learn-aux-XXXXXX");
    int fd = mkstemp(path);
    if (fd < 0) return pt_fail(d, PT_ERR_IO, "cannot create a temporary file for the auxiliary labels");
    close(fd);
    snprintf(partial, sizeof partial, "%s", path);
  }
  int n_aux = 0;
  double t0 = pt_now();
  int rc = write_aux_records(data, o, a, partial, &n_aux, d);
  fprintf(stderr, "bench learn: %d auxiliary labels from the analytic predictor on %s in %.1f s\n", n_aux,
          o->aux_paths[a], pt_now() - t0);
  if (rc == 0 && o->aux_cache && rename(partial, path) != 0) rc = pt_fail(d, PT_ERR_IO, "%s: cannot save", path);
  if (rc < 0 && o->aux_cache) unlink(partial);
  return rc;
}

/* --train-weights: each training task's loss scaled as TLP's score weighs a test task, by its
 * occurrences in the training networks, times its best latency on the ranked platform for "time"
 * (a task absent from them weighs 1; one without a label there takes the mean best latency);
 * normalized to a mean of 1 over the training samples, so that the step size stays. */
static float *task_train_weights(const pp_tlp_dataset *ds, int platform, int kind) {
  int ng = ds->n_groups;
  pt_diag d = {0};
  pc_network_task *nt = NULL;
  int n_nt = pc_networks_tasks("training", &nt, &d);
  double *best = malloc(sizeof(double) * (size_t)(ng + 1)), mean_best = 0;
  float *w = malloc(sizeof(float) * (size_t)(ng + 1));
  for (int g = 0; g < ng; g++) best[g] = INFINITY;
  for (int i = 0; i < ds->n; i++) {
    float l = ds->s[i].latency[platform];
    if (!ds->s[i].test && l > 0 && l < best[ds->s[i].group]) best[ds->s[i].group] = l;
  }
  int n_best = 0;
  for (int g = 0; g < ng; g++)
    if (isfinite(best[g])) mean_best += best[g], n_best++;
  mean_best = n_best ? mean_best / n_best : 1;
  for (int g = 0; g < ng; g++) {
    char *key = pp_tlp_group_key(ds, g);
    int occ = 1;
    for (int k = 0; k < n_nt; k++)
      if (strcmp(nt[k].key, key) == 0) occ = nt[k].weight;
    free(key);
    w[g] = (float)(occ * (kind == LB_TW_TIME ? (isfinite(best[g]) ? best[g] : mean_best) : 1));
  }
  double sum = 0;
  int n = 0;
  for (int i = 0; i < ds->n; i++)
    if (!ds->s[i].test) sum += w[ds->s[i].group], n++;
  for (int g = 0; g < ng; g++) w[g] = sum > 0 ? (float)(w[g] * n / sum) : 1;
  free(best), free(nt);
  return w;
}

/* One scoring of a trained MTL-TLP model: a head's scores, or with plus >= 0 the two heads' scores
 * each standardized within a task and summed. */
#define LB_MAX_SCORE_ROWS 5
typedef struct {
  const char *name;
  int head, plus;
} score_row;

/* one[i] := one[i] and two[i] each standardized within validation or test task i, summed. */
static void sum_standardized(const lb_data *data, double **one, double **two) {
  for (int i = 0; i < data->n_tasks; i++) {
    const lb_task *t = &data->t[i];
    if ((t->role != LB_VAL && t->role != LB_TEST) || t->n == 0) continue;
    double *a = malloc(sizeof(double) * (size_t)t->n);
    memcpy(a, one[i], sizeof(double) * (size_t)t->n);
    memset(one[i], 0, sizeof(double) * (size_t)t->n);
    add_standardized(t->n, one[i], a, 1);
    add_standardized(t->n, one[i], two[i], 1);
    free(a);
  }
}

typedef struct {
  char name[48];
  bool mtl, target_only;
  int n_aux; /* auxiliary platforms loaded: the first n of --aux-targets */
  double fraction;
  bool score_other; /* ranks with the other real platform's head (fraction 0: a model that never saw
                       the ranked platform's labels) */
  bool pretrain;    /* --pretrain applies (the plain tlp row) */
} tlp_variant;

/* --pretrain: its records after the measured ones, labels to the ranked platform's head; those of a
 * workload that is no training task of the bench (validation, test, or absent from the records) are
 * marked held out and never train. */
static int load_pretrain(const lb_data *data, const lb_opts *o, pp_tlp_dataset *ds, const pp_tlp_split *sp,
                         pp_tlp_vocab *vocab, pt_diag *d) {
  char platform[128];
  pp_tlp_platform(data->target, platform, sizeof platform);
  int n0 = ds->n, n_added = 0;
  if (pp_tlp_dataset_load_pretrain(ds, o->pretrain, sp, vocab, ds->multi_platform ? platform : NULL, &n_added, d) < 0)
    return d->err ? d->err : PT_ERR_IO;
  int n_used = 0, n_tasks = 0;
  bool *seen = calloc((size_t)ds->n_groups + 1, sizeof(bool));
  for (int i = n0; i < ds->n; i++) {
    pp_tlp_sample *s = &ds->s[i];
    char *key = strdup(ds->groups[s->group]), *at = strstr(key, " @ pretrain ");
    if (at) *at = 0;
    bool train = false;
    for (int t = 0; t < data->n_tasks && !train; t++) train = data->t[t].role == LB_TRAIN && strcmp(data->t[t].key, key) == 0;
    free(key);
    if (!train) s->test = true;
    n_used += train;
    if (train && !seen[s->group]) n_tasks++, seen[s->group] = true;
  }
  free(seen);
  fprintf(stderr, "bench learn: pre-training on %d programs of %d training tasks from %s (%d on workloads that are no "
          "training task, not used), %d epochs\n", n_used, n_tasks, o->pretrain, n_added - n_used, o->pretrain_epochs);
  return 0;
}

/* How the first seed's draw of the ranked platform's labels spreads over the training tasks. */
static void print_kept(const pp_tlp_dataset *ds, const pp_tlp_train_opts *to, const char *name) {
  int np = ds->n_platforms, tp = to->target_platform, ng = ds->n_groups;
  bool *keep = calloc((size_t)ds->n * np + 1, sizeof(bool));
  int *per = calloc((size_t)ng + 1, sizeof(int)), *all = calloc((size_t)ng + 1, sizeof(int));
  pp_tlp_train_keep(ds, to, keep);
  int kept = 0, labelled = 0, tasks = 0, none = 0, pairs = 0;
  for (int i = 0; i < ds->n; i++)
    if (!ds->s[i].test && ds->s[i].latency[tp] > 0) {
      all[ds->s[i].group]++, labelled++;
      if (keep[(size_t)i * np + tp]) per[ds->s[i].group]++, kept++;
    }
  for (int g = 0; g < ng; g++)
    if (all[g]) tasks++, none += per[g] == 0, pairs += per[g] >= 2;
  fprintf(stderr, "bench learn: %s keeps %d of %d labels of the ranked platform (seed %llu): %d of its %d training "
          "tasks keep none, %d two or more\n", name, kept, labelled, (unsigned long long)to->seed, none, tasks, pairs);
  free(keep), free(per), free(all);
}

/* --avg-rows: one training run's parameters summed over each window of last epochs asked. */
typedef struct {
  int epochs, n;
  const int *k;
  pp_tlp_avg a[LB_MAX_AVG_ROWS];
} avg_windows;

static void avg_windows_epoch(void *ctx, int epoch, const float *w, int n_params) {
  avg_windows *aw = ctx;
  for (int i = 0; i < aw->n; i++) {
    if (epoch < aw->epochs - aw->k[i]) continue;
    if (!aw->a[i].sum && pp_tlp_avg_init(&aw->a[i], n_params) < 0) continue; /* out of memory: row left out */
    pp_tlp_avg_add(&aw->a[i], w);
  }
}

/* One row per window of the seed's model scored with its parameters averaged over that window (the
 * model is left as trained). */
static void add_avg_rows(lb_data *data, const lb_opts *o, avg_windows *aw, pp_tlp_model *mm, int head,
                         const char *name, uint64_t seed, double ts, double **one) {
  int n_params = pp_tlp_model_n_params(mm);
  float *w = pp_tlp_model_params(mm), *trained = malloc(sizeof(float) * (size_t)n_params);
  if (!trained) return;
  memcpy(trained, w, sizeof(float) * (size_t)n_params);
  for (int i = 0; i < aw->n; i++) {
    if (!aw->a[i].count) continue;
    pp_tlp_avg_mean(&aw->a[i], w);
    score_tlp_into(data, one, mm, head);
    memcpy(w, trained, sizeof(float) * (size_t)n_params);
    char nm[96];
    snprintf(nm, sizeof nm, "%s avg%d seed %llu", name, aw->k[i], (unsigned long long)seed);
    int model = lb_add_model(data, nm);
    if (model < 0) continue;
    data->train_s[model] = ts;
    for (int t = 0; t < data->n_tasks; t++)
      if (data->t[t].role == LB_VAL || data->t[t].role == LB_TEST)
        memcpy(data->t[t].scores[model], one[t], sizeof(double) * (size_t)data->t[t].n);
    print_row_now(data, o, model);
  }
  free(trained);
}

/* Trains one TLP variant on the training tasks and scores the held-out ones. */
static int run_tlp_variant(lb_data *data, const lb_opts *o, const tlp_variant *v, int n_files, const char **files,
                           char aux_paths[][LB_AUX_PATH], pp_tlp_model **keep, pt_diag *d) {
  pp_tlp_split sp;
  held_out_split(data, &sp);
  pp_tlp_dataset ds;
  pp_tlp_dataset_init(&ds, v->mtl);
  ds.emb = o->emb;
  pp_tlp_vocab vocab = {0};
  int rc = 0;
  for (int f = 0; f < n_files && rc == 0; f++) rc = pp_tlp_dataset_load(&ds, files[f], &sp, &vocab, true, d);
  for (int a = 0; a < v->n_aux && rc == 0; a++) rc = pp_tlp_dataset_load(&ds, aux_paths[a], &sp, &vocab, true, d);
  if (rc == 0 && o->pretrain && v->pretrain) rc = load_pretrain(data, o, &ds, &sp, &vocab, d);
  pp_tlp_model *m = NULL;
  float *weights = NULL;
  if (rc == 0) {
    pp_tlp_dataset_finish(&ds);
    pp_tlp_config cfg;
    pp_tlp_config_default(&cfg);
    int w = o->width;
    cfg.enc[0] = w / 4, cfg.enc[1] = w / 2, cfg.enc[2] = w, cfg.enc[3] = w;
    cfg.dec[0] = w, cfg.dec[1] = w / 2, cfg.dec[2] = w / 4;
    pp_tlp_train_opts to;
    pp_tlp_train_opts_default(&to);
    to.epochs = o->epochs, to.batch = o->batch, to.lr = o->lr, to.clip_norm = o->clip;
    bool single = !v->mtl || v->target_only; /* TLP: one platform's labels */
    to.task_batches = o->batches == LB_BATCHES_TASK || (o->batches == LB_BATCHES_DEFAULT && single);
    to.aux_weight = o->aux_weight;
    to.avg_epochs = o->avg_epochs, to.label_power = o->label_power, to.rank = o->rank;
    to.pretrain_epochs = o->pretrain && v->pretrain ? o->pretrain_epochs : 0;
    char platform[128];
    pp_tlp_platform(data->target, platform, sizeof platform);
    int tp = v->mtl ? pp_tlp_platform_index(&ds, platform) : -1, head = tp < 0 ? 0 : tp;
    if (v->score_other) {
      char other[128];
      pp_tlp_platform(data->other, other, sizeof other);
      head = pp_tlp_platform_index(&ds, other);
      if (head < 0) rc = pt_fail(d, PT_ERR_INPUT, "%s: no training record of platform %s", v->name, other);
    }
    if (o->train_weights != LB_TW_NONE) to.group_weight = weights = task_train_weights(&ds, head, o->train_weights);
    to.target_platform = tp;
    to.target_fraction = v->fraction;
    to.target_only = v->target_only;
    to.thin_block = o->thin_block, to.thin_spread = o->thin_spread;
    if (o->warm_epochs > 0 && v->mtl && !v->target_only && !v->score_other && data->other[0]) {
      char other[128]; /* the ranked platform's head starts from the other real platform's */
      pp_tlp_platform(data->other, other, sizeof other);
      to.warm_from = pp_tlp_platform_index(&ds, other);
      if (to.warm_from >= 0 && tp >= 0) to.warm_epochs = o->warm_epochs;
    }
    to.seed = o->seed;
    if (tp >= 0 && v->fraction < 1) print_kept(&ds, &to, v->name);
    /* The rows: the ranked platform's head; with --other-heads the other real platform's head and
     * both heads' standardized scores summed (what the shared backbone knows without the few labels
     * of the ranked head); with --aux-heads the first auxiliary head and the ranked one plus it. */
    int ns = o->n_seeds, n_sc = 1;
    score_row sc[LB_MAX_SCORE_ROWS] = {{"", head, -1}};
    if (o->other_heads && v->mtl && !v->target_only && !v->score_other && tp >= 0 && data->other[0]) {
      char other[128];
      pp_tlp_platform(data->other, other, sizeof other);
      int oh = pp_tlp_platform_index(&ds, other);
      if (oh >= 0) sc[n_sc++] = (score_row){" h:other", oh, -1}, sc[n_sc++] = (score_row){" h:both", head, oh};
    }
    if (o->aux_heads && v->mtl && v->n_aux >= 1 && !v->score_other && tp >= 0) {
      char aux[160];
      aux_platform(o, 0, aux, sizeof aux);
      int ah = pp_tlp_platform_index(&ds, aux);
      if (ah >= 0) sc[n_sc++] = (score_row){" h:aux", ah, -1}, sc[n_sc++] = (score_row){" h:+aux", head, ah};
    }
    double **ens[LB_MAX_SCORE_ROWS], **one = calloc((size_t)data->n_tasks + 1, sizeof(double *)),
                     **two = calloc((size_t)data->n_tasks + 1, sizeof(double *));
    for (int k = 0; k < n_sc; k++) ens[k] = calloc((size_t)data->n_tasks + 1, sizeof(double *));
    for (int i = 0; i < data->n_tasks; i++) {
      for (int k = 0; k < n_sc; k++) ens[k][i] = calloc((size_t)data->t[i].n + 1, sizeof(double));
      one[i] = calloc((size_t)data->t[i].n + 1, sizeof(double));
      two[i] = calloc((size_t)data->t[i].n + 1, sizeof(double));
    }
    double t_all = 0;
    for (int seed = 0; seed < ns && rc == 0; seed++) {
      to.seed = o->seed + (uint64_t)seed;
      pt_diag sd = {0};
      pp_tlp_vocab vcopy = {0}; /* training moves the vocabulary's tokens into the model: each seed its own */
      for (int i = 0; i < vocab.n; i++) pp_tlp_vocab_id(&vcopy, vocab.tokens[i], true);
      double t0 = pt_now();
      avg_windows aw = {.epochs = to.epochs, .n = o->n_avg_rows, .k = o->avg_rows};
      if (aw.n) to.epoch_end = avg_windows_epoch, to.epoch_ctx = &aw;
      pp_tlp_model *mm = pp_tlp_train(&ds, &vcopy, &cfg, &to, &sd);
      pp_tlp_vocab_clear(&vcopy);
      if (mm && aw.n) add_avg_rows(data, o, &aw, mm, sc[0].head, v->name, to.seed, pt_now() - t0, one);
      for (int i = 0; i < aw.n; i++) pp_tlp_avg_free(&aw.a[i]);
      if (!mm) {
        rc = sd.err ? sd.err : PT_ERR_RUNTIME;
        *d = sd;
        break;
      }
      double ts = pt_now() - t0;
      t_all += ts;
      fprintf(stderr, "bench learn: %s (seed %llu) trained on %d platform(s) in %.1f s\n", v->name,
              (unsigned long long)to.seed, ds.n_platforms, ts);
      for (int k = 0; k < n_sc; k++) {
        score_tlp_into(data, one, mm, sc[k].head);
        if (sc[k].plus >= 0) {
          score_tlp_into(data, two, mm, sc[k].plus);
          sum_standardized(data, one, two);
        }
        if (ns > 1 || k > 0) { /* each seed's own row: the spread between seeds */
          char nm[96];
          snprintf(nm, sizeof nm, "%s%s seed %llu", v->name, sc[k].name, (unsigned long long)to.seed);
          int model = lb_add_model(data, nm);
          if (model >= 0) {
            data->train_s[model] = ts;
            for (int i = 0; i < data->n_tasks; i++)
              if (data->t[i].role == LB_VAL || data->t[i].role == LB_TEST)
                memcpy(data->t[i].scores[model], one[i], sizeof(double) * (size_t)data->t[i].n);
            print_row_now(data, o, model);
          }
        }
        ensemble_add(data, ens[k], one, ns);
      }
      if (!m) m = mm;
      else pp_tlp_model_free(mm);
    }
    for (int k = 0; k < n_sc && rc == 0; k++) {
      char nm[96];
      if (ns > 1) snprintf(nm, sizeof nm, "%s%s x%d seeds", v->name, sc[k].name, ns);
      else snprintf(nm, sizeof nm, "%s%s", v->name, sc[k].name);
      int model = lb_add_model(data, nm);
      if (model >= 0) {
        data->train_s[model] = t_all;
        for (int i = 0; i < data->n_tasks; i++)
          if (data->t[i].role == LB_VAL || data->t[i].role == LB_TEST)
            for (int c = 0; c < data->t[i].n; c++) data->t[i].scores[model][c] = ens[k][i][c];
        print_row_now(data, o, model);
      }
    }
    for (int i = 0; i < data->n_tasks; i++) {
      for (int k = 0; k < n_sc; k++) free(ens[k][i]);
      free(one[i]), free(two[i]);
    }
    for (int k = 0; k < n_sc; k++) free(ens[k]);
    free(one), free(two);
  }
  if (m && keep) *keep = m;
  else pp_tlp_model_free(m);
  free(weights);
  pp_tlp_dataset_free(&ds);
  pp_tlp_vocab_clear(&vocab);
  pp_tlp_split_free(&sp);
  return rc;
}

/* The ranked platform's candidates ordered by their latency measured on the other platform: how
 * well one machine's labels alone rank the other's programs (the ceiling of a model trained on
 * them alone); a program not measured there ranks last. */
static void run_measured_other(lb_data *data, const lb_opts *o) {
  char other[128], nm[48];
  pp_tlp_platform(data->other, other, sizeof other);
  snprintf(nm, sizeof nm, "measured on %.32s", other);
  int model = lb_add_model(data, nm);
  if (model < 0) return;
  for (int i = 0; i < data->n_tasks; i++) {
    lb_task *t = &data->t[i];
    if (t->role != LB_VAL && t->role != LB_TEST) continue;
    for (int k = 0; k < t->n; k++) t->scores[model][k] = t->c[k].other_latency > 0 ? -t->c[k].other_latency : NAN;
  }
  print_row_now(data, o, model);
}

/* ---------------------------------------------------------------- tables */

/* One model's line as soon as it is scored (a long run cut short keeps what it finished). */
static void print_row_now(const lb_data *data, const lb_opts *o, int m) {
  int sub = o->analytic_per_task;
  bool partial = strcmp(data->model_names[m], "analytic") == 0;
  fprintf(stderr,
          "bench learn: %-26s trained %.1f s: top-1 %.4f top-5 %.4f top-1@sub %.4f top-5@sub %.4f val top-1 %.4f "
          "task-mean top-1 %.4f val top-5 %.4f val task-mean top-1 %.4f\n",
          data->model_names[m], data->train_s[m], partial ? NAN : lb_topk(data, m, LB_TEST, -1, 1, 0),
          partial ? NAN : lb_topk(data, m, LB_TEST, -1, 5, 0), lb_topk(data, m, LB_TEST, -1, 1, sub),
          lb_topk(data, m, LB_TEST, -1, 5, sub), partial ? NAN : lb_topk(data, m, LB_VAL, -1, 1, 0),
          partial ? NAN : lb_task_mean(data, m, LB_TEST, 1), partial ? NAN : lb_topk(data, m, LB_VAL, -1, 5, 0),
          partial ? NAN : lb_task_mean(data, m, LB_VAL, 1));
}

static void print_tables(const lb_data *data, const lb_opts *o) {
  printf("\ntest networks' tasks: weighted top-k (TLP's score; 1 = the model's pick is the fastest measured)\n");
  printf("%-30s %9s %8s %8s %10s %10s %9s %11s\n", "model", "train s", "top-1", "top-5", "top-1@sub", "top-5@sub",
         "val top-1", "task-mean 1");
  int sub = o->analytic_per_task;
  printf("%-30s %9s %8.4f %8.4f %10.4f %10.4f %9.4f %11.4f\n", "random (expectation)", "-",
         lb_topk(data, -1, LB_TEST, -1, 1, 0), lb_topk(data, -1, LB_TEST, -1, 5, 0), lb_topk(data, -1, LB_TEST, -1, 1, sub),
         lb_topk(data, -1, LB_TEST, -1, 5, sub), lb_topk(data, -1, LB_VAL, -1, 1, 0), lb_task_mean(data, -1, LB_TEST, 1));
  for (int m = 0; m < data->n_models; m++) {
    bool partial = strcmp(data->model_names[m], "analytic") == 0;
    char ts[32] = "-";
    if (data->train_s[m] >= 0) snprintf(ts, sizeof ts, "%.1f", data->train_s[m]);
    if (partial)
      printf("%-30s %9s %8s %8s %10.4f %10.4f %9s %11s\n", data->model_names[m], ts, "-", "-",
             lb_topk(data, m, LB_TEST, -1, 1, sub), lb_topk(data, m, LB_TEST, -1, 5, sub), "-", "-");
    else
      printf("%-30s %9s %8.4f %8.4f %10.4f %10.4f %9.4f %11.4f\n", data->model_names[m], ts,
             lb_topk(data, m, LB_TEST, -1, 1, 0), lb_topk(data, m, LB_TEST, -1, 5, 0), lb_topk(data, m, LB_TEST, -1, 1, sub),
             lb_topk(data, m, LB_TEST, -1, 5, sub), lb_topk(data, m, LB_VAL, -1, 1, 0), lb_task_mean(data, m, LB_TEST, 1));
  }
  printf("(@sub: the first %d candidates of each test task, the analytic model's share; val: validation tasks, %s;\n"
         " task-mean 1: top-1 of each test task averaged with w = 1, which no single task's pick can swing)\n",
         sub, o->val_networks ? "w = occurrences in the validation networks" : "w = 1");
  printf("\ntop-1 per test network (all candidates; analytic: @sub)\n%-30s", "model");
  for (int k = 0; k < data->n_nets; k++) printf(" %12s", data->nets[k]);
  printf("\n%-30s", "random (expectation)");
  for (int k = 0; k < data->n_nets; k++) printf(" %12.4f", lb_topk(data, -1, LB_TEST, k, 1, 0));
  for (int m = 0; m < data->n_models; m++) {
    bool partial = strcmp(data->model_names[m], "analytic") == 0;
    printf("\n%-30s", data->model_names[m]);
    for (int k = 0; k < data->n_nets; k++) printf(" %12.4f", lb_topk(data, m, LB_TEST, k, 1, partial ? sub : 0));
  }
  printf("\n");
}

/* MTL-TLP's rows, TLP's settings: for each share of the ranked platform's training labels
 * (--fractions; default 7% and 20%, and 100% when the records hold a second real platform), TLP on
 * that share alone, MTL-TLP with the other real platform's labels beside it, and with the first one
 * and two auxiliary platforms (TLP found 3 tasks better than 2 and 4 worse). At 100%, TLP alone is
 * the plain tlp row when it runs, and the auxiliary row has them all. */
static int mtl_variants(const lb_data *data, const lb_opts *o, bool two_real, tlp_variant *variants) {
  double fallback[] = {0.07, 0.2, 1};
  const double *fr = o->n_fractions ? o->fractions : fallback;
  int n_fr = o->n_fractions ? o->n_fractions : 3, n_v = 0;
  for (int f = 0; f < n_fr; f++) {
    int pct = (int)(fr[f] * 100 + 0.5);
    bool all = pct >= 100;
    if (!all || (two_real && !o->run_tlp)) {
      tlp_variant *v = &variants[n_v++];
      *v = (tlp_variant){"", true, true, 0, fr[f], false};
      snprintf(v->name, sizeof v->name, "tlp %d%%", pct);
    }
    if (two_real) {
      tlp_variant *v = &variants[n_v++];
      *v = (tlp_variant){"", true, false, 0, fr[f], false};
      snprintf(v->name, sizeof v->name, "mtl-tlp %d%% real (%d tasks)", pct, data->n_targets);
    }
    for (int a = all ? o->n_aux : 1; a >= 1 && a <= o->n_aux && (all || a <= 2); a++) {
      tlp_variant *v = &variants[n_v++];
      *v = (tlp_variant){"", true, false, a, fr[f], false};
      snprintf(v->name, sizeof v->name, "mtl-tlp %d%% +%d aux (%d tasks)", pct, a, data->n_targets + a);
    }
  }
  return n_v;
}

/* --per-task: each test task's weight w, best latency, share of the weighted score's numerator
 * (w x best over the sum: what decides TLP's figure) and each model's top-1 on it (best / the
 * pick's latency), heaviest first. */
static void print_per_task(const lb_data *data) {
  int n = 0;
  int *order = malloc(sizeof(int) * (size_t)(data->n_tasks + 1));
  double total = 0;
  for (int i = 0; i < data->n_tasks; i++)
    if (data->t[i].role == LB_TEST && data->t[i].n >= 2) {
      order[n++] = i;
      total += data->t[i].weight * lb_task_best(&data->t[i]);
    }
  for (int a = 1; a < n; a++) /* insertion sort by w x best, descending */
    for (int b = a; b > 0; b--) {
      const lb_task *x = &data->t[order[b]], *y = &data->t[order[b - 1]];
      if (x->weight * lb_task_best(x) <= y->weight * lb_task_best(y)) break;
      int tmp = order[b];
      order[b] = order[b - 1], order[b - 1] = tmp;
    }
  printf("\ntop-1 per test task (best / latency of the model's pick), heaviest w x best first; models:\n");
  for (int m = 0; m < data->n_models; m++) printf("  m%d = %s\n", m, data->model_names[m]);
  printf("%-48s %4s %5s %9s %6s", "task", "w", "cands", "best ms", "share");
  for (int m = 0; m < data->n_models; m++) printf("  m%-4d", m);
  printf("\n");
  for (int k = 0; k < n; k++) {
    const lb_task *t = &data->t[order[k]];
    double best = lb_task_best(t);
    printf("%-48.48s %4.0f %5d %9.4f %5.1f%%", t->key, t->weight, t->n, best * 1e3, 100 * t->weight * best / total);
    for (int m = 0; m < data->n_models; m++) printf("  %5.3f", best / lb_task_pick(t, m, 1));
    printf("\n");
  }
  free(order);
}

int lb_run(lb_data *data, const lb_opts *o, const char **files, int n_files, pt_diag *d) {
  if (o->run_analytic) run_analytic(data, o);
  if (o->run_xgb) run_online(data, o, "xgb");
  if (o->run_xgb_imp) run_online(data, o, "xgb-imp");
  pp_tlp_model *tlp = NULL;
  bool two_real = data->n_targets >= 2 && data->other[0];
  if (o->run_tlp) { /* with two real platforms in the records, on the ranked platform's labels alone */
    tlp_variant v = {"tlp", two_real, two_real, 0, 1, false, true};
    if (run_tlp_variant(data, o, &v, n_files, files, NULL, &tlp, d) < 0) return d->err;
  }
  if (o->run_mtl) {
    /* TLP's settings: 7% and 20% of the target's training labels, single- against multi-task, and
     * 2 against 3 tasks (TLP found 3 better than 2 and 4 worse); the real platforms of the records
     * first, then the auxiliary ones, whose labels are made once the variants without them ran. */
    char aux_paths[LB_MAX_AUX][LB_AUX_PATH];
    bool temps[LB_MAX_AUX] = {false};
    int rc = 0, n_made = 0;
    tlp_variant variants[LB_MAX_FRACTIONS * 4 + 1];
    int n_v = mtl_variants(data, o, two_real, variants);
    if (data->n_targets < 2)
      printf("mtl-tlp on real platforms alone: the records hold one platform, so it is tlp 7%%/20%%\n");
    for (int i = 0; i < n_v && rc == 0; i++) {
      if (o->rows && !strstr(variants[i].name, o->rows)) continue; /* --rows: a long run split in parts */
      while (n_made < variants[i].n_aux) { /* the auxiliary labels, when a variant first needs them */
        rc = make_aux_labels(data, o, n_made, aux_paths[n_made], &temps[n_made], d);
        n_made++;
        if (rc < 0) break;
      }
      if (rc < 0) break;
      pt_diag vd = {0};
      if (run_tlp_variant(data, o, &variants[i], n_files, files, aux_paths, NULL, &vd) < 0)
        printf("%-30s skipped: %s\n", variants[i].name, vd.msg); /* e.g. 7%% of a small dataset ranks nothing */
    }
    for (int a = 0; a < n_made; a++)
      if (temps[a]) unlink(aux_paths[a]);
    if (rc < 0) {
      pp_tlp_model_free(tlp);
      return rc;
    }
  }
  if (o->run_transfer && !two_real)
    printf("transfer: the records hold one platform (--platform ranks one of two measured on the same programs)\n");
  else if (o->run_transfer) { /* the other platform's labels alone, measured and learned */
    run_measured_other(data, o);
    char other[128];
    pp_tlp_platform(data->other, other, sizeof other);
    tlp_variant v = {"", true, false, 0, 0, true};
    snprintf(v.name, sizeof v.name, "tlp on %.32s alone", other);
    pt_diag vd = {0};
    if (run_tlp_variant(data, o, &v, n_files, files, NULL, NULL, &vd) < 0) printf("%-30s skipped: %s\n", v.name, vd.msg);
  }
  print_tables(data, o);
  if (o->per_task) print_per_task(data);
  if (tlp) {
    double with_f, net, per_cpu;
    tlp_throughput(data, tlp, o->throughput_s, &with_f, &net, &per_cpu);
    printf("\nTLP inference (width %d, %d parameters, batches of up to 512, %ld cores, OpenBLAS %s on %d thread%s): "
           "%.0f candidates/s with features (wall clock), %.0f/s the network alone; %.0f per CPU-second of this process "
           "(target >= 3000/s)\n",
           o->width, pp_tlp_model_n_params(tlp), sysconf(_SC_NPROCESSORS_ONLN), pp_tlp_blas_core(), pp_tlp_blas_threads(),
           pp_tlp_blas_threads() == 1 ? "" : "s", with_f, net, per_cpu);
    pp_tlp_model_free(tlp);
  }
  return 0;
}
