/* A cascade's cold start: while fewer than 2 x measure_per_round candidates are measured, the
 * second model re-ranks rerank_cold candidates (not 2 x measure_per_round) and the round
 * measures its best; later rounds, and rerank_cold 0, re-rank the usual 2 x K, or rerank_pool
 * candidates when that is larger. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "compiler/compiler.h"
#include "test.h"

/* The second model: a deterministic score of the tile lengths, and what it was asked. */
typedef struct {
  int n;          /* candidates scored since the last reset */
  double top[64]; /* their scores */
} judge;

static double judge_score(int n, const pc_step *steps) {
  double s = 0;
  for (int k = 0; k < n; k++)
    for (int j = 0; j < steps[k].n_lengths; j++) s = s * 1.37 + (double)(steps[k].lengths[j] * (j + 1) % 11);
  return s;
}

static int judge_predict(void *self, const pc_program *p, int n, pc_state *const *states, double *scores,
                         pt_diag *d) {
  (void)p, (void)d;
  judge *j = self;
  for (int i = 0; i < n; i++) {
    scores[i] = judge_score(states[i]->n_steps, states[i]->steps);
    if (j->n < 64) j->top[j->n] = scores[i];
    j->n++;
  }
  return 0;
}

static int cmp_desc(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x > y ? -1 : x < y;
}

typedef struct {
  double score[64];
  int n;
} logged;

static int on_record(const pc_record *r, int line, void *ctx) {
  (void)line;
  logged *l = ctx;
  if (l->n < 64) l->score[l->n++] = judge_score(r->n_steps, r->steps);
  return 0;
}

/* Runs 3 rounds of 6; returns how many candidates the judge scored in each. */
static void run(const pc_program *p, int cold, int pool, int scored[3], logged *lg) {
  char log[] = "/tmp/portent_test_cascade_XXXXXX";
  int fd = mkstemp(log);
  CHECK(fd >= 0);
  close(fd);
  pt_diag d = {0};
  pc_tune_opts o;
  pc_tune_opts_default(&o);
  o.population = 64;
  o.generations = 1;
  o.measure_per_round = 6;
  o.trials = 18;
  o.seed = 5;
  o.log_path = log;
  o.sketch.vector_lanes = 8;
  o.measure.threads = 1;
  o.measure.min_time_s = 0.002;
  o.measure.min_repeats = 3;
  judge j = {0};
  pc_cost_model second = {"judge", &j, judge_predict, NULL, NULL};
  o.rerank = &second;
  o.rerank_cold = cold;
  o.rerank_pool = pool;
  pc_cost_model m = pc_cost_model_random(1);
  pc_tuner *t = pc_tuner_new(p, &m, &o, &d);
  CHECK_MSG(t != NULL, "%s", d.msg);
  for (int r = 0; r < 3; r++) {
    j.n = 0;
    int got = pc_tuner_round(t, &d);
    CHECK_MSG(got == 6, "round %d measured %d: %s", r, got, d.msg);
    scored[r] = j.n;
    if (r == 0 && lg) { /* the first round's 5 greedy picks are the judge's 5 best */
      qsort(j.top, (size_t)(j.n < 64 ? j.n : 64), sizeof(double), cmp_desc);
      lg->n = 0;
      pc_record_read_file(log, on_record, NULL, lg, NULL, &d);
      CHECK(lg->n == 6);
      qsort(lg->score, 5, sizeof(double), cmp_desc);
      for (int i = 0; i < 5; i++) CHECK_MSG(lg->score[i] == j.top[i], "pick %d: %g, judge's %g", i, lg->score[i], j.top[i]);
    }
  }
  pc_tuner_free(t);
  m.free(m.self);
  unlink(log);
}

int main(void) {
  pt_diag d = {0};
  pc_program *p = pc_workload_build("matmul:64,48,64", &d);
  CHECK_MSG(p != NULL, "%s", d.msg);
  int cold[3], warm[3], pooled[3];
  logged lg = {0};
  run(p, 40, 0, cold, &lg);
  run(p, 0, 0, warm, NULL);
  run(p, 40, 30, pooled, NULL);
  printf("re-ranked per round: cold start 40: %d %d %d; off: %d %d %d; cold start 40, pool 30: %d %d %d\n", cold[0],
         cold[1], cold[2], warm[0], warm[1], warm[2], pooled[0], pooled[1], pooled[2]);
  CHECK(cold[0] > 12 && cold[0] <= 40); /* wider than 2 x K while nothing is measured */
  CHECK(cold[1] > 12 && cold[1] <= 40); /* and after one round of 6 (< 12) */
  CHECK(cold[2] <= 12);                 /* 12 measured: back to 2 x K */
  for (int r = 0; r < 3; r++) CHECK(warm[r] <= 12);
  CHECK(pooled[0] > 30 && pooled[0] <= 40); /* the cold start as before */
  CHECK(pooled[2] > 12 && pooled[2] <= 30); /* then the pool, wider than 2 x K */
  pc_program_free(p);
  TEST_DONE();
}
