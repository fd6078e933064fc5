/* Each instruction kernel contains the instruction it claims to measure: the assembly of its
 * throughput kernel holds at least one loop's worth (48) of the expected x86 mnemonic on the
 * expected register class. The expectations are written here, independently of microbench. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "asm_loop.h"
#include "microbench/microbench.h"
#include "test.h"

/* Expected mnemonic: [op][float?][64-bit lanes?][scalar?]; NULL: not checked. */
typedef struct {
  ptg_op op;
  const char *f32[2], *f64[2], *i32[2], *i64[2]; /* {vector, scalar} */
} row;

static const row rows[] = {
    {PTG_OP_ADD, {"vaddps", "vaddss"}, {"vaddpd", "vaddsd"}, {"vpaddd", "addl"}, {"vpaddq", "addq"}},
    {PTG_OP_SUB, {"vsubps", "vsubss"}, {"vsubpd", "vsubsd"}, {"vpsubd", "subl"}, {"vpsubq", "subq"}},
    {PTG_OP_MUL, {"vmulps", "vmulss"}, {"vmulpd", "vmulsd"}, {"vpmulld", "imull"}, {"vpmullq", "imulq"}},
    {PTG_OP_FMA, {"vfmadd", "vfmadd"}, {"vfmadd", "vfmadd"}, {NULL, NULL}, {NULL, NULL}},
    {PTG_OP_DIV, {"vdivps", "vdivss"}, {"vdivpd", "vdivsd"}, {NULL, "idiv"}, {NULL, "idiv"}},
    {PTG_OP_SQRT, {"vsqrtps", "vsqrtss"}, {"vsqrtpd", "vsqrtsd"}, {NULL, NULL}, {NULL, NULL}},
    {PTG_OP_MINMAX, {"vmaxps", "vmaxss"}, {"vmaxpd", "vmaxsd"}, {"vpmaxsd", NULL}, {"vpmaxsq", NULL}},
    {PTG_OP_CMPSEL, {"vcmp", "vcmp"}, {"vcmp", "vcmp"}, {"vpcmp", NULL}, {"vpcmp", NULL}},
    {PTG_OP_LOGIC, {NULL, NULL}, {NULL, NULL}, {"vpxor|vxorp", "xorl"}, {"vpxor|vxorp", "xorq"}},
    {PTG_OP_SHIFT, {NULL, NULL}, {NULL, NULL}, {"vpsllvd", "shl"}, {"vpsllvq", "shl"}},
    {PTG_OP_CONVERT, {"vcvtdq2ps", "vcvt"}, {"vcvtqq2pd", "vcvt"}, {NULL, NULL}, {NULL, NULL}},
    {PTG_OP_SHUFFLE, {"vperm", NULL}, {"vperm", NULL}, {"vperm", NULL}, {"vperm", NULL}},
    {PTG_OP_LOAD, {"vmov", "vmovss"}, {"vmov", "vmovsd"}, {"vmov", "movl"}, {"vmov", "movq"}},
    {PTG_OP_STORE, {"vmov", "vmovss"}, {"vmov", "vmovsd"}, {"vmov", "movl"}, {"vmov", "movq"}},
    {PTG_OP_GATHER, {"vgatherdps", NULL}, {"vgatherqpd", NULL}, {"vpgatherdd", NULL}, {"vpgatherqq", NULL}},
    {PTG_OP_GATHER_PAGE, {"vgatherdps", NULL}, {"vgatherqpd", NULL}, {"vpgatherdd", NULL}, {"vpgatherqq", NULL}},
    {PTG_OP_SCATTER, {"vscatterdps", NULL}, {"vscatterqpd", NULL}, {"vpscatterdd", NULL}, {"vpscatterqq", NULL}},
    {PTG_OP_SCATTER_PAGE, {"vscatterdps", NULL}, {"vscatterqpd", NULL}, {"vpscatterdd", NULL}, {"vpscatterqq", NULL}},
};

static int count_in(const char *body, const char *mn, const char *reg, bool whole);

struct mnemonic_reg {
  const char *mn, *reg;
};
static bool has_mnemonic(const char *insn, const char *line, const void *ctx) {
  const struct mnemonic_reg *m = ctx;
  return strncmp(insn, m->mn, strlen(m->mn)) == 0 && (!m->reg || strstr(line, m->reg));
}
static int count(const char *body, const char *mn, const char *reg) { return count_in(body, mn, reg, false); }

