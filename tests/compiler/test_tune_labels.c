/* Predicted labels (pc_tuner_label): with nothing measured, the second model of a cascade
 * labels a random sample and then the search's picks, and the first model trains on those
 * labels as if they were measurements (1 / score as the median), while nothing is measured,
 * logged or drawn; the predicted best is at least the best labelled candidate; the agreement
 * check scores a model against itself 1 and against its reverse 0. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "compiler/compiler.h"
#include "compiler/tune_internal.h"
#include "test.h"

/* The teacher: a fixed positive score per candidate, from its steps' hash (any order will do). */
static double teacher_score(const pc_state *s) { return 1.0 + (double)(sk_steps_hash(s->n_steps, s->steps) % 1000); }

typedef struct {
  double sign; /* -1: the reverse order */
} teacher;

static int teacher_predict(void *self, const pc_program *p, int n, pc_state *const *states, double *scores,
                           pt_diag *d) {
  teacher *t = self;
  for (int i = 0; i < n; i++) scores[i] = t->sign > 0 ? teacher_score(states[i]) : 1.0 / teacher_score(states[i]);
  return 0;
}

/* The student: remembers every result it is given, checks each is a teacher label. */
typedef struct {
  int n_results, n_updates, n_wrong;
  double best_label; /* the highest throughput label (1 / median) */
} student;

static int student_predict(void *self, const pc_program *p, int n, pc_state *const *states, double *scores,
                           pt_diag *d) {
  for (int i = 0; i < n; i++) scores[i] = 0; /* untrained order: all tied */
  return 0;
}

static int student_update(void *self, const pc_program *p, int n, pc_state *const *states,
                          const pc_measure_result *res, pt_diag *d) {
  student *s = self;
  s->n_updates++;
  for (int i = 0; i < n; i++) {
    s->n_results++;
    double want = 1.0 / teacher_score(states[i]);
    if (res[i].error != PC_MEASURE_OK || fabs(res[i].median_s - want) > 1e-12 * want) s->n_wrong++;
    else if (1.0 / res[i].median_s > s->best_label) s->best_label = 1.0 / res[i].median_s;
  }
  return 0;
}

static void no_free(void *self) {}

int main(void) {
  char log[] = "/tmp/portent_test_labels_XXXXXX";
  int fd = mkstemp(log);
  CHECK(fd >= 0);
  close(fd);
  unlink(log); /* the tuner must not create it */
  pt_diag d = {0};
  pc_program *p = pc_workload_build("matmul:128,96,128", &d);
  CHECK_MSG(p != NULL, "%s", d.msg);
  teacher tch = {1}, reverse = {-1};
  student stu = {0};
  pc_cost_model second = {"teacher", &tch, teacher_predict, NULL, no_free};
  pc_cost_model first = {"student", &stu, student_predict, student_update, no_free};
  pc_tune_opts o;
  pc_tune_opts_default(&o);
  o.population = 48;
  o.generations = 1;
  o.measure_per_round = 4;
  o.seed = 5;
  o.log_path = log;
  o.sketch.vector_lanes = 8;
  o.rerank = &second;
  o.rerank_top = 4;
  pc_tuner *t = pc_tuner_new(p, &first, &o, &d);
  CHECK_MSG(t != NULL, "%s", d.msg);

  int n = pc_tuner_label(t, 12, 2, &d);
  const pc_tune_stats *st = pc_tuner_stats(t);
  CHECK_MSG(n == 20, "labels %d: %s", n, d.msg); /* 12 sampled, then 2 rounds of 4 */
  CHECK(st->n_labelled == 20 && st->label_rounds == 2);
  CHECK_MSG(stu.n_results == 20 && stu.n_updates == 3 && stu.n_wrong == 0, "student saw %d in %d updates, %d wrong",
            stu.n_results, stu.n_updates, stu.n_wrong);
  CHECK(st->n_measured == 0 && st->n_curve == 0 && st->best_s == 0);
  CHECK(access(log, F_OK) != 0);

  /* The search's pick competes with the best labelled candidate on the teacher's score. */
  pc_state *best = pc_tuner_predict_best(t, &d);
  CHECK_MSG(best != NULL, "%s", d.msg);
  if (best) {
    CHECK(fabs(st->predicted_score - teacher_score(best)) < 1e-9);
    CHECK_MSG(st->predicted_score >= stu.best_label, "predicted %g, best label %g", st->predicted_score, stu.best_label);
    pc_state_free(best);
  }
  CHECK(access(log, F_OK) != 0);

  double agree = -1;
  CHECK(pc_tuner_label_agreement(t, 16, &agree, &d) == 0);
  CHECK_MSG(agree == 0.5, "an all-tied first model: %g", agree);
  pc_tuner_free(t);

  /* The first model is the teacher itself, then its reverse: agreement 1, then 0. */
  pc_cost_model same = {"teacher", &tch, teacher_predict, NULL, no_free};
  pc_cost_model rev = {"reverse", &reverse, teacher_predict, NULL, no_free};
  t = pc_tuner_new(p, &same, &o, &d);
  CHECK(pc_tuner_label(t, 12, 2, &d) == 0); /* a first model that does not learn: no labels */
  CHECK(pc_tuner_label_agreement(t, 16, &agree, &d) == 0);
  CHECK_MSG(agree == 1.0, "the teacher against itself: %g", agree);
  pc_tuner_free(t);
  t = pc_tuner_new(p, &rev, &o, &d);
  CHECK(pc_tuner_label_agreement(t, 16, &agree, &d) == 0);
  CHECK_MSG(agree == 0.0, "the reverse teacher: %g", agree);
  pc_tuner_free(t);
  pc_program_free(p);
  TEST_DONE();
}
