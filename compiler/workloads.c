/* The workload library: each operator as a compute DAG built from its shape parameters,
 * named by TVM-style workload keys (["matmul_add", 1024, 1024, 1024, "float32"]), plus the
 * benchmark suite of shared/workloads.md by name. Stage and tensor names follow TOPI. */
#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

#define MAXP 16

typedef pc_program *(*build_fn)(const int64_t *p, pt_diag *d);

typedef struct {
  pc_workload_info info;
  int n_required, n_params; /* trailing optional parameters default to 0 */
  build_fn build;
} workload;

/* Shorthands for index arithmetic while building bodies. */
#define AX(i) pc_axis(b, (i))
#define CI(v) pc_const_i(b, (v))
#define ADD(x, y) pc_bin(b, PC_E_ADD, (x), (y))
#define SUB(x, y) pc_bin(b, PC_E_SUB, (x), (y))
#define MUL(x, y) pc_bin(b, PC_E_MUL, (x), (y))

static pc_expr *load2(pc_builder *b, int t, pc_expr *i, pc_expr *j) {
  pc_expr *idx[2] = {i, j};
  return pc_load(b, t, 2, idx);
}

static pc_expr *load3(pc_builder *b, int t, pc_expr *i, pc_expr *j, pc_expr *k) {
  pc_expr *idx[3] = {i, j, k};
  return pc_load(b, t, 3, idx);
}

static pc_expr *load4(pc_builder *b, int t, pc_expr *i, pc_expr *j, pc_expr *k, pc_expr *l) {
  pc_expr *idx[4] = {i, j, k, l};
  return pc_load(b, t, 4, idx);
}

static int check_positive(const int64_t *p, int n, const char *name, pt_diag *d) {
  for (int i = 0; i < n; i++)
    if (p[i] <= 0 || p[i] > (1 << 24))
      return pt_fail(d, PT_ERR_INVALID, "%s: parameter %d is %lld (must be 1..%d)", name, i + 1, (long long)p[i], 1 << 24);
  return 0;
}

/* matmul family: C[N,M] = A[N,L] x B[L,M]; epilogue 0 none, 1 relu, 2 add D (matmul_add). */
static pc_program *build_matmul_common(const int64_t *p, int epilogue, const char *name, pt_diag *d) {
  if (check_positive(p, 3, name, d)) return NULL;
  int64_t N = p[0], L = p[1], M = p[2];
  pc_builder *b = pc_builder_new(name);
  int64_t sa[2] = {N, L}, sb[2] = {L, M}, sc[2] = {N, M}, red[1] = {L};
  const char *names[] = {"i", "j", "k"};
  int A = pc_placeholder(b, "A", 2, sa), B = pc_placeholder(b, "B", 2, sb);
  int D = epilogue == 2 ? pc_placeholder(b, "C", 2, sc) : -1;
  int mm = pc_compute(b, epilogue == 2 ? "matmul" : "C", 2, sc, 1, red, names, PC_REDUCE_SUM);
  pc_set_body(b, mm, MUL(load2(b, A, AX(0), AX(2)), load2(b, B, AX(2), AX(1))));
  int out = mm;
  if (epilogue == 1) {
    out = pc_compute(b, "relu", 2, sc, 0, NULL, names, PC_REDUCE_NONE);
    pc_set_body(b, out, pc_bin(b, PC_E_MAX, load2(b, mm, AX(0), AX(1)), pc_const_f(b, 0)));
  } else if (epilogue == 2) {
    out = pc_compute(b, "out", 2, sc, 0, NULL, names, PC_REDUCE_NONE);
    pc_set_body(b, out, ADD(load2(b, mm, AX(0), AX(1)), load2(b, D, AX(0), AX(1))));
  }
  int args[4] = {A, B, D, out};
  int n_args = 0;
  int list[4];
  for (int i = 0; i < 4; i++)
    if (args[i] >= 0) list[n_args++] = args[i];
  return pc_builder_finish(b, n_args, list, 2.0 * (double)N * (double)M * (double)L, d);
}

