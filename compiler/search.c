/* Evolutionary search over candidates (TVM SketchPolicy::EvolutionarySearch): score the
 * population with the cost model, keep the best unmeasured candidates seen, draw parents in
 * proportion to their scores and make children by mutation (Ansor's rule weights) or
 * crossover. Also the population containers and the random cost model. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sketch_internal.h"

/* ---------------------------------------------------------------- containers */

void sk_pop_push(sk_pop *pop, const pc_step *steps, int n, uint64_t hash) {
  if (pop->n == pop->cap) {
    pop->cap = pop->cap ? 2 * pop->cap : 64;
    pop->c = realloc(pop->c, sizeof(sk_cand) * (size_t)pop->cap);
  }
  sk_cand *c = &pop->c[pop->n++];
  c->n = n;
  c->steps = malloc(sizeof(pc_step) * (size_t)(n > 0 ? n : 1));
  memcpy(c->steps, steps, sizeof(pc_step) * (size_t)n);
  c->hash = hash;
  c->score = 0;
}

void sk_pop_clear(sk_pop *pop) {
  for (int i = 0; i < pop->n; i++) free(pop->c[i].steps);
  pop->n = 0;
}

void sk_pop_free(sk_pop *pop) {
  sk_pop_clear(pop);
  free(pop->c);
  memset(pop, 0, sizeof *pop);
}

static void hashset_grow(sk_hashset *h) {
  int cap = h->cap ? 2 * h->cap : 1024;
  uint64_t *slot = calloc((size_t)cap, sizeof(uint64_t));
  for (int i = 0; i < h->cap; i++)
    if (h->slot[i]) {
      size_t j = h->slot[i] & (size_t)(cap - 1);
      while (slot[j]) j = (j + 1) & (size_t)(cap - 1);
      slot[j] = h->slot[i];
    }
  free(h->slot);
  h->slot = slot;
  h->cap = cap;
}

bool sk_hashset_has(const sk_hashset *h, uint64_t key) {
  if (!h || h->cap == 0) return false;
  if (key == 0) key = 1; /* 0 marks an empty slot */
  for (size_t j = key & (size_t)(h->cap - 1); h->slot[j]; j = (j + 1) & (size_t)(h->cap - 1))
    if (h->slot[j] == key) return true;
  return false;
}

bool sk_hashset_add(sk_hashset *h, uint64_t key) {
  if (key == 0) key = 1;
  if (sk_hashset_has(h, key)) return false;
  if (2 * (h->n + 1) > h->cap) hashset_grow(h);
  size_t j = key & (size_t)(h->cap - 1);
  while (h->slot[j]) j = (j + 1) & (size_t)(h->cap - 1);
  h->slot[j] = key;
  h->n++;
  return true;
}

void sk_hashset_free(sk_hashset *h) {
  free(h->slot);
  memset(h, 0, sizeof *h);
}

/* ---------------------------------------------------------------- random cost model */

typedef struct {
  pt_rng rng;
} random_model;

static int random_predict(void *self, const pc_program *p, int n, pc_state *const *states, double *scores, pt_diag *d) {
  random_model *m = self;
  for (int i = 0; i < n; i++) scores[i] = pt_rng_uniform(&m->rng);
  return 0;
}

pc_cost_model pc_cost_model_random(uint64_t seed) {
  random_model *m = calloc(1, sizeof *m);
  m->rng.s = seed ^ 0x5eedull;
  pc_cost_model cm = {"random", m, random_predict, NULL, free};
  return cm;
}

/* ---------------------------------------------------------------- search */

#define PREDICT_CHUNK 32

