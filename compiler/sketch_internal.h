/* The sketch set shared by sketch.c (generation) and sketch_annotate.c (sampling). */
#ifndef PORTENT_SKETCH_INTERNAL_H
#define PORTENT_SKETCH_INTERNAL_H

#include "tune_internal.h"

#define SK_MAX_SKETCHES 64
#define SK_DESC_LEN 160
#define SK_FILL 1
#define SK_FILL_VECTOR 2

/* sketch_cache.c: a multi-level-tiled stage's loads (and its output) as affine forms over its
 * axes, and the fill step that splits each axis, for the working set of its tiles. */
#define SK_MAX_TILED 4
#define SK_MAX_ACCESS 8
#define SK_MAX_TERMS 4
typedef struct {
  int ndim;
  int64_t shape[PC_MAX_DIMS];
  bool whole[PC_MAX_DIMS]; /* index not affine: the whole dimension */
  int n_terms[PC_MAX_DIMS];
  int term_axis[PC_MAX_DIMS][SK_MAX_TERMS];
  int64_t term_coef[PC_MAX_DIMS][SK_MAX_TERMS]; /* |coefficient| */
} sk_access;
typedef struct {
  char op_name[PC_NAME_LEN];
  int n_axes, n_spatial;
  int split_step[PC_MAX_AXES]; /* step splitting each axis (spatial in 4, reduction in 2) */
  int64_t extent[PC_MAX_AXES];
  int n_access;
  sk_access access[SK_MAX_ACCESS];
} sk_tiled;
typedef struct {
  int n;
  sk_tiled t[SK_MAX_TILED];
} sk_tiles;

struct pc_sketches {
  const pc_program *p;
  pc_sketch_opts o;
  int n;
  pc_state *state[SK_MAX_SKETCHES];       /* the sketch, tile sizes at 1 */
  /* per step: SK_FILL for a split whose lengths the sampler fills, | SK_FILL_VECTOR when it
   * splits the last spatial axis (its innermost length suits the vector width) */
  unsigned char fill[SK_MAX_SKETCHES][PC_MAX_STEPS];
  char desc[SK_MAX_SKETCHES][SK_DESC_LEN];
  sk_tiles *tiles[SK_MAX_SKETCHES]; /* NULL: no stage tiled on its own axes */
};

/* sketch_cache.c: fills sk->tiles[i] from sketch i's steps. */
void sk_tiles_build(pc_sketches *sk, int i);
/* Bytes of the block of sketch i's tiles (the largest over its tiled stages) meant for cache
 * `level` (1: the body of the r0 loop; 2: the body of the innermost s1 loop), for the tile
 * lengths in `steps`; 0 when nothing is tiled. */
int64_t sk_tile_working_set(const pc_sketches *sk, int i, const pc_step *steps, int level);
/* Whether both blocks fit the option's cache sizes (a size of 0 is not checked). */
bool sk_tiles_fit_caches(const pc_sketches *sk, int i, const pc_step *steps);
/* The smallest r1 (product of the level-2 reduction lengths) over sketch i's tiled stages
 * with a reduction, for the lengths in `steps`; 0 when none has one. */
int64_t sk_reduction_tile(const pc_sketches *sk, int i, const pc_step *steps);
/* Whether every tiled stage's r1 reaches the option's min_reduction_tile (or its whole
 * reduction, when shorter). */
bool sk_tiles_reduce_enough(const pc_sketches *sk, int i, const pc_step *steps);

/* sketch_annotate.c: the sketch's steps with random tile sizes; returns their count or -1. */
int sk_fill_tiles(const pc_sketches *sk, int i, pt_rng *rng, pc_step *steps);

/* A random annotation of sketch i into a scratch state (see pc_sketch_sample). */
int sk_sample_into(const pc_sketches *sk, int i, pt_rng *rng, pc_state *scratch, pt_diag *d);

#endif
