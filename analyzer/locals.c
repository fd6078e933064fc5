/* A kernel's static stack arrays moved into a region of the thread's own, at an address that
 * does not depend on the frame's layout (instrument.c calls it on each instrumented function).
 * SHARDS samples lines by a hash of their address: on the stack, a local array sits where the
 * codegen's spill slots leave it, so its sampled lines (and per-set distances) changed with
 * the child's codegen flags (docs/validation.md, bert_ffn1 #33). In the region each array
 * lies at an offset fixed by the IR alone (a function's frame past its callers', as on a
 * stack); the runtime gives each thread its region. */
#include <stdlib.h>
#include <string.h>

#include "internal.h"

/* A set of values: open addressing on the pointer, Fibonacci hashing. */
typedef struct {
  LLVMValueRef *v;
  size_t cap, n;
} value_set;

static size_t set_slot(const value_set *s, LLVMValueRef v) {
  size_t i = (size_t)(((uint64_t)(uintptr_t)v * 0x9e3779b97f4a7c15ULL) >> 20) & (s->cap - 1);
  while (s->v[i] && s->v[i] != v) i = (i + 1) & (s->cap - 1);
  return i;
}

static bool set_has(const value_set *s, LLVMValueRef v) { return s->cap && s->v[set_slot(s, v)] == v; }

/* False when it was there already, or memory ran out (*failed set). */
static bool set_add(value_set *s, LLVMValueRef v, bool *failed) {
  if ((s->n + 1) * 2 > s->cap) {
    value_set g = {calloc(s->cap ? 2 * s->cap : 64, sizeof *g.v), s->cap ? 2 * s->cap : 64, 0};
    if (!g.v) return !(*failed = true);
    for (size_t i = 0; i < s->cap; i++)
      if (s->v[i]) g.v[set_slot(&g, s->v[i])] = s->v[i], g.n++;
    free(s->v);
    *s = g;
  }
  size_t i = set_slot(s, v);
  if (s->v[i]) return false;
  s->v[i] = v, s->n++;
  return true;
}

struct pa_tracked_locals {
  value_set allocas; /* static allocas whose every access the hooks see by its address */
  value_set derived; /* the pointers computed from them (the allocas too) */
};

static bool name_starts(const char *name, const char *prefix) { return strncmp(name, prefix, strlen(prefix)) == 0; }

/* Whether `user`'s use of pointer v (derived from a static alloca) only names the address of
 * an access the hooks see (items_of: loads, stores, atomics, masked and memory intrinsics) or
 * touches no memory (lifetime markers, debug intrinsics, compares): *follow when the user is
 * itself such a pointer (a getelementptr, cast, select, phi, or a vector of pointers). */
static bool use_is_seen(LLVMValueRef v, LLVMValueRef user, bool *follow) {
  *follow = false;
  switch (LLVMGetInstructionOpcode(user)) {
  case LLVMGetElementPtr:
    return *follow = LLVMGetOperand(user, 0) == v;
  case LLVMBitCast:
  case LLVMAddrSpaceCast:
  case LLVMPHI:
  case LLVMInsertElement:
  case LLVMShuffleVector:
  case LLVMExtractElement:
    return *follow = true;
  case LLVMSelect:
    return *follow = LLVMGetOperand(user, 0) != v;
  case LLVMICmp:
  case LLVMLoad:
    return true;
  case LLVMStore:
    return LLVMGetOperand(user, 0) != v;
  case LLVMAtomicRMW:
    return LLVMGetOperand(user, 1) != v;
  case LLVMAtomicCmpXchg:
    return LLVMGetOperand(user, 1) != v && LLVMGetOperand(user, 2) != v;
  case LLVMCall: {
    LLVMValueRef f = LLVMGetCalledValue(user);
    if (!f || !LLVMIsAFunction(f) || f == v) return false;
    size_t len;
    const char *c = LLVMGetValueName2(f, &len);
    if (name_starts(c, "llvm.lifetime.") || name_starts(c, "llvm.dbg.") || name_starts(c, "llvm.memcpy.") ||
        name_starts(c, "llvm.memmove."))
      return true;
    int ptr_arg = name_starts(c, "llvm.masked.load.") || name_starts(c, "llvm.masked.gather.") || name_starts(c, "llvm.memset.") ? 0
                  : name_starts(c, "llvm.masked.store.") || name_starts(c, "llvm.masked.scatter.")                            ? 1
                                                                                                                               : -1;
    if (ptr_arg < 0) return false;
    for (unsigned k = 0; k < LLVMGetNumArgOperands(user); k++)
      if ((int)k != ptr_arg && LLVMGetOperand(user, k) == v) return false;
    return true;
  }
  default:
    return false;
  }
}

