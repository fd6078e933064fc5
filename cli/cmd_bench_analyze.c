/* portent bench analyze: (a) D1 and LL misses predicted from reuse profiles (a 64-set A-way
 * LRU cache misses the accesses at per-set distance >= A plus the cold ones, an LL of N sets
 * likewise from the per-set bins the full profile keeps for N (pa_options.llc_sets); a fully
 * associative LRU cache of S lines those at distance >= S) against callgrind's cache simulation of the same compiled kernel, for suite workloads under
 * two schedules and clang-19-compiled C loop nests, at three cache configurations; (b) the
 * cost of profiling a candidate (static counts + 1% sampled reuse) next to its native time. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "analyzer.h"
#include "bench_valgrind.h"
#include "commands.h"
#include "compiler.h"
#include "predictor.h"

#ifndef PORTENT_BENCH_KERNELS
#define PORTENT_BENCH_KERNELS "bench/kernels"
#endif

/* The first configuration (32 KiB / 1 MiB), a Zen 4/5-like one (48 KiB 12-way,
 * 2 MiB) and a small one (16 KiB 4-way, 256 KiB 8-way). */
static const bv_cache caches[] = {
    {"32K/1M", 32768, 8, 1048576, 16},
    {"48K/2M", 49152, 12, 2097152, 16},
    {"16K/256K", 16384, 4, 262144, 8},
};
enum { N_CACHES = sizeof caches / sizeof caches[0] };

/* The C loop nests in bench/kernels: entry `bench_NAME`, float buffers. */
typedef struct {
  const char *name;
  int n_buffers;
  int64_t floats[3];
} c_kernel;
static const c_kernel c_kernels[] = {
    {"gemm", 3, {200 * 200, 200 * 200, 200 * 200}},
    {"jacobi2d", 2, {400 * 400, 400 * 400}},
    {"stencil2d", 2, {512 * 512, 512 * 512}},
    {"transpose", 2, {520 * 776, 520 * 776}},
};

typedef struct {
  char name[96];
  bool simulated;
  char note[200];
  double accesses; /* line accesses in the exact profile */
  bv_counts measured[N_CACHES];
  /* [config][D1, LL]: exact and 1% profiles (per-set bins where the level has PA_SETS sets,
   * or, exact profile only, the llc bins of an LL's set count; quarter bins otherwise), and the exact profile as session 9 predicted it (fully
   * associative, log2 bins spread evenly) */
  double pred_full[N_CACHES][2], pred_sampled[N_CACHES][2], pred_before[N_CACHES][2];
  double pred_assoc[N_CACHES][2]; /* exact profile, set-associative LRU with random placement */
  double pred_trace[N_CACHES][2]; /* traced profile (no run) */
  /* cost (suite workloads only; 0 when not measured) */
  double native_s, compile_s, sampled_run_s, sampled_total_s, full_run_s, full_total_s;
  double native_lo_s, native_hi_s; /* the smallest and largest of the rounds' native medians */
  /* the traced profile (pa_profile_traced: no run): cost, and its miss-ratio curve's largest
   * distance from the full run's over 4 KiB..64 MiB (-1: not traced, trace_note says why) */
  double trace_s, trace_mrc;
  char trace_note[160];
  /* the windowed run (pa_options.windowed: the compiled kernel, exact tracker in time windows):
   * median run and total cost, and its miss-ratio distance from the full run's (-1: not run) */
  double win_run_s, win_total_s, win_mrc;
  char win_note[160];
  /* the line-filtered sampled run (static counts + 1% SHARDS + pa_options.line_filter, timed with
   * pa_options.addresses_only, which gives the same profile): cost,
   * and miss-ratio distances from the full run at 1% and with the filter alone (rate 1) */
  double filt_run_s, filt_total_s, filt_mrc, filt_exact_mrc;
  char filt_note[160];
} row;

typedef struct {
  bool quick, json, valgrind, keep, cost_only, misses_only;
  int repeats;
  uint64_t seed;
  int64_t max_accesses; /* valgrind only below this many accesses */
  const char *kernels_dir;
  char dir[64];
} options;

static double rel_err(double pred, double meas) { return meas > 0 ? (pred - meas) / meas : (pred > 0 ? INFINITY : 0); }

/* Misses of a level of `bytes` and `ways`: exact from the per-set bins when it has PA_SETS
 * sets (every D1 here) or a set count the profile has llc bins for (the full profile's LLs:
 * llc_opts), else a fully associative LRU cache of its lines (distances >= lines plus cold
 * misses; inside a bin, its quarter's distances spread evenly). `before`: session 9's rule,
 * fully associative with log2 bins spread evenly (the 768-line D1 splits [512, 1024)). */
static double misses(const pa_reuse_hist *h, int64_t bytes, int64_t ways, bool before) {
  int64_t lines = bytes / PA_LINE_BYTES;
  if (before) {
    pa_reuse_hist log2 = *h;
    log2.has_quarters = false;
    log2.n_llc = 0;
    return pa_reuse_misses_at(&log2, (double)lines);
  }
  if (lines == ways * PA_SETS && h->has_sets) return pa_reuse_misses_sets(h, (int)ways);
  double m = lines % ways == 0 && lines / ways <= PA_LLC_SETS_MAX ? pa_reuse_misses_llc(h, (int)(lines / ways), (int)ways) : -1;
  return m >= 0 ? m : pa_reuse_misses_at(h, (double)lines);
}