static pc_program *build_matmul(const int64_t *p, pt_diag *d) { return build_matmul_common(p, 0, "matmul", d); }
static pc_program *build_matmul_relu(const int64_t *p, pt_diag *d) { return build_matmul_common(p, 1, "matmul_relu", d); }
static pc_program *build_matmul_add(const int64_t *p, pt_diag *d) { return build_matmul_common(p, 2, "matmul_add", d); }

static pc_program *build_batch_matmul(const int64_t *p, pt_diag *d) {
  if (check_positive(p, 4, "batch_matmul", d)) return NULL;
  int64_t Bt = p[0], N = p[1], L = p[2], M = p[3];
  pc_builder *b = pc_builder_new("batch_matmul");
  int64_t sa[3] = {Bt, N, L}, sb[3] = {Bt, L, M}, sc[3] = {Bt, N, M}, red[1] = {L};
  const char *names[] = {"b", "i", "j", "k"};
  int A = pc_placeholder(b, "A", 3, sa), B = pc_placeholder(b, "B", 3, sb);
  int C = pc_compute(b, "C", 3, sc, 1, red, names, PC_REDUCE_SUM);
  pc_set_body(b, C, MUL(load3(b, A, AX(0), AX(1), AX(3)), load3(b, B, AX(0), AX(3), AX(2))));
  int args[3] = {A, B, C};
  return pc_builder_finish(b, 3, args, 2.0 * (double)Bt * (double)N * (double)M * (double)L, d);
}

/* TOPI dense: out[i,j] = sum_k data[i,k] * weight[j,k] (+ bias[j]) (relu). */
static pc_program *build_dense(const int64_t *p, pt_diag *d) {
  if (check_positive(p, 3, "dense", d)) return NULL;
  int64_t N = p[0], K = p[1], M = p[2];
  bool bias = p[3] != 0, relu = p[4] != 0;
  pc_builder *b = pc_builder_new("dense");
  int64_t sd[2] = {N, K}, sw[2] = {M, K}, so[2] = {N, M}, sbias[1] = {M}, red[1] = {K};
  const char *names[] = {"i", "j", "k"};
  int D = pc_placeholder(b, "data", 2, sd), W = pc_placeholder(b, "weight", 2, sw);
  int Bi = bias ? pc_placeholder(b, "bias", 1, sbias) : -1;
  int T = pc_compute(b, "T_dense", 2, so, 1, red, names, PC_REDUCE_SUM);
  pc_set_body(b, T, MUL(load2(b, D, AX(0), AX(2)), load2(b, W, AX(1), AX(2))));
  int out = T;
  if (bias) {
    int o = pc_compute(b, "T_add", 2, so, 0, NULL, names, PC_REDUCE_NONE);
    pc_expr *j = AX(1);
    pc_set_body(b, o, ADD(load2(b, out, AX(0), AX(1)), pc_load(b, Bi, 1, &j)));
    out = o;
  }
  if (relu) {
    int o = pc_compute(b, "T_relu", 2, so, 0, NULL, names, PC_REDUCE_NONE);
    pc_set_body(b, o, pc_bin(b, PC_E_MAX, load2(b, out, AX(0), AX(1)), pc_const_f(b, 0)));
    out = o;
  }
  int args[4], n = 0;
  args[n++] = D;
  args[n++] = W;
  if (bias) args[n++] = Bi;
  args[n++] = out;
  return pc_builder_finish(b, n, args, 2.0 * (double)N * (double)M * (double)K, d);
}

/* In-bounds test lo <= e < hi for padding selects. */
static pc_expr *in_range(pc_builder *b, pc_expr *e, int64_t lo, int64_t hi) {
  return pc_bin(b, PC_E_AND, pc_bin(b, PC_E_GE, e, CI(lo)), pc_bin(b, PC_E_LT, e, CI(hi)));
}

