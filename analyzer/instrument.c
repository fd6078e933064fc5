/* Instrumentation through the C API: one counter per block (in the calling thread's own
 * array, so parallel callers count correctly without atomics; only the entry block where
 * static counts stand in for the rest),
 * a function-entry hook (which threads ran it; returns the thread's state), and memory-access
 * hooks behind an inline SHARDS filter (one call per block whose test passes: a sampled line,
 * or a burst of the tracker); and __pa_main(slots), which unpacks the run spec's argument slots and
 * calls the entry, so no FFI is needed to call any signature. */
#include <stdlib.h>
#include <string.h>

#include <llvm-c/Target.h>

#include "internal.h"

typedef struct {
  LLVMContextRef ctx;
  LLVMBuilderRef b;
  LLVMTargetDataRef td;
  LLVMTypeRef i1, i32, i64, ptr, access_ty, flush_ty, block_ty;
  LLVMValueRef access, flush, phase, block;
  LLVMValueRef state;  /* this function's pa_thread_state, from the entry hook */
  LLVMValueRef counts; /* its block counters (the word at PA_COUNTS_OFFSET), loaded after it */
  int fid;
  const pa_tracked_locals *tracked; /* sampled hooks: locals whose accesses always pass (or NULL) */
} hooks;

/* One access to hook: an address and its size in bytes (constant, or a value when 0). A
 * masked one (mask set: a masked load or store, or one lane of a gather or scatter, whose mask
 * is not a constant) moves only its active lanes: addr and bytes are the whole vector's (or
 * lane's), a bound the sampled path's inline test and line groups use; masked_span gives the
 * bytes it moves at run time (the sampled slow path passes the mask, mask_bits, and
 * pa_rt_block takes them from it). */
typedef struct {
  LLVMValueRef addr, bytes_value;
  uint64_t bytes;
  unsigned align;
  const pa_filtered_access *filter; /* line filter: hooked only when its line changed */
  LLVMValueRef mask;                /* its <N x i1> mask, or NULL */
  int lane;                         /* a gather's or scatter's lane of mask; -1: a load or store */
  uint64_t lane_bytes;
} access_item;

typedef struct {
  access_item *v;
  int n, cap;
} item_list;

static void push_item(item_list *l, access_item it) {
  if (l->n == l->cap) l->v = realloc(l->v, sizeof *l->v * (size_t)(l->cap = l->cap ? 2 * l->cap : 16));
  l->v[l->n++] = it;
}

static access_item const_item(hooks *h, LLVMValueRef addr, LLVMTypeRef t, unsigned align) {
  return (access_item){.addr = addr, .bytes = LLVMStoreSizeOfType(h->td, t), .align = align, .lane = -1};
}

/* The accesses of a masked intrinsic: a load's or store's bytes from its first active lane to
 * its last, a gather's or scatter's active lanes, each on its own; a constant mask folded here
 * (nothing for one with no lane active), any other read at run time (masked_span). */
static void masked_items(hooks *h, const pa_masked *m, item_list *out) {
  if (!m->lanes_apart) {
    uint64_t off;
    int64_t span = pa_mask_span(m, &off);
    if (span == 0) return;
    if (span > 0) { /* constant: the active lanes' bytes, from a getelementptr when they start past lane 0 */
      LLVMValueRef at = LLVMConstInt(h->i64, off, 0);
      LLVMValueRef addr = off ? LLVMBuildGEP2(h->b, LLVMInt8TypeInContext(h->ctx), m->ptr, &at, 1, "") : m->ptr;
      push_item(out, (access_item){.addr = addr, .bytes = (uint64_t)span, .align = 1, .lane = -1});
    } else /* the whole vector when its lanes are not whole bytes, or over 64 (the runtime's mask word) */
      push_item(out, (access_item){.addr = m->ptr, .bytes = m->bytes, .align = 1, .lane = -1,
                                   .mask = m->whole_lanes && m->lanes <= 64 ? m->mask : NULL, .lane_bytes = m->lane_bytes});
    return;
  }
  for (unsigned l = 0; l < m->lanes; l++) {
    int on = pa_mask_lane(m->mask, l);
    if (on == 0) continue;
    LLVMValueRef lane = LLVMBuildExtractElement(h->b, m->ptr, LLVMConstInt(h->i32, l, 0), "");
    push_item(out, (access_item){.addr = lane, .bytes = m->lane_bytes, .align = 1, .mask = on < 0 ? m->mask : NULL,
                                 .lane = (int)l, .lane_bytes = m->lane_bytes});
  }
}

/* A masked item's mask as an i64, bit k lane k (a gather's or scatter's lane: bit 0, its own),
 * built at the builder's position: the sampled slow path's word after the item's address
 * (pa_rt_block takes the active bytes from it). */
static LLVMValueRef mask_bits(hooks *h, const access_item *it) {
  LLVMValueRef bits;
  if (it->lane >= 0) bits = LLVMBuildExtractElement(h->b, it->mask, LLVMConstInt(h->i32, (unsigned long long)it->lane, 0), "");
  else bits = LLVMBuildBitCast(h->b, it->mask, LLVMIntTypeInContext(h->ctx, LLVMGetVectorSize(LLVMTypeOf(it->mask))), "");
  return LLVMBuildZExt(h->b, bits, h->i64, "pa.mask");
}

/* A masked item's bytes at run time, built at the builder's position: *len, the bytes from its
 * first active lane to its last (0 when none is), and *off, that lane's offset from its
 * address (i64 values). The mask as an integer, bit k lane k: cttz counts the inactive lanes
 * before the first active one, ctlz those after the last. */
static void masked_span(hooks *h, const access_item *it, LLVMValueRef *off, LLVMValueRef *len) {
  LLVMValueRef zero = LLVMConstInt(h->i64, 0, 0), lane_bytes = LLVMConstInt(h->i64, it->lane_bytes, 0);
  if (it->lane >= 0) {
    LLVMValueRef on = LLVMBuildExtractElement(h->b, it->mask, LLVMConstInt(h->i32, (unsigned long long)it->lane, 0), "");
    *off = zero, *len = LLVMBuildSelect(h->b, on, lane_bytes, zero, "pa.lane.bytes");
    return;
  }
  unsigned n = LLVMGetVectorSize(LLVMTypeOf(it->mask));
  LLVMTypeRef in = LLVMIntTypeInContext(h->ctx, n);
  LLVMValueRef bits = LLVMBuildBitCast(h->b, it->mask, in, "pa.mask");
  LLVMModuleRef mod = LLVMGetGlobalParent(LLVMGetBasicBlockParent(LLVMGetInsertBlock(h->b)));
  LLVMValueRef args[2] = {bits, LLVMConstInt(h->i1, 0, 0)}, count[2];
  const char *names[2] = {"llvm.cttz", "llvm.ctlz"};
  for (int k = 0; k < 2; k++) {
    unsigned id = LLVMLookupIntrinsicID(names[k], strlen(names[k]));
    LLVMValueRef fn = LLVMGetIntrinsicDeclaration(mod, id, &in, 1);
    LLVMValueRef c = LLVMBuildCall2(h->b, LLVMIntrinsicGetType(h->ctx, id, &in, 1), fn, args, 2, "");
    count[k] = LLVMBuildIntCast2(h->b, c, h->i64, 0, ""); /* at most n */
  }
  LLVMValueRef lanes = LLVMBuildSub(h->b, LLVMBuildSub(h->b, LLVMConstInt(h->i64, n, 0), count[0], ""), count[1], "");
  LLVMValueRef none = LLVMBuildICmp(h->b, LLVMIntEQ, bits, LLVMConstInt(in, 0, 0), "");
  *len = LLVMBuildSelect(h->b, none, zero, LLVMBuildMul(h->b, lanes, lane_bytes, ""), "pa.mask.bytes");
  *off = LLVMBuildMul(h->b, count[0], lane_bytes, "pa.mask.off");
}

/* The accesses of one instruction, in the order it makes them. Extracting gather lanes
 * builds instructions at the builder's position. */
