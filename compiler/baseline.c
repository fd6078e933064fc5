/* Reference libraries timed on the same inputs as portent's kernels, for benchmark ratios:
 * OpenBLAS cblas_sgemm (conv2d as im2col + sgemm) and oneDNN's matmul and convolution
 * primitives (layouts chosen by oneDNN, with the reorders from and to the user's plain
 * layout counted, and the native-layout time beside it). */
#include <cblas.h>
#include <cjson/cJSON.h>
#include <oneapi/dnnl/dnnl.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

void omp_set_num_threads(int n); /* libgomp: oneDNN's threading runtime on Debian */
void openblas_set_num_threads(int n);
char *openblas_get_corename(void);

typedef struct {
  char op[32];
  int n;
  int64_t p[16];
} key_params;

static int parse_key(const pc_program *prog, key_params *k, pt_diag *d) {
  cJSON *j = cJSON_Parse(prog->key);
  memset(k, 0, sizeof *k);
  if (!j || !cJSON_IsArray(j) || !cJSON_IsString(cJSON_GetArrayItem(j, 0))) {
    cJSON_Delete(j);
    return pt_fail(d, PT_ERR_UNSUPPORTED, "%s: no workload key to build a baseline from", prog->name);
  }
  snprintf(k->op, sizeof k->op, "%s", cJSON_GetArrayItem(j, 0)->valuestring);
  for (int i = 1; i < cJSON_GetArraySize(j) && k->n < 16; i++) {
    cJSON *it = cJSON_GetArrayItem(j, i);
    if (cJSON_IsArray(it)) it = cJSON_GetArrayItem(it, 0);
    if (cJSON_IsNumber(it)) k->p[k->n++] = (int64_t)it->valuedouble;
  }
  cJSON_Delete(j);
  return 0;
}

typedef struct {
  int64_t N, C, H, W, K, R, S, stride, pad, OH, OW;
} conv_shape;

static bool conv_of(const key_params *k, conv_shape *c) {
  if (strcmp(k->op, "conv2d_nchw") != 0 || k->n < 9 || (k->n > 9 && k->p[9] > 1) || (k->n > 10 && k->p[10] > 1))
    return false;
  c->N = k->p[0], c->C = k->p[1], c->H = k->p[2], c->W = k->p[3], c->K = k->p[4], c->R = k->p[5], c->S = k->p[6];
  c->stride = k->p[7], c->pad = k->p[8];
  c->OH = (c->H + 2 * c->pad - c->R) / c->stride + 1;
  c->OW = (c->W + 2 * c->pad - c->S) / c->stride + 1;
  return true;
}

static bool matmul_of(const key_params *k, int64_t *N, int64_t *L, int64_t *M) {
  if ((strcmp(k->op, "matmul") && strcmp(k->op, "matmul_relu") && strcmp(k->op, "matmul_add")) || k->n < 3) return false;
  *N = k->p[0], *L = k->p[1], *M = k->p[2];
  return true;
}

static float *random_floats(int64_t n, uint64_t seed) {
  float *x = malloc((size_t)n * sizeof(float));
  pt_rng r = {seed};
  for (int64_t i = 0; i < n; i++) x[i] = (float)(2 * pt_rng_uniform(&r) - 1);
  return x;
}

static int cmp_d(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

/* Median of repeated calls after one warm-up, until min_time has been spent; timed by the
 * clock the candidates of the same thread count use (pc_measure_clock). */
typedef void (*run_fn)(void *ctx);
static double time_median(run_fn f, void *ctx, double min_time, pc_clock_fn now) {
  double t[512], total = 0;
  int n = 0;
  f(ctx);
  while (n < 512 && (total < min_time || n < 3)) {
    double t0 = now();
    f(ctx);
    t[n] = now() - t0;
    total += t[n++];
  }
  qsort(t, (size_t)n, sizeof(double), cmp_d);
  return t[n / 2];
}

typedef struct {
  int64_t N, L, M;
  float *A, *B, *C;
  bool relu;
  conv_shape cv;
  float *col;
} blas_job;

static void run_sgemm(void *ctx) {
  blas_job *j = ctx;
  cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, (int)j->N, (int)j->M, (int)j->L, 1.0f, j->A, (int)j->L, j->B,
              (int)j->M, 0.0f, j->C, (int)j->M);
  if (j->relu)
    for (int64_t i = 0; i < j->N * j->M; i++) j->C[i] = j->C[i] > 0 ? j->C[i] : 0;
}