/* Lines of the loop (or the whole function) that hold mnemonic `mn` ("a|b": either prefix) with a `reg` operand
 * (reg NULL: any). */
static int count_in(const char *body, const char *mn, const char *reg, bool whole) {
  const char *bar = strchr(mn, '|');
  if (bar) {
    char first[32];
    snprintf(first, sizeof first, "%.*s", (int)(bar - mn), mn);
    return count_in(body, first, reg, whole) + count_in(body, bar + 1, reg, whole);
  }
  struct mnemonic_reg m = {mn, reg};
  return asm_count_lines(body, whole, has_mnemonic, &m);
}

/* Loop lines "vmov... {%kN}" with a `reg` operand: AVX-512 moves under a mask register. */
static bool is_masked_move(const char *insn, const char *line, const void *reg) {
  return strncmp(insn, "vmov", 4) == 0 && strstr(line, "{%k") && strstr(line, (const char *)reg);
}
static int count_masked_moves(const char *body, const char *reg) { return asm_count_lines(body, false, is_masked_move, reg); }

/* Loop lines that load one element from memory not on the stack (vmovss/vmovd/vinsertps/vpinsrd...
 * with a memory operand): a gather as LLVM scalarizes it for a CPU it does not give fast gathers
 * (Zen 3: znver3 lacks the fast-gather tuning, so vgatherdps never appears there). */
static bool is_element_load(const char *insn, const char *line, const void *ctx) {
  (void)ctx;
  static const char *const mn[] = {"vmovss", "vmovsd", "vmovd", "vmovq", "vinsertps", "vpinsrd", "vpinsrq", "vmovhps",
                                   "vmovhpd", "vmovlps", "vmovlpd", "vpbroadcastd", "vpbroadcastq", "vbroadcastss"};
  const char *paren = strstr(line, "(%");
  if (!paren || strstr(line, "(%rsp)")) return false;
  for (size_t k = 0; k < PT_ARRAY_LEN(mn); k++)
    if (strncmp(insn, mn[k], strlen(mn[k])) == 0 && (insn[strlen(mn[k])] == '\t' || insn[strlen(mn[k])] == ' '))
      return true;
  return false;
}
static bool is_gather(const char *insn, const char *line, const void *ctx) {
  (void)line, (void)ctx;
  return strncmp(insn, "vgather", 7) == 0 || strncmp(insn, "vpgather", 8) == 0;
}

