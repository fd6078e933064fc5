/* Recurrences through several blocks of a loop (the profile's carried_edges): an accumulator
 * whose header phi is updated in another block of the loop bounds the loop at the latency of
 * its chain of dependent adds per iteration, however many independent operations surround it.
 * Single-block loops carry theirs as block edges, which the steady-state simulation sees. */
#include <stdlib.h>
#include <string.h>

#include "internal.h"

/* The operations an accumulator chain goes through: float adds, subtracts, FMAs (a multiply
 * fused into its add keeps the add's node) and min/max (pooling), not folded away. */
static bool reduction_op(const pa_node *n, const pp_op *o) {
  bool fp = n->elem && (n->elem[0] == 'f' || n->elem[0] == 'b');
  return fp && o->parts > 0 &&
         (n->op == PA_OP_ADD || n->op == PA_OP_SUB || n->op == PA_OP_FMA || n->op == PA_OP_MINMAX);
}

/* the first letter before the call: most nodes are not phis */

/* Longest chain of reduction ops in block b that starts at node `from` (forward, tail) or
 * ends at it (backward, head), in cycles of the legalized latencies. Data edges go forward in
 * a block, so one pass over the nodes in order (or reverse order) with the edges by source. */
static double chain_from(const pa_block *b, const pp_op *ops, int from, bool forward, double *len) {
  int n = b->n_nodes;
  for (int i = 0; i < n; i++) len[i] = 0;
  if (from < 0 || from >= n || !reduction_op(&b->nodes[from], &ops[from])) return 0;
  len[from] = ops[from].latency;
  double best = len[from];
  /* few edges per block: scan them per pass until nothing grows (a forward DAG settles in
   * as many passes as the chain has links; bounded by n) */
  for (int pass = 0, grew = 1; grew && pass < n; pass++) {
    grew = 0;
    for (int e = 0; e < b->n_edges; e++) {
      const pa_edge *ed = &b->edges[e];
      if (ed->kind != PA_EDGE_DATA || ed->src >= ed->dst) continue;
      int s = forward ? ed->src : ed->dst, t = forward ? ed->dst : ed->src;
      if (len[s] <= 0 || !reduction_op(&b->nodes[t], &ops[t])) continue;
      double l = len[s] + ops[t].latency;
      if (l > len[t] + 1e-9) len[t] = l, grew = 1, best = l > best ? l : best;
    }
  }
  return best;
}

double pp_carried_recurrence(pp_predictor *pp, const pa_function *f, int loop, double load_latency,
                             const double *executions) {
  if (loop < 0 || loop >= f->n_loops || f->n_carried == 0) return 0;
  int header = f->loops[loop].header;
  int max_nodes = 1;
  for (int c = 0; c < f->n_carried; c++) {
    const pa_carried_edge *ce = &f->carried[c];
    if (ce->phi_block != header) continue;
    if (f->blocks[ce->dst_block].n_nodes > max_nodes) max_nodes = f->blocks[ce->dst_block].n_nodes;
    if (f->blocks[ce->src_block].n_nodes > max_nodes) max_nodes = f->blocks[ce->src_block].n_nodes;
  }
  pp_op *dst_ops = NULL, *src_ops = NULL; /* allocated at the first float chain: most loops carry none */
  double *len = NULL;
  int dst_have = -1, src_have = -1; /* the blocks whose ops dst / src point to */
  const pp_op *dst = NULL, *src_legal = NULL;
  double best = 0;
  for (int c = 0; c < f->n_carried; c++) {
    const pa_carried_edge *ce = &f->carried[c];
    if (ce->phi_block != header) continue;
    const pa_block *pb = &f->blocks[ce->phi_block], *db = &f->blocks[ce->dst_block], *sb = &f->blocks[ce->src_block];
    if (ce->phi_node >= pb->n_nodes || ce->dst_node >= db->n_nodes || ce->src_node >= sb->n_nodes) continue;
    const pa_node *phi = &pb->nodes[ce->phi_node], *src = &sb->nodes[ce->src_node];
    if (!phi->elem || !(phi->elem[0] == 'f' || phi->elem[0] == 'b')) continue; /* inductions: 1-cycle adds */
    /* a chain that enters an inner loop (its user or its source in a block of a deeper loop)
     * is that loop's recurrence, which its own steady state carries */
    if (db->loop != loop || sb->loop != loop || !(executions[ce->dst_block] > 0)) continue;
    if (!len) {
      dst_ops = malloc(sizeof *dst_ops * (size_t)max_nodes), src_ops = malloc(sizeof *src_ops * (size_t)max_nodes);
      len = malloc(sizeof(double) * (size_t)max_nodes);
    }
    if (dst_have != ce->dst_block) dst = pp_block_ops(pp, f, ce->dst_block, load_latency, dst_ops), dst_have = ce->dst_block;
    double chain = chain_from(db, dst, ce->dst_node, true, len);
    if (chain <= 0) continue;
    /* in another block, the chain goes on into the value the phi gets back, unless that value
     * is a merge (a phi of a guarded update), which costs nothing */
    if (ce->src_block != ce->dst_block && !pp_is_phi(src)) {
      if (src_have != ce->src_block)
        src_legal = pp_block_ops(pp, f, ce->src_block, load_latency, src_ops), src_have = ce->src_block;
      chain += chain_from(sb, src_legal, ce->src_node, false, len);
    }
    /* the chain runs when its user's block does: a guarded path taken rarely bounds little */
    if (chain * executions[ce->dst_block] > best) best = chain * executions[ce->dst_block];
  }
  free(dst_ops), free(src_ops), free(len);
  return best;
}

