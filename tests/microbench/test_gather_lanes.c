/* The gather and scatter kernels put their lanes where their class says: gather and scatter
 * in one 64-byte line, gather_page and scatter_page each lane on a 4 KiB page of its own (and
 * the chains' lanes spread over the L1's sets); a gather's table holds each index at itself,
 * so its chain revisits the same addresses. Checked on the filled input, not the assembly. */
#include <stdlib.h>
#include <string.h>

#include "microbench/internal.h"
#include "test.h"

/* Lane l's index (in x) for chain c of kernel k. */
static int64_t index_of(const pmb_kernel *k, const char *in, int c, int l) {
  const char *r = in + c * PMB_REGION;
  return ptg_elem_bits(k->ops[c].elem) == 32 ? ((const int32_t *)r)[l] : ((const int64_t *)r)[l];
}

/* Byte offset from `in` of lane l's element for chain c of kernel k. */
static int64_t lane_byte(const pmb_kernel *k, const char *in, int c, int l) {
  pmb_op o = k->ops[c];
  int eb = ptg_elem_bits(o.elem) / 8;
  int64_t i = index_of(k, in, c, l);
  bool page = o.op == PTG_OP_GATHER_PAGE || o.op == PTG_OP_SCATTER_PAGE;
  int64_t base = page ? PMB_REGION * PMB_MAX_CHAINS + (int64_t)c * PMB_PAGE_SPAN : c * PMB_REGION;
  return base + i * eb;
}

int main(void) {
  char *in = pmb_kernel_input_new();
  CHECK(in != NULL);
  if (!in) TEST_DONE();
  static const ptg_op ops[4] = {PTG_OP_GATHER, PTG_OP_SCATTER, PTG_OP_GATHER_PAGE, PTG_OP_SCATTER_PAGE};
  static const ptg_elem elems[2] = {PTG_ELEM_F32, PTG_ELEM_I64};
  for (int o = 0; o < 4; o++)
    for (int e = 0; e < 2; e++) {
      pmb_op op = {ops[o], elems[e], 512};
      pmb_kernel k = pmb_kernel_throughput(op);
      memset(in, 0x7f, PMB_INPUT_BYTES);
      pmb_kernel_fill(&k, in);
      int lanes = 512 / ptg_elem_bits(elems[e]), eb = ptg_elem_bits(elems[e]) / 8;
      bool page = o >= 2;
      int per_set[64] = {0};
      for (int c = 0; c < k.chains; c++)
        for (int l = 0; l < lanes; l++) {
          int64_t at = lane_byte(&k, in, c, l);
          CHECK_MSG(at >= 0 && at + eb <= PMB_INPUT_BYTES, "%s lane %d of chain %d at %lld", ptg_op_name(op.op), l, c,
                    (long long)at);
          if (l > 0) {
            int64_t prev = lane_byte(&k, in, c, l - 1);
            if (page)
              CHECK_MSG(at - prev >= 4096 && at / 4096 != prev / 4096, "%s %s: lanes %d and %d %lld bytes apart",
                        ptg_op_name(op.op), ptg_elem_name(op.elem), l - 1, l, (long long)(at - prev));
            else
              CHECK_MSG(at / 64 == lane_byte(&k, in, c, 0) / 64, "%s %s: lane %d outside lane 0's line", ptg_op_name(op.op),
                        ptg_elem_name(op.elem), l);
          }
          if (page) per_set[(at / 64) % 64]++;
          /* a gather's table holds the index at the index: the chain revisits its lanes */
          if (op.op == PTG_OP_GATHER || op.op == PTG_OP_GATHER_PAGE) {
            int64_t want = index_of(&k, in, c, l);
            int64_t got = eb == 4 ? *(const int32_t *)(in + at) : *(const int64_t *)(in + at);
            CHECK_MSG(got == want, "%s %s chain %d lane %d: table holds %lld, index %lld", ptg_op_name(op.op),
                      ptg_elem_name(op.elem), c, l, (long long)got, (long long)want);
          }
        }
      /* the page-apart lanes of all chains fit the L1's 8 ways in every set */
      for (int s = 0; s < 64 && page; s++) CHECK_MSG(per_set[s] <= 8, "%s: %d lines in set %d", ptg_op_name(op.op), per_set[s], s);
    }
  pmb_kernel_input_free(in);
  TEST_DONE();
}
