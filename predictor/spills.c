/* +regs: a loop whose accumulators do not fit the target's vector registers. Profiles are
 * target-neutral, so a register tile written for AVX-512's 32 zmm registers (mm512's default:
 * 8 x <32 x float>, 16 zmm) is 32 ymm accumulators on a 16-register AVX2 target, and the host's
 * register allocator keeps what does not fit in memory: each update reloads, updates and stores
 * (Zen 3 measured 9.1 ms against 2.4 on Zen 4, docs/validation.md "Session 19"). The target
 * measures what an update costs in a register tile past its registers (cpu.spill_update_cycles,
 * microbench/spills.c); a loop's single block whose header phis need more registers than the
 * target has, less that tile's own temporaries, takes at least its vector float updates at that
 * cost. A target without the figure: unchanged. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

/* The measured tile's temporaries beside its accumulators: four vectors of B and a broadcast. */
#define TILE_TEMPORARIES 5

static bool is_float(const pa_node *n) { return n->elem && (n->elem[0] == 'f' || n->elem[0] == 'b'); }


/* Registers a value holds: its bits over the register width; a vector of a lane count that is not
 * a power of two and wider than a register lives lane by lane (LLVM 19 splits it into scalars
 * across the loop's back edge, pp_legalize_block's crosses_as_scalars; conv_r50_4's tuned
 * <14 x float> tile on Zen 3: 873 stack references an iteration for 14 such accumulators). */
static bool lane_by_lane(const pa_node *n, int reg_bits) {
  return n->lanes > 2 && (n->lanes & (n->lanes - 1)) != 0 && n->bits > reg_bits;
}

static int registers_of(const pa_node *n, int reg_bits) {
  int bits = n->bits > 0 ? n->bits : 32;
  return lane_by_lane(n, reg_bits) ? n->lanes : (bits + reg_bits - 1) / reg_bits;
}

double pp_spill_floor(const pp_predictor *pp, const pa_function *f, const pa_block *b) {
  const ptg_target *t = pp->t;
  double per_update = t->spill_update_cycles.value;
  if (!pp->o.spills || !(per_update > 0) || b->loop < 0 || b->loop >= f->n_loops) return 0;
  const pa_loop *l = &f->loops[b->loop];
  if (l->n_blocks != 1 || &f->blocks[l->header] != b) return 0; /* a single-block loop body */
  int reg_bits = t->max_vector_bits > 0 ? t->max_vector_bits : pp->native_bits;
  /* accumulators: registers of the float header phis; updates: registers of the vector float
   * ops on their recurrences (reached from a phi and reaching a value carried back: a register
   * tile's FMAs, or each tap of a convolution's unrolled chain) */
  int accumulators = 0;
  for (int k = 0; k < b->n_nodes; k++)
    if (pp_is_phi(&b->nodes[k]) && is_float(&b->nodes[k])) accumulators += registers_of(&b->nodes[k], reg_bits);
  if (accumulators + TILE_TEMPORARIES <= ptg_target_vector_registers(t)) return 0;
  unsigned char *mark = calloc((size_t)b->n_nodes, 1); /* bit 0: from a phi; bit 1: carried back */
  if (!mark) return 0; /* out of memory: no floor */
  for (int k = 0; k < b->n_nodes; k++) mark[k] = pp_is_phi(&b->nodes[k]) && is_float(&b->nodes[k]);
  for (int e = 0; e < b->n_edges; e++) /* data edges go forward: sources are final first */
    if (b->edges[e].kind == PA_EDGE_DATA) mark[b->edges[e].dst] |= mark[b->edges[e].src] & 1;
  for (int e = 0; e < b->n_edges; e++)
    if (b->edges[e].kind == PA_EDGE_LOOP_CARRIED) mark[b->edges[e].src] |= 2;
  for (int e = b->n_edges - 1; e >= 0; e--) /* edges by destination: users before their sources */
    if (b->edges[e].kind == PA_EDGE_DATA) mark[b->edges[e].src] |= mark[b->edges[e].dst] & 2;
  int updates = 0;
  for (int k = 0; k < b->n_nodes; k++) {
    const pa_node *n = &b->nodes[k];
    if (mark[k] == 3 && !pp_is_phi(n) && is_float(n) && n->lanes > 1) updates += (n->bits + reg_bits - 1) / reg_bits;
    /* an accumulator kept lane by lane is reloaded and stored a lane at a time */
    if (pp_is_phi(n) && is_float(n) && lane_by_lane(n, reg_bits)) updates += n->lanes;
  }
  free(mark);
  return updates * per_update;
}
