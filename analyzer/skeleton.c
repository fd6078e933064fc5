/* The instrumented module's address skeleton (pa_options.addresses_only): what the run measures
 * is which addresses the hooks see and which blocks run, not the values the kernel computes. So
 * after instrumentation every instruction that neither a branch, a call, a kept store nor a hook
 * needs is removed: the floating-point loads and stores (their hooks stay, with the addresses)
 * and the arithmetic between them. The run then touches no argument buffer and the compile has
 * no vector arithmetic to select or registers to allocate for it; the hooks see the same
 * addresses in the same order, so the profile is the same (tests/analyzer/test_skeleton.c).
 *
 * It applies only where no address or branch can depend on a value the removed stores wrote:
 * no floating-point value loaded from memory may be needed, and an integer loaded from memory
 * may be needed only when it is the hooks' own state or __pa_main's argument slots, or when no
 * floating-point store is removed. Otherwise the module is left whole. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

static bool is_fp_type(LLVMTypeRef t) {
  LLVMTypeKind k = LLVMGetTypeKind(t);
  if (k == LLVMVectorTypeKind || k == LLVMScalableVectorTypeKind) k = LLVMGetTypeKind(LLVMGetElementType(t));
  return k == LLVMHalfTypeKind || k == LLVMBFloatTypeKind || k == LLVMFloatTypeKind || k == LLVMDoubleTypeKind ||
         k == LLVMX86_FP80TypeKind || k == LLVMFP128TypeKind || k == LLVMPPC_FP128TypeKind;
}

/* Intrinsics without side effects whose result nothing may need (a prefix of the name). */
static bool pure_intrinsic(const char *c) {
  static const char *const pure[] = {
      "llvm.masked.load.", "llvm.masked.gather.", "llvm.fmuladd.", "llvm.fma.", "llvm.maxnum.", "llvm.minnum.",
      "llvm.maximum.", "llvm.minimum.", "llvm.fabs.", "llvm.sqrt.", "llvm.exp.", "llvm.exp2.", "llvm.log.",
      "llvm.log2.", "llvm.log10.", "llvm.pow.", "llvm.powi.", "llvm.copysign.", "llvm.floor.", "llvm.ceil.",
      "llvm.trunc.", "llvm.rint.", "llvm.round.", "llvm.roundeven.", "llvm.nearbyint.", "llvm.sin.", "llvm.cos.",
      "llvm.tanh.", "llvm.vector.reduce.", "llvm.smax.", "llvm.smin.", "llvm.umax.", "llvm.umin.", "llvm.abs.",
      "llvm.ctpop.", "llvm.ctlz.", "llvm.cttz.", "llvm.fshl.", "llvm.fshr.", "llvm.bswap.", "llvm.bitreverse."};
  for (size_t i = 0; i < PT_ARRAY_LEN(pure); i++)
    if (strncmp(c, pure[i], strlen(pure[i])) == 0) return true;
  return false;
}

typedef enum {
  SK_ROOT,      /* kept, with every operand it uses */
  SK_PURE,      /* kept only if something kept uses it */
  SK_FP_STORE,  /* a floating-point store (plain or masked): removed, its hook stays */
} sk_kind;

static sk_kind kind_of(LLVMValueRef in) {
  LLVMOpcode op = LLVMGetInstructionOpcode(in);
  switch (op) {
  case LLVMStore:
    return !LLVMGetVolatile(in) && is_fp_type(LLVMTypeOf(LLVMGetOperand(in, 0))) ? SK_FP_STORE : SK_ROOT;
  case LLVMLoad:
    return LLVMGetVolatile(in) || LLVMGetOrdering(in) != LLVMAtomicOrderingNotAtomic ? SK_ROOT : SK_PURE;
  case LLVMCall: {
    const char *c = pa_callee_name(in);
    if (strncmp(c, "llvm.", 5) != 0) return SK_ROOT;
    if (pure_intrinsic(c)) return SK_PURE;
    if ((strncmp(c, "llvm.masked.store.", 18) == 0 || strncmp(c, "llvm.masked.scatter.", 20) == 0) &&
        is_fp_type(LLVMTypeOf(LLVMGetOperand(in, 0))))
      return SK_FP_STORE;
    return SK_ROOT;
  }
  case LLVMRet: case LLVMBr: case LLVMSwitch: case LLVMIndirectBr: case LLVMInvoke: case LLVMUnreachable:
  case LLVMResume: case LLVMCleanupRet: case LLVMCatchRet: case LLVMCatchPad: case LLVMCleanupPad:
  case LLVMCatchSwitch: case LLVMLandingPad: case LLVMCallBr: case LLVMFence: case LLVMAtomicCmpXchg:
  case LLVMAtomicRMW: case LLVMVAArg: case LLVMAlloca:
    return SK_ROOT;
  default:
    return SK_PURE;
  }
}

