/* Local search by measurement: the unmeasured one-mutation neighbours of the fastest
 * measured candidates, ranked by the model. An analytic model predicts most good candidates
 * at one compute bound, so its own picks inside that region are a random draw and few are
 * near the best measured so far (docs/tuning.md, "Session 10"); measuring the best's
 * neighbours orders them by what they run at instead. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "tune_internal.h"

#define TRIES_PER_NEIGHBOUR 8

/* One random mutation of c. Tile sizes weigh less than in the evolution (0.90 there): a
 * parent has only a few unroll, compute-location and parallel neighbours, and among the
 * best's neighbours they are as likely to be the faster ones. */
static int mutate_once(const pc_program *p, const pc_tune_opts *o, pc_state *scratch, const sk_cand *c, pt_rng *rng,
                       pc_step *out) {
  double w = pt_rng_uniform(rng);
  if (w < 0.70) return sk_mutate_tile_size(p, scratch, c, o->sketch.max_innermost_factor, rng, out);
  if (w < 0.80) return sk_mutate_auto_unroll(p, scratch, c, rng, out);
  if (w < 0.90) return sk_mutate_compute_location(p, scratch, c, rng, out);
  return sk_mutate_parallel(p, scratch, c, rng, out);
}

int sk_local_neighbours(const pc_program *p, const pc_tune_opts *o, const sk_pop *parents, int per_parent,
                        const sk_hashset *measured, pt_rng *rng, sk_pop *out, int *parent_of) {
  pc_step *child = malloc(sizeof(pc_step) * PC_MAX_STEPS);
  pc_state *scratch = sk_scratch_new(p);
  sk_hashset seen = {0};
  for (int i = 0; i < parents->n; i++) sk_hashset_add(&seen, parents->c[i].hash);
  for (int i = 0; i < parents->n; i++) {
    int got = 0;
    for (int tries = 0; got < per_parent && tries < TRIES_PER_NEIGHBOUR * per_parent; tries++) {
      int n = mutate_once(p, o, scratch, &parents->c[i], rng, child);
      if (n < 0) continue;
      /* The register rule without the evolution's exceptions: a spilling tile is slow for sure
       * and costs seconds to measure. */
      if (sk_tile_spills(o, n, child)) continue;
      uint64_t h = sk_steps_hash(n, child);
      if (sk_hashset_has(measured, h) || !sk_hashset_add(&seen, h)) continue;
      sk_pop_push(out, child, n, h);
      if (parent_of) parent_of[out->n - 1] = i;
      got++;
    }
  }
  sk_hashset_free(&seen);
  pc_state_free(scratch);
  free(child);
  return out->n;
}

int sk_local_pick(const pc_program *p, const pc_cost_model *m, const pc_tune_opts *o, const sk_pop *parents, int want,
                  const sk_hashset *measured, pt_rng *rng, sk_pop *chosen, double *t_model, long *n_scored, pt_diag *d) {
  if (want <= 0 || parents->n == 0) return 0;
  /* Enough of each parent's neighbours for the model to choose from: four per slot. */
  int per_parent = 4 * ((want + parents->n - 1) / parents->n);
  if (per_parent < 8) per_parent = 8;
  sk_pop nb = {0};
  int *parent_of = malloc(sizeof(int) * (size_t)(parents->n * per_parent + 1));
  sk_local_neighbours(p, o, parents, per_parent, measured, rng, &nb, parent_of);
  int rc = nb.n ? sk_predict(p, m, &nb, t_model, n_scored, d) : 0;
  if (rc == 0 && nb.n > 0) {
    /* Per parent, best score first; equal scores (a bound) in random order. */
    for (int i = nb.n - 1; i > 0; i--) {
      int j = (int)pt_rng_range(rng, i + 1);
      sk_cand tc = nb.c[i];
      nb.c[i] = nb.c[j];
      nb.c[j] = tc;
      int tp = parent_of[i];
      parent_of[i] = parent_of[j];
      parent_of[j] = tp;
    }
    sk_pop *by_parent = calloc((size_t)parents->n, sizeof(sk_pop));
    for (int i = 0; i < nb.n; i++)
      if (isfinite(nb.c[i].score)) {
        sk_pop *bp = &by_parent[parent_of[i]];
        sk_pop_push(bp, nb.c[i].steps, nb.c[i].n, nb.c[i].hash);
        bp->c[bp->n - 1].score = nb.c[i].score;
      }
    for (int i = 0; i < parents->n; i++)
      if (by_parent[i].n > 1) qsort(by_parent[i].c, (size_t)by_parent[i].n, sizeof(sk_cand), sk_cand_cmp_score_desc);
    /* Round robin over the parents, fastest first, so each gets its share of the slots. */
    int taken = 0;
    for (int k = 0; taken < want; k++) {
      bool any = false;
      for (int i = 0; i < parents->n && taken < want; i++)
        if (k < by_parent[i].n) {
          any = true;
          sk_pop_push(chosen, by_parent[i].c[k].steps, by_parent[i].c[k].n, by_parent[i].c[k].hash);
          chosen->c[chosen->n - 1].score = by_parent[i].c[k].score;
          taken++;
        }
      if (!any) break;
    }
    for (int i = 0; i < parents->n; i++) sk_pop_free(&by_parent[i]);
    free(by_parent);
  }
  free(parent_of);
  sk_pop_free(&nb);
  return rc;
}
