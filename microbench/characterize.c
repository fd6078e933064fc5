/* The characterization driver: topology, clock, instruction table, execution units, memory
 * hierarchy, thread-pool cost, counters, then provenance (date, tool, repetitions). Each part
 * fills its section of one ptg_target; progress lines go to o->progress. */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "internal.h"

const char *pmb_default_target_name(ptg_target *t) {
  const char *v = t->vendor && strcmp(t->vendor, "AuthenticAMD") == 0 ? "epyc"
                  : t->vendor && strcmp(t->vendor, "GenuineIntel") == 0 ? "xeon" : "cpu";
  return pt_sprintf(t->arena, "%s-%s-%dc", t->microarchitecture, v, t->cores);
}

static bool no_units(const pmb_options *o) { return o->skip_units; }
static bool no_memory(const pmb_options *o) { return o->skip_memory; }
static bool no_runtime(const pmb_options *o) { return o->skip_runtime; }
static bool no_mlp(const pmb_options *o) { return o->skip_mlp; }
static bool no_l1_sets(const pmb_options *o) { return o->skip_l1_sets; }
static bool no_l1_rmw(const pmb_options *o) { return o->skip_l1_rmw; }
static bool no_l1_streams(const pmb_options *o) { return o->skip_l1_streams; }
static bool no_l1_loads(const pmb_options *o) { return o->skip_l1_loads; }
static bool no_forward(const pmb_options *o) { return o->skip_forward; }
static bool no_spills(const pmb_options *o) { return o->skip_spills; }
static bool no_instructions(const pmb_options *o) { return o->skip_instructions; }
static bool no_gpu(const pmb_options *o) { return !o->gpu; }

/* The probes in the order they run: each fills its part of the target (the clock first:
 * every cycle figure depends on it; the GPU only with --gpu). */
static const struct {
  const char *name;
  int (*run)(pmb_ctx *c, pt_diag *d);
  bool (*skipped)(const pmb_options *o);
} probes[] = {
    {"the core clock", pmb_calibrate_clock, NULL},
    {"instruction costs", pmb_measure_instructions, no_instructions},
    {"execution units", pmb_measure_units, no_units},
    {"the memory hierarchy", pmb_measure_memory, no_memory},
    {"misses in flight", pmb_measure_mlp, no_mlp},
    {"L1 misses in flight per set", pmb_measure_set_walks, no_l1_sets},
    {"L1 read-modify-write set walks", pmb_measure_set_walks_rmw, no_l1_rmw},
    {"L1 set streams", pmb_measure_set_streams, no_l1_streams},
    {"L1 set walks by loads", pmb_measure_set_loads, no_l1_loads},
    {"store forwarding", pmb_measure_store_forward, no_forward},
    {"spilled register tiles", pmb_measure_spills, no_spills},
    {"the thread pool", pmb_measure_runtime, no_runtime},
    {"the GPU", pmb_measure_gpu, no_gpu},
};

ptg_target *pmb_characterize(const pmb_options *o, pt_diag *d) {
  pmb_options defaults = {0};
  if (!o) o = &defaults;
  double t0 = pt_now();
  if (o->gpu) { /* before minutes of CPU measurements: is there a GPU at all? */
    char desc[160];
    if (pmb_gpu_probe(desc, sizeof desc, d) < 0) return NULL;
  }
  ptg_target *t = ptg_target_new(o->name);
  pmb_ctx c = {.o = o, .t = t};
  c.reps = o->repetitions > 0 ? o->repetitions : o->quick ? 3 : 5;
  c.min_seconds = o->min_seconds > 0 ? o->min_seconds : o->quick ? 0.0004 : 0.002;
  if (pmb_topology(t, d) < 0) goto fail;
  if (!o->name) t->name = pmb_default_target_name(t);
  pmb_progress(&c, "%s: %s %s family %d model %d (%s), %d cores, %d-bit vectors", t->name, t->vendor ? t->vendor : "?",
               t->model_name ? t->model_name : "", t->family, t->model, t->microarchitecture, t->cores, t->max_vector_bits);
  if (!(c.jit = pmb_jit_new(d))) goto fail;
  c.counters = pmb_counters_open(); /* NULL is fine: figures are timed either way */
  for (size_t i = 0; i < PT_ARRAY_LEN(probes); i++) {
    if (probes[i].skipped && probes[i].skipped(o)) continue;
    if (probes[i].run(&c, d) < 0) {
      pt_fail(d, d->err, "while measuring %s", probes[i].name);
      goto fail;
    }
  }

  pmb_clock_summary(&c);
  char why[256];
  pmb_counters_probe(why, sizeof why);
  t->counters = pt_strdup(t->arena, why);
  pmb_progress(&c, "hardware counters: %s", why);
  t->provenance = "measured";
  time_t now = time(NULL);
  struct tm tm;
  gmtime_r(&now, &tm);
  char date[32];
  strftime(date, sizeof date, "%Y-%m-%dT%H:%M:%SZ", &tm);
  t->date = pt_strdup(t->arena, date);
  t->tool = "portent " PORTENT_VERSION;
  t->repetitions = c.reps;
  t->n_sources = 1;
  t->sources = pt_alloc(t->arena, sizeof(char *));
  t->sources[0] = pt_sprintf(t->arena, "portent characterize%s on %s (LLVM host CPU %s)", o->quick ? " --quick" : "",
                             t->host ? t->host : "?", pmb_jit_cpu(c.jit));
  t->notes = pt_sprintf(t->arena,
                        "cycles = seconds x the calibrated core clock; convert rows: one of the two conversions "
                        "of a round trip; vector and floating-point load latency: the chase through the load and a lane-0 move "
                        "to an integer register, minus half the move's round trip (each row's source gives both); "
                        "%s%scharacterization took %.1f s",
                        c.memory_note ? c.memory_note : "", c.memory_note ? "; " : "", pt_now() - t0);
  pmb_jit_free(c.jit);
  pmb_counters_close(c.counters);
  if (ptg_target_validate(t, t->name, d) < 0) {
    ptg_target_free(t);
    return NULL;
  }
  return t;
fail:
  pmb_jit_free(c.jit);
  pmb_counters_close(c.counters);
  ptg_target_free(t);
  return NULL;
}
