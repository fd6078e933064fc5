/* A whole profile's counts without running: count(F), block counts, threads and the parallel
 * flag in the form the instrumented run gives them. The entry runs once; direct calls and
 * pt_parallel_for calls pass their executions down the call graph, and a parallel body
 * (named in !portent.parallel with its iteration count) runs once per non-empty chunk of
 * the pool's static partition (common/pool.c), each chunk counted with its own bounds. */
#include <stdlib.h>
#include <string.h>

#include "internal.h"

typedef struct {
  int caller, block, callee;
  bool parallel;
  int64_t extent;  /* parallel: iterations divided over the pool */
  int n_args;
  int64_t args[8]; /* direct call: constant integer arguments */
  bool known[8];
} call_site;

typedef struct {
  int n_fns;
  LLVMValueRef *fns;
  pa_function *f;
  pa_counter **counters;
  int64_t **total;  /* per function, per block: executions over the run */
  int64_t *calls;
  int *threads;
  int n_sites, cap_sites;
  call_site *sites;
} sprof;

static int fn_index(const sprof *s, LLVMValueRef v) {
  for (int i = 0; i < s->n_fns; i++)
    if (s->fns[i] == v) return i;
  return -1;
}

/* !portent.parallel = !{!{ptr @fn, i64 extent}, ...}; -1 for functions it does not name. */
static int64_t parallel_extent(LLVMModuleRef mod, LLVMValueRef fn) {
  unsigned n = LLVMGetNamedMetadataNumOperands(mod, "portent.parallel");
  if (!n) return -1;
  LLVMValueRef *nodes = malloc(sizeof *nodes * n);
  LLVMGetNamedMetadataOperands(mod, "portent.parallel", nodes);
  int64_t extent = -1;
  for (unsigned i = 0; i < n && extent < 0; i++) {
    if (LLVMGetMDNodeNumOperands(nodes[i]) != 2) continue;
    LLVMValueRef ops[2];
    LLVMGetMDNodeOperands(nodes[i], ops);
    if (ops[0] == fn && ops[1] && LLVMIsAConstantInt(ops[1])) extent = LLVMConstIntGetSExtValue(ops[1]);
  }
  free(nodes);
  return extent;
}

static int add_site(sprof *s, call_site cs) {
  if (s->n_sites == s->cap_sites)
    s->sites = realloc(s->sites, sizeof *s->sites * (size_t)(s->cap_sites = s->cap_sites ? 2 * s->cap_sites : 16));
  s->sites[s->n_sites++] = cs;
  return 0;
}

static int find_sites(sprof *s, LLVMModuleRef mod, pt_diag *d) {
  for (int i = 0; i < s->n_fns; i++) {
    int b = 0;
    for (LLVMBasicBlockRef bb = LLVMGetFirstBasicBlock(s->fns[i]); bb; bb = LLVMGetNextBasicBlock(bb), b++)
      for (LLVMValueRef in = LLVMGetFirstInstruction(bb); in; in = LLVMGetNextInstruction(in)) {
        if (!LLVMIsACallInst(in)) continue;
        LLVMValueRef callee = LLVMGetCalledValue(in);
        if (!callee || !LLVMIsAFunction(callee)) continue;
        size_t len;
        const char *name = LLVMGetValueName2(callee, &len);
        call_site cs = {.caller = i, .block = b};
        if (strcmp(name, "pt_parallel_for") == 0 && LLVMGetNumArgOperands(in) == 4) {
          LLVMValueRef body = LLVMGetOperand(in, 1), n = LLVMGetOperand(in, 3);
          cs.callee = fn_index(s, body);
          cs.parallel = true;
          cs.extent = parallel_extent(mod, body);
          if (cs.callee < 0)
            return pt_fail(d, PT_ERR_UNSUPPORTED, "static counts: '%s' runs a parallel body that is not a function of the module",
                           s->f[i].name);
          if (LLVMIsAConstantInt(n)) {
            int64_t nv = LLVMConstIntGetSExtValue(n);
            if (cs.extent >= 0 && cs.extent != nv)
              return pt_fail(d, PT_ERR_INPUT, "static counts: !portent.parallel gives '%s' %lld iterations, its call %lld",
                             s->f[cs.callee].name, (long long)cs.extent, (long long)nv);
            cs.extent = nv;
          }
          if (cs.extent < 0)
            return pt_fail(d, PT_ERR_UNSUPPORTED, "static counts: the iteration count of parallel body '%s' is not a constant "
                                                  "and !portent.parallel does not name it", s->f[cs.callee].name);
          add_site(s, cs);
        } else if ((cs.callee = fn_index(s, callee)) >= 0) {
          unsigned na = LLVMGetNumArgOperands(in);
          cs.n_args = na < 8 ? (int)na : 8;
          for (int k = 0; k < cs.n_args; k++) {
            LLVMValueRef a = LLVMGetOperand(in, (unsigned)k);
            cs.known[k] = LLVMIsAConstantInt(a);
            cs.args[k] = cs.known[k] ? (int64_t)LLVMConstIntGetZExtValue(a) : 0;
          }
          add_site(s, cs);
        }
      }
  }
  return 0;
}

