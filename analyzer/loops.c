/* Natural loops of one function (a back edge t -> h where h dominates t; the body is every
 * block that reaches t without passing h), their nesting, and static trip counts from the
 * canonical induction pattern: the C API has neither LoopInfo nor SCEV, so we match
 *   %i = phi [start, %entering], [%i.next, %latch];  %i.next = add %i, step
 *   %c = icmp pred (%i | %i.next), bound;  br %c, ...   (start, step, bound constant)
 * in the loop's only exiting block, which must dominate the latch. */
#include <stdlib.h>
#include <string.h>

#include "internal.h"

static bool in_list(const int *xs, int n, int x) {
  for (int i = 0; i < n; i++)
    if (xs[i] == x) return true;
  return false;
}

static bool loop_has(const pa_loop *l, int b) { return in_list(l->blocks, l->n_blocks, b); }

/* Smallest k >= 0 with !stay(v0 + k*step), stay being `v pred c`; -1 if none or it wraps. */
int64_t pa_first_exit(LLVMIntPredicate pred, __int128 v0, __int128 step, __int128 c, __int128 lo,
                          __int128 hi) {
  __int128 k;
  switch (pred) {
  case LLVMIntSLE: case LLVMIntULE: c += 1; /* v <= c is v < c + 1 */
    __attribute__((fallthrough));
  case LLVMIntSLT: case LLVMIntULT:
    if (v0 >= c) return 0;
    if (step <= 0) return -1;
    k = (c - v0 + step - 1) / step;
    break;
  case LLVMIntSGE: case LLVMIntUGE: c -= 1; /* v >= c is v > c - 1 */
    __attribute__((fallthrough));
  case LLVMIntSGT: case LLVMIntUGT:
    if (v0 <= c) return 0;
    if (step >= 0) return -1;
    k = (v0 - c + (-step) - 1) / (-step);
    break;
  case LLVMIntNE:
    if (v0 == c) return 0;
    if (step == 0 || (c - v0) % step != 0 || (c - v0) / step < 0) return -1;
    k = (c - v0) / step;
    break;
  case LLVMIntEQ:
    if (v0 != c) return 0;
    if (step == 0) return -1;
    k = 1;
    break;
  default: return -1;
  }
  __int128 last = v0 + k * step; /* the value the exiting test sees: must not have wrapped */
  if (last < lo || last > hi || k > INT64_MAX - 1) return -1;
  return (int64_t)k;
}

LLVMIntPredicate pa_pred_negate(LLVMIntPredicate p) {
  switch (p) {
  case LLVMIntEQ: return LLVMIntNE;
  case LLVMIntNE: return LLVMIntEQ;
  case LLVMIntSLT: return LLVMIntSGE;
  case LLVMIntSGE: return LLVMIntSLT;
  case LLVMIntSLE: return LLVMIntSGT;
  case LLVMIntSGT: return LLVMIntSLE;
  case LLVMIntULT: return LLVMIntUGE;
  case LLVMIntUGE: return LLVMIntULT;
  case LLVMIntULE: return LLVMIntUGT;
  default: return LLVMIntULE; /* UGT */
  }
}

LLVMIntPredicate pa_pred_swap(LLVMIntPredicate p) { /* a pred b  ==  b swap(pred) a */
  switch (p) {
  case LLVMIntSLT: return LLVMIntSGT;
  case LLVMIntSGT: return LLVMIntSLT;
  case LLVMIntSLE: return LLVMIntSGE;
  case LLVMIntSGE: return LLVMIntSLE;
  case LLVMIntULT: return LLVMIntUGT;
  case LLVMIntUGT: return LLVMIntULT;
  case LLVMIntULE: return LLVMIntUGE;
  case LLVMIntUGE: return LLVMIntULE;
  default: return p;
  }
}

static LLVMValueRef incoming_from(LLVMValueRef phi, LLVMBasicBlockRef bb) {
  for (unsigned i = 0; i < LLVMCountIncoming(phi); i++)
    if (LLVMGetIncomingBlock(phi, i) == bb) return LLVMGetIncomingValue(phi, i);
  return NULL;
}

