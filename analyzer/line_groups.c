/* Which accesses of a sampled block can share one inline SHARDS test (instrument.c): accesses
 * whose addresses differ by constants, e.g. a conv's 32-byte loads at x-4, x and x+4 of one
 * row, touch together exactly the lines from the lowest address's to the highest end's when no
 * gap between them holds a whole line, so testing those lines once decides whether any of them
 * may be sampled. The runtime then tests each member on its own (pa_rt_block), so the profile
 * is the same as with one test per access; only the number of multiplies in the kernel falls.
 * An address is taken apart as root + sum of scale x index + offset by walking single-index
 * GEPs and peeling constant adds (and disjoint ors) off 64-bit indices. */
#include <stdlib.h>
#include <string.h>

#include <llvm-c/Target.h>

#include "internal.h"

#define MAX_TERMS 4
#define MAX_GROUP_BYTES (4 * PA_LINE_BYTES) /* lines_sampled tests at most 4 lines + the end's */

typedef struct {
  LLVMValueRef root;
  int n;
  LLVMValueRef index[MAX_TERMS];
  int64_t scale[MAX_TERMS];
  int64_t off;
} affine;

/* v = x + c for constant c (add, sub, or disjoint): x, with c added to *c. */
static LLVMValueRef peel_constant(LLVMValueRef v, int64_t *c) {
  while (LLVMIsAInstruction(v)) {
    LLVMOpcode op = LLVMGetInstructionOpcode(v);
    LLVMValueRef k = LLVMGetOperand(v, 1);
    bool additive = op == LLVMAdd || op == LLVMSub || (op == LLVMOr && LLVMGetIsDisjoint(v));
    if (!additive || !LLVMIsAConstantInt(k)) break;
    int64_t x = LLVMConstIntGetSExtValue(k);
    *c += op == LLVMSub ? -x : x;
    v = LLVMGetOperand(v, 0);
  }
  return v;
}

/* Adds scale x index to a (merging a repeated index); false when a has no room left. */
static bool add_term(affine *a, LLVMValueRef index, int64_t scale) {
  for (int k = 0; k < a->n; k++)
    if (a->index[k] == index) return a->scale[k] += scale, true;
  if (a->n == MAX_TERMS) return false;
  a->index[a->n] = index, a->scale[a->n++] = scale;
  return true;
}

static void decompose(LLVMTargetDataRef td, LLVMValueRef p, affine *a) {
  memset(a, 0, sizeof *a);
  a->root = p;
  while (LLVMIsAGetElementPtrInst(p) && LLVMGetNumOperands(p) == 2) {
    LLVMValueRef idx = LLVMGetOperand(p, 1);
    LLVMTypeRef it = LLVMTypeOf(idx);
    int64_t scale = (int64_t)LLVMABISizeOfType(td, LLVMGetGEPSourceElementType(p));
    affine next = *a;
    if (LLVMIsAConstantInt(idx)) next.off += LLVMConstIntGetSExtValue(idx) * scale;
    else { /* only 64-bit indices: a narrower one is sign-extended after its own wrap */
      int64_t c = 0;
      if (LLVMGetTypeKind(it) != LLVMIntegerTypeKind || LLVMGetIntTypeWidth(it) != 64) break;
      if (!add_term(&next, peel_constant(idx, &c), scale)) break;
      next.off += c * scale;
    }
    p = LLVMGetOperand(p, 0);
    next.root = p;
    *a = next;
  }
}

/* The same root and the same scaled indices (in any order): the addresses differ by a constant. */
static bool same_base(const affine *x, const affine *y) {
  int nx = 0, ny = 0;
  for (int i = 0; i < x->n; i++) nx += x->scale[i] != 0;
  for (int j = 0; j < y->n; j++) ny += y->scale[j] != 0;
  if (x->root != y->root || nx != ny) return false;
  for (int i = 0; i < x->n; i++) {
    bool found = x->scale[i] == 0;
    for (int j = 0; j < y->n && !found; j++) found = x->index[i] == y->index[j] && x->scale[i] == y->scale[j];
    if (!found) return false;
  }
  return true;
}

/* Sorts the item indices by offset (insertion sort: a block has few accesses per base). */
static void sort_by_offset(int *order, int m, const affine *v) {
  for (int i = 1; i < m; i++) {
    int x = order[i], j = i;
    for (; j > 0 && v[order[j - 1]].off > v[x].off; j--) order[j] = order[j - 1];
    order[j] = x;
  }
}

void pa_address_bases(LLVMTargetDataRef td, LLVMValueRef *addrs, int n, int *base_of, int64_t *off) {
  affine *v = malloc(sizeof *v * (size_t)(n + 1));
  for (int k = 0; k < n; k++) {
    base_of[k] = k, off[k] = 0;
    if (!addrs[k]) continue;
    decompose(td, addrs[k], &v[k]);
    for (int j = 0; j < k; j++)
      if (addrs[j] && base_of[j] == j && same_base(&v[j], &v[k])) {
        base_of[k] = j, off[k] = v[k].off - v[j].off;
        break;
      }
  }
  free(v);
}

int pa_line_groups(LLVMTargetDataRef td, LLVMValueRef *addrs, const uint64_t *bytes, int n, int *group_of,
                   int64_t *base_off, pa_line_group *groups) {
  affine *v = malloc(sizeof *v * (size_t)(n + 1));
  int *order = malloc(sizeof *order * (size_t)(n + 1)), n_groups = 0;
  for (int k = 0; k < n; k++) {
    group_of[k] = -1;
    if (bytes[k] && bytes[k] <= MAX_GROUP_BYTES) decompose(td, addrs[k], &v[k]);
  }
  for (int k = 0; k < n; k++) {
    if (group_of[k] >= 0 || !bytes[k] || bytes[k] > MAX_GROUP_BYTES) continue;
    int m = 0; /* the items whose addresses differ from item k's by a constant, by offset */
    for (int j = k; j < n; j++)
      if (group_of[j] < 0 && bytes[j] && bytes[j] <= MAX_GROUP_BYTES && same_base(&v[k], &v[j])) order[m++] = j;
    sort_by_offset(order, m, v);
    for (int i = 0; i < m; i++) base_off[order[i]] = v[order[i]].off - v[order[0]].off;
    int first_group = n_groups;
    for (int i = 0; i < m;) { /* grow a group while the next access leaves no whole line untouched */
      int lead = order[i];
      int64_t end = v[lead].off + (int64_t)bytes[lead];
      pa_line_group *g = &groups[n_groups];
      *g = (pa_line_group){.leader = lead, .n_items = 1, .base = first_group, .off = v[lead].off - v[order[0]].off};
      group_of[lead] = n_groups;
      for (i++; i < m; i++) {
        int j = order[i];
        int64_t e = v[j].off + (int64_t)bytes[j], new_end = e > end ? e : end;
        if (v[j].off - end >= PA_LINE_BYTES || new_end - v[lead].off > MAX_GROUP_BYTES) break;
        end = new_end;
        group_of[j] = n_groups, g->n_items++;
      }
      g->bytes = (uint64_t)(end - v[lead].off);
      n_groups++;
    }
  }
  free(v);
  free(order);
  return n_groups;
}
