/* Reuse profiles without running the kernel (DESIGN.md, "Profiles cheap enough for search"):
 * the integer and pointer values that addresses and branches depend on are interpreted block
 * by block, each load and store gives its line addresses, and the exact tracker takes them.
 * Parallel bodies (pt_parallel_for) are sampled in time: a few windows of their iteration
 * range, each after a warm-up of the iterations just before it, scaled to the whole range. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <llvm-c/Target.h>

#include "int_ops.h"
#include "internal.h"

/* Interpreted operations per profile before giving up (the sampled run is then cheaper). */
#define BUDGET_OPS 4000000000LL
#define REGION_SHIFT 40
/* each buffer (pointer argument or loaded pointer) gets 2^40 bytes */

typedef enum {
  T_BIN, T_ICMP, T_SELECT, T_ZEXT, T_SEXT, T_TRUNC, T_COPY, T_GEP, T_MINMAX, T_LOADPTR, T_ACCESS, T_PARFOR, T_CALL
} top;

typedef struct {
  top op;
  LLVMOpcode bin;
  int pred, bits, src_bits;
  int dst, a, b, c;     /* slots */
  int64_t bytes;        /* T_ACCESS: bytes moved; T_GEP: constant offset */
  int64_t off;          /* T_ACCESS: bytes from the address to the first moved (a constant mask's first lane) */
  int n_idx;            /* T_GEP: variable indices (slot, scale) */
  int *idx;
  int64_t *scale;
  int callee;           /* T_PARFOR, T_CALL: function index */
  int n_args, *args;    /* T_CALL: argument slots */
} tinst;

typedef struct {
  int n_phi, *phi_dst, *phi_src; /* [n_phi * n_preds]: source slot per predecessor */
  int n_inst;
  tinst *inst;
  int term;   /* 0 ret, 1 br, 2 condbr, 3 switch */
  int cond, n_succ, *succ;
  uint64_t *case_val;
} tblock;

typedef struct {
  int n_blocks, n_slots, n_params, entry_slots;
  tblock *blocks;
  uint64_t *init; /* slot values at entry: constants filled */
  int *param_slot;
  int *preds_index; /* [block * n_blocks + pred] -> position in the block's predecessor list */
} tfunc;

typedef struct {
  const pa_module *m;
  pa_profile *p;
  LLVMValueRef *fns;
  int n_fns;
  tfunc *tf;
  LLVMTargetDataRef td;
  pt_diag *d;
  /* run state */
  pa_tracker *tracker;
  int group;          /* function index, or n_fns during a warm-up (not counted) */
  bool warm;
  int64_t ops;
  const pa_trace_opts *o;
  double *acc;        /* [function][PA_TRACKER_WORDS]: counts taken so far, scaled */
  uint64_t *base;     /* the tracker's counts already in acc */
  /* Warm-ups only set the LRU order the windows start from, so repeats of a line still in a
   * small direct-mapped filter are not fed; a line is fed when it leaves the filter, and the
   * filter's lines in the order of their last access when the warm-up ends. */
  pa_warm_filter filter;
  int64_t n_regions;  /* loaded pointers: a region each, by the address they were loaded from */
  uint64_t *region_key;
  int err;
} tracer;

static int slot_new(pa_ptrmap *map, LLVMValueRef v, int *n) {
  int s = pa_ptrmap_get(map, v);
  if (s < 0) pa_ptrmap_put(map, v, s = (*n)++);
  return s;
}

static bool scalar_int_or_ptr(LLVMTypeRef t) {
  LLVMTypeKind k = LLVMGetTypeKind(t);
  return k == LLVMIntegerTypeKind || k == LLVMPointerTypeKind;
}

static int type_bits(LLVMTypeRef t) {
  return LLVMGetTypeKind(t) == LLVMIntegerTypeKind ? (int)LLVMGetIntTypeWidth(t) : 64;
}

static int fail_at(tracer *t, const pa_function *f, LLVMValueRef in, const char *why) {
  char *s = LLVMPrintValueToString(in);
  char line[160];
  snprintf(line, sizeof line, "%s", s ? s : "");
  LLVMDisposeMessage(s);
  return t->err = pt_fail(t->d, PT_ERR_UNSUPPORTED, "reuse trace: %s: '%s' in function '%s' (use a sampled run)", why,
                          line, f->name);
}

