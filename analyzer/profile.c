/* Assembling a profile: static analysis of every defined function (CFG, dominators, loops,
 * task graphs, features), then the instrumented run's block counts, thread use and reuse
 * histograms, put in a deterministic order (threads sorted by what they did, not OS ids). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <llvm-c/Core.h>

#include "internal.h"

/* FNV-1a 64 of the printed IR, skipping the "; ModuleID" line so the id names the code,
 * not the path it was read from. */
static const char *module_id(pt_arena *a, LLVMModuleRef mod) {
  char *text = LLVMPrintModuleToString(mod);
  const char *s = text;
  if (strncmp(s, "; ModuleID", 10) == 0) s = strchr(s, '\n') ? strchr(s, '\n') + 1 : s + strlen(s);
  const char *sf = strstr(s, "source_filename = ");
  uint64_t h = 0xcbf29ce484222325ULL; /* FNV offset basis */
  for (const char *c = s; *c; c++) {
    if (c == sf) { /* skip the source_filename line too */
      while (*c && *c != '\n') c++;
      if (!*c) break;
    }
    h = (h ^ (unsigned char)*c) * 0x100000001b3ULL; /* FNV prime */
  }
  LLVMDisposeMessage(text);
  return pt_sprintf(a, "%016llx", (unsigned long long)h);
}

typedef struct {
  pa_profile *p;
  LLVMModuleRef mod;
} id_job;

static void set_module_id(void *arg) {
  id_job *j = arg;
  j->p->module_id = module_id(j->p->arena, j->mod);
}

/* Everything but the module id, which prints the whole module (70% of this function's time on
 * the suite's kernels): pa_profile_build has it made while the child runs. */
static pa_profile *static_without_id(const pa_module *m) {
  pt_arena *a = pt_arena_new();
  pa_profile *p = pt_alloc(a, sizeof *p);
  p->arena = a;
  p->version = PA_PROFILE_VERSION;
  p->source = pt_strdup(a, m->source);
  p->counts_source = "none";
  LLVMValueRef *fns;
  p->n_functions = pa_defined_functions(m->mod, &fns);
  p->functions = pt_alloc(a, sizeof *p->functions * (size_t)(p->n_functions + 1));
  for (int i = 0; i < p->n_functions; i++) {
    pa_function *f = &p->functions[i];
    f->name = pa_value_name(a, fns[i]);
    pa_ptrmap bbmap;
    pa_cfg_build(a, fns[i], f, &bbmap);
    pa_loops_build(a, fns[i], f, &bbmap);
    pa_taskgraph_build(a, fns[i], f);
    pa_static_counts(f, fns[i]);
    pa_ptrmap_free(&bbmap);
    pa_features_add(&p->features, &f->features);
  }
  free(fns);
  p->reuse_by_function = pt_alloc(a, sizeof *p->reuse_by_function * (size_t)(p->n_functions + 1));
  return p;
}

pa_profile *pa_profile_static(const pa_module *m, pt_diag *d) {
  (void)d;
  pa_profile *p = static_without_id(m);
  set_module_id(&(id_job){p, m->mod});
  return p;
}

typedef struct {
  int slot, nf;
  const uint64_t *hist; /* [function][bins + 1] of this thread */
} thread_key;

static int cmp_threads(const void *pa, const void *pb) {
  const thread_key *a = pa, *b = pb;
  size_t n = (size_t)a->nf * PA_TRACKER_WORDS;
  for (size_t i = 0; i < n; i++)
    if (a->hist[i] != b->hist[i]) return a->hist[i] > b->hist[i] ? -1 : 1;
  return a->slot - b->slot;
}

bool pa_function_counted_statically(const pa_function *f) {
  for (int b = 0; b < f->n_blocks; b++)
    if (f->blocks[b].static_count_per_call < 0) return false;
  return f->n_blocks > 0;
}

