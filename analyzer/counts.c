/* Block counts per call without running (DESIGN.md, "Profiles cheap enough for search"): the
 * function's control flow is interpreted on the integer values its branches depend on (loop
 * indices, arguments such as a parallel chunk's bounds, constants), never on memory. A loop
 * whose branches (other than its exit test) do not depend on its own induction values takes
 * the same path every iteration: one iteration is run and multiplied by the trip count from
 * the induction pattern. Loops around guards of non-dividing splits are enumerated. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "int_ops.h"
#include "internal.h"

/* Block executions one call may enumerate before we give up (an instrumented run is then
 * cheaper): the tuner's candidates need well under a millisecond of counting each. */
#define BUDGET_STEPS 2000000

/* Integer vectors (the SLP vectorizer packs index arithmetic) are evaluated lane by lane. */
#define MAX_LANES 16

typedef struct {
  int slot;       /* >= 0: a relevant value; -1: constant c; -2: unknown (float, load, ...) */
  uint32_t cmask; /* constant: lanes that are not poison/undef */
  uint64_t c[MAX_LANES];
} opnd;

typedef enum { K_UNKNOWN, K_BINOP, K_ICMP, K_SELECT, K_CAST, K_MINMAX, K_FREEZE, K_INSERT, K_EXTRACT, K_SHUFFLE } ikind;

typedef struct {
  int slot;
  ikind kind;
  LLVMOpcode op;
  int pred;     /* ICmp predicate, or the min/max kind (0 smin, 1 smax, 2 umin, 3 umax) */
  int bits;     /* result element width */
  int lanes;    /* result lanes */
  int src_bits; /* operand element width (casts, compares) */
  int src_lanes;
  int shuffle[MAX_LANES]; /* shufflevector: source lane of each result lane, -1 undefined */
  opnd a, b, c;
} rinst;

typedef struct {
  int slot, bits, lanes, n;
  int *pred_block; /* incoming block index */
  opnd *val;
} rphi;

typedef struct {
  int n_phis, n_insts;
  rphi *phis;
  rinst *insts;
  LLVMOpcode term; /* LLVMRet, LLVMBr, LLVMSwitch, or another (unsupported) */
  opnd cond;       /* conditional br / switch */
  int n_succ;
  int *succ;          /* br: [true, false]; switch: [default, case...] */
  uint64_t *case_val; /* switch case values */
} rblock;

/* How a loop is fast-forwarded (one iteration times the trip count), when it can be; or,
 * piecewise, when its varying branches are compares of affine functions of its induction
 * variable: the iterations split into ranges on which every such compare is constant. */
typedef struct {
  bool matched; /* the exit test is the induction pattern below */
  bool ok;      /* every iteration takes the same path */
  bool pw;      /* piecewise: guards are affine compares of the induction phi */
  int exiting, stay_succ, exit_succ;
  int phi_slot; /* the induction phi */
  int n_guards;
  int *guards;  /* icmp slots of the varying branch conditions */
  int x_slot;   /* the value the exit test compares: the header phi or its increment */
  opnd bound;
  LLVMIntPredicate stay; /* `x stay bound` keeps the loop going */
  int64_t step;
  int bits;
  int n_varying;
  int *varying; /* slots that change from one iteration to the next */
} ffloop;

struct pa_counter {
  const pa_function *f;
  const char *fname;
  int n, n_slots, n_args;
  int *arg_bits;
  rblock *blocks;
  int *header_of; /* block -> loop it heads, or -1 */
  bool *in_loop;  /* [loop * n + block] */
  ffloop *ff;
  int64_t *scratch; /* [loop][4][n]: one iteration's counts before and after the exit test */
  const rinst **def; /* slot -> its instruction (NULL for phis and arguments) */
  int override_slot; /* the next enter() sets this phi to override_val (piecewise jumps) */
  uint64_t override_val;
  /* per run */
  uint64_t *val;   /* [slot * MAX_LANES + lane] */
  uint32_t *known; /* lanes known, per slot */
  int64_t steps;
  pt_diag *d;
  int err;
};

/* Element width of an integer or integer-vector type of at most MAX_LANES lanes; 0 otherwise. */
static int int_bits(LLVMTypeRef t) {
  if (LLVMGetTypeKind(t) == LLVMVectorTypeKind) {
    if (LLVMGetVectorSize(t) > MAX_LANES) return 0;
    t = LLVMGetElementType(t);
  }
  return LLVMGetTypeKind(t) == LLVMIntegerTypeKind ? (int)LLVMGetIntTypeWidth(t) : 0;
}
static int lanes_of(LLVMTypeRef t) {
  return LLVMGetTypeKind(t) == LLVMVectorTypeKind ? (int)LLVMGetVectorSize(t) : 1;
}

/* ------------------------------------------------------------ preparation */

typedef struct {
  pa_ptrmap slots; /* value -> slot */
  LLVMValueRef *vals;
  int n, cap;
} slotset;

static int slot_of(slotset *s, LLVMValueRef v) { return pa_ptrmap_get(&s->slots, v); }

static void mark(slotset *s, LLVMValueRef v) {
  if (!(LLVMIsAInstruction(v) || LLVMIsAArgument(v)) || slot_of(s, v) >= 0) return;
  if (s->n == s->cap) s->vals = realloc(s->vals, sizeof *s->vals * (size_t)(s->cap = s->cap ? 2 * s->cap : 64));
  pa_ptrmap_put(&s->slots, v, s->n);
  s->vals[s->n++] = v;
}

/* Values a branch depends on: the conditions and, transitively, the integer operations,
 * phis and min/max intrinsics that compute them. Loads and other calls end the chain
 * (they stay unknown). */
