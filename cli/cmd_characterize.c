/* portent characterize: microbenchmark this machine into a target description. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "commands.h"
#include "microbench.h"

static void usage(FILE *f) {
  fprintf(f, "usage: portent characterize [-o FILE.json] [--update FILE.json] [--name NAME] [--quick] [--threads N] [--only LIST] [--skip LIST] [--small-pages] [--gpu]\n\n"
             "Measures this machine (topology, instruction latency/throughput, caches, memory, thread\n"
             "pool) and writes a target description (docs/formats.md, \"Target description\"), to FILE\n"
             "or to stdout. Progress goes to stderr.\n\n"
             "  -o FILE        write here (atomically: no partial file on failure)\n"
             "  --update FILE  measure only what --only/--skip/--gpu select and merge it into FILE (a\n"
             "                 description of this kind of machine): those rows and sections are\n"
             "                 replaced, the rest kept; written back to FILE, or to -o\n"
             "  --name NAME    target name (default: microarchitecture-vendor-Nc, e.g. zen5-epyc-2c)\n"
             "  --quick        fewer widths, sizes and repetitions (seconds instead of a minute)\n"
             "  --threads N    most threads for bandwidth and thread-pool figures (default: all cores)\n"
             "  --only LIST    instruction classes to measure, e.g. add:f32,fma:f32:512 (op[:type[:bits]]),\n"
             "                 and/or parts: memory, mlp, l1sets, l1rmw, l1streams, l1loads, forward, spills, runtime, units (naming a part\n"
             "                 leaves out the parts not named, and the instruction table unless classes are\n"
             "                 named too); l1sets: L1 misses in flight per set (walks in few L1 sets); l1rmw:\n"
             "                 the same walks read-modify-write (set_walks[].rmw_ns_per_access); l1streams: rows\n"
             "                 4 KiB apart walked side by side, loaded or read-modify-written\n"
             "                 (caches[0].set_streams); l1loads: the set walks read by 1..16 load\n"
             "                 instructions at once (caches[0].set_loads); forward: a\n"
             "                 load spanning two stores in flight (cpu.store_forward_fail_cycles); spills:\n"
             "                 register tiles larger than the vector registers (cpu.spill_update_cycles)\n"
             "  --skip LIST    parts to leave out: memory, mlp, l1sets, l1rmw, l1streams, l1loads, forward, spills, runtime, units\n"
             "                 (comma-separated)\n"
             "  --small-pages  memory buffers in 4 KiB pages (default: 2 MiB where the kernel allows)\n"
             "  --reps N       timed repetitions per figure (default 5, --quick 3)\n"
             "  --gpu          also characterize the GPU (fails when there is none)\n");
}

/* Fails early, before minutes of measuring, when the output cannot be written. */
static int check_writable(const char *path) {
  char tmp[4096];
  snprintf(tmp, sizeof tmp, "%s.probe.%ld", path, (long)getpid());
  int fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL, 0644);
  if (fd < 0) {
    fprintf(stderr, "portent characterize: %s: cannot write: %s\n", path, strerror(errno));
    return -1;
  }
  close(fd);
  unlink(tmp);
  return 0;
}

/* The parts --skip and --only name, with the option each sets to leave it out. */
static bool *part_flag(pmb_options *o, const char *p, size_t n) {
  static const char *names[] = {"memory", "mlp", "l1sets", "l1rmw", "l1streams", "l1loads", "forward", "spills", "runtime", "units"};
  bool *flags[] = {&o->skip_memory,     &o->skip_mlp,     &o->skip_l1_sets, &o->skip_l1_rmw,  &o->skip_l1_streams,
                   &o->skip_l1_loads,   &o->skip_forward, &o->skip_spills,  &o->skip_runtime, &o->skip_units};
  for (size_t i = 0; i < PT_ARRAY_LEN(names); i++)
    if (strlen(names[i]) == n && strncmp(p, names[i], n) == 0) return flags[i];
  return NULL;
}