/* The slot of an operand; constants get a slot whose initial value is the constant. */
static int operand(tracer *t, tfunc *tf, pa_ptrmap *map, LLVMValueRef v, uint64_t **init, int *cap, const pa_function *f,
                   LLVMValueRef user) {
  int s = pa_ptrmap_get(map, v);
  if (s >= 0) return s;
  uint64_t val = 0;
  if (LLVMIsAConstantInt(v)) val = (uint64_t)LLVMConstIntGetSExtValue(v);
  else if (LLVMIsAConstantPointerNull(v) || LLVMIsAPoisonValue(v) || LLVMIsAUndefValue(v)) val = 0;
  else if (LLVMIsAGlobalValue(v)) val = (uint64_t)(t->n_fns + 1000 + (int64_t)tf->n_slots) << REGION_SHIFT;
  else if (LLVMIsAFunction(v)) val = 0;
  else {
    fail_at(t, f, user, "an operand that is neither a value of the function nor a constant");
    return 0;
  }
  s = slot_new(map, v, &tf->n_slots);
  if (s >= *cap) *init = realloc(*init, sizeof **init * (size_t)(*cap = 2 * s + 16));
  (*init)[s] = val;
  return s;
}

/* Bytes a memory node moves from *off bytes past its address, and the address, as the
 * instrumentation counts them; NULL if none. *gather: one the trace cannot follow (a masked
 * load or store among them unless its mask is a constant: the run counts the active lanes,
 * and the trace computes no vectors). */
static LLVMValueRef access_of(tracer *t, LLVMValueRef in, int64_t *bytes, int64_t *off, bool *gather) {
  LLVMOpcode op = LLVMGetInstructionOpcode(in);
  pa_masked m;
  *gather = false, *off = 0;
  if (op == LLVMLoad) {
    *bytes = (int64_t)LLVMStoreSizeOfType(t->td, LLVMTypeOf(in));
    return LLVMGetOperand(in, 0);
  }
  if (op == LLVMStore) {
    *bytes = (int64_t)LLVMStoreSizeOfType(t->td, LLVMTypeOf(LLVMGetOperand(in, 0)));
    return LLVMGetOperand(in, 1);
  }
  if (op == LLVMAtomicRMW || op == LLVMAtomicCmpXchg) return *gather = true, NULL;
  if (op != LLVMCall) return NULL;
  const char *c = pa_callee_name(in);
  if (pa_masked_of(t->td, in, &m) && !m.lanes_apart) {
    uint64_t first;
    int64_t span = pa_mask_span(&m, &first);
    if (!m.whole_lanes) return *bytes = (int64_t)m.bytes, m.ptr; /* as the run: the whole vector */
    *bytes = span, *off = (int64_t)first, *gather = span < 0;
    return span <= 0 ? NULL : m.ptr;
  }
  if (strncmp(c, "llvm.masked.", 12) == 0 || strncmp(c, "llvm.mem", 8) == 0) *gather = true;
  return NULL;
}

static int fn_index(tracer *t, LLVMValueRef fn) {
  for (int i = 0; i < t->n_fns; i++)
    if (t->fns[i] == fn) return i;
  return -1;
}

/* Marks the values addresses, branches and calls depend on (backward closure). */
static void need(pa_ptrmap *needed, LLVMValueRef v, LLVMValueRef **stack, int *sp, int *cap) {
  if (!(LLVMIsAInstruction(v) || LLVMIsAArgument(v)) || pa_ptrmap_get(needed, v) >= 0) return;
  pa_ptrmap_put(needed, v, 1);
  if (*sp == *cap) *stack = realloc(*stack, sizeof **stack * (size_t)(*cap = *cap ? 2 * *cap : 64));
  (*stack)[(*sp)++] = v;
}