static void items_of(hooks *h, LLVMValueRef in, item_list *out) {
  LLVMOpcode op = LLVMGetInstructionOpcode(in);
  pa_masked m;
  if (op == LLVMLoad || op == LLVMAtomicRMW || op == LLVMAtomicCmpXchg) {
    LLVMTypeRef t = op == LLVMLoad ? LLVMTypeOf(in) : LLVMTypeOf(LLVMGetOperand(in, op == LLVMAtomicRMW ? 1 : 2));
    push_item(out, const_item(h, LLVMGetOperand(in, 0), t, op == LLVMLoad ? LLVMGetAlignment(in) : 1));
  } else if (op == LLVMStore) {
    push_item(out, const_item(h, LLVMGetOperand(in, 1), LLVMTypeOf(LLVMGetOperand(in, 0)), LLVMGetAlignment(in)));
  } else if (pa_masked_of(h->td, in, &m)) {
    masked_items(h, &m, out);
  } else if (op == LLVMCall) {
    const char *c = pa_callee_name(in);
    if (strncmp(c, "llvm.memcpy.", 12) == 0 || strncmp(c, "llvm.memmove.", 13) == 0 ||
        strncmp(c, "llvm.memset.", 12) == 0) {
      LLVMValueRef len = LLVMBuildZExtOrBitCast(h->b, LLVMGetOperand(in, 2), h->i64, "");
      if (strncmp(c, "llvm.memset.", 12) != 0) push_item(out, (access_item){.addr = LLVMGetOperand(in, 1), .bytes_value = len}); /* source */
      push_item(out, (access_item){.addr = LLVMGetOperand(in, 0), .bytes_value = len});
    }
  }
}

static void call_access(hooks *h, const access_item *it) {
  LLVMValueRef bytes = it->bytes_value ? it->bytes_value : LLVMConstInt(h->i64, it->bytes, 0), addr = it->addr;
  if (it->mask) {
    LLVMValueRef off;
    masked_span(h, it, &off, &bytes);
    addr = LLVMBuildGEP2(h->b, LLVMInt8TypeInContext(h->ctx), addr, &off, 1, "");
  }
  LLVMValueRef args[4] = {h->state, addr, bytes, LLVMConstInt(h->i32, (unsigned long long)h->fid, 0)};
  LLVMBuildCall2(h->b, h->access_ty, h->access, args, 4, "");
}

static bool is_memory(LLVMValueRef in) {
  LLVMOpcode op = LLVMGetInstructionOpcode(in);
  if (op == LLVMLoad || op == LLVMStore || op == LLVMAtomicRMW || op == LLVMAtomicCmpXchg) return true;
  if (op != LLVMCall) return false;
  const char *c = pa_callee_name(in);
  return strncmp(c, "llvm.masked.", 12) == 0 || strncmp(c, "llvm.memcpy.", 12) == 0 ||
         strncmp(c, "llvm.memmove.", 13) == 0 || strncmp(c, "llvm.memset.", 12) == 0;
}

/* A call that may run instrumented code (or anything but an intrinsic): accesses after it
 * must not be hooked before it, so its block keeps one hook before each access. */
static bool calls_out(LLVMValueRef in) {
  LLVMOpcode op = LLVMGetInstructionOpcode(in);
  if (op == LLVMInvoke || op == LLVMCallBr) return true;
  return op == LLVMCall && strncmp(pa_callee_name(in), "llvm.", 5) != 0;
}

/* i1: one of the lines an item of `bytes` bytes at integer address `ai` touches is sampled:
 * its product line x PA_SHARDS_MUL is under the thread's limit (pa_thread_state.threshold,
 * SHARDS' threshold shifted to the product's top bits, so no shift is needed). The lines are
 * the first, the span's next ones (products one PA_SHARDS_MUL apart) and the last; one line
 * when the alignment keeps the access in one. NULL for a large access (over 4 lines): it is
 * hooked whenever the slow path runs. */
static LLVMValueRef lines_sampled(hooks *h, LLVMValueRef ai, uint64_t bytes, unsigned align, LLVMValueRef limit) {
  bool one_line = bytes <= PA_LINE_BYTES && (bytes & (bytes - 1)) == 0 && align >= bytes;
  uint64_t span = (bytes + PA_LINE_BYTES - 1) / PA_LINE_BYTES;
  if (!one_line && span > 4) return NULL;
  LLVMValueRef mul = LLVMConstInt(h->i64, PA_SHARDS_MUL, 0), six = LLVMConstInt(h->i64, 6, 0); /* log2 PA_LINE_BYTES */
  LLVMValueRef p0 = LLVMBuildMul(h->b, LLVMBuildLShr(h->b, ai, six, ""), mul, "");
  LLVMValueRef c = LLVMBuildICmp(h->b, LLVMIntULT, p0, limit, "");
  if (one_line) return c;
  for (uint64_t k = 1; k < span; k++) {
    LLVMValueRef pk = LLVMBuildAdd(h->b, p0, LLVMConstInt(h->i64, k * PA_SHARDS_MUL, 0), "");
    c = LLVMBuildOr(h->b, c, LLVMBuildICmp(h->b, LLVMIntULT, pk, limit, ""), "");
  }
  LLVMValueRef end = LLVMBuildLShr(h->b, LLVMBuildAdd(h->b, ai, LLVMConstInt(h->i64, bytes - 1, 0), ""), six, "");
  return LLVMBuildOr(h->b, c, LLVMBuildICmp(h->b, LLVMIntULT, LLVMBuildMul(h->b, end, mul, ""), limit, ""), "");
}

/* Points every branch to `from` (in fn) at `to`. */
static void redirect_preds(LLVMValueRef fn, LLVMBasicBlockRef from, LLVMBasicBlockRef to) {
  for (LLVMBasicBlockRef bb = LLVMGetFirstBasicBlock(fn); bb; bb = LLVMGetNextBasicBlock(bb)) {
    LLVMValueRef t = LLVMGetBasicBlockTerminator(bb);
    if (!t) continue;
    unsigned ns = LLVMGetNumSuccessors(t);
    for (unsigned i = 0; i < ns; i++)
      if (LLVMGetSuccessor(t, i) == from) LLVMSetSuccessor(t, i, to);
  }
}

/* Moves bb's body (phis included) into a new block before it that its predecessors now enter,
 * leaving bb only its terminator, and leaves the builder at the end of the new block. */
static void move_body_to_head(hooks *h, LLVMValueRef fn, LLVMBasicBlockRef bb) {
  LLVMBasicBlockRef head = LLVMInsertBasicBlockInContext(h->ctx, bb, "pa.body");
  redirect_preds(fn, bb, head);
  LLVMValueRef term = LLVMGetBasicBlockTerminator(bb);
  LLVMPositionBuilderAtEnd(h->b, head);
  for (LLVMValueRef in = LLVMGetFirstInstruction(bb), next; in && in != term; in = next) {
    next = LLVMGetNextInstruction(in);
    LLVMInstructionRemoveFromParent(in);
    LLVMInsertIntoBuilder(h->b, in);
  }
}

/* The state word at byte offset `off` of this function's pa_thread_state. */
static LLVMValueRef state_word(hooks *h, unsigned off) {
  LLVMValueRef o = LLVMConstInt(h->i64, off, 0);
  return LLVMBuildGEP2(h->b, LLVMInt8TypeInContext(h->ctx), h->state, &o, 1, "");
}

static const pa_filtered_access *filter_of(const pa_filtered_access *fa, int n_fa, LLVMValueRef in) {
  for (int k = 0; k < n_fa; k++)
    if (fa[k].inst == in) return &fa[k];
  return NULL;
}

/* Line filter: adds `delta` (an i64 value) to the thread's repeats[function][bin]. */
static void add_repeats(hooks *h, LLVMValueRef delta, int bin) {
  LLVMValueRef table = LLVMBuildLoad2(h->b, h->ptr, state_word(h, PA_REPEATS_OFFSET), "pa.repeats");
  LLVMValueRef at = LLVMConstInt(h->i64, (unsigned long long)h->fid * PA_REUSE_BINS + (unsigned long long)bin, 0);
  LLVMValueRef slot = LLVMBuildGEP2(h->b, h->i64, table, &at, 1, "");
  LLVMBuildStore(h->b, LLVMBuildAdd(h->b, LLVMBuildLoad2(h->b, h->i64, slot, ""), delta, ""), slot);
}

/* i1: the filtered item's line is not the one it touched in the previous iteration: the
 * loop's first iteration, or an address within |stride| bytes of the edge of its line that
 * the walk enters from (an and and a compare: no state per reference). pa_rt_block repeats
 * the test on the slow path. */
