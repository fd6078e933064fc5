/* The sketch set shared by sketch.c (generation) and sketch_annotate.c (sampling). */
#ifndef PORTENT_SKETCH_INTERNAL_H
#define PORTENT_SKETCH_INTERNAL_H

#include "tune_internal.h"

#define SK_MAX_SKETCHES 64
#define SK_DESC_LEN 160
#define SK_FILL 1
#define SK_FILL_VECTOR 2

struct pc_sketches {
  const pc_program *p;
  pc_sketch_opts o;
  int n;
  pc_state *state[SK_MAX_SKETCHES];       /* the sketch, tile sizes at 1 */
  /* per step: SK_FILL for a split whose lengths the sampler fills, | SK_FILL_VECTOR when it
   * splits the last spatial axis (its innermost length suits the vector width) */
  unsigned char fill[SK_MAX_SKETCHES][PC_MAX_STEPS];
  char desc[SK_MAX_SKETCHES][SK_DESC_LEN];
};

/* sketch_annotate.c: the sketch's steps with random tile sizes; returns their count or -1. */
int sk_fill_tiles(const pc_sketches *sk, int i, pt_rng *rng, pc_step *steps);

/* A random annotation of sketch i into a scratch state (see pc_sketch_sample). */
int sk_sample_into(const pc_sketches *sk, int i, pt_rng *rng, pc_state *scratch, pt_diag *d);

#endif