static bool traversable(LLVMValueRef v) {
  if (!LLVMIsAInstruction(v)) return false;
  switch (LLVMGetInstructionOpcode(v)) {
  case LLVMAdd: case LLVMSub: case LLVMMul: case LLVMUDiv: case LLVMSDiv: case LLVMURem: case LLVMSRem:
  case LLVMShl: case LLVMLShr: case LLVMAShr: case LLVMAnd: case LLVMOr: case LLVMXor: case LLVMICmp:
  case LLVMSelect: case LLVMZExt: case LLVMSExt: case LLVMTrunc: case LLVMFreeze: case LLVMPHI: case LLVMCall:
  case LLVMInsertElement: case LLVMExtractElement: case LLVMShuffleVector:
    return true;
  default: return false;
  }
}

static int minmax_kind(LLVMValueRef call) {
  LLVMValueRef callee = LLVMGetCalledValue(call);
  if (!callee || !LLVMIsAFunction(callee)) return -1;
  size_t len;
  const char *name = LLVMGetValueName2(callee, &len);
  static const char *const names[] = {"llvm.smin.", "llvm.smax.", "llvm.umin.", "llvm.umax."};
  for (int k = 0; k < 4; k++)
    if (strncmp(name, names[k], strlen(names[k])) == 0) return k;
  return -1;
}

static opnd operand(slotset *s, LLVMValueRef v) {
  opnd o = {.slot = -2};
  if (!v) return o;
  int bits = int_bits(LLVMTypeOf(v)), lanes = lanes_of(LLVMTypeOf(v));
  if (LLVMIsAConstantInt(v)) {
    o.slot = -1, o.cmask = 1;
    o.c[0] = LLVMConstIntGetZExtValue(v) & pa_int_mask(bits);
  } else if (bits && (LLVMIsAConstantDataVector(v) || LLVMIsAConstantVector(v) || LLVMIsAConstantAggregateZero(v) ||
                      LLVMIsAPoisonValue(v) || LLVMIsAUndefValue(v))) {
    o.slot = -1; /* poison and undef lanes stay unknown */
    for (int i = 0; i < lanes && !LLVMIsAUndefValue(v); i++) {
      LLVMValueRef e = LLVMGetAggregateElement(v, (unsigned)i);
      if (e && LLVMIsAConstantInt(e)) o.cmask |= 1u << i, o.c[i] = LLVMConstIntGetZExtValue(e) & pa_int_mask(bits);
    }
  } else {
    int sl = slot_of(s, v);
    o.slot = sl >= 0 ? sl : -2;
  }
  return o;
}

static void prepare_inst(slotset *s, LLVMValueRef in, rinst *ri) {
  memset(ri, 0, sizeof *ri);
  ri->slot = slot_of(s, in);
  ri->kind = K_UNKNOWN;
  ri->bits = int_bits(LLVMTypeOf(in));
  ri->lanes = lanes_of(LLVMTypeOf(in));
  if (!ri->bits) return;
  LLVMOpcode op = LLVMGetInstructionOpcode(in);
  ri->op = op;
  int nops = LLVMGetNumOperands(in);
  if (nops >= 1) {
    ri->a = operand(s, LLVMGetOperand(in, 0));
    ri->src_bits = int_bits(LLVMTypeOf(LLVMGetOperand(in, 0)));
    ri->src_lanes = lanes_of(LLVMTypeOf(LLVMGetOperand(in, 0)));
  }
  if (nops >= 2) ri->b = operand(s, LLVMGetOperand(in, 1));
  if (nops >= 3) ri->c = operand(s, LLVMGetOperand(in, 2));
  switch (op) {
  case LLVMAdd: case LLVMSub: case LLVMMul: case LLVMUDiv: case LLVMSDiv: case LLVMURem: case LLVMSRem:
  case LLVMShl: case LLVMLShr: case LLVMAShr: case LLVMAnd: case LLVMOr: case LLVMXor:
    ri->kind = K_BINOP;
    break;
  case LLVMICmp:
    if (ri->src_bits) ri->kind = K_ICMP, ri->pred = (int)LLVMGetICmpPredicate(in);
    break;
  case LLVMSelect: ri->kind = K_SELECT; break;
  case LLVMZExt: case LLVMSExt: case LLVMTrunc:
    if (ri->src_bits) ri->kind = K_CAST;
    break;
  case LLVMFreeze: ri->kind = K_FREEZE; break;
  case LLVMInsertElement: ri->kind = K_INSERT; break;
  case LLVMExtractElement:
    if (ri->src_bits) ri->kind = K_EXTRACT;
    break;
  case LLVMShuffleVector:
    if (!ri->src_bits || (int)LLVMGetNumMaskElements(in) != ri->lanes) break;
    ri->kind = K_SHUFFLE;
    for (int i = 0; i < ri->lanes; i++) {
      int m = LLVMGetMaskValue(in, (unsigned)i);
      ri->shuffle[i] = m == LLVMGetUndefMaskElem() || m < 0 || m >= 2 * ri->src_lanes ? -1 : m;
    }
    break;
  case LLVMCall:
    if ((ri->pred = minmax_kind(in)) >= 0 && nops == 3) ri->kind = K_MINMAX;
    break;
  default: break;
  }
}

static bool list_has(const int *xs, int n, int x) {
  for (int i = 0; i < n; i++)
    if (xs[i] == x) return true;
  return false;
}

