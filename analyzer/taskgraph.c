/* Per-block task graphs: one node per instruction (operation class, element type, vector
 * width as written in the IR, memory or compute) with data edges, store->load/store memory
 * edges on the same address value, and loop-carried edges into header phis; plus the static
 * features (instruction mix, memory traffic, vector share) the predictor and models read. */
#include <stdlib.h>
#include <string.h>

#include "internal.h"

static const char *const opclass_names[] = {
#define X(name, text) text,
    PA_OPCLASSES(X)
#undef X
};
_Static_assert(sizeof opclass_names / sizeof opclass_names[0] == PA_OP_COUNT, "one name per op class");

const char *pa_opclass_name(pa_opclass op) { return op < PA_OP_COUNT ? opclass_names[op] : "?"; }

int pa_opclass_from_name(const char *name) {
  for (int i = 0; i < PA_OP_COUNT; i++)
    if (strcmp(opclass_names[i], name) == 0) return i;
  return -1;
}

const char *pa_edge_kind_name(pa_edge_kind k) {
  return k == PA_EDGE_DATA ? "data" : k == PA_EDGE_MEMORY ? "memory" : "loop";
}

const char *pa_type_elem(LLVMTypeRef t, int *lanes, int *bits) {
  *lanes = 1;
  LLVMTypeKind k = LLVMGetTypeKind(t);
  if (k == LLVMVectorTypeKind || k == LLVMScalableVectorTypeKind) {
    *lanes = (int)LLVMGetVectorSize(t);
    t = LLVMGetElementType(t);
    k = LLVMGetTypeKind(t);
  }
  int eb;
  const char *name;
  switch (k) {
  case LLVMIntegerTypeKind: {
    eb = (int)LLVMGetIntTypeWidth(t);
    static const char *const ints[] = {"i1", "i8", "i16", "i32", "i64", "i128"};
    int w[] = {1, 8, 16, 32, 64, 128};
    name = "iN";
    for (size_t i = 0; i < PT_ARRAY_LEN(w); i++)
      if (w[i] == eb) name = ints[i];
    break;
  }
  case LLVMHalfTypeKind: eb = 16, name = "f16"; break;
  case LLVMBFloatTypeKind: eb = 16, name = "bf16"; break;
  case LLVMFloatTypeKind: eb = 32, name = "f32"; break;
  case LLVMDoubleTypeKind: eb = 64, name = "f64"; break;
  case LLVMPointerTypeKind: eb = 64, name = "ptr"; break;
  case LLVMVoidTypeKind: eb = 0, name = "void"; break;
  default: eb = 0, name = "other"; break;
  }
  *bits = eb * *lanes;
  return name;
}

static bool starts(const char *s, const char *prefix) { return strncmp(s, prefix, strlen(prefix)) == 0; }

/* Intrinsic calls by name prefix; anything else a call does is "other". */
static const struct {
  const char *prefix;
  pa_opclass op;
  bool memory;
} intrinsics[] = {
    {"llvm.fmuladd.", PA_OP_FMA, false},        {"llvm.fma.", PA_OP_FMA, false},
    {"llvm.sqrt.", PA_OP_SQRT, false},          {"llvm.minnum.", PA_OP_MINMAX, false},
    {"llvm.maxnum.", PA_OP_MINMAX, false},      {"llvm.minimum.", PA_OP_MINMAX, false},
    {"llvm.maximum.", PA_OP_MINMAX, false},     {"llvm.smin.", PA_OP_MINMAX, false},
    {"llvm.smax.", PA_OP_MINMAX, false},        {"llvm.umin.", PA_OP_MINMAX, false},
    {"llvm.umax.", PA_OP_MINMAX, false},        {"llvm.fabs.", PA_OP_LOGIC, false},
    {"llvm.copysign.", PA_OP_LOGIC, false},     {"llvm.masked.gather.", PA_OP_GATHER, true},
    {"llvm.masked.scatter.", PA_OP_GATHER, true}, {"llvm.masked.load.", PA_OP_LOAD, true},
    {"llvm.masked.store.", PA_OP_STORE, true},  {"llvm.memcpy.", PA_OP_OTHER, true},
    {"llvm.memmove.", PA_OP_OTHER, true},       {"llvm.memset.", PA_OP_OTHER, true},
};