static LLVMValueRef line_crossed(hooks *h, const pa_filtered_access *f) {
  LLVMValueRef off = LLVMBuildAnd(h->b, f->addr, LLVMConstInt(h->i64, PA_LINE_BYTES - 1, 0), "");
  LLVMValueRef c = f->stride > 0 ? LLVMBuildICmp(h->b, LLVMIntULT, off, LLVMConstInt(h->i64, (unsigned long long)f->stride, 0), "")
                                 : LLVMBuildICmp(h->b, LLVMIntUGE, off, LLVMConstInt(h->i64, (unsigned long long)(PA_LINE_BYTES + f->stride), 0), "");
  return LLVMBuildOr(h->b, f->first, c, "pa.crossing");
}

/* Line groups whose addresses differ by constants (one base) and each within 64 bytes: their
 * first and last lines, two lanes per group, tested in one vector (a broadcast address plus
 * constant offsets, shift, multiply, compare); returns the lanes' results as bits of an i64
 * at `first_bit` (lane 2i and 2i + 1: group gs[i]'s first and last line). */
static LLVMValueRef groups_sampled(hooks *h, LLVMValueRef base_addr, const pa_line_group *groups, const int *gs, int n,
                                   LLVMValueRef limit, int first_bit) {
  unsigned lanes = (unsigned)(2 * n);
  LLVMValueRef *offs = malloc(sizeof *offs * lanes);
  for (int i = 0; i < n; i++) {
    const pa_line_group *g = &groups[gs[i]];
    offs[2 * i] = LLVMConstInt(h->i64, (unsigned long long)g->off, 0);
    offs[2 * i + 1] = LLVMConstInt(h->i64, (unsigned long long)(g->off + (int64_t)g->bytes - 1), 0);
  }
  LLVMTypeRef vt = LLVMVectorType(h->i64, lanes);
  LLVMValueRef zero_mask = LLVMConstNull(LLVMVectorType(h->i32, lanes));
  LLVMValueRef one = LLVMBuildInsertElement(h->b, LLVMGetPoison(vt), base_addr, LLVMConstInt(h->i32, 0, 0), "");
  LLVMValueRef addr = LLVMBuildAdd(h->b, LLVMBuildShuffleVector(h->b, one, LLVMGetPoison(vt), zero_mask, ""),
                                   LLVMConstVector(offs, lanes), "");
  one = LLVMBuildInsertElement(h->b, LLVMGetPoison(vt), limit, LLVMConstInt(h->i32, 0, 0), "");
  LLVMValueRef limits = LLVMBuildShuffleVector(h->b, one, LLVMGetPoison(vt), zero_mask, "");
  for (unsigned i = 0; i < lanes; i++) offs[i] = LLVMConstInt(h->i64, 6, 0); /* log2 PA_LINE_BYTES */
  LLVMValueRef lines = LLVMBuildLShr(h->b, addr, LLVMConstVector(offs, lanes), "");
  for (unsigned i = 0; i < lanes; i++) offs[i] = LLVMConstInt(h->i64, PA_SHARDS_MUL, 0);
  LLVMValueRef c = LLVMBuildICmp(h->b, LLVMIntULT, LLVMBuildMul(h->b, lines, LLVMConstVector(offs, lanes), ""), limits, "");
  free(offs);
  LLVMValueRef bits = LLVMBuildZExt(h->b, LLVMBuildBitCast(h->b, c, LLVMIntTypeInContext(h->ctx, lanes), ""), h->i64, "");
  return LLVMBuildShl(h->b, bits, LLVMConstInt(h->i64, (unsigned long long)first_bit, 0), "");
}

/* A word the slow path stores: a value from H, or an item's address as a constant plus its
 * line group base's leader's address (base, made an integer on the slow path) or its crossing
 * class leader's (base_int, filtered items). Built on the slow path, so only the leaders'
 * addresses live past H's test: a block's 27 addresses held in registers or spill slots until
 * the branch cost the register allocator more than the rest of the hooks. */
typedef struct {
  LLVMValueRef value, base, base_int;
  int64_t off;
  const access_item *masked; /* a masked item's mask (mask_bits) */
} slow_word;

/* The slow path is rare: weights keep the kernel's registers out of its spill code. */
static void mark_unlikely(hooks *h, LLVMValueRef condbr) {
  LLVMMetadataRef md[3] = {LLVMMDStringInContext2(h->ctx, "branch_weights", 14),
                           LLVMValueAsMetadata(LLVMConstInt(h->i32, 1, 0)),
                           LLVMValueAsMetadata(LLVMConstInt(h->i32, 64, 0))};
  LLVMSetMetadata(condbr, LLVMGetMDKindIDInContext(h->ctx, "prof", 4),
                  LLVMMetadataAsValue(h->ctx, LLVMMDNodeInContext2(h->ctx, md, 3)));
}

/* The groups of `base` (in gs) when there are two or more and each spans at most 64 bytes (two
 * lines): those are tested in one vector; else 0. */
static int vector_groups(const pa_line_group *groups, int n_groups, int base, int *gs) {
  int n = 0;
  for (int g = base; g < n_groups && groups[g].base == base; g++) {
    if (groups[g].bytes > PA_LINE_BYTES) return 0;
    gs[n++] = g;
  }
  return n >= 2 ? n : 0;
}

static LLVMValueRef or_bits(hooks *h, LLVMValueRef passed, LLVMValueRef bits) {
  return passed ? LLVMBuildOr(h->b, passed, bits, "") : bits;
}

/* A filtered item's part in `crossings`: its crossing test (one value for a crossing class,
 * crossing_classes), its class leader's address as an integer and the lines from it to the
 * item's address, and the item's bit in the mask. */
typedef struct {
  LLVMValueRef cross, lead_addr, bit;
  int64_t lines;
  bool always; /* a tracked local's: hooked whenever it crossed, whatever its line's hash */
} crossing_item;

/* Filtered items (H counted them all as repeats): when one crossed into a new line (rare: the
 * loop's first iteration, or once per 64 / |stride| iterations), a block after H takes the
 * crossings back from the repeats and sets the bits of those whose new line is sampled; the
 * mask after both is returned (a phi). A class's items take their line products from the
 * leader's, a multiply fewer each (the lines_sampled identity). */
static LLVMValueRef crossings(hooks *h, LLVMValueRef fn, const crossing_item *ci, int n, LLVMValueRef passed,
                              LLVMValueRef limit, int bin) {
  LLVMValueRef zero = LLVMConstInt(h->i64, 0, 0), any = NULL;
  if (!passed) passed = zero;
  for (int k = 0; k < n; k++) {
    bool seen = false; /* a class's test once */
    for (int j = 0; j < k && !seen; j++) seen = ci[j].cross == ci[k].cross;
    if (!seen) any = any ? LLVMBuildOr(h->b, any, ci[k].cross, "") : ci[k].cross;
  }
  add_repeats(h, LLVMConstInt(h->i64, (unsigned long long)n, 0), bin);
  LLVMBasicBlockRef head = LLVMGetInsertBlock(h->b);
  LLVMBasicBlockRef crossed = LLVMAppendBasicBlockInContext(h->ctx, fn, "pa.crossed");
  LLVMBasicBlockRef join = LLVMAppendBasicBlockInContext(h->ctx, fn, "pa.join");
  mark_unlikely(h, LLVMBuildCondBr(h->b, any, crossed, join));
  LLVMPositionBuilderAtEnd(h->b, crossed);
  LLVMValueRef back = zero, bits = passed;
  LLVMValueRef mul = LLVMConstInt(h->i64, PA_SHARDS_MUL, 0), six = LLVMConstInt(h->i64, 6, 0); /* log2 PA_LINE_BYTES */
  LLVMValueRef *product = malloc(sizeof *product * (size_t)(n + 1)); /* of each item's leader's line */
  for (int k = 0; k < n; k++) {
    int members = 0, j = 0; /* items of k's class; j: the first item of k's leader */
    bool first_of_class = true;
    for (int i = 0; i < n; i++)
      if (ci[i].cross == ci[k].cross) members++, first_of_class &= i >= k;
    for (; ci[j].lead_addr != ci[k].lead_addr; j++) {}
    if (first_of_class) /* every item of a class crossed, or none */
      back = LLVMBuildAdd(h->b, back,
                          members == 1 ? LLVMBuildZExt(h->b, ci[k].cross, h->i64, "")
                                       : LLVMBuildSelect(h->b, ci[k].cross, LLVMConstInt(h->i64, (unsigned long long)members, 0), zero, ""),
                          "");
    product[k] = j < k ? product[j] : LLVMBuildMul(h->b, LLVMBuildLShr(h->b, ci[k].lead_addr, six, ""), mul, "");
    LLVMValueRef p = ci[k].lines ? LLVMBuildAdd(h->b, product[k], LLVMConstInt(h->i64, (unsigned long long)ci[k].lines * PA_SHARDS_MUL, 0), "") : product[k];
    LLVMValueRef sampled = ci[k].always ? LLVMConstInt(h->i1, 1, 0) : LLVMBuildICmp(h->b, LLVMIntULT, p, limit, "");
    bits = LLVMBuildOr(h->b, bits, LLVMBuildSelect(h->b, LLVMBuildAnd(h->b, ci[k].cross, sampled, ""), ci[k].bit, zero, ""), "");
  }
  free(product);
  add_repeats(h, LLVMBuildNeg(h->b, back, ""), bin);
  LLVMBuildBr(h->b, join);
  LLVMPositionBuilderAtEnd(h->b, join);
  LLVMValueRef phi = LLVMBuildPhi(h->b, h->i64, "pa.passed");
  LLVMValueRef vals[2] = {passed, bits};
  LLVMBasicBlockRef from[2] = {head, crossed};
  LLVMAddIncoming(phi, vals, from, 2);
  return phi;
}

