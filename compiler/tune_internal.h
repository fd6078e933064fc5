/* What the tuner's files (sketch*.c, search*.c, tune*.c) share: the access analysis of
 * Ansor's sketch rules, step sequences as candidates, and the helpers that build steps.
 * Nothing outside compiler/ includes it. */
#ifndef PORTENT_TUNE_INTERNAL_H
#define PORTENT_TUNE_INTERNAL_H

#include "internal.h"

/* ------------------------------------------------ access analysis (sketch_analysis.c) */

/* Ansor's AccessAnalyzer facts about one op of a program (compute_dag.cc). */
bool sk_is_strictly_inlineable(const pc_program *p, int op);
bool sk_needs_multi_level_tiling(const pc_program *p, int op);
bool sk_has_branch_or_expensive(const pc_program *p, int op);
/* Consumers of a stage, looking through inlined stages (GetConsumers); returns the count. */
int sk_consumers(const pc_state *s, int sid, int *out, int cap);
/* HasSingleElementwiseMatchedConsumer: the consumer's stage id, or -1. */
int sk_single_elementwise_consumer(const pc_state *s, int sid);
/* Whether stage sid is the cache stage made by a cache_write (HasCacheWriteStage). */
bool sk_has_cache_write_stage(const pc_state *s, int sid);
bool sk_stage_has_reduce(const pc_state *s, int sid);
bool sk_stage_is_tiled(const pc_state *s, int sid);
/* Whether an iterator of stage sid (leaf position) has stages attached. */
bool sk_iter_has_attached(const pc_state *s, int sid, int leaf);
/* GetComputeLocationCandidates: (stage, leaf) pairs; returns the count. */
int sk_compute_location_candidates(const pc_state *s, int sid, int (*out)[2], int cap);
/* The stage a step addresses in the current state (GetTargetStageIDInState). */
int sk_step_stage_now(const pc_state *s, int step_id);

/* ------------------------------------------------ steps */

pc_step sk_step(pc_step_kind k, int stage);
int sk_apply(pc_state *s, pc_step st, pt_diag *d);
/* Replays steps on a fresh state of p; NULL (and d filled) if any step is invalid. */
pc_state *sk_replay(const pc_program *p, int n, const pc_step *steps, pt_diag *d);
/* A reusable state (free with pc_state_free) and replay into it; on error the scratch holds
 * a partial state (still freeable and reusable). */
pc_state *sk_scratch_new(const pc_program *p);
int sk_replay_into(pc_state *s, const pc_program *p, int n, const pc_step *steps, pt_diag *d);
/* A canonical 64-bit hash of a step sequence (dedupe of candidates). */
uint64_t sk_steps_hash(int n, const pc_step *steps);

/* ------------------------------------------------ factorizations (sketch_annotate.c) */

/* Divisors of n in increasing order; returns the count. */
int sk_divisors(int64_t n, int64_t *out, int cap);

/* ------------------------------------------------ candidates (search*.c) */

/* A candidate of the search: its step sequence (the state is replayed when needed). */
typedef struct {
  int n;
  pc_step *steps;
  uint64_t hash;
  double score;
} sk_cand;

typedef struct {
  sk_cand *c;
  int n, cap;
} sk_pop;

void sk_pop_push(sk_pop *pop, const pc_step *steps, int n, uint64_t hash);
void sk_pop_clear(sk_pop *pop);
void sk_pop_free(sk_pop *pop);

/* A set of step-sequence hashes (measured candidates, candidates already kept). */
typedef struct {
  uint64_t *slot;
  int n, cap;
} sk_hashset;
bool sk_hashset_has(const sk_hashset *h, uint64_t key);
bool sk_hashset_add(sk_hashset *h, uint64_t key); /* false if already there */
void sk_hashset_free(sk_hashset *h);

/* search_mutate.c: Ansor's mutation rules and a crossover of two parents with the same
 * step structure. Each writes the child's steps (cap PC_MAX_STEPS) and returns their count,
 * or -1 when the rule does not apply or the child is invalid. */
/* Vector registers the innermost ("SSRSRS" level 3) tile of each multi-level-tiled stage
 * needs: the product of its innermost spatial lengths, the last axis counted in registers of
 * `lanes`; the largest over the stages, 0 when none is tiled so. */
int64_t sk_register_tile(int n, const pc_step *steps, int lanes);
/* Whether the tile needs more vector registers than the target leaves for accumulators
 * (its registers less 4; 28 when unknown): the search's register rule. */
bool sk_tile_spills(const pc_tune_opts *o, int n, const pc_step *steps);
int sk_mutate_tile_size(const pc_program *p, pc_state *scratch, const sk_cand *c, int max_inner, pt_rng *rng, pc_step *out);
int sk_mutate_auto_unroll(const pc_program *p, pc_state *scratch, const sk_cand *c, pt_rng *rng, pc_step *out);
int sk_mutate_parallel(const pc_program *p, pc_state *scratch, const sk_cand *c, pt_rng *rng, pc_step *out);
int sk_mutate_compute_location(const pc_program *p, pc_state *scratch, const sk_cand *c, pt_rng *rng, pc_step *out);
int sk_crossover(const pc_program *p, pc_state *scratch, const sk_cand *a, const sk_cand *b, pt_rng *rng, pc_step *out);

/* search.c: scores a population with the model (states replayed in chunks). */
/* qsort order of candidates: highest score first. */
int sk_cand_cmp_score_desc(const void *a, const void *b);
int sk_predict(const pc_program *p, const pc_cost_model *m, sk_pop *pop, double *t_model, long *n_scored, pt_diag *d);
/* Random annotations of random sketches until `want` unique candidates not in `skip`. */
void sk_sample_population(const pc_sketches *sk, int want, const sk_hashset *skip, pt_rng *rng, sk_pop *out);
/* Evolutionary search from `pop` (consumed): `generations` rounds of scoring, selection by
 * score, mutation and crossover; the best `out_size` unique candidates not in `measured`
 * go to `best`, ordered by score. */
int sk_evolve(const pc_program *p, const pc_cost_model *m, const pc_tune_opts *o, const sk_hashset *measured,
              sk_pop *pop, int out_size, pt_rng *rng, sk_pop *best, double *t_model, long *n_scored, pt_diag *d);

/* search_local.c: local search by measurement (pc_tune_opts.local_share). Up to per_parent
 * unmeasured one-mutation neighbours of each parent (no register-spilling tiles), appended to
 * out; parent_of[i] (may be NULL) the parent of out's i-th. Returns out's count. */
int sk_local_neighbours(const pc_program *p, const pc_tune_opts *o, const sk_pop *parents, int per_parent,
                        const sk_hashset *measured, pt_rng *rng, sk_pop *out, int *parent_of);
/* Appends to chosen up to `want` neighbours of the parents (the fastest measured candidates,
 * fastest first), ranked by the model per parent and taken in turn from each parent. */
int sk_local_pick(const pc_program *p, const pc_cost_model *m, const pc_tune_opts *o, const sk_pop *parents, int want,
                  const sk_hashset *measured, pt_rng *rng, sk_pop *chosen, double *t_model, long *n_scored, pt_diag *d);

#endif
