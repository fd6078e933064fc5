/* GPU probes through the CUDA driver API, opened at run time (dlopen), so portent builds and
 * runs without CUDA and says clearly why --gpu cannot be honoured. Kernels are PTX text the
 * driver compiles for the device: an empty kernel (launch round trip), a grid-stride copy
 * (device memory bandwidth) and independent FMA chains (FP32 throughput); pinned host memory
 * for host<->device copies. Enum values and entry-point names: CUDA 13 cuda.h. */
#include <dlfcn.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "internal.h"

typedef int CUresult;
typedef int CUdevice;
typedef void *CUcontext, *CUmodule, *CUfunction;
typedef unsigned long long CUdeviceptr;
enum { /* CUdevice_attribute */
  ATTR_CLOCK_RATE = 13,
  ATTR_SM_COUNT = 16,
  ATTR_MEMORY_CLOCK_RATE = 36,
  ATTR_MEMORY_BUS_WIDTH = 37,
  ATTR_L2_SIZE = 38,
  ATTR_CC_MAJOR = 75,
  ATTR_CC_MINOR = 76,
};

typedef struct {
  void *lib;
  CUresult (*init)(unsigned);
  CUresult (*device_count)(int *);
  CUresult (*device_get)(CUdevice *, int);
  CUresult (*device_name)(char *, int, CUdevice);
  CUresult (*device_attr)(int *, int, CUdevice);
  CUresult (*total_mem)(size_t *, CUdevice);
  CUresult (*ctx_retain)(CUcontext *, CUdevice);
  CUresult (*ctx_release)(CUdevice);
  CUresult (*ctx_set)(CUcontext);
  CUresult (*sync)(void);
  CUresult (*module_load)(CUmodule *, const void *);
  CUresult (*module_unload)(CUmodule);
  CUresult (*get_function)(CUfunction *, CUmodule, const char *);
  CUresult (*launch)(CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, void *, void **, void **);
  CUresult (*mem_alloc)(CUdeviceptr *, size_t);
  CUresult (*mem_free)(CUdeviceptr);
  CUresult (*host_alloc)(void **, size_t);
  CUresult (*host_free)(void *);
  CUresult (*htod)(CUdeviceptr, const void *, size_t);
  CUresult (*dtoh)(void *, CUdeviceptr, size_t);
} cuda_api;

/* The driver's entry points; versioned names first (cuda.h #defines the plain ones to them). */
static bool load_api(cuda_api *a) {
  memset(a, 0, sizeof *a);
  if (!(a->lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL))) return false;
#define SYM(field, ...)                                                                         \
  do {                                                                                          \
    const char *names[] = {__VA_ARGS__};                                                        \
    for (size_t i = 0; i < PT_ARRAY_LEN(names) && !a->field; i++) *(void **)&a->field = dlsym(a->lib, names[i]); \
    if (!a->field) return false;                                                                \
  } while (0)
  SYM(init, "cuInit");
  SYM(device_count, "cuDeviceGetCount");
  SYM(device_get, "cuDeviceGet");
  SYM(device_name, "cuDeviceGetName");
  SYM(device_attr, "cuDeviceGetAttribute");
  SYM(total_mem, "cuDeviceTotalMem_v2", "cuDeviceTotalMem");
  SYM(ctx_retain, "cuDevicePrimaryCtxRetain");
  SYM(ctx_release, "cuDevicePrimaryCtxRelease_v2", "cuDevicePrimaryCtxRelease");
  SYM(ctx_set, "cuCtxSetCurrent");
  SYM(sync, "cuCtxSynchronize");
  SYM(module_load, "cuModuleLoadData");
  SYM(module_unload, "cuModuleUnload");
  SYM(get_function, "cuModuleGetFunction");
  SYM(launch, "cuLaunchKernel");
  SYM(mem_alloc, "cuMemAlloc_v2", "cuMemAlloc");
  SYM(mem_free, "cuMemFree_v2", "cuMemFree");
  SYM(host_alloc, "cuMemAllocHost_v2", "cuMemAllocHost");
  SYM(host_free, "cuMemFreeHost");
  SYM(htod, "cuMemcpyHtoD_v2", "cuMemcpyHtoD");
  SYM(dtoh, "cuMemcpyDtoH_v2", "cuMemcpyDtoH");
