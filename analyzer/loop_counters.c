/* Block counters kept out of innermost loops (pa_hook_opts.counters_in_memory false): in a loop
 * whose iterations each run every block that dominates its latch once, those blocks' counts are
 * its iterations, so they are added to the thread's counters once at the loop's exit instead of
 * by a load, an add and a store on every iteration. The iterations are the header's canonical
 * induction (its step-1 phi, minus the start) where it has one, else a phi of their own. (The
 * line filter's repeats, n per iteration, could ride along, but without their store in the loop
 * the selection DAG of the loop's block cost the compile 10% more: docs/validation.md, session
 * 18.) Planned on the
 * uninstrumented function with the static profile's loops, before instrument.c moves any
 * block's body; the exits' adds are written after the hooks, so no hook sees them.
 *
 * A loop qualifies when it is innermost, has one latch, the latch is its only block with a
 * successor outside it, each such successor is entered only from the latch, and its blocks
 * form no cycle but through the header: each iteration then runs every block that dominates
 * the latch exactly once, and has when the latch leaves. */
#include <stdlib.h>

#include "internal.h"

typedef struct {
  int *exits, n_exits; /* blocks entered only from the latch, outside the loop */
  int *counted, n_counted; /* blocks whose count is the loop's iterations */
  LLVMValueRef iters;      /* the iterations so far, the current one included, at the latch */
  int64_t start;           /* what `iters` holds before the first iteration */
  LLVMValueRef phi;        /* a phi of our own behind `iters` (NULL: the loop's own induction) */
  LLVMBasicBlockRef latch;
} carried_loop;

struct pa_loop_counters {
  LLVMBasicBlockRef *bbs;
  int n_loops;
  carried_loop *loops;
  int *loop_of; /* by block: index in loops, -1 none */
};

static bool in_loop(const pa_loop *L, int b) {
  for (int k = 0; k < L->n_blocks; k++)
    if (L->blocks[k] == b) return true;
  return false;
}

/* No cycle among L's blocks but through the header (a depth-first walk that never enters the
 * header finds no edge back to a block on its path). */
static bool reducible_body(const pa_function *f, const pa_loop *L) {
  int n = f->n_blocks;
  char *state = calloc((size_t)n + 1, 1); /* 0 new, 1 on the path, 2 done */
  int *stack = malloc(sizeof *stack * (size_t)(n + 1)), *next = calloc((size_t)n + 1, sizeof *next);
  bool ok = state && stack && next;
  int top = 0;
  if (ok) stack[top++] = L->header, state[L->header] = 1;
  while (ok && top) {
    int b = stack[top - 1];
    if (next[b] == f->blocks[b].n_succs) {
      state[b] = 2, top--;
      continue;
    }
    int s = f->blocks[b].succs[next[b]++];
    if (s == L->header || !in_loop(L, s)) continue;
    if (state[s] == 1) ok = false;
    else if (state[s] == 0) state[s] = 1, stack[top++] = s;
  }
  free(state), free(stack), free(next);
  return ok;
}

/* L's exits when it qualifies (above), else -1. */
static int exits_of(const pa_function *f, int l, int *exits) {
  const pa_loop *L = &f->loops[l];
  for (int k = 0; k < f->n_loops; k++)
    if (f->loops[k].parent == l) return -1;
  if (L->n_latches != 1) return -1;
  int n = 0;
  for (int k = 0; k < L->n_blocks; k++) {
    const pa_block *b = &f->blocks[L->blocks[k]];
    for (int s = 0; s < b->n_succs; s++) {
      int e = b->succs[s];
      if (in_loop(L, e)) continue;
      if (L->blocks[k] != L->latches[0] || f->blocks[e].n_preds != 1) return -1;
      bool seen = false;
      for (int j = 0; j < n; j++) seen |= exits[j] == e;
      if (!seen) exits[n++] = e;
    }
  }
  return n && reducible_body(f, L) ? n : -1;
}