/* conv2d: N C H W K R S stride pad dilation groups; layout 0 NCHW, 1 NHWC. */
static pc_program *build_conv2d(const int64_t *p, int layout, pt_diag *d) {
  const char *name = layout ? "conv2d_nhwc" : "conv2d_nchw";
  if (check_positive(p, 8, name, d)) return NULL;
  int64_t N = p[0], C = p[1], H = p[2], W = p[3], K = p[4], R = p[5], S = p[6], st = p[7];
  int64_t pad = p[8], dil = p[9] > 0 ? p[9] : 1, groups = p[10] > 0 ? p[10] : 1;
  if (pad < 0 || C % groups || K % groups) {
    pt_fail(d, PT_ERR_INVALID, "%s: padding %lld, groups %lld must divide C=%lld and K=%lld", name, (long long)pad,
            (long long)groups, (long long)C, (long long)K);
    return NULL;
  }
  int64_t HP = H + 2 * pad, WP = W + 2 * pad;
  int64_t OH = (HP - dil * (R - 1) - 1) / st + 1, OW = (WP - dil * (S - 1) - 1) / st + 1;
  if (OH <= 0 || OW <= 0) {
    pt_fail(d, PT_ERR_INVALID, "%s: kernel %lldx%lld larger than the padded input", name, (long long)R, (long long)S);
    return NULL;
  }
  int64_t Cg = C / groups, Kg = K / groups;
  pc_builder *b = pc_builder_new(name);
  int64_t sin[4], sw[4], spad[4], sout[4], red[3] = {Cg, R, S};
  if (!layout) {
    int64_t a[4] = {N, C, H, W}, w[4] = {K, Cg, R, S}, pp[4] = {N, C, HP, WP}, o[4] = {N, K, OH, OW};
    memcpy(sin, a, sizeof a), memcpy(sw, w, sizeof w), memcpy(spad, pp, sizeof pp), memcpy(sout, o, sizeof o);
  } else {
    int64_t a[4] = {N, H, W, C}, w[4] = {R, S, Cg, K}, pp[4] = {N, HP, WP, C}, o[4] = {N, OH, OW, K};
    memcpy(sin, a, sizeof a), memcpy(sw, w, sizeof w), memcpy(spad, pp, sizeof pp), memcpy(sout, o, sizeof o);
  }
  int I = pc_placeholder(b, layout ? "data" : "data", 4, sin), Wt = pc_placeholder(b, "kernel", 4, sw);
  const char *pnames_nchw[] = {"i0", "i1", "i2", "i3"};
  int P = pc_compute(b, "pad_temp", 4, spad, 0, NULL, pnames_nchw, PC_REDUCE_NONE);
  int hax = layout ? 1 : 2, wax = layout ? 2 : 3;
  pc_expr *cond = pc_bin(b, PC_E_AND, in_range(b, AX(hax), pad, pad + H), in_range(b, AX(wax), pad, pad + W));
  pc_expr *src = layout ? load4(b, I, AX(0), SUB(AX(1), CI(pad)), SUB(AX(2), CI(pad)), AX(3))
                        : load4(b, I, AX(0), AX(1), SUB(AX(2), CI(pad)), SUB(AX(3), CI(pad)));
  pc_set_body(b, P, pad > 0 ? pc_select(b, cond, src, pc_const_f(b, 0)) : src);
  const char *cn_nchw[] = {"nn", "ff", "yy", "xx", "rc", "ry", "rx"};
  const char *cn_nhwc[] = {"nn", "yy", "xx", "ff", "rc", "ry", "rx"};
  int O = pc_compute(b, layout ? "Conv2dOutput" : "conv2d_nchw", 4, sout, 3, red, layout ? cn_nhwc : cn_nchw,
                     PC_REDUCE_SUM);
  /* axes: spatial 0..3, rc=4, ry=5, rx=6; channel of the input = group * Cg + rc */
  int ax_k = layout ? 3 : 1, ax_y = layout ? 1 : 2, ax_x = layout ? 2 : 3;
  pc_expr *chan = groups > 1 ? ADD(MUL(pc_bin(b, PC_E_DIV, AX(ax_k), CI(Kg)), CI(Cg)), AX(4)) : AX(4);
  pc_expr *hy = ADD(MUL(AX(ax_y), CI(st)), MUL(AX(5), CI(dil)));
  pc_expr *wx = ADD(MUL(AX(ax_x), CI(st)), MUL(AX(6), CI(dil)));
  pc_expr *in = layout ? load4(b, P, AX(0), hy, wx, chan) : load4(b, P, AX(0), chan, hy, wx);
  pc_expr *wt = layout ? load4(b, Wt, AX(5), AX(6), AX(4), AX(ax_k)) : load4(b, Wt, AX(ax_k), AX(4), AX(5), AX(6));
  pc_set_body(b, O, MUL(in, wt));
  int args[3] = {I, Wt, O};
  double flops = 2.0 * (double)N * (double)K * (double)OH * (double)OW * (double)Cg * (double)R * (double)S;
  return pc_builder_finish(b, 3, args, flops, d);
}

