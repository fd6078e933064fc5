/* portent dataset compare: the same programs measured twice (two platforms, or one machine twice)
 * — how well one set of latencies ranks the other within each task. On one machine it is the
 * noise ceiling of any cost model trained on such labels; across platforms, how far rankings move. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "commands.h"
#include "compiler.h"
#include "dataset_keys.h"
#include "predictor.h"

typedef struct {
  uint64_t h;   /* (workload, steps) */
  char *key;
  double a, b;  /* seconds; b < 0 until joined */
} joined;

typedef struct {
  joined *v;
  int n, cap;
  ds_hashset index; /* program -> index into v + 1 */
  bool second;
  int n_a, n_b, n_failed;
} compare_set;

static double record_seconds(const pc_record *r) {
  double s = 0;
  for (int i = 0; i < r->n_costs; i++) s += r->costs[i];
  return r->n_costs ? s / r->n_costs : -1;
}

static int on_record(const pc_record *r, int line, void *ctx) {
  (void)line;
  compare_set *c = ctx;
  double t = record_seconds(r);
  if (r->error_code != PC_MEASURE_OK || !(t > 0)) {
    c->n_failed++;
    return 0;
  }
  char *steps = pc_steps_to_json(r->n_steps, r->steps);
  if (!steps) return -1;
  uint64_t h = ds_program_hash(r->workload_key, NULL, steps);
  free(steps);
  int *at;
  if (!c->second) {
    if (!ds_hashset_insert(&c->index, h, &at)) return 0; /* a program measured twice in A: the first counts */
    if (c->n == c->cap) {
      c->cap = c->cap ? 2 * c->cap : 256;
      c->v = realloc(c->v, sizeof *c->v * (size_t)c->cap);
    }
    c->v[c->n] = (joined){h, strdup(r->workload_key), t, -1};
    *at = ++c->n;
    c->n_a++;
  } else if (!ds_hashset_insert(&c->index, h, &at) && *at > 0 && c->v[*at - 1].b < 0) {
    c->v[*at - 1].b = t;
    c->n_b++;
  }
  return 0;
}

static int by_key(const void *x, const void *y) {
  return strcmp(((const joined *)x)->key, ((const joined *)y)->key);
}

static int cmp_double(const void *x, const void *y) {
  double a = *(const double *)x, b = *(const double *)y;
  return (a > b) - (a < b);
}

int cmd_dataset_compare(int argc, char **argv) {
  const char *path[2] = {NULL, NULL};
  int min_per_task = 4, n_path = 0;
  for (int i = 1; i < argc; i++) {
    if (strcmp(argv[i], "--help") == 0) {
      printf("usage: portent dataset compare A.jsonl B.jsonl [--min-per-task N]\n\n"
             "Joins the programs (workload + steps) measured correctly in both logs and prints, over the\n"
             "tasks with at least N (default 4) of them, how A's latencies rank B's: Spearman's rho,\n"
             "pairwise agreement and TLP's top-1/top-5 (B's best / B's time of A's best), and the\n"
             "spread of B/A. A log measured twice on one machine gives the ceiling any cost model\n"
             "trained on its labels can reach; two platforms show how far their rankings differ.\n");
      return EXIT_OK;
    } else if (strcmp(argv[i], "--min-per-task") == 0 && i + 1 < argc) min_per_task = atoi(argv[++i]);
    else if (argv[i][0] != '-' && n_path < 2) path[n_path++] = argv[i];
    else {
      fprintf(stderr, "portent dataset compare: unexpected argument '%s'\n", argv[i]);
      return EXIT_USAGE;
    }
  }
  if (n_path != 2 || min_per_task < 2) {
    fprintf(stderr, "portent dataset compare: two logs are required (and --min-per-task >= 2)\n");
    return EXIT_USAGE;
  }
  compare_set c = {0};
  pt_diag d = {0};
  for (int f = 0; f < 2; f++) {
    c.second = f == 1;
    if (pc_record_read_file(path[f], on_record, NULL, &c, NULL, &d) < 0) {
      fprintf(stderr, "portent dataset compare: %s\n", d.msg);
      for (int i = 0; i < c.n; i++) free(c.v[i].key); /* what the first log gave */
      free(c.v);
      ds_hashset_free(&c.index);
      return EXIT_USAGE;
    }
  }
  /* Keep the joined programs, grouped by task. */
  int n = 0;
  for (int i = 0; i < c.n; i++)
    if (c.v[i].b > 0) c.v[n++] = c.v[i];
    else free(c.v[i].key);
  qsort(c.v, (size_t)n, sizeof *c.v, by_key);
  double *a = malloc(sizeof *a * (size_t)(n + 1)), *b = malloc(sizeof *b * (size_t)(n + 1));
  double *ratio = malloc(sizeof *ratio * (size_t)(n + 1));
  double sum_rho = 0, sum_pair = 0, sum_top1 = 0, sum_top5 = 0, log_ratio = 0;
  int tasks = 0, used = 0;
  for (int i = 0; i < n;) {
    int j = i;
    while (j < n && strcmp(c.v[j].key, c.v[i].key) == 0) j++;
    if (j - i >= min_per_task) {
      for (int k = i; k < j; k++) {
        a[k - i] = c.v[k].a;
        b[k - i] = c.v[k].b;
        ratio[used++] = c.v[k].b / c.v[k].a;
        log_ratio += log(c.v[k].b / c.v[k].a);
      }
      sum_rho += pp_spearman(j - i, a, b);
      sum_pair += pp_pairwise_accuracy(j - i, a, b);
      sum_top1 += pp_topk(j - i, a, b, 1);
      sum_top5 += pp_topk(j - i, a, b, 5);
      tasks++;
    }
    i = j;
  }
  printf("A %s: %d programs measured correctly (%d failed records); B %s: %d of them measured correctly\n",
         path[0], c.n_a, c.n_failed, path[1], c.n_b);
  if (!tasks) {
    printf("no task has %d programs measured in both\n", min_per_task);
  } else {
    qsort(ratio, (size_t)used, sizeof *ratio, cmp_double);
    printf("%d tasks with >= %d joined programs (%d programs); A's latencies ranking B's, mean over tasks:\n",
           tasks, min_per_task, used);
    printf("  spearman %.3f   pairwise %.3f   top-1 %.3f   top-5 %.3f\n", sum_rho / tasks, sum_pair / tasks,
           sum_top1 / tasks, sum_top5 / tasks);
    printf("  B/A: geomean %.3f, median %.3f, 10th-90th percentile %.3f-%.3f\n", exp(log_ratio / used),
           ratio[used / 2], ratio[used / 10], ratio[(used * 9) / 10]);
  }
  for (int i = 0; i < n; i++) free(c.v[i].key);
  free(c.v);
  ds_hashset_free(&c.index);
  free(a);
  free(b);
  free(ratio);
  return tasks ? EXIT_OK : EXIT_FAILED;
}