static pa_counter *counter_of(sprof *s, int g) {
  if (!s->counters[g]) s->counters[g] = pa_counter_new(s->fns[g], &s->f[g]);
  return s->counters[g];
}

/* Block counts of one call of parallel body g on chunk `part` of `parts` of its `extent`
 * iterations, the bounds pt_parallel_for passes it, into one[] (zeroed first): 0, 1 when the
 * chunk is empty (nothing counted), or pa_counter_run's (negative) error. */
static int count_chunk(sprof *s, int g, int64_t extent, int parts, int part, int64_t *one, pt_diag *d) {
  int64_t args[3] = {0}, b, e;
  bool known[3] = {false, true, true};
  pt_pool_chunk(extent, parts, part, &b, &e);
  memset(one, 0, sizeof *one * ((size_t)s->f[g].n_blocks + 1));
  if (b >= e) return 1;
  args[1] = b, args[2] = e;
  return pa_counter_run(counter_of(s, g), args, known, one, d);
}

/* Adds `times` executions of one[] (a call's block counts of function g) to its totals. */
static void add_call(sprof *s, int g, int64_t times, const int64_t *one) {
  for (int b = 0; b < s->f[g].n_blocks; b++) s->total[g][b] += times * one[b];
  s->calls[g] += times;
}

/* Adds `times` calls of function g with these arguments to its totals. */
static int count_calls(sprof *s, int g, int64_t times, const int64_t *args, const bool *known, pt_diag *d) {
  int64_t *one = calloc((size_t)s->f[g].n_blocks + 1, sizeof *one);
  int err = pa_counter_run(counter_of(s, g), args, known, one, d);
  if (!err) add_call(s, g, times, one);
  free(one);
  return err;
}

static int run_site(sprof *s, const call_site *cs, int threads, pt_diag *d) {
  int64_t times = s->total[cs->caller][cs->block];
  if (times == 0) return 0;
  int g = cs->callee, caller_threads = s->threads[cs->caller];
  if (!cs->parallel) {
    if (s->threads[g] < caller_threads) s->threads[g] = caller_threads;
    return count_calls(s, g, times, cs->args, cs->known, d);
  }
  if (cs->extent <= 0) return 0;
  /* pt_parallel_for runs [0, n) on the caller when the pool has one thread or n is 1 */
  int parts = threads <= 1 || cs->extent == 1 ? 1 : threads, used = 0;
  int64_t *one = malloc(sizeof *one * ((size_t)s->f[g].n_blocks + 1));
  for (int i = 0; i < parts; i++) {
    int rc = count_chunk(s, g, cs->extent, parts, i, one, d);
    if (rc < 0) {
      free(one);
      return rc;
    }
    if (rc == 0) add_call(s, g, times, one), used++;
  }
  free(one);
  int t = parts == 1 ? caller_threads : used;
  if (s->threads[g] < t) s->threads[g] = t;
  return 0;
}

