/* The xgb features see the loop extents lowering runs: a cache_write tile of matmul 64^3
 * fused at level 2 computes exactly M*N*K multiply-adds (its level-1 loops tightened to the
 * region, pc_stage_bound_region), as the unscheduled program does; before, features counted
 * the tile's level-1 loop at its factor (2x the work here). */
#include <stdlib.h>

#include "predictor/learned.h"
#include "test.h"

static float float_mad(const char *steps_json, const pc_program *p, int row) {
  pt_diag d = {0};
  pc_step steps[64];
  int n = 0;
  float v = -1;
  CHECK_MSG(pc_steps_from_json(steps_json, &n, steps, 64, &d) == 0, "%s", d.msg);
  pc_state *s = pc_state_new(p);
  CHECK_MSG(pc_state_apply_all(s, n, steps, &d) == 0, "%s", d.msg);
  float *rows = NULL;
  int nr = pp_features_state(s, 64, &rows, &d);
  CHECK_MSG(nr > row, "%d rows: %s", nr, d.msg);
  if (nr > row) v = rows[row * PP_FEATURES_PER_STORE + 0];
  free(rows);
  pc_state_free(s);
  return v;
}

int main(void) {
  pt_diag d = {0};
  pc_program *p = pc_workload_build("matmul:64,64,64", &d);
  CHECK_MSG(p != NULL, "%s", d.msg);
  if (!p) TEST_DONE();
  char name[64];
  CHECK(strcmp(pp_feature_name(0, name, sizeof name), "float_mad") == 0);
  float plain = float_mad("[]", p, 0);
  /* i split 8 x 2 x 2 x 4; the consumer follows two levels, the tile sits at j.1 (level 2):
   * its region is 2 x 4 = 8 rows, so i.0 and i.1 of the tile run once. */
  float fused = float_mad("[[\"CHW\", 2, \"local\"], [\"SP\", 2, 0, 64, [2, 2, 4], 1],"
                          " [\"SP\", 2, 4, 64, [1, 4, 8], 1], [\"SP\", 2, 8, 64, [16], 1],"
                          " [\"RE\", 2, [0, 4, 1, 5, 8, 2, 6, 9, 3, 7]], [\"FSP\", 3, 0, 1, 2],"
                          " [\"FSP\", 3, 3, 2, 2], [\"RE\", 3, [0, 3, 1, 4, 2, 5]], [\"CA\", 2, 3, 3]]",
                          p, 0);
  CHECK_MSG(plain > 0 && fused == plain, "float_mad of the fused tile %.4f, unscheduled %.4f (log2 counts)",
            (double)fused, (double)plain);
  pc_program_free(p);
  TEST_DONE();
}