/* The exit test of loop l as `x stay bound` with x the header phi or its increment. */
static void match_exit(pa_counter *c, slotset *s, LLVMBasicBlockRef *bbs, int l, const bool *varying) {
  const pa_function *f = c->f;
  const pa_loop *lp = &f->loops[l];
  ffloop *ff = &c->ff[l];
  ff->ok = false;
  if (lp->n_latches != 1) return;
  int exiting = -1;
  for (int i = 0; i < lp->n_blocks; i++) {
    const pa_block *b = &f->blocks[lp->blocks[i]];
    for (int j = 0; j < b->n_succs; j++)
      if (!c->in_loop[(size_t)l * c->n + b->succs[j]]) {
        if (exiting >= 0 && exiting != lp->blocks[i]) return;
        exiting = lp->blocks[i];
      }
  }
  if (exiting < 0 || f->blocks[exiting].loop != l || !pa_dominates(f, exiting, lp->latches[0])) return;
  const rblock *rb = &c->blocks[exiting];
  if (rb->term != LLVMBr || rb->n_succ != 2 || rb->cond.slot < 0) return;
  LLVMValueRef cmp = s->vals[rb->cond.slot];
  if (!LLVMIsAICmpInst(cmp)) return;
  LLVMIntPredicate pred = LLVMGetICmpPredicate(cmp);
  LLVMValueRef x = LLVMGetOperand(cmp, 0), bound = LLVMGetOperand(cmp, 1);
  int xs = slot_of(s, x), bs = slot_of(s, bound);
  if (!(xs >= 0 && varying[xs])) {
    LLVMValueRef t = x;
    x = bound, bound = t;
    int ts = xs;
    xs = bs, bs = ts;
    pred = pa_pred_swap(pred);
  }
  if (xs < 0 || !varying[xs] || (bs >= 0 && varying[bs])) return;
  bool t_in = c->in_loop[(size_t)l * c->n + rb->succ[0]], f_in = c->in_loop[(size_t)l * c->n + rb->succ[1]];
  if (t_in == f_in) return;
  if (!t_in) pred = pa_pred_negate(pred);
  LLVMBasicBlockRef header = bbs[lp->header], latch = bbs[lp->latches[0]];
  int64_t step = 0;
  LLVMValueRef phi = NULL, inc = NULL;
  if (LLVMIsAPHINode(x) && LLVMGetInstructionParent(x) == header) phi = x;
  else if ((phi = pa_as_increment(x, &step)) != NULL) inc = x;
  if (!phi || LLVMGetInstructionParent(phi) != header) return;
  bool from_latch = false;
  for (unsigned i = 0; i < LLVMCountIncoming(phi); i++)
    if (LLVMGetIncomingBlock(phi, i) == latch) {
      LLVMValueRef v = LLVMGetIncomingValue(phi, i);
      if (inc ? v != inc : pa_as_increment(v, &step) != phi) return;
      from_latch = true;
    }
  ff->matched = ff->ok = from_latch && step != 0;
  ff->phi_slot = slot_of(s, phi);
  ff->exiting = exiting;
  ff->stay_succ = t_in ? rb->succ[0] : rb->succ[1];
  ff->exit_succ = t_in ? rb->succ[1] : rb->succ[0];
  ff->x_slot = xs;
  ff->bound = operand(s, bound);
  ff->stay = pred;
  ff->step = step;
  ff->bits = int_bits(LLVMTypeOf(x));
}

/* A varying value computed from the induction phi by add, sub, and mul or shl by a loop
 * invariant, all in one width: modulo 2^w it is a*t + b of the iteration number t. */
static bool affine_slice(const pa_counter *c, int slot, int phi, int w, const bool *varying, int depth) {
  if (slot == phi) return true;
  const rinst *ri = c->def[slot];
  if (!ri || depth > 32 || ri->bits != w || ri->lanes != 1) return false;
  bool va = ri->a.slot >= 0 && varying[ri->a.slot], vb = ri->b.slot >= 0 && varying[ri->b.slot];
  if (ri->kind == K_FREEZE) return va && affine_slice(c, ri->a.slot, phi, w, varying, depth + 1);
  if (ri->kind != K_BINOP) return false;
  switch (ri->op) {
  case LLVMAdd: case LLVMSub:
    return (!va || affine_slice(c, ri->a.slot, phi, w, varying, depth + 1)) &&
           (!vb || affine_slice(c, ri->b.slot, phi, w, varying, depth + 1));
  case LLVMMul: return va != vb && affine_slice(c, va ? ri->a.slot : ri->b.slot, phi, w, varying, depth + 1);
  case LLVMShl: return va && !vb && affine_slice(c, ri->a.slot, phi, w, varying, depth + 1);
  default: return false;
  }
}

/* A varying branch condition made of compares of an affine slice with an invariant, joined
 * by and/or/xor of i1: adds each compare to ff->guards. */
static bool collect_guards(pa_counter *c, ffloop *ff, int slot, const bool *varying, int cap, int depth) {
  const rinst *ri = c->def[slot];
  if (!ri || ri->lanes != 1 || depth > 16) return false;
  bool va = ri->a.slot >= 0 && varying[ri->a.slot], vb = ri->b.slot >= 0 && varying[ri->b.slot];
  if (ri->kind == K_BINOP && ri->bits == 1 && (ri->op == LLVMAnd || ri->op == LLVMOr || ri->op == LLVMXor))
    return (!va || collect_guards(c, ff, ri->a.slot, varying, cap, depth + 1)) &&
           (!vb || collect_guards(c, ff, ri->b.slot, varying, cap, depth + 1));
  if (ri->kind == K_FREEZE) return va && collect_guards(c, ff, ri->a.slot, varying, cap, depth + 1);
  if (ri->kind != K_ICMP || ri->src_lanes != 1 || va == vb || ff->n_guards >= cap) return false;
  if (!affine_slice(c, va ? ri->a.slot : ri->b.slot, ff->phi_slot, ri->src_bits, varying, 0)) return false;
  ff->guards[ff->n_guards++] = slot;
  return true;
}

/* Which loops can be fast-forwarded: the values that vary with the loop's header phis
 * (forward closure over the relevant values' uses) decide no branch but the exit test, and
 * are not used after the loop. */
