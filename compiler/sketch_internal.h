/* The sketch set shared by sketch.c (generation) and sketch_annotate.c (sampling). */
#ifndef PORTENT_SKETCH_INTERNAL_H
#define PORTENT_SKETCH_INTERNAL_H

#include "tune_internal.h"

#define SK_MAX_SKETCHES 64
#define SK_DESC_LEN 160

struct pc_sketches {
  const pc_program *p;
  pc_sketch_opts o;
  int n;
  pc_state *state[SK_MAX_SKETCHES];       /* the sketch, tile sizes at 1 */
  bool fill[SK_MAX_SKETCHES][PC_MAX_STEPS]; /* split steps whose lengths the sampler fills */
  char desc[SK_MAX_SKETCHES][SK_DESC_LEN];
};

#endif