static pc_program *build_conv2d_nchw(const int64_t *p, pt_diag *d) { return build_conv2d(p, 0, d); }
static pc_program *build_conv2d_nhwc(const int64_t *p, pt_diag *d) { return build_conv2d(p, 1, d); }

/* depthwise_conv2d_nchw: N C H W R S stride pad (channel multiplier 1). */
static pc_program *build_depthwise(const int64_t *p, pt_diag *d) {
  int64_t q[11] = {p[0], p[1], p[2], p[3], p[1], p[4], p[5], p[6], p[7], 1, p[1]};
  if (check_positive(p, 7, "depthwise_conv2d_nchw", d)) return NULL;
  pc_program *prog = build_conv2d(q, 0, d);
  if (prog) snprintf(prog->name, sizeof prog->name, "depthwise_conv2d_nchw");
  return prog;
}

/* pool2d NCHW: N C H W kernel stride pad; max: padded with the lowest float; avg: sum / count. */
static pc_program *build_pool(const int64_t *p, bool is_max, pt_diag *d) {
  const char *name = is_max ? "max_pool2d" : "avg_pool2d";
  if (check_positive(p, 6, name, d)) return NULL;
  int64_t N = p[0], C = p[1], H = p[2], W = p[3], Kk = p[4], st = p[5], pad = p[6];
  if (pad < 0 || pad >= Kk) {
    pt_fail(d, PT_ERR_INVALID, "%s: padding %lld must be below the kernel size %lld", name, (long long)pad, (long long)Kk);
    return NULL;
  }
  int64_t OH = (H + 2 * pad - Kk) / st + 1, OW = (W + 2 * pad - Kk) / st + 1;
  if (OH <= 0 || OW <= 0) {
    pt_fail(d, PT_ERR_INVALID, "%s: kernel larger than the padded input", name);
    return NULL;
  }
  pc_builder *b = pc_builder_new(name);
  int64_t sin[4] = {N, C, H, W}, spad[4] = {N, C, H + 2 * pad, W + 2 * pad}, sout[4] = {N, C, OH, OW}, red[2] = {Kk, Kk};
  int I = pc_placeholder(b, "data", 4, sin);
  const char *pn[] = {"ax0", "ax1", "ax2", "ax3"};
  int P = pc_compute(b, "pad_temp", 4, spad, 0, NULL, pn, PC_REDUCE_NONE);
  pc_expr *cond = pc_bin(b, PC_E_AND, in_range(b, AX(2), pad, pad + H), in_range(b, AX(3), pad, pad + W));
  pc_expr *src = load4(b, I, AX(0), AX(1), SUB(AX(2), CI(pad)), SUB(AX(3), CI(pad)));
  pc_set_body(b, P, pad > 0 ? pc_select(b, cond, src, pc_const_f(b, is_max ? -3.402823466e38 : 0.0)) : src);
  const char *on[] = {"ax0", "ax1", "ax2", "ax3", "rv0", "rv1"};
  int O = pc_compute(b, is_max ? "pool_max" : "pool_sum", 4, sout, 2, red, on, is_max ? PC_REDUCE_MAX : PC_REDUCE_SUM);
  pc_set_body(b, O, load4(b, P, AX(0), AX(1), ADD(MUL(AX(2), CI(st)), AX(4)), ADD(MUL(AX(3), CI(st)), AX(5))));
  int out = O;
  if (!is_max) {
    out = pc_compute(b, "pool_avg", 4, sout, 0, NULL, on, PC_REDUCE_NONE);
    /* count_include_pad: divide by the full window, as TOPI's default. */
    pc_set_body(b, out, pc_bin(b, PC_E_DIV, load4(b, O, AX(0), AX(1), AX(2), AX(3)), pc_const_f(b, (double)(Kk * Kk))));
  }
  int args[2] = {I, out};
  return pc_builder_finish(b, 2, args, (double)(N * C * OH * OW * Kk * Kk), d);
}