static void prepare_loops(pa_counter *c, slotset *s, LLVMBasicBlockRef *bbs, const pa_ptrmap *bbmap) {
  const pa_function *f = c->f;
  int ns = s->n;
  /* users[slot]: relevant values using it */
  int *n_users = calloc((size_t)ns + 1, sizeof(int)), **users = calloc((size_t)ns + 1, sizeof(int *));
  for (int v = 0; v < ns; v++) {
    LLVMValueRef in = s->vals[v];
    if (!LLVMIsAInstruction(in)) continue;
    int nops = LLVMGetNumOperands(in);
    for (int k = 0; k < nops; k++) {
      int u = slot_of(s, LLVMGetOperand(in, k));
      if (u < 0 || list_has(users[u], n_users[u], v)) continue;
      users[u] = realloc(users[u], sizeof(int) * (size_t)(n_users[u] + 1));
      users[u][n_users[u]++] = v;
    }
  }
  bool *varying = malloc((size_t)ns + 1);
  int *work = malloc(sizeof(int) * ((size_t)ns + 1));
  for (int l = 0; l < f->n_loops; l++) {
    const pa_loop *lp = &f->loops[l];
    memset(varying, 0, (size_t)ns + 1);
    int sp = 0;
    for (int i = 0; i < c->blocks[lp->header].n_phis; i++) {
      int v = c->blocks[lp->header].phis[i].slot;
      varying[v] = true;
      work[sp++] = v;
    }
    while (sp) {
      int v = work[--sp];
      for (int k = 0; k < n_users[v]; k++)
        if (!varying[users[v][k]]) varying[users[v][k]] = true, work[sp++] = users[v][k];
    }
    match_exit(c, s, bbs, l, varying);
    ffloop *ff = &c->ff[l];
    for (int i = 0; i < lp->n_blocks && ff->ok; i++) {
      const rblock *rb = &c->blocks[lp->blocks[i]];
      if (lp->blocks[i] != ff->exiting && rb->cond.slot >= 0 && varying[rb->cond.slot]) ff->ok = false;
    }
    /* piecewise: the induction phi is the header's only relevant phi, and each varying branch
     * compares an affine function of it with an invariant */
    ff->pw = ff->matched && !ff->ok && c->blocks[lp->header].n_phis == 1;
    int cap = 4 * lp->n_blocks + 8;
    ff->guards = malloc(sizeof(int) * (size_t)cap);
    ff->n_guards = 0;
    for (int i = 0; i < lp->n_blocks && ff->pw; i++) {
      const rblock *rb = &c->blocks[lp->blocks[i]];
      if (lp->blocks[i] == ff->exiting || rb->cond.slot < 0 || !varying[rb->cond.slot]) continue;
      ff->pw = rb->term == LLVMBr && collect_guards(c, ff, rb->cond.slot, varying, cap, 0);
    }
    ff->n_varying = 0;
    ff->varying = malloc(sizeof(int) * ((size_t)ns + 1));
    for (int v = 0; v < ns; v++)
      if (varying[v]) ff->varying[ff->n_varying++] = v;
    /* a varying value defined outside the loop (used after it) needs the last iteration's values */
    for (int i = 0; i < ff->n_varying && (ff->ok || ff->pw); i++) {
      LLVMValueRef in = s->vals[ff->varying[i]];
      int b = LLVMIsAInstruction(in) ? pa_ptrmap_get(bbmap, LLVMGetInstructionParent(in)) : -1;
      if (b < 0 || !c->in_loop[(size_t)l * c->n + b]) ff->ok = ff->pw = false;
    }
  }
  for (int v = 0; v < ns; v++) free(users[v]);
  free(users);
  free(n_users);
  free(varying);
  free(work);
}