/* Group g's base's leader's address as an integer, built in H once per base: the groups of
 * one base take their addresses from it by constants, so one register holds them all (mm512's
 * eight C rows, 2 KiB apart: eight pointers live in its outer loop, spilled, before). */
static LLVMValueRef base_int(hooks *h, const item_list *items, const pa_line_group *groups, int g, LLVMValueRef *base_ints) {
  int b = groups[g].base;
  if (!base_ints[b]) base_ints[b] = LLVMBuildPtrToInt(h->b, items->v[groups[b].leader].addr, h->i64, "");
  return base_ints[b];
}

/* Crossing classes of a block's filtered items: an item whose address is an earlier filtered
 * item's plus a multiple of 64 bytes (one base, line_groups.c), at the same stride in the same
 * loop, enters a new line in exactly the iterations that one does (the same offset in its
 * line), so H tests the class once (mm512's eight A loads, 2 KiB apart: one test, not eight).
 * lead[k]: the class's first item (k for it; -1 when k is not filtered); off[k]: k's address -
 * the leader's. */
static void crossing_classes(hooks *h, const item_list *items, int *lead, int64_t *off) {
  LLVMValueRef *addrs = malloc(sizeof *addrs * (size_t)(items->n + 1));
  int *base_of = malloc(sizeof *base_of * (size_t)(items->n + 1));
  int64_t *base_off = malloc(sizeof *base_off * (size_t)(items->n + 1));
  for (int k = 0; k < items->n; k++) addrs[k] = items->v[k].filter ? items->v[k].addr : NULL;
  pa_address_bases(h->td, addrs, items->n, base_of, base_off);
  for (int k = 0; k < items->n; k++) {
    const pa_filtered_access *f = items->v[k].filter;
    lead[k] = f ? k : -1, off[k] = 0;
    for (int j = 0; f && j < k && lead[k] == k; j++) {
      const pa_filtered_access *g = items->v[j].filter;
      if (lead[j] == j && base_of[j] == base_of[k] && g->stride == f->stride && g->first == f->first &&
          ((base_off[k] - base_off[j]) & (PA_LINE_BYTES - 1)) == 0)
        lead[k] = j, off[k] = base_off[k] - base_off[j];
    }
  }
  free(addrs), free(base_of), free(base_off);
}

/* The block's body moves into a new block H placed before it (predecessors now branch to
 * H, and phis move with the body, so the original block keeps only its terminator and its
 * identity for the successors' phis). H stores each access's address (and a memory
 * intrinsic's length) in the thread's buffer and tests its lines against the thread's limit;
 * line-filtered accesses (fa) only test whether their line changed, and H counts them all as
 * repeats. Only when one test passes does H call __pa_block once with the block's descriptor
 * (a constant: items, function, repeat bin, then per item its flags and bytes, and a filtered
 * item's stride): the runtime repeats each item's test in program order against the current
 * limit (a hooked access may start or end a burst), feeds the hooked ones to the tracker and
 * takes back the repeats that crossed. No hash outlives H, so the kernel's registers do not
 * spill for them, and the slow path is one call, not one per access. */
