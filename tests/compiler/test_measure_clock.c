/* Which clock times a run (pc_measure_clock): the thread's CPU time only with cpu_clock and one
 * thread; candidates (measure.c) and the oneDNN/OpenBLAS baselines (baseline.c) share the rule,
 * so a tuner's ratio to a library compares times taken by the same clock. */
#include "compiler/compiler.h"
#include "test.h"

int main(void) {
  CHECK(pc_measure_clock(true, 1) == pt_cpu_now);
  CHECK(pc_measure_clock(true, 2) == pt_now);  /* workers' CPU time would add up */
  CHECK(pc_measure_clock(false, 1) == pt_now);
  CHECK(pc_measure_clock(false, 16) == pt_now);
  TEST_DONE();
}