pa_counter *pa_counter_new(LLVMValueRef fn, const pa_function *f) {
  pa_counter *c = calloc(1, sizeof *c);
  c->f = f;
  c->fname = f->name;
  int n = c->n = f->n_blocks;
  LLVMBasicBlockRef *bbs = malloc(sizeof *bbs * (size_t)(n + 1));
  pa_ptrmap bbmap;
  pa_ptrmap_init(&bbmap, (size_t)n);
  int bi = 0;
  for (LLVMBasicBlockRef bb = LLVMGetFirstBasicBlock(fn); bb; bb = LLVMGetNextBasicBlock(bb)) {
    pa_ptrmap_put(&bbmap, bb, bi);
    bbs[bi++] = bb;
  }
  slotset s = {0};
  pa_ptrmap_init(&s.slots, 64);
  c->arg_bits = calloc((size_t)LLVMCountParams(fn) + 1, sizeof(int));
  for (LLVMValueRef p = LLVMGetFirstParam(fn); p; p = LLVMGetNextParam(p)) {
    mark(&s, p);
    c->arg_bits[c->n_args++] = int_bits(LLVMTypeOf(p));
  }
  /* relevant values: worklist from the branch conditions */
  for (int b = 0; b < n; b++) {
    LLVMValueRef t = LLVMGetBasicBlockTerminator(bbs[b]);
    if (t && ((LLVMGetInstructionOpcode(t) == LLVMBr && LLVMIsConditional(t)) || LLVMGetInstructionOpcode(t) == LLVMSwitch))
      mark(&s, LLVMGetOperand(t, 0));
  }
  for (int i = 0; i < s.n; i++) {
    LLVMValueRef v = s.vals[i];
    if (!traversable(v) || (LLVMGetInstructionOpcode(v) == LLVMCall && minmax_kind(v) < 0)) continue;
    int nops = LLVMGetNumOperands(v);
    if (LLVMGetInstructionOpcode(v) == LLVMCall) nops = 2;
    for (int k = 0; k < nops; k++) mark(&s, LLVMGetOperand(v, k));
  }
  c->n_slots = s.n;
  c->blocks = calloc((size_t)n, sizeof *c->blocks);
  for (int b = 0; b < n; b++) {
    rblock *rb = &c->blocks[b];
    int np = 0, ni = 0;
    for (LLVMValueRef in = LLVMGetFirstInstruction(bbs[b]); in; in = LLVMGetNextInstruction(in))
      if (slot_of(&s, in) >= 0) (LLVMIsAPHINode(in) ? np++ : ni++);
    rb->phis = calloc((size_t)np + 1, sizeof *rb->phis);
    rb->insts = calloc((size_t)ni + 1, sizeof *rb->insts);
    for (LLVMValueRef in = LLVMGetFirstInstruction(bbs[b]); in; in = LLVMGetNextInstruction(in)) {
      if (slot_of(&s, in) < 0) continue;
      if (LLVMIsAPHINode(in)) {
        rphi *ph = &rb->phis[rb->n_phis++];
        ph->slot = slot_of(&s, in);
        ph->bits = int_bits(LLVMTypeOf(in));
        ph->lanes = lanes_of(LLVMTypeOf(in));
        ph->n = (int)LLVMCountIncoming(in);
        ph->pred_block = malloc(sizeof(int) * (size_t)(ph->n + 1));
        ph->val = malloc(sizeof(opnd) * (size_t)(ph->n + 1));
        for (int k = 0; k < ph->n; k++) {
          ph->pred_block[k] = pa_ptrmap_get(&bbmap, LLVMGetIncomingBlock(in, (unsigned)k));
          ph->val[k] = ph->bits ? operand(&s, LLVMGetIncomingValue(in, (unsigned)k)) : (opnd){.slot = -2};
        }
      } else prepare_inst(&s, in, &rb->insts[rb->n_insts++]);
    }
    LLVMValueRef t = LLVMGetBasicBlockTerminator(bbs[b]);
    rb->term = t ? LLVMGetInstructionOpcode(t) : LLVMUnreachable;
    rb->cond = (opnd){.slot = -2};
    if (rb->term == LLVMBr) {
      rb->n_succ = (int)LLVMGetNumSuccessors(t);
      if (LLVMIsConditional(t)) rb->cond = operand(&s, LLVMGetCondition(t));
    } else if (rb->term == LLVMSwitch) {
      rb->n_succ = (int)LLVMGetNumSuccessors(t);
      rb->cond = operand(&s, LLVMGetOperand(t, 0));
      rb->case_val = calloc((size_t)rb->n_succ + 1, sizeof *rb->case_val);
      /* operands: condition, default, then (value, block) pairs */
      for (int k = 1; k < rb->n_succ; k++) {
        LLVMValueRef cv = LLVMGetOperand(t, (unsigned)(2 * k));
        rb->case_val[k] = LLVMIsAConstantInt(cv) ? LLVMConstIntGetZExtValue(cv) & pa_int_mask(int_bits(LLVMTypeOf(cv))) : 0;
      }
    }
    rb->succ = calloc((size_t)rb->n_succ + 1, sizeof(int));
    for (int k = 0; k < rb->n_succ; k++) rb->succ[k] = pa_ptrmap_get(&bbmap, LLVMGetSuccessor(t, (unsigned)k));
  }
  c->header_of = malloc(sizeof(int) * (size_t)n);
  for (int b = 0; b < n; b++) c->header_of[b] = -1;
  c->in_loop = calloc((size_t)(f->n_loops + 1) * (size_t)n, 1);
  for (int l = 0; l < f->n_loops; l++) {
    c->header_of[f->loops[l].header] = l;
    for (int i = 0; i < f->loops[l].n_blocks; i++) c->in_loop[(size_t)l * n + f->loops[l].blocks[i]] = true;
  }
  c->def = calloc((size_t)s.n + 1, sizeof *c->def);
  for (int b = 0; b < n; b++)
    for (int i = 0; i < c->blocks[b].n_insts; i++) c->def[c->blocks[b].insts[i].slot] = &c->blocks[b].insts[i];
  c->override_slot = -1;
  c->ff = calloc((size_t)f->n_loops + 1, sizeof *c->ff);
  prepare_loops(c, &s, bbs, &bbmap);
  c->scratch = malloc(sizeof(int64_t) * 4 * (size_t)(f->n_loops + 1) * (size_t)n);
  c->val = calloc(((size_t)s.n + 1) * MAX_LANES, sizeof *c->val);
  c->known = calloc((size_t)s.n + 1, sizeof *c->known);
  pa_ptrmap_free(&s.slots);
  free(s.vals);
  pa_ptrmap_free(&bbmap);
  free(bbs);
  return c;
}

void pa_counter_free(pa_counter *c) {
  if (!c) return;
  for (int b = 0; b < c->n; b++) {
    rblock *rb = &c->blocks[b];
    for (int i = 0; i < rb->n_phis; i++) free(rb->phis[i].pred_block), free(rb->phis[i].val);
    free(rb->phis);
    free(rb->insts);
    free(rb->succ);
    free(rb->case_val);
  }
  for (int l = 0; l < c->f->n_loops; l++) free(c->ff[l].varying), free(c->ff[l].guards);
  free(c->def);
  free(c->blocks);
  free(c->arg_bits);
  free(c->header_of);
  free(c->in_loop);
  free(c->ff);
  free(c->scratch);
  free(c->val);
  free(c->known);
  free(c);
}

/* ------------------------------------------------------------ evaluation */

/* Lane `lane` of operand o (lane 0 of a scalar). */
static bool get(const pa_counter *c, const opnd *o, int lane, uint64_t *v) {
  if (o->slot == -1) return *v = o->c[lane], (o->cmask >> lane) & 1;
  if (o->slot < 0 || !((c->known[o->slot] >> lane) & 1)) return false;
  *v = c->val[(size_t)o->slot * MAX_LANES + (size_t)lane];
  return true;
}

/* One lane of an instruction's result. */
static bool eval_lane(const pa_counter *c, const rinst *ri, int lane, uint64_t *out) {
  uint64_t a, b, idx;
  int w = ri->bits;
  switch (ri->kind) {
  case K_BINOP:
    return get(c, &ri->a, lane, &a) && get(c, &ri->b, lane, &b) && pa_int_binop(ri->op, a, b, w, out);
  case K_ICMP:
    if (!get(c, &ri->a, lane, &a) || !get(c, &ri->b, lane, &b)) return false;
    *out = pa_int_icmp(ri->pred, a, b, ri->src_bits);
    return true;
  case K_SELECT: {
    uint64_t cond;
    if (!get(c, &ri->a, ri->src_lanes > 1 ? lane : 0, &cond)) return false;
    return get(c, cond ? &ri->b : &ri->c, lane, out);
  }
  case K_CAST:
    if (!get(c, &ri->a, lane, &a)) return false;
    *out = (ri->op == LLVMSExt ? (uint64_t)pa_int_sext(a, ri->src_bits) : a) & pa_int_mask(w);
    return true;
  case K_FREEZE: return get(c, &ri->a, lane, out);
  case K_MINMAX: {
    if (!get(c, &ri->a, lane, &a) || !get(c, &ri->b, lane, &b)) return false;
    *out = pa_int_minmax(ri->pred, a, b, w);
    return true;
  }
  case K_INSERT:
    if (!get(c, &ri->c, 0, &idx) || idx >= (uint64_t)ri->lanes) return false;
    return idx == (uint64_t)lane ? get(c, &ri->b, 0, out) : get(c, &ri->a, lane, out);
  case K_EXTRACT:
    if (!get(c, &ri->b, 0, &idx) || idx >= (uint64_t)ri->src_lanes) return false;
    return get(c, &ri->a, (int)idx, out);
  case K_SHUFFLE: {
    int m = ri->shuffle[lane];
    if (m < 0) return false;
    return m < ri->src_lanes ? get(c, &ri->a, m, out) : get(c, &ri->b, m - ri->src_lanes, out);
  }
  default: return false;
  }
}