int sk_predict(const pc_program *p, const pc_cost_model *m, sk_pop *pop, double *t_model, long *n_scored, pt_diag *d) {
  pc_state *states[PREDICT_CHUNK], *scratch[PREDICT_CHUNK] = {0};
  double scores[PREDICT_CHUNK];
  int rc = 0;
  for (int base = 0; base < pop->n; base += PREDICT_CHUNK) {
    int n = pop->n - base < PREDICT_CHUNK ? pop->n - base : PREDICT_CHUNK, k = 0;
    int idx[PREDICT_CHUNK];
    for (int i = 0; i < n; i++) {
      pt_diag ignore = {0};
      if (!scratch[k]) scratch[k] = sk_scratch_new(p);
      pop->c[base + i].score = -INFINITY;
      if (sk_replay_into(scratch[k], p, pop->c[base + i].n, pop->c[base + i].steps, &ignore) == 0) {
        idx[k] = base + i;
        states[k] = scratch[k];
        k++;
      }
    }
    double t0 = pt_now();
    rc = k ? m->predict(m->self, p, k, states, scores, d) : 0;
    if (t_model) *t_model += pt_now() - t0;
    if (n_scored) *n_scored += k;
    for (int i = 0; i < k && rc == 0; i++) pop->c[idx[i]].score = isfinite(scores[i]) ? scores[i] : -INFINITY;
    if (rc) break;
  }
  for (int i = 0; i < PREDICT_CHUNK; i++) pc_state_free(scratch[i]);
  return rc;
}

void sk_sample_population(const pc_sketches *sk, int want, const sk_hashset *skip, pt_rng *rng, sk_pop *out) {
  sk_hashset seen = {0};
  for (int i = 0; i < out->n; i++) sk_hashset_add(&seen, out->c[i].hash);
  int fails = 0, target = out->n + want;
  pc_state *s = sk_scratch_new(sk->p);
  /* Ansor retries sampling until the population is full; bounded here so a workload whose
   * samples keep colliding (a tiny shape) still returns. */
  while (out->n < target && fails < 4 * want + 64) {
    pt_diag d = {0};
    if (sk_sample_into(sk, (int)pt_rng_range(rng, sk->n), rng, s, &d)) {
      fails++;
      continue;
    }
    uint64_t h = sk_steps_hash(s->n_steps, s->steps);
    if (sk_hashset_has(skip, h) || !sk_hashset_add(&seen, h)) fails++;
    else sk_pop_push(out, s->steps, s->n_steps, h);
  }
  pc_state_free(s);
  sk_hashset_free(&seen);
}

int sk_cand_cmp_score_desc(const void *a, const void *b) {
  double x = ((const sk_cand *)a)->score, y = ((const sk_cand *)b)->score;
  return x > y ? -1 : x < y;
}

/* Keeps the best `cap` unique candidates in `best` (unsorted; sorted at the end). */
static void keep_best(sk_pop *best, sk_hashset *in_best, const sk_cand *c, int cap) {
  if (!isfinite(c->score)) return;
  if (best->n < cap) {
    if (!sk_hashset_add(in_best, c->hash)) return;
    sk_pop_push(best, c->steps, c->n, c->hash);
    best->c[best->n - 1].score = c->score;
    return;
  }
  int worst = 0;
  for (int i = 1; i < best->n; i++)
    if (best->c[i].score < best->c[worst].score) worst = i;
  if (c->score <= best->c[worst].score || sk_hashset_has(in_best, c->hash)) return;
  sk_hashset_add(in_best, c->hash); /* the evicted hash stays: it was seen */
  free(best->c[worst].steps);
  best->c[worst].steps = malloc(sizeof(pc_step) * (size_t)c->n);
  memcpy(best->c[worst].steps, c->steps, sizeof(pc_step) * (size_t)c->n);
  best->c[worst].n = c->n;
  best->c[worst].hash = c->hash;
  best->c[worst].score = c->score;
}

static int pick(const double *prefix, int n, pt_rng *rng) {
  double r = pt_rng_uniform(rng) * prefix[n - 1];
  int lo = 0, hi = n - 1;
  while (lo < hi) {
    int mid = (lo + hi) / 2;
    if (prefix[mid] > r) hi = mid;
    else lo = mid + 1;
  }
  return lo;
}