static int prepare(tracer *t, int fi) {
  LLVMValueRef fn = t->fns[fi];
  const pa_function *f = &t->p->functions[fi];
  tfunc *tf = &t->tf[fi];
  int nb = tf->n_blocks = f->n_blocks;
  pa_ptrmap bbmap, map, needed;
  pa_ptrmap_init(&bbmap, (size_t)nb);
  pa_ptrmap_init(&map, 256);
  pa_ptrmap_init(&needed, 256);
  LLVMBasicBlockRef *bbs = malloc(sizeof *bbs * (size_t)(nb + 1));
  int bi = 0;
  for (LLVMBasicBlockRef bb = LLVMGetFirstBasicBlock(fn); bb; bb = LLVMGetNextBasicBlock(bb)) {
    pa_ptrmap_put(&bbmap, bb, bi);
    bbs[bi++] = bb;
  }
  /* roots */
  LLVMValueRef *stack = NULL;
  int sp = 0, scap = 0;
  for (int b = 0; b < nb; b++)
    for (LLVMValueRef in = LLVMGetFirstInstruction(bbs[b]); in; in = LLVMGetNextInstruction(in)) {
      int64_t bytes, off;
      bool gather;
      LLVMValueRef addr = access_of(t, in, &bytes, &off, &gather);
      if (addr) need(&needed, addr, &stack, &sp, &scap);
      LLVMOpcode op = LLVMGetInstructionOpcode(in);
      if (op == LLVMBr && LLVMIsConditional(in)) need(&needed, LLVMGetCondition(in), &stack, &sp, &scap);
      if (op == LLVMSwitch) need(&needed, LLVMGetOperand(in, 0), &stack, &sp, &scap);
      if (op == LLVMCall && fn_index(t, LLVMGetCalledValue(in)) >= 0)
        for (int k = 0; k < (int)LLVMGetNumArgOperands(in); k++) need(&needed, LLVMGetOperand(in, (unsigned)k), &stack, &sp, &scap);
      if (op == LLVMCall && strcmp(pa_callee_name(in), "pt_parallel_for") == 0)
        for (int k = 2; k < 4; k++) need(&needed, LLVMGetOperand(in, (unsigned)k), &stack, &sp, &scap);
    }
  while (sp && !t->err) {
    LLVMValueRef v = stack[--sp];
    if (LLVMIsAArgument(v)) continue;
    if (!scalar_int_or_ptr(LLVMTypeOf(v))) {
      fail_at(t, f, v, "an address or branch depends on a vector or floating-point value");
      break;
    }
    LLVMOpcode op = LLVMGetInstructionOpcode(v);
    if (op == LLVMLoad) {
      if (LLVMGetTypeKind(LLVMTypeOf(v)) != LLVMPointerTypeKind) {
        fail_at(t, f, v, "an address or branch depends on a value loaded from memory");
        break;
      }
      need(&needed, LLVMGetOperand(v, 0), &stack, &sp, &scap);
      continue;
    }
    int nops = LLVMGetNumOperands(v);
    if (op == LLVMCall) nops = LLVMGetNumArgOperands(v);
    for (int k = 0; k < nops; k++) need(&needed, LLVMGetOperand(v, (unsigned)k), &stack, &sp, &scap);
  }
  free(stack);
  /* slots: parameters first */
  int icap = 64;
  tf->init = calloc((size_t)icap, sizeof *tf->init);
  tf->n_params = (int)LLVMCountParams(fn);
  tf->param_slot = malloc(sizeof(int) * ((size_t)tf->n_params + 1));
  int pi = 0;
  for (LLVMValueRef prm = LLVMGetFirstParam(fn); prm; prm = LLVMGetNextParam(prm)) tf->param_slot[pi++] = slot_new(&map, prm, &tf->n_slots);
  for (int b = 0; b < nb; b++)
    for (LLVMValueRef in = LLVMGetFirstInstruction(bbs[b]); in; in = LLVMGetNextInstruction(in))
      if (pa_ptrmap_get(&needed, in) >= 0) slot_new(&map, in, &tf->n_slots);
  if (tf->n_slots >= icap) tf->init = realloc(tf->init, sizeof *tf->init * (size_t)(icap = 2 * tf->n_slots + 16));
  memset(tf->init, 0, sizeof *tf->init * (size_t)icap);
  tf->blocks = calloc((size_t)nb, sizeof *tf->blocks);
  int n_alloca = 0;
  tf->preds_index = malloc(sizeof(int) * (size_t)nb * (size_t)nb);
  for (int b = 0; b < nb; b++)
    for (int q = 0; q < nb; q++) tf->preds_index[b * nb + q] = -1;
  for (int b = 0; b < nb && !t->err; b++) {
    const pa_block *pb = &f->blocks[b];
    for (int q = 0; q < pb->n_preds; q++) tf->preds_index[b * nb + pb->preds[q]] = q;
    tblock *tb = &tf->blocks[b];
    int n_in = 0;
    for (LLVMValueRef in = LLVMGetFirstInstruction(bbs[b]); in; in = LLVMGetNextInstruction(in)) n_in++;
    tb->inst = calloc(2 * (size_t)n_in + 1, sizeof *tb->inst); /* an access and the pointer it loads */
    tb->phi_dst = calloc((size_t)n_in + 1, sizeof(int));
    tb->phi_src = calloc(((size_t)n_in + 1) * ((size_t)pb->n_preds + 1), sizeof(int));
    for (LLVMValueRef in = LLVMGetFirstInstruction(bbs[b]); in && !t->err; in = LLVMGetNextInstruction(in)) {
      LLVMOpcode op = LLVMGetInstructionOpcode(in);
      int dst = pa_ptrmap_get(&needed, in) >= 0 ? pa_ptrmap_get(&map, in) : -1;
      if (op == LLVMPHI) {
        if (dst < 0) continue;
        int k = tb->n_phi++;
        tb->phi_dst[k] = dst;
        for (unsigned j = 0; j < LLVMCountIncoming(in); j++) {
          int from = pa_ptrmap_get(&bbmap, LLVMGetIncomingBlock(in, j));
          int q = from >= 0 ? tf->preds_index[b * nb + from] : -1;
          if (q < 0) continue;
          tb->phi_src[k * pb->n_preds + q] = operand(t, tf, &map, LLVMGetIncomingValue(in, j), &tf->init, &icap, f, in);
        }
        continue;
      }
      if (op == LLVMRet || op == LLVMUnreachable) {
        tb->term = 0;
        continue;
      }
      if (op == LLVMBr) {
        tb->term = LLVMIsConditional(in) ? 2 : 1;
        if (tb->term == 2) tb->cond = operand(t, tf, &map, LLVMGetCondition(in), &tf->init, &icap, f, in);
        tb->n_succ = (int)LLVMGetNumSuccessors(in);
        tb->succ = malloc(sizeof(int) * (size_t)tb->n_succ);
        for (int s = 0; s < tb->n_succ; s++) tb->succ[s] = pa_ptrmap_get(&bbmap, LLVMGetSuccessor(in, (unsigned)s));
        continue;
      }
      if (op == LLVMSwitch) {
        tb->term = 3;
        tb->cond = operand(t, tf, &map, LLVMGetOperand(in, 0), &tf->init, &icap, f, in);
        tb->n_succ = (int)LLVMGetNumSuccessors(in);
        tb->succ = malloc(sizeof(int) * (size_t)tb->n_succ);
        tb->case_val = calloc((size_t)tb->n_succ, sizeof(uint64_t));
        for (int s = 0; s < tb->n_succ; s++) {
          tb->succ[s] = pa_ptrmap_get(&bbmap, LLVMGetSuccessor(in, (unsigned)s));
          if (s > 0) tb->case_val[s] = (uint64_t)LLVMConstIntGetSExtValue(LLVMGetOperand(in, (unsigned)(2 * s)));
        }
        continue;
      }
      tinst ti = {.dst = dst};
      int64_t bytes, off;
      bool gather;
      LLVMValueRef addr = access_of(t, in, &bytes, &off, &gather);
      if (gather) {
        fail_at(t, f, in, "a gather, scatter, atomic, memory intrinsic or masked access whose mask is not a constant");
        break;
      }
      if (addr) {
        tinst acc = {.op = T_ACCESS, .a = operand(t, tf, &map, addr, &tf->init, &icap, f, in), .bytes = bytes, .off = off, .dst = -1};
        tb->inst[tb->n_inst++] = acc;
        if (dst < 0) continue;
        if (op != LLVMLoad) {
          fail_at(t, f, in, "an address or branch depends on a value loaded from memory");
          break;
        }
        ti.op = T_LOADPTR;
        ti.a = acc.a;
        tb->inst[tb->n_inst++] = ti;
        continue;
      }
      if (op == LLVMCall) {
        const char *c = pa_callee_name(in);
        int g = fn_index(t, LLVMGetCalledValue(in));
        if (strcmp(c, "pt_parallel_for") == 0 && LLVMGetNumArgOperands(in) == 4) {
          ti.op = T_PARFOR;
          ti.callee = fn_index(t, LLVMGetOperand(in, 1));
          if (ti.callee < 0) {
            fail_at(t, f, in, "a parallel body that is not a function of the module");
            break;
          }
          ti.a = operand(t, tf, &map, LLVMGetOperand(in, 2), &tf->init, &icap, f, in);
          ti.b = operand(t, tf, &map, LLVMGetOperand(in, 3), &tf->init, &icap, f, in);
          tb->inst[tb->n_inst++] = ti;
          continue;
        }
        if (g >= 0) {
          ti.op = T_CALL;
          ti.callee = g;
          ti.n_args = LLVMGetNumArgOperands(in);
          ti.args = malloc(sizeof(int) * ((size_t)ti.n_args + 1));
          for (int k = 0; k < ti.n_args; k++) ti.args[k] = operand(t, tf, &map, LLVMGetOperand(in, (unsigned)k), &tf->init, &icap, f, in);
          tb->inst[tb->n_inst++] = ti;
          continue;
        }
        if (dst < 0) {
          if (strncmp(c, "llvm.", 5) != 0) {
            fail_at(t, f, in, "a call to an external function");
            break;
          }
          continue; /* an intrinsic computing values no address needs */
        }
        static const char *const mm[] = {"llvm.smin.", "llvm.smax.", "llvm.umin.", "llvm.umax."};
        ti.pred = -1;
        for (int k = 0; k < 4; k++)
          if (strncmp(c, mm[k], strlen(mm[k])) == 0) ti.pred = k;
        if (ti.pred < 0) {
          fail_at(t, f, in, "an address or branch depends on a call");
          break;
        }
        ti.op = T_MINMAX;
        ti.bits = type_bits(LLVMTypeOf(in));
        ti.a = operand(t, tf, &map, LLVMGetOperand(in, 0), &tf->init, &icap, f, in);
        ti.b = operand(t, tf, &map, LLVMGetOperand(in, 1), &tf->init, &icap, f, in);
        tb->inst[tb->n_inst++] = ti;
        continue;
      }
      if (dst < 0) continue;
      if (op == LLVMAlloca) { /* a stack buffer: the same place on every call, as on one thread */
        tf->init[dst] = (uint64_t)(2000 + 1024 * fi + n_alloca++ % 1024) << REGION_SHIFT;
        continue;
      }
      ti.bits = type_bits(LLVMTypeOf(in));
      int nops = LLVMGetNumOperands(in);
      if (nops >= 1) {
        ti.a = operand(t, tf, &map, LLVMGetOperand(in, 0), &tf->init, &icap, f, in);
        ti.src_bits = type_bits(LLVMTypeOf(LLVMGetOperand(in, 0)));
      }
      if (nops >= 2 && op != LLVMGetElementPtr) ti.b = operand(t, tf, &map, LLVMGetOperand(in, 1), &tf->init, &icap, f, in);
      if (nops >= 3 && op == LLVMSelect) ti.c = operand(t, tf, &map, LLVMGetOperand(in, 2), &tf->init, &icap, f, in);
      switch (op) {
      case LLVMAdd: case LLVMSub: case LLVMMul: case LLVMUDiv: case LLVMSDiv: case LLVMURem: case LLVMSRem:
      case LLVMShl: case LLVMLShr: case LLVMAShr: case LLVMAnd: case LLVMOr: case LLVMXor:
        ti.op = T_BIN, ti.bin = op;
        break;
      case LLVMICmp: ti.op = T_ICMP, ti.pred = (int)LLVMGetICmpPredicate(in); break;
      case LLVMSelect: ti.op = T_SELECT; break;
      case LLVMZExt: ti.op = T_ZEXT; break;
      case LLVMSExt: ti.op = T_SEXT; break;
      case LLVMTrunc: ti.op = T_TRUNC; break;
      case LLVMFreeze: case LLVMBitCast: case LLVMPtrToInt: case LLVMIntToPtr: case LLVMAddrSpaceCast: ti.op = T_COPY; break;
      case LLVMGetElementPtr: {
        ti.op = T_GEP;
        LLVMTypeRef ty = LLVMGetGEPSourceElementType(in);
        ti.idx = malloc(sizeof(int) * (size_t)nops);
        ti.scale = malloc(sizeof(int64_t) * (size_t)nops);
        for (int k = 1; k < nops && !t->err; k++) {
          LLVMValueRef ix = LLVMGetOperand(in, (unsigned)k);
          if (k > 1 && LLVMGetTypeKind(ty) == LLVMStructTypeKind) {
            unsigned field = (unsigned)LLVMConstIntGetZExtValue(ix);
            ti.bytes += (int64_t)LLVMOffsetOfElement(t->td, ty, field);
            ty = LLVMStructGetTypeAtIndex(ty, field);
            continue;
          }
          if (k > 1) ty = LLVMGetElementType(ty);
          int64_t size = (int64_t)LLVMABISizeOfType(t->td, ty);
          if (LLVMIsAConstantInt(ix)) {
            ti.bytes += LLVMConstIntGetSExtValue(ix) * size;
            continue;
          }
          if (LLVMGetTypeKind(LLVMTypeOf(ix)) == LLVMVectorTypeKind) {
            fail_at(t, f, in, "a vector of addresses");
            break;
          }
          ti.idx[ti.n_idx] = operand(t, tf, &map, ix, &tf->init, &icap, f, in);
          ti.scale[ti.n_idx++] = size * 1;
        }
        break;
      }
      default:
        fail_at(t, f, in, "an address or branch depends on an operation the trace does not interpret");
        break;
      }
      tb->inst[tb->n_inst++] = ti;
    }
  }
  tf->init = realloc(tf->init, sizeof *tf->init * ((size_t)tf->n_slots + 1));
  free(bbs);
  pa_ptrmap_free(&bbmap);
  pa_ptrmap_free(&map);
  pa_ptrmap_free(&needed);
  return t->err;
}