/* The full profile's options for the miss predictions: every LL configuration's set count as
 * llc bins (`analyze --llc-sets`), so the LLs are predicted per set as the D1s are. */
static pa_options llc_opts(void) {
  pa_options po = {.sample_rate = 1};
  for (int c = 0; c < N_CACHES; c++) {
    int sets = (int)(caches[c].ll_bytes / PA_LINE_BYTES / caches[c].ll_assoc);
    bool seen = false;
    for (int i = 0; i < po.n_llc_sets; i++) seen |= po.llc_sets[i] == sets;
    if (!seen && po.n_llc_sets < PA_LLC_COUNTS) po.llc_sets[po.n_llc_sets++] = sets;
  }
  return po;
}

/* Set-associative columns: the predictor's own model of a level (pp_misses_set_assoc). */
static void predict(const pa_profile *p, double out[N_CACHES][2], double before[N_CACHES][2], double assoc[N_CACHES][2]) {
  for (int c = 0; c < N_CACHES; c++) {
    out[c][0] = misses(&p->reuse_total, caches[c].d1_bytes, caches[c].d1_assoc, false);
    out[c][1] = misses(&p->reuse_total, caches[c].ll_bytes, caches[c].ll_assoc, false);
    if (before) {
      before[c][0] = misses(&p->reuse_total, caches[c].d1_bytes, caches[c].d1_assoc, true);
      before[c][1] = misses(&p->reuse_total, caches[c].ll_bytes, caches[c].ll_assoc, true);
    }
    if (assoc) {
      assoc[c][0] = pp_misses_set_assoc(&p->reuse_total, caches[c].d1_bytes / PA_LINE_BYTES, (int)caches[c].d1_assoc);
      assoc[c][1] = pp_misses_set_assoc(&p->reuse_total, caches[c].ll_bytes / PA_LINE_BYTES, (int)caches[c].ll_assoc);
    }
  }
}

/* The line-filtered sampled profile bench analyze times (what the tuner's analytic model runs). */
static const pa_options filtered_opts = {.sample_rate = 0.01, .static_counts = true, .line_filter = true, .addresses_only = true};

/* The traced, windowed and line-filtered profiles against the full one (miss-ratio distances). */
static void other_profiles(row *r, pa_module *m, const pa_run_spec *spec, const pa_profile *full) {
  pt_diag d = {0};
  pa_profile *traced = pa_profile_traced(m, &(pa_static_opts){spec->entry, 1}, NULL, &d);
  if (traced) {
    r->trace_mrc = pa_reuse_mrc_distance(&full->reuse_total, &traced->reuse_total, 4096 / PA_LINE_BYTES,
                                         (64 << 20) / PA_LINE_BYTES);
    predict(traced, r->pred_trace, NULL, NULL);
  } else
    snprintf(r->trace_note, sizeof r->trace_note, "%.150s", d.msg);
  pa_profile_free(traced);
  r->win_mrc = -1;
  pa_profile *windowed = pa_profile_build(m, spec, &(pa_options){.windowed = true}, &d);
  if (windowed)
    r->win_mrc = pa_reuse_mrc_distance(&full->reuse_total, &windowed->reuse_total, 4096 / PA_LINE_BYTES,
                                       (64 << 20) / PA_LINE_BYTES);
  else
    snprintf(r->win_note, sizeof r->win_note, "%.150s", d.msg);
  pa_profile_free(windowed);
  r->filt_mrc = r->filt_exact_mrc = -1;
  pa_profile *fe = pa_profile_build(m, spec, &(pa_options){.sample_rate = 1, .line_filter = true}, &d);
  if (fe) r->filt_exact_mrc = pa_reuse_mrc_distance(&full->reuse_total, &fe->reuse_total, 4096 / PA_LINE_BYTES,
                                                    (64 << 20) / PA_LINE_BYTES);
  pa_profile_free(fe);
  pa_profile *fs = pa_profile_build(m, spec, &filtered_opts, &d);
  if (fs) r->filt_mrc = pa_reuse_mrc_distance(&full->reuse_total, &fs->reuse_total, 4096 / PA_LINE_BYTES,
                                              (64 << 20) / PA_LINE_BYTES);
  else snprintf(r->filt_note, sizeof r->filt_note, "%.150s", d.msg);
  pa_profile_free(fs);
}

/* Profiles `m` exactly (predictions, full-run cost) and at 1% (predictions); then, below the
 * size limit, compiles the IR file and simulates it. */