static pc_program *build_max_pool(const int64_t *p, pt_diag *d) { return build_pool(p, true, d); }
static pc_program *build_avg_pool(const int64_t *p, pt_diag *d) { return build_pool(p, false, d); }

/* softmax over the last axis of [N, M], as TOPI's four stages. */
static pc_program *build_softmax(const int64_t *p, pt_diag *d) {
  if (check_positive(p, 2, "softmax", d)) return NULL;
  int64_t N = p[0], M = p[1];
  pc_builder *b = pc_builder_new("softmax");
  int64_t sx[2] = {N, M}, sr[1] = {N}, red[1] = {M};
  const char *n2[] = {"i0", "i1"}, *n1r[] = {"i0", "k"};
  int X = pc_placeholder(b, "data", 2, sx);
  int mx = pc_compute(b, "T_softmax_maxelem", 1, sr, 1, red, n1r, PC_REDUCE_MAX);
  pc_set_body(b, mx, load2(b, X, AX(0), AX(1)));
  int ex = pc_compute(b, "T_softmax_exp", 2, sx, 0, NULL, n2, PC_REDUCE_NONE);
  pc_expr *i0 = AX(0);
  pc_set_body(b, ex, pc_un(b, PC_E_EXP, pc_bin(b, PC_E_SUB, load2(b, X, AX(0), AX(1)), pc_load(b, mx, 1, &i0))));
  int sm = pc_compute(b, "T_softmax_expsum", 1, sr, 1, red, n1r, PC_REDUCE_SUM);
  pc_set_body(b, sm, load2(b, ex, AX(0), AX(1)));
  int out = pc_compute(b, "T_softmax_norm", 2, sx, 0, NULL, n2, PC_REDUCE_NONE);
  i0 = AX(0);
  pc_set_body(b, out, pc_bin(b, PC_E_DIV, load2(b, ex, AX(0), AX(1)), pc_load(b, sm, 1, &i0)));
  int args[2] = {X, out};
  return pc_builder_finish(b, 2, args, 4.0 * (double)(N * M), d);
}

/* Capsule conv2d (Ansor's C2D capsule, NHWIJC): N H W C K R S stride pad capsule. Input
 * [N,H,W,cap,cap,C], weight [R,S,cap,cap,C,K], out [N,OH,OW,cap,cap,K]. */
