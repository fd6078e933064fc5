/* Register tiles too large for the vector registers: R x C accumulators of the widest vector
 * width, each updated by one FMA per iteration (a broadcast of A's row r times B's vector c, a
 * matmul's register tile), compiled by the host's backend, which keeps what the registers
 * cannot hold in memory. Past the registers every update pays for a reload, a store and the
 * forwarding between them (Zen 3, 16 ymm registers: 61.5 cycles an iteration for 32
 * accumulators against 16 for their FMAs, docs/validation.md "Session 19"). The median over
 * tiles from the register count to twice it of cycles per accumulator update is
 * cpu.spill_update_cycles, which the predictor's +regs charges a loop whose accumulators do
 * not fit (predictor/spills.c). */
#include <math.h>
#include <stdlib.h>

#include "internal.h"

#define TILE_COLS 4 /* vectors of B per iteration: the tile's temporaries are these and a broadcast */
#define K_WRAP 64   /* iterations before the operands repeat: A and B stay in L1 */

/* fn(iterations, {a, b}, out): acc[r][c] += broadcast(a[r][k]) * b[k][c] for k = i mod K_WRAP. */
static void build_tile(pmb_jit *j, LLVMModuleRef m, const char *name, int rows, int lanes) {
  LLVMContextRef c = pmb_jit_context(j);
  LLVMTypeRef i64 = LLVMInt64TypeInContext(c), i32 = LLVMInt32TypeInContext(c), f32 = LLVMFloatTypeInContext(c);
  LLVMTypeRef ptr = LLVMPointerTypeInContext(c, 0), vec = LLVMVectorType(f32, (unsigned)lanes);
  LLVMTypeRef fma_ty = LLVMFunctionType(vec, (LLVMTypeRef[]){vec, vec, vec}, 3, 0);
  char fma_name[48];
  snprintf(fma_name, sizeof fma_name, "llvm.fma.v%df32", lanes);
  LLVMValueRef fma = LLVMGetNamedFunction(m, fma_name);
  if (!fma) fma = LLVMAddFunction(m, fma_name, fma_ty);
  pmb_loop_frame f = pmb_loop_frame_new(j, m, name, 2);
  LLVMBuilderRef b = f.b;
  LLVMValueRef iters = LLVMGetParam(f.fn, 0), in = LLVMGetParam(f.fn, 1), out = LLVMGetParam(f.fn, 2);
  LLVMValueRef zero = LLVMConstInt(i64, 0, 0), one = LLVMConstInt(i64, 1, 0);
  LLVMValueRef a = LLVMBuildLoad2(b, ptr, in, "a");
  LLVMValueRef bm = LLVMBuildLoad2(b, ptr, LLVMBuildGEP2(b, ptr, in, &one, 1, ""), "b");
  LLVMBuildBr(b, f.loop);

  LLVMPositionBuilderAtEnd(b, f.loop);
  int n_acc = rows * TILE_COLS;
  LLVMValueRef *acc = malloc(sizeof *acc * (size_t)n_acc), *next = malloc(sizeof *next * (size_t)n_acc);
  LLVMValueRef i = LLVMBuildPhi(b, i64, "i");
  for (int k = 0; k < n_acc; k++) acc[k] = LLVMBuildPhi(b, vec, "");
  LLVMValueRef kk = LLVMBuildAnd(b, i, LLVMConstInt(i64, K_WRAP - 1, 0), "k");
  LLVMValueRef bv[TILE_COLS];
  for (int col = 0; col < TILE_COLS; col++) {
    LLVMValueRef idx = LLVMBuildAdd(b, LLVMBuildMul(b, kk, LLVMConstInt(i64, TILE_COLS * lanes, 0), ""),
                                    LLVMConstInt(i64, (unsigned long long)(col * lanes), 0), "");
    bv[col] = LLVMBuildLoad2(b, vec, LLVMBuildGEP2(b, f32, bm, &idx, 1, ""), "");
    LLVMSetAlignment(bv[col], 4);
  }
  LLVMValueRef undef = LLVMGetUndef(vec), splat = LLVMConstNull(LLVMVectorType(i32, (unsigned)lanes));
  for (int r = 0; r < rows; r++) {
    LLVMValueRef idx = LLVMBuildAdd(b, kk, LLVMConstInt(i64, (unsigned long long)(r * K_WRAP), 0), "");
    LLVMValueRef s = LLVMBuildLoad2(b, f32, LLVMBuildGEP2(b, f32, a, &idx, 1, ""), "");
    LLVMValueRef av = LLVMBuildShuffleVector(b, LLVMBuildInsertElement(b, undef, s, LLVMConstInt(i32, 0, 0), ""), undef,
                                             splat, "");
    for (int col = 0; col < TILE_COLS; col++) {
      int k = r * TILE_COLS + col;
      next[k] = LLVMBuildCall2(b, fma_ty, fma, (LLVMValueRef[]){av, bv[col], acc[k]}, 3, "");
    }
  }
  LLVMValueRef inc = LLVMBuildAdd(b, i, one, "");
  LLVMBuildCondBr(b, LLVMBuildICmp(b, LLVMIntSLT, inc, iters, ""), f.loop, f.done);
  LLVMValueRef vzero = LLVMConstNull(vec);
  LLVMAddIncoming(i, &zero, &f.entry, 1);
  LLVMAddIncoming(i, &inc, &f.loop, 1);
  for (int k = 0; k < n_acc; k++) {
    LLVMAddIncoming(acc[k], &vzero, &f.entry, 1);
    LLVMAddIncoming(acc[k], &next[k], &f.loop, 1);
  }

  LLVMPositionBuilderAtEnd(b, f.done);
  LLVMValueRef sum = next[0];
  for (int k = 1; k < n_acc; k++) sum = LLVMBuildFAdd(b, sum, next[k], "");
  LLVMValueRef st = LLVMBuildStore(b, sum, out);
  LLVMSetAlignment(st, 4);
  LLVMBuildRetVoid(b);
  LLVMDisposeBuilder(b);
  free(acc), free(next);
}