/* The pointers computed from alloca a, added to s; false if one escapes (a use the hooks do
 * not see by its address: passed to a call, stored, made an integer). */
static bool derived_from(LLVMValueRef a, value_set *s, bool *failed) {
  LLVMValueRef *work = NULL;
  size_t n = 0, cap = 0;
  bool ok = set_add(s, a, failed);
  if (ok) work = malloc(sizeof *work * (cap = 64)), ok = work != NULL, n = ok;
  if (ok) work[0] = a;
  while (ok && n) {
    LLVMValueRef v = work[--n];
    for (LLVMUseRef u = LLVMGetFirstUse(v); ok && u; u = LLVMGetNextUse(u)) {
      LLVMValueRef user = LLVMGetUser(u);
      bool follow;
      ok = LLVMIsAInstruction(user) && use_is_seen(v, user, &follow);
      if (!ok || !follow || !set_add(s, user, failed)) continue;
      if (n == cap) {
        LLVMValueRef *more = realloc(work, sizeof *work * (cap *= 2));
        if (!more) {
          ok = false, *failed = true;
          break;
        }
        work = more;
      }
      work[n++] = user;
    }
  }
  free(work);
  return ok && !*failed;
}

static uint64_t static_bytes(LLVMTargetDataRef td, LLVMValueRef in);

pa_tracked_locals *pa_tracked_locals_new(LLVMTargetDataRef td, LLVMValueRef *fns, int nf) {
  pa_tracked_locals *t = calloc(1, sizeof *t);
  bool failed = !t;
  for (int f = 0; !failed && f < nf; f++) {
    LLVMBasicBlockRef entry = LLVMGetEntryBasicBlock(fns[f]);
    for (LLVMValueRef in = entry ? LLVMGetFirstInstruction(entry) : NULL; !failed && in; in = LLVMGetNextInstruction(in)) {
      if (!static_bytes(td, in)) continue;
      value_set one = {0};
      if (derived_from(in, &one, &failed)) {
        set_add(&t->allocas, in, &failed);
        for (size_t i = 0; i < one.cap; i++)
          if (one.v[i]) set_add(&t->derived, one.v[i], &failed);
      }
      free(one.v);
    }
  }
  if (failed) {
    pa_tracked_locals_free(t);
    return NULL;
  }
  return t;
}

void pa_tracked_locals_free(pa_tracked_locals *t) {
  if (!t) return;
  free(t->allocas.v), free(t->derived.v);
  free(t);
}

bool pa_tracked_local_access(const pa_tracked_locals *t, LLVMValueRef addr) {
  if (!t || !t->derived.n) return false;
  if (LLVMIsAExtractElementInst(addr) && set_has(&t->derived, LLVMGetOperand(addr, 0))) return true; /* a gather's lane */
  if (LLVMIsAGetElementPtrInst(addr) && set_has(&t->derived, LLVMGetOperand(addr, 0))) return true; /* a constant mask's first lane */
  return set_has(&t->derived, addr);
}

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

/* The region's lines that only tracked allocas use (a line shared with another local is not). */
static uint64_t *tracked_lines(const pa_tracked_locals *t, const frame *fr, const uint64_t *start, int nf, uint64_t end) {
  size_t words = (size_t)((end + PA_LINE_BYTES - 1) / PA_LINE_BYTES + 63) / 64;
  uint64_t *yes = calloc(words, sizeof *yes), *no = calloc(words, sizeof *no);
  bool any = false;
  for (int f = 0; yes && no && f < nf; f++)
    for (int i = 0; i < fr[f].n; i++) {
      const local *l = &fr[f].ls[i];
      bool tracked = set_has(&t->allocas, l->alloca);
      uint64_t *m = tracked ? yes : no;
      for (uint64_t line = (start[f] + l->at) / PA_LINE_BYTES; line <= (start[f] + l->at + l->bytes - 1) / PA_LINE_BYTES; line++)
        m[line / 64] |= 1ULL << (line % 64);
    }
  for (size_t w = 0; yes && no && w < words; w++) any |= (yes[w] &= ~no[w]) != 0;
  free(no);
  if (!any) free(yes), yes = NULL;
  return yes;
}

int64_t pa_move_locals(LLVMBuilderRef b, LLVMTargetDataRef td, LLVMValueRef *fns, LLVMValueRef *states, int nf,
                       const pa_tracked_locals *tracked, uint64_t **tracked_map) {
  if (tracked_map) *tracked_map = NULL;
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
  if (ok && tracked && tracked_map) *tracked_map = tracked_lines(tracked, fr, start, nf, end);
  for (int f = 0; fr && f < nf; f++) free(fr[f].ls);
  free(fr), free(calls), free(state), free(start);
  return ok ? (int64_t)end : 0;
}
