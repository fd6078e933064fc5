/* Every target description shipped in targets/ loads and validates; published ones name a
 * source for every instruction row and cache level, measured ones carry repetitions and
 * spreads; the instruction lookup answers for every class on every shipped target. */
#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "targets/targets.h"
#include "test.h"

static void check_one(const char *path) {
  pt_diag d = {0};
  ptg_target *t = ptg_target_load(path, &d);
  CHECK_MSG(t != NULL, "%s", d.msg);
  if (!t) return;
  bool published = strcmp(t->provenance, "published") == 0;
  CHECK_MSG(t->n_insts >= 20 && t->n_caches >= 2 && t->cores >= 1, "%s: too little in it", path);
  CHECK_MSG(!isnan(t->memory.latency_ns.value), "%s: no memory latency", path);
  CHECK_MSG(published || t->n_sources >= 1 || t->n_insts == 0, "%s: no sources", path);
  for (int i = 0; i < t->n_insts; i++) {
    const ptg_inst *r = &t->insts[i];
    if (published)
      CHECK_MSG(r->source && *r->source, "%s: instructions[%d] names no source", path, i);
    else
      CHECK_MSG(r->recip_throughput.reps > 0 && r->recip_throughput.spread >= 0, "%s: instructions[%d] lacks repetitions", path, i);
  }
  for (int i = 0; i < t->n_caches; i++)
    CHECK_MSG(!published || t->caches[i].source, "%s: caches[%d] names no source", path, i);
  for (int op = 0; op < PTG_OP_COUNT; op++)
    for (int e = 0; e < PTG_ELEM_COUNT; e++) {
      ptg_inst_cost c = ptg_target_inst(t, op, e, 4 * ptg_elem_bits(e));
      CHECK_MSG(c.recip_throughput > 0 && c.latency >= 0 && c.split >= 1, "%s: %s %s lookup", path, ptg_op_name(op), ptg_elem_name(e));
    }
  /* a saved copy reads back to the same JSON */
  char *a = ptg_target_to_json(t, &d);
  ptg_target *u = a ? ptg_target_parse(a, path, &d) : NULL;
  char *b = u ? ptg_target_to_json(u, &d) : NULL;
  CHECK_MSG(a && b && strcmp(a, b) == 0, "%s: round trip differs (%s)", path, d.msg);
  free(a);
  free(b);
  ptg_target_free(u);
  ptg_target_free(t);
}

/* Vector registers by ISA (ptg_target_vector_registers): AVX2 16, AVX-512 32, NEON 32. */
static void check_registers(const char *dir) {
  static const struct { const char *file; int regs; } rows[] = {
      {"amd-zen2.json", 16}, {"zen3-epyc-2c.json", 16}, {"zen4-epyc-2c.json", 32},
      {"intel-skylake-sp.json", 32}, {"arm-neoverse-n1.json", 32}};
  for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", dir, rows[i].file);
    pt_diag d = {0};
    ptg_target *t = ptg_target_load(path, &d);
    CHECK_MSG(t && ptg_target_vector_registers(t) == rows[i].regs, "%s: %d vector registers, expected %d", rows[i].file,
              t ? ptg_target_vector_registers(t) : -1, rows[i].regs);
    ptg_target_free(t);
  }
}

int main(void) {
  const char *dir = ptg_shipped_dir();
  check_registers(dir);
  DIR *dp = opendir(dir);
  CHECK_MSG(dp != NULL, "cannot open %s", dir);
  if (!dp) TEST_DONE();
  int n = 0;
  bool have[6] = {false};
  static const char *const required[6] = {"zen5-epyc-2c.json", "zen4-epyc-2c.json", "intel-skylake-sp.json",
                                          "amd-zen2.json", "arm-neoverse-n1.json", "amd-zen4.json"};
  for (struct dirent *e; (e = readdir(dp));) {
    size_t len = strlen(e->d_name);
    if (len < 6 || strcmp(e->d_name + len - 5, ".json")) continue;
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
    check_one(path);
    for (int i = 0; i < 6; i++) have[i] |= strcmp(e->d_name, required[i]) == 0;
    n++;
  }
  closedir(dp);
  for (int i = 0; i < 6; i++) CHECK_MSG(have[i], "targets/%s is not shipped", required[i]);
  fprintf(stderr, "%d shipped target descriptions checked\n", n);
  TEST_DONE();
}
