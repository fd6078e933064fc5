/* The cost models `portent tune` and `portent bench tune` can rank candidates with, by name. */
#ifndef PORTENT_CLI_TUNE_MODELS_H
#define PORTENT_CLI_TUNE_MODELS_H

#include "compiler.h"
#include "targets.h"

/* "random, xgb, ..." for usage texts. */
const char *tune_model_names(void);
/* Builds the named model; the target may be NULL (the analytic model needs one). threads: the
 * threads the ranked candidates run on, which the analytic model predicts for (0: all the
 * target's cores). */
int tune_model_new(const char *name, const ptg_target *target, int threads, uint64_t seed, pc_cost_model *out, pt_diag *d);

/* "A" or "A+B" (B re-ranks A's best each round: a cascade). *has_rerank says whether rerank
 * was built; free each built model with m.free(m.self). */
int tune_models_new(const char *spec, const ptg_target *target, int threads, uint64_t seed, pc_cost_model *model,
                    pc_cost_model *rerank, bool *has_rerank, pt_diag *d);

/* The default pc_tune_opts.local_share of a search ranked by this spec: a half when its search
 * model (A of "A+B") is analytic, which predicts most good candidates at one bound and cannot
 * order them (docs/tuning.md, "Session 11"); 0 (off) for the others, whose default searches
 * were measured without it. */
double tune_model_local_share(const char *spec);

/* The sketch options a target file sets: vector lanes (native width / 32), vector registers
 * (16 for x86 below AVX-512, else 32) and, when cache_rule is true, the L1d and L2 bytes
 * per core for the cache rule of tile sampling. */
void tune_sketch_opts_from_target(const ptg_target *target, bool cache_rule, pc_sketch_opts *o);

#endif