/* The header's canonical induction: a phi of i64 (or a narrower integer whose step cannot
 * wrap) that starts at a constant on every entering edge and takes `phi + 1` from the latch;
 * that add is the iterations so far plus the start (*start). NULL when there is none. */
static LLVMValueRef induction(LLVMBasicBlockRef header, LLVMBasicBlockRef latch, int64_t *start) {
  for (LLVMValueRef phi = LLVMGetFirstInstruction(header); phi && LLVMIsAPHINode(phi); phi = LLVMGetNextInstruction(phi)) {
    LLVMTypeRef t = LLVMTypeOf(phi);
    if (LLVMGetTypeKind(t) != LLVMIntegerTypeKind || LLVMGetIntTypeWidth(t) > 64) continue;
    LLVMValueRef next = NULL, first = NULL;
    bool ok = true;
    for (unsigned i = 0; i < LLVMCountIncoming(phi) && ok; i++) {
      LLVMValueRef v = LLVMGetIncomingValue(phi, i);
      if (LLVMGetIncomingBlock(phi, i) == latch) next = v;
      else if (!LLVMIsAConstantInt(v) || (first && LLVMConstIntGetSExtValue(v) != LLVMConstIntGetSExtValue(first))) ok = false;
      else first = v;
    }
    if (!ok || !next || !first || !LLVMIsAInstruction(next) || LLVMGetInstructionOpcode(next) != LLVMAdd) continue;
    LLVMValueRef a = LLVMGetOperand(next, 0), b = LLVMGetOperand(next, 1);
    if (a != phi || !LLVMIsAConstantInt(b) || LLVMConstIntGetSExtValue(b) != 1) continue;
    if (LLVMGetIntTypeWidth(t) < 64 && !LLVMGetNUW(next) && !LLVMGetNSW(next)) continue;
    *start = LLVMConstIntGetSExtValue(first);
    return next;
  }
  return NULL;
}

pa_loop_counters *pa_loop_counters_plan(LLVMBuilderRef b, LLVMValueRef fn, const pa_function *f) {
  int nb = (int)LLVMCountBasicBlocks(fn);
  if (f->n_loops == 0 || nb != f->n_blocks) return NULL; /* not the function the profile describes */
  pa_loop_counters *r = calloc(1, sizeof *r);
  if (!r) return NULL;
  r->bbs = malloc(sizeof *r->bbs * (size_t)nb);
  r->loops = calloc((size_t)f->n_loops, sizeof *r->loops);
  r->loop_of = malloc(sizeof *r->loop_of * (size_t)nb);
  int *exits = malloc(sizeof *exits * (size_t)(nb + 1));
  if (!r->bbs || !r->loops || !r->loop_of || !exits) {
    free(exits);
    pa_loop_counters_free(r);
    return NULL; /* out of memory: the counters stay in memory, the same profile */
  }
  LLVMGetBasicBlocks(fn, r->bbs);
  for (int k = 0; k < nb; k++) r->loop_of[k] = -1;
  LLVMTypeRef i64 = LLVMInt64TypeInContext(LLVMGetTypeContext(LLVMTypeOf(fn)));
  for (int l = 0; l < f->n_loops; l++) {
    const pa_loop *L = &f->loops[l];
    int n_exits = exits_of(f, l, exits);
    if (n_exits < 0) continue;
    carried_loop c = {.latch = r->bbs[L->latches[0]]};
    c.exits = malloc(sizeof *c.exits * (size_t)n_exits);
    c.counted = malloc(sizeof *c.counted * (size_t)(L->n_blocks + 1));
    if (!c.exits || !c.counted) {
      free(c.exits), free(c.counted);
      continue;
    }
    for (int k = 0; k < n_exits; k++) c.exits[k] = exits[k];
    c.n_exits = n_exits;
    for (int k = 0; k < L->n_blocks; k++)
      if (pa_dominates(f, L->blocks[k], L->latches[0])) c.counted[c.n_counted++] = L->blocks[k];
    LLVMBasicBlockRef header = r->bbs[L->header];
    c.iters = induction(header, c.latch, &c.start);
    if (!c.iters) { /* a counter of our own: zero from every edge entering the loop, + 1 in the header */
      LLVMPositionBuilderBefore(b, LLVMGetFirstInstruction(header));
      c.phi = LLVMBuildPhi(b, i64, "pa.iters");
      LLVMValueRef zero = LLVMConstInt(i64, 0, 0);
      const pa_block *hb = &f->blocks[L->header];
      for (int p = 0; p < hb->n_preds; p++) {
        if (in_loop(L, hb->preds[p])) continue;
        LLVMBasicBlockRef from = r->bbs[hb->preds[p]];
        LLVMAddIncoming(c.phi, &zero, &from, 1);
      }
      LLVMValueRef at = LLVMGetFirstInstruction(header);
      while (at && LLVMIsAPHINode(at)) at = LLVMGetNextInstruction(at);
      LLVMPositionBuilderBefore(b, at);
      c.iters = LLVMBuildAdd(b, c.phi, LLVMConstInt(i64, 1, 0), "pa.iters.next");
    }
    for (int k = 0; k < L->n_blocks; k++) r->loop_of[L->blocks[k]] = r->n_loops;
    r->loops[r->n_loops++] = c;
  }
  free(exits);
  return r;
}