/* conv2d NCHW as im2col (the [C*R*S, OH*OW] patch matrix) + sgemm, per image. */
static void run_im2col(void *ctx) {
  blas_job *j = ctx;
  const conv_shape *c = &j->cv;
  int64_t P = c->OH * c->OW, CRS = c->C * c->R * c->S;
  for (int64_t n = 0; n < c->N; n++) {
    const float *x = j->A + n * c->C * c->H * c->W;
    for (int64_t ch = 0; ch < c->C; ch++)
      for (int64_t r = 0; r < c->R; r++)
        for (int64_t s = 0; s < c->S; s++) {
          float *row = j->col + ((ch * c->R + r) * c->S + s) * P;
          for (int64_t oy = 0; oy < c->OH; oy++) {
            int64_t h = oy * c->stride + r - c->pad;
            for (int64_t ox = 0; ox < c->OW; ox++) {
              int64_t w = ox * c->stride + s - c->pad;
              row[oy * c->OW + ox] = h >= 0 && h < c->H && w >= 0 && w < c->W ? x[(ch * c->H + h) * c->W + w] : 0.0f;
            }
          }
        }
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, (int)c->K, (int)P, (int)CRS, 1.0f, j->B, (int)CRS, j->col,
                (int)P, 0.0f, j->C + n * c->K * P, (int)P);
  }
}

const char *pc_baseline_openblas_core(void) { return openblas_get_corename(); }

int pc_baseline_openblas(const pc_program *prog, int threads, double min_time, bool cpu_clock, double *seconds,
                         pt_diag *d) {
  key_params k;
  int rc = parse_key(prog, &k, d);
  if (rc) return rc;
  openblas_set_num_threads(threads);
  blas_job j = {0};
  if (matmul_of(&k, &j.N, &j.L, &j.M)) {
    j.relu = strcmp(k.op, "matmul_relu") == 0;
    j.A = random_floats(j.N * j.L, 1), j.B = random_floats(j.L * j.M, 2), j.C = random_floats(j.N * j.M, 3);
    *seconds = time_median(run_sgemm, &j, min_time, pc_measure_clock(cpu_clock, threads));
  } else if (conv_of(&k, &j.cv)) {
    conv_shape *c = &j.cv;
    j.A = random_floats(c->N * c->C * c->H * c->W, 1), j.B = random_floats(c->K * c->C * c->R * c->S, 2);
    j.C = random_floats(c->N * c->K * c->OH * c->OW, 3), j.col = random_floats(c->C * c->R * c->S * c->OH * c->OW, 4);
    *seconds = time_median(run_im2col, &j, min_time, pc_measure_clock(cpu_clock, threads));
  } else
    return pt_fail(d, PT_ERR_UNSUPPORTED, "%s: no OpenBLAS baseline for %s", prog->name, k.op);
  free(j.A), free(j.B), free(j.C), free(j.col);
  return 0;
}

/* ---------------------------------------------------------------- oneDNN */

