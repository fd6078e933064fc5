/* Instruction kernels built with the LLVM C API: a loop whose body applies one operation
 * class `unroll` times to each of `chains` accumulators. One chain measures latency, many
 * independent chains measure reciprocal throughput, chains of two classes show whether they
 * compete for an execution unit. Operands come from memory so nothing folds at compile time. */
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>

#include "internal.h"

static LLVMTypeRef scalar_type(LLVMContextRef c, ptg_elem e) {
  switch (e) {
  case PTG_ELEM_I8: return LLVMInt8TypeInContext(c);
  case PTG_ELEM_I16: return LLVMInt16TypeInContext(c);
  case PTG_ELEM_I32: return LLVMInt32TypeInContext(c);
  case PTG_ELEM_I64: return LLVMInt64TypeInContext(c);
  case PTG_ELEM_F16: return LLVMHalfTypeInContext(c);
  case PTG_ELEM_BF16: return LLVMBFloatTypeInContext(c);
  case PTG_ELEM_F32: return LLVMFloatTypeInContext(c);
  case PTG_ELEM_F64: return LLVMDoubleTypeInContext(c);
  default: return LLVMInt32TypeInContext(c);
  }
}

static LLVMTypeRef vec_of(LLVMTypeRef t, int lanes) { return lanes == 1 ? t : LLVMVectorType(t, (unsigned)lanes); }

static bool is_dot(pmb_op o) { return o.op == PTG_OP_FMA && (o.elem == PTG_ELEM_BF16 || o.elem == PTG_ELEM_I8); }

/* The accumulator: the op's own type, except dot products, which accumulate 32-bit lanes. */
static LLVMTypeRef acc_type(LLVMContextRef c, pmb_op o) {
  if (is_dot(o))
    return vec_of(o.elem == PTG_ELEM_BF16 ? LLVMFloatTypeInContext(c) : LLVMInt32TypeInContext(c), o.bits / 32);
  return vec_of(scalar_type(c, o.elem), o.bits / ptg_elem_bits(o.elem));
}

/* Operands x and y: bf16 pairs for the bf16 dot product, packed bytes as i32 lanes for i8. */
static LLVMTypeRef operand_type(LLVMContextRef c, pmb_op o) {
  if (is_dot(o) && o.elem == PTG_ELEM_BF16) return vec_of(LLVMBFloatTypeInContext(c), o.bits / 16);
  return acc_type(c, o);
}

/* Integer type of the same shape (shuffle masks, gather indices, load-chain offsets). */
static LLVMTypeRef int_shape(LLVMContextRef c, pmb_op o) {
  int eb = ptg_elem_bits(o.elem);
  return vec_of(LLVMIntTypeInContext(c, (unsigned)eb), o.bits / eb);
}

