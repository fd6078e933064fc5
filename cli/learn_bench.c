/* bench learn's data: records grouped by task, each task's role (training, validation, or a test
 * network's task with its weight w), and TLP's weighted top-k score of a model's ranking. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "learn_bench.h"

void lb_opts_default(lb_opts *o) {
  *o = (lb_opts){.epochs = 100, .batch = 128, .width = 128, .emb = PP_TLP_EMB,
                 .lr = 7e-4, .n_seeds = 1, .aux_weight = 1, .label_power = 1, .rank = {.ndcg_k = 0, .gain_scale = 1},
                 .analytic_per_task = 8, .aux_per_task = LB_AUX_ALL, .val_fraction = 0.1, .seed = 1, .throughput_s = 2,
                 .run_analytic = false};
}

/* Small enough for a CLI test: a few tasks, a tiny network, one analytic candidate pair. */
void lb_opts_quick(lb_opts *o) {
  o->quick = true;
  o->epochs = 3, o->width = 16, o->batch = 64;
  o->analytic_per_task = 2, o->aux_per_task = 2;
  o->max_test_tasks = 3, o->max_train_tasks = 6;
  o->throughput_s = 0.2;
}

typedef struct {
  lb_data *data;
  char (*targets)[256];
  int *target_count, n_targets;
} read_ctx;

void lb_analytic_platform(const char *target_path, char *out, size_t cap) {
  const char *base = strrchr(target_path, '/');
  base = base ? base + 1 : target_path;
  snprintf(out, cap, "%.*s-analytic", (int)strcspn(base, "."), base);
}

static lb_task *find_task(lb_data *data, const char *key) {
  for (int i = 0; i < data->n_tasks; i++)
    if (strcmp(data->t[i].key, key) == 0) return &data->t[i];
  return NULL;
}

/* First pass: count the records per target string. */
static int count_target(const pc_record *r, int line, void *vctx) {
  (void)line;
  read_ctx *c = vctx;
  for (int i = 0; i < c->n_targets; i++)
    if (strcmp(c->targets[i], r->target) == 0) {
      c->target_count[i]++;
      return 0;
    }
  if (c->n_targets < 64) {
    snprintf(c->targets[c->n_targets], 256, "%s", r->target);
    c->target_count[c->n_targets++] = 1;
  }
  return 0;
}

static int add_record(const pc_record *r, int line, void *vctx) {
  (void)line;
  lb_data *data = ((read_ctx *)vctx)->data;
  data->n_records++;
  if (strcmp(r->target, data->target) != 0) {
    data->n_other_target++;
    return 0;
  }
  double lat = 0;
  for (int i = 0; i < r->n_costs; i++) lat += r->costs[i];
  lat = r->n_costs ? lat / r->n_costs : 0;
  if (r->error_code != 0 || !(lat > 0) || !isfinite(lat) || lat >= 1e9) {
    data->n_failed++;
    return 0;
  }
  lb_task *t = find_task(data, r->workload_key);
  if (!t) {
    data->t = realloc(data->t, sizeof *data->t * (size_t)(data->n_tasks + 1));
    t = &data->t[data->n_tasks++];
    memset(t, 0, sizeof *t);
    snprintf(t->key, sizeof t->key, "%s", r->workload_key);
    t->weight = 1;
  }
  if (t->n == t->cap) t->c = realloc(t->c, sizeof *t->c * (size_t)(t->cap = t->cap ? 2 * t->cap : 64));
  lb_cand *c = &t->c[t->n++];
  c->n_steps = r->n_steps;
  c->steps = malloc(sizeof(pc_step) * (size_t)(r->n_steps ? r->n_steps : 1));
  memcpy(c->steps, r->steps, sizeof(pc_step) * (size_t)r->n_steps);
  c->latency = lat;
  return 0;
}

static int cmp_key(const void *a, const void *b) { return strcmp(((const lb_task *)a)->key, ((const lb_task *)b)->key); }

int lb_val_network_tasks(const char *list, pc_network_task **out, pt_diag *d) {
  *out = NULL;
  char *names = strdup(list), *save = NULL;
  int rc = 0;
  for (char *nm = strtok_r(names, ",", &save); nm && rc == 0; nm = strtok_r(NULL, ",", &save)) {
    if (strcmp(nm, "test") == 0 || strcmp(nm, "training") == 0 || strcmp(nm, "all") == 0) {
      rc = pt_fail(d, PT_ERR_INPUT, "--val-networks: name training networks, not '%s'", nm);
      break;
    }
    pc_network *net = pc_network_build(nm, d);
    if (!net) rc = d->err ? d->err : PT_ERR_INPUT;
    else if (net->test)
      rc = pt_fail(d, PT_ERR_INPUT, "--val-networks: %s is a test network (validation holds out training networks)", nm);
    pc_network_free(net);
  }
  free(names);
  return rc < 0 ? rc : pc_networks_tasks(list, out, d);
}

