/* Microarchitecture names from cpuid vendor/family/model, table-driven (AMD PPRs, Intel SDM
 * vol. 4 table 2-1); and the host's own topology reads back sensibly. */
#include <string.h>

#include "microbench/microbench.h"
#include "test.h"

static const struct {
  const char *vendor;
  int family, model;
  const char *uarch;
} rows[] = {
    {"AuthenticAMD", 0x17, 0x01, "zen1"},  {"AuthenticAMD", 0x17, 0x31, "zen2"},  /* Rome */
    {"AuthenticAMD", 0x17, 0x71, "zen2"},  {"AuthenticAMD", 0x19, 0x01, "zen3"},  /* Milan */
    {"AuthenticAMD", 0x19, 0x11, "zen4"},  {"AuthenticAMD", 0x19, 0x10, "zen4"},  /* Genoa */
    {"AuthenticAMD", 0x19, 0x21, "zen3"},  {"AuthenticAMD", 0x19, 0x61, "zen4"},  /* Vermeer, Raphael */
    {"AuthenticAMD", 0x19, 0xa0, "zen4"},  {"AuthenticAMD", 0x1a, 0x02, "zen5"},  /* Bergamo, Turin */
    {"AuthenticAMD", 0x1a, 0x44, "zen5"},  {"GenuineIntel", 6, 0x55, "skylake-sp"},
    {"GenuineIntel", 6, 0x6a, "icelake-sp"}, {"GenuineIntel", 6, 0x8f, "sapphirerapids"},
    {"GenuineIntel", 6, 0x01, "unknown"},  {"HygonGenuine", 0x18, 0, "unknown"},
};

int main(void) {
  for (size_t i = 0; i < PT_ARRAY_LEN(rows); i++) {
    const char *got = pmb_uarch_name(rows[i].vendor, rows[i].family, rows[i].model);
    CHECK_MSG(strcmp(got, rows[i].uarch) == 0, "%s family %#x model %#x: %s, expected %s", rows[i].vendor, rows[i].family,
              rows[i].model, got, rows[i].uarch);
  }
  pt_diag d = {0};
  ptg_target *t = ptg_target_new("host");
  CHECK_MSG(pmb_topology(t, &d) == 0, "%s", d.msg);
  CHECK(t->cores >= 1 && t->threads_per_core >= 1 && t->numa_nodes >= 1 && t->n_caches >= 1);
  for (int i = 0; i < t->n_caches; i++) {
    CHECK(t->caches[i].level == i + 1 && t->caches[i].size_bytes > 0 && t->caches[i].shared_by >= 1);
    if (i) CHECK(t->caches[i].size_bytes >= t->caches[i - 1].size_bytes);
  }
  CHECK(t->max_vector_bits >= 128 && t->microarchitecture && t->isa);
  ptg_target_free(t);
  TEST_DONE();
}