/* If v is `add phi, C` / `add C, phi` / `sub phi, C`, the phi and the signed step. */
LLVMValueRef pa_as_increment(LLVMValueRef v, int64_t *step) {
  if (!v || !LLVMIsAInstruction(v)) return NULL;
  LLVMOpcode op = LLVMGetInstructionOpcode(v);
  if (op != LLVMAdd && op != LLVMSub) return NULL;
  LLVMValueRef a = LLVMGetOperand(v, 0), b = LLVMGetOperand(v, 1);
  if (op == LLVMAdd && LLVMIsAConstantInt(a)) {
    LLVMValueRef t = a;
    a = b;
    b = t;
  }
  if (!LLVMIsAConstantInt(b) || !LLVMIsAPHINode(a)) return NULL;
  *step = LLVMConstIntGetSExtValue(b);
  if (op == LLVMSub) *step = -*step;
  return a;
}

static int64_t trip_count(LLVMBasicBlockRef *bbs, const pa_function *f, const pa_loop *l) {
  if (l->n_latches != 1 || l->preheader < 0) return -1;
  int exiting = -1;
  for (int i = 0; i < l->n_blocks; i++) {
    const pa_block *b = &f->blocks[l->blocks[i]];
    for (int j = 0; j < b->n_succs; j++)
      if (!loop_has(l, b->succs[j])) {
        if (exiting >= 0 && exiting != l->blocks[i]) return -1; /* several exits */
        exiting = l->blocks[i];
      }
  }
  if (exiting < 0 || !pa_dominates(f, exiting, l->latches[0])) return -1;
  LLVMValueRef br = LLVMGetBasicBlockTerminator(bbs[exiting]);
  if (!br || LLVMGetInstructionOpcode(br) != LLVMBr || !LLVMIsConditional(br)) return -1;
  LLVMValueRef cmp = LLVMGetCondition(br);
  if (!LLVMIsAICmpInst(cmp)) return -1;
  LLVMIntPredicate pred = LLVMGetICmpPredicate(cmp);
  LLVMValueRef x = LLVMGetOperand(cmp, 0), bound = LLVMGetOperand(cmp, 1);
  if (LLVMIsAConstantInt(x)) {
    LLVMValueRef t = x;
    x = bound;
    bound = t;
    pred = pa_pred_swap(pred);
  }
  if (!LLVMIsAConstantInt(bound)) return -1;
  /* The branch stays in the loop on true or on false. */
  LLVMBasicBlockRef t_succ = LLVMGetSuccessor(br, 0);
  int t_idx = -1;
  for (int i = 0; i < f->n_blocks; i++)
    if (bbs[i] == t_succ) t_idx = i;
  if (!loop_has(l, t_idx)) pred = pa_pred_negate(pred);
  /* x is the phi itself or its increment. */
  int64_t step = 0, offset = 0;
  LLVMValueRef phi = NULL;
  if (LLVMIsAPHINode(x) && LLVMGetInstructionParent(x) == bbs[l->header]) {
    phi = x;
    if (pa_as_increment(incoming_from(phi, bbs[l->latches[0]]), &step) != phi) return -1;
  } else {
    phi = pa_as_increment(x, &step);
    if (!phi || LLVMGetInstructionParent(phi) != bbs[l->header]) return -1;
    if (incoming_from(phi, bbs[l->latches[0]]) != x) return -1;
    offset = step;
  }
  LLVMValueRef start = incoming_from(phi, bbs[l->preheader]);
  if (!start || !LLVMIsAConstantInt(start)) return -1;
  unsigned bits = LLVMGetIntTypeWidth(LLVMTypeOf(phi));
  if (bits > 63) bits = 64;
  bool is_unsigned = pred == LLVMIntULT || pred == LLVMIntULE || pred == LLVMIntUGT || pred == LLVMIntUGE;
  __int128 lo, hi, v0, c;
  if (is_unsigned) {
    lo = 0;
    hi = ((__int128)1 << bits) - 1;
    v0 = (__int128)(unsigned long long)LLVMConstIntGetZExtValue(start);
    c = (__int128)(unsigned long long)LLVMConstIntGetZExtValue(bound);
  } else {
    lo = -((__int128)1 << (bits - 1));
    hi = ((__int128)1 << (bits - 1)) - 1;
    v0 = LLVMConstIntGetSExtValue(start);
    c = LLVMConstIntGetSExtValue(bound);
  }
  v0 += offset;
  if (v0 < lo || v0 > hi) return -1;
  int64_t k = pa_first_exit(pred, v0, step, c, lo, hi);
  return k < 0 ? -1 : k + 1;
}

