/* Sequential streams in one L1 set position: N rows a page (4 KiB) apart walked side by side,
 * one 4-byte element of each per iteration, some of them stored back (out[r][j] += ...). Their
 * current lines share one set; past the ways they evict each other before the next element, and
 * a stored-back row's every eviction writes a dirty line to L2 (bert_ffn1 #25's rfactor loop:
 * twelve rows in one position, six read-modify-written; docs/validation.md, session 15). The
 * set walks (set_walks.c) walk one stream down a column; these are many streams along rows.
 * Fills caches[0].set_streams. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "internal.h"

#define ROW_ELEMS 128 /* 512 bytes a row: 8 lines swept again and again, as a tile's rows are */
#define ROW_APART 4096

/* Streams per row, as multiples of L1's ways over 8 (4 = half the ways, 8 = the ways): below,
 * at and past the ways; each with none, half and all of them read-modify-written. */
static const int eighths_of_ways[] = {4, 8, 9, 10, 12, 16, 24};
#define SHARES 3
#define STREAM_BUFFERS 5

/* Which rows are stored back: `rmw` of n spread evenly (row r when the count up to it steps). */
static bool row_is_rmw(int r, int n, int rmw) { return (r + 1) * rmw / n > r * rmw / n; }

/* fn(iterations, {base}, out): iteration i reads element i mod ROW_ELEMS of each of n rows
 * ROW_APART bytes apart, storing rmw of them back plus one; the loads xor-ed into out. */
static void build_kernel(pmb_jit *j, LLVMModuleRef m, const char *name, int n, int rmw) {
  LLVMContextRef c = pmb_jit_context(j);
  LLVMTypeRef i64 = LLVMInt64TypeInContext(c), i32 = LLVMInt32TypeInContext(c), i8 = LLVMInt8TypeInContext(c),
              ptr = LLVMPointerTypeInContext(c, 0);
  pmb_loop_frame f = pmb_loop_frame_new(j, m, name, 2);
  LLVMBuilderRef b = f.b;
  LLVMValueRef iters = LLVMGetParam(f.fn, 0), in = LLVMGetParam(f.fn, 1), out = LLVMGetParam(f.fn, 2);
  LLVMValueRef zero = LLVMConstInt(i64, 0, 0), one = LLVMConstInt(i64, 1, 0), one32 = LLVMConstInt(i32, 1, 0);
  LLVMValueRef base = LLVMBuildLoad2(b, ptr, in, "base");
  LLVMBuildBr(b, f.loop);

  LLVMPositionBuilderAtEnd(b, f.loop);
  LLVMValueRef i = LLVMBuildPhi(b, i64, "i"), acc = LLVMBuildPhi(b, i32, "acc");
  LLVMValueRef elem = LLVMBuildAnd(b, i, LLVMConstInt(i64, ROW_ELEMS - 1, 0), "");
  LLVMValueRef at = LLVMBuildShl(b, elem, LLVMConstInt(i64, 2, 0), "");
  LLVMValueRef a = acc;
  for (int r = 0; r < n; r++) {
    LLVMValueRef off = LLVMBuildAdd(b, at, LLVMConstInt(i64, (unsigned long long)r * ROW_APART, 0), "");
    LLVMValueRef p = LLVMBuildGEP2(b, i8, base, &off, 1, "");
    LLVMValueRef v = LLVMBuildLoad2(b, i32, p, "");
    LLVMSetVolatile(v, 1);
    if (row_is_rmw(r, n, rmw)) LLVMSetVolatile(LLVMBuildStore(b, LLVMBuildAdd(b, v, one32, ""), p), 1);
    a = LLVMBuildXor(b, a, v, "");
  }
  LLVMValueRef next = LLVMBuildAdd(b, i, one, "");
  LLVMBuildCondBr(b, LLVMBuildICmp(b, LLVMIntSLT, next, iters, ""), f.loop, f.done);
  LLVMValueRef z32 = LLVMConstInt(i32, 0, 0);
  LLVMAddIncoming(i, &zero, &f.entry, 1);
  LLVMAddIncoming(i, &next, &f.loop, 1);
  LLVMAddIncoming(acc, &z32, &f.entry, 1);
  LLVMAddIncoming(acc, &a, &f.loop, 1);

  LLVMPositionBuilderAtEnd(b, f.done);
  LLVMBuildStore(b, a, out);
  LLVMBuildRetVoid(b);
  LLVMDisposeBuilder(b);
}

