/* GPU probes through the CUDA driver API, opened at run time (dlopen), so portent builds and
 * runs without CUDA and says clearly why --gpu cannot be honoured. Runs the PTX kernels of
 * gpu_kernels.c (launch, copies, FP32 and tensor-core throughput, pointer chases, shared memory)
 * and times them on the GPU's clock with CUPTI (gpu_cupti.c), or with the host clock around
 * cuCtxSynchronize when libcupti is missing. Enum values and entry points: CUDA 13 cuda.h. */
#include <dlfcn.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
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

/* Work per loop iteration of the kernels (gpu_kernels.c): pt_fma 8 chains x 8 FMAs per thread;
 * pt_mma_* 4 chains x 8 mma per warp, each m16n8k16 = 2 x 16 x 8 x 16 flops. */
#define FMA_PER_ITER 64
#define MMA_PER_ITER 32
#define MMA_FLOPS 4096.0

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


/* One timed thing: a kernel launch or a pinned copy. */
typedef struct {
  cuda_api *a;
  pmb_cupti *cupti; /* NULL: host clock */
  CUfunction f;
  unsigned grid, block;
  void **params;
  CUdeviceptr dst;
  void *host;
  size_t bytes;
  int what;       /* 0 launch round trip (host clock), 1 kernel, 2 htod, 3 dtoh */
  bool host_used; /* a kernel repetition fell back to the host clock */
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

/* reps timings after a warm-up (module JIT, first touch, caches filled). A kernel's time is
 * its CUPTI record (start to end on the GPU) when there is exactly one, else the host time. */
static int time_job(gpu_job *j, int reps, pmb_stats *out) {
  double v[64], gpu_s;
  if (reps > 64) reps = 64;
  if (run_once(j) < 0) return -1;
  if (j->cupti) pmb_cupti_take(j->cupti, &gpu_s); /* drop the warm-up's record */
  for (int r = 0; r < reps; r++) {
    double t0 = pt_now();
    if (run_once(j) < 0) return -1;
    v[r] = pt_now() - t0;
    int records = j->cupti ? pmb_cupti_take(j->cupti, &gpu_s) : 0;
    if (j->what == 1 && records == 1 && gpu_s > 0)
      v[r] = gpu_s;
    else if (j->what == 1)
      j->host_used = true;
  }
  *out = pmb_stats_of(v, reps);
  return 0;
}

/* amount / seconds (the fastest repetition) or seconds / amount (per-load latency) */
static ptg_figure rate(const gpu_job *j, pmb_stats s, double amount, const char *host_note) {
  return (ptg_figure){.value = amount / s.min, .spread = s.spread, .reps = s.reps, .source = j->host_used ? host_note : NULL};
}
static ptg_figure per_load_ns(const gpu_job *j, pmb_stats s, double loads, const char *host_note) {
  return (ptg_figure){.value = s.min / loads * 1e9, .spread = s.spread, .reps = s.reps, .source = j->host_used ? host_note : NULL};
}

/* A random cyclic chain over `bytes` of device memory at `base`, one node per 128-byte line
 * (Sattolo's shuffle: a single cycle through every line), written into `host` (pinned). */
static bool build_chain(uint64_t *host, size_t bytes, CUdeviceptr base, uint64_t seed) {
  size_t lines = bytes / 128;
  uint32_t *order = lines >= 2 ? malloc(lines * sizeof *order) : NULL;
  if (!order) return false;
  for (size_t i = 0; i < lines; i++) order[i] = (uint32_t)i;
  pt_rng rng = {seed};
  for (size_t i = lines - 1; i > 0; i--) {
    size_t k = (size_t)pt_rng_range(&rng, (int64_t)i);
    uint32_t t = order[i];
    order[i] = order[k];
    order[k] = t;
  }
  for (size_t i = 0; i < lines; i++) host[order[i] * 16] = base + (uint64_t)order[(i + 1) % lines] * 128;
  free(order);
  return true;
}

typedef struct {
  cuda_api *a;
  pmb_cupti *cupti;
  CUfunction f;
  CUdeviceptr chain, out;
  uint64_t *host;
  int reps;
  const char *host_note;
} chase_ctx;

/* ns per dependent load over a chain of `bytes`; NaN (and a progress line) on failure. */
static ptg_figure chase(pmb_ctx *c, chase_ctx *k, size_t bytes, unsigned iters, const char *what) {
  uint64_t start = k->chain;
  void *params[2] = {&k->out, &iters};
  gpu_job j = {.a = k->a, .cupti = k->cupti, .f = k->f, .grid = 1, .block = 1, .params = params, .what = 1};
  pmb_stats s;
  if (!build_chain(k->host, bytes, k->chain, 0x9e3779b97f4a7c15ull ^ bytes) || k->a->htod(k->chain, k->host, bytes) || k->a->htod(k->out, &start, sizeof start) || time_job(&j, k->reps, &s) < 0) {
    pmb_progress(c, "gpu: the %s pointer chase failed; left null", what);
    return (ptg_figure){.value = NAN};
  }
  return per_load_ns(&j, s, 8.0 * iters, k->host_note);
}

int pmb_measure_gpu(pmb_ctx *c, pt_diag *d) {
  cuda_api a;
  ptg_gpu *g = &c->t->gpu;
  CUdevice dev = 0;
  CUcontext ctx = NULL;
  CUmodule mod = NULL, mod_mma = NULL;
  CUdeviceptr src = 0, dst = 0, out = 0;
  void *host = NULL;
  pmb_cupti *cupti = NULL;
  int err = PT_OK;
  bool retained = false;
  if (!load_api(&a)) {
    if (a.lib) dlclose(a.lib);
    return pt_fail(d, PT_ERR_UNSUPPORTED, "no GPU: the CUDA driver (libcuda.so.1) is not installed on this machine");
  }
  /* CUPTI first: its samples enable activity tracing before any other CUDA call */
  char why[160];
  cupti = pmb_cupti_open(why, sizeof why);
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
  g->source = "CUDA driver API attributes; PTX kernels of microbench/gpu_kernels.c";
  pmb_progress(c, "gpu: %s, %d SMs, compute %d.%d", name, sms, major, minor);

  CU(a.ctx_retain(&ctx, dev));
  retained = true;
  CU(a.ctx_set(ctx));
  const char *host_note = pt_sprintf(c->t->arena, "host clock around cuCtxSynchronize (CUPTI: %s)", cupti ? "no kernel record" : why);
  g->timer = cupti ? "CUPTI activity records (GPU clock)" : host_note;
  pmb_progress(c, "gpu: kernels timed by %s", g->timer);
  int n_modules;
  const pmb_gpu_module *modules = pmb_gpu_modules(&n_modules);
  CU(a.module_load(&mod, modules[0].ptx));
  CUfunction f_empty, f_copy, f_fma, f_ca, f_cg, f_schase, f_sread;
  CU(a.get_function(&f_empty, mod, "pt_empty"));
  CU(a.get_function(&f_copy, mod, "pt_copy"));
  CU(a.get_function(&f_fma, mod, "pt_fma"));
  CU(a.get_function(&f_ca, mod, "pt_chase_ca"));
  CU(a.get_function(&f_cg, mod, "pt_chase_cg"));
  CU(a.get_function(&f_schase, mod, "pt_smem_chase"));
  CU(a.get_function(&f_sread, mod, "pt_smem_read"));
  int reps = c->reps;
  bool quick = c->o->quick;
  pmb_stats s;

  gpu_job launch = {.a = &a, .cupti = cupti, .f = f_empty, .grid = 1, .block = 1, .what = 0};
  if (time_job(&launch, reps * 4, &s) < 0) TIMING_FAILED("empty kernel");
  g->launch_us = (ptg_figure){.value = s.min * 1e6, .spread = s.spread, .reps = s.reps};

  /* device copy: a quarter of memory at most, 1 GiB per buffer at most */
  size_t bytes = total / 8 < ((size_t)1 << 30) ? total / 8 : ((size_t)1 << 30);
  bytes &= ~(size_t)127;
  CU(a.mem_alloc(&src, bytes));
  CU(a.mem_alloc(&dst, bytes));
  unsigned long long n16 = bytes / 16;
  unsigned passes = 1;
  void *copy_params[4] = {&dst, &src, &n16, &passes};
  gpu_job copy = {.a = &a, .cupti = cupti, .f = f_copy, .grid = (unsigned)sms * 8, .block = 256, .params = copy_params, .what = 1};
  if (time_job(&copy, reps, &s) < 0) TIMING_FAILED("copy kernel");
  g->memory_bandwidth_gbs = rate(&copy, s, 2.0 * (double)bytes / 1e9, host_note);

  /* L2: the same copy over a quarter of the L2 per buffer, repeated to about 2 GB of traffic */
  if (l2 > 0) {
    unsigned long long l2_n16 = (unsigned long long)l2 / 4 / 16;
    unsigned l2_passes = (unsigned)(((size_t)2 << 30) / (2 * 16 * l2_n16)) + 1;
    void *l2_params[4] = {&dst, &src, &l2_n16, &l2_passes};
    gpu_job l2copy = {.a = &a, .cupti = cupti, .f = f_copy, .grid = (unsigned)sms * 8, .block = 256, .params = l2_params, .what = 1};
    if (time_job(&l2copy, reps, &s) < 0) TIMING_FAILED("L2 copy kernel");
    g->l2_bandwidth_gbs = rate(&l2copy, s, 2.0 * 16 * (double)l2_n16 * l2_passes / 1e9, host_note);
  }

  /* host <-> device, pinned; 256 MiB or the copy buffer, whichever is smaller */
  size_t hbytes = bytes < ((size_t)256 << 20) ? bytes : ((size_t)256 << 20);
  CU(a.host_alloc(&host, hbytes));
  memset(host, 1, hbytes);
  gpu_job h2d = {.a = &a, .dst = dst, .host = host, .bytes = hbytes, .what = 2};
  if (time_job(&h2d, reps, &s) < 0) TIMING_FAILED("host-to-device copy");
  g->h2d_gbs = rate(&h2d, s, (double)hbytes / 1e9, NULL);
  gpu_job d2h = {.a = &a, .dst = dst, .host = host, .bytes = hbytes, .what = 3};
  if (time_job(&d2h, reps, &s) < 0) TIMING_FAILED("device-to-host copy");
  g->d2h_gbs = rate(&d2h, s, (double)hbytes / 1e9, NULL);

  /* FP32: enough threads to fill every SM (2048 resident threads per SM on recent GPUs) */
  unsigned block = 256, grid = (unsigned)sms * 8;
  CU(a.mem_alloc(&out, (size_t)grid * block * 4));
  unsigned iters = quick ? 2000 : 20000;
  void *fma_params[2] = {&out, &iters};
  gpu_job fma = {.a = &a, .cupti = cupti, .f = f_fma, .grid = grid, .block = block, .params = fma_params, .what = 1};
  if (time_job(&fma, reps, &s) < 0) TIMING_FAILED("FMA kernel");
  g->fp32_tflops = rate(&fma, s, 2.0 * FMA_PER_ITER * (double)iters * grid * block / 1e12, host_note);
  pmb_progress(c, "gpu: launch %.1f us, device copy %.0f GB/s, L2 copy %.0f GB/s, h2d %.1f GB/s, d2h %.1f GB/s, fp32 %.1f TFLOP/s",
               g->launch_us.value, g->memory_bandwidth_gbs.value, g->l2_bandwidth_gbs.value, g->h2d_gbs.value,
               g->d2h_gbs.value, g->fp32_tflops.value);

  /* Tensor cores (sm_80+): 8 warps per block, 4 blocks per SM, 4 mma chains per warp */
  if (major >= 8 && a.module_load(&mod_mma, modules[1].ptx) == 0) {
    static const char *const kernels[2] = {"pt_mma_f16", "pt_mma_bf16"};
    ptg_figure *figs[2] = {&g->fp16_mma_tflops, &g->bf16_mma_tflops};
    unsigned mma_iters = quick ? 500 : 5000, mma_grid = (unsigned)sms * 4;
    void *mma_params[2] = {&out, &mma_iters};
    for (int k = 0; k < 2; k++) {
      CUfunction f;
      gpu_job mma = {.a = &a, .cupti = cupti, .grid = mma_grid, .block = 256, .params = mma_params, .what = 1};
      if (a.get_function(&f, mod_mma, kernels[k]) || (mma.f = f, time_job(&mma, reps, &s) < 0)) {
        pmb_progress(c, "gpu: %s failed; left null", kernels[k]);
        continue;
      }
      double warps = (double)mma_grid * 256 / 32;
      *figs[k] = rate(&mma, s, MMA_FLOPS * MMA_PER_ITER * (double)mma_iters * warps / 1e12, host_note);
    }
  } else {
    pmb_progress(c, "gpu: no mma (compute %d.%d < 8.0 or the sm_80 module did not load); left null", major, minor);
  }

  /* Shared memory: one-thread chase, then 16-byte loads by every thread of 4 blocks per SM */
  unsigned s_iters = quick ? 1u << 13 : 1u << 16;
  void *schase_params[2] = {&s_iters, &out};
  gpu_job schase = {.a = &a, .cupti = cupti, .f = f_schase, .grid = 1, .block = 1, .params = schase_params, .what = 1};
  uint64_t chase_cycles = 0;
  if (time_job(&schase, reps, &s) == 0) {
    g->smem_latency_ns = per_load_ns(&schase, s, 8.0 * s_iters, host_note);
    /* the last repetition's cycles over the fastest one's time: the clock the SM ran at */
    if (a.dtoh(&chase_cycles, out + 8, sizeof chase_cycles) == 0 && chase_cycles > 0)
      g->sm_clock_ghz = (ptg_figure){.value = (double)chase_cycles / s.min * 1e-9, .spread = s.spread, .reps = s.reps,
                                     .source = schase.host_used ? host_note : NULL};
  } else
    pmb_progress(c, "gpu: the shared-memory chase failed; left null");
  unsigned r_iters = quick ? 500 : 5000, r_grid = (unsigned)sms * 4;
  void *sread_params[2] = {&out, &r_iters};
  gpu_job sread = {.a = &a, .cupti = cupti, .f = f_sread, .grid = r_grid, .block = 256, .params = sread_params, .what = 1};
  if (time_job(&sread, reps, &s) == 0)
    g->smem_bandwidth_gbs = rate(&sread, s, 16.0 * 8 * (double)r_iters * r_grid * 256 / 1e9, host_note);
  else
    pmb_progress(c, "gpu: the shared-memory read kernel failed; left null");

  /* Pointer chases, one thread: 16 KiB through L1 (.ca); through L2 only (.cg) a quarter of
   * the L2 (4 MiB at most) and four times the L2 (memory, within the pinned buffer) */
  chase_ctx k = {.a = &a, .cupti = cupti, .f = f_ca, .chain = src, .out = out, .host = host, .reps = reps, .host_note = host_note};
  unsigned c_iters = quick ? 1u << 11 : 1u << 14;
  g->l1_latency_ns = chase(c, &k, 16 << 10, c_iters, "L1");
  k.f = f_cg;
  size_t l2_set = l2 > 0 ? (size_t)l2 / 4 : ((size_t)1 << 20);
  if (l2_set > ((size_t)4 << 20)) l2_set = (size_t)4 << 20;
  g->l2_latency_ns = chase(c, &k, l2_set & ~(size_t)127, c_iters, "L2");
  size_t mem_set = l2 > 0 ? (size_t)l2 * 4 : ((size_t)64 << 20);
  if (mem_set > hbytes) mem_set = hbytes;
  g->memory_latency_ns = chase(c, &k, mem_set & ~(size_t)127, c_iters / 4, "memory");
  pmb_progress(c, "gpu: SM clock %.3f GHz while running (%.3f GHz reported)", g->sm_clock_ghz.value, g->clock_ghz);
  pmb_progress(c, "gpu: mma fp16 %.0f, bf16 %.0f TFLOP/s; shared %.0f GB/s; latency ns: shared %.1f, L1 %.1f, L2 %.1f, memory %.1f",
               g->fp16_mma_tflops.value, g->bf16_mma_tflops.value, g->smem_bandwidth_gbs.value, g->smem_latency_ns.value,
               g->l1_latency_ns.value, g->l2_latency_ns.value, g->memory_latency_ns.value);
  bool any_host = false;
#define PTG_X(field, key, lo, hi, doc) any_host |= g->field.source == host_note;
  PTG_GPU_FIGURES(PTG_X)
#undef PTG_X
  if (cupti && any_host) g->timer = "CUPTI activity records (GPU clock), some kernels on the host clock (see their source)";
done:
  pmb_cupti_close(cupti);
  if (out) a.mem_free(out);
  if (dst) a.mem_free(dst);
  if (src) a.mem_free(src);
  if (host) a.host_free(host);
  if (mod_mma) a.module_unload(mod_mma);
  if (mod) a.module_unload(mod);
  if (retained) a.ctx_release(dev);
  dlclose(a.lib);
  return err;
}