bool pmb_op_supported(const pmb_jit *j, pmb_op o) {
  int eb = ptg_elem_bits(o.elem);
  bool fl = ptg_elem_is_float(o.elem);
  if (o.bits < eb || o.bits % eb || o.bits > 512 || (o.bits > eb && o.bits < 128)) return false;
  bool x86 = pmb_jit_has(j, "sse2");
  bool scalar = o.bits == eb, vec = !scalar;
  bool vl = pmb_jit_has(j, "avx512vl"); /* AVX-512 instructions on xmm/ymm */
  if (o.bits == 256 && !pmb_jit_has(j, fl ? "avx" : "avx2")) return false;
  if (o.bits == 512 && !pmb_jit_has(j, "avx512f")) return false;
  if (!x86 && o.bits > 128) return false;
  if (is_dot(o)) {
    if (!x86 || scalar) return false;
    const char *f = o.elem == PTG_ELEM_BF16 ? "avx512bf16" : "avx512vnni";
    return pmb_jit_has(j, f) && (o.bits == 512 || vl);
  }
  if (o.elem != PTG_ELEM_I32 && o.elem != PTG_ELEM_I64 && o.elem != PTG_ELEM_F32 && o.elem != PTG_ELEM_F64) return false;
  bool q = o.elem == PTG_ELEM_I64 || o.elem == PTG_ELEM_F64;
  switch (o.op) {
  case PTG_OP_ADD:
  case PTG_OP_SUB:
  case PTG_OP_LOAD:
  case PTG_OP_STORE: return true;
  case PTG_OP_CMPSEL: /* scalar integer selects become branches (x86 cmov conversion) */
    return fl || vec;
  case PTG_OP_MUL: /* 64-bit lane multiply: AVX-512DQ vpmullq, otherwise a long emulation */
    return fl || !q || scalar || (pmb_jit_has(j, "avx512dq") && (o.bits == 512 || vl));
  case PTG_OP_FMA: return fl && (!x86 || pmb_jit_has(j, "fma"));
  case PTG_OP_DIV: return fl || scalar; /* no vector integer divide: it would be scalarized */
  case PTG_OP_SQRT: return fl;
  case PTG_OP_MINMAX: return fl || (vec && (!q || o.bits == 512 || vl));
  case PTG_OP_LOGIC:
  case PTG_OP_SHIFT: return !fl;
  case PTG_OP_CONVERT: /* f32<->i32, f64<->i64 (vector form needs AVX-512DQ) */
    return fl && (!q || scalar || (pmb_jit_has(j, "avx512dq") && (o.bits == 512 || vl)));
  case PTG_OP_SHUFFLE:
    if (!x86 || scalar) return false;
    if (o.bits == 128) return pmb_jit_has(j, "avx");
    return !q || o.bits == 512 || vl;
  case PTG_OP_MASKLOAD:
  case PTG_OP_MASKSTORE: /* llvm.masked.load/store: vmaskmov (AVX/AVX2) or a k-masked vmovu (AVX-512) */
    if (!x86 || scalar || ptg_elem_bits(o.elem) != 32) return false;
    return o.bits == 512 || pmb_jit_has(j, "avx512vl") || pmb_jit_has(j, fl ? "avx" : "avx2");
  case PTG_OP_GATHER: /* LLVM scalarizes two-lane gathers */
  case PTG_OP_GATHER_PAGE:
    return x86 && vec && o.bits / eb >= 4 && pmb_jit_has(j, "avx2");
  case PTG_OP_SCATTER: /* AVX-512 only: without it LLVM scalarizes a scatter */
  case PTG_OP_SCATTER_PAGE:
    return x86 && vec && o.bits / eb >= 4 && pmb_jit_has(j, "avx512f") && (o.bits == 512 || vl);
  default: return false;
  }
}

typedef struct {
  pmb_jit *j;
  LLVMContextRef c;
  LLVMModuleRef m;
  LLVMBuilderRef b;
  LLVMTypeRef i8, i32, i64;
  bool latency; /* one chain: loads chase their own result */
  bool round_trip; /* load chain without the load: lane 0 to an integer register and back */
  int chain;       /* the chain step() is emitting for */
  LLVMValueRef in; /* the kernel's input buffer: chain 0's region first */
} gen;

static LLVMValueRef call_intrinsic(gen *g, const char *name, LLVMTypeRef *over, int n_over, LLVMValueRef *args, int n_args) {
  unsigned id = LLVMLookupIntrinsicID(name, strlen(name));
  LLVMValueRef fn = LLVMGetIntrinsicDeclaration(g->m, id, over, (size_t)n_over);
  LLVMTypeRef fty = LLVMIntrinsicGetType(g->c, id, over, (size_t)n_over);
  return LLVMBuildCall2(g->b, fty, fn, args, (unsigned)n_args, "");
}

static LLVMValueRef at(gen *g, LLVMValueRef base, int offset) {
  LLVMValueRef off = LLVMConstInt(g->i64, (unsigned long long)offset, 0);
  return LLVMBuildGEP2(g->b, g->i8, base, &off, 1, "");
}

static LLVMValueRef load(gen *g, LLVMTypeRef t, LLVMValueRef p, bool is_volatile) {
  LLVMValueRef v = LLVMBuildLoad2(g->b, t, p, "");
  LLVMSetAlignment(v, 16);
  if (is_volatile) LLVMSetVolatile(v, 1);
  return v;
}

/* Where chain g->chain stores in unrolled step k: the chains side by side from byte 128 of `in`,
 * step k in the first or second of two lines (plain and masked stores alike). */
static LLVMValueRef store_slot(gen *g, pmb_op o, int k) {
  return at(g, g->in, 128 + 64 * (k & 1) + (g->chain * (o.bits / 8)) % 64);
}

/* Where a gather or scatter's indices count from: the chain's own region (lanes in one line),
 * or for the page-apart classes the chain's span past every region (lanes PMB_PAGE_LANE_STEP
 * apart, pmb_kernel_fill). */