int sk_evolve(const pc_program *p, const pc_cost_model *m, const pc_tune_opts *o, const sk_hashset *measured,
              sk_pop *pop, int out_size, pt_rng *rng, sk_pop *best, double *t_model, long *n_scored, pt_diag *d) {
  sk_hashset in_best = {0};
  sk_pop next = {0};
  pc_step *child = malloc(sizeof(pc_step) * PC_MAX_STEPS);
  pc_state *scratch = sk_scratch_new(p);
  double *prefix = NULL;
  int rc = 0;
  for (int gen = 0; gen <= o->generations && pop->n > 0; gen++) {
    if ((rc = sk_predict(p, m, pop, t_model, n_scored, d))) break;
    for (int i = 0; i < pop->n; i++)
      if (!sk_hashset_has(measured, pop->c[i].hash)) keep_best(best, &in_best, &pop->c[i], out_size);
    if (gen == o->generations) break;
    /* Selection in proportion to the score, shifted to be positive (Ansor normalizes
     * non-negative throughput predictions the same way). */
    double lo = INFINITY, hi = -INFINITY;
    for (int i = 0; i < pop->n; i++)
      if (isfinite(pop->c[i].score)) {
        lo = fmin(lo, pop->c[i].score);
        hi = fmax(hi, pop->c[i].score);
      }
    prefix = realloc(prefix, sizeof(double) * (size_t)pop->n);
    double acc = 0;
    for (int i = 0; i < pop->n; i++) {
      double w = isfinite(pop->c[i].score) ? (hi > lo ? (pop->c[i].score - lo) / (hi - lo) : 1.0) + 1e-3 : 0;
      prefix[i] = acc += w;
    }
    if (acc <= 0) break;
    sk_hashset seen = {0};
    int tries = 0;
    while (next.n < o->population && tries++ < 8 * o->population) {
      const sk_cand *a = &pop->c[pick(prefix, pop->n, rng)];
      double r = pt_rng_uniform(rng);
      int n = -1;
      if (r < o->crossover_prob) {
        /* A partner with the same structure (children of one parent mostly are). */
        for (int k = 0; k < 8 && n < 0; k++) {
          const sk_cand *b = &pop->c[pick(prefix, pop->n, rng)];
          if (b != a && b->n == a->n) n = sk_crossover(p, scratch, a, b, rng, child);
        }
      } else if (r < o->crossover_prob + o->mutation_prob) {
        /* Ansor's CPU weights: tile size 0.90, auto unroll 0.04, compute location 0.05,
         * parallel 0.01 (sketch_policy.cc). */
        double w = pt_rng_uniform(rng);
        if (w < 0.90) {
          n = sk_mutate_tile_size(p, scratch, a, o->sketch.max_innermost_factor, rng, child);
          /* portent's register rule (sketch_annotate.c), three times in four: a child whose
           * innermost tile outgrows the register file spills every accumulator (conv_r50_3:
           * 56 registers ran 600x slower than 8) and costs seconds to measure. */
          if (n > 0 && sk_tile_spills(o, n, child) && pt_rng_range(rng, 4) != 0) n = -1;
        }
        else if (w < 0.94) n = sk_mutate_auto_unroll(p, scratch, a, rng, child);
        else if (w < 0.99) n = sk_mutate_compute_location(p, scratch, a, rng, child);
        else n = sk_mutate_parallel(p, scratch, a, rng, child);
      } else {
        memcpy(child, a->steps, sizeof(pc_step) * (size_t)a->n);
        n = a->n;
      }
      if (n < 0) continue;
      uint64_t h = sk_steps_hash(n, child);
      if (!sk_hashset_add(&seen, h)) continue;
      sk_pop_push(&next, child, n, h);
    }
    sk_hashset_free(&seen);
    sk_pop t = *pop;
    *pop = next;
    next = t;
    sk_pop_clear(&next);
  }
  if (best->n > 1) qsort(best->c, (size_t)best->n, sizeof(sk_cand), sk_cand_cmp_score_desc);
  sk_pop_free(&next);
  sk_hashset_free(&in_best);
  free(child);
  pc_state_free(scratch);
  free(prefix);
  return rc;
}
