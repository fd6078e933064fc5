/* Kernel durations on the GPU's own clock: CUPTI's activity API (concurrent-kernel records,
 * start/end in ns), opened at run time with dlopen like libcuda, so portent builds without CUDA
 * and falls back to host timing when libcupti is missing. The few declarations needed are
 * written here, checked against the installed cupti_activity.h by test_gpu_cupti_layout.c. */
#include <dlfcn.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

/* CUDA 13 cupti_activity.h: CUPTI_ACTIVITY_KIND_KERNEL = 3, _CONCURRENT_KERNEL = 10,
 * CUPTI_ACTIVITY_FLAG_FLUSH_FORCED = 1, CUPTI_SUCCESS = 0. A kernel record
 * (CUpti_ActivityKernel10, the version CUDA 13 emits) starts with the 4-byte kind; its
 * uint64 start and end timestamps (ns) sit at offsets 16 and 24, as in every record version
 * since CUpti_ActivityKernel (CUDA 4). Records are 8-byte aligned (ACTIVITY_RECORD_ALIGNMENT). */
enum { KIND_KERNEL = PMB_CUPTI_KIND_KERNEL, KIND_CONCURRENT_KERNEL = PMB_CUPTI_KIND_CONCURRENT_KERNEL, FLUSH_FORCED = 1 };
enum { RECORD_START_OFFSET = PMB_CUPTI_START_OFFSET, RECORD_END_OFFSET = PMB_CUPTI_END_OFFSET, BUFFER_BYTES = 1 << 20 };

typedef int CUptiResult;
typedef void (*buffer_requested_fn)(uint8_t **buffer, size_t *size, size_t *max_records);
typedef void (*buffer_completed_fn)(void *ctx, uint32_t stream, uint8_t *buffer, size_t size, size_t valid);

struct pmb_cupti {
  void *lib;
  CUptiResult (*register_callbacks)(buffer_requested_fn, buffer_completed_fn);
  CUptiResult (*enable)(int kind);
  CUptiResult (*disable)(int kind);
  CUptiResult (*flush_all)(uint32_t flag);
  CUptiResult (*next_record)(uint8_t *buffer, size_t valid, void **record);
};

/* CUPTI's buffer callbacks carry no user pointer, so what they collect lives here, behind a
 * mutex; `owner` lets one pmb_cupti session at a time use it (CUPTI is per process anyway). */
static struct {
  pthread_mutex_t lock;
  pmb_cupti *owner;
  CUptiResult (*next_record)(uint8_t *, size_t, void **);
  uint64_t ns;  /* sum of kernel durations since the last take */
  int kernels;  /* kernel records since the last take */
} collected = {.lock = PTHREAD_MUTEX_INITIALIZER};

static void buffer_requested(uint8_t **buffer, size_t *size, size_t *max_records) {
  *buffer = aligned_alloc(8, BUFFER_BYTES);
  *size = *buffer ? BUFFER_BYTES : 0;
  *max_records = 0; /* as many as fit */
}

static void buffer_completed(void *ctx, uint32_t stream, uint8_t *buffer, size_t size, size_t valid) {
  (void)ctx, (void)stream, (void)size;
  pthread_mutex_lock(&collected.lock);
  void *record = NULL;
  while (collected.next_record && collected.next_record(buffer, valid, &record) == 0) {
    uint32_t kind;
    uint64_t start, end;
    memcpy(&kind, record, sizeof kind);
    if (kind != KIND_KERNEL && kind != KIND_CONCURRENT_KERNEL) continue;
    memcpy(&start, (uint8_t *)record + RECORD_START_OFFSET, sizeof start);
    memcpy(&end, (uint8_t *)record + RECORD_END_OFFSET, sizeof end);
    if (end > start) collected.ns += end - start;
    collected.kernels++;
  }
  pthread_mutex_unlock(&collected.lock);
  free(buffer);
}

