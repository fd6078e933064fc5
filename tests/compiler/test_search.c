/* The search: with the random cost model it improves on its first round on a small matmul;
 * every measured candidate is in the log; resuming a truncated and corrupted log reports the
 * bad lines by number, skips them and does not measure a logged candidate again; mutations
 * and crossover give valid, different children. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "compiler/compiler.h"
#include "compiler/tune_internal.h"
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

/* Every mutation rule and crossover, many times over random samples of matmul_add (fusion and
 * compute_at) and softmax (rfactor, compute locations): children are valid, differ from their
 * parent, and a few of them run correctly. */
static void check_mutations(const char *spec) {
  pt_diag d = {0};
  pc_program *p = pc_workload_build(spec, &d);
  pc_sketch_opts so;
  pc_sketch_opts_default(&so);
  so.vector_lanes = 8;
  pc_sketches *sk = pc_sketches_generate(p, &so, &d);
  pc_measure_opts mo;
  pc_measure_opts_default(&mo);
  mo.min_time_s = 0;
  mo.min_repeats = 1;
  pc_reference *ref = pc_reference_new(p, &mo, &d);
  CHECK(sk && ref);
  pt_rng rng = {7};
  pc_state *scratch = pc_state_new(p);
  pc_step *child = malloc(sizeof(pc_step) * PC_MAX_STEPS);
  int made[5] = {0}, measured = 0;
  for (int i = 0; i < 60; i++) {
    pc_state *s = pc_sketch_sample(sk, (int)pt_rng_range(&rng, pc_sketches_count(sk)), &rng, &d);
    if (!s) continue;
    sk_cand c = {s->n_steps, s->steps, sk_steps_hash(s->n_steps, s->steps), 0};
    for (int rule = 0; rule < 5; rule++) {
      int n = -1;
      switch (rule) {
      case 0: n = sk_mutate_tile_size(p, scratch, &c, 64, &rng, child); break;
      case 1: n = sk_mutate_auto_unroll(p, scratch, &c, &rng, child); break;
      case 2: n = sk_mutate_parallel(p, scratch, &c, &rng, child); break;
      case 3: n = sk_mutate_compute_location(p, scratch, &c, &rng, child); break;
      case 4: { /* a partner of the same structure: two tile mutations away */
        pc_step *m1 = malloc(sizeof(pc_step) * PC_MAX_STEPS), *m2 = malloc(sizeof(pc_step) * PC_MAX_STEPS);
        int k1 = sk_mutate_tile_size(p, scratch, &c, 64, &rng, m1);
        sk_cand c1 = {k1, m1, 0, 0};
        int k2 = k1 > 0 ? sk_mutate_tile_size(p, scratch, &c1, 64, &rng, m2) : -1;
        sk_cand c2 = {k2, m2, 0, 0};
        if (k2 > 0) c2.n = k2, n = sk_crossover(p, scratch, &c, &c2, &rng, child);
        free(m1);
        free(m2);
        break;
      }
      }
      if (n < 0) continue;
      made[rule]++;
      pt_diag cd = {0};
      pc_state *cs = pc_state_new(p);
      CHECK_MSG(pc_state_apply_all(cs, n, child, &cd) == 0, "%s rule %d: %s", spec, rule, cd.msg);
      if (rule == 0 || rule == 2) CHECK(sk_steps_hash(n, child) != c.hash);
      if (measured < 8 && pt_rng_range(&rng, 4) == 0) {
        pc_measure_result r;
        CHECK(pc_measure(cs, ref, &mo, &r, &cd) == 0);
        CHECK_MSG(r.error == PC_MEASURE_OK, "%s rule %d: error %d %s", spec, rule, r.error, r.message);
        measured++;
      }
      pc_state_free(cs);
    }
    pc_state_free(s);
  }
  printf("%s: children by tile size %d, unroll %d, parallel %d, compute location %d, crossover %d; %d run\n", spec,
         made[0], made[1], made[2], made[3], made[4], measured);
  CHECK(made[0] > 20 && made[1] > 20 && made[2] > 0 && made[4] > 0);
  free(child);
  pc_state_free(scratch);
  pc_reference_free(ref);
  pc_sketches_free(sk);
  pc_program_free(p);
}

int main(void) {
  check_mutations("matmul_add:32,16,24");
  check_mutations("softmax:6,40");
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