pa_profile *pa_profile_build(const pa_module *m, const pa_run_spec *spec, const pa_options *opt, pt_diag *d) {
  pa_options defaults = {0};
  if (!opt) opt = &defaults;
  pa_options windowed;
  if (opt->windowed) { /* no block counters: the windows are placed by the static counts */
    windowed = *opt;
    windowed.static_counts = true;
    opt = &windowed;
  }
  if (opt->sample_rate < 0 || opt->sample_rate > 1) {
    pt_fail(d, PT_ERR_INPUT, "sampling rate %g is outside (0, 1]", opt->sample_rate);
    return NULL;
  }
  if (opt->n_llc_sets) {
    const char *why = pa_llc_sets_invalid(opt->n_llc_sets, opt->llc_sets);
    if (why) {
      pt_fail(d, PT_ERR_INPUT, "LLC set counts (llc_sets): %s", why);
      return NULL;
    }
    /* a burst's window holds a few lines per set of a large cache: the 64-set way of sampling
     * them (docs/formats.md) would call most reuses 32 or more */
    if (opt->sample_rate > 0 && opt->sample_rate < 1) {
      pt_fail(d, PT_ERR_INPUT, "LLC set counts (llc_sets) need every access (sample rate 1), got rate %g",
              opt->sample_rate);
      return NULL;
    }
    if (opt->no_reuse) {
      pt_fail(d, PT_ERR_INPUT, "LLC set counts (llc_sets) need the reuse profile, not no_reuse");
      return NULL;
    }
  }
  pa_profile *p = NULL;
  if (opt->windowed) {
    /* the windows are placed over the block executions the static counts give */
    int threads = 1;
    for (int i = 0; i < spec->n_args; i++)
      if (spec->args[i].kind == PA_ARG_POOL && spec->args[i].threads > threads) threads = spec->args[i].threads;
    if (opt->no_reuse || (opt->sample_rate > 0 && opt->sample_rate < 1) || threads > 1 || opt->line_filter) {
      pt_fail(d, PT_ERR_UNSUPPORTED, "windowed reuse: one thread at rate 1 only, without the line filter (got %d threads, rate %g%s)",
              threads, opt->sample_rate, opt->line_filter ? ", line filter" : "");
      return NULL;
    }
    p = pa_profile_static_counts(m, &(pa_static_opts){.entry = spec->entry, .threads = 1}, d);
  } else
    p = static_without_id(m);
  if (!p) return NULL;
  id_job id = {p, m->mod};
  pa_run_result r;
  /* the windowed run's static counts already named the module */
  if (pa_run(m, p, spec, opt, p->module_id ? NULL : &(pa_run_meanwhile){set_module_id, &id}, &r, d)) {
    pa_profile_free(p);
    return NULL;
  }
  pt_arena *a = p->arena;
  p->counts_source = "instrumented";
  memset(p->dynamic_by_op, 0, sizeof p->dynamic_by_op); /* the windowed run's static counts had them */
  p->entry = pt_strdup(a, spec->entry);
  p->seed = spec->seed;
  p->threads = r.threads;
  p->run_seconds = r.seconds;
  p->addresses_removed = r.addresses_removed;
  if (r.addresses_whole[0]) p->addresses_whole = pt_strdup(p->arena, r.addresses_whole);
  double rate = opt->sample_rate > 0 ? opt->sample_rate : 1;
  p->sample_rate = opt->no_reuse ? 0 : rate;
  p->line_filter = opt->line_filter && !opt->no_reuse;
  p->locals_lines = opt->no_reuse ? 0 : r.locals_lines;
  if (opt->windowed) p->window_share = opt->windows.share >= 1 ? 1 : opt->windows.share > 0 ? opt->windows.share : 0.05;
  if (!opt->no_reuse && rate < 1 && opt->exact_window >= 0) {
    pa_tracker *probe = pa_tracker_new(1, rate, opt->exact_window); /* the window the run used */
    p->exact_window = pa_tracker_window(probe);
    pa_tracker_free(probe);
  }
  int base = 0, n_static = 0;
  for (int i = 0; i < p->n_functions; i++) {
    pa_function *f = &p->functions[i];
    bool counted_statically = opt->static_counts && pa_function_counted_statically(f);
    n_static += counted_statically;
    f->calls = r.counts[base]; /* the entry block runs once per call */
    f->threads = __builtin_popcountll(r.thread_mask[i]);
    f->parallel = f->threads > 1;
    for (int b = 0; b < f->n_blocks; b++) {
      pa_block *bl = &f->blocks[b];
      bl->count = counted_statically ? (uint64_t)(bl->static_count_per_call * (double)f->calls + 0.5) : r.counts[base + b];
      bl->count_per_call = f->calls ? (double)bl->count / (double)f->calls : 0;
      for (int k = 0; k < PA_OP_COUNT; k++) p->dynamic_by_op[k] += (double)bl->count * (double)bl->features.by_op[k];
    }
    base += f->n_blocks;
  }
  if (n_static == p->n_functions && n_static > 0) p->counts_source = "static";
  pa_profile_chunk_work(m, p);
  if (!opt->no_reuse && r.threads > 0) {
    int nf = p->n_functions, nt = r.threads;
    thread_key *keys = malloc(sizeof *keys * (size_t)nt);
    for (int s = 0; s < nt; s++)
      keys[s] = (thread_key){s, nf, r.hist + (size_t)s * (size_t)nf * PA_TRACKER_WORDS};
    qsort(keys, (size_t)nt, sizeof *keys, cmp_threads);
    p->reuse = pt_alloc(a, sizeof *p->reuse * (size_t)nt * (size_t)nf + 1);
    for (int f = 0; f < nf; f++)
      for (int t = 0; t < nt; t++) {
        pa_reuse_hist h;
        pa_tracker_hist(keys[t].hist + (size_t)f * PA_TRACKER_WORDS, rate, p->exact_window, &h);
        pa_tracker_llc_hist(keys[t].hist + (size_t)f * PA_TRACKER_WORDS, opt->n_llc_sets, opt->llc_sets, &h);
        /* line filter: the repeats are counted exactly, beside the tracker's estimate */
        const uint64_t *rep = r.repeats + ((size_t)keys[t].slot * (size_t)nf + (size_t)f) * PA_REUSE_BINS;
        /* their distance is a bound (the loop body's lines) in bin k: counted in its first quarter,
         * and per set as 0 (the line was touched in the previous iteration) */
        for (int k = 0; k < PA_REUSE_BINS; k++) {
          h.bins[k] += (double)rep[k], h.quarters[k][0] += (double)rep[k], h.accesses += (double)rep[k];
          h.sets[0] += (double)rep[k];
          for (int i = 0; i < h.n_llc; i++) h.llc[i].bins[0] += (double)rep[k];
        }
        if (h.accesses == 0) continue;
        p->reuse[p->n_reuse++] = (pa_reuse_entry){f, t, h};
        pa_reuse_hist_add(&p->reuse_by_function[f], &h);
        pa_reuse_hist_add(&p->reuse_total, &h);
      }
    free(keys);
  }
  pa_run_result_free(&r);
  return p;
}

