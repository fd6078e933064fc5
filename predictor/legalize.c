/* Legalization: each task-graph node becomes the target's machine operations. Vector types
 * are split (or widened) to the native vector width, so one profile serves 512-, 256- and
 * 128-bit targets; a class the target lacks falls back to the nearest one (noted). */
#include <assert.h>
#include <math.h>
#include <string.h>

#include "internal.h"

ptg_elem pp_elem_of(const char *name) {
  if (!name) return PTG_ELEM_I64;
  /* Every node of every prediction asks: the common names without the table's strcmp scan. */
  if ((name[0] == 'f' || name[0] == 'i') && name[1] && name[2] && !name[3]) {
    bool fl = name[0] == 'f';
    if (name[1] == '3' && name[2] == '2') return fl ? PTG_ELEM_F32 : PTG_ELEM_I32;
    if (name[1] == '6' && name[2] == '4') return fl ? PTG_ELEM_F64 : PTG_ELEM_I64;
  }
  if (name[0] == 'p' && strcmp(name, "ptr") == 0) return PTG_ELEM_I64;
  int e = ptg_elem_from_name(name);
  if (e >= 0) return (ptg_elem)e;
  if (strcmp(name, "i1") == 0) return PTG_ELEM_I8;
  return PTG_ELEM_I64; /* ptr, void, odd integer widths: address-sized integer ops */
}

static void note_fallback(pp_predictor *pp, ptg_op op, ptg_elem elem, int bits, const ptg_inst_cost *c) {
  if (op == PTG_OP_OTHER || c->fallback < 2) return;
  if (c->fallback == 2 && c->row && c->row->vector_bits >= bits) return; /* widening, not a fallback */
  const char *to = c->row ? pt_sprintf(pp->arena, "%s.%s.%d", ptg_op_name(c->row->op), ptg_elem_name(c->row->elem),
                                       c->row->vector_bits)
                          : "the 1-cycle default";
  const char *msg = pt_sprintf(pp->arena, "%s.%s.%d -> %s (rule %d%s)", ptg_op_name(op), ptg_elem_name(elem), bits, to,
                               c->fallback, c->split > 1 ? pt_sprintf(pp->arena, ", split %d", c->split) : "");
  if (pp->n_fallbacks == pp->cap_fallbacks) {
    int cap = pp->cap_fallbacks ? 2 * pp->cap_fallbacks : 16;
    const char **a = pt_alloc(pp->arena, sizeof *a * cap);
    if (pp->n_fallbacks) memcpy(a, pp->fallbacks, sizeof *a * pp->n_fallbacks);
    pp->fallbacks = a, pp->cap_fallbacks = cap;
  }
  pp->fallbacks[pp->n_fallbacks++] = msg;
}

static int unit_index(pp_predictor *pp, const char *name, ptg_op op) {
  char pseudo[48];
  if (!name) { /* a row with no unit class competes only with its own class */
    snprintf(pseudo, sizeof pseudo, "(%s)", ptg_op_name(op));
    name = pseudo;
  }
  for (int i = 0; i < pp->n_units; i++)
    if (strcmp(pp->unit_names[i], name) == 0) return i;
  if (pp->n_units == PP_MAX_UNITS) return PP_MAX_UNITS - 1;
  int i = pp->n_units++;
  pp->unit_names[i] = pt_strdup(pp->arena, name);
  pp->unit_pipes[i] = 1;
  pp->unit_first_pipe[i] = pp->n_pipes++;
  return i;
}

ptg_inst_cost pp_inst_cost(pp_predictor *pp, ptg_op op, ptg_elem elem, int bits, int *unit) {
  unsigned h = ((unsigned)op * 31u + (unsigned)elem) * 2654435761u ^ (unsigned)bits * 40503u;
  for (unsigned k = 0; k < PP_COST_CACHE; k++) {
    pp_cost_slot *s = &pp->cache[(h + k) & (PP_COST_CACHE - 1)];
    if (s->used && s->op == (int)op && s->elem == (int)elem && s->bits == bits) {
      *unit = s->unit;
      return s->cost;
    }
    if (!s->used) {
      s->cost = ptg_target_inst(pp->t, op, elem, bits);
      if (!(s->cost.latency >= 0)) s->cost.latency = 1;
      if (!(s->cost.recip_throughput > 0)) s->cost.recip_throughput = 1;
      s->unit = unit_index(pp, s->cost.unit, op);
      s->used = true, s->op = op, s->elem = elem, s->bits = bits;
      note_fallback(pp, op, elem, bits, &s->cost);
      *unit = s->unit;
      return s->cost;
    }
  }
  *unit = unit_index(pp, NULL, op); /* cache full: compute uncached */
  return ptg_target_inst(pp->t, op, elem, bits);
}