static void analyze_case(const options *o, row *r, pa_module *m, const pa_run_spec *spec, const char *ir,
                         bool portent_abi, int n_buffers, const int64_t *floats) {
  pt_diag d = {0};
  r->trace_mrc = r->win_mrc = -1;
  /* the predictions' full profile has the LLs' llc bins; the cost figures are a default
   * profile's (made apart when both are wanted) */
  pa_options fo = o->cost_only ? (pa_options){.sample_rate = 1} : llc_opts();
  double t0 = pt_now();
  pa_profile *full = pa_profile_build(m, spec, &fo, &d);
  r->full_total_s = pt_now() - t0;
  if (!full) {
    snprintf(r->note, sizeof r->note, "profile: %.180s", d.msg);
    return;
  }
  r->full_run_s = full->run_seconds;
  if (!o->cost_only && !o->misses_only) {
    t0 = pt_now();
    pa_profile *plain = pa_profile_build(m, spec, &(pa_options){.sample_rate = 1}, &d);
    r->full_total_s = pt_now() - t0;
    r->full_run_s = plain ? plain->run_seconds : 0;
    pa_profile_free(plain);
  }
  r->accesses = full->reuse_total.accesses;
  predict(full, r->pred_full, r->pred_before, r->pred_assoc);
  if (!o->misses_only) other_profiles(r, m, spec, full);
  pa_profile_free(full);
  if (o->cost_only) {
    snprintf(r->note, sizeof r->note, "not simulated: --cost-only");
    return;
  }
  pa_profile *sampled = pa_profile_build(m, spec, &(pa_options){.sample_rate = 0.01, .static_counts = true}, &d);
  if (sampled) predict(sampled, r->pred_sampled, NULL, NULL);
  pa_profile_free(sampled);
  if (!o->valgrind) {
    snprintf(r->note, sizeof r->note, "valgrind not installed");
    return;
  }
  if (r->accesses > (double)o->max_accesses) {
    snprintf(r->note, sizeof r->note, "not simulated: %.3g accesses > --max-accesses %lld", r->accesses,
             (long long)o->max_accesses);
    return;
  }
  char obj[128], exe[128], err[512] = "";
  snprintf(obj, sizeof obj, "%s/kernel.o", o->dir);
  snprintf(exe, sizeof exe, "%s/kernel.exe", o->dir);
  if (bv_compile_object(ir, obj, portent_abi ? "x86-64-v2" : "x86-64-v3", err, sizeof err) ||
      bv_build_driver(o->dir, spec->entry, portent_abi, n_buffers, floats, obj, exe, o->keep, err, sizeof err) ||
      bv_simulate(o->dir, exe, spec->entry, N_CACHES, caches, o->keep, r->measured, err, sizeof err))
    snprintf(r->note, sizeof r->note, "%.190s", err);
  else
    r->simulated = true;
  if (!o->keep) unlink(obj), unlink(exe);
}

/* The seconds of one profile of the module with these options, appended to its round's
 * figures: the instrumented run's and the whole build's (instrumenting, JIT, run). A kind whose
 * build failed once is not built again (*failed). */
typedef struct {
  double run[16], total[16];
  int n;
  bool failed;
} build_times;

static void time_build(pa_module *m, const pa_run_spec *spec, const pa_options *po, build_times *t) {
  if (t->failed || t->n == 16) return;
  pt_diag d = {0};
  double t0 = pt_now();
  pa_profile *p = pa_profile_build(m, spec, po, &d);
  if (!p) {
    t->failed = true;
    return;
  }
  t->total[t->n] = pt_now() - t0;
  t->run[t->n++] = p->run_seconds;
  pa_profile_free(p);
}

/* Native time and the profiles' costs in o->repeats rounds, each the native kernel timed (child
 * process, checked against the reference; the median of its runs over min_time / rounds) and
 * then one profile of each kind, so that a slow spell of the machine falls on both sides of a
 * ratio instead of on one: each figure is the median of its rounds (the native one the median
 * of the rounds' medians), and the ratios are taken from those medians. */
static void measure_cost(const options *o, row *r, const pc_state *s, const pc_program *prog, const pc_reference *ref,
                         pa_module *m, const pa_run_spec *spec) {
  int rounds = o->repeats < 16 ? o->repeats : 16;
  pc_measure_opts mo;
  pc_measure_opts_default(&mo);
  mo.threads = 1;
  mo.min_time_s = (o->quick ? 0.05 : 0.2) / rounds;
  mo.timeout_s = 60;
  pt_diag d = {0};
  pc_kernel *k = pc_lower(s, &(pc_lower_opts){0}, &d); /* compiled once, timed every round */
  if (!k) {
    snprintf(r->note, sizeof r->note, "lower: %.180s", d.msg);
    return;
  }
  build_times sampled = {0}, windowed = {.failed = r->win_mrc < 0}, filtered = {.failed = r->filt_mrc < 0};
  double native[16], traced[16];
  int n_traced = 0;
  bool trace = r->trace_mrc >= 0;
  for (int i = 0; i < rounds; i++) {
    pc_measure_result mr;
    if (pc_measure_kernel(k, prog, ref, &mo, &mr, &d) != 0 || mr.error != PC_MEASURE_OK) {
      snprintf(r->note, sizeof r->note, "measure: %.180s", d.msg[0] ? d.msg : mr.message);
      pc_kernel_free(k);
      r->native_s = 0;
      return;
    }
    native[i] = mr.median_s;
    r->compile_s = mr.compile_s;
    time_build(m, spec, &(pa_options){.sample_rate = 0.01, .static_counts = true}, &sampled);
    if (trace) {
      double t0 = pt_now();
      pa_profile *p = pa_profile_traced(m, &(pa_static_opts){spec->entry, 1}, NULL, &d);
      if (p) traced[n_traced++] = pt_now() - t0;
      else trace = false;
      pa_profile_free(p);
    }
    time_build(m, spec, &(pa_options){.windowed = true}, &windowed);
    time_build(m, spec, &filtered_opts, &filtered);
  }
  pc_kernel_free(k);
  r->native_s = pt_median(native, rounds);
  r->native_lo_s = r->native_hi_s = native[0];
  for (int i = 1; i < rounds; i++) {
    if (native[i] < r->native_lo_s) r->native_lo_s = native[i];
    if (native[i] > r->native_hi_s) r->native_hi_s = native[i];
  }
  r->trace_s = pt_median(traced, n_traced);
  r->sampled_run_s = pt_median(sampled.run, sampled.n), r->sampled_total_s = pt_median(sampled.total, sampled.n);
  r->win_run_s = pt_median(windowed.run, windowed.n), r->win_total_s = pt_median(windowed.total, windowed.n);
  r->filt_run_s = pt_median(filtered.run, filtered.n), r->filt_total_s = pt_median(filtered.total, filtered.n);
}