static pa_opclass classify(LLVMOpcode op) {
  switch (op) {
  case LLVMAdd: case LLVMFAdd: return PA_OP_ADD;
  case LLVMSub: case LLVMFSub: return PA_OP_SUB;
  case LLVMMul: case LLVMFMul: return PA_OP_MUL;
  case LLVMUDiv: case LLVMSDiv: case LLVMURem: case LLVMSRem: case LLVMFDiv: case LLVMFRem: return PA_OP_DIV;
  case LLVMICmp: case LLVMFCmp: case LLVMSelect: return PA_OP_CMPSEL;
  case LLVMAnd: case LLVMOr: case LLVMXor: case LLVMFNeg: return PA_OP_LOGIC; /* fneg flips a sign bit */
  case LLVMShl: case LLVMLShr: case LLVMAShr: return PA_OP_SHIFT;
  case LLVMTrunc: case LLVMZExt: case LLVMSExt: case LLVMFPTrunc: case LLVMFPExt: case LLVMFPToUI:
  case LLVMFPToSI: case LLVMUIToFP: case LLVMSIToFP: case LLVMPtrToInt: case LLVMIntToPtr:
  case LLVMBitCast: case LLVMAddrSpaceCast: return PA_OP_CONVERT;
  case LLVMExtractElement: case LLVMInsertElement: case LLVMShuffleVector: return PA_OP_SHUFFLE;
  case LLVMLoad: return PA_OP_LOAD;
  case LLVMStore: return PA_OP_STORE;
  default: return PA_OP_OTHER; /* phi, getelementptr (address arithmetic), branches, calls */
  }
}

/* Masked memory intrinsics and where their mask is: gather (ptrs, align, mask, passthru) and
 * masked.load (ptr, align, mask, passthru) take it third, scatter and masked.store fourth. */
static void mark_mask(LLVMValueRef call, pa_node *n) {
  static const struct {
    const char *prefix;
    unsigned operand;
  } masked[] = {{"llvm.masked.gather.", 2}, {"llvm.masked.load.", 2}, {"llvm.masked.scatter.", 3}, {"llvm.masked.store.", 3}};
  for (size_t i = 0; i < PT_ARRAY_LEN(masked); i++) {
    if (!starts(n->opcode, masked[i].prefix) || LLVMGetNumArgOperands(call) <= masked[i].operand) continue;
    n->masked = true;
    LLVMValueRef m = LLVMGetOperand(call, masked[i].operand);
    if (LLVMIsAConstant(m) && LLVMGetTypeKind(LLVMTypeOf(m)) == LLVMVectorTypeKind) {
      int lanes = (int)LLVMGetVectorSize(LLVMTypeOf(m)), on = 0;
      for (int k = 0; k < lanes && on >= 0; k++) {
        LLVMValueRef e = LLVMGetAggregateElement(m, (unsigned)k);
        if (e && LLVMIsAConstantInt(e)) on += LLVMConstIntGetZExtValue(e) != 0;
        else on = -1; /* undef lanes: not a known count */
      }
      n->mask_lanes = on;
    }
  }
}

static bool is_scatter(const pa_node *n) { return starts(n->opcode, "llvm.masked.scatter."); }

LLVMValueRef pa_lanes_address(LLVMValueRef in, const pa_node *n) { return LLVMGetOperand(in, is_scatter(n) ? 1 : 0); }

/* The callees' names copied once per function: equal names are one pointer, which the predictor
 * hashes in place of the characters (predictor/predict.c block_key; profile_json.c does the same
 * for profiles read back). Past its capacity a name is copied again. */
typedef struct {
  const char *llvm[64], *copy[64];
  int n;
} callee_names;