static void eval(pa_counter *c, const rinst *ri) {
  uint32_t known = 0;
  uint64_t *v = c->val + (size_t)ri->slot * MAX_LANES;
  for (int lane = 0; lane < ri->lanes && ri->kind != K_UNKNOWN; lane++)
    if (eval_lane(c, ri, lane, &v[lane])) known |= 1u << lane;
  c->known[ri->slot] = known;
}

typedef enum { R_RET, R_EXIT, R_BACK, R_STOP, R_FAIL } rstat;

static rstat fail(pa_counter *c, int b, const char *why) {
  if (!c->err)
    c->err = pt_fail(c->d, PT_ERR_UNSUPPORTED, "static counts of '%s': block %s: %s", c->fname, c->f->blocks[b].name, why);
  return R_FAIL;
}

/* Enters block b from block `from` (-1 at the function entry): phis take their incoming
 * values all at once, then the block's relevant instructions run in order. */
static void enter(pa_counter *c, int b, int from) {
  const rblock *rb = &c->blocks[b];
  enum { GROUP = 8 };
  uint64_t nv[GROUP][MAX_LANES];
  uint32_t nk[GROUP];
  for (int base = 0; base < rb->n_phis; base += GROUP) {
    int m = rb->n_phis - base < GROUP ? rb->n_phis - base : GROUP;
    for (int i = 0; i < m; i++) {
      const rphi *ph = &rb->phis[base + i];
      nk[i] = 0;
      for (int k = 0; k < ph->n; k++)
        if (ph->pred_block[k] == from) {
          for (int lane = 0; lane < ph->lanes && ph->bits; lane++)
            if (get(c, &ph->val[k], lane, &nv[i][lane])) nk[i] |= 1u << lane;
          break;
        }
    }
    for (int i = 0; i < m; i++) {
      const rphi *ph = &rb->phis[base + i];
      memcpy(c->val + (size_t)ph->slot * MAX_LANES, nv[i], sizeof(uint64_t) * (size_t)ph->lanes);
      c->known[ph->slot] = nk[i];
      if (ph->slot == c->override_slot) {
        c->val[(size_t)ph->slot * MAX_LANES] = c->override_val, c->known[ph->slot] = 1;
        c->override_slot = -1;
      }
    }
  }
  for (int i = 0; i < rb->n_insts; i++) eval(c, &rb->insts[i]);
}

/* The successor block b's terminator takes: >= 0, or -1 for a return, R_FAIL-ish -2. */
static int next_block(pa_counter *c, int b) {
  const rblock *rb = &c->blocks[b];
  uint64_t v;
  switch (rb->term) {
  case LLVMRet: return -1;
  case LLVMBr:
    if (rb->n_succ == 1) return rb->succ[0];
    if (!get(c, &rb->cond, 0, &v)) {
      fail(c, b, "the branch depends on a value other than loop indices, known arguments and constants "
                 "(a load, a call or an unknown argument)");
      return -2;
    }
    return v ? rb->succ[0] : rb->succ[1];
  case LLVMSwitch:
    if (!get(c, &rb->cond, 0, &v)) {
      fail(c, b, "the switch depends on a value other than loop indices, known arguments and constants");
      return -2;
    }
    for (int k = 1; k < rb->n_succ; k++)
      if (rb->case_val[k] == v) return rb->succ[k];
    return rb->succ[0];
  default:
    fail(c, b, "the block ends in an instruction other than br, switch or ret");
    return -2;
  }
}

static rstat exec_loop(pa_counter *c, int l, int from, int64_t *counts, int *to, int *from_out);

/* Runs from block b (entered from `from`) inside loop l (-1: the whole function) until a
 * return, leaving l (R_EXIT: *to), taking l's back edge (R_BACK) or finishing block `stop`. */
static rstat run_region(pa_counter *c, int l, int b, int from, int stop, int64_t *counts, int *to, int *from_out) {
  const pa_function *f = c->f;
  for (;;) {
    int inner = c->header_of[b];
    if (inner >= 0 && inner != l) {
      int t, fr;
      if (f->loops[inner].parent != l) return fail(c, b, "a loop entered other than through its parent");
      rstat r = exec_loop(c, inner, from, counts, &t, &fr);
      if (r != R_EXIT) return r;
      b = t, from = fr;
    } else {
      if (++c->steps > BUDGET_STEPS)
        return fail(c, b, "enumerating the iterations around a guard would take too many steps");
      enter(c, b, from);
      counts[b]++;
      if (b == stop) return R_STOP;
      int nb = next_block(c, b);
      if (nb == -2) return R_FAIL;
      if (nb == -1) return R_RET;
      from = b, b = nb;
    }
    if (l >= 0) {
      if (b == f->loops[l].header) return *from_out = from, R_BACK;
      if (!c->in_loop[(size_t)l * c->n + b]) return *to = b, *from_out = from, R_EXIT;
    }
  }
}

/* a*t + b of the iteration number t for an affine slice (affine_slice), values lifted to
 * integers by sign extension; false if an invariant is unknown or the numbers get large. */