static void access(tracer *t, uint64_t a, int64_t bytes) {
  if (bytes <= 0) return;
  uint64_t first = a / PA_LINE_BYTES, last = (a + (uint64_t)bytes - 1) / PA_LINE_BYTES;
  for (uint64_t line = first; line <= last; line++) {
    if (!t->warm) {
      pa_tracker_access(t->tracker, line, t->group);
      continue;
    }
    pa_warm_filter_access(&t->filter, t->tracker, line, t->n_fns);
  }
}

/* The end of a warm-up: the filter's lines, least recent first. */
static void flush_filter(tracer *t) { pa_warm_filter_flush(&t->filter, t->tracker, t->n_fns); }

static int run_parallel(tracer *t, int g, uint64_t ctx, int64_t n);

/* Adds the tracker's counts since the last take to dst (NULL: t->acc), times scale (warm-ups
 * are a group of their own and never taken). */
static void take(tracer *t, double *dst, double scale) {
  for (int f = 0; f < t->n_fns; f++) {
    const uint64_t *c = pa_tracker_counts(t->tracker, f);
    for (int w = 0; w < PA_TRACKER_WORDS; w++) {
      size_t i = (size_t)f * PA_TRACKER_WORDS + (size_t)w;
      (dst ? dst : t->acc)[i] += (double)(c[w] - t->base[i]) * scale;
      t->base[i] = c[w];
    }
  }
}

