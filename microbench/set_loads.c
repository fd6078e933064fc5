/* L1 set walks read by several load instructions at once: a matrix column whose lines fall in
 * few of L1's sets (the set walks' strides and lines, held by L2), read as a matrix product's
 * inner loop reads it (acc += row[i] x column[i], the column moving one element a sweep so that
 * sixteen sweeps share its lines), by 1, 2, 4, 8 or 16 loads an iteration, each its own
 * instruction (an unrolled loop's rows of the column). Every line and the order of all accesses
 * are those of one load walking alone, yet Zen 3 serves the column slower the more instructions
 * read it (docs/validation.md, session 24: mm512 with its k loop unrolled by 5-8 measures
 * 1.23-1.34x the plain loop; this kernel in C 1.19-1.31x at 8 loads). A walk of independent
 * loads alone (the set walks' kernel) shows it too but moves 0.95-1.3x between runs. Fills
 * caches[0].set_loads for the walks in at most MAX_SETS sets. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "internal.h"

static const int loads_of[] = {1, 2, 4, 8, 16};
#define N_LOADS ((int)PT_ARRAY_LEN(loads_of))
#define MAX_SETS 4 /* past four sets Zen 3's walks cost the same by any number of loads */
#define ROUNDS 9       /* every load count timed once per round, the rounds' median: drifts cancel */
#define QUICK_ROUNDS 3 /* --quick */
#define MIN_SECONDS 0.02 /* a timed call at least this long: the ratios are a few percent apart */

/* void f(i64 sweeps, ptr in = {ptr column, ptr row, i64 lines, i64 stride}, ptr out): for each
 * sweep s, acc += row[i] x column[i x stride + 4 (s mod 16)] for i < lines, `loads` rows an
 * iteration; out = acc (float). lines is a multiple of loads. */
static void build_column(pmb_jit *j, LLVMModuleRef m, const char *name, int loads) {
  LLVMContextRef c = pmb_jit_context(j);
  LLVMTypeRef i64 = LLVMInt64TypeInContext(c), i8 = LLVMInt8TypeInContext(c), f32 = LLVMFloatTypeInContext(c),
              ptr = LLVMPointerTypeInContext(c, 0);
  pmb_nest f = pmb_nest_new(j, m, name, "sweep", f32); /* sweeps over the column, each a walk */
  LLVMBuilderRef b = f.b;
  LLVMValueRef k1 = LLVMConstInt(i64, 1, 0), k2 = LLVMConstInt(i64, 2, 0), k3 = LLVMConstInt(i64, 3, 0);
  LLVMValueRef column = LLVMBuildLoad2(b, ptr, f.in, "column");
  LLVMValueRef row = LLVMBuildLoad2(b, ptr, LLVMBuildGEP2(b, i64, f.in, &k1, 1, ""), "row");
  LLVMValueRef lines = LLVMBuildLoad2(b, i64, LLVMBuildGEP2(b, i64, f.in, &k2, 1, ""), "lines");
  LLVMValueRef stride = LLVMBuildLoad2(b, i64, LLVMBuildGEP2(b, i64, f.in, &k3, 1, ""), "stride");
  pmb_nest_outer(&f);
  LLVMValueRef col = LLVMBuildMul(b, LLVMBuildAnd(b, f.trip, LLVMConstInt(i64, 15, 0), ""), LLVMConstInt(i64, 4, 0), "col");
  pmb_nest_walk(&f); /* the walk's index is the row */
  LLVMValueRef i = f.index, a = f.acc;
  for (int u = 0; u < loads; u++) {
    LLVMValueRef iu = LLVMBuildAdd(b, i, LLVMConstInt(i64, (unsigned long long)u, 0), "");
    LLVMValueRef off = LLVMBuildAdd(b, LLVMBuildMul(b, iu, stride, ""), col, "");
    LLVMValueRef x = LLVMBuildLoad2(b, f32, LLVMBuildGEP2(b, i8, column, &off, 1, ""), "");
    LLVMValueRef y = LLVMBuildLoad2(b, f32, LLVMBuildGEP2(b, f32, row, &iu, 1, ""), "");
    a = LLVMBuildFAdd(b, a, LLVMBuildFMul(b, x, y, ""), "");
  }
  pmb_nest_close(&f, LLVMBuildAdd(b, i, LLVMConstInt(i64, (unsigned long long)loads, 0), ""), lines, a);
}

