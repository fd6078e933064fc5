/* portent bench characterize: runs the characterization twice and prints how far the two
 * runs differ per figure (is it repeatable?) and how the measurement compares with the
 * published description of the same microarchitecture (is it right?). */
#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "commands.h"
#include "microbench.h"

/* Whether this is a virtual machine (the cpuid hypervisor bit, as /proc/cpuinfo shows it). */
static bool on_vm(void) {
  FILE *f = fopen("/proc/cpuinfo", "r");
  if (!f) return false;
  char line[4096];
  bool vm = false;
  while (!vm && fgets(line, sizeof line, f))
    if (strncmp(line, "flags", 5) == 0) vm = strstr(line, " hypervisor") != NULL;
  fclose(f);
  return vm;
}

/* The figures the predictor leans on most: arithmetic and loads on f32/f64/i32/i64 at scalar
 * and the widest width, and the cache latencies (but level `skip`, 0 for none: on a VM the
 * last level is shared with other tenants, so how much of it is ours changes from run to run).
 * Counts those within tol; returns the total. `runs`: a and b are two runs (not published vs
 * measured). */
static int main_figures(const ptg_target *a, const ptg_target *b, double tol, int skip, bool runs, int *within, FILE *worst) {
  static const ptg_op ops[] = {PTG_OP_ADD, PTG_OP_SUB, PTG_OP_MUL, PTG_OP_FMA, PTG_OP_DIV, PTG_OP_SQRT, PTG_OP_LOAD};
  int n = 0;
  *within = 0;
  for (int i = 0; i < b->n_insts; i++) {
    const ptg_inst *rb = &b->insts[i];
    bool main_op = false;
    for (size_t k = 0; k < sizeof ops / sizeof ops[0]; k++) main_op |= rb->op == ops[k];
    bool width = rb->vector_bits == ptg_elem_bits(rb->elem) || rb->vector_bits == b->max_vector_bits;
    const ptg_inst *ra = ptg_target_find_inst(a, rb->op, rb->elem, rb->vector_bits);
    if (!main_op || !width || !ra || rb->elem == PTG_ELEM_BF16 || rb->elem == PTG_ELEM_I8) continue;
    double d[2] = {ptg_rel_diff(ra->latency.value, rb->latency.value), ptg_rel_diff(ra->recip_throughput.value, rb->recip_throughput.value)};
    /* vector and FP load latency is a difference of two timings (a ~9-cycle chase through the
     * load and a lane move, minus half of the move's ~7-cycle round trip), so the noise of both
     * lands on a ~5.5-cycle figure: reported, not checked between runs */
    bool derived = rb->op == PTG_OP_LOAD && (rb->vector_bits > ptg_elem_bits(rb->elem) || ptg_elem_is_float(rb->elem));
    if (derived && runs) d[0] = NAN;
    for (int k = 0; k < 2; k++) {
      if (isnan(d[k])) continue;
      n++;
      if (fabs(d[k]) <= tol) (*within)++;
      else if (worst)
        fprintf(worst, "    %s %s %d %s: %+.1f%%\n", ptg_op_name(rb->op), ptg_elem_name(rb->elem), rb->vector_bits,
                k ? "rthroughput" : "latency", 100 * d[k]);
    }
  }
  for (int l = 1; l <= b->n_caches; l++) {
    if (l == skip) continue;
    const ptg_cache *ka = ptg_target_cache(a, l), *kb = ptg_target_cache(b, l);
    double d = ka ? ptg_rel_diff(ka->latency_cycles.value, kb->latency_cycles.value) : NAN;
    if (isnan(d)) continue;
    n++;
    if (fabs(d) <= tol) (*within)++;
    else if (worst) fprintf(worst, "    L%d latency: %+.1f%%\n", l, 100 * d);
  }
  return n;
}

/* The shipped published description of this microarchitecture, if any. */
static ptg_target *find_published(const char *uarch, char *path, size_t n) {
  DIR *dir = opendir(ptg_shipped_dir());
  if (!dir) return NULL;
  ptg_target *found = NULL;
  for (struct dirent *e; !found && (e = readdir(dir));) {
    size_t len = strlen(e->d_name);
    if (len < 6 || strcmp(e->d_name + len - 5, ".json")) continue;
    snprintf(path, n, "%s/%s", ptg_shipped_dir(), e->d_name);
    pt_diag d = {0};
    ptg_target *t = ptg_target_load(path, &d);
    if (t && strcmp(t->provenance, "published") == 0 && strcmp(t->microarchitecture, uarch) == 0) found = t;
    else ptg_target_free(t);
  }
  closedir(dir);
  return found;
}

