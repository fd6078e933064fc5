/* Local search by measurement (pc_tune_opts.local_share): with a model that scores every
 * candidate the same (as the analytic model scores a compute bound), the second round contains
 * its share of unmeasured one-mutation neighbours of the first round's fastest candidates, the
 * best's among them; without it, none. Among one parent's neighbours the model's best come
 * first. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "compiler/compiler.h"
#include "compiler/tune_internal.h"
#include "test.h"

#define K 12

static int flat_predict(void *self, const pc_program *p, int n, pc_state *const *states, double *scores, pt_diag *d) {
  (void)self, (void)p, (void)states, (void)d;
  for (int i = 0; i < n; i++) scores[i] = 1.0;
  return 0;
}

/* A deterministic score of the tile lengths (any order the test can recompute). */
static double judge_score(int n, const pc_step *steps) {
  double s = 0;
  for (int k = 0; k < n; k++)
    for (int j = 0; j < steps[k].n_lengths; j++) s = s * 1.37 + (double)(steps[k].lengths[j] * (j + 1) % 11);
  return s;
}

static int judge_predict(void *self, const pc_program *p, int n, pc_state *const *states, double *scores, pt_diag *d) {
  (void)self, (void)p, (void)d;
  for (int i = 0; i < n; i++) scores[i] = judge_score(states[i]->n_steps, states[i]->steps);
  return 0;
}

typedef struct {
  int n;
  double cost[2 * K];
  int n_steps[2 * K];
  pc_step steps[2 * K][PC_MAX_STEPS];
} logged;

static int on_record(const pc_record *r, int line, void *ctx) {
  (void)line;
  logged *l = ctx;
  if (l->n == 2 * K) return 0;
  l->cost[l->n] = r->error_code == 0 ? r->costs[0] : 1e10;
  l->n_steps[l->n] = r->n_steps;
  memcpy(l->steps[l->n], r->steps, sizeof(pc_step) * (size_t)r->n_steps);
  l->n++;
  return 0;
}

/* One mutation apart: one step differs, or a parallel move (the fuse step and the later
 * annotations of its stage). */
static bool one_step(int na, const pc_step *a, int nb, const pc_step *b) {
  if (na != nb) return false;
  int first = -1, n_diff = 0;
  for (int i = 0; i < na; i++)
    if (sk_steps_hash(1, &a[i]) != sk_steps_hash(1, &b[i])) {
      if (first < 0) first = i;
      else if (a[first].kind != PC_STEP_FU || (a[i].kind != PC_STEP_AN && a[i].kind != PC_STEP_PR)) return false;
      n_diff++;
    }
  return n_diff >= 1;
}

/* Two rounds of K; how many of the second are neighbours of the first round's 4 fastest and
 * of its fastest. */
static void run(const pc_program *p, double share, int *near_top, int *near_best) {
  char log[] = "/tmp/portent_test_local_XXXXXX";
  int fd = mkstemp(log);
  CHECK(fd >= 0);
  close(fd);
  pt_diag d = {0};
  pc_tune_opts o;
  pc_tune_opts_default(&o);
  o.population = 64;
  o.generations = 1;
  o.measure_per_round = K;
  o.trials = 2 * K;
  o.seed = 3;
  o.log_path = log;
  o.sketch.vector_lanes = 8;
  o.measure.threads = 1;
  o.measure.min_time_s = 0.002;
  o.measure.min_repeats = 3;
  o.local_share = share;
  pc_cost_model flat = {"flat", NULL, flat_predict, NULL, NULL};
  pc_tuner *t = pc_tuner_new(p, &flat, &o, &d);
  CHECK_MSG(t != NULL, "%s", d.msg);
  for (int r = 0; r < 2; r++) CHECK_MSG(pc_tuner_round(t, &d) == K, "round %d: %s", r, d.msg);
  pc_tuner_free(t);
  logged *l = calloc(1, sizeof *l);
  pc_record_read_file(log, on_record, NULL, l, NULL, &d);
  CHECK(l->n == 2 * K);
  int order[K];
  for (int i = 0; i < K; i++) order[i] = i;
  for (int i = 1; i < K; i++) /* the first round, fastest first */
    for (int j = i; j > 0 && l->cost[order[j]] < l->cost[order[j - 1]]; j--) {
      int x = order[j];
      order[j] = order[j - 1];
      order[j - 1] = x;
    }
  *near_top = *near_best = 0;
  for (int i = K; i < 2 * K; i++) {
    bool near = false;
    for (int k = 0; k < 4; k++) near |= one_step(l->n_steps[i], l->steps[i], l->n_steps[order[k]], l->steps[order[k]]);
    *near_top += near;
    *near_best += one_step(l->n_steps[i], l->steps[i], l->n_steps[order[0]], l->steps[order[0]]);
    for (int j = 0; j < i; j++) /* never one measured before */
      CHECK(sk_steps_hash(l->n_steps[i], l->steps[i]) != sk_steps_hash(l->n_steps[j], l->steps[j]));
  }
  free(l);
  unlink(log);
}

/* sk_local_pick on one parent: its picks are the model's best of the neighbours it drew. */
static void check_ranking(const pc_program *p) {
  pt_diag d = {0};
  pc_tune_opts o;
  pc_tune_opts_default(&o);
  o.sketch.vector_lanes = 8;
  pc_sketches *sk = pc_sketches_generate(p, &o.sketch, &d);
  CHECK_MSG(sk != NULL, "%s", d.msg);
  pt_rng rng = {.s = 11};
  sk_pop parents = {0}, drawn = {0}, chosen = {0};
  sk_hashset none = {0};
  sk_sample_population(sk, 1, &none, &rng, &parents);
  CHECK(parents.n == 1);
  /* The same draw sk_local_pick makes for 2 slots of one parent (8 neighbours). */
  pt_rng copy = rng;
  sk_local_neighbours(p, &o, &parents, 8, &none, &copy, &drawn, NULL);
  CHECK(drawn.n >= 4);
  pc_cost_model judge = {"judge", NULL, judge_predict, NULL, NULL};
  CHECK(sk_local_pick(p, &judge, &o, &parents, 2, &none, &rng, &chosen, NULL, NULL, &d) == 0);
  CHECK(chosen.n == 2);
  double best = -1e300, second = -1e300;
  for (int i = 0; i < drawn.n; i++) {
    double s = judge_score(drawn.c[i].n, drawn.c[i].steps);
    if (s > best) second = best, best = s;
    else if (s > second) second = s;
    CHECK(one_step(drawn.c[i].n, drawn.c[i].steps, parents.c[0].n, parents.c[0].steps));
  }
  CHECK_MSG(chosen.c[0].score == best && chosen.c[1].score == second, "picked %g %g, best %g %g", chosen.c[0].score,
            chosen.c[1].score, best, second);
  sk_pop_free(&parents);
  sk_pop_free(&drawn);
  sk_pop_free(&chosen);
  pc_sketches_free(sk);
}

int main(void) {
  pt_diag d = {0};
  pc_program *p = pc_workload_build("matmul:64,48,64", &d);
  CHECK_MSG(p != NULL, "%s", d.msg);
  int top_on, best_on, top_off, best_off;
  run(p, 0.5, &top_on, &best_on);
  run(p, 0, &top_off, &best_off);
  printf("second round of %d, neighbours of the 4 fastest / of the fastest: share 0.5 %d / %d, off %d / %d\n", K,
         top_on, best_on, top_off, best_off);
  CHECK(top_on >= K / 2);
  CHECK(best_on >= 1);
  CHECK(top_off < K / 2);
  check_ranking(p);
  pc_program_free(p);
  TEST_DONE();
}