/* Rows of the tiles timed: the registers' count of accumulators and up to twice it (spilled),
 * and one tile that fits (the reference the progress line prints). */
static int tile_rows(int regs, int *rows) {
  int q = regs / TILE_COLS, n = 0;
  rows[n++] = q > 3 ? q - 2 : 1; /* fits: regs - 8 accumulators + the tile's 5 temporaries */
  rows[n++] = q, rows[n++] = q + 1, rows[n++] = q + 2, rows[n++] = 2 * q, rows[n++] = 2 * q + 2;
  return n;
}

int pmb_measure_spills(pmb_ctx *c, pt_diag *d) {
  int regs = ptg_target_vector_registers(c->t), bits = c->t->max_vector_bits > 0 ? c->t->max_vector_bits : 128;
  int lanes = bits / 32 > 0 ? bits / 32 : 1, rows[8], n = tile_rows(regs, rows);
  LLVMModuleRef m = pmb_jit_module(c->jit, "spills");
  for (int t = 0; t < n; t++) {
    char name[32];
    snprintf(name, sizeof name, "tile_%d", t);
    build_tile(c->jit, m, name, rows[t], lanes);
  }
  int err = pmb_jit_add(c->jit, m, d);
  if (err < 0) return err;
  int max_rows = rows[n - 1];
  float *a = aligned_alloc(64, sizeof(float) * (size_t)(max_rows * K_WRAP));
  float *bm = aligned_alloc(64, sizeof(float) * (size_t)(K_WRAP * TILE_COLS * lanes));
  float out[64] __attribute__((aligned(64)));
  if (!a || !bm) {
    free(a), free(bm);
    return pt_fail(d, PT_ERR_NOMEM, "out of memory for the register tiles' operands");
  }
  for (int k = 0; k < max_rows * K_WRAP; k++) a[k] = 1e-6f * (float)(k % 97);
  for (int k = 0; k < K_WRAP * TILE_COLS * lanes; k++) bm[k] = 1e-6f * (float)(k % 89);
  void *in[2] = {a, bm};
  double ghz = pmb_recalibrate(c), per_update[8], spread = 0, fits = NAN;
  int reps = 0, n_spilled = 0;
  for (int t = 0; t < n; t++) {
    char name[32];
    snprintf(name, sizeof name, "tile_%d", t);
    pmb_kernel_fn fn = (pmb_kernel_fn)pmb_jit_lookup(c->jit, name, d);
    if (!fn) {
      free(a), free(bm);
      return d->err;
    }
    pmb_stats s = pmb_time_kernel(fn, in, out, c->min_seconds, c->reps);
    double cycles = s.median * 1e9 * ghz, acc = rows[t] * TILE_COLS;
    pmb_progress(c, "register tile %d x %d of %d-bit accumulators (%d registers): %.1f cycles an iteration, %.2f an update",
                 rows[t], TILE_COLS, bits, regs, cycles, cycles / acc);
    if (t == 0) {
      fits = cycles / acc;
      continue;
    }
    per_update[n_spilled++] = cycles / acc;
    spread = fmax(spread, s.spread), reps = s.reps;
  }
  free(a), free(bm);
  double median = pt_median(per_update, n_spilled);
  c->t->spill_update_cycles = (ptg_figure){
      median, spread, reps,
      pt_sprintf(c->t->arena,
                 "register tiles of %d x %d accumulators of %d bits, one FMA each an iteration, %d to %d accumulators "
                 "for %d vector registers: the median of cycles per update (a tile that fits: %.2f)",
                 rows[1], TILE_COLS, bits, rows[1] * TILE_COLS, rows[n - 1] * TILE_COLS, regs, fits)};
  pmb_progress(c, "spilled register tiles: %.2f cycles per accumulator update (%.2f in a tile that fits)", median, fits);
  return PT_OK;
}
