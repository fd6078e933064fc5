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
/* A canonical 64-bit hash of a step sequence (dedupe of candidates). */
uint64_t sk_steps_hash(int n, const pc_step *steps);

/* ------------------------------------------------ factorizations (sketch_annotate.c) */

/* Divisors of n in increasing order; returns the count. */
int sk_divisors(int64_t n, int64_t *out, int cap);

#endif
