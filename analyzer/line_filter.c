/* The per-reference line filter of the sampled run (pa_options.line_filter): which loads and
 * stores may skip the reuse tracker while they touch the line they touched in the previous
 * iteration, and the IR the test needs (the address as an integer, a first-iteration flag). Runs on the uninstrumented function, before
 * instrument.c moves any block's body, with the static profile's loops and strides.
 *
 * A repeated access is a reuse of a line the same reference touched one iteration earlier, so
 * its distance is below the line accesses of one iteration of the loop; in an innermost loop
 * without calls that is a static count (each block runs at most once per iteration). Only
 * loops whose count is at most MAX_BODY_LINES are filtered, so every repeat lies below 64
 * lines, under any cache the profile is asked about (docs/design.md, "Line filter"). */
#include <stdlib.h>
#include <string.h>

#include <llvm-c/Target.h>

#include "internal.h"

#define MAX_BODY_LINES 64 /* line accesses per iteration of a filtered loop, at most */
#define MAX_STRIDE 64     /* |bytes per iteration| below a line: the line repeats */

static bool one_line(uint64_t bytes, unsigned align) {
  return bytes && bytes <= PA_LINE_BYTES && (bytes & (bytes - 1)) == 0 && align >= bytes;
}

/* Lines instruction `in` may touch per execution, as instrument.c hooks it (0 for none; a
 * masked access whose mask is not a constant: its whole vector's, a bound);
 * -1 when the loop holding it cannot be filtered (a call out, a memory intrinsic of variable
 * size, exception handling). */
static int64_t lines_of(LLVMTargetDataRef td, LLVMValueRef in) {
  LLVMOpcode op = LLVMGetInstructionOpcode(in);
  if (op == LLVMInvoke || op == LLVMCallBr || op == LLVMLandingPad || op == LLVMCatchPad || op == LLVMCleanupPad ||
      op == LLVMCatchSwitch)
    return -1;
  uint64_t bytes = 0, off;
  unsigned align = 1;
  pa_masked m;
  if (pa_masked_of(td, in, &m)) { /* as instrument.c's masked_items: a constant mask's lanes, else a bound */
    if (m.lanes_apart) return 2 * (int64_t)pa_masked_items(&m);
    int64_t span = pa_mask_span(&m, &off);
    if (span == 0) return 0;
    bytes = span > 0 ? (uint64_t)span : m.bytes;
  } else if (op == LLVMLoad) bytes = LLVMStoreSizeOfType(td, LLVMTypeOf(in)), align = LLVMGetAlignment(in);
  else if (op == LLVMStore) bytes = LLVMStoreSizeOfType(td, LLVMTypeOf(LLVMGetOperand(in, 0))), align = LLVMGetAlignment(in);
  else if (op == LLVMAtomicRMW || op == LLVMAtomicCmpXchg) return 2;
  else if (op == LLVMCall) {
    const char *c = pa_callee_name(in);
    return strncmp(c, "llvm.", 5) != 0 || strncmp(c, "llvm.mem", 8) == 0 ? -1 : 0;
  } else
    return 0;
  return one_line(bytes, align) ? 1 : (int64_t)((bytes + PA_LINE_BYTES - 1) / PA_LINE_BYTES) + 1;
}

/* Line accesses of one iteration of loop l, or -1 if it cannot be filtered. */
static int64_t body_lines(LLVMTargetDataRef td, const pa_function *f, const pa_loop *L, LLVMBasicBlockRef *bbs) {
  int64_t n = 0;
  for (int k = 0; k < L->n_blocks; k++)
    for (LLVMValueRef in = LLVMGetFirstInstruction(bbs[L->blocks[k]]); in; in = LLVMGetNextInstruction(in)) {
      int64_t x = lines_of(td, in);
      if (x < 0) return -1;
      n += x;
    }
  (void)f;
  return n;
}

static bool innermost(const pa_function *f, int l) {
  for (int k = 0; k < f->n_loops; k++)
    if (f->loops[k].parent == l) return false;
  return true;
}

static bool in_loop(const pa_loop *L, int b) {
  for (int k = 0; k < L->n_blocks; k++)
    if (L->blocks[k] == b) return true;
  return false;
}

/* A plain (unmasked) one-line load or store whose address moves 1..MAX_STRIDE-1 bytes per
 * iteration of its innermost loop. */