static bool page_apart(pmb_op o) { return o.op == PTG_OP_GATHER_PAGE || o.op == PTG_OP_SCATTER_PAGE; }
static LLVMValueRef lanes_base(gen *g, pmb_op o, LLVMValueRef region) {
  return page_apart(o) ? at(g, g->in, PMB_REGION * PMB_MAX_CHAINS + g->chain * PMB_PAGE_SPAN) : region;
}

/* Integer view of a value (same bits): gather indices and load-chain offsets. */
static LLVMValueRef as_int(gen *g, pmb_op o, LLVMValueRef v) {
  LLVMTypeRef it = int_shape(g->c, o);
  return ptg_elem_is_float(o.elem) ? LLVMBuildBitCast(g->b, v, it, "") : v;
}

static const char *shuffle_intrinsic(pmb_op o) {
  bool q = ptg_elem_bits(o.elem) == 64, fl = ptg_elem_is_float(o.elem);
  switch (o.bits) {
  case 128: return q ? "llvm.x86.avx.vpermilvar.pd" : "llvm.x86.avx.vpermilvar.ps"; /* float lanes only */
  case 256: return q ? (fl ? "llvm.x86.avx512.permvar.df.256" : "llvm.x86.avx512.permvar.di.256")
                     : (fl ? "llvm.x86.avx2.permps" : "llvm.x86.avx2.permd");
  default: return q ? (fl ? "llvm.x86.avx512.permvar.df.512" : "llvm.x86.avx512.permvar.di.512")
                    : (fl ? "llvm.x86.avx512.permvar.sf.512" : "llvm.x86.avx512.permvar.si.512");
  }
}

/* An empty inline-asm copy of v: opaque to the code generator, so integer chains are not
 * reassociated ((acc + x) + y -> acc + (x + y)), xors not fused into vpternlog and
 * conversion round trips not turned into a rounding; it emits no instruction. */
static LLVMValueRef opaque(gen *g, LLVMValueRef v) {
  LLVMTypeRef t = LLVMTypeOf(v);
  bool vec = LLVMGetTypeKind(t) == LLVMVectorTypeKind;
  bool x86 = pmb_jit_has(g->j, "sse2");
  const char *cons = vec ? (x86 ? "=v,0" : "=w,0") : "=r,0";
  if (!vec && LLVMGetTypeKind(t) != LLVMIntegerTypeKind) cons = x86 ? "=v,0" : "=w,0";
  LLVMTypeRef fty = LLVMFunctionType(t, &t, 1, 0);
  LLVMValueRef fn = LLVMGetInlineAsm(fty, "", 0, cons, strlen(cons), 0, 0, LLVMInlineAsmDialectATT, 0);
  return LLVMBuildCall2(g->b, fty, fn, &v, 1, "");
}

/* An empty inline asm that reads v and clobbers memory: a masked load whose value nobody
 * uses would be deleted, and two masked loads of one address merged; this keeps each one
 * (and each masked store) where it is. It emits no instruction. */
static void sink(gen *g, LLVMValueRef v) {
  bool x86 = pmb_jit_has(g->j, "sse2");
  const char *cons = v ? (x86 ? "v,~{memory}" : "w,~{memory}") : "~{memory}";
  LLVMTypeRef t = v ? LLVMTypeOf(v) : NULL;
  LLVMTypeRef fty = LLVMFunctionType(LLVMVoidTypeInContext(g->c), &t, v ? 1 : 0, 0);
  LLVMValueRef fn = LLVMGetInlineAsm(fty, "", 0, cons, strlen(cons), 1, 0, LLVMInlineAsmDialectATT, 0);
  LLVMBuildCall2(g->b, fty, fn, &v, v ? 1 : 0, "");
}

/* Lane 0 of a load-chain value as an i64 offset. Vector and FP values are held in a vector
 * register (opaque), so the load stays a whole vector load and the move is a real vmovq/vmovd:
 * 64-bit lanes when the vector has them, the 32-bit scalar otherwise. */
bool pmb_load_in_vector_reg(pmb_op o) { return o.bits > ptg_elem_bits(o.elem) || ptg_elem_is_float(o.elem); }

static LLVMValueRef lane0_to_int(gen *g, pmb_op o, LLVMValueRef v) {
  if (!pmb_load_in_vector_reg(o)) return LLVMBuildZExtOrBitCast(g->b, v, g->i64, "");
  v = opaque(g, v);
  LLVMValueRef off;
  if (o.bits >= 64) {
    off = LLVMBuildBitCast(g->b, v, vec_of(g->i64, o.bits / 64), "");
    if (o.bits > 64) off = LLVMBuildExtractElement(g->b, off, LLVMConstInt(g->i32, 0, 0), "");
  } else {
    off = LLVMBuildZExt(g->b, LLVMBuildBitCast(g->b, v, g->i32, ""), g->i64, "");
  }
  return off;
}

