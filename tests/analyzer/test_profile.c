/* Profiles end to end: portent's own kernel signature (buffers array + pool) with a parallel
 * outlined body, the file written and read back unchanged, the same bytes for the same seed,
 * and ECount as the patent's formula defines it. */
#include <stdlib.h>
#include <unistd.h>

#include "analyzer/analyzer.h"
#include "test.h"
#include "util.h"

static char *profile_text(const char *path) {
  pt_diag d = {0};
  char *s = pt_read_file(path, NULL, &d);
  CHECK_MSG(s, "%s", d.msg);
  return s;
}

int main(void) {
  pt_diag d = {0};
  pa_module *m = pa_module_load(PA_FIXTURE_DIR "/parallel.ll", &d);
  CHECK_MSG(m, "%s", d.msg);
  if (!m) TEST_DONE();
  int64_t sizes[2] = {1024, 1024};
  pa_run_spec *s = pa_run_spec_portent("kernel", 2, sizes, 2, 7);
  /* Through the caller-owned module entry point, as the lead's `analyze WORKLOAD` calls it. */
  pa_profile *p = pa_profile_llvm(pa_module_llvm(m), s, NULL, &d);
  CHECK_MSG(p, "%s", d.msg);
  if (!p) TEST_DONE();
  const pa_function *k = pa_profile_function(p, "kernel"), *body = pa_profile_function(p, "body");
  CHECK(k && body);
  CHECK(k->calls == 1 && k->threads == 1 && !k->parallel);
  /* Two pool threads: the caller runs chunk 0, the worker chunk 1. */
  CHECK_MSG(body->calls == 2 && body->threads == 2 && body->parallel, "calls %llu threads %d",
            (unsigned long long)body->calls, body->threads);
  const pa_block *loop = block_named(body, "loop");
  CHECK(loop->count == 1024 && loop->count_per_call == 512);
  CHECK(pa_block_ecount(body, loop) == 512); /* 512 per call x 2 calls / 2 threads */
  CHECK(p->threads == 2);
  /* Each thread streams its half of both buffers (512 loads + 512 stores, 64 cold lines) after
   * loading the two buffer pointers (2 accesses, 1 cold line: each thread has its own stack). */
  int threads_seen = 0;
  for (int i = 0; i < p->n_reuse; i++)
    if (p->reuse[i].function == (int)(body - p->functions)) {
      threads_seen++;
      CHECK(p->reuse[i].hist.accesses == 1026 && p->reuse[i].hist.cold == 65);
    }
  CHECK(threads_seen == 2);
  CHECK(p->reuse_by_function[body - p->functions].accesses == 2052);
  CHECK_MSG(p->reuse_total.accesses == 2048 + 4, "%g", p->reuse_total.accesses);

  char dir[] = "/tmp/pa_profile_XXXXXX";
  CHECK(mkdtemp(dir));
  char a[600], b[600];
  snprintf(a, sizeof a, "%s/a.json", dir);
  snprintf(b, sizeof b, "%s/b.json", dir);
  CHECK(pa_profile_save(p, a, &d) == 0);
  /* Deterministic: a second run with the same seed writes the same bytes. */
  pa_profile *p2 = pa_profile_llvm(pa_module_llvm(m), s, &(pa_options){.sample_rate = 1}, &d);
  CHECK(p2 && pa_profile_save(p2, b, &d) == 0);
  char *ta = profile_text(a), *tb = profile_text(b);
  CHECK(ta && tb && strcmp(ta, tb) == 0);
  /* Round trip: load and save again, same bytes. */
  pa_profile *q = pa_profile_load(a, &d);
  CHECK_MSG(q, "%s", d.msg);
  if (q) {
    CHECK(pa_profile_save(q, b, &d) == 0);
    char *tq = profile_text(b);
    CHECK(tq && ta && strcmp(ta, tq) == 0);
    free(tq);
    const pa_function *qb = pa_profile_function(q, "body");
    CHECK(qb && qb->parallel && qb->threads == 2 && block_named(qb, "loop")->count == 1024);
    CHECK(q->functions[0].n_loops == 1 && q->functions[0].loops[0].trip_count == -1);
    /* The optional quarter and per-set bins are written and read back; a profile without them
     * (as written before session 10) reads as having none. */
    CHECK(ta && strstr(ta, "\"quarters\":[[") && strstr(ta, "\"sets\":["));
    const pa_reuse_hist *h = &q->reuse_total;
    CHECK(h->has_quarters && h->has_sets);
    double set_sum = 0;
    for (int k = 0; k < PA_SET_BINS; k++) set_sum += h->sets[k];
    CHECK_MSG(set_sum == h->accesses - h->cold, "per-set %g, reuses %g", set_sum, h->accesses - h->cold);
    q->reuse_total.has_quarters = q->reuse_total.has_sets = false;
    for (int i = 0; i < q->n_functions; i++) q->reuse_by_function[i].has_quarters = q->reuse_by_function[i].has_sets = false;
    for (int i = 0; i < q->n_reuse; i++) q->reuse[i].hist.has_quarters = q->reuse[i].hist.has_sets = false;
    CHECK(pa_profile_save(q, b, &d) == 0);
    char *old = profile_text(b);
    CHECK(old && !strstr(old, "quarters") && !strstr(old, "\"sets\""));
    pa_profile *o = pa_profile_load(b, &d);
    CHECK(o && !o->reuse_total.has_quarters && !o->reuse_total.has_sets &&
          pa_reuse_misses_sets(&o->reuse_total, 8) < 0 && o->reuse_total.accesses == h->accesses);
    pa_profile_free(o);
    free(old);
    pa_profile_free(q);
  }
  /* LL set counts (pa_options.llc_sets): their bins beside an otherwise unchanged histogram,
   * summed over both threads, written and read back; refused when sampling or out of range. */
  pa_options lo = {.sample_rate = 1, .n_llc_sets = 2, .llc_sets = {1024, 128}};
  pa_profile *pl = pa_profile_llvm(pa_module_llvm(m), s, &lo, &d);
  CHECK_MSG(pl, "%s", d.msg);
  if (pl) {
    const pa_reuse_hist *h = &pl->reuse_total, *h0 = &p->reuse_total;
    CHECK(h->n_llc == 2 && h->llc[0].sets == 1024 && h->llc[1].sets == 128 && h0->n_llc == 0);
    CHECK(memcmp(h->bins, h0->bins, sizeof h->bins) == 0 && memcmp(h->sets, h0->sets, sizeof h->sets) == 0 &&
          h->cold == h0->cold && h->accesses == h0->accesses);
    for (int i = 0; i < 2; i++) {
      double sum = 0;
      for (int k = 0; k < PA_SET_BINS; k++) sum += h->llc[i].bins[k];
      CHECK_MSG(sum == h->accesses - h->cold, "%d sets: %g, reuses %g", h->llc[i].sets, sum, h->accesses - h->cold);
    }
    CHECK(pa_reuse_misses_llc(h, 1024, 16) >= h->cold && pa_reuse_misses_llc(h, 512, 16) < 0 &&
          pa_reuse_misses_llc(h0, 1024, 16) < 0);
    char *js = pa_profile_to_json(pl), *js0 = pa_profile_to_json(p);
    CHECK(js && strstr(js, "\"llc_sets\":[{\"sets\":1024,\"bins\":[") && js0 && !strstr(js0, "llc_sets"));
    pa_profile *back = js ? pa_profile_parse(js, "llc", &d) : NULL;
    CHECK_MSG(back, "%s", d.msg);
    char *js2 = back ? pa_profile_to_json(back) : NULL;
    CHECK(js2 && strcmp(js, js2) == 0);
    /* a damaged set count names its path */
    char *bad = js ? strstr(js, "\"sets\":1024") : NULL;
    if (bad) memcpy(bad, "\"sets\":1000", 11);
    pt_diag_clear(&d);
    CHECK(bad && !pa_profile_parse(js, "llc", &d) && strstr(d.msg, "llc_sets"));
    free(js), free(js0), free(js2);
    pa_profile_free(back);
  }
  pa_profile_free(pl);
  pa_options refused[] = {{.sample_rate = 0.01, .n_llc_sets = 1, .llc_sets = {1024}},
                          {.sample_rate = 1, .n_llc_sets = 1, .llc_sets = {1000}},
                          {.sample_rate = 1, .n_llc_sets = 2, .llc_sets = {256, 256}},
                          {.sample_rate = 1, .no_reuse = true, .n_llc_sets = 1, .llc_sets = {1024}}};
  for (size_t i = 0; i < sizeof refused / sizeof refused[0]; i++) {
    pt_diag_clear(&d);
    CHECK_MSG(!pa_profile_llvm(pa_module_llvm(m), s, &refused[i], &d) && d.err == PT_ERR_INPUT && strstr(d.msg, "llc_sets"),
              "refused[%zu]: %s", i, d.msg);
  }
  /* A damaged file names the JSON path. */
  FILE *f = fopen(b, "w");
  fputs("{\"version\":1,\"module_id\":\"x\",\"source\":\"s\",\"counts_source\":\"none\",\"seed\":1,\"threads\":0,"
        "\"features\":{\"instructions\":0,\"by_op\":{},\"loads\":0,\"stores\":0,\"load_bytes\":0,\"store_bytes\":0,"
        "\"vector_instructions\":0},\"functions\":[{\"name\":\"f\",\"calls\":1}]}",
        f);
  fclose(f);
  pt_diag_clear(&d);
  CHECK(pa_profile_load(b, &d) == NULL);
  CHECK_MSG(strstr(d.msg, "$.functions[0].parallel") || strstr(d.msg, "$.functions[0].threads"), "%s", d.msg);
  free(ta);
  free(tb);
  unlink(a);
  unlink(b);
  rmdir(dir);
  pa_profile_free(p);
  pa_profile_free(p2);
  pa_run_spec_free(s);
  pa_module_free(m);
  TEST_DONE();
}