int cmd_bench_characterize(int argc, char **argv) {
  pmb_options o = {.progress = stderr};
  const char *published = NULL;
  for (int i = 1; i < argc; i++) {
    if (strcmp(argv[i], "--quick") == 0) o.quick = true;
    else if (strcmp(argv[i], "--published") == 0 && i + 1 < argc) published = argv[++i];
    else if (strcmp(argv[i], "--only") == 0 && i + 1 < argc) o.only = argv[++i];
    else if (strcmp(argv[i], "--help") == 0) {
      printf("usage: portent bench characterize [--quick] [--only LIST] [--published FILE]\n\n"
             "Characterizes this machine twice and prints the per-figure differences between the runs\n"
             "(main instruction classes and cache latencies should agree within 5%%), then compares\n"
             "the measurement with the published description of the same microarchitecture (found in\n"
             "the shipped targets/ folder, or FILE; main figures within 10%%). Exit 1 when the runs\n"
             "disagree or one took longer than 120 s (20 s with --quick).\n");
      return EXIT_OK;
    } else {
      fprintf(stderr, "portent bench characterize: unknown option '%s'\n", argv[i]);
      return EXIT_USAGE;
    }
  }
  ptg_target *run[2] = {NULL, NULL};
  double secs[2];
  pt_diag d = {0};
  for (int r = 0; r < 2; r++) {
    double t0 = pt_now();
    run[r] = pmb_characterize(&o, &d);
    secs[r] = pt_now() - t0;
    if (!run[r]) {
      fprintf(stderr, "portent bench characterize: %s\n", d.msg);
      ptg_target_free(run[0]);
      return EXIT_FAILED;
    }
    run[r]->name = r ? "run 2" : "run 1";
  }
  printf("characterize%s: run 1 %.1f s, run 2 %.1f s (%s, %d cores)\n\n", o.quick ? " --quick" : "", secs[0], secs[1],
         run[0]->microarchitecture, run[0]->cores);
  ptg_target_print_diff(stdout, run[0], run[1], 0.05);
  const ptg_cache *llc = ptg_target_llc(run[0]);
  int skip = on_vm() && llc && llc->level > 1 ? llc->level : 0;
  int within, n = main_figures(run[0], run[1], 0.05, skip, true, &within, NULL);
  printf("\nrepeatability: %d of %d main figures (arithmetic and loads, cache latencies) within 5%% between runs%s\n", within, n,
         within == n ? "" : ":");
  main_figures(run[0], run[1], 0.05, skip, true, &within, stdout);
  printf("reported above but not checked (noisy on a shared machine): bandwidths, memory latency and misses\n"
         "in flight (other tenants' traffic), thread-pool costs (how fast an idle vCPU wakes), vector and FP load\n"
         "latency (a difference of two timings)%s\n",
         skip ? pt_sprintf(run[0]->arena, ", the L%d latency (a VM's last level is shared with other tenants: how much of it "
                                          "holds our lines changes from run to run)", skip)
              : "");
  int repeat_ok = within == n;

  char path[4096];
  ptg_target *pub = NULL;
  if (published) {
    snprintf(path, sizeof path, "%s", published);
    if (!(pub = ptg_target_load(published, &d))) fprintf(stderr, "portent bench characterize: %s\n", d.msg);
  } else {
    pub = find_published(run[0]->microarchitecture, path, sizeof path);
  }
  if (pub) {
    run[0]->name = "measured";
    printf("\nmeasured (run 1) vs published %s (%s)\n", pub->name, path);
    ptg_target_print_diff(stdout, pub, run[0], 0.10);
    n = main_figures(pub, run[0], 0.10, skip, false, &within, NULL);
    printf("\nagreement: %d of %d main figures the published file has are within 10%% of the measurement%s\n", within, n,
           within == n ? "" : ":");
    main_figures(pub, run[0], 0.10, skip, false, &within, stdout);
  } else {
    printf("\nno published description of %s to compare with (see targets/)\n", run[0]->microarchitecture);
  }
  double limit = o.quick ? 20 : 120;
  bool fast = secs[0] < limit && secs[1] < limit;
  printf("\ncheck: repeatability %s, time %s (%.0f and %.0f s, limit %.0f s)\n", repeat_ok ? "passed" : "FAILED",
         fast ? "passed" : "FAILED", secs[0], secs[1], limit);
  ptg_target_free(pub);
  ptg_target_free(run[0]);
  ptg_target_free(run[1]);
  return repeat_ok && fast ? EXIT_OK : EXIT_FAILED;
}
