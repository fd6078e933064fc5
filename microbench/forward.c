/* A load that spans two stores still in flight: two floats stored to a scratch pair and read
 * back as one <2 x float>, as a padding stage computed inside the loop that reads it does
 * (pad_temp written element by element, read two lanes at a time). No store buffer forwards
 * from two stores into one load, so the load waits for them to reach L1. Timed against the
 * same loop reading the floats one by one (forwarded): the difference per iteration is
 * cpu.store_forward_fail_cycles. The stored values do not depend on the loads, so only what
 * the failed forwarding serializes shows (Zen 4: about 21 cycles an iteration, docs/validation.md
 * "Session 14"). The second figure is forwarding that works: a float added into one element
 * through memory (load, fadd, store, the next iteration's load waiting for that store), against
 * the same adds into a register; the difference per iteration is cpu.store_forward_cycles, what
 * each link of an accumulator kept in memory adds to its add (Zen 3: 12.05 against 3.03 cycles,
 * docs/validation.md "Session 20"). */
#include <math.h>

#include "internal.h"

#define SRC_FLOATS 1024

/* fn(iterations, {pad, src}, out): per iteration two loads of src, two stores to pad[0..1],
 * then pad read back whole (wide) or float by float, summed into two accumulators. */
static void build_kernel(pmb_jit *j, LLVMModuleRef m, const char *name, bool wide) {
  LLVMContextRef c = pmb_jit_context(j);
  LLVMTypeRef i64 = LLVMInt64TypeInContext(c), f32 = LLVMFloatTypeInContext(c), ptr = LLVMPointerTypeInContext(c, 0);
  LLVMTypeRef v2 = LLVMVectorType(f32, 2);
  pmb_loop_frame f = pmb_loop_frame_new(j, m, name, 2);
  LLVMBasicBlockRef entry = f.entry, loop = f.loop, done = f.done;
  LLVMBuilderRef b = f.b;
  LLVMValueRef iters = LLVMGetParam(f.fn, 0), in = LLVMGetParam(f.fn, 1), out = LLVMGetParam(f.fn, 2);
  LLVMValueRef zero = LLVMConstInt(i64, 0, 0), one = LLVMConstInt(i64, 1, 0), fzero = LLVMConstReal(f32, 0);
  LLVMValueRef pad = LLVMBuildLoad2(b, ptr, in, "pad");
  LLVMValueRef src = LLVMBuildLoad2(b, ptr, LLVMBuildGEP2(b, ptr, in, &one, 1, ""), "src");
  LLVMValueRef pad1 = LLVMBuildGEP2(b, f32, pad, &one, 1, "");
  LLVMBuildBr(b, loop);

  LLVMPositionBuilderAtEnd(b, loop);
  LLVMValueRef i = LLVMBuildPhi(b, i64, "i"), acc0 = LLVMBuildPhi(b, f32, ""), acc1 = LLVMBuildPhi(b, f32, "");
  LLVMValueRef idx = LLVMBuildAnd(b, i, LLVMConstInt(i64, SRC_FLOATS - 1, 0), "");
  LLVMValueRef idx1 = LLVMBuildAdd(b, idx, one, "");
  LLVMValueRef a = LLVMBuildLoad2(b, f32, LLVMBuildGEP2(b, f32, src, &idx, 1, ""), "");
  LLVMValueRef a1 = LLVMBuildLoad2(b, f32, LLVMBuildGEP2(b, f32, src, &idx1, 1, ""), "");
  LLVMSetVolatile(LLVMBuildStore(b, a, pad), 1);
  LLVMSetVolatile(LLVMBuildStore(b, a1, pad1), 1);
  LLVMValueRef x, y;
  if (wide) {
    LLVMValueRef v = LLVMBuildLoad2(b, v2, pad, "");
    LLVMSetVolatile(v, 1);
    LLVMSetAlignment(v, 8);
    x = LLVMBuildExtractElement(b, v, zero, "");
    y = LLVMBuildExtractElement(b, v, one, "");
  } else {
    x = LLVMBuildLoad2(b, f32, pad, "");
    LLVMSetVolatile(x, 1);
    y = LLVMBuildLoad2(b, f32, pad1, "");
    LLVMSetVolatile(y, 1);
  }
  LLVMValueRef n0 = LLVMBuildFAdd(b, acc0, x, ""), n1 = LLVMBuildFAdd(b, acc1, y, "");
  LLVMValueRef next = LLVMBuildAdd(b, i, one, "");
  LLVMBuildCondBr(b, LLVMBuildICmp(b, LLVMIntSLT, next, iters, ""), loop, done);
  LLVMAddIncoming(i, &zero, &entry, 1);
  LLVMAddIncoming(i, &next, &loop, 1);
  LLVMAddIncoming(acc0, &fzero, &entry, 1);
  LLVMAddIncoming(acc0, &n0, &loop, 1);
  LLVMAddIncoming(acc1, &fzero, &entry, 1);
  LLVMAddIncoming(acc1, &n1, &loop, 1);

  LLVMPositionBuilderAtEnd(b, done);
  LLVMBuildStore(b, LLVMBuildFAdd(b, n0, n1, ""), out);
  LLVMBuildRetVoid(b);
  LLVMDisposeBuilder(b);
}