int pmb_measure_set_loads(pmb_ctx *c, pt_diag *d) {
  ptg_target *t = c->t;
  if (!pmb_l1_has_sets(t)) {
    pmb_progress(c, "L1 set walks by loads: skipped (no L1 associativity from the topology)");
    return PT_OK;
  }
  ptg_cache *l1 = &t->caches[0];
  LLVMModuleRef m = pmb_jit_module(c->jit, "set_loads");
  char names[N_LOADS][32];
  for (int k = 0; k < N_LOADS; k++) {
    snprintf(names[k], sizeof names[k], "set_load_%d", loads_of[k]);
    build_column(c->jit, m, names[k], loads_of[k]);
  }
  int err = pmb_jit_add(c->jit, m, d);
  if (err < 0) return err;
  pmb_kernel_fn fn[N_LOADS];
  for (int k = 0; k < N_LOADS; k++)
    if (!(fn[k] = (pmb_kernel_fn)pmb_jit_lookup(c->jit, names[k], d))) return d->err;
  ptg_set_walk plan[PMB_SET_WALKS];
  int n_plan = pmb_plan_set_walks(t, l1, plan), rows = 0;
  l1->set_loads = pt_alloc(t->arena, sizeof(ptg_set_load) * (size_t)(PMB_SET_WALKS * N_LOADS));
  for (int i = 0; i < n_plan; i++) {
    if (plan[i].sets > MAX_SETS) continue;
    int64_t stride = plan[i].stride_bytes, lines = plan[i].lines & ~(int64_t)(loads_of[N_LOADS - 1] - 1);
    size_t bytes = (size_t)(lines * stride);
    int rounds = c->o->quick ? QUICK_ROUNDS : ROUNDS;
    double ns[N_LOADS][ROUNDS], ghz = pmb_recalibrate(c), min_s = fmax(c->min_seconds, c->o->quick ? MIN_SECONDS / 4 : MIN_SECONDS);
    float *row = malloc(sizeof(float) * (size_t)lines);
    if (!row) return pt_fail(d, PT_ERR_NOMEM, "cannot allocate the L1 set walks' row");
    for (int64_t r = 0; r < lines; r++) row[r] = 1.0f / (float)(r + 1);
    int reps = 0;
    for (int r = 0; r < rounds; r++) { /* a fresh buffer each round: where its pages land moves the figures */
      char *buf = pmb_big_alloc(bytes, c->o->small_pages);
      if (!buf) return free(row), pt_fail(d, PT_ERR_NOMEM, "cannot map %zu bytes for the L1 set walks by loads", bytes);
      for (size_t q = 0; q < bytes / sizeof(float); q++) ((float *)buf)[q] = 0.5f;
      struct {
        char *column;
        float *row;
        int64_t lines, stride;
      } in = {buf, row, lines, stride};
      for (int k = 0; k < N_LOADS; k++) {
        float sink;
        pmb_stats s = pmb_time_kernel(fn[k], &in, &sink, min_s, c->reps);
        ns[k][r] = s.median * 1e9 / (double)lines;
        reps = s.reps;
      }
      munmap(buf, bytes);
    }
    free(row);
    double one = pmb_stats_of(ns[0], rounds).median;
    for (int k = 0; k < N_LOADS; k++) {
      pmb_stats s = pmb_stats_of(ns[k], rounds);
      const char *how = pt_sprintf(t->arena,
                                   "a column of %lld lines %lld bytes apart (in %d of L1's sets, in L2), %s pages, read as "
                                   "acc += row[i] x column[i] with the column one float on each sweep, by %d loads of "
                                   "it an iteration, each its own instruction: ns per element, the median of %d rounds, "
                                   "each on a fresh buffer and the median of %d repetitions, taken in turn with the "
                                   "other load counts",
                                   (long long)lines, (long long)stride, plan[i].sets, c->o->small_pages ? "4 KiB" : "2 MiB",
                                   loads_of[k], rounds, reps);
      l1->set_loads[rows++] = (ptg_set_load){stride, plan[i].sets, lines, loads_of[k], {s.median, s.spread, rounds, how}};
      pmb_progress(c, "L1 column, stride %lld (%d set%s), read by %2d load%s at once: %.2f cycles per element (%.2fx one load's)",
                   (long long)stride, plan[i].sets, plan[i].sets == 1 ? "" : "s", loads_of[k], loads_of[k] == 1 ? "" : "s",
                   s.median * ghz, s.median / one);
    }
  }
  l1->n_set_loads = rows;
  return PT_OK;
}