#define DN(call)                                                                   \
  do {                                                                             \
    dnnl_status_t st_ = (call);                                                    \
    if (st_ != dnnl_success) {                                                     \
      rc = pt_fail(d, PT_ERR_RUNTIME, "oneDNN: %s failed (status %d)", #call, st_); \
      goto done;                                                                   \
    }                                                                              \
  } while (0)

typedef struct {
  dnnl_stream_t stream;
  dnnl_primitive_t prim, reorder_in[2], reorder_out;
  int n_args;
  dnnl_exec_arg_t args[4];
  dnnl_exec_arg_t rin_args[2][2], rout_args[2];
  bool with_reorders;
} dnnl_job;

static void run_dnnl(void *ctx) {
  dnnl_job *j = ctx;
  if (j->with_reorders)
    for (int i = 0; i < 2; i++)
      if (j->reorder_in[i]) dnnl_primitive_execute(j->reorder_in[i], j->stream, 2, j->rin_args[i]);
  dnnl_primitive_execute(j->prim, j->stream, j->n_args, j->args);
  if (j->with_reorders && j->reorder_out) dnnl_primitive_execute(j->reorder_out, j->stream, 2, j->rout_args);
  dnnl_stream_wait(j->stream);
}

/* Memory in the layout the primitive chose, and a reorder from/to the user's plain one. */
static dnnl_status_t plain_and_chosen(dnnl_engine_t eng, const dnnl_memory_desc_t *user_md, const dnnl_memory_desc_t *chosen,
                                      bool to_chosen, dnnl_memory_t *user, dnnl_memory_t *mem, dnnl_primitive_t *reorder,
                                      dnnl_exec_arg_t args[2]) {
  dnnl_status_t s = dnnl_memory_create(user, user_md, eng, DNNL_MEMORY_ALLOCATE);
  if (s != dnnl_success) return s;
  *reorder = NULL;
  if (dnnl_memory_desc_equal(user_md, chosen)) {
    *mem = *user;
    return dnnl_success;
  }
  if ((s = dnnl_memory_create(mem, chosen, eng, DNNL_MEMORY_ALLOCATE)) != dnnl_success) return s;
  dnnl_primitive_desc_t rpd;
  s = to_chosen ? dnnl_reorder_primitive_desc_create(&rpd, user_md, eng, chosen, eng, NULL)
                : dnnl_reorder_primitive_desc_create(&rpd, chosen, eng, user_md, eng, NULL);
  if (s != dnnl_success) return s;
  s = dnnl_primitive_create(reorder, rpd);
  dnnl_primitive_desc_destroy(rpd);
  args[0].arg = DNNL_ARG_FROM;
  args[0].memory = to_chosen ? *user : *mem;
  args[1].arg = DNNL_ARG_TO;
  args[1].memory = to_chosen ? *mem : *user;
  return s;
}

int pc_baseline_onednn(const pc_program *prog, int threads, double min_time, bool cpu_clock, double *with_reorders,
                       double *native,
                       pt_diag *d) {
  key_params k;
  int rc = parse_key(prog, &k, d);
  if (rc) return rc;
  omp_set_num_threads(threads);
  int64_t N, L, M;
  conv_shape c;
  bool is_mm = matmul_of(&k, &N, &L, &M), is_conv = !is_mm && conv_of(&k, &c);
  if (!is_mm && !is_conv) return pt_fail(d, PT_ERR_UNSUPPORTED, "%s: no oneDNN baseline for %s", prog->name, k.op);
  dnnl_engine_t eng = NULL;
  dnnl_primitive_desc_t pd = NULL;
  dnnl_memory_t users[3] = {0}, mems[3] = {0};
  dnnl_job j = {0};
  DN(dnnl_engine_create(&eng, dnnl_cpu, 0));
  DN(dnnl_stream_create(&j.stream, eng, dnnl_stream_default_flags));
  dnnl_memory_desc_t user_md[3], any_md[3];
  if (is_mm) {
    dnnl_dims_t a = {N, L}, b = {L, M}, cdims = {N, M};
    DN(dnnl_memory_desc_init_by_tag(&user_md[0], 2, a, dnnl_f32, dnnl_ab));
    DN(dnnl_memory_desc_init_by_tag(&user_md[1], 2, b, dnnl_f32, dnnl_ab));
    DN(dnnl_memory_desc_init_by_tag(&user_md[2], 2, cdims, dnnl_f32, dnnl_ab));
    DN(dnnl_memory_desc_init_by_tag(&any_md[0], 2, a, dnnl_f32, dnnl_format_tag_any));
    DN(dnnl_memory_desc_init_by_tag(&any_md[1], 2, b, dnnl_f32, dnnl_format_tag_any));
    DN(dnnl_memory_desc_init_by_tag(&any_md[2], 2, cdims, dnnl_f32, dnnl_format_tag_any));
    dnnl_matmul_desc_t md;
    DN(dnnl_matmul_desc_init(&md, &any_md[0], &any_md[1], NULL, &any_md[2]));
    DN(dnnl_primitive_desc_create(&pd, &md, NULL, eng, NULL));
  } else {
    dnnl_dims_t src = {c.N, c.C, c.H, c.W}, wei = {c.K, c.C, c.R, c.S}, dst = {c.N, c.K, c.OH, c.OW};
    dnnl_dims_t strides = {c.stride, c.stride}, pad = {c.pad, c.pad};
    DN(dnnl_memory_desc_init_by_tag(&user_md[0], 4, src, dnnl_f32, dnnl_nchw));
    DN(dnnl_memory_desc_init_by_tag(&user_md[1], 4, wei, dnnl_f32, dnnl_oihw));
    DN(dnnl_memory_desc_init_by_tag(&user_md[2], 4, dst, dnnl_f32, dnnl_nchw));
    DN(dnnl_memory_desc_init_by_tag(&any_md[0], 4, src, dnnl_f32, dnnl_format_tag_any));
    DN(dnnl_memory_desc_init_by_tag(&any_md[1], 4, wei, dnnl_f32, dnnl_format_tag_any));
    DN(dnnl_memory_desc_init_by_tag(&any_md[2], 4, dst, dnnl_f32, dnnl_format_tag_any));
    dnnl_convolution_desc_t cd;
    DN(dnnl_convolution_forward_desc_init(&cd, dnnl_forward_inference, dnnl_convolution_direct, &any_md[0], &any_md[1],
                                          NULL, &any_md[2], strides, pad, pad));
    DN(dnnl_primitive_desc_create(&pd, &cd, NULL, eng, NULL));
  }
  DN(dnnl_primitive_create(&j.prim, pd));
  static const int arg_ids[3] = {DNNL_ARG_SRC, DNNL_ARG_WEIGHTS, DNNL_ARG_DST};
  static const dnnl_query_t queries[3] = {dnnl_query_src_md, dnnl_query_weights_md, dnnl_query_dst_md};
  for (int i = 0; i < 3; i++) {
    const dnnl_memory_desc_t *chosen = dnnl_primitive_desc_query_md(pd, queries[i], 0);
    dnnl_primitive_t *re = i < 2 ? &j.reorder_in[i] : &j.reorder_out;
    DN(plain_and_chosen(eng, &user_md[i], chosen, i < 2, &users[i], &mems[i], re, i < 2 ? j.rin_args[i] : j.rout_args));
    j.args[i].arg = arg_ids[i];
    j.args[i].memory = mems[i];
  }
  j.n_args = 3;
  j.with_reorders = true;
  *with_reorders = time_median(run_dnnl, &j, min_time, pc_measure_clock(cpu_clock, threads));
  j.with_reorders = false;
  *native = time_median(run_dnnl, &j, min_time, pc_measure_clock(cpu_clock, threads));
done:
  for (int i = 0; i < 3; i++) {
    if (mems[i] && mems[i] != users[i]) dnnl_memory_destroy(mems[i]);
    if (users[i]) dnnl_memory_destroy(users[i]);
  }
  for (int i = 0; i < 2; i++)
    if (j.reorder_in[i]) dnnl_primitive_destroy(j.reorder_in[i]);
  if (j.reorder_out) dnnl_primitive_destroy(j.reorder_out);
  if (j.prim) dnnl_primitive_destroy(j.prim);
  if (pd) dnnl_primitive_desc_destroy(pd);
  if (j.stream) dnnl_stream_destroy(j.stream);
  if (eng) dnnl_engine_destroy(eng);
  return rc;
}