/* The object a pointer is into: through getelementptrs and casts. */
static LLVMValueRef base_of(LLVMValueRef p) {
  for (;;) {
    if (LLVMIsAGetElementPtrInst(p) || LLVMIsABitCastInst(p) || LLVMIsAAddrSpaceCastInst(p)) p = LLVMGetOperand(p, 0);
    else if (LLVMIsAConstantExpr(p) && (LLVMGetConstOpcode(p) == LLVMGetElementPtr || LLVMGetConstOpcode(p) == LLVMBitCast))
      p = LLVMGetOperand(p, 0);
    else return p;
  }
}

/* Memory the hooks own: the thread state __pa_enter returns, the run's context (a constant
 * address by now), and what is reached through pointers loaded from them. */
static bool hooks_memory(LLVMValueRef p) {
  for (int depth = 0; depth < 8; depth++) {
    LLVMValueRef b = base_of(p);
    if (LLVMIsAConstantExpr(b) && LLVMGetConstOpcode(b) == LLVMIntToPtr) return true;
    if (LLVMIsACallInst(b)) {
      const char *c = pa_callee_name(b);
      return strcmp(c, PA_SYM_ENTER) == 0;
    }
    if (!LLVMIsALoadInst(b)) return false;
    p = LLVMGetOperand(b, 0);
  }
  return false;
}

typedef struct {
  LLVMValueRef *v;
  int n, cap;
} value_list;

static void push(value_list *l, LLVMValueRef v) {
  if (l->n == l->cap) l->v = realloc(l->v, sizeof *l->v * (size_t)(l->cap = l->cap ? 2 * l->cap : 256));
  l->v[l->n++] = v;
}

int pa_addresses_only(LLVMModuleRef mod, int *removed, char *why, size_t cap) {
  *removed = 0;
  why[0] = 0;
  LLVMValueRef *fns;
  int nf = pa_defined_functions(mod, &fns);
  value_list all = {0}, work = {0};
  for (int f = 0; f < nf; f++)
    for (LLVMBasicBlockRef bb = LLVMGetFirstBasicBlock(fns[f]); bb; bb = LLVMGetNextBasicBlock(bb))
      for (LLVMValueRef in = LLVMGetFirstInstruction(bb); in; in = LLVMGetNextInstruction(in)) push(&all, in);
  pa_ptrmap index;
  pa_ptrmap_init(&index, (size_t)all.n + 1);
  char *kind = malloc((size_t)all.n + 1), *needed = calloc((size_t)all.n + 1, 1);
  bool fp_stores = false;
  for (int i = 0; i < all.n; i++) {
    pa_ptrmap_put(&index, all.v[i], i);
    kind[i] = (char)kind_of(all.v[i]);
    fp_stores |= kind[i] == SK_FP_STORE;
    if (kind[i] == SK_ROOT) needed[i] = 1, push(&work, all.v[i]);
  }
  while (work.n) { /* everything a kept instruction uses is kept */
    LLVMValueRef in = work.v[--work.n];
    int ops = LLVMGetNumOperands(in);
    for (int k = 0; k < ops; k++) {
      LLVMValueRef o = LLVMGetOperand(in, (unsigned)k);
      int j = o && LLVMIsAInstruction(o) ? pa_ptrmap_get(&index, o) : -1;
      if (j >= 0 && !needed[j]) needed[j] = 1, push(&work, o);
    }
  }
  int rc = 1;
  for (int i = 0; i < all.n && rc; i++) {
    LLVMValueRef in = all.v[i];
    if (!needed[i]) continue; /* a kept load (volatile or atomic ones too) must read what the whole module would */
    bool reads = LLVMIsALoadInst(in) != NULL;
    const char *c = LLVMIsACallInst(in) ? pa_callee_name(in) : NULL;
    if (c && (strncmp(c, "llvm.masked.load.", 17) == 0 || strncmp(c, "llvm.masked.gather.", 19) == 0)) reads = true;
    if (!reads) continue;
    LLVMTypeRef t = LLVMTypeOf(in);
    const char *fn = LLVMGetValueName2(LLVMGetBasicBlockParent(LLVMGetInstructionParent(in)), &(size_t){0});
    if (is_fp_type(t)) {
      snprintf(why, cap, "a floating-point value loaded in '%s' reaches an address, a branch, a call or a kept store", fn);
      rc = 0;
    } else if (LLVMGetTypeKind(t) != LLVMPointerTypeKind && fp_stores && strcmp(fn, PA_SYM_MAIN) != 0 &&
               !(LLVMIsALoadInst(in) && hooks_memory(LLVMGetOperand(in, 0)))) {
      snprintf(why, cap, "an integer loaded in '%s' reaches an address, a branch, a call or a kept store, beside floating-point stores", fn);
      rc = 0;
    }
  }
  if (rc) { /* the rest goes: its users are all among it */
    for (int i = 0; i < all.n; i++)
      if (!needed[i] && LLVMGetTypeKind(LLVMTypeOf(all.v[i])) != LLVMVoidTypeKind)
        LLVMReplaceAllUsesWith(all.v[i], LLVMGetPoison(LLVMTypeOf(all.v[i])));
    for (int i = 0; i < all.n; i++)
      if (!needed[i]) LLVMInstructionEraseFromParent(all.v[i]), ++*removed;
  }
  pa_ptrmap_free(&index);
  free(kind), free(needed), free(all.v), free(work.v), free(fns);
  return rc;
}