static int run_fn(tracer *t, int fi, const uint64_t *args) {
  tfunc *tf = &t->tf[fi];
  if (!tf->blocks && prepare(t, fi)) return t->err;
  uint64_t *v = malloc(sizeof *v * ((size_t)tf->n_slots + 1));
  memcpy(v, tf->init, sizeof *v * (size_t)tf->n_slots);
  for (int i = 0; i < tf->n_params; i++) v[tf->param_slot[i]] = args[i];
  uint64_t tmp[256];
  int saved_group = t->group;
  t->group = fi;
  int b = 0, prev = -1;
  const pa_function *f = &t->p->functions[fi];
  while (b >= 0 && !t->err) {
    tblock *tb = &tf->blocks[b];
    if (tb->n_phi) {
      int q = prev >= 0 ? tf->preds_index[b * tf->n_blocks + prev] : -1;
      int np = f->blocks[b].n_preds;
      for (int k = 0; k < tb->n_phi && k < 256; k++) tmp[k] = q >= 0 ? v[tb->phi_src[k * np + q]] : 0;
      for (int k = 0; k < tb->n_phi && k < 256; k++) v[tb->phi_dst[k]] = tmp[k];
    }
    t->ops += tb->n_inst + 1;
    for (int i = 0; i < tb->n_inst; i++) {
      const tinst *x = &tb->inst[i];
      uint64_t a = v[x->a], r = 0;
      uint64_t m = pa_int_mask(x->bits);
      switch (x->op) {
      case T_BIN: /* poison (division by zero, oversized shift) reads as 0 */
        if (!pa_int_binop(x->bin, a & m, v[x->b] & m, x->bits, &r)) r = 0;
        v[x->dst] = r;
        break;
      case T_ICMP: {
        uint64_t mk = pa_int_mask(x->src_bits);
        v[x->dst] = pa_int_icmp(x->pred, a & mk, v[x->b] & mk, x->src_bits);
        break;
      }
      case T_SELECT: v[x->dst] = (a & 1) ? v[x->b] : v[x->c]; break;
      case T_ZEXT: v[x->dst] = a & pa_int_mask(x->src_bits); break;
      case T_SEXT: v[x->dst] = (uint64_t)pa_int_sext(a, x->src_bits) & m; break;
      case T_TRUNC: case T_COPY: v[x->dst] = a & m; break;
      case T_GEP: {
        r = a + (uint64_t)x->bytes;
        for (int k = 0; k < x->n_idx; k++) r += (uint64_t)(pa_int_sext(v[x->idx[k]], 64) * x->scale[k]);
        v[x->dst] = r;
        break;
      }
      case T_MINMAX: v[x->dst] = pa_int_minmax(x->pred, a & m, v[x->b] & m, x->bits); break;
      case T_LOADPTR: { /* a pointer read from memory: a region per address it was read from */
        int64_t k = 0;
        while (k < t->n_regions && t->region_key[k] != a) k++;
        if (k == t->n_regions) {
          t->region_key = realloc(t->region_key, sizeof *t->region_key * (size_t)(t->n_regions + 1));
          t->region_key[t->n_regions++] = a;
        }
        v[x->dst] = (uint64_t)(k + 1) << REGION_SHIFT;
        break;
      }
      case T_ACCESS: access(t, a + (uint64_t)x->off, x->bytes); break;
      case T_PARFOR: run_parallel(t, x->callee, a, pa_int_sext(v[x->b], 64)); break;
      case T_CALL: {
        uint64_t cargs[16] = {0};
        for (int k = 0; k < x->n_args && k < 16; k++) cargs[k] = v[x->args[k]];
        run_fn(t, x->callee, cargs);
        t->group = fi;
        break;
      }
      }
    }
    if (t->ops > BUDGET_OPS) {
      t->err = pt_fail(t->d, PT_ERR_UNSUPPORTED, "reuse trace: '%s' would take over %lld interpreted operations (use a sampled run)",
                       f->name, (long long)BUDGET_OPS);
      break;
    }
    prev = b;
    switch (tb->term) {
    case 0: b = -1; break;
    case 1: b = tb->succ[0]; break;
    case 2: b = (v[tb->cond] & 1) ? tb->succ[0] : tb->succ[1]; break;
    default: {
      int s = 0;
      for (int k = 1; k < tb->n_succ; k++)
        if ((v[tb->cond] & pa_int_mask(64)) == tb->case_val[k]) s = k;
      b = tb->succ[s];
    }
    }
  }
  t->group = saved_group;
  free(v);
  return t->err;
}