/* "memory,runtime,units": the parts of the characterization to leave out (a partial target
 * is still valid: the loader treats missing sections as absent, not as zero). */
static int parse_skip(const char *list, pmb_options *o) {
  const char *p = list;
  while (*p) {
    size_t n = strcspn(p, ",");
    bool *f = part_flag(o, p, n);
    if (!f) {
      fprintf(stderr, "portent characterize: --skip: unknown part '%.*s' (memory, mlp, l1sets, l1rmw, l1streams, l1loads, forward, spills, runtime, units)\n", (int)n, p);
      return -1;
    }
    *f = true;
    p += n + (p[n] == ',');
  }
  return 0;
}

/* --only: parts named in the list are measured and the others left out; the remaining items
 * (instruction classes) go to o->only, and with none left no instruction table is measured.
 * A list of classes only keeps the old meaning (every part, those classes). */
static void parse_only(char *list, pmb_options *o) {
  pmb_options named = {0}; /* its skip flags mark the parts the list names */
  bool any = false;
  char *w = list;
  for (const char *p = list; *p;) {
    size_t n = strcspn(p, ",");
    bool *f = part_flag(&named, p, n);
    if (f) {
      *f = any = true;
    } else {
      if (w != list) *w++ = ',';
      memmove(w, p, n);
      w += n;
    }
    p += n + (p[n] == ',');
  }
  *w = 0;
  if (!any) return;
  o->skip_memory |= !named.skip_memory;
  o->skip_mlp |= !named.skip_mlp;
  o->skip_l1_sets |= !named.skip_l1_sets;
  o->skip_l1_rmw |= !named.skip_l1_rmw;
  o->skip_l1_streams |= !named.skip_l1_streams;
  o->skip_l1_loads |= !named.skip_l1_loads;
  o->skip_forward |= !named.skip_forward;
  o->skip_spills |= !named.skip_spills;
  o->skip_runtime |= !named.skip_runtime;
  o->skip_units |= !named.skip_units;
  if (!*list) o->skip_instructions = true, o->only = NULL;
}

/* The description --update refreshes: loaded and checked against this machine before minutes
 * of measuring. A subset of instruction rows cannot group execution units (the grouping needs
 * every class), so with --only the file's units are kept. */
static ptg_target *load_for_update(const char *path, pmb_options *o, pt_diag *d) {
  ptg_target *base = ptg_target_load(path, d);
  if (!base) {
    fprintf(stderr, "portent characterize: --update: %s\n", d->msg);
    return NULL;
  }
  ptg_target *host = ptg_target_new("host");
  int rc = pmb_topology(host, d);
  if (rc == 0) rc = ptg_target_check_same_cpu(base, host, path, d);
  ptg_target_free(host);
  if (rc < 0) {
    fprintf(stderr, "portent characterize: --update: %s\n", d->msg);
    ptg_target_free(base);
    return NULL;
  }
  if (o->only && !o->skip_units) {
    o->skip_units = true;
    fprintf(stderr, "characterize: --only with --update: execution units kept from %s\n", path);
  }
  if (!o->name) o->name = base->name;
  return base;
}

static ptg_target *merge_update(const ptg_target *base, ptg_target *fresh, const pmb_options *o, const char *path,
                                pt_diag *d) {
  ptg_update_summary s = {.units = !o->skip_units, .memory = !o->skip_memory, .mlp = !o->skip_mlp, .sets = !o->skip_l1_sets,
                          .rmw = !o->skip_l1_rmw, .streams = !o->skip_l1_streams, .loads = !o->skip_l1_loads, .forward = !o->skip_forward, .spills = !o->skip_spills, .runtime = !o->skip_runtime, .gpu = o->gpu};
  ptg_target *t = ptg_target_update(base, fresh, &s, d);
  ptg_target_free(fresh);
  if (t)
    fprintf(stderr, "characterize: %s: %d instruction rows measured again, %d added%s%s%s%s%s%s%s%s%s%s\n", path, s.replaced, s.added,
            s.units ? ", units" : "", s.memory ? ", caches and memory" : "", s.mlp ? ", misses in flight" : "",
            s.sets ? ", L1 set walks" : "", s.rmw ? ", L1 read-modify-write walks" : "", s.streams ? ", L1 set streams" : "", s.loads ? ", L1 set walks by loads" : "", s.forward ? ", store forwarding" : "", s.spills ? ", spilled register tiles" : "", s.runtime ? ", thread pool" : "");
  return t;
}

