/* The schedules the analyzer's profile tests walk: a suite workload's default schedule and
 * `randoms` random ones from a fixed seed, each named "<workload> default -1" or
 * "<workload> random <i>" in the messages; a schedule that cannot be made fails the test. */
#ifndef PA_TEST_SCHEDULES_H
#define PA_TEST_SCHEDULES_H
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "compiler/compiler.h"
#include "test.h"

typedef void (*schedule_check)(const char *what, const pc_state *s, bool is_default, void *ctx);

static inline void for_each_schedule(const char *name, int randoms, uint64_t seed, schedule_check fn, void *ctx) {
  pt_diag d = {0};
  pc_program *p = pc_workload_build(name, &d);
  CHECK_MSG(p, "%s: %s", name, d.msg);
  if (!p) return;
  pt_rng rng = {seed};
  for (int i = -1; i < randoms; i++) {
    pc_state *s = pc_state_new(p);
    int rc = i < 0 ? pc_schedule_default(s, 16, &d) : pc_schedule_random(s, &rng, &d);
    CHECK_MSG(rc == 0, "%s: schedule %d: %s", name, i, d.msg);
    char what[96];
    snprintf(what, sizeof what, "%s %s %d", name, i < 0 ? "default" : "random", i);
    if (rc == 0) fn(what, s, i < 0, ctx);
    pc_state_free(s);
  }
  pc_program_free(p);
}
#endif