/* Distinct lines of body g over [lo, hi), on a scratch tracker. */
static int64_t footprint(tracer *t, int g, uint64_t ctx, int64_t lo, int64_t hi) {
  pa_tracker *keep = t->tracker;
  bool warm = t->warm;
  t->tracker = pa_tracker_new(t->n_fns + 1, 1, 0);
  t->warm = true;
  uint64_t args[3] = {ctx, (uint64_t)lo, (uint64_t)hi};
  run_fn(t, g, args);
  flush_filter(t);
  int64_t lines = (int64_t)pa_tracker_counts(t->tracker, t->n_fns)[PA_REUSE_BINS];
  pa_tracker_free(t->tracker);
  t->tracker = keep, t->warm = warm;
  return lines;
}

/* pt_parallel_for(pool, body, ctx, n) on one thread: [0, n) in windows (pa_trace_opts). */
static int run_parallel(tracer *t, int g, uint64_t ctx, int64_t n) {
  if (n <= 0) return 0;
  const pa_trace_opts *o = t->o;
  int K = o->windows > 0 ? o->windows : 4;
  double share = o->share > 0 ? o->share : 0.05;
  int64_t L = (int64_t)(share * (double)n / K + 0.5);
  if (share >= 1 || L < 1 || (int64_t)K * L * 2 >= n) { /* the whole range */
    uint64_t args[3] = {ctx, 0, (uint64_t)n};
    return run_fn(t, g, args);
  }
  int64_t warm_lines = o->warm_lines > 0 ? o->warm_lines : (int64_t)1 << 17;
  int64_t D = footprint(t, g, ctx, 0, L);
  int64_t W = D > 0 ? (int64_t)((double)warm_lines * (double)L / (double)D + 0.999) : n;
  if (getenv("PA_TRACE_DEBUG")) fprintf(stderr, "trace: body %d n %lld L %lld D %lld W %lld\n", g, (long long)n, (long long)L, (long long)D, (long long)W);
  double counted = 0;
  take(t, NULL, 1);
  size_t nw = (size_t)t->n_fns * PA_TRACKER_WORDS;
  double *first = calloc(nw, sizeof *first), *rest = calloc(nw, sizeof *rest);
  int64_t done = 0; /* iterations interpreted so far (continuity: no warm-up needed at done) */
  bool warm = t->warm;
  for (int k = 0; k < K && !t->err; k++) {
    int64_t s = k == 0 ? 0 : (int64_t)(((double)k + 0.5) * (double)n / K) - L / 2;
    if (s < done) s = done;
    if (s + L > n) s = n - L;
    if (s < done) break;
    int64_t w0 = s - W < done ? done : s - W;
    if (w0 > done) t->warm = true; /* the gap is skipped; the warm-up refills the stack */
    if (s > w0) {
      uint64_t wa[3] = {ctx, (uint64_t)w0, (uint64_t)s};
      t->warm = true;
      run_fn(t, g, wa);
      flush_filter(t);
    }
    t->warm = warm;
    uint64_t args[3] = {ctx, (uint64_t)s, (uint64_t)(s + L)};
    run_fn(t, g, args);
    take(t, k == 0 ? first : rest, 1);
    counted += (double)L;
    done = s + L;
  }
  pa_windows_combine(t->n_fns, first, rest, (double)n, (double)L, counted, t->acc);
  free(first);
  free(rest);
  return t->err;
}