/* Instructions that generate no machine operation: SSA plumbing, address arithmetic folded
 * into addressing modes, and casts that only rename a register. */
static bool folded(const char *opcode) {
  static const char *const names[] = {"phi", "getelementptr", "bitcast", "ptrtoint", "inttoptr", "addrspacecast",
                                      "trunc", "zext", "freeze", "ret", "unreachable", "alloca", "extractvalue",
                                      "insertvalue", "llvm.lifetime.start.p0", "llvm.lifetime.end.p0"};
  switch (opcode[0]) { /* most nodes are arithmetic: leave them after one comparison */
  case 'p': case 'g': case 'b': case 'i': case 'a': case 't': case 'z': case 'f': case 'r': case 'u': case 'e':
  case 'l': break;
  default: return false;
  }
  for (size_t i = 0; i < PT_ARRAY_LEN(names); i++) /* two letters before the call: fadd is not freeze */
    if (opcode[0] == names[i][0] && opcode[1] == names[i][1] && strcmp(opcode, names[i]) == 0) return true;
  return false;
}

/* A phi of a vector whose lane count is not a power of two and that does not fit one native
 * register: a value that lives across blocks is assigned registers by LLVM's
 * TargetLoweringBase::getVectorTypeBreakdown, which only splits power-of-two lane counts and
 * widens only up to one legal register; any other vector crosses the block edge as scalars,
 * so each iteration takes every lane out (extract) and puts it back (insert): two 128-bit
 * shuffles per lane. Seen on Zen 5 with LLVM 19: <20|24|40|48|56 x float> accumulators cost
 * 2.25 shuffles per lane per iteration, <16|32|64 x float> none, <14 x float> (widened) 8 in
 * all (docs/validation.md, session 4). */
static bool crosses_as_scalars(const pp_predictor *pp, const pa_node *n) {
  return n->lanes > 2 && (n->lanes & (n->lanes - 1)) != 0 && n->bits > pp->native_bits && n->opcode &&
         pp_is_phi(n);
}

static pp_op legalize_as(pp_predictor *pp, ptg_op op, const pa_node *n, int max_parts) {
  pp_op r = {0};
  r.unit = -1;
  if (crosses_as_scalars(pp, n)) {
    int unit;
    ptg_inst_cost c = pp_inst_cost(pp, PTG_OP_SHUFFLE, pp_elem_of(n->elem), 128, &unit);
    r.unit = unit;
    r.parts = 2 * n->lanes;
    r.latency = c.latency;
    r.occupancy = c.recip_throughput * pp->unit_pipes[unit];
    return r;
  }
  if (folded(n->opcode ? n->opcode : "")) return r;
  ptg_elem elem = pp_elem_of(n->elem);
  int bits = n->bits > 0 ? n->bits : 64;
  int parts = 1, row_bits = bits;
  if (n->lanes > 1 && bits > pp->native_bits) {
    parts = (bits + pp->native_bits - 1) / pp->native_bits;
    row_bits = pp->native_bits;
  } else if (n->lanes <= 1) {
    row_bits = ptg_elem_bits(elem); /* scalars: the element's own width */
  }
  if (max_parts > 0 && parts > max_parts) parts = max_parts;
  int unit;
  ptg_inst_cost c = pp_inst_cost(pp, op, elem, row_bits, &unit);
  int split = c.split > 0 ? c.split : 1;
  r.unit = unit;
  r.parts = parts * split;
  r.latency = c.latency;
  r.occupancy = c.recip_throughput / split * pp->unit_pipes[unit];
  r.is_load = n->is_memory && (op == PTG_OP_LOAD || op == PTG_OP_MASKLOAD || op == PTG_OP_GATHER || op == PTG_OP_GATHER_PAGE) &&
              n->op != PA_OP_STORE &&
              !(n->op == PA_OP_GATHER && strstr(n->opcode, "scatter"));
  r.is_store = n->is_memory && !r.is_load;
  if (n->is_memory) r.lines = n->bytes > 0 ? (n->bytes + PA_LINE_BYTES - 1) / PA_LINE_BYTES : 1;
  if (n->op == PA_OP_STORE ||
      (n->op == PA_OP_OTHER && (n->opcode[0] == 'b' || n->opcode[0] == 's') &&
       (strcmp(n->opcode, "br") == 0 || strcmp(n->opcode, "switch") == 0)))
    r.latency = 0; /* no value anyone waits for */
  return r;
}