static void instrument_sampled(hooks *h, LLVMValueRef fn, LLVMBasicBlockRef bb, LLVMValueRef *mem, int n_mem,
                               const pa_filtered_access *fa, int n_fa, bool cold) {
  move_body_to_head(h, fn, bb);
  item_list items = {0};
  for (int k = 0; k < n_mem; k++) {
    int before = items.n;
    items_of(h, mem[k], &items);
    const pa_filtered_access *x = filter_of(fa, n_fa, mem[k]);
    if (x && items.n == before + 1) items.v[before].filter = x;
  }
  /* A cold block without line-filtered items (pa_hook_opts.inline_cold) tests nothing inline:
   * every item's bit is bit 0, which is always passed, so __pa_block tests each one as it
   * would after inline tests (it repeats them; those that failed would fail again). */
  bool out_of_line = cold && items.n > 0;
  for (int k = 0; k < items.n; k++) out_of_line &= !items.v[k].filter;
  LLVMValueRef limit = out_of_line ? NULL : LLVMBuildLoad2(h->b, h->i64, h->state, "pa.limit");
  /* the words the slow path stores in the thread's buffer (addresses, lengths) before its call */
  slow_word *words_out = malloc(sizeof *words_out * (size_t)(2 * items.n + 1));
  int words_n = PA_DESC_HEADER + PA_DESC_ITEM * items.n + (items.n <= 64 ? 64 : 0);
  uint64_t *desc = calloc((size_t)words_n, sizeof *desc);
  /* accesses tested together (line_groups.c): static sizes, not filtered */
  LLVMValueRef *addrs = malloc(sizeof *addrs * (size_t)items.n), *ai = malloc(sizeof *ai * (size_t)items.n);
  uint64_t *group_bytes = malloc(sizeof *group_bytes * (size_t)items.n);
  int *group_of = malloc(sizeof *group_of * (size_t)items.n), *bit_of_group = malloc(sizeof *bit_of_group * (size_t)items.n);
  int64_t *base_off = malloc(sizeof *base_off * (size_t)items.n);
  pa_line_group *groups = malloc(sizeof *groups * (size_t)items.n);
  LLVMValueRef *base_ints = calloc((size_t)items.n + 1, sizeof *base_ints); /* by base group, built once */
  /* a tracked local's access (locals.c) has no line test: its lines are tracked at weight 1, so
   * every access goes to the runtime (nor is it grouped with others) */
  bool *local = malloc(sizeof *local * ((size_t)items.n + 1));
  for (int k = 0; k < items.n; k++) {
    addrs[k] = items.v[k].addr;
    local[k] = !items.v[k].bytes_value && pa_tracked_local_access(h->tracked, items.v[k].addr);
    group_bytes[k] = items.v[k].filter || items.v[k].bytes_value || local[k] ? 0 : items.v[k].bytes;
  }
  int n_groups = pa_line_groups(h->td, addrs, group_bytes, items.n, group_of, base_off, groups);
  int *bit2_of_group = malloc(sizeof *bit2_of_group * (size_t)(items.n + 1)), *gs = malloc(sizeof *gs * (size_t)(items.n + 1));
  for (int g = 0; g < n_groups; g++) bit_of_group[g] = bit2_of_group[g] = -1;
  LLVMValueRef passed = NULL, first = NULL; /* passed: bit b < 63 the b-th test, bit 63 any later one */
  crossing_item *cross = malloc(sizeof *cross * (size_t)(items.n + 1)); /* filtered items' */
  LLVMValueRef *cross_of = malloc(sizeof *cross_of * (size_t)(items.n + 1)); /* by item */
  int *lead = malloc(sizeof *lead * (size_t)(items.n + 1)), n_cross = 0;
  int64_t *lead_off = malloc(sizeof *lead_off * (size_t)(items.n + 1));
  crossing_classes(h, &items, lead, lead_off);
  int n_filtered = 0, bin = 0, slot = 0, n_bits = 0;
  for (int k = 0; k < items.n; k++) {
    access_item *it = &items.v[k];
    int g = group_of[k], n = 0;
    uint64_t *d = &desc[PA_DESC_HEADER + PA_DESC_ITEM * k];
    d[0] = it->bytes & PA_DESC_BYTES, d[1] = 0, d[2] = (uint64_t)slot;
    if (g >= 0) { /* its base's leader's address + a constant, computed on the slow path */
      ai[k] = NULL;
      words_out[slot++] = (slow_word){.base = items.v[groups[groups[g].base].leader].addr, .off = base_off[k]};
    } else if (it->filter && lead[k] != k) { /* its crossing class's leader's + a constant */
      ai[k] = NULL;
      words_out[slot++] = (slow_word){.base_int = items.v[lead[k]].filter->addr, .off = lead_off[k]};
    } else {
      ai[k] = it->filter ? it->filter->addr : LLVMBuildPtrToInt(h->b, it->addr, h->i64, "");
      words_out[slot++] = (slow_word){.value = ai[k]};
    }
    if (it->mask) { /* tested inline as the whole vector (or lane); the runtime takes the active lanes */
      words_out[slot++] = (slow_word){.masked = it};
      d[0] |= PA_DESC_MASKED, d[1] = it->lane_bytes;
    }
    LLVMValueRef c = NULL;
    if (out_of_line) { /* the flags its inline test would leave; bit 0 (d[3]) */
      if (it->bytes_value) words_out[slot++] = (slow_word){.value = it->bytes_value}, d[0] = PA_DESC_DYNAMIC | PA_DESC_ALWAYS;
      else if (g < 0) d[0] |= PA_DESC_ALWAYS; /* 0 bytes, over 4 lines or a tracked local: no inline test either */
      continue;
    }
    if (g >= 0 && bit_of_group[g] >= 0) { /* its group's test, built at the group's first item */
      d[3] = (uint64_t)bit_of_group[g];
      continue;
    }
    if (it->bytes_value) { /* a memory intrinsic: its length follows, and it is always hooked */
      words_out[slot++] = (slow_word){.value = it->bytes_value};
      d[0] = PA_DESC_DYNAMIC | PA_DESC_ALWAYS;
    } else if (it->filter) { /* H only tests for a line change, once per crossing class */
      c = cross_of[k] = lead[k] == k ? line_crossed(h, it->filter) : cross_of[lead[k]];
      d[0] |= PA_DESC_FILTERED | (local[k] ? PA_DESC_ALWAYS : 0), d[1] = (uint64_t)it->filter->stride;
      first = it->filter->first, n_filtered++, bin = it->filter->bin;
    } else if (g >= 0 && items.n <= 64 && (n = vector_groups(groups, n_groups, groups[g].base, gs)) && 2 * n + n_bits <= 63) {
      passed = or_bits(h, passed, groups_sampled(h, base_int(h, &items, groups, g, base_ints), groups, gs, n, limit, n_bits));
      for (int i = 0; i < n; i++) bit_of_group[gs[i]] = n_bits + 2 * i, bit2_of_group[gs[i]] = n_bits + 2 * i + 1;
      n_bits += 2 * n;
      d[3] = (uint64_t)bit_of_group[g];
      continue;
    } else if (g >= 0) { /* the lines of the whole group, from its leader's address (its base's + a constant) */
      const pa_line_group *lg = &groups[g];
      LLVMValueRef lead = base_int(h, &items, groups, g, base_ints);
      if (lg->off) lead = LLVMBuildAdd(h->b, lead, LLVMConstInt(h->i64, (unsigned long long)lg->off, 0), "");
      c = lg->n_items == 1 ? lines_sampled(h, lead, it->bytes, it->align, limit) : lines_sampled(h, lead, lg->bytes, 1, limit);
    }
    if (!c && !it->filter) d[0] |= PA_DESC_ALWAYS;
    int b = n_bits < 63 ? n_bits : 63;
    n_bits++;
    d[3] = (uint64_t)b;
    if (g >= 0) bit_of_group[g] = b;
    LLVMValueRef bit = LLVMConstInt(h->i64, 1ULL << b, 0);
    if (it->filter) { /* its line's test waits for a crossing (below) */
      cross[n_cross++] = (crossing_item){.cross = c, .lead_addr = items.v[lead[k]].filter->addr, .bit = bit,
                                         .lines = lead_off[k] / PA_LINE_BYTES, .always = local[k]};
      continue;
    }
    if (c) bit = LLVMBuildSelect(h->b, c, bit, LLVMConstInt(h->i64, 0, 0), "");
    passed = or_bits(h, passed, bit);
  }
  for (int k = 0; k < items.n && items.n <= 64; k++) /* the items each bit stands for */
    if (group_of[k] >= 0 && bit2_of_group[group_of[k]] >= 0)
      desc[PA_DESC_HEADER + PA_DESC_ITEM * items.n + bit2_of_group[group_of[k]]] |= 1ULL << k;
  free(addrs), free(ai), free(group_bytes), free(group_of), free(base_off), free(bit_of_group), free(bit2_of_group), free(gs),
      free(groups), free(base_ints), free(cross_of), free(lead), free(lead_off), free(local);
  /* every filtered access counts as a repeat here; the slow path takes back those that crossed */
  if (n_filtered) passed = crossings(h, fn, cross, n_cross, passed, limit, bin);
  free(cross);
  if (out_of_line) passed = LLVMConstInt(h->i64, 1, 0);
  if (!passed) { /* nothing to hook after all */
    LLVMBuildBr(h->b, bb);
    free(items.v), free(desc), free(words_out);
    return;
  }
  desc[0] = (uint64_t)items.n, desc[1] = (uint64_t)h->fid, desc[2] = (uint64_t)bin;
  for (int k = 0; k < items.n && items.n <= 64; k++) /* the items each bit stands for */
    desc[PA_DESC_HEADER + PA_DESC_ITEM * items.n + desc[PA_DESC_HEADER + PA_DESC_ITEM * k + 3]] |= 1ULL << k;
  LLVMValueRef *words = malloc(sizeof *words * (size_t)words_n);
  for (int k = 0; k < words_n; k++) words[k] = LLVMConstInt(h->i64, desc[k], 0);
  LLVMValueRef table = LLVMConstArray2(h->i64, words, (uint64_t)words_n);
  LLVMValueRef g = LLVMAddGlobal(LLVMGetGlobalParent(fn), LLVMTypeOf(table), "pa.desc");
  LLVMSetInitializer(g, table);
  LLVMSetGlobalConstant(g, 1);
  LLVMSetLinkage(g, LLVMPrivateLinkage);
  LLVMSetUnnamedAddress(g, LLVMGlobalUnnamedAddr);
  LLVMBasicBlockRef slow = LLVMAppendBasicBlockInContext(h->ctx, fn, "pa.slow");
  if (out_of_line)
    LLVMBuildBr(h->b, slow);
  else {
    LLVMValueRef any = LLVMBuildICmp(h->b, LLVMIntNE, passed, LLVMConstInt(h->i64, 0, 0), "");
    mark_unlikely(h, LLVMBuildCondBr(h->b, any, slow, bb));
  }
  LLVMPositionBuilderAtEnd(h->b, slow);
  LLVMValueRef buf = LLVMBuildLoad2(h->b, h->ptr, state_word(h, PA_BUF_OFFSET_BUF), "pa.buf");
  for (int w = 0; w < slot; w++) {
    slow_word *sw = &words_out[w];
    LLVMValueRef at = LLVMConstInt(h->i64, (unsigned long long)w, 0), v = sw->value;
    if (sw->masked) v = mask_bits(h, sw->masked); /* built here: H pays nothing for the mask */
    else if (!v) { /* the base's address as an integer, built once */
      for (int u = 0; u < w && !sw->base_int; u++)
        if (words_out[u].base && words_out[u].base == sw->base) sw->base_int = words_out[u].base_int;
      if (!sw->base_int) sw->base_int = LLVMBuildPtrToInt(h->b, sw->base, h->i64, "");
      v = sw->off ? LLVMBuildAdd(h->b, sw->base_int, LLVMConstInt(h->i64, (unsigned long long)sw->off, 0), "") : sw->base_int;
    }
    LLVMBuildStore(h->b, v, LLVMBuildGEP2(h->b, h->i64, buf, &at, 1, ""));
  }
  free(words_out);
  LLVMValueRef args[4] = {h->state, g, passed, first ? LLVMBuildZExt(h->b, first, h->i64, "") : LLVMConstInt(h->i64, 0, 0)};
  LLVMBuildCall2(h->b, h->block_ty, h->block, args, 4, "");
  LLVMBuildBr(h->b, bb);
  free(items.v), free(desc), free(words);
}