/* fn(iterations, {acc, src}, out): per iteration acc[0] += src[i & mask], through memory (a
 * volatile load and store of acc[0]) or in a register (a phi). */
static void build_chain(pmb_jit *j, LLVMModuleRef m, const char *name, bool memory) {
  LLVMContextRef c = pmb_jit_context(j);
  LLVMTypeRef i64 = LLVMInt64TypeInContext(c), f32 = LLVMFloatTypeInContext(c), ptr = LLVMPointerTypeInContext(c, 0);
  pmb_loop_frame f = pmb_loop_frame_new(j, m, name, 2);
  LLVMBasicBlockRef entry = f.entry, loop = f.loop, done = f.done;
  LLVMBuilderRef b = f.b;
  LLVMValueRef iters = LLVMGetParam(f.fn, 0), in = LLVMGetParam(f.fn, 1), out = LLVMGetParam(f.fn, 2);
  LLVMValueRef zero = LLVMConstInt(i64, 0, 0), one = LLVMConstInt(i64, 1, 0), fzero = LLVMConstReal(f32, 0);
  LLVMValueRef acc = LLVMBuildLoad2(b, ptr, in, "acc");
  LLVMValueRef src = LLVMBuildLoad2(b, ptr, LLVMBuildGEP2(b, ptr, in, &one, 1, ""), "src");
  LLVMBuildBr(b, loop);

  LLVMPositionBuilderAtEnd(b, loop);
  LLVMValueRef i = LLVMBuildPhi(b, i64, "i"), sum = memory ? NULL : LLVMBuildPhi(b, f32, "");
  LLVMValueRef idx = LLVMBuildAnd(b, i, LLVMConstInt(i64, SRC_FLOATS - 1, 0), "");
  LLVMValueRef a = LLVMBuildLoad2(b, f32, LLVMBuildGEP2(b, f32, src, &idx, 1, ""), "");
  LLVMValueRef x = sum;
  if (memory) {
    x = LLVMBuildLoad2(b, f32, acc, "");
    LLVMSetVolatile(x, 1);
  }
  LLVMValueRef n = LLVMBuildFAdd(b, x, a, "");
  if (memory) LLVMSetVolatile(LLVMBuildStore(b, n, acc), 1);
  LLVMValueRef next = LLVMBuildAdd(b, i, one, "");
  LLVMBuildCondBr(b, LLVMBuildICmp(b, LLVMIntSLT, next, iters, ""), loop, done);
  LLVMAddIncoming(i, &zero, &entry, 1);
  LLVMAddIncoming(i, &next, &loop, 1);
  if (!memory) {
    LLVMAddIncoming(sum, &fzero, &entry, 1);
    LLVMAddIncoming(sum, &n, &loop, 1);
  }

  LLVMPositionBuilderAtEnd(b, done);
  LLVMBuildStore(b, n, out);
  LLVMBuildRetVoid(b);
  LLVMDisposeBuilder(b);
}