/* Instructions the candidate executes (static counts x instructions per block, one thread);
 * -1 when its counts need a run. */
static double static_instructions(const pc_state *s) {
  pt_diag d = {0};
  pc_kernel *k = pc_lower(s, &(pc_lower_opts){0}, &d);
  if (!k) return -1;
  pa_module *m = pa_module_from_llvm(pc_kernel_module(k));
  pa_profile *p = pa_profile_static_counts(m, &(pa_static_opts){pc_kernel_name(k), 1}, &d);
  double n = -1;
  if (p) {
    n = 0;
    for (int op = 0; op < PA_OP_COUNT; op++) n += p->dynamic_by_op[op];
  }
  pa_profile_free(p);
  pa_module_free(m);
  pc_kernel_free(k);
  return n;
}

enum { RANDOM_SEEDS = 8 };

/* A suite workload under its default schedule (which 0) or a random one (which 1): of the
 * random schedules of seeds seed .. seed+7, the one that executes the fewest instructions
 * (static counts; the next fewest when it fails to run or to match the reference), so a
 * "tuned-looking" candidate rather than a pathological one (which would also take minutes
 * under valgrind), and the same one in every run: choosing by a timed run picked a different
 * one from run to run, and the cost figures with it. */
static int workload_case(const options *o, const char *wname, int which, row *r) {
  pt_diag d = {0};
  pc_program *prog = pc_workload_build(wname, &d);
  if (!prog) {
    fprintf(stderr, "portent bench analyze: %s\n", d.msg);
    return -1;
  }
  pc_measure_opts mo;
  pc_measure_opts_default(&mo);
  pc_reference *ref = pc_reference_new(prog, &mo, &d);
  pc_state *s = NULL;
  snprintf(r->name, sizeof r->name, "%s %s", wname, which ? "random" : "default");
  if (ref && !which) {
    s = pc_state_new(prog);
    if (pc_schedule_default(s, 16, &d)) pc_state_free(s), s = NULL;
  }
  pc_state *cand[RANDOM_SEEDS] = {0};
  double instructions[RANDOM_SEEDS];
  for (int i = 0; ref && which && i < RANDOM_SEEDS; i++) {
    pt_rng rng = {o->seed + (uint64_t)i};
    pt_diag dc = {0};
    cand[i] = pc_state_new(prog);
    instructions[i] = pc_schedule_random(cand[i], &rng, &dc) == 0 ? static_instructions(cand[i]) : -1;
  }
  for (int tries = 0; ref && which && !s && tries < RANDOM_SEEDS; tries++) {
    int best = -1;
    for (int i = 0; i < RANDOM_SEEDS; i++)
      if (instructions[i] >= 0 && (best < 0 || instructions[i] < instructions[best])) best = i;
    if (best < 0) break;
    instructions[best] = -1; /* tried */
    pc_measure_opts q;
    pc_measure_opts_default(&q);
    q.threads = 1, q.min_time_s = 0.001, q.timeout_s = 60;
    pc_measure_result mr;
    pt_diag dc = {0};
    if (pc_measure(cand[best], ref, &q, &mr, &dc) == 0 && mr.error == PC_MEASURE_OK) {
      s = cand[best], cand[best] = NULL;
      snprintf(r->name, sizeof r->name, "%s random(seed %llu)", wname, (unsigned long long)(o->seed + (uint64_t)best));
    }
  }
  for (int i = 0; i < RANDOM_SEEDS; i++) pc_state_free(cand[i]);
  if (!s) {
    snprintf(r->note, sizeof r->note, "no schedule: %.150s", d.msg[0] ? d.msg : "none of the random ones ran");
    pc_reference_free(ref);
    pc_program_free(prog);
    return 0;
  }
  pc_kernel *k = pc_lower(s, &(pc_lower_opts){0}, &d);
  char ir[128];
  snprintf(ir, sizeof ir, "%s/kernel.ll", o->dir);
  if (k && pc_kernel_emit(k, ir, &d) == 0) {
    int nb = pc_kernel_n_buffers(k);
    int64_t *floats = malloc(sizeof *floats * (size_t)(nb + 1));
    for (int b = 0; b < nb; b++) floats[b] = pc_kernel_buffer_numel(k, b);
    pa_run_spec *spec = pa_run_spec_portent(pc_kernel_name(k), nb, floats, 1, o->seed);
    spec->timeout_s = 120;
    pa_module *m = pa_module_from_llvm(pc_kernel_module(k));
    analyze_case(o, r, m, spec, ir, true, nb, floats);
    if (!o->misses_only) measure_cost(o, r, s, prog, ref, m, spec);
    pa_module_free(m);
    pa_run_spec_free(spec);
    free(floats);
  } else
    snprintf(r->note, sizeof r->note, "lower: %.180s", d.msg);
  if (!o->keep) unlink(ir);
  pc_kernel_free(k);
  pc_state_free(s);
  pc_reference_free(ref);
  pc_program_free(prog);
  return 0;
}