int cmd_characterize(int argc, char **argv) {
  pmb_options o = {.progress = stderr};
  const char *out = NULL, *update = NULL, *only = NULL;
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i];
    bool has_value = i + 1 < argc;
    if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
      usage(stdout);
      return EXIT_OK;
    } else if (strcmp(a, "-o") == 0 && has_value) {
      out = argv[++i];
    } else if (strcmp(a, "--update") == 0 && has_value) {
      update = argv[++i];
    } else if (strcmp(a, "--name") == 0 && has_value) {
      o.name = argv[++i];
    } else if (strcmp(a, "--quick") == 0) {
      o.quick = true;
    } else if (strcmp(a, "--small-pages") == 0) {
      o.small_pages = true;
    } else if (strcmp(a, "--gpu") == 0) {
      o.gpu = true;
    } else if (strcmp(a, "--only") == 0 && has_value) {
      only = argv[++i];
    } else if (strcmp(a, "--skip") == 0 && has_value) {
      if (parse_skip(argv[++i], &o) < 0) return EXIT_USAGE;
    } else if ((strcmp(a, "--threads") == 0 || strcmp(a, "--reps") == 0) && has_value) {
      char *end;
      long v = strtol(argv[++i], &end, 10);
      if (*end || v < 1 || v > 64) {
        fprintf(stderr, "portent characterize: %s: expected 1..64, got '%s'\n", a, argv[i]);
        return EXIT_USAGE;
      }
      if (a[2] == 't') o.max_threads = (int)v;
      else o.repetitions = (int)v;
    } else {
      fprintf(stderr, "portent characterize: unknown or incomplete option '%s'\n", a);
      usage(stderr);
      return EXIT_USAGE;
    }
  }
  char only_list[1024]; /* after --skip: --only's parts add to it */
  if (only) {
    if (strlen(only) >= sizeof only_list) {
      fprintf(stderr, "portent characterize: --only: list too long\n");
      return EXIT_USAGE;
    }
    snprintf(only_list, sizeof only_list, "%s", only);
    o.only = only_list;
    parse_only(only_list, &o);
  }
  pt_diag d = {0};
  ptg_target *base = NULL;
  if (update) {
    if (!(base = load_for_update(update, &o, &d))) return d.err == PT_ERR_IO ? EXIT_FAILED : EXIT_USAGE;
    if (!out) out = update;
  }
  if (out && check_writable(out) < 0) {
    ptg_target_free(base);
    return EXIT_FAILED;
  }
  ptg_target *t = pmb_characterize(&o, &d);
  if (t && base) t = merge_update(base, t, &o, update, &d);
  ptg_target_free(base);
  if (!t) {
    fprintf(stderr, "portent characterize: %s\n", d.msg);
    return EXIT_FAILED;
  }
  int rc = EXIT_OK;
  if (out) {
    if (ptg_target_save(t, out, &d) < 0) {
      fprintf(stderr, "portent characterize: %s\n", d.msg);
      rc = EXIT_FAILED;
    } else {
      fprintf(stderr, "characterize: wrote %s\n", out);
    }
  } else {
    char *text = ptg_target_to_json(t, &d);
    if (text) {
      puts(text);
      free(text);
    } else {
      fprintf(stderr, "portent characterize: %s\n", d.msg);
      rc = EXIT_FAILED;
    }
  }
  ptg_target_free(t);
  return rc;
}
