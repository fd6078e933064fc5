/* Spearman over distinct programs (bench predict's "distinct" column): candidates with one
 * module id count once, at the median of their measured times and predictions; a NULL id is a
 * program of its own. Table-driven rows: ids, predictions, measured times, expected groups. */
#include <math.h>
#include <stddef.h>

#include "predictor.h"
#include "test.h"

typedef struct {
  const char *what;
  int n;
  const char *id[6];
  double pred[6], meas[6];
  int groups;
  double pred_out[6], meas_out[6];
} row;

static const row rows[] = {
    {"no copies", 3, {"a", "b", "c"}, {1, 2, 3}, {10, 30, 20}, 3, {1, 2, 3}, {10, 30, 20}},
    {"three copies of a (odd: the middle time, not the mean)", 5, {"a", "b", "a", "c", "a"}, {1, 2, 1, 3, 1}, {10, 20, 40, 30, 28},
     3, {1, 2, 3}, {28, 20, 30}},
    {"two copies (even: the mean of the two middle)", 4, {"x", "y", "y", "z"}, {5, 7, 7, 9}, {1, 2, 4, 3}, 3, {5, 7, 9},
     {1, 3, 3}},
    {"copies whose sampled predictions differ", 3, {"a", "a", "a"}, {1, 3, 2}, {6, 4, 5}, 1, {2}, {5}},
    {"NULL ids are never copies", 3, {NULL, NULL, "a"}, {1, 1, 2}, {1, 2, 3}, 3, {1, 1, 2}, {1, 2, 3}},
};

int main(void) {
  for (size_t r = 0; r < sizeof rows / sizeof *rows; r++) {
    const row *w = &rows[r];
    double p[6], m[6];
    int g = pp_distinct_programs(w->n, w->id, w->pred, w->meas, p, m);
    CHECK_MSG(g == w->groups, "%s: %d groups, expected %d", w->what, g, w->groups);
    for (int i = 0; i < g && i < w->groups; i++)
      CHECK_MSG(p[i] == w->pred_out[i] && m[i] == w->meas_out[i], "%s: group %d %g/%g, expected %g/%g", w->what, i, p[i],
                m[i], w->pred_out[i], w->meas_out[i]);
  }
  /* The figure it serves: a model that ranks every program right but cannot order three copies
   * of one (measured 1, 2 and 9; the others 3 and 4) gets a Spearman below 1 over candidates
   * and 1 over programs (the copies at their median, 2, below 3 and 4). */
  const char *id[5] = {"a", "a", "a", "b", "c"};
  double pred[5] = {1, 1, 1, 2, 3}, meas[5] = {1, 2, 9, 3, 4}, p[5], m[5];
  double over_candidates = pp_spearman(5, pred, meas);
  int g = pp_distinct_programs(5, id, pred, meas, p, m);
  double over_programs = pp_spearman(g, p, m);
  CHECK_MSG(g == 3 && over_candidates < 0.7 && fabs(over_programs - 1) < 1e-12, "%d programs, %g / %g", g,
            over_candidates, over_programs);
  TEST_DONE();
}