static bool affine_of(const pa_counter *c, const ffloop *ff, int slot, __int128 v0, int depth, __int128 *a, __int128 *b) {
  const __int128 big = (__int128)1 << 100;
  if (slot == ff->phi_slot) return *a = ff->step, *b = v0, true;
  const rinst *ri = c->def[slot];
  if (!ri || depth > 32) return false;
  __int128 a1 = 0, b1 = 0, a2 = 0, b2 = 0;
  uint64_t v;
  const opnd *ops[2] = {&ri->a, &ri->b};
  __int128 *as[2] = {&a1, &a2}, *bs[2] = {&b1, &b2};
  int n_ops = ri->kind == K_FREEZE ? 1 : 2;
  for (int k = 0; k < n_ops; k++) {
    const opnd *o = ops[k];
    bool var = false;
    for (int i = 0; o->slot >= 0 && i < ff->n_varying && !var; i++) var = ff->varying[i] == o->slot;
    if (var) {
      if (!affine_of(c, ff, o->slot, v0, depth + 1, as[k], bs[k])) return false;
    } else {
      if (!get(c, o, 0, &v)) return false;
      *bs[k] = pa_int_sext(v, ri->bits);
    }
  }
  if (ri->kind == K_FREEZE) *a = a1, *b = b1;
  else if (ri->op == LLVMAdd) *a = a1 + a2, *b = b1 + b2;
  else if (ri->op == LLVMSub) *a = a1 - a2, *b = b1 - b2;
  else if (ri->op == LLVMMul) *a = a1 * b2 + a2 * b1, *b = b1 * b2; /* one side has a = 0 */
  else if (ri->op == LLVMShl && b2 >= 0 && b2 < ri->bits) *a = a1 << (int)b2, *b = b1 << (int)b2;
  else return false;
  return *a < big && *a > -big && *b < big && *b > -big;
}

static int cmp_i64(const void *x, const void *y) {
  int64_t a = *(const int64_t *)x, b = *(const int64_t *)y;
  return a < b ? -1 : a > b;
}

/* Iterations where some guard may change: around each t at which a guard's affine side
 * meets a value its compare could turn on (the invariant side, lifted signed and unsigned,
 * plus any multiple of 2^w, and any multiple of 2^(w-1) where the sign flips). Returns how
 * many starts (sorted, unique, in [0, trips)), or -1 when it cannot tell. */
static int breakpoints(const pa_counter *c, const ffloop *ff, __int128 v0, int64_t trips, int64_t *starts, int cap) {
  int n = 0;
  starts[n++] = 0;
  starts[n++] = trips - 1; /* the exiting iteration is its own piece */
  for (int g = 0; g < ff->n_guards; g++) {
    const rinst *ri = c->def[ff->guards[g]];
    bool va = false;
    for (int i = 0; ri->a.slot >= 0 && i < ff->n_varying && !va; i++) va = ff->varying[i] == ri->a.slot;
    const opnd *var = va ? &ri->a : &ri->b, *inv = va ? &ri->b : &ri->a;
    __int128 a, b;
    uint64_t cv;
    if (!affine_of(c, ff, var->slot, v0, 0, &a, &b) || !get(c, inv, 0, &cv)) return -1;
    if (a == 0) continue;
    int w = ri->src_bits;
    __int128 half = (__int128)1 << (w - 1), e0 = b, e1 = a * (trips - 1) + b;
    __int128 lo = e0 < e1 ? e0 : e1, hi = e0 < e1 ? e1 : e0;
    __int128 m_lo = lo / half - 2, m_hi = hi / half + 2;
    if (m_hi - m_lo > 64) return -1;
    for (__int128 m = m_lo; m <= m_hi; m++) {
      __int128 hs[3] = {m * half, (__int128)cv + m * half * 2, (__int128)pa_int_sext(cv, w) + m * half * 2};
      for (int k = 0; k < 3; k++) {
        if (hs[k] < lo - 2 || hs[k] > hi + 2) continue;
        __int128 t = (hs[k] - b) / a;
        for (int d = -1; d <= 2; d++) {
          if (n + 1 >= cap) return -1;
          if (t + d > 0 && t + d < trips) starts[n++] = (int64_t)(t + d);
        }
      }
    }
  }
  qsort(starts, (size_t)n, sizeof *starts, cmp_i64);
  int u = 0;
  for (int i = 0; i < n; i++)
    if (!u || starts[i] != starts[u - 1]) starts[u++] = starts[i];
  return u;
}

/* Runs iteration t of loop l (the induction phi set to its value) up to the exit test, then,
 * unless `last`, on to the back edge: counts before the test in pre, after it in post. */
static rstat iteration_at(pa_counter *c, int l, int from, __int128 v0, int w, int64_t t, bool last, int64_t *pre,
                          int64_t *post) {
  const pa_loop *lp = &c->f->loops[l];
  const ffloop *ff = &c->ff[l];
  int to, fr;
  memset(pre, 0, sizeof(int64_t) * 2 * (size_t)c->n);
  c->override_slot = ff->phi_slot;
  c->override_val = (uint64_t)(v0 + (__int128)ff->step * t) & pa_int_mask(w);
  rstat r = run_region(c, l, lp->header, from, ff->exiting, pre, &to, &fr);
  c->override_slot = -1;
  if (r != R_STOP) return r == R_FAIL ? r : fail(c, lp->header, "the loop left before its exit test");
  int nb = next_block(c, ff->exiting);
  if (nb < 0) return R_FAIL;
  if ((nb == ff->exit_succ) != last) return fail(c, ff->exiting, "the exit test disagrees with the trip count");
  if (last || ff->stay_succ == lp->header) return R_STOP;
  r = run_region(c, l, ff->stay_succ, ff->exiting, -1, post, &to, &fr);
  return r == R_BACK ? R_STOP : r == R_FAIL ? r : fail(c, ff->stay_succ, "the loop left other than at its exit test");
}