/* The analyzer's class table is the targets' up to "other"; the targets' masked classes
 * after it are chosen from the node's mask fields (pp_node_class). */
static_assert((int)PA_OP_COUNT == (int)PTG_OP_OTHER + 1, "op class tables differ");

ptg_op pp_node_class(const pa_node *n) {
  if (n->op == PA_OP_GATHER) {
    /* scatters have their own rows, and lanes a page or more apart theirs (profiles written
     * before lane steps were recorded read 0: the one-line rows) */
    bool scatter = n->opcode && strncmp(n->opcode, "llvm.masked.scatter.", 20) == 0;
    bool pages = n->lane_step >= 4096 || n->lane_step <= -4096;
    return scatter ? (pages ? PTG_OP_SCATTER_PAGE : PTG_OP_SCATTER) : (pages ? PTG_OP_GATHER_PAGE : PTG_OP_GATHER);
  }
  if (n->op != PA_OP_LOAD && n->op != PA_OP_STORE) return (ptg_op)n->op;
  /* llvm.masked.load/store with a mask not known to be all on: the masked row. A constant
   * full mask is an ordinary load or store to the backend. Profiles written before the mask
   * fields existed name the intrinsic only: their masks count as unknown. */
  bool by_name = n->opcode && n->opcode[0] == 'l' && n->opcode[1] == 'l' && /* not "load" */
                 (strncmp(n->opcode, "llvm.masked.load.", 17) == 0 || strncmp(n->opcode, "llvm.masked.store.", 18) == 0);
  bool full = n->masked && n->mask_lanes >= 0 && n->mask_lanes >= n->lanes;
  if ((n->masked || by_name) && !full) return n->op == PA_OP_LOAD ? PTG_OP_MASKLOAD : PTG_OP_MASKSTORE;
  return (ptg_op)n->op;
}

/* Lanes of a gather or scatter that L1 cannot hold at once: L1's set index is the line number
 * modulo its sets (within a page: virtual bits), so lanes `lane_step` bytes apart land on a
 * fixed few sets (50176 bytes apart, 784 lines: every 4th of 64 sets); the lanes of a set that
 * receives more lines than it has ways are served by L2 every time the lanes come back. The
 * gather rows are measured on lanes that stay in L1 (microbench/kernels.c). 0 when L1 spans
 * more than a page (set bits from the physical frame) or the step is below a line. */
static int lanes_in_crowded_sets(const pp_predictor *pp, const pa_node *n) {
  int64_t step = n->lane_step < 0 ? -n->lane_step : n->lane_step;
  const ptg_cache *c = ptg_target_cache(pp->t, 1);
  if (step < PA_LINE_BYTES || n->lanes < 2 || !c || c->associativity < 1) return 0;
  int64_t line = c->line_bytes > 0 ? c->line_bytes : PA_LINE_BYTES, sets = c->size_bytes / line / c->associativity;
  if (sets < 1 || sets * line > 4096 || sets > 64) return 0;
  int per_set[64] = {0}, crowded = 0;
  for (int l = 0; l < n->lanes; l++) per_set[(l * step / line) % sets]++;
  for (int64_t k = 0; k < sets; k++)
    if (per_set[k] > c->associativity) crowded += per_set[k];
  return crowded;
}

/* Cycles a gather or scatter holds its unit for `lanes` lanes that miss L1: each waits for L2,
 * as many at once as L1's misses in flight (L2's overlapping_misses, else memory's). */