/* The way back: an integer into lane 0 of the chain's vector type (vmovq/vmovd), for the
 * round-trip kernel that prices the move lane0_to_int adds to a load chase. */
static LLVMValueRef int_to_lane0(gen *g, pmb_op o, LLVMValueRef off) {
  LLVMTypeRef t = acc_type(g->c, o);
  if (o.bits >= 64) {
    LLVMValueRef v = off;
    if (o.bits > 64) v = LLVMBuildInsertElement(g->b, LLVMConstNull(vec_of(g->i64, o.bits / 64)), off, LLVMConstInt(g->i32, 0, 0), "");
    return LLVMBuildBitCast(g->b, v, t, "");
  }
  return LLVMBuildBitCast(g->b, LLVMBuildTrunc(g->b, off, g->i32, ""), t, "");
}

/* One application of the op to the accumulator. x and y are loop-invariant operands,
 * alternated so that no two consecutive steps see the same operand pair to fold. */
static LLVMValueRef step(gen *g, pmb_op o, LLVMValueRef acc, LLVMValueRef x, LLVMValueRef y, LLVMValueRef region, int k) {
  bool fl = ptg_elem_is_float(o.elem);
  LLVMValueRef v = (k & 1) ? y : x;
  LLVMTypeRef t = acc_type(g->c, o);
  switch (o.op) {
  case PTG_OP_ADD: return fl ? LLVMBuildFAdd(g->b, acc, v, "") : LLVMBuildAdd(g->b, acc, v, "");
  case PTG_OP_SUB: return fl ? LLVMBuildFSub(g->b, acc, v, "") : LLVMBuildSub(g->b, acc, v, "");
  case PTG_OP_MUL: return fl ? LLVMBuildFMul(g->b, acc, v, "") : LLVMBuildMul(g->b, acc, v, "");
  case PTG_OP_FMA: {
    LLVMValueRef args[3] = {acc, x, y};
    if (o.elem == PTG_ELEM_BF16) {
      char name[64];
      snprintf(name, sizeof name, "llvm.x86.avx512bf16.dpbf16ps.%d", o.bits);
      return call_intrinsic(g, name, NULL, 0, args, 3);
    }
    if (o.elem == PTG_ELEM_I8) {
      char name[64];
      snprintf(name, sizeof name, "llvm.x86.avx512.vpdpbusd.%d", o.bits);
      return call_intrinsic(g, name, NULL, 0, args, 3);
    }
    return call_intrinsic(g, "llvm.fma", &t, 1, args, 3);
  }
  case PTG_OP_DIV: return fl ? LLVMBuildFDiv(g->b, v, acc, "") : LLVMBuildSDiv(g->b, v, acc, "");
  case PTG_OP_SQRT: return call_intrinsic(g, "llvm.sqrt", &t, 1, &acc, 1);
  case PTG_OP_MINMAX: {
    if (!fl) {
      LLVMValueRef args[2] = {acc, v};
      return call_intrinsic(g, "llvm.smax", &t, 1, args, 2);
    }
    /* select(acc > v, acc, v) is what maxps computes (NaN rules included) */
    LLVMValueRef gt = LLVMBuildFCmp(g->b, LLVMRealOGT, acc, v, "");
    return LLVMBuildSelect(g->b, gt, acc, v, "");
  }
  case PTG_OP_CMPSEL: {
    LLVMValueRef lt = fl ? LLVMBuildFCmp(g->b, LLVMRealOLT, acc, x, "") : LLVMBuildICmp(g->b, LLVMIntSLT, acc, x, "");
    return LLVMBuildSelect(g->b, lt, y, acc, "");
  }
  case PTG_OP_LOGIC: return LLVMBuildXor(g->b, acc, v, "");
  case PTG_OP_SHIFT: return LLVMBuildShl(g->b, acc, v, "");
  case PTG_OP_CONVERT: { /* there and back: two conversions per step */
    LLVMValueRef i = opaque(g, LLVMBuildFPToSI(g->b, acc, int_shape(g->c, o), ""));
    return LLVMBuildSIToFP(g->b, i, t, "");
  }
  case PTG_OP_SHUFFLE: {
    /* vpermilps/pd exist for float lanes only; integer lanes go through them bit for bit */
    bool via_float = o.bits == 128 && !fl;
    LLVMTypeRef ft = vec_of(ptg_elem_bits(o.elem) == 64 ? LLVMDoubleTypeInContext(g->c) : LLVMFloatTypeInContext(g->c),
                            o.bits / ptg_elem_bits(o.elem));
    LLVMValueRef args[2] = {via_float ? LLVMBuildBitCast(g->b, acc, ft, "") : acc, y};
    LLVMValueRef r = call_intrinsic(g, shuffle_intrinsic(o), NULL, 0, args, 2);
    return via_float ? LLVMBuildBitCast(g->b, r, t, "") : r;
  }
  case PTG_OP_LOAD: {
    if (!g->latency) {
      /* Narrow loads of the chains start at different offsets of their lines: the L1 is
       * banked by the address bits below the line, and 12 chains all at offset 0 would queue
       * on one bank (Zen 5's 4 loads per cycle read as 3). */
      int bytes = o.bits / 8;
      LLVMValueRef v = load(g, t, at(g, region, 64 * (k % 3) + (g->chain * bytes) % 64), true);
      LLVMSetAlignment(v, (unsigned)(bytes < 16 ? bytes : 16));
      return v;
    }
    /* chase: the loaded value (zero) is the next offset, so each load waits for the last.
     * A vector (or FP) load's lane 0 reaches the address through the cheapest move to an
     * integer register, vmovq/vmovd whatever the element type (vextractps would cost more);
     * pmb_kernel_lane_round_trip measures that move so insts.c can take it out. */
    LLVMValueRef off = lane0_to_int(g, o, acc);
    if (g->round_trip) return int_to_lane0(g, o, opaque(g, off)); /* opaque: held in a GPR */
    return load(g, t, LLVMBuildGEP2(g->b, g->i8, region, &off, 1, ""), false);
  }
  case PTG_OP_MASKLOAD: { /* y is the mask (i1 lanes, from memory: not a constant) */
    LLVMValueRef p = at(g, region, 64 * (k % 3));
    if (g->latency) { /* the chase, as for plain loads */
      LLVMValueRef off = lane0_to_int(g, o, acc);
      if (g->round_trip) return int_to_lane0(g, o, opaque(g, off));
      p = LLVMBuildGEP2(g->b, g->i8, region, &off, 1, "");
    }
    LLVMTypeRef pt = LLVMPointerTypeInContext(g->c, 0);
    LLVMTypeRef over[2] = {t, pt};
    LLVMValueRef args[4] = {p, LLVMConstInt(g->i32, 16, 0), y, LLVMConstNull(t)};
    LLVMValueRef r = call_intrinsic(g, "llvm.masked.load", over, 2, args, 4);
    if (!g->latency) sink(g, r);
    return r;
  }
  case PTG_OP_MASKSTORE: {
    /* side by side into two lines, as plain stores (below) and a loop's masked edge do */
    LLVMTypeRef pt = LLVMPointerTypeInContext(g->c, 0);
    LLVMTypeRef over[2] = {t, pt};
    LLVMValueRef args[4] = {acc, store_slot(g, o, k), LLVMConstInt(g->i32, 16, 0), y};
    call_intrinsic(g, "llvm.masked.store", over, 2, args, 4);
    sink(g, NULL);
    return acc;
  }
  case PTG_OP_STORE: {
    /* The chains store side by side into two lines, as a loop writing an array does: Zen
     * commits two stores per cycle only when they fall in one line (12 chains each in a line
     * of its own measure 1 per cycle on Zen 5; side by side, 0.5 cycles per store). */
    int bytes = o.bits / 8;
    LLVMValueRef s = LLVMBuildStore(g->b, acc, store_slot(g, o, k));
    LLVMSetAlignment(s, (unsigned)(bytes < 16 ? bytes : 16));
    LLVMSetVolatile(s, 1);
    return acc;
  }
  case PTG_OP_GATHER:
  case PTG_OP_GATHER_PAGE:
  case PTG_OP_SCATTER:
  case PTG_OP_SCATTER_PAGE: {
    /* a gather chases its own result (the values are the next indices); a scatter writes the
     * accumulator at the loop-invariant indices x */
    bool scatter = o.op == PTG_OP_SCATTER || o.op == PTG_OP_SCATTER_PAGE;
    int lanes = o.bits / ptg_elem_bits(o.elem);
    LLVMTypeRef ptrs = LLVMVectorType(LLVMPointerTypeInContext(g->c, 0), (unsigned)lanes);
    LLVMValueRef idx = as_int(g, o, scatter ? x : acc);
    LLVMValueRef addr = LLVMBuildGEP2(g->b, scalar_type(g->c, o.elem), lanes_base(g, o, region), &idx, 1, "");
    LLVMValueRef mask = LLVMConstAllOnes(LLVMVectorType(LLVMInt1TypeInContext(g->c), (unsigned)lanes));
    LLVMValueRef align = LLVMConstInt(g->i32, (unsigned long long)ptg_elem_bits(o.elem) / 8, 0);
    LLVMTypeRef over[2] = {t, ptrs};
    if (!scatter) {
      LLVMValueRef args[4] = {addr, align, mask, LLVMGetPoison(t)};
      return call_intrinsic(g, "llvm.masked.gather", over, 2, args, 4);
    }
    LLVMValueRef args[4] = {acc, addr, align, mask};
    call_intrinsic(g, "llvm.masked.scatter", over, 2, args, 4);
    sink(g, NULL);
    return acc;
  }
  default: return acc;
  }
}

