/* Block counts per call without running, from the loop nest's static trip counts: possible
 * when every conditional branch is the exit test of a loop whose trip count is known, as in
 * portent's own lowered programs (DESIGN.md, "Profiles cheap enough for search"). Flow is
 * propagated in reverse postorder: a header runs trip_count times per entry into its loop, an
 * exiting block sends one execution per entry out of the loop and the rest back in. */
#include <stdlib.h>

#include "internal.h"

static bool in_loop(const pa_loop *l, int b) {
  for (int i = 0; i < l->n_blocks; i++)
    if (l->blocks[i] == b) return true;
  return false;
}

/* The loop that b exits from on edge b -> s, innermost first; NULL if b -> s stays in all
 * loops containing b. A conditional edge must leave exactly the loop whose exit test it is. */
static const pa_loop *exited_loop(const pa_function *f, int b, int s) {
  const pa_loop *outermost = NULL;
  for (int l = f->blocks[b].loop; l >= 0; l = f->loops[l].parent)
    if (!in_loop(&f->loops[l], s)) outermost = &f->loops[l];
  return outermost;
}

int pa_static_counts(pa_function *f) {
  int n = f->n_blocks;
  double *count = calloc((size_t)n, sizeof *count), *entries = calloc((size_t)f->n_loops + 1, sizeof *entries);
  int *order = malloc(sizeof *order * (size_t)n);
  int cnt = pa_reverse_postorder(f, order), err = 0;
  /* edge count p -> s once count[p] is known */
  for (int k = 0; k < cnt && !err; k++) {
    int b = order[k];
    const pa_block *bb = &f->blocks[b];
    double c = b == 0 ? 1 : 0;
    const pa_loop *header_of = NULL;
    for (int l = 0; l < f->n_loops; l++)
      if (f->loops[l].header == b) header_of = &f->loops[l];
    for (int j = 0; j < bb->n_preds && !err; j++) {
      int p = bb->preds[j];
      if (header_of && in_loop(header_of, p)) continue; /* back edge: covered by the trip count */
      const pa_block *pb = &f->blocks[p];
      double e = 0;
      if (pb->n_succs == 1) e = count[p];
      else if (pb->n_succs == 2) {
        /* A two-way branch is usable only as a loop's exit test: one side leaves the loop. */
        int other = pb->succs[0] == b ? pb->succs[1] : pb->succs[0];
        const pa_loop *lb = exited_loop(f, p, b), *lo = exited_loop(f, p, other);
        if (lb && !lo) e = entries[lb - f->loops];                   /* the exit edge */
        else if (lo && !lb) e = count[p] - entries[lo - f->loops];    /* stays in the loop */
        else err = -1;
      } else err = -1;
      c += e;
    }
    if (header_of) {
      if (header_of->trip_count < 0) err = -1;
      entries[header_of - f->loops] = c;
      c *= (double)header_of->trip_count;
    }
    count[b] = c;
  }
  /* the exit test's loop must be the one whose trip count we used */
  for (int b = 0; b < n && !err; b++) {
    const pa_block *bb = &f->blocks[b];
    if (bb->n_succs == 2) {
      const pa_loop *l0 = exited_loop(f, b, bb->succs[0]), *l1 = exited_loop(f, b, bb->succs[1]);
      const pa_loop *l = l0 ? l0 : l1;
      if (!l || l->trip_count < 0 || l != &f->loops[bb->loop]) err = -1;
    }
  }
  for (int b = 0; b < n; b++) f->blocks[b].static_count_per_call = err ? -1 : count[b];
  free(count);
  free(entries);
  free(order);
  return err;
}