pa_profile *pa_profile_traced(const pa_module *m, const pa_static_opts *so, const pa_trace_opts *o, pt_diag *d) {
  if (so && so->threads > 1) {
    pt_fail(d, PT_ERR_UNSUPPORTED, "reuse trace: models one thread (got %d)", so->threads);
    return NULL;
  }
  double t0 = pt_now();
  pa_profile *p = pa_profile_static_counts(m, so, d);
  if (!p) return NULL;
  pa_trace_opts defaults = {0};
  tracer t = {.m = m, .p = p, .d = d, .o = o ? o : &defaults};
  t.n_fns = pa_defined_functions(m->mod, &t.fns);
  t.tf = calloc((size_t)t.n_fns + 1, sizeof *t.tf);
  t.td = LLVMCreateTargetData(LLVMGetDataLayoutStr(m->mod));
  t.tracker = pa_tracker_new(t.n_fns + 1, 1, 0);
  t.acc = calloc((size_t)t.n_fns * PA_TRACKER_WORDS + 1, sizeof *t.acc);
  t.base = calloc((size_t)t.n_fns * PA_TRACKER_WORDS + 1, sizeof *t.base);
  int entry = -1;
  for (int i = 0; i < t.n_fns; i++)
    if (strcmp(p->functions[i].name, p->entry) == 0) entry = i;
  /* the entry's pointer parameters: a region each (as separate allocations are) */
  uint64_t args[16] = {0};
  for (int k = 0; k < 16; k++) args[k] = (uint64_t)(1000 + k) << REGION_SHIFT;
  int err = entry < 0 ? pt_fail(d, PT_ERR_INPUT, "reuse trace: no entry") : run_fn(&t, entry, args);
  if (!err) {
    take(&t, NULL, 1);
    p->sample_rate = 1;
    p->exact_window = 0;
    p->trace_share = t.o->share > 0 && t.o->share < 1 ? t.o->share : t.o->share >= 1 ? 1 : 0.05;
    p->reuse = pt_alloc(p->arena, sizeof *p->reuse * ((size_t)t.n_fns + 1));
    p->n_reuse = 0;
    memset(&p->reuse_total, 0, sizeof p->reuse_total);
    for (int f = 0; f < t.n_fns; f++) {
      uint64_t c[PA_TRACKER_WORDS];
      for (int w = 0; w < PA_TRACKER_WORDS; w++) c[w] = (uint64_t)(t.acc[(size_t)f * PA_TRACKER_WORDS + (size_t)w] + 0.5);
      pa_reuse_hist h;
      pa_tracker_hist(c, 1, 0, &h);
      memset(&p->reuse_by_function[f], 0, sizeof p->reuse_by_function[f]);
      if (h.accesses <= 0) continue;
      p->reuse[p->n_reuse++] = (pa_reuse_entry){f, 0, h};
      p->reuse_by_function[f] = h;
      pa_reuse_hist_add(&p->reuse_total, &h);
    }
    p->run_seconds = pt_now() - t0;
  }
  for (int i = 0; i < t.n_fns; i++) {
    tfunc *tf = &t.tf[i];
    for (int b = 0; b < tf->n_blocks && tf->blocks; b++) {
      tblock *tb = &tf->blocks[b];
      for (int k = 0; k < tb->n_inst; k++) free(tb->inst[k].idx), free(tb->inst[k].scale), free(tb->inst[k].args);
      free(tb->inst), free(tb->phi_dst), free(tb->phi_src), free(tb->succ), free(tb->case_val);
    }
    free(tf->blocks), free(tf->init), free(tf->param_slot), free(tf->preds_index);
  }
  free(t.tf);
  free(t.fns);
  free(t.acc);
  free(t.base);
  free(t.region_key);
  pa_tracker_free(t.tracker);
  LLVMDisposeTargetData(t.td);
  if (err) {
    pa_profile_free(p);
    return NULL;
  }
  return p;
}
