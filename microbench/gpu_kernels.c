/* The GPU probes' kernels as PTX text, which the CUDA driver JIT-compiles for the device, so
 * portent needs no CUDA toolkit to build. Two modules: sm_50 PTX (runs on every GPU the driver
 * supports) and sm_80 PTX for the tensor-core mma kernels. tests/microbench/test_gpu_ptx.c
 * assembles each with ptxas where the toolkit is installed. PTX ISA: NVIDIA "Parallel Thread
 * Execution ISA" 7.0+ (mma.sync.aligned.m16n8k16 with .bf16 needs PTX 7.0 and sm_80). */
#include <stddef.h>

#include "internal.h"

/* Eight copies of a line: unrolled bodies. */
#define X8(s) s s s s s s s s

static const char ptx_base[] =
    ".version 6.0\n"
    ".target sm_50\n"
    ".address_size 64\n"
    "\n"
    ".visible .entry pt_empty()\n"
    "{\n"
    "  ret;\n"
    "}\n"
    "\n"
    "// dst[i] = src[i] for 16-byte elements i < n, grid-stride loop, `passes` times over the set\n"
    "// (a set that fits L2 is copied many times so that the kernel runs long enough to time)\n"
    ".visible .entry pt_copy(.param .u64 dst, .param .u64 src, .param .u64 n, .param .u32 passes)\n"
    "{\n"
    "  .reg .pred %p<2>;\n"
    "  .reg .b32 %r<8>;\n"
    "  .reg .f32 %f<4>;\n"
    "  .reg .b64 %rd<10>;\n"
    "  ld.param.u64 %rd1, [dst];\n"
    "  ld.param.u64 %rd2, [src];\n"
    "  ld.param.u64 %rd3, [n];\n"
    "  ld.param.u32 %r6, [passes];\n"
    "  cvta.to.global.u64 %rd1, %rd1;\n"
    "  cvta.to.global.u64 %rd2, %rd2;\n"
    "  mov.u32 %r1, %ctaid.x;\n"
    "  mov.u32 %r2, %ntid.x;\n"
    "  mov.u32 %r3, %tid.x;\n"
    "  mov.u32 %r4, %nctaid.x;\n"
    "  mad.lo.s32 %r5, %r1, %r2, %r3;\n"
    "  mul.wide.u32 %rd5, %r2, %r4;\n"
    "  mov.u32 %r7, 0;\n"
    "PASS:\n"
    "  setp.ge.u32 %p1, %r7, %r6;\n"
    "  @%p1 bra DONE;\n"
    "  cvt.u64.u32 %rd4, %r5;\n"
    "LOOP:\n"
    "  setp.ge.u64 %p1, %rd4, %rd3;\n"
    "  @%p1 bra NEXT;\n"
    "  shl.b64 %rd6, %rd4, 4;\n"
    "  add.s64 %rd7, %rd2, %rd6;\n"
    "  ld.global.v4.f32 {%f0, %f1, %f2, %f3}, [%rd7];\n"
    "  add.s64 %rd8, %rd1, %rd6;\n"
    "  st.global.v4.f32 [%rd8], {%f0, %f1, %f2, %f3};\n"
    "  add.s64 %rd4, %rd4, %rd5;\n"
    "  bra LOOP;\n"
    "NEXT:\n"
    "  add.u32 %r7, %r7, 1;\n"
    "  bra PASS;\n"
    "DONE:\n"
    "  ret;\n"
    "}\n"
    "\n"
    "// 8 independent FMA chains per thread, iters x 8 FMAs per chain; out[thread] keeps them live\n"
    ".visible .entry pt_fma(.param .u64 out, .param .u32 iters)\n"
    "{\n"
    "  .reg .pred %p<2>;\n"
    "  .reg .b32 %r<8>;\n"
    "  .reg .f32 %f<12>;\n"
    "  .reg .b64 %rd<4>;\n"
    "  ld.param.u64 %rd1, [out];\n"
    "  ld.param.u32 %r1, [iters];\n"
    "  cvta.to.global.u64 %rd1, %rd1;\n"
    "  mov.u32 %r2, %ctaid.x;\n"
    "  mov.u32 %r3, %ntid.x;\n"
    "  mov.u32 %r4, %tid.x;\n"
    "  mad.lo.s32 %r5, %r2, %r3, %r4;\n"
    "  cvt.rn.f32.u32 %f0, %r5;\n"
    "  mov.f32 %f1, %f0;\n"
    "  mov.f32 %f2, %f0;\n"
    "  mov.f32 %f3, %f0;\n"
    "  mov.f32 %f4, %f0;\n"
    "  mov.f32 %f5, %f0;\n"
    "  mov.f32 %f6, %f0;\n"
    "  mov.f32 %f7, %f0;\n"
    "  mov.f32 %f8, 0f3F7FFFEF;\n" /* 0.999999: multiplier that keeps values finite */
    "  mov.f32 %f9, 0f3A83126F;\n" /* 0.001 */
    "  mov.u32 %r6, 0;\n"
    "ITER:\n"
    "  setp.ge.u32 %p1, %r6, %r1;\n"
    "  @%p1 bra END;\n"
    X8("  fma.rn.f32 %f0, %f0, %f8, %f9;\n"
       "  fma.rn.f32 %f1, %f1, %f8, %f9;\n"
       "  fma.rn.f32 %f2, %f2, %f8, %f9;\n"
       "  fma.rn.f32 %f3, %f3, %f8, %f9;\n"
       "  fma.rn.f32 %f4, %f4, %f8, %f9;\n"
       "  fma.rn.f32 %f5, %f5, %f8, %f9;\n"
       "  fma.rn.f32 %f6, %f6, %f8, %f9;\n"
       "  fma.rn.f32 %f7, %f7, %f8, %f9;\n")
    "  add.s32 %r6, %r6, 1;\n"
    "  bra ITER;\n"
    "END:\n"
    "  add.f32 %f0, %f0, %f1;\n"
    "  add.f32 %f2, %f2, %f3;\n"
    "  add.f32 %f4, %f4, %f5;\n"
    "  add.f32 %f6, %f6, %f7;\n"
    "  add.f32 %f0, %f0, %f2;\n"
    "  add.f32 %f4, %f4, %f6;\n"
    "  add.f32 %f0, %f0, %f4;\n"
    "  mul.wide.u32 %rd2, %r5, 4;\n"
    "  add.s64 %rd3, %rd1, %rd2;\n"
    "  st.global.f32 [%rd3], %f0;\n"
    "  ret;\n"
    "}\n"
    "\n"
    "// Pointer chase in global memory, one thread: p = *cursor, then p = *p iters x 8 times, and\n"
    "// *cursor = p, so the next launch goes on where this one stopped (a chain longer than the L2\n"
    "// is not re-walked from its start). Each node holds the address of the next (built by the\n"
    "// host). .ca caches in L1; .cg only in L2: over a set that fits L2 it measures L2, over a\n"
    "// larger one the memory.\n"