static bool filterable(LLVMTargetDataRef td, LLVMValueRef in, const pa_node *n) {
  LLVMOpcode op = LLVMGetInstructionOpcode(in);
  if ((op != LLVMLoad && op != LLVMStore) || n->n_strides < 1 || n->strides[0] == PA_STRIDE_UNKNOWN) return false;
  int64_t s = n->strides[0] < 0 ? -n->strides[0] : n->strides[0];
  return s >= 1 && s < MAX_STRIDE && lines_of(td, in) == 1;
}

int pa_line_filter_plan(LLVMBuilderRef b, LLVMValueRef fn, const pa_function *f, pa_filtered_access **out) {
  *out = NULL;
  if (f->n_loops == 0) return 0;
  int nb = (int)LLVMCountBasicBlocks(fn);
  if (nb != f->n_blocks) return 0; /* not the function the profile describes */
  LLVMBasicBlockRef *bbs = malloc(sizeof *bbs * (size_t)nb);
  LLVMGetBasicBlocks(fn, bbs);
  LLVMTargetDataRef td = LLVMCreateTargetData(LLVMGetDataLayoutStr(LLVMGetGlobalParent(fn)));
  LLVMContextRef ctx = LLVMGetTypeContext(LLVMTypeOf(fn));
  LLVMTypeRef i64 = LLVMInt64TypeInContext(ctx), i1 = LLVMInt1TypeInContext(ctx);
  int n = 0, cap = 0;
  pa_filtered_access *v = NULL;
  for (int l = 0; l < f->n_loops; l++) {
    const pa_loop *L = &f->loops[l];
    if (!innermost(f, l) || L->n_latches < 1) continue;
    int64_t body = body_lines(td, f, L, bbs);
    if (body < 1 || body > MAX_BODY_LINES) continue;
    int first = n;
    /* the accesses first: nothing is inserted into a block before its nodes are matched */
    for (int k = 0; k < L->n_blocks; k++) {
      int bi = L->blocks[k];
      const pa_block *pb = &f->blocks[bi];
      bool every_iteration = pb->loop == l;
      for (int q = 0; q < L->n_latches && every_iteration; q++) every_iteration = pa_dominates(f, bi, L->latches[q]);
      if (!every_iteration) continue;
      int i = 0;
      for (LLVMValueRef in = LLVMGetFirstInstruction(bbs[bi]); in && i < pb->n_nodes; in = LLVMGetNextInstruction(in), i++) {
        if (!filterable(td, in, &pb->nodes[i])) continue;
        if (n == cap) v = realloc(v, sizeof *v * (size_t)(cap = 2 * cap + 16));
        v[n++] = (pa_filtered_access){.inst = in, .stride = pb->nodes[i].strides[0], .bin = pa_reuse_bin(body - 1)};
      }
    }
    if (first == n) continue;
    /* one flag per loop: true in its first iteration (every edge entering it), false after */
    LLVMBasicBlockRef header = bbs[L->header];
    LLVMPositionBuilderBefore(b, LLVMGetFirstInstruction(header));
    LLVMValueRef is_first = LLVMBuildPhi(b, i1, "pa.first");
    for (int p = 0; p < nb; p++) {
      LLVMValueRef t = LLVMGetBasicBlockTerminator(bbs[p]);
      unsigned ns = t ? LLVMGetNumSuccessors(t) : 0;
      for (unsigned s = 0; s < ns; s++) {
        if (LLVMGetSuccessor(t, s) != header) continue;
        LLVMValueRef val = LLVMConstInt(i1, !in_loop(L, p), 0);
        LLVMBasicBlockRef from = bbs[p];
        LLVMAddIncoming(is_first, &val, &from, 1);
      }
    }
    for (int k = first; k < n; k++) {
      LLVMValueRef in = v[k].inst;
      LLVMValueRef addr = LLVMGetOperand(in, LLVMGetInstructionOpcode(in) == LLVMLoad ? 0 : 1);
      LLVMPositionBuilderBefore(b, in);
      v[k].addr = LLVMBuildPtrToInt(b, addr, i64, "pa.addr");
      v[k].first = is_first;
    }
  }
  LLVMDisposeTargetData(td);
  free(bbs);
  *out = v;
  return n;
}