/* Work (IR nodes executed) of each part of one parallel call site's iterations, added to
 * work[] `times` over; false when a part cannot be counted statically. */
static bool site_chunk_work(sprof *s, const call_site *cs, int64_t times, int parts, double *work) {
  int g = cs->callee, nb = s->f[g].n_blocks;
  int64_t *one = malloc(sizeof *one * ((size_t)nb + 1));
  bool ok = true;
  for (int i = 0; i < parts && ok; i++) {
    pt_diag quiet = {0};
    ok = count_chunk(s, g, cs->extent, parts, i, one, &quiet) >= 0;
    pt_diag_clear(&quiet);
    double w = 0;
    for (int k = 0; k < nb; k++) w += (double)one[k] * s->f[g].blocks[k].n_nodes;
    work[i] += (double)times * w;
  }
  free(one);
  return ok;
}

void pa_profile_chunk_work(const pa_module *m, pa_profile *p) {
  sprof s = {0};
  s.n_fns = pa_defined_functions(m->mod, &s.fns);
  pt_diag quiet = {0};
  if (s.n_fns != p->n_functions || find_sites(&s, m->mod, &quiet)) goto done;
  for (int i = 0; i < s.n_fns; i++) { /* p must list m's functions in m's order */
    size_t len;
    const char *name = LLVMGetValueName2(s.fns[i], &len);
    if (strcmp(name, p->functions[i].name) != 0 || LLVMCountBasicBlocks(s.fns[i]) != (unsigned)p->functions[i].n_blocks)
      goto done;
  }
  s.f = p->functions;
  s.counters = calloc((size_t)s.n_fns + 1, sizeof *s.counters);
  for (int g = 0; g < s.n_fns; g++) {
    pa_function *f = &p->functions[g];
    int64_t extent = -1;
    bool ok = true;
    for (int k = 0; k < s.n_sites && ok; k++) { /* called only by pt_parallel_for, one iteration count */
      const call_site *cs = &s.sites[k];
      if (cs->callee != g) continue;
      ok = cs->parallel && cs->extent > 0 && (extent < 0 || extent == cs->extent);
      extent = cs->extent;
    }
    f->n_chunk_work = 0, f->chunk_work = NULL, f->chunk_iterations = 0;
    if (!ok || extent <= 0) continue;
    int parts = extent < PA_CHUNK_PARTS ? (int)extent : PA_CHUNK_PARTS;
    double *work = calloc((size_t)parts, sizeof *work);
    for (int k = 0; k < s.n_sites && ok; k++) {
      const call_site *cs = &s.sites[k];
      int64_t times = cs->callee == g ? (int64_t)p->functions[cs->caller].blocks[cs->block].count : 0;
      if (times > 0) ok = site_chunk_work(&s, cs, times, parts, work);
    }
    if (ok) {
      f->chunk_iterations = extent, f->n_chunk_work = parts;
      f->chunk_work = pt_memdup(p->arena, work, sizeof *work * (size_t)parts);
    }
    free(work);
  }
done:
  pt_diag_clear(&quiet);
  for (int i = 0; s.counters && i < s.n_fns; i++) pa_counter_free(s.counters[i]);
  free(s.counters);
  free(s.sites);
  free(s.fns);
}