static const char *callee_copy(pt_arena *a, callee_names *names, const char *callee) {
  for (int i = 0; i < names->n; i++)
    if (names->llvm[i] == callee) return names->copy[i];
  const char *c = pt_strdup(a, callee);
  if (names->n < (int)PT_ARRAY_LEN(names->llvm)) names->llvm[names->n] = callee, names->copy[names->n++] = c;
  return c;
}

static void make_node(pt_arena *a, callee_names *names, LLVMValueRef in, pa_node *n) {
  LLVMOpcode op = LLVMGetInstructionOpcode(in);
  n->op = classify(op);
  n->is_memory = op == LLVMLoad || op == LLVMStore;
  LLVMTypeRef t = LLVMTypeOf(in);
  if (op == LLVMStore || op == LLVMICmp || op == LLVMFCmp) t = LLVMTypeOf(LLVMGetOperand(in, 0));
  if (op == LLVMCall) {
    const char *callee = pa_callee_name(in);
    if (!callee[0]) callee = "call"; /* indirect */
    n->opcode = callee_copy(a, names, callee);
    for (size_t i = 0; i < PT_ARRAY_LEN(intrinsics); i++)
      if (starts(callee, intrinsics[i].prefix)) {
        n->op = intrinsics[i].op;
        n->is_memory = intrinsics[i].memory;
      }
    if (LLVMGetTypeKind(t) == LLVMVoidTypeKind && LLVMGetNumArgOperands(in) > 0 &&
        (starts(callee, "llvm.masked.") || n->op != PA_OP_OTHER))
      t = LLVMTypeOf(LLVMGetOperand(in, 0)); /* the stored value of masked stores and scatters */
    if (starts(callee, "llvm.mem")) {
      LLVMValueRef len = LLVMGetOperand(in, 2);
      n->bytes = LLVMIsAConstantInt(len) ? (int)LLVMConstIntGetZExtValue(len) : 0;
    }
  } else {
    static const struct { LLVMOpcode op; const char *name; } names[] = {
        {LLVMRet, "ret"}, {LLVMBr, "br"}, {LLVMSwitch, "switch"}, {LLVMUnreachable, "unreachable"},
        {LLVMFNeg, "fneg"}, {LLVMAdd, "add"}, {LLVMFAdd, "fadd"}, {LLVMSub, "sub"}, {LLVMFSub, "fsub"},
        {LLVMMul, "mul"}, {LLVMFMul, "fmul"}, {LLVMUDiv, "udiv"}, {LLVMSDiv, "sdiv"}, {LLVMFDiv, "fdiv"},
        {LLVMURem, "urem"}, {LLVMSRem, "srem"}, {LLVMFRem, "frem"}, {LLVMShl, "shl"}, {LLVMLShr, "lshr"},
        {LLVMAShr, "ashr"}, {LLVMAnd, "and"}, {LLVMOr, "or"}, {LLVMXor, "xor"}, {LLVMAlloca, "alloca"},
        {LLVMLoad, "load"}, {LLVMStore, "store"}, {LLVMGetElementPtr, "getelementptr"},
        {LLVMTrunc, "trunc"}, {LLVMZExt, "zext"}, {LLVMSExt, "sext"}, {LLVMFPToUI, "fptoui"},
        {LLVMFPToSI, "fptosi"}, {LLVMUIToFP, "uitofp"}, {LLVMSIToFP, "sitofp"}, {LLVMFPTrunc, "fptrunc"},
        {LLVMFPExt, "fpext"}, {LLVMPtrToInt, "ptrtoint"}, {LLVMIntToPtr, "inttoptr"},
        {LLVMBitCast, "bitcast"}, {LLVMAddrSpaceCast, "addrspacecast"}, {LLVMICmp, "icmp"},
        {LLVMFCmp, "fcmp"}, {LLVMPHI, "phi"}, {LLVMSelect, "select"}, {LLVMExtractElement, "extractelement"},
        {LLVMInsertElement, "insertelement"}, {LLVMShuffleVector, "shufflevector"},
        {LLVMExtractValue, "extractvalue"}, {LLVMInsertValue, "insertvalue"}, {LLVMFreeze, "freeze"},
        {LLVMAtomicRMW, "atomicrmw"}, {LLVMAtomicCmpXchg, "cmpxchg"}, {LLVMFence, "fence"},
    };
    n->opcode = "other";
    for (size_t i = 0; i < PT_ARRAY_LEN(names); i++)
      if (names[i].op == op) n->opcode = names[i].name;
  }
  n->elem = pa_type_elem(t, &n->lanes, &n->bits);
  n->mask = n->mask_lanes = -1;
  if (op == LLVMCall) mark_mask(in, n);
  n->lane_step = op == LLVMCall && n->op == PA_OP_GATHER ? pa_lane_step(pa_lanes_address(in, n)) : 0;
  if (n->is_memory && n->bytes == 0 && op != LLVMCall) n->bytes = (n->bits + 7) / 8;
  if (n->is_memory && op == LLVMCall && n->op != PA_OP_OTHER) n->bytes = (n->bits + 7) / 8;
}

