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
#include <string.h>

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

/* Kernels `slow` and `fast` of module m, each run over in = {scratch, src} (src: SRC_FLOATS + 1
 * floats): the difference of their cycles per iteration, clamped at 0, as a figure with `how`
 * in *out; `what` names it in the progress line. */
static int time_difference(pmb_ctx *c, LLVMModuleRef m, const char *slow, const char *fast, const char *what,
                           const char *how, ptg_figure *out, pt_diag *d) {
  int err = pmb_jit_add(c->jit, m, d);
  if (err < 0) return err;
  pmb_kernel_fn a = (pmb_kernel_fn)pmb_jit_lookup(c->jit, slow, d);
  pmb_kernel_fn b = a ? (pmb_kernel_fn)pmb_jit_lookup(c->jit, fast, d) : NULL;
  if (!b) return d->err;
  static float scratch[16] __attribute__((aligned(64)));
  static float src[SRC_FLOATS + 1];
  for (int i = 0; i <= SRC_FLOATS; i++) src[i] = 1e-6f * (float)i;
  memset(scratch, 0, sizeof scratch);
  void *in[2] = {scratch, src};
  float sink;
  double ghz = pmb_recalibrate(c);
  pmb_stats sa = pmb_time_kernel(a, in, &sink, c->min_seconds, c->reps);
  pmb_stats sb = pmb_time_kernel(b, in, &sink, c->min_seconds, c->reps);
  double cycles = (sa.median - sb.median) * 1e9 * ghz;
  if (cycles < 0) cycles = 0;
  *out = (ptg_figure){cycles, fmax(sa.spread, sb.spread), sa.reps, how};
  pmb_progress(c, "store forwarding: %s %.1f cycles (%.1f against %.1f)", what, cycles, sa.median * 1e9 * ghz,
               sb.median * 1e9 * ghz);
  return PT_OK;
}

int pmb_measure_store_forward(pmb_ctx *c, pt_diag *d) {
  LLVMModuleRef m = pmb_jit_module(c->jit, "store_forward");
  build_kernel(c->jit, m, "forward_wide", true);
  build_kernel(c->jit, m, "forward_narrow", false);
  int err = time_difference(c, m, "forward_wide", "forward_narrow", "a load spanning two stores costs",
                            "two floats stored and read back as one <2 x float> load, against the same loop reading "
                            "them one by one: the difference per iteration (median of the repetitions, core cycles)",
                            &c->t->store_forward_fail_cycles, d);
  if (err < 0) return err;
  m = pmb_jit_module(c->jit, "store_forward_chain");
  build_chain(c->jit, m, "chain_memory", true);
  build_chain(c->jit, m, "chain_register", false);
  return time_difference(c, m, "chain_memory", "chain_register", "an accumulator through memory adds, a link,",
                         "a float added into one element through memory (load, fadd, store; the next load forwarded "
                         "from that store), against the same adds into a register: the difference per iteration "
                         "(median of the repetitions, core cycles)",
                         &c->t->store_forward_cycles, d);
}
