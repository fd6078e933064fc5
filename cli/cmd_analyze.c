/* portent analyze: the hardware-independent profile of an LLVM module (.ll or .bc): CFGs,
 * loops, task graphs and static features, plus block counts and reuse distances from one
 * instrumented run of the function a run spec names. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <unistd.h>

#include "analyzer.h"
#include "commands.h"
#include "schedule_args.h"

static void usage(FILE *f) {
  fprintf(f,
          "usage: portent analyze FILE.ll|FILE.bc [--spec RUN.json] [-o PROFILE.json] [--sample RATE]\n"
          "       [--window LINES] [--line-filter] [--inline-cold-blocks] [--counters-in-memory] [--sample-locals] [--run-static-counts] [--addresses-only] [--llc-sets N[,N...]] [--seed S] [--timeout SEC] [--no-reuse] [--static-counts] [--json]\n"
          "   or: portent analyze (WORKLOAD | --expr FILE) [schedule options] [--threads N] [-o PROFILE.json] ...\n\n"
          "  WORKLOAD          a built-in workload, lowered to its target-neutral module and run on\n"
          "                    seeded inputs (schedule options as for `portent compile --help`)\n"
          "  --threads N       thread pool size for a WORKLOAD run (default: all online CPUs)\n"
          "  --spec RUN.json   entry function and arguments to run it on (docs/formats.md, \"Run spec\");\n"
          "                    without it the profile is static (no counts, no reuse)\n"
          "  -o PROFILE.json   write the profile there (atomically); without -o it goes to stdout\n"
          "  --sample RATE     SHARDS spatial sampling of cache lines, 0 < RATE <= 1 (default 1)\n"
          "  --window LINES    with --sample: distances below LINES are measured exactly on every access\n"
          "                    (default: the power of two >= 16/RATE); 0 = plain SHARDS (fastest)\n"
          "  --line-filter     loads and stores of innermost loops that repeat their previous\n"
          "                    iteration's line skip the tracker (counted as short reuses); the rest\n"
          "                    go through --sample as usual (docs/design.md, \"Line filter\")\n"
          "  --inline-cold-blocks  with --sample < 1 or --line-filter: test lines inline in every block,\n"
          "                    as before session 17 (by default blocks run at most 1/256 as often as\n"
          "                    their function's busiest call the runtime instead: the same profile)\n"
          "  --counters-in-memory  block counters of innermost loops loaded, added and stored every\n"
          "                    iteration, as before session 18 (by default added at the loop's exits\n"
          "                    from its iterations: the same profile)\n"
          "  --sample-locals   with --sample < 1: the kernel's static local arrays sampled by their\n"
          "                    lines' hash like any line, as before session 19 (by default their\n"
          "                    lines are tracked at rate 1, weight 1: docs/formats.md, locals_lines)\n"
          "  --run-static-counts  in the run, functions whose blocks all have static counts get one\n"
          "                    counter (calls) instead of one per block (what bench analyze and the\n"
          "                    analytic cost model run)\n"
          "  --addresses-only  the run leaves out floating-point loads, stores and arithmetic (what no\n"
          "                    address or branch needs): the same profile, a faster compile and run,\n"
          "                    but out-of-bounds accesses go unseen; the whole module runs where an\n"
          "                    address or branch may depend on memory (docs/design.md, \"The address skeleton\")\n"
          "  --llc-sets N[,N...]  also per-set reuse for caches of N sets (a power of two, 128..32768;\n"
          "                    up to 4 counts), e.g. 1024 for a 1 MiB 16-way LL: a W-way LRU cache of N\n"
          "                    sets misses the cold accesses and those at per-set distance >= W (W <= 32).\n"
          "                    Runs at --sample 1 only (full or --reuse windows); adds \"llc_sets\" to\n"
          "                    each histogram (docs/formats.md)\n"
          "  --seed S          seed of the random argument data (overrides the spec's)\n"
          "  --timeout SEC     kill the instrumented run after SEC seconds (overrides the spec's)\n"
          "  --no-reuse        block counts only (no memory-access hooks: faster)\n"
          "  --static-counts   block counts without running (counts_source \"static\"): from the loop\n"
          "                    nest, parallel bodies divided over --threads (or the spec's pool) as\n"
          "                    the pool does; no reuse. Exit 1 when a branch depends on memory\n"
          "  --reuse trace     reuse without running: addresses interpreted from the loop nest, each\n"
          "                    parallel body in time windows (static counts too; one thread). Falls\n"
          "                    back to the (--sample) run when an address depends on memory\n"
          "  --reuse windows   run the compiled kernel natively except in time windows whose accesses\n"
          "                    go to the exact tracker, scaled to the whole run (one thread, static\n"
          "                    counts). Falls back to the full run when the counts need a run\n"
          "  --trace-share S   share of each parallel body's iterations (trace) or of the run's block\n"
          "                    executions (windows) measured (default 0.05; 1 = all)\n"
          "  --trace-windows K windows the share is split into (default 4)\n"
          "  --trace-warm L    lines each window's warm-up touches before it (default 131072: 8 MiB)\n"
          "  --json            with -o: print the summary as JSON\n"
          "Exit 1 if the kernel crashed or hung, 2 for bad usage or input (malformed IR or spec).\n");
}

static void summary(const pa_profile *p, const char *out, bool json) {
  if (json) {
    printf("{\"profile\": \"%s\", \"module_id\": \"%s\", \"counts_source\": \"%s\", \"functions\": %d, "
           "\"threads\": %d, \"run_seconds\": %.6f, \"accesses\": %.0f, \"cold\": %.0f, \"sample_rate\": %g, "
           "\"exact_window\": %lld}\n",
           out, p->module_id, p->counts_source, p->n_functions, p->threads, p->run_seconds,
           p->reuse_total.accesses, p->reuse_total.cold, p->sample_rate, (long long)p->exact_window);
    return;
  }
  printf("%s: module %s, %d function(s), counts %s", out, p->module_id, p->n_functions, p->counts_source);
  if (p->entry && strcmp(p->counts_source, "static") == 0) printf(" (from %s, %d thread(s))", p->entry, p->threads);
  else if (p->entry) printf(" (ran %s in %.3f s on %d thread(s))", p->entry, p->run_seconds, p->threads);
  printf("\n");
  if (p->addresses_removed > 0) printf("  addresses only: %d instructions left out of the run\n", p->addresses_removed);
  else if (p->addresses_whole) printf("  addresses only: not applied, the whole module ran (%s)\n", p->addresses_whole);
  for (int i = 0; i < p->n_functions; i++) {
    const pa_function *f = &p->functions[i];
    int static_trips = 0;
    for (int l = 0; l < f->n_loops; l++) static_trips += f->loops[l].trip_count >= 0;
    printf("  %-24s %4d blocks %3d loops (%d static trip counts) %8lld instructions  calls %llu%s\n", f->name,
           f->n_blocks, f->n_loops, static_trips, (long long)f->features.instructions,
           (unsigned long long)f->calls, f->parallel ? "  parallel" : "");
  }
  if (p->reuse_total.accesses > 0)
    printf("  reuse: %.0f accesses, %.0f cold lines, sample rate %g\n", p->reuse_total.accesses, p->reuse_total.cold,
           p->sample_rate);
}

/* Writes (or prints) a profile and frees it; `fail_code` is the exit code when p is NULL. */
static int emit(pa_profile *p, const char *out, bool json, int fail_code, pt_diag *d) {
  int rc = EXIT_OK;
  if (!p) {
    fprintf(stderr, "portent analyze: %s\n", d->msg);
    return fail_code;
  }
  if (out) {
    if (pa_profile_save(p, out, d)) {
      fprintf(stderr, "portent analyze: %s\n", d->msg);
      rc = EXIT_FAILED;
    } else summary(p, out, json);
  } else {
    char *js = pa_profile_to_json(p);
    puts(js);
    free(js);
  }
  pa_profile_free(p);
  return rc;
}