static double lane_fill_cycles(const pp_predictor *pp, double lanes) {
  const ptg_cache *l2 = ptg_target_cache(pp->t, 2);
  double inflight = l2 && l2->overlapping_misses.value >= 1 ? l2->overlapping_misses.value : pp->mlp;
  double extra = lanes * (pp_level_latency(pp->t, 2) - pp_level_latency(pp->t, 1)) / inflight;
  return extra > 0 ? extra : 0;
}

pp_op pp_legalize_node(pp_predictor *pp, const pa_node *n) {
  ptg_op op = pp_node_class(n);
  if (!pp->o.lanes && (op == PTG_OP_SCATTER || op == PTG_OP_GATHER_PAGE || op == PTG_OP_SCATTER_PAGE)) op = PTG_OP_GATHER;
  pp_op r = legalize_as(pp, op, n, 0);
  /* each crowded lane waits for L2; the gather unit is held meanwhile (conv_r50_1 #20: 64 lanes
   * 50176 bytes apart in 4 of 64 sets, measured 2.3x the prediction; docs/validation.md) */
  int crowded = pp->o.lanes && n->op == PA_OP_GATHER ? lanes_in_crowded_sets(pp, n) : 0;
  if (crowded > 0 && r.parts > 0) r.occupancy += lane_fill_cycles(pp, crowded) / r.parts;
  return r;
}

void pp_charge_missing_lanes(pp_predictor *pp, const pa_node *n, double missing, pp_op *op) {
  double crowded = pp->o.lanes && n->op == PA_OP_GATHER ? lanes_in_crowded_sets(pp, n) : 0;
  if (missing > crowded && op->parts > 0) op->occupancy += lane_fill_cycles(pp, missing - crowded) / op->parts;
}

static bool is_float(const char *elem) { return elem && (elem[0] == 'f' || elem[0] == 'b'); }

/* Classes whose x86 instructions take a memory operand in place of a register source. */
static bool takes_memory_operand(pa_opclass op) {
  return op == PA_OP_ADD || op == PA_OP_SUB || op == PA_OP_MUL || op == PA_OP_FMA || op == PA_OP_DIV ||
         op == PA_OP_MINMAX || op == PA_OP_LOGIC || op == PA_OP_CMPSEL;
}

/* +cmpbr and +fold on x86: an instruction with a memory operand is one macro-op, and CMP/TEST
 * followed by a conditional jump fuse into one (AMD SOG 57647 for Zen 4, 56305 for Zen 2:
 * "branch fusion"; Intel 64 and IA-32 Optimization Reference Manual: micro- and macro-fusion,
 * Skylake), and dispatch counts macro-ops (the published files' issue widths; the characterizer's
 * kernels count their loop's compare and branch as one, microbench/units.c). So a load whose only
 * user is an arithmetic op of its width (one per op: one memory operand), and an integer compare
 * whose only user is the block's branch, keep their unit and latency but take no issue slot.
 * Which operand of a non-commutative op may come from memory is not in the task graph: any is. */
static void fuse_macro_ops(const pp_predictor *pp, const pa_block *b, const int *consumers, const int *consumer,
                           pp_op *ops) {
  int n = b->n_nodes;
  bool has_operand[n > 0 ? n : 1];
  memset(has_operand, 0, sizeof has_operand);
  for (int i = 0; i < n; i++) {
    const pa_node *nd = &b->nodes[i];
    if (consumers[i] != 1 || ops[i].parts == 0 || !nd->opcode) continue;
    int u = consumer[i];
    /* a float mul contracted into its only user, an add: the load feeds that FMA */
    if (ops[u].parts == 0 && b->nodes[u].op == PA_OP_MUL && consumers[u] == 1) u = consumer[u];
    const pa_node *user = &b->nodes[u];
    if (pp->fold_loads && ops[i].is_load && pp_node_class(nd) == PTG_OP_LOAD) {
      if (!takes_memory_operand(user->op) || has_operand[u] || ops[u].parts != ops[i].parts ||
          user->lanes != nd->lanes)
        continue;
      ops[i].fused = has_operand[u] = true;
    } else if (pp->fuse_branch && nd->op == PA_OP_CMPSEL && nd->lanes <= 1 && strcmp(nd->opcode, "icmp") == 0 &&
               user->opcode && strcmp(user->opcode, "br") == 0) {
      ops[i].fused = true;
    }
  }
}

