/* gpu_cupti.c declares the few CUPTI facts it needs instead of including the toolkit's headers
 * (portent builds without CUDA). Where the toolkit is installed, this checks those facts against
 * cupti_activity.h (kind values, start/end offsets of the kernel record CUDA emits), and that
 * opening CUPTI without a GPU fails cleanly or succeeds, never crashes. Skips without the header. */
#include <stddef.h>
#include <stdio.h>

#include "microbench/internal.h"
#include "test.h"

#ifdef PORTENT_HAVE_CUPTI_H
#include <cupti_activity.h>
#include <cupti_version.h>
#endif

int main(void) {
#ifndef PORTENT_HAVE_CUPTI_H
  fprintf(stderr, "skipped: cupti_activity.h not found (no CUDA toolkit); layout not checked\n");
  return 77;
#else
  fprintf(stderr, "CUPTI API version %d\n", CUPTI_API_VERSION);
  CHECK(PMB_CUPTI_KIND_KERNEL == CUPTI_ACTIVITY_KIND_KERNEL);
  CHECK(PMB_CUPTI_KIND_CONCURRENT_KERNEL == CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
  CHECK(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED == 1);
  CHECK(offsetof(CUpti_ActivityKernel10, kind) == 0);
  CHECK_MSG(offsetof(CUpti_ActivityKernel10, start) == PMB_CUPTI_START_OFFSET, "start at %zu",
            offsetof(CUpti_ActivityKernel10, start));
  CHECK_MSG(offsetof(CUpti_ActivityKernel10, end) == PMB_CUPTI_END_OFFSET, "end at %zu",
            offsetof(CUpti_ActivityKernel10, end));
  /* the oldest record layout agrees, so older CUPTI versions' records read the same */
  CHECK(offsetof(CUpti_ActivityKernel4, start) == PMB_CUPTI_START_OFFSET);
  CHECK(offsetof(CUpti_ActivityKernel4, end) == PMB_CUPTI_END_OFFSET);
  char why[160] = "";
  pmb_cupti *c = pmb_cupti_open(why, sizeof why);
  fprintf(stderr, "CUPTI here: %s\n", c ? "activity API enabled" : why);
  if (c) {
    double s = -1;
    CHECK(pmb_cupti_take(c, &s) <= 0); /* no kernel ran */
    pmb_cupti_close(c);
    /* a second session after closing opens again */
    pmb_cupti *again = pmb_cupti_open(why, sizeof why);
    CHECK_MSG(again != NULL, "%s", why);
    pmb_cupti_close(again);
  } else {
    CHECK(why[0] != 0);
  }
  TEST_DONE();
#endif
}