static rstat exec_loop(pa_counter *c, int l, int from, int64_t *counts, int *to, int *from_out) {
  const pa_loop *lp = &c->f->loops[l];
  const ffloop *ff = &c->ff[l];
  int n = c->n;
  int64_t *pre = c->scratch + (size_t)l * 4 * n, *post = pre + n;
  int t, fr = -1;
  if (ff->ok || ff->pw) {
    memset(pre, 0, sizeof(int64_t) * 2 * (size_t)n);
    rstat r = run_region(c, l, lp->header, from, ff->exiting, pre, &t, &fr);
    if (r != R_STOP) return r == R_FAIL ? r : fail(c, lp->header, "the loop left before its exit test");
    uint64_t phi0 = c->val[(size_t)ff->phi_slot * MAX_LANES];
    int nb = next_block(c, ff->exiting);
    if (nb < 0) return R_FAIL;
    int64_t trips = 1;
    fr = ff->exiting;
    if (nb == ff->stay_succ) {
      uint64_t x, bound;
      opnd xo = {.slot = ff->x_slot};
      if (!get(c, &xo, 0, &x) || !get(c, &ff->bound, 0, &bound))
        return fail(c, ff->exiting, "the exit test's bound is not known");
      bool is_unsigned = ff->stay == LLVMIntULT || ff->stay == LLVMIntULE || ff->stay == LLVMIntUGT || ff->stay == LLVMIntUGE;
      int w = ff->bits;
      __int128 lo = is_unsigned ? 0 : -((__int128)1 << (w - 1));
      __int128 hi = is_unsigned ? ((__int128)1 << w) - 1 : ((__int128)1 << (w - 1)) - 1;
      __int128 v0 = is_unsigned ? (__int128)x : (__int128)pa_int_sext(x, w);
      __int128 cb = is_unsigned ? (__int128)bound : (__int128)pa_int_sext(bound, w);
      int64_t k = pa_first_exit(ff->stay, v0, ff->step, cb, lo, hi);
      if (k < 1) return fail(c, ff->exiting, "the loop's trip count cannot be derived (it wraps or never ends)");
      trips = k + 1;
      if (ff->stay_succ != lp->header) {
        r = run_region(c, l, ff->stay_succ, ff->exiting, -1, post, &t, &fr);
        if (r != R_BACK) return r == R_FAIL ? r : fail(c, ff->stay_succ, "the loop left other than at its exit test");
      } else fr = ff->exiting;
    }
    if (trips == 1 || ff->ok) {
      for (int b = 0; b < n; b++) counts[b] += trips * pre[b] + (trips - 1) * post[b];
      if (trips > 1)
        for (int i = 0; i < ff->n_varying; i++) c->known[ff->varying[i]] = 0; /* the last iteration's are not computed */
      return *to = ff->exit_succ, *from_out = ff->exiting, R_EXIT;
    }
    /* piecewise: iteration 0 is done; one iteration per range of constant guards */
    int64_t starts[512];
    int w = 64;
    for (int i = 0; i < c->blocks[lp->header].n_phis; i++)
      if (c->blocks[lp->header].phis[i].slot == ff->phi_slot) w = c->blocks[lp->header].phis[i].bits;
    __int128 v0 = pa_int_sext(phi0, w);
    int ns = ff->n_guards ? breakpoints(c, ff, v0, trips, starts, 512) : -1;
    if (ns > 0) {
      int64_t *pre_t = post + n, *post_t = pre_t + n;
      for (int b = 0; b < n; b++) counts[b] += pre[b] + post[b];
      for (int i = 0; i < ns; i++) {
        int64_t ta = starts[i], tb = i + 1 < ns ? starts[i + 1] : trips;
        if (ta == 0) { /* computed above */
          for (int b = 0; b < n; b++) counts[b] += (tb - 1) * (pre[b] + post[b]);
          continue;
        }
        bool last = ta == trips - 1;
        rstat ri = iteration_at(c, l, from, v0, w, ta, last, pre_t, post_t);
        if (ri != R_STOP) return ri;
        for (int b = 0; b < n; b++) counts[b] += (tb - ta) * (pre_t[b] + (last ? 0 : post_t[b]));
      }
      for (int i = 0; i < ff->n_varying; i++) c->known[ff->varying[i]] = 0;
      return *to = ff->exit_succ, *from_out = ff->exiting, R_EXIT;
    }
    /* no ranges: go on enumerating from iteration 1 */
    for (int b = 0; b < n; b++) counts[b] += pre[b] + post[b];
    from = fr;
  }
  for (;;) { /* enumerate the iterations */
    rstat r = run_region(c, l, lp->header, from, -1, counts, to, from_out);
    if (r != R_BACK) return r;
    from = *from_out;
  }
}

int pa_counter_run(pa_counter *c, const int64_t *args, const bool *known, int64_t *counts, pt_diag *d) {
  memset(c->known, 0, sizeof *c->known * ((size_t)c->n_slots + 1));
  for (int i = 0; i < c->n_args; i++) /* parameters are slots 0..n_args-1 */
    if (known && known[i] && c->arg_bits[i]) c->val[(size_t)i * MAX_LANES] = (uint64_t)args[i] & pa_int_mask(c->arg_bits[i]), c->known[i] = 1;
  c->steps = 0;
  c->d = d;
  c->err = 0;
  int t, fr;
  rstat r = run_region(c, -1, 0, -1, -1, counts, &t, &fr);
  if (r == R_FAIL) return c->err ? c->err : PT_ERR_UNSUPPORTED;
  return 0;
}

int pa_static_counts(pa_function *f, LLVMValueRef fn) {
  pa_counter *c = pa_counter_new(fn, f);
  int64_t *counts = calloc((size_t)f->n_blocks + 1, sizeof *counts);
  pt_diag d = {0};
  int err = pa_counter_run(c, NULL, NULL, counts, &d);
  for (int b = 0; b < f->n_blocks; b++) f->blocks[b].static_count_per_call = err ? -1 : (double)counts[b];
  free(counts);
  pa_counter_free(c);
  return err;
}