static pc_program *build_capsule(const int64_t *p, pt_diag *d) {
  if (check_positive(p, 8, "capsule_conv2d", d)) return NULL;
  int64_t N = p[0], H = p[1], W = p[2], C = p[3], K = p[4], R = p[5], S = p[6], st = p[7], pad = p[8];
  int64_t cap = p[9] > 0 ? p[9] : 4;
  int64_t OH = (H + 2 * pad - R) / st + 1, OW = (W + 2 * pad - S) / st + 1;
  if (pad < 0 || OH <= 0 || OW <= 0) {
    pt_fail(d, PT_ERR_INVALID, "capsule_conv2d: bad padding or kernel size");
    return NULL;
  }
  pc_builder *b = pc_builder_new("capsule_conv2d");
  int64_t sin[6] = {N, H, W, cap, cap, C}, sw[6] = {R, S, cap, cap, C, K};
  int64_t spad[6] = {N, H + 2 * pad, W + 2 * pad, cap, cap, C}, sout[6] = {N, OH, OW, cap, cap, K};
  int64_t red[4] = {R, S, cap, C};
  int I = pc_placeholder(b, "inputs", 6, sin), Wt = pc_placeholder(b, "weight", 6, sw);
  const char *pn[] = {"i0", "i1", "i2", "i3", "i4", "i5"};
  int P = pc_compute(b, "pad_temp", 6, spad, 0, NULL, pn, PC_REDUCE_NONE);
  pc_expr *src_idx[6] = {AX(0), SUB(AX(1), CI(pad)), SUB(AX(2), CI(pad)), AX(3), AX(4), AX(5)};
  pc_expr *cond = pc_bin(b, PC_E_AND, in_range(b, AX(1), pad, pad + H), in_range(b, AX(2), pad, pad + W));
  pc_expr *src = pc_load(b, I, 6, src_idx);
  pc_set_body(b, P, pad > 0 ? pc_select(b, cond, src, pc_const_f(b, 0)) : src);
  const char *on[] = {"n", "h", "w", "cap_i", "cap_j", "co", "rh", "rw", "cap_k", "rc"};
  int O = pc_compute(b, "conv2d_capsule", 6, sout, 4, red, on, PC_REDUCE_SUM);
  pc_expr *in_idx[6] = {AX(0), ADD(MUL(AX(1), CI(st)), AX(6)), ADD(MUL(AX(2), CI(st)), AX(7)), AX(3), AX(8), AX(9)};
  pc_expr *w_idx[6] = {AX(6), AX(7), AX(8), AX(4), AX(9), AX(5)};
  pc_set_body(b, O, MUL(pc_load(b, P, 6, in_idx), pc_load(b, Wt, 6, w_idx)));
  int args[3] = {I, Wt, O};
  double flops = 2.0 * (double)(N * OH * OW * cap * cap * K) * (double)(R * S * cap * C);
  return pc_builder_finish(b, 3, args, flops, d);
}

static const workload workloads[] = {
    {{"matmul", "N L M", "C[N,M] = A[N,L] x B[L,M]"}, 3, 3, build_matmul},
    {{"matmul_relu", "N L M", "C[N,M] = relu(A[N,L] x B[L,M])"}, 3, 3, build_matmul_relu},
    {{"matmul_add", "N L M", "out = A[N,L] x B[L,M] + C[N,M] (TVM tutorial key)"}, 3, 3, build_matmul_add},
    {{"batch_matmul", "B N L M", "C[b,N,M] = A[b,N,L] x B[b,L,M]"}, 4, 4, build_batch_matmul},
    {{"dense", "N K M [bias relu]", "TOPI dense: out = data[N,K] x weight[M,K]^T (+bias) (relu)"}, 3, 5, build_dense},
    {{"conv2d_nchw", "N C H W K R S stride pad [dilation groups]", "conv2d, NCHW, padding stage"}, 9, 11, build_conv2d_nchw},
    {{"conv2d_nhwc", "N C H W K R S stride pad [dilation groups]", "conv2d, NHWC, padding stage"}, 9, 11, build_conv2d_nhwc},
    {{"depthwise_conv2d_nchw", "N C H W R S stride pad", "depthwise conv2d, multiplier 1"}, 8, 8, build_depthwise},
    {{"max_pool2d", "N C H W kernel stride pad", "max pooling, NCHW"}, 7, 7, build_max_pool},
    {{"avg_pool2d", "N C H W kernel stride pad", "average pooling, NCHW, count_include_pad"}, 7, 7, build_avg_pool},
    {{"softmax", "N M", "softmax over the last axis, four stages"}, 2, 2, build_softmax},
    {{"capsule_conv2d", "N H W C K R S stride pad [capsule]", "capsule conv2d (NHWIJC)"}, 9, 10, build_capsule},
};