LLVMValueRef pa_node_address(LLVMValueRef in, const pa_node *n) {
  LLVMOpcode op = LLVMGetInstructionOpcode(in);
  if (op == LLVMLoad) return LLVMGetOperand(in, 0);
  if (op == LLVMStore) return LLVMGetOperand(in, 1);
  if (op == LLVMCall && starts(n->opcode, "llvm.masked.load.")) return LLVMGetOperand(in, 0);
  if (op == LLVMCall && starts(n->opcode, "llvm.masked.store.")) return LLVMGetOperand(in, 1);
  return NULL;
}

void pa_features_add(pa_features *sum, const pa_features *x) {
  sum->instructions += x->instructions;
  for (int i = 0; i < PA_OP_COUNT; i++) sum->by_op[i] += x->by_op[i];
  sum->loads += x->loads;
  sum->stores += x->stores;
  sum->load_bytes += x->load_bytes;
  sum->store_bytes += x->store_bytes;
  sum->vector_instructions += x->vector_instructions;
}

static void block_graph(pt_arena *a, callee_names *names, LLVMBasicBlockRef bb, pa_block *b) {
  int n = 0;
  for (LLVMValueRef in = LLVMGetFirstInstruction(bb); in; in = LLVMGetNextInstruction(in)) n++;
  b->n_nodes = n;
  b->nodes = pt_alloc(a, sizeof *b->nodes * (size_t)(n + 1));
  LLVMValueRef *insts = malloc(sizeof *insts * (size_t)(n + 1));
  pa_ptrmap idx;
  pa_ptrmap_init(&idx, (size_t)n);
  int i = 0;
  for (LLVMValueRef in = LLVMGetFirstInstruction(bb); in; in = LLVMGetNextInstruction(in), i++) {
    insts[i] = in;
    pa_ptrmap_put(&idx, in, i);
    make_node(a, names, in, &b->nodes[i]);
  }
  int cap = 2 * n + 4, ne = 0;
  pa_edge *edges = malloc(sizeof *edges * (size_t)cap);
  /* Last store to each address value seen so far (the value, its node). */
  LLVMValueRef *store_addr = malloc(sizeof *store_addr * (size_t)(n + 1));
  int *store_node = malloc(sizeof *store_node * (size_t)(n + 1)), n_stores = 0;
  for (i = 0; i < n; i++) {
    LLVMValueRef in = insts[i];
    int first = ne;
    bool phi = LLVMGetInstructionOpcode(in) == LLVMPHI;
    int nops = LLVMGetNumOperands(in);
    for (int k = 0; k < nops; k++) {
      LLVMValueRef v = LLVMGetOperand(in, (unsigned)k);
      if (!v || !LLVMIsAInstruction(v) || LLVMGetInstructionParent(v) != bb) continue;
      int src = pa_ptrmap_get(&idx, v);
      pa_edge_kind kind = phi ? PA_EDGE_LOOP_CARRIED : PA_EDGE_DATA;
      if (!phi && src >= i) continue;
      bool dup = false;
      for (int e = first; e < ne; e++) dup |= edges[e].src == src && edges[e].kind == kind;
      if (dup) continue;
      if (ne + 2 > cap) edges = realloc(edges, sizeof *edges * (size_t)(cap *= 2));
      edges[ne++] = (pa_edge){src, i, kind};
    }
    if (b->nodes[i].masked) { /* the mask operand's node, when this block computes it */
      unsigned mop = starts(b->nodes[i].opcode, "llvm.masked.gather.") || starts(b->nodes[i].opcode, "llvm.masked.load.") ? 2 : 3;
      LLVMValueRef m = LLVMGetOperand(in, mop);
      if (LLVMIsAInstruction(m) && LLVMGetInstructionParent(m) == bb) b->nodes[i].mask = pa_ptrmap_get(&idx, m);
    }
    /* a scatter orders the gathers (and scatters) of the same pointer vector after it, as a
     * store orders the loads of its address */
    const pa_node *nd = &b->nodes[i];
    bool lanes = LLVMGetInstructionOpcode(in) == LLVMCall && nd->op == PA_OP_GATHER && nd->is_memory;
    LLVMValueRef addr = lanes ? pa_lanes_address(in, nd) : pa_node_address(in, nd);
    bool stores = nd->op == PA_OP_STORE || (lanes && is_scatter(nd));
    if (addr) {
      int s = -1;
      for (int k = n_stores - 1; k >= 0 && s < 0; k--)
        if (store_addr[k] == addr) s = k;
      if (s >= 0) {
        if (ne + 2 > cap) edges = realloc(edges, sizeof *edges * (size_t)(cap *= 2));
        edges[ne++] = (pa_edge){store_node[s], i, PA_EDGE_MEMORY};
      }
      if (stores) {
        if (s >= 0) store_node[s] = i; /* the newest store to addr orders what follows */
        else {
          store_addr[n_stores] = addr;
          store_node[n_stores++] = i;
        }
      }
    }
    /* features */
    if (phi) continue;
    b->features.instructions++;
    b->features.by_op[nd->op]++;
    if (nd->lanes > 1) b->features.vector_instructions++;
    if (nd->is_memory) {
      bool store = nd->op == PA_OP_STORE || is_scatter(nd) || starts(nd->opcode, "llvm.mem");
      if (store) {
        b->features.stores++;
        b->features.store_bytes += nd->bytes;
      }
      if (!store || starts(nd->opcode, "llvm.memcpy") || starts(nd->opcode, "llvm.memmove")) {
        b->features.loads++;
        b->features.load_bytes += nd->bytes;
      }
    }
  }
  b->n_edges = ne;
  b->edges = pt_memdup(a, edges, sizeof *edges * (size_t)ne);
  free(edges);
  free(store_addr);
  free(store_node);
  free(insts);
  pa_ptrmap_free(&idx);
}