/* Stores each access item of memory instruction `in` into the thread's buffer as two words,
 * its address and (bytes << 16 | function), at pos + 2k onwards; returns k past its items. */
static int buffer_items(hooks *h, LLVMValueRef in, LLVMValueRef pos, LLVMValueRef buf, int k) {
  item_list items = {0};
  items_of(h, in, &items);
  for (int i = 0; i < items.n; i++, k++) {
    const access_item *it = &items.v[i];
    LLVMValueRef bytes = it->bytes_value, off = NULL, addr = LLVMBuildPtrToInt(h->b, it->addr, h->i64, "");
    if (it->mask) masked_span(h, it, &off, &bytes), addr = LLVMBuildAdd(h->b, addr, off, ""); /* 0 bytes: flush skips it */
    LLVMValueRef meta = bytes ? LLVMBuildOr(h->b, LLVMBuildShl(h->b, bytes, LLVMConstInt(h->i64, 16, 0), ""),
                                            LLVMConstInt(h->i64, (unsigned long long)h->fid, 0), "")
                              : LLVMConstInt(h->i64, (it->bytes << 16) | (uint64_t)h->fid, 0);
    LLVMValueRef at = LLVMBuildAdd(h->b, pos, LLVMConstInt(h->i64, 2 * (unsigned long long)k, 0), "");
    LLVMValueRef at1 = LLVMBuildAdd(h->b, at, LLVMConstInt(h->i64, 1, 0), "");
    LLVMBuildStore(h->b, addr, LLVMBuildGEP2(h->b, h->i64, buf, &at, 1, ""));
    LLVMBuildStore(h->b, meta, LLVMBuildGEP2(h->b, h->i64, buf, &at1, 1, ""));
  }
  free(items.v);
  return k;
}

/* Rate 1: the block's body moves into a new block H before it (as in instrument_sampled);
 * before each access H stores its address and (bytes << 16 | function) at the thread's
 * buffer position, and at its end advances the position and, past PA_BUF_WORDS, calls the
 * flush hook. No call per access, so the kernel's vector registers stay live. */
static void instrument_buffered(hooks *h, LLVMValueRef fn, LLVMBasicBlockRef bb, LLVMValueRef *mem, int n_mem) {
  LLVMBasicBlockRef head = LLVMInsertBasicBlockInContext(h->ctx, bb, "pa.body");
  redirect_preds(fn, bb, head);
  LLVMValueRef term = LLVMGetBasicBlockTerminator(bb);
  LLVMPositionBuilderAtEnd(h->b, head);
  LLVMValueRef first_mem = mem[0], pos = NULL, buf = NULL;
  int k = 0;
  for (LLVMValueRef in = LLVMGetFirstInstruction(bb), next; in && in != term; in = next) {
    next = LLVMGetNextInstruction(in);
    LLVMInstructionRemoveFromParent(in);
    if (in == first_mem) { /* the position and buffer, read once, after the phis */
      LLVMValueRef off = LLVMConstInt(h->i64, PA_BUF_OFFSET_POS, 0), offb = LLVMConstInt(h->i64, PA_BUF_OFFSET_BUF, 0);
      pos = LLVMBuildLoad2(h->b, h->i64, LLVMBuildGEP2(h->b, LLVMInt8TypeInContext(h->ctx), h->state, &off, 1, ""), "pa.pos");
      buf = LLVMBuildLoad2(h->b, h->ptr, LLVMBuildGEP2(h->b, LLVMInt8TypeInContext(h->ctx), h->state, &offb, 1, ""), "pa.buf");
    }
    bool is_mem = false;
    for (int j = 0; j < n_mem && !is_mem; j++) is_mem = mem[j] == in;
    if (is_mem) {
      k = buffer_items(h, in, pos, buf, k);
    }
    LLVMInsertIntoBuilder(h->b, in);
  }
  LLVMValueRef off = LLVMConstInt(h->i64, PA_BUF_OFFSET_POS, 0);
  LLVMValueRef pos_ptr = LLVMBuildGEP2(h->b, LLVMInt8TypeInContext(h->ctx), h->state, &off, 1, "");
  LLVMValueRef npos = LLVMBuildAdd(h->b, pos, LLVMConstInt(h->i64, 2 * (unsigned long long)k, 0), "");
  LLVMBuildStore(h->b, npos, pos_ptr);
  LLVMValueRef full = LLVMBuildICmp(h->b, LLVMIntUGT, npos, LLVMConstInt(h->i64, PA_BUF_WORDS, 0), "");
  LLVMBasicBlockRef flush = LLVMAppendBasicBlockInContext(h->ctx, fn, "pa.flush");
  LLVMBuildCondBr(h->b, full, flush, bb);
  LLVMPositionBuilderAtEnd(h->b, flush);
  LLVMBuildCall2(h->b, h->flush_ty, h->flush, &h->state, 1, "");
  LLVMBuildBr(h->b, bb);
}

static int count_items(LLVMTargetDataRef td, LLVMValueRef *mem, int n_mem);

/* Windowed: the body moves into H (as in instrument_sampled), untouched. H then counts the
 * thread's gate down by the block's accesses, so time is counted in accesses (calling
 * __pa_phase when it passes zero: a window starts or ends) and,
 * only while `recording` is set, branches to a block that appends the block's accesses to the
 * buffer as instrument_buffered does (addresses are SSA values, so they are all available at
 * the end of H, and their order in the buffer is the program order). Outside windows a block
 * costs a load, a store and two branches. */
static void instrument_gated(hooks *h, LLVMValueRef fn, LLVMBasicBlockRef bb, LLVMValueRef *mem, int n_mem) {
  move_body_to_head(h, fn, bb);
  LLVMValueRef gate_ptr = state_word(h, PA_GATE_OFFSET);
  LLVMValueRef weight = LLVMConstInt(h->i64, (unsigned long long)count_items(h->td, mem, n_mem), 0);
  LLVMValueRef g = LLVMBuildSub(h->b, LLVMBuildLoad2(h->b, h->i64, gate_ptr, "pa.gate"), weight, "");
  LLVMBuildStore(h->b, g, gate_ptr);
  LLVMBasicBlockRef phase = LLVMAppendBasicBlockInContext(h->ctx, fn, "pa.phase");
  LLVMBasicBlockRef check = LLVMAppendBasicBlockInContext(h->ctx, fn, "pa.window");
  LLVMBasicBlockRef record = LLVMAppendBasicBlockInContext(h->ctx, fn, "pa.record");
  LLVMBasicBlockRef flush = LLVMAppendBasicBlockInContext(h->ctx, fn, "pa.flush");
  LLVMBuildCondBr(h->b, LLVMBuildICmp(h->b, LLVMIntSLT, g, LLVMConstInt(h->i64, 0, 0), ""), phase, check);
  LLVMPositionBuilderAtEnd(h->b, phase);
  LLVMBuildCall2(h->b, h->flush_ty, h->phase, &h->state, 1, "");
  LLVMBuildBr(h->b, check);
  LLVMPositionBuilderAtEnd(h->b, check);
  LLVMValueRef rec = LLVMBuildLoad2(h->b, h->i64, state_word(h, PA_RECORDING_OFFSET), "pa.recording");
  LLVMBuildCondBr(h->b, LLVMBuildICmp(h->b, LLVMIntNE, rec, LLVMConstInt(h->i64, 0, 0), ""), record, bb);
  LLVMPositionBuilderAtEnd(h->b, record);
  LLVMValueRef pos_ptr = state_word(h, PA_BUF_OFFSET_POS);
  LLVMValueRef pos = LLVMBuildLoad2(h->b, h->i64, pos_ptr, "pa.pos");
  LLVMValueRef buf = LLVMBuildLoad2(h->b, h->ptr, state_word(h, PA_BUF_OFFSET_BUF), "pa.buf");
  int k = 0;
  for (int j = 0; j < n_mem; j++) k = buffer_items(h, mem[j], pos, buf, k);
  LLVMValueRef npos = LLVMBuildAdd(h->b, pos, LLVMConstInt(h->i64, 2 * (unsigned long long)k, 0), "");
  LLVMBuildStore(h->b, npos, pos_ptr);
  LLVMValueRef full = LLVMBuildICmp(h->b, LLVMIntUGT, npos, LLVMConstInt(h->i64, PA_BUF_WORDS, 0), "");
  LLVMBuildCondBr(h->b, full, flush, bb);
  LLVMPositionBuilderAtEnd(h->b, flush);
  LLVMBuildCall2(h->b, h->flush_ty, h->flush, &h->state, 1, "");
  LLVMBuildBr(h->b, bb);
}

