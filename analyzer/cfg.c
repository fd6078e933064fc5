/* The control-flow graph of one function: blocks named as LLVM prints them, predecessor and
 * successor edges, and the dominator tree (Cooper, Harvey & Kennedy, "A Simple, Fast
 * Dominance Algorithm", 2001: iterate idom over reverse postorder until it settles). */
#include <stdlib.h>
#include <string.h>

#include "internal.h"

/* Unnamed arguments, blocks and instructions share one counter in LLVM's slot numbering
 * (llvm/lib/IR/AsmWriter.cpp), so unnamed block N prints as "%N" or label "N:". */
static void name_blocks(pt_arena *a, LLVMValueRef fn, pa_function *f) {
  int slot = 0, bi = 0;
  for (LLVMValueRef p = LLVMGetFirstParam(fn); p; p = LLVMGetNextParam(p)) {
    size_t len;
    LLVMGetValueName2(p, &len);
    if (len == 0) slot++;
  }
  for (LLVMBasicBlockRef bb = LLVMGetFirstBasicBlock(fn); bb; bb = LLVMGetNextBasicBlock(bb), bi++) {
    const char *name = LLVMGetBasicBlockName(bb);
    f->blocks[bi].name = name && *name ? pt_strdup(a, name) : pt_sprintf(a, "%d", slot++);
    for (LLVMValueRef in = LLVMGetFirstInstruction(bb); in; in = LLVMGetNextInstruction(in)) {
      size_t len;
      LLVMGetValueName2(in, &len);
      if (len == 0 && LLVMGetTypeKind(LLVMTypeOf(in)) != LLVMVoidTypeKind) slot++;
    }
  }
}

/* Iterative DFS from the entry (deep CFGs from unrolled IR must not overflow the stack);
 * fills order with the reachable blocks in postorder and returns how many there are. */
static int postorder(const pa_function *f, int *order) {
  int n = f->n_blocks, cnt = 0, sp = 0;
  bool *seen = calloc((size_t)n, 1);
  int *stack = malloc(sizeof *stack * (size_t)n), *next_succ = calloc((size_t)n, sizeof *next_succ);
  stack[sp++] = 0;
  seen[0] = true;
  while (sp) {
    int x = stack[sp - 1];
    if (next_succ[x] < f->blocks[x].n_succs) {
      int s = f->blocks[x].succs[next_succ[x]++];
      if (!seen[s]) {
        seen[s] = true;
        stack[sp++] = s;
      }
    } else {
      order[cnt++] = x;
      sp--;
    }
  }
  free(seen);
  free(stack);
  free(next_succ);
  return cnt;
}

int pa_reverse_postorder(const pa_function *f, int *order) {
  int cnt = postorder(f, order);
  for (int i = 0, j = cnt - 1; i < j; i++, j--) {
    int t = order[i];
    order[i] = order[j];
    order[j] = t;
  }
  return cnt;
}

static void dominators(pa_function *f) {
  int n = f->n_blocks;
  int *order = malloc(sizeof *order * (size_t)n), *rpo_num = malloc(sizeof *rpo_num * (size_t)n);
  int cnt = postorder(f, order);
  for (int i = 0; i < n; i++) rpo_num[i] = -1;
  for (int i = 0; i < cnt; i++) rpo_num[order[i]] = i; /* postorder number: entry is highest */
  int *idom = malloc(sizeof *idom * (size_t)n);
  for (int i = 0; i < n; i++) idom[i] = -1;
  idom[0] = 0;
  for (bool changed = true; changed;) {
    changed = false;
    for (int k = cnt - 2; k >= 0; k--) { /* reverse postorder, skipping the entry */
      int b = order[k], new_idom = -1;
      for (int j = 0; j < f->blocks[b].n_preds; j++) {
        int p = f->blocks[b].preds[j];
        if (rpo_num[p] < 0 || idom[p] < 0) continue;
        if (new_idom < 0) {
          new_idom = p;
          continue;
        }
        int x = p, y = new_idom;
        while (x != y) {
          while (rpo_num[x] < rpo_num[y]) x = idom[x];
          while (rpo_num[y] < rpo_num[x]) y = idom[y];
        }
        new_idom = x;
      }
      if (new_idom >= 0 && idom[b] != new_idom) {
        idom[b] = new_idom;
        changed = true;
      }
    }
  }
  for (int i = 0; i < n; i++) f->blocks[i].idom = i == 0 ? -1 : idom[i];
  free(order);
  free(rpo_num);
  free(idom);
}

bool pa_dominates(const pa_function *f, int a, int b) {
  for (int x = b; x >= 0; x = f->blocks[x].idom)
    if (x == a) return true;
  return false;
}

static bool contains(const int *xs, int n, int x) {
  for (int i = 0; i < n; i++)
    if (xs[i] == x) return true;
  return false;
}

int pa_cfg_build(pt_arena *a, LLVMValueRef fn, pa_function *f, pa_ptrmap *bbmap) {
  f->n_blocks = (int)LLVMCountBasicBlocks(fn);
  f->blocks = pt_alloc(a, sizeof *f->blocks * (size_t)f->n_blocks);
  pa_ptrmap_init(bbmap, (size_t)f->n_blocks);
  int bi = 0;
  for (LLVMBasicBlockRef bb = LLVMGetFirstBasicBlock(fn); bb; bb = LLVMGetNextBasicBlock(bb))
    pa_ptrmap_put(bbmap, bb, bi++);
  name_blocks(a, fn, f);
  int *n_preds = calloc((size_t)f->n_blocks, sizeof *n_preds);
  bi = 0;
  for (LLVMBasicBlockRef bb = LLVMGetFirstBasicBlock(fn); bb; bb = LLVMGetNextBasicBlock(bb), bi++) {
    pa_block *b = &f->blocks[bi];
    LLVMValueRef term = LLVMGetBasicBlockTerminator(bb);
    unsigned ns = term ? LLVMGetNumSuccessors(term) : 0;
    b->succs = pt_alloc(a, sizeof(int) * (ns + 1));
    for (unsigned i = 0; i < ns; i++) {
      int s = pa_ptrmap_get(bbmap, LLVMGetSuccessor(term, i));
      if (!contains(b->succs, b->n_succs, s)) { /* a switch may name a target twice */
        b->succs[b->n_succs++] = s;
        n_preds[s]++;
      }
    }
    b->loop = -1;
  }
  for (int i = 0; i < f->n_blocks; i++) f->blocks[i].preds = pt_alloc(a, sizeof(int) * (size_t)(n_preds[i] + 1));
  for (int i = 0; i < f->n_blocks; i++)
    for (int j = 0; j < f->blocks[i].n_succs; j++) {
      pa_block *s = &f->blocks[f->blocks[i].succs[j]];
      s->preds[s->n_preds++] = i;
    }
  free(n_preds);
  dominators(f);
  return PT_OK;
}
