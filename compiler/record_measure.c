/* A measurement result as a TVM record: the state's steps, the median time, the error code. */
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "internal.h"

void pc_record_from_measure(pc_record *r, const pc_state *s, const pc_measure_result *m, double all_cost_s) {
  memset(r, 0, sizeof *r);
  snprintf(r->workload_key, sizeof r->workload_key, "%s", s->prog->key);
  pc_host_target_string(r->target, sizeof r->target);
  r->n_steps = s->n_steps;
  memcpy(r->steps, s->steps, sizeof(pc_step) * (size_t)s->n_steps);
  r->error_code = m->error;
  /* TVM writes a failed measurement's cost as 1e10. */
  r->n_costs = 1;
  r->costs[0] = m->error == PC_MEASURE_OK ? m->median_s : 1e10;
  r->all_cost = all_cost_s;
  r->timestamp = (double)time(NULL);
  snprintf(r->version, sizeof r->version, "%s", PC_RECORD_VERSION);
}