/* Items (hooked accesses) of a block, as items_of counts them without building anything (a
 * constant mask's inactive lanes make none). */
static int count_items(LLVMTargetDataRef td, LLVMValueRef *mem, int n_mem) {
  int n = 0;
  for (int k = 0; k < n_mem; k++) {
    const char *c = LLVMGetInstructionOpcode(mem[k]) == LLVMCall ? pa_callee_name(mem[k]) : "";
    pa_masked m;
    if (pa_masked_of(td, mem[k], &m)) n += pa_masked_items(&m);
    else if (strncmp(c, "llvm.memcpy.", 12) == 0 || strncmp(c, "llvm.memmove.", 13) == 0) n += 2;
    else n += 1;
  }
  return n;
}

/* A block with outgoing calls: one unconditional hook before each access. */
static void instrument_direct(hooks *h, LLVMValueRef *mem, int n_mem) {
  for (int k = 0; k < n_mem; k++) {
    LLVMPositionBuilderBefore(h->b, mem[k]);
    item_list items = {0};
    items_of(h, mem[k], &items);
    for (int i = 0; i < items.n; i++) call_access(h, &items.v[i]);
    free(items.v);
  }
}

/* Cold blocks of f (pa_hook_opts.inline_cold): a block's executions per call estimated as
 * the product of its loops' trip counts (64 where one is not static, as for a parallel body's
 * chunk loop: only ratios within f matter), against f's busiest block's. */
static void cold_blocks(const pa_function *f, bool *cold) {
  double *freq = malloc(sizeof *freq * (size_t)(f->n_blocks + 1)), most = 0;
  if (!freq) return; /* none cold: the inline tests, the same profile */
  for (int b = 0; b < f->n_blocks; b++) {
    freq[b] = 1;
    for (int l = f->blocks[b].loop; l >= 0; l = f->loops[l].parent)
      freq[b] *= f->loops[l].trip_count > 0 ? (double)f->loops[l].trip_count : 64;
    if (freq[b] > most) most = freq[b];
  }
  for (int b = 0; b < f->n_blocks; b++) cold[b] = freq[b] * PA_COLD_RATIO <= most;
  free(freq);
}

int pa_instrument(LLVMModuleRef mod, const pa_hook_opts *o, int64_t *locals_bytes, uint64_t **locals_map, pt_diag *d) {
  pa_hook_mode mode = o->mode;
  const bool *count_blocks = o->count_blocks;
  const pa_profile *line_filter = o->line_filter ? o->profile : NULL;
  bool memory_hooks = mode != PA_HOOKS_NONE;
  LLVMValueRef *fns;
  int nf = pa_defined_functions(mod, &fns);
  hooks h = {0};
  h.ctx = LLVMGetModuleContext(mod);
  h.b = LLVMCreateBuilderInContext(h.ctx);
  h.td = LLVMGetModuleDataLayout(mod);
  h.i1 = LLVMInt1TypeInContext(h.ctx);
  h.i32 = LLVMInt32TypeInContext(h.ctx);
  h.i64 = LLVMInt64TypeInContext(h.ctx);
  h.ptr = LLVMPointerTypeInContext(h.ctx, 0);
  LLVMValueRef rt = LLVMAddGlobal(mod, LLVMInt8TypeInContext(h.ctx), PA_SYM_CTX);
  LLVMTypeRef enter_params[2] = {h.ptr, h.i32};
  LLVMTypeRef enter_ty = LLVMFunctionType(h.ptr, enter_params, 2, 0);
  LLVMValueRef enter = LLVMAddFunction(mod, PA_SYM_ENTER, enter_ty);
  LLVMTypeRef access_params[4] = {h.ptr, h.ptr, h.i64, h.i32};
  h.access_ty = LLVMFunctionType(LLVMVoidTypeInContext(h.ctx), access_params, 4, 0);
  h.access = LLVMAddFunction(mod, PA_SYM_ACCESS, h.access_ty);
  h.flush_ty = LLVMFunctionType(LLVMVoidTypeInContext(h.ctx), &h.ptr, 1, 0);
  h.flush = LLVMAddFunction(mod, PA_SYM_FLUSH, h.flush_ty);
  h.phase = mode == PA_HOOKS_WINDOWED ? LLVMAddFunction(mod, PA_SYM_PHASE, h.flush_ty) : NULL;
  LLVMTypeRef block_params[4] = {h.ptr, h.ptr, h.i64, h.i64};
  h.block_ty = LLVMFunctionType(LLVMVoidTypeInContext(h.ctx), block_params, 4, 0);
  h.block = mode == PA_HOOKS_FILTERED ? LLVMAddFunction(mod, PA_SYM_BLOCK, h.block_ty) : NULL;
  /* The hooks write memory, so a function may no longer promise `memory(argmem: ...)`. */
  unsigned memory_attr = LLVMGetEnumAttributeKindForName("memory", 6);
  int base = 0;
  LLVMValueRef *states = malloc(sizeof *states * (size_t)(nf + 1));
  /* sampled runs track the locals whose every access the hooks see at weight 1 (reuse.c) */
  pa_tracked_locals *tracked = mode == PA_HOOKS_FILTERED && locals_map ? pa_tracked_locals_new(h.td, fns, nf) : NULL;
  h.tracked = tracked;
  for (int fi = 0; fi < nf; fi++) {
    LLVMValueRef fn = fns[fi];
    h.fid = fi;
    LLVMRemoveEnumAttributeAtIndex(fn, LLVMAttributeFunctionIndex, memory_attr);
    int n_blocks = (int)LLVMCountBasicBlocks(fn);
    LLVMBasicBlockRef *blocks = malloc(sizeof *blocks * (size_t)(n_blocks + 1));
    LLVMGetBasicBlocks(fn, blocks); /* before instrumentation adds blocks */
    pa_filtered_access *filtered = NULL; /* planned first: it matches the profile's nodes by position */
    int n_filtered = line_filter && mode == PA_HOOKS_FILTERED && fi < line_filter->n_functions
                         ? pa_line_filter_plan(h.b, fn, &line_filter->functions[fi], &filtered)
                         : 0;
    /* innermost loops' block counters added at their exits, planned before any block moves */
    bool counted = !count_blocks || count_blocks[fi];
    pa_loop_counters *carried = counted && !o->counters_in_memory && o->profile && fi < o->profile->n_functions
                                    ? pa_loop_counters_plan(h.b, fn, &o->profile->functions[fi])
                                    : NULL;
    /* the profile's blocks are the function's, in order */
    bool *cold = calloc((size_t)n_blocks + 1, sizeof *cold);
    if (cold && mode == PA_HOOKS_FILTERED && !o->inline_cold && o->profile && fi < o->profile->n_functions &&
        o->profile->functions[fi].n_blocks == n_blocks)
      cold_blocks(&o->profile->functions[fi], cold);
    LLVMPositionBuilderBefore(h.b, LLVMGetFirstInstruction(blocks[0]));
    LLVMValueRef enter_args[2] = {rt, LLVMConstInt(h.i32, (unsigned long long)fi, 0)};
    h.state = LLVMBuildCall2(h.b, enter_ty, enter, enter_args, 2, "pa.state");
    h.counts = LLVMBuildLoad2(h.b, h.ptr, state_word(&h, PA_COUNTS_OFFSET), "pa.counts");
    for (int bi = 0; bi < n_blocks; bi++) {
      LLVMBasicBlockRef bb = blocks[bi];
      /* Collect first: the hooks insert instructions into the list we walk. */
      int n = 0, cap = 16;
      bool direct = false;
      LLVMValueRef *mem = malloc(sizeof *mem * (size_t)cap);
      for (LLVMValueRef in = LLVMGetFirstInstruction(bb); in; in = LLVMGetNextInstruction(in)) {
        if (in == h.state || in == h.counts) continue;
        if (LLVMGetInstructionOpcode(in) == LLVMCall) {
          LLVMValueRef callee = LLVMGetCalledValue(in);
          if (callee && LLVMIsAFunction(callee) && !LLVMIsDeclaration(callee))
            LLVMRemoveCallSiteEnumAttribute(in, LLVMAttributeFunctionIndex, memory_attr);
        }
        direct |= calls_out(in) || LLVMIsALandingPadInst(in) || LLVMGetInstructionOpcode(in) == LLVMCatchPad ||
                  LLVMGetInstructionOpcode(in) == LLVMCleanupPad || LLVMGetInstructionOpcode(in) == LLVMCatchSwitch;
        if (!memory_hooks || !is_memory(in)) continue;
        if (n == cap) mem = realloc(mem, sizeof *mem * (size_t)(cap *= 2));
        mem[n++] = in;
      }
      if (bi == 0 || !count_blocks || count_blocks[fi]) {
        LLVMValueRef first = LLVMGetFirstInstruction(bb);
        while (first && (LLVMIsAPHINode(first) || LLVMIsALandingPadInst(first))) first = LLVMGetNextInstruction(first);
        if (bi == 0) first = LLVMGetNextInstruction(h.counts); /* after the entry hook and its load */
        LLVMPositionBuilderBefore(h.b, first);
        /* the thread's own counter, a plain add: a locked one per block cost mm512's and bert_qkv's
         * runs 4-6% of their thread CPU (docs/validation.md, "Session 17"); in an innermost
         * loop's register, added at its exit, where loop_counters.c carries it */
        if (!pa_loop_counters_count(carried, bi)) {
          LLVMValueRef idx = LLVMConstInt(h.i64, (unsigned long long)(base + bi), 0);
          LLVMValueRef slot = LLVMBuildInBoundsGEP2(h.b, h.i64, h.counts, &idx, 1, "");
          LLVMBuildStore(h.b, LLVMBuildAdd(h.b, LLVMBuildLoad2(h.b, h.i64, slot, ""), LLVMConstInt(h.i64, 1, 0), ""), slot);
        }
      }
      int n_items = n ? count_items(h.td, mem, n) : 0;
      bool buffered = (mode == PA_HOOKS_BUFFERED || mode == PA_HOOKS_WINDOWED) && !direct && fi < (1 << 16) && n &&
                      n_items <= PA_BUF_MAX_ITEMS;
      if (buffered && mode == PA_HOOKS_WINDOWED) instrument_gated(&h, fn, bb, mem, n);
      else if (buffered) instrument_buffered(&h, fn, bb, mem, n);
      else if (n && (direct || mode != PA_HOOKS_FILTERED || 2 * n_items > PA_BUF_WORDS))
        instrument_direct(&h, mem, n);
      else if (n) instrument_sampled(&h, fn, bb, mem, n, filtered, n_filtered, cold && cold[bi]);
      free(mem);
    }
    pa_loop_counters_finish(carried, h.b, h.counts, base);
    pa_loop_counters_free(carried);
    states[fi] = h.state;
    base += n_blocks;
    free(blocks);
    free(cold);
    free(filtered);
  }
  /* after the hooks: the region's word is read by no hooked load */
  if (locals_map) *locals_map = NULL;
  *locals_bytes = memory_hooks ? pa_move_locals(h.b, h.td, fns, states, nf, tracked, locals_map) : 0;
  pa_tracked_locals_free(tracked);
  free(states);
  LLVMDisposeBuilder(h.b);
  free(fns);
  (void)d;
  return PT_OK;
}

