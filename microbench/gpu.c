/* GPU presence: the CUDA driver library is opened at run time (dlopen), so portent builds and
 * runs without CUDA and says clearly why --gpu cannot be honoured. GPU kernels are not part
 * of this version (docs/formats.md: "Target description"). */
#include <dlfcn.h>
#include <stdio.h>

#include "internal.h"

int pmb_gpu_probe(char *desc, size_t n, pt_diag *d) {
  void *lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  if (!lib) return pt_fail(d, PT_ERR_UNSUPPORTED, "no GPU: the CUDA driver (libcuda.so.1) is not installed on this machine");
  typedef int (*init_fn)(unsigned);
  typedef int (*count_fn)(int *);
  init_fn cu_init = (init_fn)dlsym(lib, "cuInit");
  count_fn cu_count = (count_fn)dlsym(lib, "cuDeviceGetCount");
  int devices = 0, rc = -1;
  if (cu_init && cu_count && (rc = cu_init(0)) == 0) rc = cu_count(&devices);
  dlclose(lib);
  if (rc != 0 || devices == 0)
    return pt_fail(d, PT_ERR_UNSUPPORTED, "no GPU: the CUDA driver reports %s", rc != 0 ? "an error at cuInit" : "no devices");
  snprintf(desc, n, "%d CUDA device(s)", devices);
  return PT_OK;
}