int pmb_measure_set_streams(pmb_ctx *c, pt_diag *d) {
  ptg_target *t = c->t;
  ptg_cache *l1 = t->n_caches ? &t->caches[0] : NULL;
  if (!l1 || l1->associativity < 1 || l1->line_bytes < 8) {
    pmb_progress(c, "L1 set streams: skipped (no L1 associativity from the topology)");
    return PT_OK;
  }
  int counts[PT_ARRAY_LEN(eighths_of_ways)], n_counts = 0;
  for (size_t k = 0; k < PT_ARRAY_LEN(eighths_of_ways); k++) {
    int n = (eighths_of_ways[k] * l1->associativity + 7) / 8;
    if (n >= 1 && (n_counts == 0 || n > counts[n_counts - 1])) counts[n_counts++] = n;
  }
  int rows = n_counts * SHARES;
  LLVMModuleRef m = pmb_jit_module(c->jit, "set_streams");
  for (int k = 0; k < rows; k++) {
    int n = counts[k / SHARES], rmw = (k % SHARES) * n / (SHARES - 1);
    build_kernel(c->jit, m, pt_sprintf(t->arena, "set_streams_%d_%d", n, rmw), n, rmw);
  }
  int err = pmb_jit_add(c->jit, m, d);
  if (err < 0) return err;
  pmb_kernel_fn fns[PT_ARRAY_LEN(eighths_of_ways) * SHARES];
  for (int k = 0; k < rows; k++) {
    int n = counts[k / SHARES], rmw = (k % SHARES) * n / (SHARES - 1);
    if (!(fns[k] = (pmb_kernel_fn)pmb_jit_lookup(c->jit, pt_sprintf(t->arena, "set_streams_%d_%d", n, rmw), d))) return d->err;
  }
  /* one buffer's figures move between runs as the set walks' read-modify-write ones do (Zen 4,
   * 12 rows, 6 stored back: 3.4-5.6 cycles over four runs): each row's median over STREAM_BUFFERS
   * buffers */
  size_t bytes = (size_t)counts[n_counts - 1] * ROW_APART;
  pmb_stats *by_buffer = pt_alloc(t->arena, sizeof(pmb_stats) * (size_t)(rows * STREAM_BUFFERS));
  double ghz = pmb_recalibrate(c);
  for (int buffer = 0; buffer < STREAM_BUFFERS; buffer++) {
    char *buf = pmb_big_alloc(bytes, c->o->small_pages);
    if (!buf) return pt_fail(d, PT_ERR_NOMEM, "cannot map %zu bytes for the L1 set streams", bytes);
    memset(buf, 1, bytes);
    void *in[1] = {buf};
    int32_t sink;
    for (int k = 0; k < rows; k++) {
      int n = counts[k / SHARES];
      pmb_stats *row = &by_buffer[k * STREAM_BUFFERS];
      row[buffer] = pmb_stats_scale(pmb_time_kernel(fns[k], in, &sink, c->min_seconds, c->reps), 1e9 / n);
      for (int j = buffer; j > 0 && row[j].median < row[j - 1].median; j--) {
        pmb_stats x = row[j];
        row[j] = row[j - 1], row[j - 1] = x;
      }
    }
    munmap(buf, bytes);
  }
  l1->set_streams = pt_alloc(t->arena, sizeof(ptg_set_stream) * (size_t)rows);
  l1->n_set_streams = rows;
  for (int k = 0; k < rows; k++) {
    int n = counts[k / SHARES], rmw = (k % SHARES) * n / (SHARES - 1);
    pmb_stats st = by_buffer[k * STREAM_BUFFERS + STREAM_BUFFERS / 2];
    const char *how = pt_sprintf(t->arena,
                                 "%d rows %d bytes apart (one L1 set position), %d of them stored back plus one, %s pages: "
                                 "one 4-byte element of each row per iteration over %d bytes of each, again and again; "
                                 "ns per iteration / rows, median of %d repetitions, the median of %d buffers",
                                 n, ROW_APART, rmw, c->o->small_pages ? "4 KiB" : "2 MiB", ROW_ELEMS * 4, st.reps, STREAM_BUFFERS);
    l1->set_streams[k] = (ptg_set_stream){n, rmw, {st.median, st.spread, st.reps, how}};
    pmb_progress(c, "L1 set streams: %d rows in one set position, %d read-modify-write: %.2f cycles per access", n, rmw,
                 st.median * ghz);
  }
  return PT_OK;
}