int pmb_kernel_build(pmb_jit *j, LLVMModuleRef m, const pmb_kernel *k, const char *name, pt_diag *d) {
  for (int c = 0; c < k->chains; c++)
    if (!pmb_op_supported(j, k->ops[c]))
      return pt_fail(d, PT_ERR_UNSUPPORTED, "%s %s %d-bit: not available on %s", ptg_op_name(k->ops[c].op),
                     ptg_elem_name(k->ops[c].elem), k->ops[c].bits, pmb_jit_cpu(j));
  gen g = {.j = j, .c = pmb_jit_context(j), .m = m, .latency = k->chains == 1, .round_trip = k->lane_round_trip};
  g.i8 = LLVMInt8TypeInContext(g.c);
  g.i32 = LLVMInt32TypeInContext(g.c);
  g.i64 = LLVMInt64TypeInContext(g.c);
  LLVMTypeRef ptr = LLVMPointerTypeInContext(g.c, 0);
  LLVMTypeRef params[3] = {g.i64, ptr, ptr};
  LLVMValueRef fn = LLVMAddFunction(m, name, LLVMFunctionType(LLVMVoidTypeInContext(g.c), params, 3, 0));
  LLVMBasicBlockRef entry = LLVMAppendBasicBlockInContext(g.c, fn, "entry");
  LLVMBasicBlockRef loop = LLVMAppendBasicBlockInContext(g.c, fn, "loop");
  LLVMBasicBlockRef done = LLVMAppendBasicBlockInContext(g.c, fn, "done");
  g.b = LLVMCreateBuilderInContext(g.c);
  LLVMPositionBuilderAtEnd(g.b, entry);
  LLVMValueRef iters = LLVMGetParam(fn, 0), in = LLVMGetParam(fn, 1), out = LLVMGetParam(fn, 2);
  g.in = in;
  LLVMValueRef region[PMB_MAX_CHAINS], x[PMB_MAX_CHAINS], y[PMB_MAX_CHAINS], init[PMB_MAX_CHAINS];
  for (int c = 0; c < k->chains; c++) {
    pmb_op o = k->ops[c];
    region[c] = at(&g, in, c * PMB_REGION);
    /* chains of the same op share operands: 12 chains with their own x and y would not fit
     * in 32 registers and would read them from the stack */
    int same = 0;
    while (same < c && memcmp(&k->ops[same], &o, sizeof o)) same++;
    if (same < c) {
      x[c] = x[same], y[c] = y[same];
    } else {
      x[c] = load(&g, operand_type(g.c, o), region[c], false);
      bool masked = o.op == PTG_OP_MASKLOAD || o.op == PTG_OP_MASKSTORE;
      LLVMTypeRef yt = o.op == PTG_OP_SHUFFLE || masked ? int_shape(g.c, o) : operand_type(g.c, o);
      y[c] = load(&g, yt, at(&g, region[c], 64), false);
      if (masked) y[c] = LLVMBuildICmp(g.b, LLVMIntNE, y[c], LLVMConstNull(yt), ""); /* the mask */
    }
    init[c] = load(&g, acc_type(g.c, o), at(&g, region[c], 128), false);
  }
  LLVMBuildBr(g.b, loop);
  LLVMPositionBuilderAtEnd(g.b, loop);
  LLVMValueRef i = LLVMBuildPhi(g.b, g.i64, "i");
  LLVMValueRef acc[PMB_MAX_CHAINS], phi[PMB_MAX_CHAINS];
  for (int c = 0; c < k->chains; c++) acc[c] = phi[c] = LLVMBuildPhi(g.b, acc_type(g.c, k->ops[c]), "");
  for (int u = 0; u < k->unroll; u++)
    for (int c = 0; c < k->chains; c++) {
      g.chain = c;
      acc[c] = step(&g, k->ops[c], acc[c], x[c], y[c], region[c], u);
      pmb_op o = k->ops[c];
      bool arith = o.op <= PTG_OP_CONVERT || o.op == PTG_OP_OTHER; /* add .. convert: the arithmetic classes */
      if (arith && !ptg_elem_is_float(o.elem) && !is_dot(o)) acc[c] = opaque(&g, acc[c]);
    }
  LLVMValueRef next = LLVMBuildAdd(g.b, i, LLVMConstInt(g.i64, 1, 0), "");
  LLVMBuildCondBr(g.b, LLVMBuildICmp(g.b, LLVMIntSLT, next, iters, ""), loop, done);
  LLVMValueRef zero = LLVMConstInt(g.i64, 0, 0);
  LLVMAddIncoming(i, &zero, &entry, 1);
  LLVMAddIncoming(i, &next, &loop, 1);
  for (int c = 0; c < k->chains; c++) {
    LLVMAddIncoming(phi[c], &init[c], &entry, 1);
    LLVMAddIncoming(phi[c], &acc[c], &loop, 1);
  }
  LLVMPositionBuilderAtEnd(g.b, done);
  for (int c = 0; c < k->chains; c++) {
    LLVMValueRef s = LLVMBuildStore(g.b, acc[c], at(&g, out, 64 * c));
    LLVMSetAlignment(s, 16);
  }
  LLVMBuildRetVoid(g.b);
  LLVMDisposeBuilder(g.b);
  return PT_OK;
}

