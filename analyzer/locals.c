/* A kernel's static stack arrays moved into a region of the thread's own, at an address that
 * does not depend on the frame's layout (instrument.c calls it on each instrumented function).
 * SHARDS samples lines by a hash of their address: on the stack, a local array sits where the
 * codegen's spill slots leave it, so its sampled lines (and per-set distances) changed with
 * the child's codegen flags (docs/validation.md, bert_ffn1 #33). In the region each array
 * lies at an offset fixed by the IR alone (a function's frame past its callers', as on a
 * stack); the runtime gives each thread its region. */
#include <stdlib.h>

#include "internal.h"

/* A static alloca: in the entry block, of a sized type and a constant count; its bytes. */
static uint64_t static_bytes(LLVMTargetDataRef td, LLVMValueRef in) {
  if (!LLVMIsAAllocaInst(in)) return 0;
  LLVMTypeRef t = LLVMGetAllocatedType(in);
  LLVMValueRef count = LLVMGetOperand(in, 0);
  if (!LLVMTypeIsSized(t) || !LLVMIsAConstantInt(count)) return 0;
  return LLVMABISizeOfType(td, t) * LLVMConstIntGetZExtValue(count);
}

typedef struct {
  LLVMValueRef alloca;
  uint64_t bytes, align;
  int order;
  uint64_t at; /* offset from its function's start */
} local;

/* Widest alignment first, then largest, then IR order: a small local added before an array
 * (a spill slot's analogue) does not move it. */
static int by_layout(const void *pa, const void *pb) {
  const local *a = pa, *b = pb;
  if (a->align != b->align) return a->align > b->align ? -1 : 1;
  if (a->bytes != b->bytes) return a->bytes > b->bytes ? -1 : 1;
  return a->order - b->order;
}

/* A function's static allocas, laid out from its own start: their offsets, bytes used, and
 * the widest alignment (its start's). Empty when the layout passes PA_LOCALS_BYTES. */
typedef struct {
  local *ls;
  int n;
  uint64_t bytes, align;
} frame;

/* False where memory ran out (the module keeps its locals on the stack). */
static bool lay_out(LLVMTargetDataRef td, LLVMValueRef fn, frame *f) {
  *f = (frame){.align = 1};
  LLVMBasicBlockRef entry = LLVMGetEntryBasicBlock(fn);
  int cap = 0;
  for (LLVMValueRef in = entry ? LLVMGetFirstInstruction(entry) : NULL; in; in = LLVMGetNextInstruction(in)) {
    uint64_t bytes = static_bytes(td, in);
    if (!bytes) continue;
    if (f->n == cap) {
      local *more = realloc(f->ls, sizeof *f->ls * (size_t)(cap = cap ? 2 * cap : 8));
      if (!more) return false;
      f->ls = more;
    }
    unsigned align = LLVMGetAlignment(in);
    f->ls[f->n] = (local){in, bytes, align ? align : 1, f->n, 0};
    f->n++;
  }
  if (f->n > 1) qsort(f->ls, (size_t)f->n, sizeof *f->ls, by_layout); /* (ls is NULL when n is 0) */
  for (int i = 0; i < f->n; i++) {
    local *l = &f->ls[i];
    l->at = (f->bytes + l->align - 1) / l->align * l->align;
    f->bytes = l->at + l->bytes;
    if (l->align > f->align) f->align = l->align;
  }
  return true;
}

/* The module's calls, as edges between its defined functions (a function passed to a call,
 * such as a parallel body to pt_parallel_for, counts as called there). False where a function
 * may be entered some other way: a call through a pointer, or a function whose address is
 * used other than by a call. */
static bool call_edges(LLVMValueRef *fns, int nf, bool *calls) {
  for (int g = 0; g < nf; g++)
    for (LLVMUseRef u = LLVMGetFirstUse(fns[g]); u; u = LLVMGetNextUse(u)) {
      LLVMValueRef user = LLVMGetUser(u);
      if (!LLVMIsACallInst(user) && !LLVMIsAInvokeInst(user)) return false;
    }
  for (int f = 0; f < nf; f++)
    for (LLVMBasicBlockRef bb = LLVMGetFirstBasicBlock(fns[f]); bb; bb = LLVMGetNextBasicBlock(bb))
      for (LLVMValueRef in = LLVMGetFirstInstruction(bb); in; in = LLVMGetNextInstruction(in)) {
        if (!LLVMIsACallInst(in) && !LLVMIsAInvokeInst(in) && !LLVMIsACallBrInst(in)) continue;
        LLVMValueRef callee = LLVMGetCalledValue(in);
        if (!callee || (!LLVMIsAFunction(callee) && !LLVMIsAInlineAsm(callee))) return false;
        int n = LLVMGetNumOperands(in);
        for (int k = 0; k < n; k++) {
          LLVMValueRef v = LLVMGetOperand(in, (unsigned)k);
          for (int g = 0; v && LLVMIsAFunction(v) && g < nf; g++)
            if (fns[g] == v) calls[(size_t)f * (size_t)nf + (size_t)g] = true;
        }
      }
  return true;
}