#define CHASE(name, cop)                                                               \
  ".visible .entry " name "(.param .u64 cursor, .param .u32 iters)\n"                 \
  "{\n"                                                                               \
  "  .reg .pred %p<2>;\n"                                                             \
  "  .reg .b32 %r<4>;\n"                                                              \
  "  .reg .b64 %rd<4>;\n"                                                             \
  "  ld.param.u64 %rd2, [cursor];\n"                                                  \
  "  ld.param.u32 %r1, [iters];\n"                                                    \
  "  cvta.to.global.u64 %rd2, %rd2;\n"                                                \
  "  ld.global.u64 %rd1, [%rd2];\n"                                                   \
  "  mov.u32 %r2, 0;\n"                                                               \
  "CHASE:\n"                                                                          \
  "  setp.ge.u32 %p1, %r2, %r1;\n"                                                    \
  "  @%p1 bra END;\n"                                                                 \
  X8("  ld.global." cop ".u64 %rd1, [%rd1];\n")                                       \
  "  add.u32 %r2, %r2, 1;\n"                                                          \
  "  bra CHASE;\n"                                                                    \
  "END:\n"                                                                            \
  "  st.global.u64 [%rd2], %rd1;\n"                                                   \
  "  ret;\n"                                                                          \
  "}\n"
    CHASE("pt_chase_ca", "ca")
    "\n" CHASE("pt_chase_cg", "cg")