#undef SYM
  return true;
}

/* sm_50 PTX runs on every GPU the driver supports (it JIT-compiles for the device). */
static const char ptx[] =
    ".version 6.0\n"
    ".target sm_50\n"
    ".address_size 64\n"
    "\n"
    ".visible .entry pt_empty()\n"
    "{\n"
    "  ret;\n"
    "}\n"
    "\n"
    "// dst[i] = src[i] for 16-byte elements i < n, grid-stride loop\n"
    ".visible .entry pt_copy(.param .u64 dst, .param .u64 src, .param .u64 n)\n"
    "{\n"
    "  .reg .pred %p<2>;\n"
    "  .reg .b32 %r<6>;\n"
    "  .reg .f32 %f<4>;\n"
    "  .reg .b64 %rd<10>;\n"
    "  ld.param.u64 %rd1, [dst];\n"
    "  ld.param.u64 %rd2, [src];\n"
    "  ld.param.u64 %rd3, [n];\n"
    "  cvta.to.global.u64 %rd1, %rd1;\n"
    "  cvta.to.global.u64 %rd2, %rd2;\n"
    "  mov.u32 %r1, %ctaid.x;\n"
    "  mov.u32 %r2, %ntid.x;\n"
    "  mov.u32 %r3, %tid.x;\n"
    "  mov.u32 %r4, %nctaid.x;\n"
    "  mad.lo.s32 %r5, %r1, %r2, %r3;\n"
    "  cvt.u64.u32 %rd4, %r5;\n"
    "  mul.wide.u32 %rd5, %r2, %r4;\n"
    "LOOP:\n"
    "  setp.ge.u64 %p1, %rd4, %rd3;\n"
    "  @%p1 bra DONE;\n"
    "  shl.b64 %rd6, %rd4, 4;\n"
    "  add.s64 %rd7, %rd2, %rd6;\n"
    "  ld.global.v4.f32 {%f0, %f1, %f2, %f3}, [%rd7];\n"
    "  add.s64 %rd8, %rd1, %rd6;\n"
    "  st.global.v4.f32 [%rd8], {%f0, %f1, %f2, %f3};\n"
    "  add.s64 %rd4, %rd4, %rd5;\n"
    "  bra LOOP;\n"
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
#define FMA8                                  \
  "  fma.rn.f32 %f0, %f0, %f8, %f9;\n"        \
  "  fma.rn.f32 %f1, %f1, %f8, %f9;\n"        \
  "  fma.rn.f32 %f2, %f2, %f8, %f9;\n"        \
  "  fma.rn.f32 %f3, %f3, %f8, %f9;\n"        \
  "  fma.rn.f32 %f4, %f4, %f8, %f9;\n"        \
  "  fma.rn.f32 %f5, %f5, %f8, %f9;\n"        \
  "  fma.rn.f32 %f6, %f6, %f8, %f9;\n"        \
  "  fma.rn.f32 %f7, %f7, %f8, %f9;\n"
    FMA8 FMA8 FMA8 FMA8 FMA8 FMA8 FMA8 FMA8
#undef FMA8
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
    "}\n";

const char *pmb_gpu_ptx(void) { return ptx; }

/* FMAs per thread per iteration of pt_fma's loop: 8 chains x 8 unrolled. */
#define FMA_PER_ITER 64

int pmb_gpu_probe(char *desc, size_t n, pt_diag *d) {
  cuda_api a;
  if (!load_api(&a)) {
    if (a.lib) dlclose(a.lib);
    return pt_fail(d, PT_ERR_UNSUPPORTED, "no GPU: the CUDA driver (libcuda.so.1) is not installed on this machine");
  }
  int devices = 0, rc = a.init(0);
  if (rc == 0) rc = a.device_count(&devices);
  if (rc == 0 && devices > 0) {
    CUdevice dev;
    char name[128] = "?";
    if (a.device_get(&dev, 0) == 0) a.device_name(name, sizeof name, dev);
    snprintf(desc, n, "%s (%d device(s))", name, devices);
  }
  dlclose(a.lib);
  if (rc != 0) return pt_fail(d, PT_ERR_UNSUPPORTED, "no GPU: the CUDA driver fails to initialize (CUDA error %d)", rc);
  if (devices == 0) return pt_fail(d, PT_ERR_UNSUPPORTED, "no GPU: the CUDA driver reports no devices");
  return PT_OK;
}