static const struct {
  const char *name, *key;
} suite[] = {
    {"mm512", "[\"matmul\", 512, 512, 512, \"float32\"]"},
    {"mm1024", "[\"matmul\", 1024, 1024, 1024, \"float32\"]"},
    {"bert_qkv", "[\"matmul\", 128, 768, 2304, \"float32\"]"},
    {"bert_ffn1", "[\"matmul_relu\", 128, 768, 3072, \"float32\"]"},
    {"conv_r50_1", "[\"conv2d_nchw\", 1, 3, 224, 224, 64, 7, 7, 2, 3, 1, 1, \"float32\"]"},
    {"conv_r50_2", "[\"conv2d_nchw\", 1, 64, 56, 56, 64, 3, 3, 1, 1, 1, 1, \"float32\"]"},
    {"conv_r50_3", "[\"conv2d_nchw\", 1, 128, 28, 28, 128, 3, 3, 1, 1, 1, 1, \"float32\"]"},
    {"conv_r50_4", "[\"conv2d_nchw\", 1, 256, 14, 14, 256, 3, 3, 1, 1, 1, 1, \"float32\"]"},
    {"conv_r50_5", "[\"conv2d_nchw\", 1, 512, 7, 7, 512, 3, 3, 1, 1, 1, 1, \"float32\"]"},
    {"conv_pw", "[\"conv2d_nchw\", 1, 64, 56, 56, 256, 1, 1, 1, 0, 1, 1, \"float32\"]"},
    {"dwconv_mb", "[\"depthwise_conv2d_nchw\", 1, 32, 112, 112, 3, 3, 1, 1, \"float32\"]"},
};

int pc_workload_count(void) { return (int)PT_ARRAY_LEN(workloads); }
const pc_workload_info *pc_workload_at(int i) { return i >= 0 && i < pc_workload_count() ? &workloads[i].info : NULL; }
int pc_suite_count(void) { return (int)PT_ARRAY_LEN(suite); }
const char *pc_suite_name(int i) { return i >= 0 && i < pc_suite_count() ? suite[i].name : NULL; }
const char *pc_suite_key(int i) { return i >= 0 && i < pc_suite_count() ? suite[i].key : NULL; }

/* Canonical key text: ["name", p1, ..., "float32"]. */
static void make_key(char *out, size_t cap, const char *name, int n, const int64_t *p) {
  size_t len = (size_t)snprintf(out, cap, "[\"%s\"", name);
  for (int i = 0; i < n && len < cap; i++) len += (size_t)snprintf(out + len, cap - len, ", %lld", (long long)p[i]);
  if (len < cap) snprintf(out + len, cap - len, ", \"float32\"]");
}

static pc_program *build_named(const char *name, int n, const int64_t *params, const char *spec, pt_diag *d) {
  for (size_t w = 0; w < PT_ARRAY_LEN(workloads); w++) {
    if (strcmp(workloads[w].info.name, name) != 0) continue;
    if (n < workloads[w].n_required || n > workloads[w].n_params) {
      pt_fail(d, PT_ERR_INPUT, "workload '%s': %s takes parameters %s (%d given)", spec, name,
              workloads[w].info.params, n);
      return NULL;
    }
    int64_t p[MAXP] = {0};
    memcpy(p, params, sizeof(int64_t) * (size_t)n);
    pc_program *prog = workloads[w].build(p, d);
    if (prog) make_key(prog->key, sizeof prog->key, name, n, params);
    if (!prog) pt_fail(d, PT_ERR_INVALID, "(workload '%s')", spec);
    return prog;
  }
  pt_fail(d, PT_ERR_INPUT, "workload '%s': unknown operator '%s' (portent workloads lists them)", spec, name);
  return NULL;
}