static void c_case(const options *o, const c_kernel *ck, row *r) {
  snprintf(r->name, sizeof r->name, "C %s", ck->name);
  char src[1024], ir[128], entry[64], err[512] = "";
  snprintf(src, sizeof src, "%s/%s.c", o->kernels_dir, ck->name);
  snprintf(ir, sizeof ir, "%s/%s.ll", o->dir, ck->name);
  snprintf(entry, sizeof entry, "bench_%s", ck->name);
  char *argv[] = {LLVM_BIN_DIR "/clang", "-O2", "-march=x86-64-v3", "-S", "-emit-llvm", src, "-o", ir, NULL};
  if (bv_spawn(argv, NULL) != 0) {
    snprintf(r->note, sizeof r->note, "clang -O2 %.150s failed", src);
    return;
  }
  pt_diag d = {0};
  pa_module *m = pa_module_load(ir, &d);
  pt_sbuf js = {calloc(1, 1024), 1024, 0};
  pt_sbuf_printf(&js, "{\"version\": 1, \"entry\": \"%s\", \"seed\": %llu, \"timeout_s\": 120, \"args\": [", entry,
                 (unsigned long long)o->seed);
  for (int i = 0; i < ck->n_buffers; i++)
    pt_sbuf_printf(&js, "%s{\"kind\": \"buffer\", \"type\": \"f32\", \"count\": %lld}", i ? ", " : "",
                   (long long)ck->floats[i]);
  pt_sbuf_printf(&js, "]}");
  pa_run_spec *spec = m ? pa_run_spec_parse(js.buf, "bench spec", &d) : NULL;
  if (spec) analyze_case(o, r, m, spec, ir, false, ck->n_buffers, ck->floats);
  else snprintf(r->note, sizeof r->note, "%.190s", d.msg[0] ? d.msg : err);
  free(js.buf);
  pa_run_spec_free(spec);
  pa_module_free(m);
  if (!o->keep) unlink(ir);
}