/* Validation as TLP's test: every task of the named training networks (a task a test network
 * also has stays a test task), weighted by its occurrences summed over them. */
static int hold_out_networks(lb_data *data, const char *list, pt_diag *d) {
  pc_network_task *vt;
  int n = lb_val_network_tasks(list, &vt, d);
  if (n < 0) return n;
  for (int k = 0; k < n; k++) {
    lb_task *t = find_task(data, vt[k].key);
    if (t && t->role != LB_TEST) t->role = LB_VAL, t->weight = vt[k].weight;
  }
  free(vt);
  return 0;
}

int lb_data_load(lb_data *data, int n_files, const char **files, const lb_opts *o, pt_diag *d) {
  memset(data, 0, sizeof *data);
  char targets[64][256];
  int counts[64];
  read_ctx ctx = {data, targets, counts, 0};
  for (int f = 0; f < n_files; f++)
    if (pc_record_read_file(files[f], count_target, NULL, &ctx, NULL, d) < 0) return d->err;
  if (!ctx.n_targets) return pt_fail(d, PT_ERR_INPUT, "%s: no record", files[0]);
  if (lb_pick_targets(data, ctx.n_targets, targets, counts, o->platform, d) < 0) return d->err;
  data->n_targets = ctx.n_targets;
  for (int f = 0; f < n_files; f++) {
    int bad = 0;
    if (pc_record_read_file(files[f], add_record, NULL, &ctx, &bad, d) < 0) return d->err;
    data->n_unreadable += bad;
  }
  if (lb_join_other(data, n_files, files, d) < 0) return d->err;
  qsort(data->t, (size_t)data->n_tasks, sizeof *data->t, cmp_key); /* reproducible roles */

  /* Roles: a task of any test network is a test task with its occurrences as weight. */
  for (int i = 0; i < pc_network_count(); i++) {
    pc_network *net = pc_network_build(pc_network_name(i), d);
    if (!net) return d->err;
    if (net->test && data->n_nets < LB_MAX_NETS) {
      int ni = data->n_nets++;
      snprintf(data->nets[ni], sizeof data->nets[ni], "%s", net->name);
      for (int k = 0; k < net->n_tasks; k++) {
        lb_task *t = find_task(data, net->tasks[k].key);
        if (t) t->role = LB_TEST, t->net_weight[ni] += net->tasks[k].weight;
      }
    }
    pc_network_free(net);
  }
  int n_test = 0, n_rest = 0;
  for (int i = 0; i < data->n_tasks; i++) {
    lb_task *t = &data->t[i];
    if (t->role != LB_TEST) {
      n_rest++;
      continue;
    }
    t->weight = 0;
    for (int k = 0; k < data->n_nets; k++) t->weight += t->net_weight[k];
    /* --quick keeps the first few test tasks with at least two candidates */
    if (o->max_test_tasks && (n_test >= o->max_test_tasks || t->n < 2)) t->role = -1;
    else n_test++;
  }
  int n_val = 0, n_train = 0;
  if (o->val_networks) { /* whole training networks, each task weighted by its occurrences in them */
    int rc = hold_out_networks(data, o->val_networks, d);
    if (rc < 0) return rc;
    for (int i = 0; i < data->n_tasks; i++) {
      lb_task *t = &data->t[i];
      if (t->role == LB_VAL) n_val++;
      else if (t->role == LB_TRAIN && o->max_train_tasks && n_train >= o->max_train_tasks) t->role = -1;
      else if (t->role == LB_TRAIN) n_train++;
    }
  } else { /* a seeded share of the non-test tasks (dataset split --by-network's) */
    pt_rng rng = {o->seed * 0x9E3779B97F4A7C15ull + 17};
    n_val = (int)(o->val_fraction * n_rest + 0.5);
    if (n_val >= n_rest) n_val = n_rest - 1;
    int *rest = malloc(sizeof(int) * (size_t)(n_rest + 1)), m = 0;
    for (int i = 0; i < data->n_tasks; i++)
      if (data->t[i].role == LB_TRAIN) rest[m++] = i;
    for (int i = m - 1; i > 0; i--) {
      int j = (int)pt_rng_range(&rng, i + 1), x = rest[i];
      rest[i] = rest[j], rest[j] = x;
    }
    for (int i = 0; i < m; i++) {
      lb_task *t = &data->t[rest[i]];
      if (i < n_val) t->role = LB_VAL;
      else if (o->max_train_tasks && n_train >= o->max_train_tasks) t->role = -1;
      else n_train++;
    }
    free(rest);
  }
  for (int i = 0; i < data->n_tasks; i++)
    for (int k = 0; k < LB_MAX_MODELS; k++) data->t[i].scores[k] = NULL;
  if (!n_test) return pt_fail(d, PT_ERR_INPUT, "no record of a test network's task (portent networks lists them)");
  if (!n_train) return pt_fail(d, PT_ERR_INPUT, "no training task (records of tasks outside the test networks)");
  if (!n_val && o->val_networks)
    return pt_fail(d, PT_ERR_INPUT, "--val-networks %s: no record of their tasks outside the test networks", o->val_networks);
  fprintf(stderr, "bench learn: %d records (%d failed or unusable, %d of other targets; %d unreadable lines skipped); "
                  "target '%s'; %d test tasks, %d validation, %d training\n",
          data->n_records, data->n_failed, data->n_other_target, data->n_unreadable, data->target, n_test, n_val,
          n_train);
  if (data->other[0])
    fprintf(stderr, "bench learn: other platform '%s': %d of the ranked candidates measured there too\n", data->other,
            data->n_other_joined);
  return 0;
}