void pa_loops_build(pt_arena *a, LLVMValueRef fn, pa_function *f, const pa_ptrmap *bbmap) {
  (void)bbmap;
  int n = f->n_blocks, cap = 8;
  pa_loop *loops = malloc(sizeof *loops * (size_t)cap);
  int n_loops = 0;
  int *work = malloc(sizeof *work * (size_t)n);
  bool *in = malloc((size_t)n);
  for (int h = 0; h < n; h++) {
    const pa_block *hb = &f->blocks[h];
    int n_latch = 0;
    int *latches = pt_alloc(a, sizeof(int) * (size_t)(hb->n_preds + 1));
    for (int j = 0; j < hb->n_preds; j++) {
      int t = hb->preds[j];
      if ((t == 0 || f->blocks[t].idom >= 0) && pa_dominates(f, h, t)) latches[n_latch++] = t;
    }
    if (!n_latch) continue;
    memset(in, 0, (size_t)n);
    in[h] = true;
    int sp = 0;
    for (int j = 0; j < n_latch; j++)
      if (!in[latches[j]]) {
        in[latches[j]] = true;
        work[sp++] = latches[j];
      }
    while (sp) {
      int b = work[--sp];
      for (int j = 0; j < f->blocks[b].n_preds; j++) {
        int p = f->blocks[b].preds[j];
        if (!in[p] && (p == 0 || f->blocks[p].idom >= 0)) {
          in[p] = true;
          work[sp++] = p;
        }
      }
    }
    if (n_loops == cap) loops = realloc(loops, sizeof *loops * (size_t)(cap *= 2));
    pa_loop *l = &loops[n_loops++];
    memset(l, 0, sizeof *l);
    l->header = h;
    l->latches = latches;
    l->n_latches = n_latch;
    l->blocks = pt_alloc(a, sizeof(int) * (size_t)n);
    for (int b = 0; b < n; b++)
      if (in[b]) l->blocks[l->n_blocks++] = b;
    l->preheader = -1;
    for (int j = 0; j < hb->n_preds; j++) {
      int p = hb->preds[j];
      if (in[p]) continue;
      if (l->preheader >= 0) {
        l->preheader = -1;
        break;
      }
      l->preheader = p;
    }
  }
  /* Nesting: the parent is the smallest other loop containing the header. */
  for (int i = 0; i < n_loops; i++) {
    loops[i].parent = -1;
    for (int j = 0; j < n_loops; j++)
      if (j != i && loop_has(&loops[j], loops[i].header) && loops[j].n_blocks > loops[i].n_blocks &&
          (loops[i].parent < 0 || loops[j].n_blocks < loops[loops[i].parent].n_blocks))
        loops[i].parent = j;
  }
  for (int i = 0; i < n_loops; i++) {
    int d = 1;
    for (int p = loops[i].parent; p >= 0; p = loops[p].parent) d++;
    loops[i].depth = d;
  }
  for (int b = 0; b < n; b++) {
    f->blocks[b].loop = -1;
    for (int i = 0; i < n_loops; i++)
      if (loop_has(&loops[i], b) &&
          (f->blocks[b].loop < 0 || loops[i].n_blocks < loops[f->blocks[b].loop].n_blocks))
        f->blocks[b].loop = i;
  }
  LLVMBasicBlockRef *bbs = malloc(sizeof *bbs * (size_t)n);
  int bi = 0;
  for (LLVMBasicBlockRef bb = LLVMGetFirstBasicBlock(fn); bb; bb = LLVMGetNextBasicBlock(bb)) bbs[bi++] = bb;
  for (int i = 0; i < n_loops; i++) loops[i].trip_count = trip_count(bbs, f, &loops[i]);
  f->n_loops = n_loops;
  f->loops = pt_memdup(a, loops, sizeof *loops * (size_t)n_loops);
  free(bbs);
  free(loops);
  free(work);
  free(in);
}