static void print_text(const row *rows, int n) {
  printf("Misses predicted from the reuse profile vs callgrind --cache-sim (error = predicted / measured - 1)\n"
         "  before: session 9's rule, a fully associative LRU cache, log2 bins spread evenly\n"
         "  predicted: a 64-set level (every D1 here) from the per-set bins, an LL from the per-set bins of\n"
         "             its set count (analyze --llc-sets); pred 1%%: static counts + a 1%% SHARDS-sampled\n"
         "             profile, its LLs fully associative with quarter bins (no llc bins when sampled);\n"
         "  pred assoc: the predictor's random-placement associativity term on the log2 bins\n");
  printf("%-34s %-9s %-3s %12s %12s %8s %12s %8s %12s %8s %12s %8s\n", "case", "caches", "lvl", "callgrind", "before",
         "error", "predicted", "error", "pred 1%", "error", "pred assoc", "error");
  for (int i = 0; i < n; i++) {
    const row *r = &rows[i];
    if (!r->simulated) {
      printf("%-34s %s\n", r->name, r->note);
      continue;
    }
    for (int c = 0; c < N_CACHES; c++)
      for (int l = 0; l < 2; l++) {
        double meas = l ? r->measured[c].ll_misses : r->measured[c].d1_misses;
        printf("%-34s %-9s %-3s %12.0f %12.0f %+7.1f%% %12.0f %+7.1f%% %12.0f %+7.1f%% %12.0f %+7.1f%%\n", r->name,
               caches[c].name, l ? "LL" : "D1", meas, r->pred_before[c][l], 100 * rel_err(r->pred_before[c][l], meas),
               r->pred_full[c][l], 100 * rel_err(r->pred_full[c][l], meas), r->pred_sampled[c][l],
               100 * rel_err(r->pred_sampled[c][l], meas), r->pred_assoc[c][l], 100 * rel_err(r->pred_assoc[c][l], meas));
      }
  }
  int n_sim = 0;
  for (int i = 0; i < n; i++) n_sim += rows[i].simulated;
  if (n_sim)
    printf("\nSummary over simulated cases: median |error| and cases within 10%% (before / predicted / pred 1%% / "
           "pred assoc)\n");
  for (int c = 0; c < N_CACHES && n_sim; c++)
    for (int l = 0; l < 2; l++) {
      double e[4][256];
      int k = 0, in[4] = {0};
      for (int i = 0; i < n && k < 256; i++) {
        if (!rows[i].simulated) continue;
        const row *r = &rows[i];
        double meas = l ? r->measured[c].ll_misses : r->measured[c].d1_misses;
        const double pred[4] = {r->pred_before[c][l], r->pred_full[c][l], r->pred_sampled[c][l], r->pred_assoc[c][l]};
        for (int m = 0; m < 4; m++) e[m][k] = fabs(rel_err(pred[m], meas)), in[m] += e[m][k] <= 0.10;
        k++;
      }
      printf("  %-9s %-3s median |error|", caches[c].name, l ? "LL" : "D1");
      for (int m = 0; m < 4; m++) printf("%s%5.1f%%", m ? " /" : " ", 100 * pt_median(e[m], k));
      printf(", within 10%%:");
      for (int m = 0; m < 4; m++) printf("%s%d/%d", m ? " / " : " ", in[m], k);
      printf("\n");
    }
  for (int c = 0; c < N_CACHES && n_sim; c++)
    for (int l = 0; l < 2; l++) {
      double e[256];
      int k = 0, in = 0;
      for (int i = 0; i < n && k < 256; i++) {
        if (!rows[i].simulated || rows[i].trace_mrc < 0) continue;
        double meas = l ? rows[i].measured[c].ll_misses : rows[i].measured[c].d1_misses;
        e[k] = fabs(rel_err(rows[i].pred_trace[c][l], meas));
        in += e[k++] <= 0.10;
      }
      printf("  %-9s %-3s traced profile (no run): median |error| %6.1f%%, within 10%%: %d/%d\n", caches[c].name,
             l ? "LL" : "D1", 100 * pt_median(e, k), in, k);
    }
  printf("\nTraced reuse (no run, analyzer/trace.c) against the full run: largest miss-ratio difference over fully\n"
         "associative caches of 4 KiB..64 MiB\n");
  for (int i = 0; i < n; i++) {
    const row *r = &rows[i];
    if (r->trace_mrc >= 0) printf("%-34s mrc %.4f\n", r->name, r->trace_mrc);
    else if (r->trace_note[0]) printf("%-34s not traced: %s\n", r->name, r->trace_note);
  }
  printf("\nWindowed run (the compiled kernel, exact tracker in 4 windows of 5%% of its block executions, each\n"
         "after an 8 MiB warm-up) against the full run, same measure\n");
  for (int i = 0; i < n; i++) {
    const row *r = &rows[i];
    if (r->win_mrc >= 0) printf("%-34s mrc %.4f\n", r->name, r->win_mrc);
    else if (r->win_note[0]) printf("%-34s not windowed: %s\n", r->name, r->win_note);
  }
  printf("\nCost per candidate, one thread (x = / native kernel time; sampled = static counts + 1%% "
         "SHARDS; JIT and fork included in 'total'; each figure the median of --repeats rounds, a round the\n"
         "native kernel timed and then one profile of each kind, the native figure the median of the rounds' medians)\n");
  printf("%-34s %10s %10s %11s %8s %11s %8s %11s %8s %10s %7s\n", "case", "native ms", "compile ms", "sampled run", "x",
         "sampled tot", "x", "full run", "x", "traced ms", "x");
  double xs[256], xt[256], xf[256], xr[256];
  int k = 0, kf = 0, kr = 0;
  for (int i = 0; i < n; i++) {
    const row *r = &rows[i];
    if (!(r->native_s > 0)) continue;
    printf("%-34s %10.3f %10.1f %11.3f %8.1f %11.1f %8.1f %11.1f %8.1f %10.2f %7.1f\n", r->name, r->native_s * 1e3,
           r->compile_s * 1e3, r->sampled_run_s * 1e3, r->sampled_run_s / r->native_s, r->sampled_total_s * 1e3,
           r->sampled_total_s / r->native_s, r->full_run_s * 1e3, r->full_run_s / r->native_s, r->trace_s * 1e3,
           r->trace_s / r->native_s);
    if (kr < 256 && r->trace_s > 0) xr[kr++] = r->trace_s / r->native_s;
    if (k < 256 && r->sampled_run_s > 0) xs[k] = r->sampled_run_s / r->native_s, xt[k++] = r->sampled_total_s / r->native_s;
    if (kf < 256 && r->full_run_s > 0) xf[kf++] = r->full_run_s / r->native_s;
  }
  if (k)
    printf("median: sampled run %.1fx native, sampled total %.1fx (%d candidates); full instrumented run %.1fx (%d)\n",
           pt_median(xs, k), pt_median(xt, k), k, pt_median(xf, kf), kf);
  if (kr) printf("median: traced profile (static counts + traced reuse, no run) %.1fx native (%d candidates)\n", pt_median(xr, kr), kr);
  printf("\nWindowed run (static counts + exact reuse in time windows; run = the instrumented kernel, total\n"
         "adds fork, bitcode, JIT and static analysis)\n%-34s %10s %11s %8s %11s %8s\n", "case", "native ms",
         "windows run", "x", "windows tot", "x");
  double xw[256], xwt[256];
  int kw = 0;
  for (int i = 0; i < n; i++) {
    const row *r = &rows[i];
    if (!(r->native_s > 0) || !(r->win_run_s > 0)) continue;
    printf("%-34s %10.3f %11.3f %8.1f %11.1f %8.1f\n", r->name, r->native_s * 1e3, r->win_run_s * 1e3,
           r->win_run_s / r->native_s, r->win_total_s * 1e3, r->win_total_s / r->native_s);
    if (kw < 256) xw[kw] = r->win_run_s / r->native_s, xwt[kw++] = r->win_total_s / r->native_s;
  }
  if (kw) printf("median: windowed run %.1fx native, windowed total %.1fx (%d candidates)\n", pt_median(xw, kw), pt_median(xwt, kw), kw);
  printf("\nLine-filtered sampled run (static counts + 1%% SHARDS + line filter, docs/design.md; its cost from the run of\n"
         "the addresses alone, --addresses-only: the same profile): miss-ratio distance from the full run with the filter\n"
         "alone (rate 1) and at 1%%, and its cost (run, and total with fork and JIT)\n"
         "%-34s %9s %9s %10s %11s %8s %11s %8s %10s\n", "case", "mrc r=1", "mrc 1%", "native ms", "filt run", "x", "filt tot",
         "x", "native hi/lo");
  double xf1[256], xft[256], worst = 0;
  int kfl = 0;
  for (int i = 0; i < n; i++) {
    const row *r = &rows[i];
    if (r->filt_mrc < 0) {
      if (r->filt_note[0]) printf("%-34s not profiled: %s\n", r->name, r->filt_note);
      continue;
    }
    if (r->filt_mrc > worst) worst = r->filt_mrc;
    if (!(r->native_s > 0) || !(r->filt_run_s > 0)) {
      printf("%-34s %9.4f %9.4f\n", r->name, r->filt_exact_mrc, r->filt_mrc);
      continue;
    }
    printf("%-34s %9.4f %9.4f %10.3f %11.3f %8.1f %11.1f %8.1f %10.2f\n", r->name, r->filt_exact_mrc, r->filt_mrc,
           r->native_s * 1e3, r->filt_run_s * 1e3, r->filt_run_s / r->native_s, r->filt_total_s * 1e3,
           r->filt_total_s / r->native_s, r->native_lo_s > 0 ? r->native_hi_s / r->native_lo_s : 0);
    if (kfl < 256) xf1[kfl] = r->filt_run_s / r->native_s, xft[kfl++] = r->filt_total_s / r->native_s;
  }
  if (kfl)
    printf("median: line-filtered run %.1fx native, total %.1fx (%d candidates); largest mrc distance at 1%% %.4f\n",
           pt_median(xf1, kfl), pt_median(xft, kfl), kfl, worst);
}