#undef CHASE
    "\n"
    "// Shared-memory pointer chase, one thread: a ring of 256 words, each holding the shared\n"
    "// address of the next (stride 33 words, so consecutive loads hit different banks), then\n"
    "// p = *p iters x 8 times. Volatile loads: the chase must not be folded. The SM clock cycles\n"
    "// the chase took (%clock64) go to out[1], so the host gets the clock the SM ran at.\n"
    ".visible .entry pt_smem_chase(.param .u32 iters, .param .u64 out)\n"
    "{\n"
    "  .shared .align 8 .b32 ring[256];\n"
    "  .reg .pred %p<2>;\n"
    "  .reg .b32 %r<10>;\n"
    "  .reg .b64 %rd<4>;\n"
    "  ld.param.u32 %r1, [iters];\n"
    "  ld.param.u64 %rd1, [out];\n"
    "  cvta.to.global.u64 %rd1, %rd1;\n"
    "  mov.u32 %r3, ring;\n"
    "  mov.u32 %r2, 0;\n"
    "INIT:\n"
    "  setp.ge.u32 %p1, %r2, 256;\n"
    "  @%p1 bra READY;\n"
    "  add.u32 %r4, %r2, 33;\n"
    "  and.b32 %r4, %r4, 255;\n"
    "  shl.b32 %r4, %r4, 2;\n"
    "  add.u32 %r4, %r4, %r3;\n"
    "  shl.b32 %r5, %r2, 2;\n"
    "  add.u32 %r5, %r5, %r3;\n"
    "  st.shared.u32 [%r5], %r4;\n"
    "  add.u32 %r2, %r2, 1;\n"
    "  bra INIT;\n"
    "READY:\n"
    "  mov.u64 %rd2, %clock64;\n"
    "  mov.u32 %r6, %r3;\n"
    "  mov.u32 %r2, 0;\n"
    "SCHASE:\n"
    "  setp.ge.u32 %p1, %r2, %r1;\n"
    "  @%p1 bra SEND;\n"
    X8("  ld.volatile.shared.u32 %r6, [%r6];\n")
    "  add.u32 %r2, %r2, 1;\n"
    "  bra SCHASE;\n"
    "SEND:\n"
    "  st.global.u32 [%rd1], %r6;\n"
    "  mov.u64 %rd3, %clock64;\n"
    "  sub.u64 %rd3, %rd3, %rd2;\n"
    "  st.global.u64 [%rd1+8], %rd3;\n"
    "  ret;\n"
    "}\n"
    "\n"
    "// Shared-memory read bandwidth: each thread of a block loads 16 bytes at tid x 16 (a warp\n"
    "// reads 512 contiguous bytes: no bank conflicts) from 8 places 4 KiB apart, iters times,\n"
    "// summing into 4 accumulators; out[thread] keeps them live. Volatile: no hoisting.\n"
    ".visible .entry pt_smem_read(.param .u64 out, .param .u32 iters)\n"
    "{\n"
    "  .shared .align 16 .b8 tile[32768];\n"
    "  .reg .pred %p<2>;\n"
    "  .reg .b32 %r<10>;\n"
    "  .reg .f32 %f<12>;\n"
    "  .reg .b64 %rd<4>;\n"
    "  ld.param.u64 %rd1, [out];\n"
    "  ld.param.u32 %r1, [iters];\n"
    "  cvta.to.global.u64 %rd1, %rd1;\n"
    "  mov.u32 %r2, %tid.x;\n"
    "  shl.b32 %r3, %r2, 4;\n"
    "  and.b32 %r3, %r3, 4095;\n"
    "  mov.u32 %r4, tile;\n"
    "  add.u32 %r4, %r4, %r3;\n"
    "  mov.f32 %f0, 0f00000000;\n"
    "  mov.f32 %f1, 0f00000000;\n"
    "  mov.f32 %f2, 0f00000000;\n"
    "  mov.f32 %f3, 0f00000000;\n"
    "  mov.u32 %r5, 0;\n"
    "SREAD:\n"
    "  setp.ge.u32 %p1, %r5, %r1;\n"
    "  @%p1 bra RDONE;\n"
#define SLOAD(off)                                                    \
  "  ld.volatile.shared.v4.f32 {%f4, %f5, %f6, %f7}, [%r4+" off "];\n" \
  "  add.f32 %f0, %f0, %f4;\n"                                        \
  "  add.f32 %f1, %f1, %f5;\n"                                        \
  "  add.f32 %f2, %f2, %f6;\n"                                        \
  "  add.f32 %f3, %f3, %f7;\n"
    SLOAD("0") SLOAD("4096") SLOAD("8192") SLOAD("12288") SLOAD("16384") SLOAD("20480") SLOAD("24576")
        SLOAD("28672")
#undef SLOAD
    "  add.u32 %r5, %r5, 1;\n"
    "  bra SREAD;\n"
    "RDONE:\n"
    "  add.f32 %f0, %f0, %f1;\n"
    "  add.f32 %f2, %f2, %f3;\n"
    "  add.f32 %f0, %f0, %f2;\n"
    "  mov.u32 %r6, %ctaid.x;\n"
    "  mov.u32 %r7, %ntid.x;\n"
    "  mad.lo.s32 %r8, %r6, %r7, %r2;\n"
    "  mul.wide.u32 %rd2, %r8, 4;\n"
    "  add.s64 %rd3, %rd1, %rd2;\n"
    "  st.global.f32 [%rd3], %f0;\n"
    "  ret;\n"
    "}\n";

/* Tensor cores: each warp runs 4 independent m16n8k16 mma chains (accumulators d0-3 .. d12-15),
 * iters x 8 mma per chain; A and B fragments are constants (the values do not change the
 * rate). Fragment sizes per thread (PTX ISA, "Matrix Fragments for mma.m16n8k16"): A 4 x .b32,
 * B 2 x .b32, C/D 4 x .f32. 2 x 16 x 8 x 16 = 4096 flops per mma per warp. */