/* Writes value v into lane `lane` of an element array. */
static void put(void *base, ptg_elem e, int lane, double v) {
  switch (e) {
  case PTG_ELEM_I32: ((int32_t *)base)[lane] = (int32_t)v; break;
  case PTG_ELEM_I64: ((int64_t *)base)[lane] = (int64_t)v; break;
  case PTG_ELEM_F32: ((float *)base)[lane] = (float)v; break;
  case PTG_ELEM_F64: ((double *)base)[lane] = v; break;
  case PTG_ELEM_I8: ((int8_t *)base)[lane] = (int8_t)v; break;
  case PTG_ELEM_BF16: { /* bf16 = the upper half of the f32 */
    float f = (float)v;
    uint32_t u;
    memcpy(&u, &f, 4);
    ((uint16_t *)base)[lane] = (uint16_t)(u >> 16);
    break;
  }
  default: break;
  }
}

/* Operand values that keep every chain finite and away from denormals for billions of
 * steps: div computes x / acc with x = acc^2 (a 2-cycle orbit), sqrt converges to 1, ... */
void pmb_kernel_fill(const pmb_kernel *k, void *in) {
  for (int c = 0; c < k->chains; c++) {
    pmb_op o = k->ops[c];
    char *r = (char *)in + c * PMB_REGION;
    memset(r, 0, PMB_REGION);
    int eb = ptg_elem_bits(o.elem), lanes = o.bits / eb;
    bool fl = ptg_elem_is_float(o.elem);
    double xv = 1, yv = 1, av = c + 1;
    switch (o.op) {
    case PTG_OP_ADD:
    case PTG_OP_SUB: xv = yv = fl ? 1e-3 : 1; break;
    case PTG_OP_FMA: xv = 1, yv = 1e-3; break;
    case PTG_OP_DIV: xv = yv = fl ? 2.25 : 1e6, av = fl ? 1.5 : 1000; break;
    case PTG_OP_SQRT: av = 2; break;
    case PTG_OP_MINMAX: av = 0.5; break;
    case PTG_OP_CMPSEL: xv = 2, av = 0; break;
    case PTG_OP_LOGIC: xv = 0x55, yv = 0x33; break;
    case PTG_OP_CONVERT: av = 1.5; break;
    default: break;
    }
    if (o.op == PTG_OP_LOAD) continue; /* zeros: each load's result is the next offset */
    if (o.op == PTG_OP_MASKLOAD || o.op == PTG_OP_MASKSTORE) {
      /* the mask (y): every lane but the last, as a padded edge has; lane 0 is on, so the
       * chase reads its zero offset. Loaded data stay zero. */
      for (int l = 0; l < lanes; l++) ((int32_t *)(r + 64))[l] = l < lanes - 1;
      continue;
    }
    if (is_dot(o)) { /* accumulate into 32-bit lanes from bf16 pairs / byte quads */
      ptg_elem acc_e = o.elem == PTG_ELEM_BF16 ? PTG_ELEM_F32 : PTG_ELEM_I32;
      for (int l = 0; l < o.bits / 8 / (o.elem == PTG_ELEM_BF16 ? 2 : 1); l++) {
        put(r, o.elem, l, o.elem == PTG_ELEM_BF16 ? 0.5 : 1);
        put(r + 64, o.elem, l, o.elem == PTG_ELEM_BF16 ? 0.5 : 1);
      }
      for (int l = 0; l < o.bits / 32; l++) put(r + 128, acc_e, l, 1);
      continue;
    }
    if (o.op == PTG_OP_GATHER || o.op == PTG_OP_GATHER_PAGE || o.op == PTG_OP_SCATTER || o.op == PTG_OP_SCATTER_PAGE) {
      /* Indices i_l = l (one line) or l x PMB_PAGE_LANE_STEP bytes (a page each), in the
       * lanes' bits for floats: in x (the table a gather starts from, a scatter's indices)
       * and the accumulator; the table holds i_l at i_l, so a gather's chain stays put. */
      char *table = page_apart(o) ? (char *)in + PMB_REGION * PMB_MAX_CHAINS + c * PMB_PAGE_SPAN : r;
      if (page_apart(o)) memset(table, 0, PMB_PAGE_SPAN);
      for (int l = 0; l < lanes; l++) {
        int64_t i = page_apart(o) ? (int64_t)l * PMB_PAGE_LANE_STEP / (eb / 8) : l;
        if (eb == 32) {
          ((int32_t *)r)[l] = ((int32_t *)(r + 128))[l] = (int32_t)i;
          ((int32_t *)table)[i] = (int32_t)i;
        } else {
          ((int64_t *)r)[l] = ((int64_t *)(r + 128))[l] = i;
          ((int64_t *)table)[i] = i;
        }
      }
      continue;
    }
    for (int l = 0; l < lanes; l++) {
      put(r, o.elem, l, xv);
      if (o.op == PTG_OP_SHUFFLE) { /* y is the permutation: rotate by one lane */
        if (eb == 32) ((int32_t *)(r + 64))[l] = (l + 1) % lanes;
        else ((int64_t *)(r + 64))[l] = ((l + 1) % lanes) << 1; /* vpermilpd reads bit 1 */
      } else {
        put(r + 64, o.elem, l, yv);
      }
      put(r + 128, o.elem, l, av);
    }
  }
}