int main(void) {
  if (!pmb_supported(PTG_OP_ADD, PTG_ELEM_F32, 128) || !pmb_supported(PTG_OP_GATHER, PTG_ELEM_F32, 256)) {
    fprintf(stderr, "not an x86 host with AVX2: the expectations here are x86 mnemonics\n");
    return 77;
  }
  static const ptg_elem elems[4] = {PTG_ELEM_F32, PTG_ELEM_F64, PTG_ELEM_I32, PTG_ELEM_I64};
  static const int widths[4] = {0, 128, 256, 512};
  static const char *const regs[4] = {NULL, "%xmm", "%ymm", "%zmm"};
  int checked = 0;
  for (size_t r = 0; r < PT_ARRAY_LEN(rows); r++)
    for (int e = 0; e < 4; e++)
      for (int w = 0; w < 4; w++) {
        const char *const *exp = e == 0 ? rows[r].f32 : e == 1 ? rows[r].f64 : e == 2 ? rows[r].i32 : rows[r].i64;
        const char *mn = exp[w == 0];
        int bits = widths[w] ? widths[w] : ptg_elem_bits(elems[e]);
        if (!mn || !pmb_supported(rows[r].op, elems[e], bits)) continue;
        pt_diag d = {0};
        char *body = pmb_kernel_asm(rows[r].op, elems[e], bits, &d);
        CHECK_MSG(body != NULL, "%s", d.msg);
        if (!body) continue;
        /* 64-bit integer division on AMD cores is guarded by a 32-bit fast path (LLVM's
         * idiv bypass), so its loop has branches: count over the whole function */
        bool branchy = rows[r].op == PTG_OP_DIV && !ptg_elem_is_float(elems[e]);
        int n = count_in(body, branchy ? "idiv|div" : mn, regs[w], branchy);
        bool gather = rows[r].op == PTG_OP_GATHER || rows[r].op == PTG_OP_GATHER_PAGE;
        if (gather && asm_count_lines(body, false, is_gather, NULL) == 0) {
          /* scalarized by the host's backend: what a gather in the IR costs here, so that is what
           * is measured; it must hold every lane's load */
          int lanes = bits / ptg_elem_bits(elems[e]);
          int loads = asm_count_lines(body, false, is_element_load, NULL);
          CHECK_MSG(loads >= lanes * pmb_kernel_ops_per_iteration(),
                    "%s %s %d-bit, scalarized: %d element loads in the loop, expected >= %d\n%s",
                    ptg_op_name(rows[r].op), ptg_elem_name(elems[e]), bits, loads,
                    lanes * pmb_kernel_ops_per_iteration(), body);
          free(body);
          checked++;
          continue;
        }
        CHECK_MSG(n >= pmb_kernel_ops_per_iteration(), "%s %s %d-bit: %d x %s %s in the loop, expected >= %d\n%s",
                  ptg_op_name(rows[r].op), ptg_elem_name(elems[e]), bits, n, mn, regs[w] ? regs[w] : "",
                  pmb_kernel_ops_per_iteration(), body);
        if (rows[r].op == PTG_OP_CONVERT) /* the way back: float -> int */
          CHECK(count(body, "vcvtt", regs[w]) >= pmb_kernel_ops_per_iteration());
        free(body);
        checked++;
      }
  /* dot products, where the host has them */
  if (pmb_supported(PTG_OP_FMA, PTG_ELEM_BF16, 512)) {
    pt_diag d = {0};
    char *body = pmb_kernel_asm(PTG_OP_FMA, PTG_ELEM_BF16, 512, &d);
    CHECK(body && count(body, "vdpbf16ps", "%zmm") >= pmb_kernel_ops_per_iteration());
    free(body);
    checked++;
  }
  if (pmb_supported(PTG_OP_FMA, PTG_ELEM_I8, 512)) {
    pt_diag d = {0};
    char *body = pmb_kernel_asm(PTG_OP_FMA, PTG_ELEM_I8, 512, &d);
    CHECK(body && count(body, "vpdpbusd", "%zmm") >= pmb_kernel_ops_per_iteration());
    free(body);
    checked++;
  }
  /* masked loads and stores (llvm.masked.load/store with a mask from memory): a k-masked
   * vmovups/vmovdqu32 on AVX-512, vmaskmovps/vpmaskmovd on AVX2 only, never a plain move */
  static const ptg_op masked_ops[2] = {PTG_OP_MASKLOAD, PTG_OP_MASKSTORE};
  static const ptg_elem masked_elems[2] = {PTG_ELEM_F32, PTG_ELEM_I32};
  int masked_checked = 0;
  for (int o = 0; o < 2; o++)
    for (int e = 0; e < 2; e++)
      for (int w = 1; w < 4; w++) {
        if (!pmb_supported(masked_ops[o], masked_elems[e], widths[w])) continue;
        pt_diag dm = {0};
        char *body = pmb_kernel_asm(masked_ops[o], masked_elems[e], widths[w], &dm);
        CHECK_MSG(body != NULL, "%s", dm.msg);
        if (!body) continue;
        int n = count(body, "vmaskmov|vpmaskmov", regs[w]) + count_masked_moves(body, regs[w]);
        CHECK_MSG(n >= pmb_kernel_ops_per_iteration(), "%s %s %d-bit: %d masked moves in the loop, expected >= %d\n%s",
                  ptg_op_name(masked_ops[o]), ptg_elem_name(masked_elems[e]), widths[w], n,
                  pmb_kernel_ops_per_iteration(), body);
        free(body);
        masked_checked++;
      }
  CHECK_MSG(masked_checked >= 4 || !pmb_supported(PTG_OP_MASKLOAD, PTG_ELEM_F32, 256), "%d masked kernels", masked_checked);
  checked += masked_checked;
  /* an unsupported combination is refused, not faked */
  pt_diag d = {0};
  CHECK(pmb_kernel_asm(PTG_OP_SQRT, PTG_ELEM_I32, 32, &d) == NULL && d.err == PT_ERR_UNSUPPORTED);
  fprintf(stderr, "%d kernels checked\n", checked);
  CHECK(checked > 40);
  TEST_DONE();
}