pa_profile *pa_profile_llvm(LLVMModuleRef mod, const pa_run_spec *spec, const pa_options *opt, pt_diag *d) {
  pa_module *m = pa_module_from_llvm(mod);
  pa_profile *p = pa_profile_build(m, spec, opt, d);
  pa_module_free(m);
  return p;
}

void pa_profile_free(pa_profile *p) {
  if (p) pt_arena_free(p->arena);
}

const pa_function *pa_profile_function(const pa_profile *p, const char *name) {
  for (int i = 0; i < p->n_functions; i++)
    if (strcmp(p->functions[i].name, name) == 0) return &p->functions[i];
  return NULL;
}

double pa_block_ecount(const pa_function *f, const pa_block *b) {
  double e = b->count_per_call * (double)f->calls;
  return f->parallel && f->threads > 1 ? e / f->threads : e;
}

double pa_chunk_share(const pa_function *f, int threads) {
  int parts = f->n_chunk_work;
  int64_t n = f->chunk_iterations;
  if (parts <= 0 || n <= 0) return -1;
  double total = 0, busiest = 0;
  for (int s = 0; s < parts; s++) total += f->chunk_work[s];
  if (!(total > 0)) return -1;
  if (threads < 1) threads = 1;
  /* each part's work spread evenly over its iterations */
  for (int t = 0; t < threads && t < n; t++) {
    int64_t b, e;
    pt_pool_chunk(n, threads, t, &b, &e);
    double w = 0;
    for (int s = 0; s < parts; s++) {
      int64_t sb, se;
      pt_pool_chunk(n, parts, s, &sb, &se);
      int64_t lo = b > sb ? b : sb, hi = e < se ? e : se;
      if (hi > lo) w += f->chunk_work[s] * (double)(hi - lo) / (double)(se - sb);
    }
    if (w > busiest) busiest = w;
  }
  return busiest / total;
}