pa_profile *pa_profile_static_counts(const pa_module *m, const pa_static_opts *o, pt_diag *d) {
  pa_profile *p = pa_profile_static(m, d);
  if (!p) return NULL;
  sprof s = {0};
  s.n_fns = pa_defined_functions(m->mod, &s.fns);
  s.f = p->functions;
  s.counters = calloc((size_t)s.n_fns + 1, sizeof *s.counters);
  s.total = calloc((size_t)s.n_fns + 1, sizeof *s.total);
  s.calls = calloc((size_t)s.n_fns + 1, sizeof *s.calls);
  s.threads = calloc((size_t)s.n_fns + 1, sizeof *s.threads);
  int *indeg = calloc((size_t)s.n_fns + 1, sizeof *indeg), *order = malloc(sizeof *order * ((size_t)s.n_fns + 1));
  bool *reach = calloc((size_t)s.n_fns + 1, 1);
  for (int i = 0; i < s.n_fns; i++) s.total[i] = calloc((size_t)s.f[i].n_blocks + 1, sizeof(int64_t));
  int entry = -1, err = 0;
  for (int i = 0; i < s.n_fns; i++)
    if (o && o->entry ? strcmp(s.f[i].name, o->entry) == 0 : !LLVMGetLinkage(s.fns[i]) && entry < 0) entry = i;
  if (entry < 0) {
    err = o && o->entry ? pt_fail(d, PT_ERR_INPUT, "%s: no function '%s' is defined", m->source, o->entry)
                        : pt_fail(d, PT_ERR_INPUT, "%s: no externally visible function to count from", m->source);
    goto done;
  }
  if ((err = find_sites(&s, m->mod, d))) goto done;
  /* callers before callees (Kahn's algorithm over the functions reachable from the entry) */
  reach[entry] = true;
  for (bool grew = true; grew;) {
    grew = false;
    for (int k = 0; k < s.n_sites; k++)
      if (reach[s.sites[k].caller] && !reach[s.sites[k].callee]) reach[s.sites[k].callee] = grew = true;
  }
  for (int k = 0; k < s.n_sites; k++)
    if (reach[s.sites[k].caller]) indeg[s.sites[k].callee]++;
  int n_order = 0, head = 0;
  if (indeg[entry] == 0) order[n_order++] = entry;
  while (head < n_order) {
    int fi = order[head++];
    for (int k = 0; k < s.n_sites; k++)
      if (s.sites[k].caller == fi && --indeg[s.sites[k].callee] == 0) order[n_order++] = s.sites[k].callee;
  }
  int n_reach = 0;
  for (int i = 0; i < s.n_fns; i++) n_reach += reach[i];
  if (n_order != n_reach) {
    err = pt_fail(d, PT_ERR_UNSUPPORTED, "static counts: the functions reachable from '%s' call each other recursively",
                  s.f[entry].name);
    goto done;
  }
  s.threads[entry] = 1;
  int threads = o && o->threads > 0 ? o->threads : 1;
  if ((err = count_calls(&s, entry, 1, NULL, NULL, d))) goto done;
  for (int k = 0; k < n_order && !err; k++)
    for (int j = 0; j < s.n_sites && !err; j++)
      if (s.sites[j].caller == order[k]) err = run_site(&s, &s.sites[j], threads, d);
  if (err) goto done;
  /* the form pa_profile_build gives an instrumented run's counts */
  p->counts_source = "static";
  p->entry = pt_strdup(p->arena, s.f[entry].name);
  p->threads = 1;
  for (int i = 0; i < s.n_fns; i++) {
    pa_function *f = &p->functions[i];
    f->calls = (uint64_t)s.calls[i];
    f->threads = s.calls[i] ? s.threads[i] : 0;
    f->parallel = f->threads > 1;
    if (f->threads > p->threads) p->threads = f->threads;
    for (int b = 0; b < f->n_blocks; b++) {
      pa_block *bl = &f->blocks[b];
      bl->count = (uint64_t)s.total[i][b];
      bl->count_per_call = f->calls ? (double)bl->count / (double)f->calls : 0;
      if (f->calls) bl->static_count_per_call = bl->count_per_call;
      for (int k = 0; k < PA_OP_COUNT; k++) p->dynamic_by_op[k] += (double)bl->count * (double)bl->features.by_op[k];
    }
  }
  pa_profile_chunk_work(m, p);
done:
  for (int i = 0; i < s.n_fns; i++) {
    pa_counter_free(s.counters[i]);
    free(s.total[i]);
  }
  free(s.counters);
  free(s.total);
  free(s.calls);
  free(s.threads);
  free(s.sites);
  free(s.fns);
  free(indeg);
  free(order);
  free(reach);
  if (err) {
    pa_profile_free(p);
    return NULL;
  }
  return p;
}