bool pa_loop_counters_count(const pa_loop_counters *r, int bi) {
  if (!r || r->loop_of[bi] < 0) return false;
  const carried_loop *c = &r->loops[r->loop_of[bi]];
  for (int k = 0; k < c->n_counted; k++)
    if (c->counted[k] == bi) return true;
  return false;
}

/* Adds `value` to the i64 at `slot` (the sum named for tests and readers of the IR). */
static void add_to(LLVMBuilderRef b, LLVMTypeRef i64, LLVMValueRef slot, LLVMValueRef value) {
  LLVMBuildStore(b, LLVMBuildAdd(b, LLVMBuildLoad2(b, i64, slot, ""), value, "pa.carried"), slot);
}

void pa_loop_counters_finish(pa_loop_counters *r, LLVMBuilderRef b, LLVMValueRef counts, int block_base) {
  if (!r) return;
  LLVMTypeRef i64 = LLVMInt64TypeInContext(LLVMGetTypeContext(LLVMTypeOf(counts)));
  for (int l = 0; l < r->n_loops; l++) {
    carried_loop *c = &r->loops[l];
    if (c->phi) /* named again: moving a block's body into its hook block cleared the name */
      LLVMAddIncoming(c->phi, &c->iters, &c->latch, 1), LLVMSetValueName2(c->phi, "pa.iters", 8);
    if (!c->n_counted) continue;
    for (int e = 0; e < c->n_exits; e++) {
      /* the exit keeps its terminator when instrument.c moves its body: add before it */
      LLVMPositionBuilderBefore(b, LLVMGetBasicBlockTerminator(r->bbs[c->exits[e]]));
      LLVMValueRef n = c->iters; /* the difference in the induction's own width, where it cannot wrap */
      if (c->start) n = LLVMBuildSub(b, n, LLVMConstInt(LLVMTypeOf(n), (unsigned long long)c->start, 1), "");
      n = LLVMBuildZExt(b, n, i64, "pa.iterations");
      for (int k = 0; k < c->n_counted; k++) {
        LLVMValueRef at = LLVMConstInt(i64, (unsigned long long)(block_base + c->counted[k]), 0);
        add_to(b, i64, LLVMBuildInBoundsGEP2(b, i64, counts, &at, 1, ""), n);
      }
    }
  }
}

void pa_loop_counters_free(pa_loop_counters *r) {
  if (!r) return;
  for (int l = 0; l < r->n_loops; l++) free(r->loops[l].exits), free(r->loops[l].counted);
  free(r->loops), free(r->bbs), free(r->loop_of);
  free(r);
}