/* start[f]: past the frames of every function that may be active below it on a thread (its
 * callers', recursively), as a stack would place it; false on a cycle (recursion). */
static bool place(int f, int nf, const bool *calls, const frame *fr, int *state, uint64_t *start) {
  if (state[f] == 2) return true;
  if (state[f] == 1) return false;
  state[f] = 1;
  uint64_t at = 0;
  for (int g = 0; g < nf; g++) {
    if (!calls[(size_t)g * (size_t)nf + (size_t)f]) continue;
    if (!place(g, nf, calls, fr, state, start)) return false;
    if (start[g] + fr[g].bytes > at) at = start[g] + fr[g].bytes;
  }
  start[f] = (at + fr[f].align - 1) / fr[f].align * fr[f].align;
  state[f] = 2;
  return true;
}

/* Each alloca's uses go to region + offset, or to the alloca itself where the thread has no
 * region (the region's word, read once after the entry hook, is NULL). */
static void move_frame(LLVMBuilderRef b, LLVMValueRef fn, LLVMValueRef state, const frame *f, uint64_t start) {
  LLVMContextRef ctx = LLVMGetModuleContext(LLVMGetGlobalParent(fn));
  LLVMTypeRef i8 = LLVMInt8TypeInContext(ctx), i64 = LLVMInt64TypeInContext(ctx), ptr = LLVMTypeOf(state);
  LLVMPositionBuilderBefore(b, LLVMGetNextInstruction(state));
  LLVMValueRef off = LLVMConstInt(i64, PA_LOCALS_OFFSET, 0);
  LLVMValueRef word = LLVMBuildInBoundsGEP2(b, i8, state, &off, 1, "pa.locals.word");
  LLVMValueRef base = LLVMBuildLoad2(b, ptr, word, "pa.locals");
  LLVMValueRef have = LLVMBuildIsNotNull(b, base, "pa.locals.have");
  for (int i = 0; i < f->n; i++) {
    const local *l = &f->ls[i];
    LLVMPositionBuilderBefore(b, LLVMGetNextInstruction(l->alloca));
    LLVMValueRef o = LLVMConstInt(i64, start + l->at, 0);
    LLVMValueRef moved = LLVMBuildInBoundsGEP2(b, i8, base, &o, 1, "pa.local");
    LLVMValueRef placed = LLVMBuildSelect(b, have, moved, LLVMGetPoison(ptr), "pa.local.at");
    LLVMReplaceAllUsesWith(l->alloca, placed);
    LLVMSetOperand(placed, 2, l->alloca); /* the fallback, set after the replacement of its uses */
  }
}

int64_t pa_move_locals(LLVMBuilderRef b, LLVMTargetDataRef td, LLVMValueRef *fns, LLVMValueRef *states, int nf) {
  frame *fr = calloc((size_t)nf + 1, sizeof *fr);
  bool *calls = calloc((size_t)nf * (size_t)nf + 1, sizeof *calls);
  int *state = calloc((size_t)nf + 1, sizeof *state);
  uint64_t *start = calloc((size_t)nf + 1, sizeof *start), end = 0;
  bool ok = fr && calls && state && start && call_edges(fns, nf, calls);
  for (int f = 0; ok && f < nf; f++) ok = lay_out(td, fns[f], &fr[f]);
  for (int f = 0; ok && f < nf; f++) ok = place(f, nf, calls, fr, state, start);
  for (int f = 0; ok && f < nf; f++)
    if (start[f] + fr[f].bytes > end) end = start[f] + fr[f].bytes;
  ok &= end > 0 && end <= (uint64_t)PA_LOCALS_BYTES;
  for (int f = 0; ok && f < nf; f++)
    if (fr[f].n) move_frame(b, fns[f], states[f], &fr[f], start[f]);
  for (int f = 0; fr && f < nf; f++) free(fr[f].ls);
  free(fr), free(calls), free(state), free(start);
  return ok ? (int64_t)end : 0;
}
