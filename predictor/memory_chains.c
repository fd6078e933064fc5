/* Accumulators through memory (+memchain): a loop whose blocks load an element, add to it and
 * store it back, where the next load of that element is one of the same iteration's later
 * blocks (mm512 #27: six guarded k steps into C[i, j]) or the next iteration's (an address the
 * loop does not move), runs the chain of those links one after another: each link the ops from
 * the load to the store plus the store-to-load forwarding the next load waits for. The task
 * graph has a block's memory edges only, so a block priced alone misses the chain (Zen 3: a
 * load-add-store chain through one float runs 12.05 cycles a link, docs/validation.md session
 * 20). Forwarding: the target's cpu.store_forward_cycles, else an L1 hit's latency. */
#include <stdlib.h>
#include <string.h>

#include "internal.h"

/* Whether two memory nodes address the same bytes at every iteration: one object, the same
 * strides and offset, known. */
static bool same_element(const pa_node *a, const pa_node *b) {
  if (!a->has_offset || !b->has_offset || a->array <= 0 || a->array != b->array || a->offset != b->offset ||
      a->n_strides != b->n_strides || a->n_strides < 1 || a->bytes != b->bytes)
    return false;
  for (int k = 0; k < a->n_strides; k++)
    if (a->strides[k] != b->strides[k] || a->strides[k] == PA_STRIDE_UNKNOWN) return false;
  return true;
}

/* Longest path of data edges in block b from node `from` to node `to`, in cycles of the
 * legalized latencies of the nodes after `from` and before `to`; -1 when `to` does not depend
 * on `from`. Data edges go forward in a block: one pass in order. */
static double path_cycles(const pa_block *b, const pp_op *ops, int from, int to, double *len) {
  for (int i = 0; i < b->n_nodes; i++) len[i] = -1;
  len[from] = 0;
  for (int pass = 0, grew = 1; grew && pass < b->n_nodes; pass++) {
    grew = 0;
    for (int e = 0; e < b->n_edges; e++) {
      const pa_edge *ed = &b->edges[e];
      if (ed->kind != PA_EDGE_DATA || ed->src >= ed->dst || len[ed->src] < 0 || ed->dst > to) continue;
      double l = len[ed->src] + (ed->dst == to ? 0 : ops[ed->dst].latency);
      if (l > len[ed->dst] + 1e-9) len[ed->dst] = l, grew = 1;
    }
  }
  return len[to];
}

typedef struct {
  int block, load, store;
  double link; /* cycles from the load to the store */
} rmw_site;

double pp_memory_chains(pp_predictor *pp, const pa_function *f, int loop, double load_latency, const double *executions) {
  if (loop < 0 || loop >= f->n_loops) return 0;
  const pa_loop *L = &f->loops[loop];
  double forward = pp->t->store_forward_cycles.value > 0 ? pp->t->store_forward_cycles.value : pp->l1_latency;
  int cap = 0, max_nodes = 1;
  for (int k = 0; k < L->n_blocks; k++) {
    const pa_block *b = &f->blocks[L->blocks[k]];
    if (b->loop != loop) continue;
    cap += b->n_nodes;
    if (b->n_nodes > max_nodes) max_nodes = b->n_nodes;
  }
  if (cap == 0) return 0;
  rmw_site *s = malloc(sizeof *s * (size_t)cap);
  pp_op *ops = malloc(sizeof *ops * (size_t)max_nodes);
  double *len = malloc(sizeof(double) * (size_t)max_nodes);
  int m = 0;
  /* the read-modify-write sites of the loop's own blocks, one per block and element: its first
   * load of the element and its last store of it, when the store depends on the load. Links
   * inside a block are the block's own (its memory edges, which its simulation prices); the
   * chain here joins the blocks, and the iterations */
  for (int k = 0; k < L->n_blocks; k++) {
    int j = L->blocks[k];
    const pa_block *b = &f->blocks[j];
    if (b->loop != loop || !(executions[j] > 0)) continue;
    bool legalized = false;
    for (int ld = 0; ld < b->n_nodes; ld++) {
      const pa_node *l = &b->nodes[ld];
      if (l->op != PA_OP_LOAD || !l->is_memory || l->masked || l->array <= 0 || !l->has_offset) continue;
      bool seen = false; /* an earlier load of the element in this block: its site */
      for (int i = 0; i < ld && !seen; i++)
        seen = b->nodes[i].op == PA_OP_LOAD && b->nodes[i].is_memory && same_element(&b->nodes[i], l);
      if (seen) continue;
      int st = -1;
      for (int i = b->n_nodes - 1; i > ld && st < 0; i--)
        if (b->nodes[i].op == PA_OP_STORE && b->nodes[i].is_memory && !b->nodes[i].masked && same_element(&b->nodes[i], l))
          st = i;
      if (st < 0) continue;
      if (!legalized) pp_legalize_block(pp, b, load_latency, ops), legalized = true;
      double c = path_cycles(b, ops, ld, st, len);
      if (c >= 0) s[m++] = (rmw_site){j, ld, st, c};
    }
  }
  /* chains: the sites of one element. The next load waits for the previous store when the
   * loop does not move the element (the next iteration's load), or when more than one site runs
   * in an iteration (a later block's load): the sites' executions over the loop's iterations
   * (guarded alternatives, one site an iteration, chain nothing). Each iteration's last store
   * forwards to no one then. A loop's chain is its longest element's. */
  double iterations = executions[L->header], best = 0;
  for (int a = 0; a < m; a++) {
    const pa_node *e = &f->blocks[s[a].block].nodes[s[a].store];
    bool first = true;
    for (int v = 0; v < a && first; v++) first = !same_element(&f->blocks[s[v].block].nodes[s[v].store], e);
    if (!first) continue;
    double cycles = 0, runs = 0;
    for (int v = a; v < m; v++) {
      if (!same_element(&f->blocks[s[v].block].nodes[s[v].store], e)) continue;
      double x = executions[s[v].block];
      cycles += x * (s[v].link + forward);
      runs += x;
    }
    if (e->strides[0] != 0) { /* moved by the loop: a chain within each iteration only */
      if (!(runs > 1.5 * iterations)) continue;
      cycles -= iterations * forward;
    }
    if (cycles > best) best = cycles;
  }
  free(s), free(ops), free(len);
  return best;
}
