/* Accumulators through memory (+memchain): a loop whose blocks load an element, add to it and
 * store it back, where the next load of that element is one of the same iteration's later
 * blocks (mm512 #27: six guarded k steps into C[i, j]) or the next iteration's (an address the
 * loop does not move), runs the chain of those links one after another: each link the ops from
 * the load to the store plus the store-to-load forwarding the next load waits for. The task
 * graph has a block's memory edges only, so a block priced alone misses the chain (Zen 3: a
 * load-add-store chain through one float runs 12.05 cycles a link, docs/validation.md session
 * 20). Forwarding: the target's cpu.store_forward_cycles, else an L1 hit's latency. */
#include <stdint.h>
#include <stdlib.h>

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
 * on `from`. Data edges go forward in a block: passes over them until nothing grows, as
 * recurrence.c's chain_from does for its reduction ops. */
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
  uint64_t key; /* element_key of the element */
  double link;  /* cycles from the load to the store */
} rmw_site;

/* A hash of what same_element compares; 0 for a node that cannot be a site's (not a plain load
 * or store of a known element). */
static uint64_t element_key(const pa_node *n) {
  if (!n->is_memory || n->masked || (n->op != PA_OP_LOAD && n->op != PA_OP_STORE) || n->array <= 0 || !n->has_offset ||
      n->n_strides < 1)
    return 0;
  uint64_t h = 1469598103934665603ull;
  h = (h ^ (uint64_t)n->array) * 1099511628211ull;
  h = (h ^ (uint64_t)n->offset) * 1099511628211ull;
  h = (h ^ (uint64_t)n->bytes) * 1099511628211ull;
  for (int k = 0; k < n->n_strides; k++) h = (h ^ (uint64_t)n->strides[k]) * 1099511628211ull;
  return h | 1;
}

/* Whether two sites are of one element: their keys first, most sites differ there. */
static bool same_site(const rmw_site *x, const rmw_site *y, const pa_function *f) {
  return x->key == y->key && same_element(&f->blocks[x->block].nodes[x->store], &f->blocks[y->block].nodes[y->store]);
}

double pp_memory_chains(pp_predictor *pp, const pa_function *f, int loop, double load_latency, const double *executions) {
  if (loop < 0 || loop >= f->n_loops) return 0;
  const pa_loop *L = &f->loops[loop];
  double forward = pp->t->store_forward_cycles.value > 0 ? pp->t->store_forward_cycles.value : pp->l1_latency;
  int cap = 0, max_nodes = 1;
  bool stores = false; /* most loops have no store of a known element in their own blocks */
  for (int k = 0; k < L->n_blocks; k++) {
    const pa_block *b = &f->blocks[L->blocks[k]];
    if (b->loop != loop) continue;
    cap += b->n_nodes;
    if (b->n_nodes > max_nodes) max_nodes = b->n_nodes;
    for (int i = 0; i < b->n_nodes && !stores; i++) stores = b->nodes[i].op == PA_OP_STORE && element_key(&b->nodes[i]);
  }
  if (!stores) return 0;
  int slots = 16; /* the largest table a block needs */
  while (slots < 2 * max_nodes) slots *= 2;
  rmw_site *s = malloc(sizeof *s * (size_t)cap);
  pp_op *ops = malloc(sizeof *ops * (size_t)max_nodes);
  double *len = malloc(sizeof(double) * (size_t)max_nodes);
  uint64_t *keys = malloc(sizeof(uint64_t) * (size_t)max_nodes);
  /* per slot: a node of the element, its first load, its last store after that load */
  int *rep = malloc(sizeof(int) * (size_t)slots * 3), *first = rep + slots, *last = first + slots;
  int m = 0;
  /* the read-modify-write sites of the loop's own blocks, one per block and element: its first
   * load of the element and its last store of it after that load. Links inside a block are the
   * block's own (its memory edges, which its simulation prices); the chain here joins the
   * blocks, and the iterations. One pass with a table of the block's elements. */
  for (int k = 0; k < L->n_blocks; k++) {
    int j = L->blocks[k];
    const pa_block *b = &f->blocks[j];
    if (b->loop != loop || !(executions[j] > 0)) continue;
    int accesses = 0;
    for (int i = 0; i < b->n_nodes; i++) accesses += b->nodes[i].is_memory;
    if (accesses < 2) continue;
    int n_slots = 16;
    while (n_slots < 2 * accesses) n_slots *= 2;
    for (int q = 0; q < n_slots; q++) rep[q] = first[q] = last[q] = -1;
    for (int i = 0; i < b->n_nodes; i++) {
      uint64_t key = keys[i] = element_key(&b->nodes[i]);
      if (!key) continue;
      size_t q = key & (size_t)(n_slots - 1);
      /* the element's slot: the one whose node is the same element, or a free one */
      while (rep[q] >= 0 && !(keys[rep[q]] == key && same_element(&b->nodes[rep[q]], &b->nodes[i])))
        q = (q + 1) & (size_t)(n_slots - 1);
      if (rep[q] < 0) rep[q] = i;
      if (b->nodes[i].op == PA_OP_LOAD && first[q] < 0) first[q] = i;
      else if (b->nodes[i].op == PA_OP_STORE && first[q] >= 0) last[q] = i;
    }
    for (int q = 0; q < n_slots; q++)
      if (first[q] >= 0 && last[q] > first[q]) s[m++] = (rmw_site){j, first[q], last[q], keys[first[q]], -1};
  }
  /* chains: the sites of one element whose store depends on its load. The next load waits for
   * the previous store when the loop does not move the element (the next iteration's load), or
   * when more than one site runs in an iteration (a later block's load): the sites' executions
   * over the loop's iterations (guarded alternatives, one site an iteration, chain nothing).
   * Each iteration's last store forwards to no one then. A loop's chain is its longest
   * element's. The paths are found only for elements that can chain (most cannot). */
  double iterations = executions[L->header], best = 0;
  int legalized = -1; /* the block whose ops block_ops points to */
  const pp_op *block_ops = NULL;
  for (int a = 0; a < m; a++) {
    const pa_node *e = &f->blocks[s[a].block].nodes[s[a].store];
    bool first_site = true;
    for (int v = 0; v < a && first_site; v++) first_site = !same_site(&s[v], &s[a], f);
    if (!first_site) continue;
    bool moved = e->strides[0] != 0;
    double all_runs = 0;
    for (int v = a; v < m && moved; v++)
      if (same_site(&s[v], &s[a], f)) all_runs += executions[s[v].block];
    if (moved && !(all_runs > 1.5 * iterations)) continue; /* cannot chain whatever the paths */
    double cycles = 0, runs = 0;
    for (int v = a; v < m; v++) {
      if (!same_site(&s[v], &s[a], f)) continue;
      const pa_block *b = &f->blocks[s[v].block];
      if (legalized != s[v].block) block_ops = pp_block_ops(pp, f, s[v].block, load_latency, ops), legalized = s[v].block;
      s[v].link = path_cycles(b, block_ops, s[v].load, s[v].store, len);
      if (s[v].link < 0) continue; /* the store does not depend on the load */
      double x = executions[s[v].block];
      cycles += x * (s[v].link + forward);
      runs += x;
    }
    if (moved) { /* a chain within each iteration only */
      if (!(runs > 1.5 * iterations)) continue;
      cycles -= iterations * forward;
    }
    if (cycles > best) best = cycles;
  }
  free(s), free(ops), free(len), free(keys), free(rep);
  return best;
}