/* cpu.store_forward_cycles: the memory chain's cycles per iteration less the register chain's. */
static int measure_chain(pmb_ctx *c, pt_diag *d) {
  LLVMModuleRef m = pmb_jit_module(c->jit, "store_forward_chain");
  build_chain(c->jit, m, "chain_memory", true);
  build_chain(c->jit, m, "chain_register", false);
  int err = pmb_jit_add(c->jit, m, d);
  if (err < 0) return err;
  pmb_kernel_fn mem = (pmb_kernel_fn)pmb_jit_lookup(c->jit, "chain_memory", d);
  pmb_kernel_fn reg = mem ? (pmb_kernel_fn)pmb_jit_lookup(c->jit, "chain_register", d) : NULL;
  if (!reg) return d->err;
  static float acc[16] __attribute__((aligned(64)));
  static float src[SRC_FLOATS];
  for (int i = 0; i < SRC_FLOATS; i++) src[i] = 1e-6f * (float)i;
  void *in[2] = {acc, src};
  float sink;
  double ghz = pmb_recalibrate(c);
  pmb_stats mm = pmb_time_kernel(mem, in, &sink, c->min_seconds, c->reps);
  pmb_stats rr = pmb_time_kernel(reg, in, &sink, c->min_seconds, c->reps);
  double cycles = (mm.median - rr.median) * 1e9 * ghz;
  if (cycles < 0) cycles = 0;
  c->t->store_forward_cycles =
      (ptg_figure){cycles, fmax(mm.spread, rr.spread), mm.reps,
                   "a float added into one element through memory (load, fadd, store; the next load forwarded from "
                   "that store), against the same adds into a register: the difference per iteration (median of the "
                   "repetitions, core cycles)"};
  pmb_progress(c, "store forwarding: an accumulator through memory adds %.1f cycles a link (%.1f against %.1f)", cycles,
               mm.median * 1e9 * ghz, rr.median * 1e9 * ghz);
  return PT_OK;
}

int pmb_measure_store_forward(pmb_ctx *c, pt_diag *d) {
  LLVMModuleRef m = pmb_jit_module(c->jit, "store_forward");
  build_kernel(c->jit, m, "forward_wide", true);
  build_kernel(c->jit, m, "forward_narrow", false);
  int err = pmb_jit_add(c->jit, m, d);
  if (err < 0) return err;
  pmb_kernel_fn wide = (pmb_kernel_fn)pmb_jit_lookup(c->jit, "forward_wide", d);
  pmb_kernel_fn narrow = wide ? (pmb_kernel_fn)pmb_jit_lookup(c->jit, "forward_narrow", d) : NULL;
  if (!narrow) return d->err;
  static float pad[16] __attribute__((aligned(64)));
  static float src[SRC_FLOATS + 1];
  for (int i = 0; i <= SRC_FLOATS; i++) src[i] = 1e-6f * (float)i;
  void *in[2] = {pad, src};
  float sink;
  double ghz = pmb_recalibrate(c);
  pmb_stats w = pmb_time_kernel(wide, in, &sink, c->min_seconds, c->reps);
  pmb_stats n = pmb_time_kernel(narrow, in, &sink, c->min_seconds, c->reps);
  double cycles = (w.median - n.median) * 1e9 * ghz;
  if (cycles < 0) cycles = 0;
  c->t->store_forward_fail_cycles =
      (ptg_figure){cycles, fmax(w.spread, n.spread), w.reps,
                   "two floats stored and read back as one <2 x float> load, against the same loop reading them one by "
                   "one: the difference per iteration (median of the repetitions, core cycles)"};
  pmb_progress(c, "store forwarding: a load spanning two stores costs %.1f cycles an iteration (%.1f against %.1f)", cycles,
               w.median * 1e9 * ghz, n.median * 1e9 * ghz);
  return measure_chain(c, d);
}