static void print_json(const row *rows, int n) {
  printf("{\"caches\": [");
  for (int c = 0; c < N_CACHES; c++)
    printf("%s{\"name\": \"%s\", \"d1\": [%lld, %lld, 64], \"ll\": [%lld, %lld, 64]}", c ? ", " : "", caches[c].name,
           (long long)caches[c].d1_bytes, (long long)caches[c].d1_assoc, (long long)caches[c].ll_bytes,
           (long long)caches[c].ll_assoc);
  printf("],\n \"cases\": [");
  for (int i = 0; i < n; i++) {
    const row *r = &rows[i];
    printf("%s\n  {\"name\": \"%s\", \"simulated\": %s, \"note\": \"%s\", \"accesses\": %.0f, \"levels\": [", i ? "," : "",
           r->name, r->simulated ? "true" : "false", r->note, r->accesses);
    for (int c = 0; r->simulated && c < N_CACHES; c++)
      for (int l = 0; l < 2; l++) {
        double meas = l ? r->measured[c].ll_misses : r->measured[c].d1_misses;
        printf("%s{\"caches\": \"%s\", \"level\": \"%s\", \"measured\": %.0f, \"predicted\": %.1f, \"error\": %.4f, "
               "\"predicted_before\": %.1f, \"error_before\": %.4f, \"predicted_sampled\": %.1f, \"error_sampled\": %.4f, "
               "\"predicted_assoc\": %.1f, \"error_assoc\": %.4f}",
               c || l ? ", " : "", caches[c].name, l ? "LL" : "D1", meas, r->pred_full[c][l],
               rel_err(r->pred_full[c][l], meas), r->pred_before[c][l], rel_err(r->pred_before[c][l], meas),
               r->pred_sampled[c][l], rel_err(r->pred_sampled[c][l], meas), r->pred_assoc[c][l],
               rel_err(r->pred_assoc[c][l], meas));
      }
    printf("], \"native_s\": %.6g, \"compile_s\": %.6g, \"sampled_run_s\": %.6g, \"sampled_total_s\": %.6g, "
           "\"full_run_s\": %.6g, \"full_total_s\": %.6g, \"trace_s\": %.6g, \"trace_mrc\": %.6g, \"windows_run_s\": %.6g, "
           "\"windows_total_s\": %.6g, \"windows_mrc\": %.6g, \"filtered_run_s\": %.6g, \"filtered_total_s\": %.6g, "
           "\"native_min_round_s\": %.6g, \"native_max_round_s\": %.6g, \"filtered_mrc\": %.6g, \"filtered_exact_mrc\": %.6g}",
           r->native_s, r->compile_s, r->sampled_run_s, r->sampled_total_s, r->full_run_s, r->full_total_s, r->trace_s,
           r->trace_mrc, r->win_run_s, r->win_total_s, r->win_mrc, r->filt_run_s, r->filt_total_s, r->native_lo_s, r->native_hi_s, r->filt_mrc,
           r->filt_exact_mrc);
  }
  printf("\n]}\n");
}