void *pmb_kernel_input_new(void) {
  void *p = mmap(NULL, PMB_INPUT_BYTES, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED) return NULL;
  madvise(p, PMB_INPUT_BYTES, MADV_NOHUGEPAGE);
  return p;
}

void pmb_kernel_input_free(void *in) {
  if (in) munmap(in, PMB_INPUT_BYTES);
}

pmb_kernel pmb_kernel_latency(pmb_op op) {
  pmb_kernel k = {.chains = 1, .unroll = 32};
  k.ops[0] = op;
  return k;
}

/* 12 chains cover latency x pipes for every class measured (FMA 4 x 2, add 2 x 4) with 32
 * vector registers; 4 steps each make 48 ops per iteration, so loop overhead stays hidden. */
/* The load chain's lane move and its way back, without the load: the move's price. */
pmb_kernel pmb_kernel_lane_round_trip(pmb_op op) {
  pmb_kernel k = pmb_kernel_latency(op);
  k.lane_round_trip = true;
  return k;
}

pmb_kernel pmb_kernel_throughput(pmb_op op) {
  pmb_kernel k = {.chains = 12, .unroll = 4};
  for (int c = 0; c < k.chains; c++) k.ops[c] = op;
  return k;
}

pmb_kernel pmb_kernel_pair(pmb_op a, pmb_op b) {
  pmb_kernel k = {.chains = 12, .unroll = 4};
  for (int c = 0; c < k.chains; c++) k.ops[c] = (c & 1) ? b : a;
  return k;
}

int pmb_kernel_ops_per_iteration(void) { return 48; }