static bool arg_matches(const pa_arg *a, LLVMTypeRef t) {
  LLVMTypeKind k = LLVMGetTypeKind(t);
  if (a->kind != PA_ARG_SCALAR) return k == LLVMPointerTypeKind;
  switch (a->type) {
  case PA_T_F32: return k == LLVMFloatTypeKind;
  case PA_T_F64: return k == LLVMDoubleTypeKind;
  case PA_T_I8: return k == LLVMIntegerTypeKind && LLVMGetIntTypeWidth(t) == 8;
  case PA_T_I16: return k == LLVMIntegerTypeKind && LLVMGetIntTypeWidth(t) == 16;
  case PA_T_I32: return k == LLVMIntegerTypeKind && LLVMGetIntTypeWidth(t) == 32;
  case PA_T_I64: return k == LLVMIntegerTypeKind && LLVMGetIntTypeWidth(t) == 64;
  }
  return false;
}

static char *type_text(LLVMTypeRef t) { return LLVMPrintTypeToString(t); }

int pa_spec_check(LLVMModuleRef mod, const char *source, const pa_run_spec *spec, pt_diag *d) {
  LLVMValueRef entry = LLVMGetNamedFunction(mod, spec->entry);
  if (!entry || LLVMIsDeclaration(entry))
    return pt_fail(d, PT_ERR_INPUT, "%s: entry function '%s' is not defined in the module", source, spec->entry);
  LLVMTypeRef fty = LLVMGlobalGetValueType(entry);
  unsigned np = LLVMCountParamTypes(fty);
  if (LLVMIsFunctionVarArg(fty)) return pt_fail(d, PT_ERR_UNSUPPORTED, "%s: entry '%s' is variadic", source, spec->entry);
  if ((int)np != spec->n_args)
    return pt_fail(d, PT_ERR_INPUT, "%s: run spec gives %d argument(s) but '%s' takes %u", source, spec->n_args,
                  spec->entry, np);
  LLVMTypeRef *pts = malloc(sizeof *pts * (np + 1));
  LLVMGetParamTypes(fty, pts);
  int err = PT_OK;
  for (unsigned i = 0; i < np && !err; i++)
    if (!arg_matches(&spec->args[i], pts[i])) {
      char *t = type_text(pts[i]);
      err = pt_fail(d, PT_ERR_INPUT, "%s: run spec args[%u] does not match parameter %u of '%s', of type %s", source,
                    i, i, spec->entry, t);
      LLVMDisposeMessage(t);
    }
  free(pts);
  return err;
}

int pa_add_main_wrapper(LLVMModuleRef mod, const pa_run_spec *spec, pt_diag *d) {
  int err = pa_spec_check(mod, "module", spec, d);
  if (err) return err;
  LLVMValueRef entry = LLVMGetNamedFunction(mod, spec->entry);
  LLVMTypeRef fty = LLVMGlobalGetValueType(entry);
  unsigned np = LLVMCountParamTypes(fty);
  LLVMTypeRef *pts = malloc(sizeof *pts * (np + 1));
  LLVMGetParamTypes(fty, pts);
  LLVMContextRef ctx = LLVMGetModuleContext(mod);
  LLVMTypeRef ptr = LLVMPointerTypeInContext(ctx, 0), i64 = LLVMInt64TypeInContext(ctx);
  LLVMTypeRef wty = LLVMFunctionType(LLVMVoidTypeInContext(ctx), &ptr, 1, 0);
  LLVMValueRef w = LLVMAddFunction(mod, PA_SYM_MAIN, wty);
  LLVMBuilderRef b = LLVMCreateBuilderInContext(ctx);
  LLVMPositionBuilderAtEnd(b, LLVMAppendBasicBlockInContext(ctx, w, "entry"));
  LLVMValueRef *args = malloc(sizeof *args * (np + 1));
  for (unsigned i = 0; i < np; i++) {
    LLVMValueRef idx = LLVMConstInt(i64, i, 0);
    LLVMValueRef slot = LLVMBuildGEP2(b, i64, LLVMGetParam(w, 0), &idx, 1, "");
    args[i] = LLVMBuildLoad2(b, pts[i], slot, ""); /* slots are 8 bytes, values little-endian */
  }
  LLVMBuildCall2(b, fty, entry, args, np, "");
  LLVMBuildRetVoid(b);
  LLVMDisposeBuilder(b);
  free(args);
  free(pts);
  return PT_OK;
}