void lb_data_free(lb_data *data) {
  for (int i = 0; i < data->n_tasks; i++) {
    for (int k = 0; k < data->t[i].n; k++) free(data->t[i].c[k].steps);
    free(data->t[i].c);
    for (int k = 0; k < LB_MAX_MODELS; k++) free(data->t[i].scores[k]);
  }
  free(data->t);
  memset(data, 0, sizeof *data);
}

int lb_add_model(lb_data *data, const char *name) {
  if (data->n_models == LB_MAX_MODELS) return -1;
  int m = data->n_models++;
  snprintf(data->model_names[m], sizeof data->model_names[m], "%s", name);
  data->train_s[m] = -1;
  for (int i = 0; i < data->n_tasks; i++) {
    data->t[i].scores[m] = malloc(sizeof(double) * (size_t)(data->t[i].n ? data->t[i].n : 1));
    for (int k = 0; k < data->t[i].n; k++) data->t[i].scores[m][k] = NAN;
  }
  return m;
}

/* Best latency among the k top-scored of n candidates (NaN scores rank last, ties by index). */
static double best_in_topk(const lb_cand *c, const double *s, int n, int k) {
  bool *taken = calloc((size_t)n, sizeof(bool));
  double best = INFINITY;
  for (int r = 0; r < k && r < n; r++) {
    int arg = -1;
    for (int i = 0; i < n; i++) {
      if (taken[i]) continue;
      if (arg < 0 || (!isnan(s[i]) && (isnan(s[arg]) || s[i] > s[arg]))) arg = i;
    }
    taken[arg] = true;
    if (c[arg].latency < best) best = c[arg].latency;
  }
  free(taken);
  return best;
}

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

/* Expected best latency among k drawn at random without replacement: P(the i-th fastest is the
 * best drawn) = C(n-1-i, k-1) / C(n, k). */
static double random_best(const lb_cand *c, int n, int k) {
  double *l = malloc(sizeof(double) * (size_t)n);
  for (int i = 0; i < n; i++) l[i] = c[i].latency;
  qsort(l, (size_t)n, sizeof(double), cmp_double);
  if (k > n) k = n;
  double e = 0, p = (double)k / n; /* P(i = 0) */
  for (int i = 0; i + k <= n; i++) {
    e += p * l[i];
    p *= (double)(n - k - i) / (double)(n - 1 - i); /* C(n-2-i,k-1)/C(n-1-i,k-1) */
  }
  free(l);
  return e;
}

static double best_of_first(const lb_task *t, int n) {
  double best = INFINITY;
  for (int c = 0; c < n; c++)
    if (t->c[c].latency < best) best = t->c[c].latency;
  return best;
}

static double pick_of_first(const lb_task *t, int model, int k, int n) {
  return model < 0 ? random_best(t->c, n, k) : best_in_topk(t->c, t->scores[model], n, k);
}

double lb_task_best(const lb_task *t) { return best_of_first(t, t->n); }

double lb_task_pick(const lb_task *t, int model, int k) { return pick_of_first(t, model, k, t->n); }

double lb_topk(const lb_data *data, int model, int role, int net, int k, int limit) {
  double num = 0, den = 0;
  int used = 0;
  for (int i = 0; i < data->n_tasks; i++) {
    const lb_task *t = &data->t[i];
    if (t->role != role) continue;
    double w = net < 0 || role != LB_TEST ? t->weight : t->net_weight[net];
    int n = limit > 0 && limit < t->n ? limit : t->n;
    if (w <= 0 || n < 2) continue;
    num += w * best_of_first(t, n), den += w * pick_of_first(t, model, k, n), used++;
  }
  return used ? num / den : NAN;
}

double lb_task_mean(const lb_data *data, int model, int role, int k) {
  double sum = 0;
  int used = 0;
  for (int i = 0; i < data->n_tasks; i++) {
    const lb_task *t = &data->t[i];
    if (t->role != role || t->weight <= 0 || t->n < 2) continue;
    sum += lb_task_best(t) / lb_task_pick(t, model, k), used++;
  }
  return used ? sum / used : NAN;
}