#define MMA_KERNEL(name, type, one)                                                       \
  ".visible .entry " name "(.param .u64 out, .param .u32 iters)\n"                         \
  "{\n"                                                                                    \
  "  .reg .pred %p<2>;\n"                                                                  \
  "  .reg .b32 %a<4>;\n"                                                                   \
  "  .reg .b32 %b<2>;\n"                                                                   \
  "  .reg .f32 %d<16>;\n"                                                                  \
  "  .reg .b32 %r<8>;\n"                                                                   \
  "  .reg .b64 %rd<4>;\n"                                                                  \
  "  ld.param.u64 %rd1, [out];\n"                                                          \
  "  ld.param.u32 %r1, [iters];\n"                                                         \
  "  cvta.to.global.u64 %rd1, %rd1;\n"                                                     \
  "  mov.b32 %a0, " one ";\n"                                                              \
  "  mov.b32 %a1, " one ";\n"                                                              \
  "  mov.b32 %a2, " one ";\n"                                                              \
  "  mov.b32 %a3, " one ";\n"                                                              \
  "  mov.b32 %b0, " one ";\n"                                                              \
  "  mov.b32 %b1, " one ";\n"                                                              \
  "  mov.u32 %r2, %tid.x;\n"                                                               \
  "  cvt.rn.f32.u32 %d0, %r2;\n"                                                           \
  "  mov.f32 %d1, %d0;\n  mov.f32 %d2, %d0;\n  mov.f32 %d3, %d0;\n"                     \
  "  mov.f32 %d4, %d0;\n  mov.f32 %d5, %d0;\n  mov.f32 %d6, %d0;\n  mov.f32 %d7, %d0;\n" \
  "  mov.f32 %d8, %d0;\n  mov.f32 %d9, %d0;\n  mov.f32 %d10, %d0;\n  mov.f32 %d11, %d0;\n" \
  "  mov.f32 %d12, %d0;\n  mov.f32 %d13, %d0;\n  mov.f32 %d14, %d0;\n  mov.f32 %d15, %d0;\n" \
  "  mov.u32 %r3, 0;\n"                                                                    \
  "MMA:\n"                                                                                 \
  "  setp.ge.u32 %p1, %r3, %r1;\n"                                                         \
  "  @%p1 bra MEND;\n"                                                                     \
  X8(MMA1(type, "0", "1", "2", "3") MMA1(type, "4", "5", "6", "7") MMA1(type, "8", "9", "10", "11") \
         MMA1(type, "12", "13", "14", "15"))                                               \
  "  add.u32 %r3, %r3, 1;\n"                                                               \
  "  bra MMA;\n"                                                                           \
  "MEND:\n"                                                                                \
  "  add.f32 %d0, %d0, %d4;\n"                                                             \
  "  add.f32 %d8, %d8, %d12;\n"                                                            \
  "  add.f32 %d0, %d0, %d8;\n"                                                             \
  "  mov.u32 %r4, %ctaid.x;\n"                                                             \
  "  mov.u32 %r5, %ntid.x;\n"                                                              \
  "  mad.lo.s32 %r6, %r4, %r5, %r2;\n"                                                     \
  "  mul.wide.u32 %rd2, %r6, 4;\n"                                                         \
  "  add.s64 %rd3, %rd1, %rd2;\n"                                                          \
  "  st.global.f32 [%rd3], %d0;\n"                                                         \
  "  ret;\n"                                                                               \
  "}\n"
#define MMA1(type, d0, d1, d2, d3)                                                                  \
  "  mma.sync.aligned.m16n8k16.row.col.f32." type "." type ".f32 {%d" d0 ", %d" d1 ", %d" d2 ", %d" d3 \
  "}, {%a0, %a1, %a2, %a3}, {%b0, %b1}, {%d" d0 ", %d" d1 ", %d" d2 ", %d" d3 "};\n"

/* 0x3C00 is 1.0 in f16, 0x3F80 is 1.0 in bf16: two per .b32 register. */
static const char ptx_mma[] =
    ".version 7.0\n"
    ".target sm_80\n"
    ".address_size 64\n"
    "\n" MMA_KERNEL("pt_mma_f16", "f16", "0x3C003C00") "\n" MMA_KERNEL("pt_mma_bf16", "bf16", "0x3F803F80");
#undef MMA1
#undef MMA_KERNEL

static const pmb_gpu_module modules[] = {
    {"base", "sm_50", ptx_base},
    {"mma", "sm_80", ptx_mma},
};

const pmb_gpu_module *pmb_gpu_modules(int *n) {
  *n = (int)PT_ARRAY_LEN(modules);
  return modules;
}