/* --llc-sets N[,N...]: set counts for pa_options.llc_sets (checked by pa_llc_sets_invalid, as
 * the run checks them); 0, or -1 after saying why not. */
static int parse_llc_sets(const char *text, pa_options *opt) {
  const char *p = text, *why = NULL;
  int n = 0;
  for (;;) {
    char *end;
    long long v = strtoll(p, &end, 10);
    if (end == p || (*end && *end != ',') || n == PA_LLC_COUNTS || v < 0 || v > PA_LLC_SETS_MAX) {
      why = "expected up to 4 set counts N[,N...]";
      break;
    }
    opt->llc_sets[n++] = (int)v;
    if (!*end) break;
    p = end + 1; /* a trailing comma leaves nothing to parse: refused above */
  }
  if (!why) why = pa_llc_sets_invalid(n, opt->llc_sets);
  if (why) {
    fprintf(stderr, "portent analyze: --llc-sets '%s': %s (a cache's sets: bytes / 64 / ways)\n", text, why);
    return -1;
  }
  opt->n_llc_sets = n;
  return 0;
}

int cmd_analyze(int argc, char **argv) {
  const char *input = NULL, *spec_path = NULL, *out = NULL;
  pa_options opt = {.sample_rate = 1};
  bool json = false, have_seed = false, static_counts = false, trace = false, windows = false;
  pa_trace_opts to = {0};
  unsigned long long seed = 0;
  double timeout = 0;
  schedule_args sa = {0};
  int threads = (int)sysconf(_SC_NPROCESSORS_ONLN);
  for (int i = 1; i < argc; i++) {
    int t = schedule_args_take(&sa, argc, argv, &i);
    if (t < 0) return EXIT_USAGE;
    if (t) continue;
    const char *arg = argv[i];
    bool has_val = i + 1 < argc;
    if (strcmp(arg, "--help") == 0 || strcmp(arg, "-h") == 0) {
      usage(stdout);
      return EXIT_OK;
    } else if (strcmp(arg, "--json") == 0) json = true;
    else if (strcmp(arg, "--no-reuse") == 0) opt.no_reuse = true;
    else if (strcmp(arg, "--addresses-only") == 0) opt.addresses_only = true;
    else if (strcmp(arg, "--line-filter") == 0) opt.line_filter = true;
    else if (strcmp(arg, "--inline-cold-blocks") == 0) opt.inline_cold_blocks = true;
    else if (strcmp(arg, "--counters-in-memory") == 0) opt.counters_in_memory = true;
    else if (strcmp(arg, "--sample-locals") == 0) opt.sample_locals = true;
    else if (strcmp(arg, "--run-static-counts") == 0) opt.static_counts = true;
    else if (strcmp(arg, "--static-counts") == 0) static_counts = true;
    else if (strcmp(arg, "--reuse") == 0 && has_val) {
      if (strcmp(argv[++i], "trace") != 0 && strcmp(argv[i], "run") != 0 && strcmp(argv[i], "windows") != 0) {
        fprintf(stderr, "portent analyze: --reuse takes 'trace', 'windows' or 'run', got '%s'\n", argv[i]);
        return EXIT_USAGE;
      }
      trace = strcmp(argv[i], "trace") == 0;
      windows = strcmp(argv[i], "windows") == 0;
    } else if (strcmp(arg, "--trace-share") == 0 && has_val) {
      to.share = atof(argv[++i]);
      if (!(to.share > 0 && to.share <= 1)) {
        fprintf(stderr, "portent analyze: --trace-share must be in (0, 1]\n");
        return EXIT_USAGE;
      }
    } else if (strcmp(arg, "--trace-windows") == 0 && has_val) {
      to.windows = atoi(argv[++i]);
      if (to.windows < 1 || to.windows > 1000) {
        fprintf(stderr, "portent analyze: --trace-windows must be 1..1000\n");
        return EXIT_USAGE;
      }
    } else if (strcmp(arg, "--trace-warm") == 0 && has_val) {
      to.warm_lines = atoll(argv[++i]);
      if (to.warm_lines < 1) {
        fprintf(stderr, "portent analyze: --trace-warm must be >= 1 line\n");
        return EXIT_USAGE;
      }
    } else if (strcmp(arg, "--spec") == 0 && has_val) spec_path = argv[++i];
    else if (strcmp(arg, "-o") == 0 && has_val) out = argv[++i];
    else if (strcmp(arg, "--sample") == 0 && has_val) {
      char *end;
      opt.sample_rate = strtod(argv[++i], &end);
      if (*end || !(opt.sample_rate > 0 && opt.sample_rate <= 1)) {
        fprintf(stderr, "portent analyze: --sample must be a rate in (0, 1], got '%s'\n", argv[i]);
        return EXIT_USAGE;
      }
    } else if (strcmp(arg, "--window") == 0 && has_val) {
      char *end;
      long long w = strtoll(argv[++i], &end, 10);
      if (*end || w < 0 || w > (1LL << 30)) {
        fprintf(stderr, "portent analyze: --window must be a line count in [0, 2^30], got '%s'\n", argv[i]);
        return EXIT_USAGE;
      }
      opt.exact_window = w ? w : -1;
    } else if (strcmp(arg, "--llc-sets") == 0 && has_val) {
      if (parse_llc_sets(argv[++i], &opt) != 0) return EXIT_USAGE;
    } else if (strcmp(arg, "--seed") == 0 && has_val) {
      seed = strtoull(argv[++i], NULL, 10);
      have_seed = true;
    } else if (strcmp(arg, "--timeout") == 0 && has_val) {
      timeout = atof(argv[++i]);
      if (timeout <= 0) {
        fprintf(stderr, "portent analyze: --timeout must be > 0\n");
        return EXIT_USAGE;
      }
    } else if (strcmp(arg, "--threads") == 0 && has_val) {
      threads = atoi(argv[++i]);
      if (threads < 1 || threads > 64) {
        fprintf(stderr, "portent analyze: --threads must be 1..64\n");
        return EXIT_USAGE;
      }
    } else if (arg[0] != '-' && !input) input = arg;
    else {
      fprintf(stderr, "portent analyze: unexpected argument '%s'\n", arg);
      usage(stderr);
      return EXIT_USAGE;
    }
  }
  if (!input && !sa.expr_file) {
    usage(stderr);
    return EXIT_USAGE;
  }
  if (opt.n_llc_sets && (opt.sample_rate < 1 || trace || static_counts || opt.no_reuse)) {
    fprintf(stderr, "portent analyze: --llc-sets needs every access of a run: not with %s\n",
            opt.sample_rate < 1 ? "--sample below 1 (a sampled run's bursts hold too few lines per set)"
            : trace            ? "--reuse trace"
            : static_counts    ? "--static-counts"
                               : "--no-reuse");
    return EXIT_USAGE;
  }
  if (windows) {
    opt.windowed = true;
    opt.windows = to;
    threads = 1;
  }
  size_t n = input ? strlen(input) : 0;
  bool is_ir = n >= 3 && (strcmp(input + n - 3, ".ll") == 0 || strcmp(input + n - 3, ".bc") == 0);
  pt_diag d = {0};
  if (!is_ir) {
    /* A built-in workload: lower it and profile the very module that runs. */
    sa.workload = input;
    pc_program *prog = NULL;
    pc_state *s = schedule_args_build(&sa, &prog);
    if (!s) return EXIT_USAGE;
    pc_lower_opts lo = {0};
    pc_kernel *k = pc_lower(s, &lo, &d);
    pa_profile *p = NULL;
    bool give_up = false;
    if (k && trace) {
      pa_module *m = pa_module_from_llvm(pc_kernel_module(k));
      pa_static_opts so = {pc_kernel_name(k), 1};
      p = pa_profile_traced(m, &so, &to, &d);
      pa_module_free(m);
      if (!p && d.err == PT_ERR_UNSUPPORTED) fprintf(stderr, "portent analyze: %s; running it instead\n", d.msg);
      else if (!p) give_up = true; /* a real failure: report it */
      if (!p) threads = 1;
    }
    if (p || !k || give_up) {
    } else if (k && static_counts) {
      pa_module *m = pa_module_from_llvm(pc_kernel_module(k));
      pa_static_opts so = {pc_kernel_name(k), threads};
      p = pa_profile_static_counts(m, &so, &d);
      pa_module_free(m);
    } else if (k) {
      int64_t sizes[PC_MAX_STAGES];
      for (int b = 0; b < pc_kernel_n_buffers(k); b++) sizes[b] = pc_kernel_buffer_numel(k, b);
      pa_run_spec *spec = pa_run_spec_portent(pc_kernel_name(k), pc_kernel_n_buffers(k), sizes, threads,
                                              have_seed ? seed : 1);
      if (timeout > 0) spec->timeout_s = timeout;
      p = pa_profile_llvm(pc_kernel_module(k), spec, &opt, &d);
      if (!p && windows && d.err == PT_ERR_UNSUPPORTED) {
        fprintf(stderr, "portent analyze: %s; running it in full instead\n", d.msg);
        opt.windowed = false;
        d = (pt_diag){0};
        p = pa_profile_llvm(pc_kernel_module(k), spec, &opt, &d);
      }
      pa_run_spec_free(spec);
    }
    int rc = emit(p, out, json, EXIT_FAILED, &d);
    pc_kernel_free(k);
    pc_state_free(s);
    pc_program_free(prog);
    return rc;
  }
  pa_module *m = pa_module_load(input, &d);
  if (!m) {
    fprintf(stderr, "portent analyze: %s\n", d.msg);
    return d.err == PT_ERR_IO || d.err == PT_ERR_INPUT ? EXIT_USAGE : EXIT_FAILED;
  }
  pa_run_spec *spec = NULL;
  if (spec_path && !(spec = pa_run_spec_load(spec_path, &d))) {
    fprintf(stderr, "portent analyze: %s\n", d.msg);
    pa_module_free(m);
    return EXIT_USAGE;
  }
  if (spec && have_seed) spec->seed = seed;
  if (spec && timeout > 0) spec->timeout_s = timeout;
  pa_profile *p = NULL;
  if (trace) {
    pa_static_opts so = {spec ? spec->entry : NULL, 1};
    p = pa_profile_traced(m, &so, &to, &d);
    if (!p && d.err == PT_ERR_UNSUPPORTED && spec) fprintf(stderr, "portent analyze: %s; running it instead\n", d.msg);
  }
  if (p || (trace && !spec)) {
  } else if (static_counts) {
    /* the spec names the entry and the pool's threads; without one, the first visible function */
    pa_static_opts so = {spec ? spec->entry : NULL, 1};
    for (int i = 0; spec && i < spec->n_args; i++)
      if (spec->args[i].kind == PA_ARG_POOL) so.threads = spec->args[i].threads;
    p = pa_profile_static_counts(m, &so, &d);
  } else {
    p = spec ? pa_profile_build(m, spec, &opt, &d) : pa_profile_static(m, &d);
    if (!p && windows && d.err == PT_ERR_UNSUPPORTED) {
      fprintf(stderr, "portent analyze: %s; running it in full instead\n", d.msg);
      opt.windowed = false;
      d = (pt_diag){0};
      p = pa_profile_build(m, spec, &opt, &d);
    }
  }
  int rc = emit(p, out, json, d.err == PT_ERR_INPUT ? EXIT_USAGE : EXIT_FAILED, &d);
  pa_run_spec_free(spec);
  pa_module_free(m);
  return rc;
}
