/* The instrumented run's arguments, made in the process that profiles (run.c forks the run):
 * one 8-byte slot each, buffers between guard pages at fixed addresses filled with seeded data,
 * made on a thread while the module compiles and kept for the next run with the same ones. */
#define _GNU_SOURCE /* MADV_HUGEPAGE, MAP_NORESERVE */
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "internal.h"

#ifndef MAP_FIXED_NOREPLACE
#define MAP_FIXED_NOREPLACE 0x100000 /* Linux 4.17 */
#endif
/* Buffers and the kernel's stack are mapped at the same addresses in every run (from a base
 * far from where Linux puts the heap, libraries and thread stacks), so SHARDS, which samples
 * by a hash of the line address, picks the same lines each time and sampled profiles are
 * reproducible too. Where the range is taken, any address will do (and only that is lost). */
#define FIXED_BASE ((uintptr_t)0x200000000000ULL)

void *pa_map_at(uintptr_t *cursor, size_t len, int flags) {
  void *want = (void *)*cursor;
  void *p = mmap(want, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE | flags, -1, 0);
  if (p != MAP_FAILED && p != want) { /* a kernel that ignores the flag treats it as a hint */
    munmap(p, len);
    p = MAP_FAILED;
  }
  if (p == MAP_FAILED) p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | flags, -1, 0);
  *cursor += pa_round_up(len, (size_t)1 << 21) + ((size_t)1 << 21); /* 2 MiB apart */
  return p;
}

static const size_t elem_bytes[] = {1, 2, 4, 8, 4, 8}; /* pa_scalar_type order */

static void *guarded_alloc(pa_guarded_buffer *g, pa_scalar_type t, int64_t count, pt_rng *rng, uintptr_t *cursor) {
  size_t page = (size_t)sysconf(_SC_PAGESIZE), bytes = (size_t)count * elem_bytes[t];
  size_t body = pa_round_up(bytes, page);
  g->map_len = body + 2 * page;
  g->map = pa_map_at(cursor, g->map_len, 0);
  if (g->map == MAP_FAILED) return NULL;
  mprotect(g->map, page, PROT_NONE);
  mprotect(g->map + page + body, page, PROT_NONE);
  /* Huge pages where the body spans aligned 2 MiB: half the fill's CPU is first-touch faults
   * (bert_ffn1's 12 MB: 8.2 -> 4.5 ms), and addresses, hence profiles, do not move. */
  if (body >= ((size_t)2 << 20)) madvise(g->map + page, body, MADV_HUGEPAGE);
  g->hi = g->map + page + body;
  g->lo = g->hi - pa_round_up(bytes, 64);
  g->count = count;
  const uint64_t s0 = rng->s;
  pa_fill_random(g->lo, t, count, s0);
  rng->s = s0 + (uint64_t)(count > 0 ? count : 0) * PT_RNG_STEP;
  return g->lo;
}