static void usage(FILE *f) {
  fprintf(f,
          "usage: portent bench analyze [--quick] [--json] [--workloads a,b,...] [--kernels DIR] [--seed S]\n"
          "                             [--repeats N] [--max-accesses N] [--cost-only | --misses-only]\n\n"
          "(a) D1 and LL misses predicted from reuse profiles (exact and 1%% sampled; a 64-set level from\n"
          "the per-set bins, an LL from the exact profile's bins of its set count (analyze --llc-sets), others\n"
          "as fully associative caches; 'before' = fully associative, log2 bins) against callgrind's\n"
          "cache simulation of the same compiled kernel (AVX2 object from the same IR, run once on cold\n"
          "caches by a generated driver) for %d cache configurations, for each suite workload under its\n"
          "default schedule and a random one (of seeds S..S+7, the one that executes the fewest instructions\n"
          "by its static counts: the case's name gives its seed), and for the C loop nests in DIR (default %s).\n"
          "(b) per suite candidate: native time (one thread), and the median time of a profile with static\n"
          "counts + 1%% sampled reuse (instrumented run alone, and with fork + JIT), and of the full one.\n\n"
          "  --quick            jacobi2d and transpose, and dwconv_mb's default schedule only\n"
          "  --workloads LIST   suite workloads to use (default: all; 'none' for the C kernels only)\n"
          "  --max-accesses N   simulate only cases of at most N line accesses (default 40000000)\n"
          "  --repeats N        rounds per candidate (1..16, default 3): in each the native kernel is timed\n"
          "                     and then each kind of profile made once; figures are the rounds' medians\n"
          "  --keep             keep the temporary folder (IR, object, driver, callgrind output)\n"
          "  --cost-only        part (b) only: no C kernels, no cache simulation\n"
          "  --misses-only      part (a) only (exact and 1%% profiles against callgrind): no costs, no traced,\n"
          "                     windowed or line-filtered profiles\n",
          N_CACHES, PORTENT_BENCH_KERNELS);
  fprintf(f, "Exit 1 if a case failed to profile or simulate, 2 for bad usage.\n");
}

int cmd_bench_analyze(int argc, char **argv) {
  options o = {.repeats = 3, .seed = 1, .max_accesses = 40000000, .kernels_dir = PORTENT_BENCH_KERNELS};
  const char *only = NULL;
  for (int i = 1; i < argc; i++) {
    bool v = i + 1 < argc;
    if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
      usage(stdout);
      return EXIT_OK;
    } else if (strcmp(argv[i], "--quick") == 0) o.quick = true;
    else if (strcmp(argv[i], "--json") == 0) o.json = true;
    else if (strcmp(argv[i], "--keep") == 0) o.keep = true;
    else if (strcmp(argv[i], "--cost-only") == 0) o.cost_only = true;
    else if (strcmp(argv[i], "--misses-only") == 0) o.misses_only = true;
    else if (strcmp(argv[i], "--workloads") == 0 && v) only = argv[++i];
    else if (strcmp(argv[i], "--kernels") == 0 && v) o.kernels_dir = argv[++i];
    else if (strcmp(argv[i], "--seed") == 0 && v) o.seed = strtoull(argv[++i], NULL, 10);
    else if (strcmp(argv[i], "--repeats") == 0 && v) o.repeats = atoi(argv[++i]);
    else if (strcmp(argv[i], "--max-accesses") == 0 && v) o.max_accesses = atoll(argv[++i]);
    else {
      fprintf(stderr, "portent bench analyze: unknown or incomplete option '%s'\n", argv[i]);
      usage(stderr);
      return EXIT_USAGE;
    }
  }
  if (o.cost_only && o.misses_only) {
    fprintf(stderr, "portent bench analyze: --cost-only and --misses-only exclude each other\n");
    return EXIT_USAGE;
  }
  if (o.repeats < 1 || o.repeats > 16) {
    fprintf(stderr, "portent bench analyze: --repeats must be in 1..16\n");
    return EXIT_USAGE;
  }
  struct stat st;
  if (stat(o.kernels_dir, &st) != 0 || !S_ISDIR(st.st_mode)) {
    fprintf(stderr, "portent bench analyze: kernel directory '%s' not found (--kernels DIR)\n", o.kernels_dir);
    return EXIT_USAGE;
  }
  o.valgrind = bv_have_valgrind();
  if (!o.valgrind) fprintf(stderr, "portent bench analyze: valgrind not found: predictions only\n");
  snprintf(o.dir, sizeof o.dir, "/tmp/portent-bench-analyze-XXXXXX");
  if (!mkdtemp(o.dir)) {
    perror("portent bench analyze: mkdtemp");
    return EXIT_FAILED;
  }
  row *rows = calloc(256, sizeof *rows);
  int n = 0;
  for (size_t i = 0; i < PT_ARRAY_LEN(c_kernels) && !o.cost_only; i++) {
    if (o.quick && strcmp(c_kernels[i].name, "jacobi2d") != 0 && strcmp(c_kernels[i].name, "transpose") != 0) continue;
    fprintf(stderr, "C %s...\n", c_kernels[i].name);
    c_case(&o, &c_kernels[i], &rows[n++]);
  }
  const char *list = only ? only : o.quick ? "dwconv_mb" : NULL;
  for (int w = 0; w < pc_suite_count() && n < 250; w++) {
    const char *name = pc_suite_name(w);
    if (list) {
      size_t len = strlen(name);
      const char *hit = strstr(list, name);
      while (hit && !((hit == list || hit[-1] == ',') && (hit[len] == ',' || hit[len] == 0))) hit = strstr(hit + 1, name);
      if (!hit) continue;
    }
    for (int which = 0; which < (o.quick ? 1 : 2); which++) {
      fprintf(stderr, "%s %s...\n", name, which ? "random" : "default");
      workload_case(&o, name, which, &rows[n]);
      n++;
    }
  }
  if (o.keep) fprintf(stderr, "kept the IR, objects, drivers and callgrind files of the last case in %s\n", o.dir);
  else rmdir(o.dir);
  int failed = 0;
  for (int i = 0; i < n; i++) failed += !rows[i].simulated && o.valgrind && !strstr(rows[i].note, "not simulated");
  if (o.json) print_json(rows, n);
  else print_text(rows, n);
  free(rows);
  return failed ? EXIT_FAILED : EXIT_OK;
}
