/* `bench predict --tuned LOG`: the issue asks for a few tuned schedules beside the random ones,
 * since a tuner's decisions are made among fast candidates, which random draws rarely reach.
 * They are read from tuning logs (TVM records): per workload, the fastest distinct valid
 * schedules. */
#include <stdlib.h>
#include <string.h>

#include "bench_predict.h"
#include "compiler.h"

typedef struct {
  const char *key;
  int n, cap;
  double *cost;
  char **steps;
} tuned_ctx;

static int take(const pc_record *r, int line, void *ctx) {
  tuned_ctx *t = ctx;
  (void)line;
  if (r->error_code != 0 || r->n_costs == 0 || strcmp(r->workload_key, t->key) != 0) return 0;
  double mean = 0;
  for (int i = 0; i < r->n_costs; i++) mean += r->costs[i] / r->n_costs;
  char *steps = pc_steps_to_json(r->n_steps, r->steps);
  if (!steps) return 0;
  for (int i = 0; i < t->n; i++)
    if (strcmp(t->steps[i], steps) == 0) { /* measured again: keep the faster */
      if (mean < t->cost[i]) t->cost[i] = mean;
      free(steps);
      return 0;
    }
  if (t->n == t->cap) {
    t->cap = t->cap ? 2 * t->cap : 64;
    t->cost = realloc(t->cost, sizeof *t->cost * (size_t)t->cap);
    t->steps = realloc(t->steps, sizeof *t->steps * (size_t)t->cap);
  }
  t->cost[t->n] = mean, t->steps[t->n++] = steps;
  return 0;
}

char **bp_tuned_steps(const char *logs, const char *key, int k, int *n, pt_diag *d) {
  tuned_ctx t = {.key = key};
  char *list = strdup(logs);
  int rc = 0;
  for (char *path = strtok(list, ","); path && rc >= 0; path = strtok(NULL, ","))
    rc = pc_record_read_file(path, take, NULL, &t, NULL, d);
  free(list);
  /* selection of the k fastest (k is a handful) */
  for (int i = 0; rc >= 0 && i < t.n && i < k; i++)
    for (int j = i + 1; j < t.n; j++)
      if (t.cost[j] < t.cost[i]) {
        double c = t.cost[i];
        char *s = t.steps[i];
        t.cost[i] = t.cost[j], t.steps[i] = t.steps[j];
        t.cost[j] = c, t.steps[j] = s;
      }
  int keep = rc < 0 ? 0 : t.n < k ? t.n : k;
  for (int i = keep; i < t.n; i++) free(t.steps[i]);
  free(t.cost);
  *n = keep;
  if (rc < 0) {
    free(t.steps);
    return NULL;
  }
  return t.steps ? t.steps : calloc(1, sizeof *t.steps); /* none found is no error */
}