static int setup_fail(pa_arg_setup *s, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int setup_fail(pa_arg_setup *s, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(s->error, sizeof s->error, fmt, ap);
  va_end(ap);
  return 2;
}

static void remember_mapping(pa_arg_setup *s, void *p, size_t len) {
  struct pa_mapping *m = realloc(s->maps, sizeof *m * (size_t)(s->n_maps + 1));
  if (!m) { /* left mapped: only address space is lost, and the next run's addresses */
    return;
  }
  s->maps = m;
  s->maps[s->n_maps++] = (struct pa_mapping){p, len};
}

static int make_arguments(pa_arg_setup *s) {
  const pa_run_spec *spec = s->spec;
  int nb = 0;
  for (int i = 0; i < spec->n_args; i++) {
    const pa_arg *a = &spec->args[i];
    pt_rng rng = {spec->seed * 0x9e3779b97f4a7c15ULL + (uint64_t)i + 1};
    switch (a->kind) {
    case PA_ARG_BUFFER:
      s->bufs[nb] = (pa_guarded_buffer){.arg = i, .sub = -1};
      if (!guarded_alloc(&s->bufs[nb], a->type, a->count, &rng, &s->cursor)) return setup_fail(s, "cannot allocate the buffer of args[%d]", i);
      s->slots[i] = (uint64_t)(uintptr_t)s->bufs[nb++].lo;
      break;
    case PA_ARG_BUFFER_ARRAY: {
      /* line-aligned, so the kernel's loads of the pointers touch the same lines every run */
      size_t bytes = pa_round_up(sizeof(void *) * (size_t)a->n_counts, 64);
      void **ptrs = pa_map_at(&s->cursor, bytes, 0);
      if (ptrs == MAP_FAILED) return setup_fail(s, "cannot allocate the pointer array of args[%d]", i);
      remember_mapping(s, ptrs, bytes);
      for (int j = 0; j < a->n_counts; j++) {
        s->bufs[nb] = (pa_guarded_buffer){.arg = i, .sub = j};
        if (!guarded_alloc(&s->bufs[nb], a->type, a->counts[j], &rng, &s->cursor)) return setup_fail(s, "cannot allocate the buffer of args[%d]", i);
        ptrs[j] = s->bufs[nb++].lo;
      }
      s->slots[i] = (uint64_t)(uintptr_t)ptrs;
      break;
    }
    case PA_ARG_SCALAR:
      switch (a->type) {
      case PA_T_F32: {
        float f = (float)a->value;
        memcpy(&s->slots[i], &f, sizeof f);
        break;
      }
      case PA_T_F64: memcpy(&s->slots[i], &a->value, sizeof a->value); break;
      default: s->slots[i] = (uint64_t)(int64_t)a->value; break; /* little-endian: low bytes first */
      }
      break;
    case PA_ARG_POOL: {
      /* workers' stacks at fixed addresses too (spills and locals of parallel bodies): the
       * sampled lines, hence the profile, are then the same in every run */
      char *wstacks = a->threads > 1 ? pa_map_at(&s->cursor, PA_POOL_STACK_BYTES * (size_t)(a->threads - 1), MAP_NORESERVE) : NULL;
      if (wstacks == MAP_FAILED) return setup_fail(s, "cannot map the pool's stacks");
      if (wstacks) remember_mapping(s, wstacks, PA_POOL_STACK_BYTES * (size_t)(a->threads - 1));
      s->pool_arg = i, s->pool_threads = a->threads, s->pool_stacks = wstacks;
      break;
    }
    case PA_ARG_NULL: break;
    }
  }
  return 0;
}

static void *make_arguments_thread(void *arg) {
  pa_arg_setup *s = arg;
  s->rc = make_arguments(s);
  return NULL;
}

/* The arguments the parent keeps (a process-wide cache, under run.c's run_lock): the last run's, for a
 * spec with the same arguments and seed. bench analyze profiles each candidate several times,
 * and a tuner's candidates of one workload share their buffers, so most runs fill nothing. */
static struct {
  bool valid;
  pa_run_spec key; /* the arguments compared: kinds, types, counts, values, threads; the seed */
  pa_arg_setup s;
} kept;

static bool same_arguments(const pa_run_spec *a, const pa_run_spec *b) {
  if (a->n_args != b->n_args || a->seed != b->seed) return false;
  for (int i = 0; i < a->n_args; i++) {
    const pa_arg *x = &a->args[i], *y = &b->args[i];
    if (x->kind != y->kind || x->type != y->type || x->count != y->count || x->n_counts != y->n_counts ||
        x->threads != y->threads || memcmp(&x->value, &y->value, sizeof x->value) != 0)
      return false;
    for (int j = 0; j < x->n_counts; j++)
      if (x->counts[j] != y->counts[j]) return false;
  }
  return true;
}

void pa_drop_kept_arguments(void) {
  pa_arg_setup *s = &kept.s;
  for (int i = 0; i < s->n_bufs; i++)
    if (s->bufs[i].map && s->bufs[i].map != MAP_FAILED) munmap(s->bufs[i].map, s->bufs[i].map_len);
  for (int i = 0; i < s->n_maps; i++) munmap(s->maps[i].p, s->maps[i].len);
  free(s->bufs), free(s->slots), free(s->maps);
  for (int i = 0; i < kept.key.n_args; i++) free(kept.key.args[i].counts);
  free(kept.key.args);
  memset(&kept, 0, sizeof kept);
}

pa_arg_setup *pa_run_arguments(const pa_run_spec *spec, pthread_t *maker, bool *making) {
  *making = false;
  if (kept.valid && same_arguments(&kept.key, spec)) return &kept.s;
  pa_drop_kept_arguments();
  pa_arg_setup *s = &kept.s;
  *s = (pa_arg_setup){.spec = spec, .cursor = FIXED_BASE, .pool_arg = -1};
  for (int i = 0; i < spec->n_args; i++)
    s->n_bufs += spec->args[i].kind == PA_ARG_BUFFER ? 1 : spec->args[i].kind == PA_ARG_BUFFER_ARRAY ? spec->args[i].n_counts : 0;
  s->bufs = calloc((size_t)s->n_bufs + 1, sizeof *s->bufs);
  s->slots = calloc((size_t)spec->n_args + 1, sizeof *s->slots);
  kept.key = (pa_run_spec){.n_args = spec->n_args, .seed = spec->seed, .args = calloc((size_t)spec->n_args + 1, sizeof(pa_arg))};
  for (int i = 0; i < spec->n_args; i++) {
    pa_arg *a = &kept.key.args[i];
    *a = spec->args[i];
    a->counts = NULL;
    if (a->n_counts > 0) {
      a->counts = malloc(sizeof(int64_t) * (size_t)a->n_counts);
      memcpy(a->counts, spec->args[i].counts, sizeof(int64_t) * (size_t)a->n_counts);
    }
  }
  kept.valid = true;
  *making = pthread_create(maker, NULL, make_arguments_thread, s) == 0;
  if (!*making) s->rc = make_arguments(s);
  return s;
}

