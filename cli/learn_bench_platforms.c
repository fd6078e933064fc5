/* bench learn's platforms: which of the records' target strings is ranked (--platform, or the most
 * common) and which is the other real platform, and the other platform's measured latency of each
 * candidate (the same programs measured on two machines: dataset remeasure), so that one machine's
 * labels can be scored as a ranking of the other's. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "dataset_keys.h"
#include "learn_bench.h"
#include "tlp.h"

/* The most common target string whose platform is (or, when `same` is false, is not) `platform`;
 * -1 when none. platform NULL matches every target. */
static int most_common(int n, char (*targets)[256], const int *counts, const char *platform, bool same) {
  int best = -1;
  for (int i = 0; i < n; i++) {
    char p[128];
    pp_tlp_platform(targets[i], p, sizeof p);
    bool match = !platform || strcmp(p, platform) == 0;
    if (match != same) continue;
    if (best < 0 || counts[i] > counts[best]) best = i;
  }
  return best;
}

int lb_pick_targets(lb_data *data, int n_targets, char (*targets)[256], const int *counts, const char *platform,
                    pt_diag *d) {
  int t = most_common(n_targets, targets, counts, platform, true);
  if (t < 0 && platform) {
    char have[512] = "";
    for (int i = 0; i < n_targets; i++) {
      char p[128];
      pp_tlp_platform(targets[i], p, sizeof p);
      size_t at = strlen(have);
      snprintf(have + at, sizeof have - at, "%s%s", at ? ", " : "", p);
    }
    return pt_fail(d, PT_ERR_INPUT, "--platform %s: no record of it (the records' platforms: %s)", platform,
                   n_targets ? have : "none");
  }
  if (t < 0) return pt_fail(d, PT_ERR_INPUT, "no record");
  snprintf(data->target, sizeof data->target, "%s", targets[t]);
  char ranked[128];
  pp_tlp_platform(targets[t], ranked, sizeof ranked);
  int o = most_common(n_targets, targets, counts, ranked, false);
  data->other[0] = 0;
  if (o >= 0) snprintf(data->other, sizeof data->other, "%s", targets[o]);
  return 0;
}

/* Candidates by program hash (workload key, steps): val = 1 + flat index into the `at` arrays. */
typedef struct {
  lb_data *data;
  ds_hashset programs;
  int *task_of, *cand_of;
} join_ctx;

static uint64_t program_hash(const char *key, int n_steps, const pc_step *steps) {
  char *json = pc_steps_to_json(n_steps, steps);
  uint64_t h = ds_program_hash(key, NULL, json);
  free(json);
  return h;
}

static int join_record(const pc_record *r, int line, void *vctx) {
  (void)line;
  join_ctx *c = vctx;
  if (strcmp(r->target, c->data->other) != 0 || r->error_code != 0 || r->n_costs < 1) return 0;
  double lat = 0;
  for (int i = 0; i < r->n_costs; i++) lat += r->costs[i];
  lat /= r->n_costs;
  if (!(lat > 0) || !isfinite(lat)) return 0;
  int *val;
  if (ds_hashset_insert(&c->programs, program_hash(r->workload_key, r->n_steps, r->steps), &val) || *val == 0)
    return 0; /* not a candidate of the ranked platform (the entry just made stays 0) */
  lb_cand *cand = &c->data->t[c->task_of[*val - 1]].c[c->cand_of[*val - 1]];
  if (cand->other_latency == 0) c->data->n_other_joined++;
  if (cand->other_latency == 0 || lat < cand->other_latency) cand->other_latency = lat;
  return 0;
}

int lb_join_other(lb_data *data, int n_files, const char **files, pt_diag *d) {
  data->n_other_joined = 0;
  if (!data->other[0]) return 0;
  int n = 0;
  for (int i = 0; i < data->n_tasks; i++) n += data->t[i].n;
  join_ctx c = {data, {0}, malloc(sizeof(int) * (size_t)(n + 1)), malloc(sizeof(int) * (size_t)(n + 1))};
  int k = 0;
  for (int i = 0; i < data->n_tasks; i++)
    for (int j = 0; j < data->t[i].n; j++) {
      lb_cand *cand = &data->t[i].c[j];
      int *val;
      cand->other_latency = 0;
      /* the same program twice in a task (measured twice): the first copy carries the join */
      if (!ds_hashset_insert(&c.programs, program_hash(data->t[i].key, cand->n_steps, cand->steps), &val)) continue;
      c.task_of[k] = i, c.cand_of[k] = j, *val = ++k;
    }
  int rc = 0;
  for (int f = 0; f < n_files && rc == 0; f++)
    if (pc_record_read_file(files[f], join_record, NULL, &c, NULL, d) < 0) rc = d->err;
  ds_hashset_free(&c.programs);
  free(c.task_of), free(c.cand_of);
  return rc;
}
