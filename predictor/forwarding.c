/* +forward: loads that no store buffer can serve. A load wider than a store of the same object
 * earlier in the same loop iteration, over bytes that store wrote, spans that store and another
 * (a padding stage computed inside the loop that reads it two lanes at a time): forwarding
 * fails and the load waits for the stores to reach L1. The target measures what such an
 * iteration loses (cpu.store_forward_fail_cycles, microbench/forward.c); the predictor adds it
 * to the block of the load, once per execution however many such loads it holds (Zen 4: one
 * or four of them in an iteration cost the same, docs/validation.md "Session 14"). */
#include <limits.h>
#include <stdlib.h>

#include "internal.h"

/* Every known stride of the access is 0: it reads or writes the same bytes each iteration. */
static bool in_place(const pa_node *n) {
  if (n->n_strides == 0) return false;
  for (int k = 0; k < n->n_strides; k++)
    if (n->strides[k] != 0 && n->strides[k] != PA_STRIDE_UNKNOWN) return false;
  return n->strides[0] == 0; /* the loop's own stride known: the same bytes every iteration */
}

static bool same_strides(const pa_node *a, const pa_node *b) {
  if (a->n_strides != b->n_strides || a->n_strides == 0) return false;
  for (int k = 0; k < a->n_strides; k++)
    if (a->strides[k] != b->strides[k] || a->strides[k] == PA_STRIDE_UNKNOWN) return false;
  return true;
}

/* Store s wrote bytes that load l reads in the same iteration, and l reads more than s wrote. */
static bool spans_store(const pa_node *l, const pa_node *s) {
  if (s->op != PA_OP_STORE || s->array != l->array || s->bytes <= 0 || s->bytes >= l->bytes) return false;
  if (l->has_offset && s->has_offset && same_strides(l, s))
    return s->offset < l->offset + l->bytes && l->offset < s->offset + s->bytes;
  return in_place(s) && in_place(l); /* a scratch rewritten and read back every iteration */
}

void pp_forward_waits(const pa_function *f, bool *waits) {
  /* one pass in block order: the stores of loop blocks seen so far, each with its loop, and per
   * loop the narrowest of them: a load no wider than that spans none (spans_store), so an
   * unrolled body of equal-width loads and stores skips the search */
  const pa_node **stores = NULL;
  int *store_loop = NULL, n = 0, cap = 0;
  int *narrowest = malloc(sizeof(int) * (size_t)(f->n_loops > 0 ? f->n_loops : 1));
  for (int l = 0; narrowest && l < f->n_loops; l++) narrowest[l] = INT_MAX;
  for (int j = 0; j < f->n_blocks; j++) {
    const pa_block *b = &f->blocks[j];
    waits[j] = false;
    if (b->loop < 0) continue;
    for (int k = 0; k < b->n_nodes; k++) {
      const pa_node *x = &b->nodes[k];
      if (x->op == PA_OP_STORE && x->array > 0) {
        if (n == cap) {
          int more = cap ? 2 * cap : 16;
          const pa_node **s = realloc(stores, sizeof *stores * (size_t)more);
          if (s) stores = s;
          int *l = realloc(store_loop, sizeof(int) * (size_t)more);
          if (l) store_loop = l;
          if (!s || !l) continue; /* out of memory: later stores are not matched (loads wait less) */
          cap = more;
        }
        stores[n] = x, store_loop[n++] = b->loop;
        if (narrowest && b->loop < f->n_loops && x->bytes > 0 && x->bytes < narrowest[b->loop])
          narrowest[b->loop] = x->bytes;
      } else if (x->op == PA_OP_LOAD && x->array > 0 && x->bytes > 1 && !waits[j] &&
                 (!narrowest || b->loop >= f->n_loops || x->bytes > narrowest[b->loop])) {
        for (int m = 0; m < n && !waits[j]; m++)
          waits[j] = store_loop[m] == b->loop && spans_store(x, stores[m]);
      }
    }
  }
  free(stores), free(store_loop), free(narrowest);
}
