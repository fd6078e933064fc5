/* Every PTX module of the GPU probes assembles with the CUDA toolkit's ptxas for an A100 (sm_80)
 * and an H100 (sm_90), so a syntax error in a kernel fails here, on a machine without a GPU,
 * instead of during scarce GPU time. ptxas is looked for in $CUDA_HOME/bin, /usr/local/cuda/bin
 * and on PATH; without it the test skips (77). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "microbench/microbench.h"
#include "test.h"

static bool find_ptxas(char *out, size_t n) {
  const char *home = getenv("CUDA_HOME"), *path = getenv("PATH");
  if (home) {
    snprintf(out, n, "%s/bin/ptxas", home);
    if (access(out, X_OK) == 0) return true;
  }
  snprintf(out, n, "/usr/local/cuda/bin/ptxas");
  if (access(out, X_OK) == 0) return true;
  for (const char *p = path; p && *p;) {
    const char *end = strchr(p, ':');
    size_t len = end ? (size_t)(end - p) : strlen(p);
    snprintf(out, n, "%.*s/ptxas", (int)len, p);
    if (len && access(out, X_OK) == 0) return true;
    p = end ? end + 1 : NULL;
  }
  return false;
}

int main(void) {
  char ptxas[512];
  if (!find_ptxas(ptxas, sizeof ptxas)) {
    fprintf(stderr, "skipped: ptxas not found (no CUDA toolkit); the PTX kernels were not assembled\n");
    return 77;
  }
  int n = 0;
  const pmb_gpu_module *m = pmb_gpu_modules(&n);
  CHECK(n >= 2);
  static const char *const archs[] = {"sm_80", "sm_90"};
  for (int i = 0; i < n; i++) {
    CHECK_MSG(strstr(m[i].ptx, ".entry ") != NULL, "module %s has no kernel", m[i].name);
    char target[32];
    snprintf(target, sizeof target, ".target %s\n", m[i].arch);
    CHECK_MSG(strstr(m[i].ptx, target) != NULL, "module %s: .target is not %s", m[i].name, m[i].arch);
    char path[] = "/tmp/portent_ptx_XXXXXX";
    int fd = mkstemp(path);
    size_t len = strlen(m[i].ptx);
    CHECK(fd >= 0 && write(fd, m[i].ptx, len) == (ssize_t)len);
    if (fd >= 0) close(fd);
    for (size_t k = 0; k < PT_ARRAY_LEN(archs); k++) {
      char cmd[1200];
      snprintf(cmd, sizeof cmd, "'%s' -arch=%s -o /dev/null %s", ptxas, archs[k], path);
      int rc = system(cmd);
      CHECK_MSG(rc == 0, "ptxas rejects module %s for %s: %s", m[i].name, archs[k], cmd);
      if (rc == 0) fprintf(stderr, "ptxas -arch=%s: module %s ok\n", archs[k], m[i].name);
    }
    unlink(path);
  }
  TEST_DONE();
}