bool pp_phi_reloads(const pa_function *f, int loop, int node) {
  int header = f->loops[loop].header;
  bool any = false;
  for (int c = 0; c < f->n_carried; c++) {
    const pa_carried_edge *ce = &f->carried[c];
    if (ce->phi_block != header || ce->phi_node != node || ce->src_block < 0 || ce->src_block >= f->n_blocks) continue;
    const pa_block *sb = &f->blocks[ce->src_block];
    if (ce->src_node < 0 || ce->src_node >= sb->n_nodes) return false;
    const pa_node *src = &sb->nodes[ce->src_node];
    bool moving = src->n_strides >= 1 && src->strides[0] != 0 && src->strides[0] != PA_STRIDE_UNKNOWN;
    if (src->op != PA_OP_LOAD || !src->is_memory || !moving) return false;
    any = true;
  }
  return any;
}


int pp_accumulating_phis(const pa_function *f, int loop) {
  if (loop < 0 || loop >= f->n_loops || f->n_carried == 0) return -1;
  int header = f->loops[loop].header, k = 0;
  const pa_block *h = &f->blocks[header];
  for (int i = 0; i < h->n_nodes; i++) {
    const pa_node *phi = &h->nodes[i];
    if (!pp_is_phi(phi) || !phi->elem || !(phi->elem[0] == 'f' || phi->elem[0] == 'b') || pp_phi_reloads(f, loop, i))
      continue;
    bool accumulates = false;
    for (int c = 0; c < f->n_carried && !accumulates; c++) {
      const pa_carried_edge *ce = &f->carried[c];
      if (ce->phi_block != header || ce->phi_node != i) continue;
      const pa_block *db = &f->blocks[ce->dst_block];
      if (db->loop != loop || ce->dst_node >= db->n_nodes) continue;
      const pa_node *u = &db->nodes[ce->dst_node];
      accumulates = u->elem && (u->elem[0] == 'f' || u->elem[0] == 'b') &&
                    (u->op == PA_OP_ADD || u->op == PA_OP_SUB || u->op == PA_OP_FMA || u->op == PA_OP_MINMAX);
    }
    k += accumulates;
  }
  return k;
}

static bool fp_elem(const pa_node *n) { return n->elem && (n->elem[0] == 'f' || n->elem[0] == 'b'); }

int pp_reduction_root(const pa_function *f, int loop) {
  if (loop < 0 || loop >= f->n_loops || f->n_carried == 0) return -1;
  /* the accumulating phis of loop's header (nodes of it), then of each enclosing header that
   * gives one of them its initial value */
  int h = f->loops[loop].header, n = f->blocks[h].n_nodes, root = loop;
  bool *acc = calloc((size_t)(n > 0 ? n : 1), sizeof(bool)), any = false;
  for (int c = 0; c < f->n_carried; c++) {
    const pa_carried_edge *ce = &f->carried[c];
    if (ce->phi_block != h || ce->phi_node >= n || f->blocks[ce->dst_block].loop != loop) continue;
    const pa_node *u = &f->blocks[ce->dst_block].nodes[ce->dst_node];
    if (fp_elem(&f->blocks[h].nodes[ce->phi_node]) && fp_elem(u) &&
        (u->op == PA_OP_ADD || u->op == PA_OP_SUB || u->op == PA_OP_FMA || u->op == PA_OP_MINMAX))
      acc[ce->phi_node] = any = true;
  }
  for (int p = f->loops[loop].parent; any && p >= 0; p = f->loops[p].parent) {
    int ph = f->loops[p].header, pn = f->blocks[ph].n_nodes;
    bool *up = calloc((size_t)(pn > 0 ? pn : 1), sizeof(bool));
    any = false;
    for (int c = 0; c < f->n_carried; c++) {
      const pa_carried_edge *ce = &f->carried[c];
      if (ce->phi_block != ph || ce->dst_block != h || ce->phi_node >= pn || ce->dst_node >= n) continue;
      if (acc[ce->dst_node] && fp_elem(&f->blocks[ph].nodes[ce->phi_node])) up[ce->phi_node] = any = true;
    }
    free(acc);
    acc = up, h = ph, n = pn;
    if (any) root = p;
  }
  free(acc);
  return root;
}