void pp_legalize_block(pp_predictor *pp, const pa_block *b, double load_latency, pp_op *ops) {
  int n = b->n_nodes;
  int consumers[n > 0 ? n : 1], consumer[n > 0 ? n : 1], producers[n > 0 ? n : 1], producer[n > 0 ? n : 1];
  for (int i = 0; i < n; i++) consumers[i] = producers[i] = 0, consumer[i] = producer[i] = -1;
  for (int e = 0; e < b->n_edges; e++) {
    const pa_edge *ed = &b->edges[e];
    if (ed->kind != PA_EDGE_DATA) continue;
    consumers[ed->src]++, consumer[ed->src] = ed->dst;
    producers[ed->dst]++, producer[ed->dst] = ed->src;
  }
  bool done[n > 0 ? n : 1];
  memset(done, 0, sizeof done);
  /* A splat: insertelement of a scalar into lane 0, then a shufflevector broadcast. One
   * broadcast (reused for every native-width part); from a loaded scalar, a broadcast load. */
  for (int i = 0; i < n; i++) {
    const pa_node *nd = &b->nodes[i];
    if (producers[i] != 1 || !nd->opcode || nd->opcode[0] != 's' || strcmp(nd->opcode, "shufflevector") != 0) continue;
    int p = producer[i];
    const pa_node *ins = &b->nodes[p];
    if (!ins->opcode || strcmp(ins->opcode, "insertelement") != 0 || consumers[p] != 1 || producers[p] != 1 || done[p])
      continue;
    int s = producer[p];
    const pa_node *sc = &b->nodes[s];
    memset(&ops[p], 0, sizeof ops[p]);
    ops[p].unit = -1;
    done[p] = true;
    if (sc->op == PA_OP_LOAD && sc->lanes == 1 && consumers[s] == 1 && !done[s]) {
      pa_node wide = *sc;
      wide.lanes = nd->lanes, wide.bits = nd->bits < pp->native_bits ? nd->bits : pp->native_bits;
      ops[s] = legalize_as(pp, PTG_OP_LOAD, &wide, 1);
      ops[s].lines = 1;
      ops[s].latency = load_latency;
      memset(&ops[i], 0, sizeof ops[i]);
      ops[i].unit = -1;
      done[s] = done[i] = true;
    } else {
      ops[i] = legalize_as(pp, PTG_OP_SHUFFLE, nd, 1);
      done[i] = true;
    }
  }
  for (int i = 0; i < n; i++) {
    if (done[i]) continue;
    const pa_node *nd = &b->nodes[i];
    /* A float multiply whose only use is an add: the backend contracts the pair into an FMA
     * (the lowering asks for fp-contract=fast). */
    if (nd->op == PA_OP_MUL && is_float(nd->elem) && consumers[i] == 1) {
      int j = consumer[i];
      const pa_node *a = &b->nodes[j];
      if ((a->op == PA_OP_ADD || a->op == PA_OP_SUB) && a->lanes == nd->lanes && a->elem && nd->elem &&
          strcmp(a->elem, nd->elem) == 0 && !done[j]) {
        int u;
        ptg_inst_cost fc = pp_inst_cost(pp, PTG_OP_FMA, pp_elem_of(nd->elem), 32, &u);
        if (fc.fallback <= 2) {
          memset(&ops[i], 0, sizeof ops[i]);
          ops[i].unit = -1;
          ops[j] = legalize_as(pp, PTG_OP_FMA, a, 0);
          done[i] = done[j] = true;
          continue;
        }
      }
    }
    ops[i] = pp_legalize_node(pp, nd);
    if (ops[i].is_load) ops[i].latency = load_latency;
    done[i] = true;
  }
  if (pp->fuse_branch || pp->fold_loads) fuse_macro_ops(pp, b, consumers, consumer, ops);
}

const pp_op *pp_block_ops(pp_predictor *pp, const pa_function *f, int j, double load_latency, pp_op *scratch) {
  if (pp->kept_f == f && pp->kept_latency == load_latency && pp->kept_from[j] >= 0)
    return pp->kept + pp->kept_base[pp->kept_from[j]];
  pp_legalize_block(pp, &f->blocks[j], load_latency, scratch);
  return scratch;
}
