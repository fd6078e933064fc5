/* What the machine is, before anything is timed: cores, SMT, sockets, NUMA nodes and the
 * data caches (size, line, associativity, sharing) from hwloc; vendor/family/model from
 * cpuid; ISA features from LLVM's host detection; and the microarchitecture's name. */
#include <hwloc.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <sys/utsname.h>
#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#endif

#include "internal.h"

/* Family/model ranges: AMD's Processor Programming References (family 17h/19h/1Ah) and
 * Intel's SDM vol. 4 table 2-1 (DisplayFamily_DisplayModel). */
const char *pmb_uarch_name(const char *vendor, int family, int model) {
  if (vendor && strcmp(vendor, "AuthenticAMD") == 0) {
    if (family == 0x17) return model >= 0x30 ? "zen2" : "zen1";
    if (family == 0x19) return (model >= 0x10 && model < 0x20) || model >= 0x60 ? "zen4" : "zen3";
    if (family == 0x1a) return "zen5";
  }
  if (vendor && strcmp(vendor, "GenuineIntel") == 0 && family == 6) {
    switch (model) {
    case 0x55: return "skylake-sp"; /* also Cascade Lake / Cooper Lake, same core */
    case 0x6a: case 0x6c: return "icelake-sp";
    case 0x8f: return "sapphirerapids";
    case 0xcf: return "emeraldrapids";
    case 0x4e: case 0x5e: return "skylake";
    case 0x8e: case 0x9e: return "kabylake";
    }
  }
  return "unknown";
}

static void cpuid_identity(ptg_target *t) {
#if defined(__x86_64__) || defined(__i386__)
  unsigned a, b, c, d;
  char vendor[13] = {0};
  if (!__get_cpuid(0, &a, &b, &c, &d)) return;
  memcpy(vendor, &b, 4);
  memcpy(vendor + 4, &d, 4);
  memcpy(vendor + 8, &c, 4);
  __get_cpuid(1, &a, &b, &c, &d);
  int family = (a >> 8) & 0xf, model = (a >> 4) & 0xf;
  if (family == 0xf) family += (a >> 20) & 0xff; /* extended family */
  if (family >= 6) model |= ((a >> 16) & 0xf) << 4; /* extended model */
  t->vendor = pt_strdup(t->arena, vendor);
  t->family = family;
  t->model = model;
  char brand[49] = {0};
  if (__get_cpuid_max(0x80000000, NULL) >= 0x80000004) {
    for (unsigned i = 0; i < 3; i++) {
      unsigned r[4];
      __get_cpuid(0x80000002 + i, &r[0], &r[1], &r[2], &r[3]);
      memcpy(brand + 16 * i, r, 16);
    }
    char *p = brand;
    while (*p == ' ') p++;
    t->model_name = pt_strdup(t->arena, p);
  }
  t->isa = "x86_64";
#else
  t->isa = "aarch64";
  t->vendor = "unknown";
#endif
  t->microarchitecture = pmb_uarch_name(t->vendor, t->family, t->model);
}

static int count(hwloc_topology_t topo, hwloc_obj_type_t type) {
  int n = hwloc_get_nbobjs_by_type(topo, type);
  return n > 0 ? n : 1;
}

/* Caches, data or unified, level by level; shared_by = cores under one instance. */
static void caches(ptg_target *t, hwloc_topology_t topo) {
  static const hwloc_obj_type_t levels[] = {HWLOC_OBJ_L1CACHE, HWLOC_OBJ_L2CACHE, HWLOC_OBJ_L3CACHE, HWLOC_OBJ_L4CACHE};
  t->caches = pt_alloc(t->arena, sizeof(ptg_cache) * PT_ARRAY_LEN(levels));
  for (size_t i = 0; i < PT_ARRAY_LEN(levels); i++) {
    hwloc_obj_t o = hwloc_get_obj_by_type(topo, levels[i], 0);
    if (!o || !o->attr || o->attr->cache.size == 0) break;
    ptg_cache *k = &t->caches[t->n_caches++];
    k->level = (int)i + 1;
    k->size_bytes = (int64_t)o->attr->cache.size;
    k->line_bytes = o->attr->cache.linesize > 0 ? (int)o->attr->cache.linesize : 64;
    k->associativity = o->attr->cache.associativity > 0 ? o->attr->cache.associativity : 0;
    int cores = hwloc_get_nbobjs_inside_cpuset_by_type(topo, o->cpuset, HWLOC_OBJ_CORE);
    k->shared_by = cores > 0 ? cores : 1;
    k->latency_cycles = k->latency_ns = k->overlapping_misses = (ptg_figure){.value = NAN};
    k->source = "hwloc";
  }
}

int pmb_topology(ptg_target *t, pt_diag *d) {
  hwloc_topology_t topo;
  if (hwloc_topology_init(&topo) < 0 || hwloc_topology_load(topo) < 0)
    return pt_fail(d, PT_ERR_RUNTIME, "hwloc could not read this machine's topology");
  t->cores = count(topo, HWLOC_OBJ_CORE);
  t->threads_per_core = count(topo, HWLOC_OBJ_PU) / t->cores;
  if (t->threads_per_core < 1) t->threads_per_core = 1;
  t->sockets = count(topo, HWLOC_OBJ_PACKAGE);
  t->numa_nodes = count(topo, HWLOC_OBJ_NUMANODE);
  caches(t, topo);
  hwloc_topology_destroy(topo);
  cpuid_identity(t);
  struct utsname u;
  if (uname(&u) == 0) t->host = pt_strdup(t->arena, u.nodename);

  /* ISA features as LLVM names them; the vector widths follow from them. */
  pmb_jit *j = pmb_jit_new(d);
  if (!j) return d->err;
  static const char *const names[] = {"sse4.2", "avx", "avx2", "fma", "f16c", "avx512f", "avx512dq", "avx512bw", "avx512vl",
                                      "avx512vnni", "avx512bf16", "avx512fp16", "avxvnni", "amx-tile", "neon", "sve", "sve2"};
  t->features = pt_alloc(t->arena, sizeof(char *) * PT_ARRAY_LEN(names));
  for (size_t i = 0; i < PT_ARRAY_LEN(names); i++)
    if (pmb_jit_has(j, names[i])) t->features[t->n_features++] = names[i];
  t->max_vector_bits = pmb_jit_has(j, "avx512f") ? 512 : pmb_jit_has(j, "avx") ? 256 : 128;
  /* Native = the widest register one instruction operates on; that Zen 4 runs 512-bit ops
   * on 256-bit pipes shows in the instruction table's throughput, not here. */
  t->native_vector_bits = t->max_vector_bits;
  pmb_jit_free(j);
  return PT_OK;
}