/* CFG edges on the shortest path from block `from` to `to` inside loop l, never entering its
 * header (a path within one iteration); -1 if none. from == to is 0. */
static int distance_in(const pa_function *f, int l, int from, int to, int *dist, int *queue) {
  const pa_loop *lp = &f->loops[l];
  for (int b = 0; b < f->n_blocks; b++) dist[b] = -1;
  int head = 0, tail = 0;
  dist[from] = 0;
  queue[tail++] = from;
  while (head < tail) {
    int b = queue[head++];
    if (b == to) return dist[b];
    for (int k = 0; k < f->blocks[b].n_succs; k++) {
      int s = f->blocks[b].succs[k];
      bool inside = false;
      for (int j = 0; j < lp->n_blocks && !inside; j++) inside = lp->blocks[j] == s;
      if (!inside || s == lp->header || dist[s] >= 0) continue;
      dist[s] = dist[b] + 1;
      queue[tail++] = s;
    }
  }
  return -1;
}

/* Recurrences through several blocks: a header phi whose back-edge value is defined in another
 * block of the loop gives an edge from that definition to each user of the phi in the loop. */
static void carried_edges(pt_arena *a, LLVMValueRef fn, pa_function *f) {
  int n = f->n_blocks, cap = 8, ne = 0;
  pa_carried_edge *edges = malloc(sizeof *edges * (size_t)cap);
  LLVMBasicBlockRef *bbs = malloc(sizeof *bbs * (size_t)(n + 1));
  pa_ptrmap where; /* instruction -> block * 2^20 + node */
  pa_ptrmap_init(&where, 256);
  int bi = 0;
  for (LLVMBasicBlockRef bb = LLVMGetFirstBasicBlock(fn); bb; bb = LLVMGetNextBasicBlock(bb), bi++) {
    bbs[bi] = bb;
    int k = 0;
    for (LLVMValueRef in = LLVMGetFirstInstruction(bb); in; in = LLVMGetNextInstruction(in), k++)
      pa_ptrmap_put(&where, in, bi * (1 << 20) + k);
  }
  int *dist = malloc(sizeof(int) * (size_t)(n + 1)), *queue = malloc(sizeof(int) * (size_t)(n + 1));
  for (int l = 0; l < f->n_loops; l++) {
    const pa_loop *lp = &f->loops[l];
    int h = lp->header, k = 0;
    for (LLVMValueRef phi = LLVMGetFirstInstruction(bbs[h]); phi && LLVMIsAPHINode(phi); phi = LLVMGetNextInstruction(phi), k++)
      for (unsigned j = 0; j < LLVMCountIncoming(phi); j++) {
        LLVMValueRef v = LLVMGetIncomingValue(phi, j);
        int latch = -1, w = LLVMIsAInstruction(v) ? pa_ptrmap_get(&where, v) : -1;
        for (int q = 0; q < lp->n_latches; q++)
          if (bbs[lp->latches[q]] == LLVMGetIncomingBlock(phi, j)) latch = lp->latches[q];
        if (latch < 0 || w < 0 || w >> 20 == h) continue;
        int vb = w >> 20, to_latch = distance_in(f, l, vb, latch, dist, queue);
        if (to_latch < 0) continue; /* defined outside the loop: not a recurrence */
        for (LLVMUseRef u = LLVMGetFirstUse(phi); u; u = LLVMGetNextUse(u)) {
          int uw = pa_ptrmap_get(&where, LLVMGetUser(u));
          if (uw < 0) continue;
          int from_header = distance_in(f, l, h, uw >> 20, dist, queue);
          if (from_header < 0) continue; /* a use after the loop */
          if (ne == cap) edges = realloc(edges, sizeof *edges * (size_t)(cap *= 2));
          edges[ne++] = (pa_carried_edge){vb, w & ((1 << 20) - 1), h, k, uw >> 20, uw & ((1 << 20) - 1),
                                          to_latch + 1 + from_header};
        }
      }
  }
  f->n_carried = ne;
  f->carried = pt_memdup(a, edges, sizeof *edges * (size_t)ne);
  free(edges);
  free(bbs);
  free(dist);
  free(queue);
  pa_ptrmap_free(&where);
}

void pa_taskgraph_build(pt_arena *a, LLVMValueRef fn, pa_function *f) {
  int bi = 0;
  memset(&f->features, 0, sizeof f->features);
  callee_names names = {.n = 0};
  for (LLVMBasicBlockRef bb = LLVMGetFirstBasicBlock(fn); bb; bb = LLVMGetNextBasicBlock(bb), bi++) {
    block_graph(a, &names, bb, &f->blocks[bi]);
    pa_features_add(&f->features, &f->blocks[bi].features);
  }
  carried_edges(a, fn, f);
  pa_access_strides(a, fn, f);
}
