/* The search: with the random cost model it improves on its first round on a small matmul;
 * every measured candidate is in the log; resuming a truncated and corrupted log reports the
 * bad lines by number, skips them and does not measure a logged candidate again; mutations
 * and crossover give valid, different children. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "compiler/compiler.h"
#include "test.h"

typedef struct {
  int lines[16];
  int n;
} bad_lines;

static void on_bad(int line, const char *reason, void *ctx) {
  bad_lines *b = ctx;
  if (b->n < 16) b->lines[b->n++] = line;
  printf("  bad line %d: %s\n", line, reason);
}

static int count_lines(const char *path) {
  FILE *f = fopen(path, "r");
  if (!f) return -1;
  int n = 0, c;
  while ((c = fgetc(f)) != EOF) n += c == '\n';
  fclose(f);
  return n;
}

typedef struct {
  double cost[64];
  int n;
} costs;

static int on_cost(const pc_record *r, int line, void *ctx) {
  costs *c = ctx;
  if (c->n < 64) c->cost[c->n++] = r->error_code == 0 ? r->costs[0] : 1e10;
  return 0;
}

static void quick_opts(pc_tune_opts *o, const char *log) {
  pc_tune_opts_default(o);
  o->population = 48;
  o->generations = 2;
  o->measure_per_round = 6;
  o->trials = 18;
  o->seed = 3;
  o->log_path = log;
  o->sketch.vector_lanes = 8;
  o->measure.threads = 1;
  o->measure.min_time_s = 0.005;
  o->measure.min_repeats = 3;
}

int main(void) {
  char log[] = "/tmp/portent_test_search_XXXXXX";
  int fd = mkstemp(log);
  CHECK(fd >= 0);
  close(fd);
  pt_diag d = {0};
  pc_program *p = pc_workload_build("matmul:128,96,128", &d);
  CHECK_MSG(p != NULL, "%s", d.msg);
  pc_tune_opts o;
  quick_opts(&o, log);
  pc_cost_model m = pc_cost_model_random(1);
  pc_tuner *t = pc_tuner_new(p, &m, &o, &d);
  CHECK_MSG(t != NULL, "%s", d.msg);
  /* First round alone: its best and its median. */
  int n1 = pc_tuner_round(t, &d);
  CHECK_MSG(n1 == 6, "first round measured %d: %s", n1, d.msg);
  const pc_tune_stats *st = pc_tuner_stats(t);
  double first_best = st->best_s;
  CHECK(first_best > 0);
  CHECK_MSG(pc_tuner_run(t, &d) == 0, "%s", d.msg);
  printf("random model: first round best %.3g ms, after %d measurements %.3g ms (%d failed)\n", first_best * 1e3,
         st->n_measured, st->best_s * 1e3, st->n_failed);
  CHECK(st->n_measured == 18);
  CHECK(st->best_s > 0 && st->best_s <= first_best);
  CHECK(st->n_curve == 18);
  for (int i = 1; i < st->n_curve; i++) CHECK(st->curve[i] <= st->curve[i - 1] || st->curve[i - 1] == 0);
  CHECK(count_lines(log) == 18);
  /* Strictly better than the first round's median candidate. */
  costs c = {0};
  pc_record_read_file(log, on_cost, NULL, &c, NULL, &d);
  CHECK(c.n == 18);
  for (int i = 1; i < 6; i++)
    for (int j = i; j > 0 && c.cost[j] < c.cost[j - 1]; j--) {
      double x = c.cost[j];
      c.cost[j] = c.cost[j - 1];
      c.cost[j - 1] = x;
    }
  printf("first round median %.3g ms\n", 0.5 * (c.cost[2] + c.cost[3]) * 1e3);
  CHECK(st->best_s < 0.5 * (c.cost[2] + c.cost[3]));
  pc_state *best = pc_tuner_best(t);
  CHECK(best != NULL);
  pc_state_free(best);
  pc_tuner_free(t);
  m.free(m.self);

  /* A killed tuner leaves a half-written last line; someone's editor leaves garbage. */
  FILE *f = fopen(log, "r+");
  fseek(f, 0, SEEK_END);
  long size = ftell(f);
  fclose(f);
  CHECK(truncate(log, size - 40) == 0);
  f = fopen(log, "a");
  fprintf(f, "\n{\"i\": [[\"not a record\"]]}\n");
  fclose(f);
  o.trials = 24;
  m = pc_cost_model_random(2);
  t = pc_tuner_new(p, &m, &o, &d);
  bad_lines bad = {0};
  int n_bad = 0;
  int n_resumed = pc_tuner_resume(t, log, on_bad, &bad, &n_bad, &d);
  printf("resumed %d records, %d bad lines\n", n_resumed, n_bad);
  CHECK_MSG(n_resumed == 17, "resumed %d: %s", n_resumed, d.msg);
  CHECK(n_bad == 2 && bad.n == 2 && bad.lines[0] == 18 && bad.lines[1] == 19);
  CHECK(pc_tuner_stats(t)->n_measured == 17);
  CHECK_MSG(pc_tuner_run(t, &d) == 0, "%s", d.msg);
  CHECK(pc_tuner_stats(t)->n_measured == 24);
  CHECK(count_lines(log) == 19 + 7);
  pc_tuner_free(t);
  m.free(m.self);

  /* No candidate was measured twice: a fresh resume finds 24 distinct records. */
  m = pc_cost_model_random(3);
  t = pc_tuner_new(p, &m, &o, &d);
  n_resumed = pc_tuner_resume(t, log, NULL, NULL, &n_bad, &d);
  CHECK_MSG(n_resumed == 24, "distinct records %d", n_resumed);
  pc_tuner_free(t);
  m.free(m.self);
  unlink(log);
  pc_program_free(p);
  TEST_DONE();
}
