/* Cost models by name for the tuning commands: random (compiler/), xgb (predictor/learned.h). */
#include <string.h>

#include "tune_models.h"

const char *tune_model_names(void) { return "random"; }

int tune_model_new(const char *name, const ptg_target *target, uint64_t seed, pc_cost_model *out, pt_diag *d) {
  if (strcmp(name, "random") == 0) {
    *out = pc_cost_model_random(seed);
    return 0;
  }
  (void)target;
  return pt_fail(d, PT_ERR_INPUT, "unknown cost model '%s' (available: %s)", name, tune_model_names());
}
