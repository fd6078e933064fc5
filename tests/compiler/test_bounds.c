/* Bound inference of an attached stage (pc_stage_bound_region): a split's loops get the
 * extents of the region the stage computes, tightened as TVM's PassDownDomain does, so a
 * level-2 fused tile runs its level-1 loop once. Table rows: split lengths, region, the
 * expected extents of the split's loops (outer to inner). */
#include <stdlib.h>

#include "compiler/compiler.h"
#include "test.h"

typedef struct {
  int n_len;
  int64_t len[3];
  int64_t region;
  int64_t want[4];
} row;

static const row rows[] = {
    {3, {2, 2, 4}, 64, {4, 2, 2, 4}}, /* whole extent: as propagation gives it */
    {3, {2, 2, 4}, 8, {1, 1, 2, 4}},  /* a level-2 region (l2 x l3 = 8): level 1 runs once */
    {3, {2, 2, 4}, 16, {1, 2, 2, 4}}, /* a level-1 region */
    {1, {16}, 7, {1, 7}},             /* a region smaller than the factor */
    {1, {4}, 6, {2, 4}},              /* not a multiple: the outer loop over-covers, guarded */
    {2, {4, 8}, 24, {1, 3, 8}},       /* partial middle level */
};

int main(void) {
  pt_diag d = {0};
  pc_program *p = pc_workload_build("matmul:64,64,64", &d);
  CHECK_MSG(p != NULL, "%s", d.msg);
  if (!p) TEST_DONE();
  for (size_t r = 0; r < sizeof rows / sizeof rows[0]; r++) {
    const row *t = &rows[r];
    pc_state *s = pc_state_new(p);
    pc_step step = {.kind = PC_STEP_SP, .stage_id = 2, .iter_id = 0, .extent = 64, .n_lengths = t->n_len,
                    .inner_to_outer = true};
    for (int k = 0; k < t->n_len; k++) step.lengths[k] = t->len[k];
    CHECK_MSG(pc_state_apply(s, &step, &d) == 0, "row %zu: %s", r, d.msg);
    pc_stage st = s->stages[2];
    int64_t region[2] = {t->region, 64};
    pc_stage_bound_region(&st, 2, region);
    int64_t covered = 1;
    for (int k = 0; k <= t->n_len; k++) {
      int64_t got = st.nodes[st.leaves[k]].extent;
      covered *= got;
      CHECK_MSG(got == t->want[k], "row %zu loop %d: extent %lld, want %lld", r, k, (long long)got,
                (long long)t->want[k]);
    }
    CHECK_MSG(covered >= t->region, "row %zu: loops cover %lld < region %lld", r, (long long)covered,
              (long long)t->region);
    /* The j loop (not split) takes the region's second axis. */
    CHECK(st.nodes[st.leaves[t->n_len + 1]].extent == 64);
    pc_state_free(s);
  }
  pc_program_free(p);
  TEST_DONE();
}