#define TIMING_FAILED(what)                                                          \
  do {                                                                               \
    err = pt_fail(d, PT_ERR_RUNTIME, "GPU: running the %s failed", what);            \
    goto done;                                                                       \
  } while (0)

#define CU(call)                                                                      \
  do {                                                                                \
    CUresult r_ = (call);                                                             \
    if (r_ != 0) {                                                                    \
      err = pt_fail(d, PT_ERR_RUNTIME, "GPU: %s failed with CUDA error %d", #call, r_); \
      goto done;                                                                      \
    }                                                                                 \
  } while (0)

/* Best of reps: seconds for fn(ctx) including a final synchronize. */
typedef struct {
  cuda_api *a;
  CUfunction f;
  unsigned grid, block;
  void **params;
  CUdeviceptr dst;
  void *host;
  size_t bytes;
  int what; /* 0 launch, 1 kernel, 2 htod, 3 dtoh */
} gpu_job;

static int run_once(gpu_job *j) {
  switch (j->what) {
  case 0:
  case 1:
    if (j->a->launch(j->f, j->grid, 1, 1, j->block, 1, 1, 0, NULL, j->params, NULL)) return -1;
    break;
  case 2: return j->a->htod(j->dst, j->host, j->bytes) ? -1 : 0;
  case 3: return j->a->dtoh(j->host, j->dst, j->bytes) ? -1 : 0;
  }
  return j->a->sync() ? -1 : 0;
}

static int time_job(gpu_job *j, int reps, pmb_stats *out) {
  double v[64];
  if (reps > 64) reps = 64;
  if (run_once(j) < 0) return -1; /* warm up: module load, first-touch */
  for (int r = 0; r < reps; r++) {
    double t0 = pt_now();
    if (run_once(j) < 0) return -1;
    v[r] = pt_now() - t0;
  }
  *out = pmb_stats_of(v, reps);
  return 0;
}

static ptg_figure rate(pmb_stats s, double amount) {
  /* amount / seconds: the fastest repetition is the best estimate */
  return (ptg_figure){.value = amount / s.min, .spread = s.spread, .reps = s.reps, .source = NULL};
}

int pmb_measure_gpu(pmb_ctx *c, pt_diag *d) {
  cuda_api a;
  ptg_gpu *g = &c->t->gpu;
  CUdevice dev = 0;
  CUcontext ctx = NULL;
  CUmodule mod = NULL;
  CUdeviceptr src = 0, dst = 0, out = 0;
  void *host = NULL;
  int err = PT_OK;
  bool retained = false;
  if (!load_api(&a)) {
    if (a.lib) dlclose(a.lib);
    return pt_fail(d, PT_ERR_UNSUPPORTED, "no GPU: the CUDA driver (libcuda.so.1) is not installed on this machine");
  }
  CU(a.init(0));
  CU(a.device_get(&dev, 0));
  char name[128];
  CU(a.device_name(name, sizeof name, dev));
  int sms = 0, clock_khz = 0, mem_khz = 0, bus = 0, l2 = 0, major = 0, minor = 0;
  CU(a.device_attr(&sms, ATTR_SM_COUNT, dev));
  a.device_attr(&clock_khz, ATTR_CLOCK_RATE, dev); /* informational: may be unsupported */
  a.device_attr(&mem_khz, ATTR_MEMORY_CLOCK_RATE, dev);
  a.device_attr(&bus, ATTR_MEMORY_BUS_WIDTH, dev);
  a.device_attr(&l2, ATTR_L2_SIZE, dev);
  a.device_attr(&major, ATTR_CC_MAJOR, dev);
  a.device_attr(&minor, ATTR_CC_MINOR, dev);
  size_t total = 0;
  CU(a.total_mem(&total, dev));
  g->present = true;
  g->name = pt_strdup(c->t->arena, name);
  g->compute_capability = pt_sprintf(c->t->arena, "%d.%d", major, minor);
  g->sms = sms;
  g->clock_ghz = clock_khz > 0 ? clock_khz * 1e-6 : NAN;
  g->memory_clock_ghz = mem_khz > 0 ? mem_khz * 1e-6 : NAN;
  g->memory_bus_bits = bus;
  g->l2_bytes = l2;
  g->memory_bytes = (int64_t)total;
  g->source = "CUDA driver API attributes; PTX kernels timed with cuCtxSynchronize";
  pmb_progress(c, "gpu: %s, %d SMs, compute %d.%d", name, sms, major, minor);

  CU(a.ctx_retain(&ctx, dev));
  retained = true;
  CU(a.ctx_set(ctx));
  CU(a.module_load(&mod, ptx));
  CUfunction f_empty, f_copy, f_fma;
  CU(a.get_function(&f_empty, mod, "pt_empty"));
  CU(a.get_function(&f_copy, mod, "pt_copy"));
  CU(a.get_function(&f_fma, mod, "pt_fma"));
  int reps = c->reps;
  pmb_stats s;

  gpu_job launch = {.a = &a, .f = f_empty, .grid = 1, .block = 1, .what = 0};
  if (time_job(&launch, reps * 4, &s) < 0) TIMING_FAILED("empty kernel");
  g->launch_us = (ptg_figure){.value = s.min * 1e6, .spread = s.spread, .reps = s.reps};

  /* device copy: a quarter of memory at most, 1 GiB per buffer at most */
  size_t bytes = total / 8 < ((size_t)1 << 30) ? total / 8 : ((size_t)1 << 30);
  bytes &= ~(size_t)15;
  CU(a.mem_alloc(&src, bytes));
  CU(a.mem_alloc(&dst, bytes));
  unsigned long long n16 = bytes / 16;
  void *copy_params[3] = {&dst, &src, &n16};
  gpu_job copy = {.a = &a, .f = f_copy, .grid = (unsigned)sms * 8, .block = 256, .params = copy_params, .what = 1};
  if (time_job(&copy, reps, &s) < 0) TIMING_FAILED("copy kernel");
  g->memory_bandwidth_gbs = rate(s, 2.0 * (double)bytes / 1e9);

  /* host <-> device, pinned; 256 MiB or the copy buffer, whichever is smaller */
  size_t hbytes = bytes < ((size_t)256 << 20) ? bytes : ((size_t)256 << 20);
  CU(a.host_alloc(&host, hbytes));
  memset(host, 1, hbytes);
  gpu_job h2d = {.a = &a, .dst = dst, .host = host, .bytes = hbytes, .what = 2};
  if (time_job(&h2d, reps, &s) < 0) TIMING_FAILED("host-to-device copy");
  g->h2d_gbs = rate(s, (double)hbytes / 1e9);
  gpu_job d2h = {.a = &a, .dst = dst, .host = host, .bytes = hbytes, .what = 3};
  if (time_job(&d2h, reps, &s) < 0) TIMING_FAILED("device-to-host copy");
  g->d2h_gbs = rate(s, (double)hbytes / 1e9);

  /* FP32: enough threads to fill every SM (2048 resident threads per SM on recent GPUs) */
  unsigned block = 256, grid = (unsigned)sms * 8;
  CU(a.mem_alloc(&out, (size_t)grid * block * 4));
  unsigned iters = c->o->quick ? 2000 : 20000;
  void *fma_params[2] = {&out, &iters};
  gpu_job fma = {.a = &a, .f = f_fma, .grid = grid, .block = block, .params = fma_params, .what = 1};
  if (time_job(&fma, reps, &s) < 0) TIMING_FAILED("FMA kernel");
  double flops = 2.0 * FMA_PER_ITER * (double)iters * grid * block;
  g->fp32_tflops = rate(s, flops / 1e12);
  pmb_progress(c, "gpu: launch %.1f us, device copy %.0f GB/s, h2d %.1f GB/s, d2h %.1f GB/s, fp32 %.1f TFLOP/s",
               g->launch_us.value, g->memory_bandwidth_gbs.value, g->h2d_gbs.value, g->d2h_gbs.value, g->fp32_tflops.value);
done:
  if (out) a.mem_free(out);
  if (dst) a.mem_free(dst);
  if (src) a.mem_free(src);
  if (host) a.host_free(host);
  if (mod) a.module_unload(mod);
  if (retained) a.ctx_release(dev);
  dlclose(a.lib);
  return err;
}