/* libcupti is rarely on the loader path: also the toolkit's own folders. */
static void *open_cupti(void) {
  const char *home = getenv("CUDA_HOME");
  char path[512];
  static const char *const names[] = {"libcupti.so.13", "libcupti.so.12", "libcupti.so"};
  static const char *const dirs[] = {"/usr/local/cuda/lib64", "/usr/local/cuda/extras/CUPTI/lib64"};
  for (size_t i = 0; i < PT_ARRAY_LEN(names); i++) {
    void *lib = dlopen(names[i], RTLD_NOW | RTLD_LOCAL);
    if (lib) return lib;
  }
  if (home) {
    snprintf(path, sizeof path, "%s/lib64/libcupti.so", home);
    void *lib = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (lib) return lib;
    snprintf(path, sizeof path, "%s/extras/CUPTI/lib64/libcupti.so", home);
    if ((lib = dlopen(path, RTLD_NOW | RTLD_LOCAL))) return lib;
  }
  for (size_t i = 0; i < PT_ARRAY_LEN(dirs); i++) {
    snprintf(path, sizeof path, "%s/libcupti.so", dirs[i]);
    void *lib = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (lib) return lib;
  }
  return NULL;
}

pmb_cupti *pmb_cupti_open(char *why, size_t n) {
  pmb_cupti *c = calloc(1, sizeof *c);
  if (!c) {
    snprintf(why, n, "out of memory");
    return NULL;
  }
  if (!(c->lib = open_cupti())) {
    snprintf(why, n, "libcupti.so not found (set CUDA_HOME)");
    goto fail;
  }
  *(void **)&c->register_callbacks = dlsym(c->lib, "cuptiActivityRegisterCallbacks");
  *(void **)&c->enable = dlsym(c->lib, "cuptiActivityEnable");
  *(void **)&c->disable = dlsym(c->lib, "cuptiActivityDisable");
  *(void **)&c->flush_all = dlsym(c->lib, "cuptiActivityFlushAll");
  *(void **)&c->next_record = dlsym(c->lib, "cuptiActivityGetNextRecord");
  if (!c->register_callbacks || !c->enable || !c->disable || !c->flush_all || !c->next_record) {
    snprintf(why, n, "libcupti lacks the activity API");
    goto fail;
  }
  pthread_mutex_lock(&collected.lock);
  bool busy = collected.owner != NULL;
  if (!busy) {
    collected.owner = c;
    collected.next_record = c->next_record;
    collected.ns = 0;
    collected.kernels = 0;
  }
  pthread_mutex_unlock(&collected.lock);
  if (busy) {
    snprintf(why, n, "CUPTI is already in use in this process");
    goto fail;
  }
  int rc = c->register_callbacks(buffer_requested, buffer_completed);
  if (rc == 0) rc = c->enable(KIND_CONCURRENT_KERNEL);
  if (rc != 0) {
    snprintf(why, n, "CUPTI activity API failed (CUPTI error %d)", rc);
    pthread_mutex_lock(&collected.lock);
    collected.owner = NULL;
    pthread_mutex_unlock(&collected.lock);
    goto fail;
  }
  return c;
fail:
  /* libcupti stays loaded: it may have started its worker thread */
  free(c);
  return NULL;
}

int pmb_cupti_take(pmb_cupti *c, double *seconds) {
  if (c->flush_all(FLUSH_FORCED) != 0) return -1;
  pthread_mutex_lock(&collected.lock);
  int kernels = collected.kernels;
  *seconds = (double)collected.ns * 1e-9;
  collected.ns = 0;
  collected.kernels = 0;
  pthread_mutex_unlock(&collected.lock);
  return kernels;
}

void pmb_cupti_close(pmb_cupti *c) {
  if (!c) return;
  c->disable(KIND_CONCURRENT_KERNEL);
  c->flush_all(FLUSH_FORCED);
  pthread_mutex_lock(&collected.lock);
  collected.owner = NULL;
  pthread_mutex_unlock(&collected.lock);
  free(c); /* libcupti stays loaded: its worker thread may outlive the session */
}