/* ["name", ints or [a, a] pairs ..., "float32"] */
static pc_program *build_from_key(const char *spec, pt_diag *d) {
  cJSON *j = cJSON_Parse(spec);
  if (!j || !cJSON_IsArray(j) || !cJSON_IsString(cJSON_GetArrayItem(j, 0))) {
    cJSON_Delete(j);
    pt_fail(d, PT_ERR_INPUT, "workload key '%s': expected a JSON array [\"name\", parameters...]", spec);
    return NULL;
  }
  const char *name = cJSON_GetArrayItem(j, 0)->valuestring;
  int64_t p[MAXP];
  int n = 0;
  int count = cJSON_GetArraySize(j);
  for (int i = 1; i < count; i++) {
    cJSON *it = cJSON_GetArrayItem(j, i);
    if (cJSON_IsString(it)) {
      if (i == count - 1 && strcmp(it->valuestring, "float32") == 0) break;
      pt_fail(d, PT_ERR_INPUT, "workload key '%s': element %d: unsupported \"%s\" (only float32)", spec, i, it->valuestring);
      goto fail;
    }
    if (cJSON_IsArray(it) && cJSON_GetArraySize(it) >= 1) {
      /* TVM keys give stride/padding as pairs; portent's workloads take one value. */
      cJSON *a = cJSON_GetArrayItem(it, 0);
      for (int k = 1; k < cJSON_GetArraySize(it); k++)
        if (!cJSON_IsNumber(cJSON_GetArrayItem(it, k)) || cJSON_GetArrayItem(it, k)->valuedouble != a->valuedouble) {
          pt_fail(d, PT_ERR_UNSUPPORTED, "workload key '%s': element %d: asymmetric pairs are not supported", spec, i);
          goto fail;
        }
      it = a;
    }
    if (!cJSON_IsNumber(it) || it->valuedouble != (double)(int64_t)it->valuedouble || n >= MAXP) {
      pt_fail(d, PT_ERR_INPUT, "workload key '%s': element %d is not an integer", spec, i);
      goto fail;
    }
    p[n++] = (int64_t)it->valuedouble;
  }
  pc_program *prog = build_named(name, n, p, spec, d);
  if (prog) snprintf(prog->key, sizeof prog->key, "%s", spec);
  cJSON_Delete(j);
  return prog;
fail:
  cJSON_Delete(j);
  return NULL;
}

/* name:p1,p2,... */
static pc_program *build_from_colon(const char *spec, pt_diag *d) {
  const char *colon = strchr(spec, ':');
  char name[64];
  size_t len = (size_t)(colon - spec);
  if (len >= sizeof name) len = sizeof name - 1;
  memcpy(name, spec, len);
  name[len] = 0;
  int64_t p[MAXP];
  int n = 0;
  const char *s = colon + 1;
  while (*s) {
    char *end;
    long long v = strtoll(s, &end, 10);
    if (end == s || n >= MAXP || (*end && *end != ',')) {
      pt_fail(d, PT_ERR_INPUT, "workload '%s': column %d: expected an integer", spec, (int)(s - spec) + 1);
      return NULL;
    }
    p[n++] = v;
    s = *end ? end + 1 : end;
  }
  return build_named(name, n, p, spec, d);
}

pc_program *pc_workload_build(const char *spec, pt_diag *d) {
  if (!spec || !*spec) {
    pt_fail(d, PT_ERR_INPUT, "empty workload name");
    return NULL;
  }
  for (size_t i = 0; i < PT_ARRAY_LEN(suite); i++)
    if (strcmp(spec, suite[i].name) == 0) {
      pc_program *p = build_from_key(suite[i].key, d);
      if (p) snprintf(p->name, sizeof p->name, "%s", suite[i].name);
      return p;
    }
  if (spec[0] == '[') return build_from_key(spec, d);
  if (strchr(spec, ':')) return build_from_colon(spec, d);
  pt_fail(d, PT_ERR_INPUT, "workload '%s': not a suite name, a key [\"name\", ...] or name:p1,p2,...", spec);
  return NULL;
}
