/* portent predict: predicted time of a program profile on a target description, with its
 * breakdown by function, block, compute vs memory and the bound that dominated. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analyzer.h"
#include "commands.h"
#include "predictor.h"
#include "targets.h"

static void usage(FILE *f) {
  fprintf(f,
          "usage: portent predict --target T.json PROFILE.json [--threads N] [--model M] [--blocks K] [--json]\n\n"
          "  --target T.json  target description (a file, or a shipped name such as amd-zen4)\n"
          "  PROFILE.json     program profile of `portent analyze` (with block counts)\n"
          "  --threads N      threads on the target, 1..its cores (default: all its cores)\n"
          "  --model M        patent | patent+bw | steady | steady+mlp | steady+bw | full, optionally\n"
          "                   + \"+strides\", \"+overlap\", \"+carried\", \"+lanes\", \"+sets\", \"+shared\", \"+far\",\n"
          "                   \"+busy\", \"+forward\", \"+dirty\", \"+streams\", \"+llcwalk\", \"+regs\", \"+cmpbr\",\n"
          "                   \"+fold\", \"+setsum\", \"+setns\", \"+setloads\", \"+memchain\", \"-assoc\"\n"
          "                   (default steady+bw+overlap+strides+lanes+sets+carried+shared+far+busy+forward+dirty+llcwalk+regs+memchain+setsum+streams+setloads:\n"
          "                   steady-state loops, the bandwidth bound, overlapping instances of latency-\n"
          "                   bound inner loops and the profile's per-access strides on top of the\n"
          "                   patent's formula; full adds memory-level parallelism; +carried bounds\n"
          "                   loops by their float recurrences through several blocks; +lanes prices\n"
          "                   scatters and gathers/scatters with lanes a page apart by their own rows;\n"
          "                   +sets bounds loops whose walks fall in few L1 sets by the target's L1\n"
          "                   misses in flight per set, caches[0].set_walks (+far: also walks whose lines\n"
          "                   come back only past L1's capacity, and charges gathers' page-apart\n"
          "                   lanes that come back so an L2 fill each, and past the L1 DTLB's reach\n"
          "                   an L2-TLB hit each); +shared bounds parallel\n"
          "                   bodies whose threads store into the same lines by the shared level's\n"
          "                   latency over the misses in flight; +busy runs parallel bodies at the\n"
          "                   share of a core the target's L1 bandwidth per thread keeps with that\n"
          "                   many threads busy; +forward adds cpu.store_forward_fail_cycles to a loop\n"
          "                   block whose load spans narrower stores of the same iteration; +dirty\n"
          "                   prices a read-modify-write walk in few L1 sets by the target's\n"
          "                   set_walks[].rmw_ns_per_access: each fill also evicts a dirty line;\n"
          "                   +streams prices more rows walked side by side\n"
          "                   than L1's ways in one set position by caches[0].set_streams; +llcwalk\n"
          "                   prices walks a measured stride apart whose lines\n"
          "                   come back only where the latency curve leaves the last level, by\n"
          "                   memory.strided_walks' ns per access); +regs prices a loop whose float\n"
          "                   accumulators need more vector registers than the target has at\n"
          "                   cpu.spill_update_cycles per update (targets without it: unchanged);\n"
          "                   +memchain prices accumulators kept in memory (a load, ops and a store\n"
          "                   back that a later block or the next iteration loads again) at the\n"
          "                   target's cpu.store_forward_cycles a link (else an L1 hit); on x86 targets, not in the\n"
          "                   default, +cmpbr fuses a compare with its branch and +fold a load with\n"
          "                   its arithmetic user: one issue slot for each pair; +setsum adds a\n"
          "                   loop's +sets misses in one L1 set position, no access wider than a\n"
          "                   line, to its other cycles instead of bounding them; +setns (not in the default)\n"
          "                   prices those misses at the set walks' own ns per access; +setloads\n"
          "                   prices a group read by several load instructions at the target's\n"
          "                   caches[0].set_loads ratio to one load (targets without it: unchanged)\n"
          "  --blocks K       list the K costliest blocks (default 8)\n"
          "  --json           print the prediction as JSON\n"
          "Exit 2 for bad usage or input (unreadable profile or target, thread count out of range).\n");
}

/* A path, or the name of a shipped target. */
static ptg_target *load_target(const char *arg, pt_diag *d) {
  if (strchr(arg, '/') || strstr(arg, ".json")) return ptg_target_load(arg, d);
  char path[1024];
  snprintf(path, sizeof path, "%s/%s.json", ptg_shipped_dir(), arg);
  return ptg_target_load(path, d);
}

int cmd_predict(int argc, char **argv) {
  const char *target_path = NULL, *profile_path = NULL, *model = "steady+bw+overlap+strides+lanes+sets+carried+shared+far+busy+forward+dirty+llcwalk+regs+memchain+setsum+streams+setloads";
  int threads = 0, blocks = 8;
  bool json = false, have_threads = false;
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i];
    bool has_val = i + 1 < argc;
    if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
      usage(stdout);
      return EXIT_OK;
    } else if (strcmp(a, "--json") == 0) json = true;
    else if (strcmp(a, "--target") == 0 && has_val) target_path = argv[++i];
    else if (strcmp(a, "--model") == 0 && has_val) model = argv[++i];
    else if (strcmp(a, "--blocks") == 0 && has_val) blocks = atoi(argv[++i]);
    else if (strcmp(a, "--threads") == 0 && has_val) {
      char *end;
      long v = strtol(argv[++i], &end, 10);
      if (*end || v < 1 || v > 1 << 20) {
        fprintf(stderr, "portent predict: --threads must be a positive integer, got '%s'\n", argv[i]);
        return EXIT_USAGE;
      }
      threads = (int)v, have_threads = true;
    } else if (a[0] != '-' && !profile_path) profile_path = a;
    else {
      fprintf(stderr, "portent predict: unexpected argument '%s'\n", a);
      usage(stderr);
      return EXIT_USAGE;
    }
  }
  if (!target_path || !profile_path) {
    usage(stderr);
    return EXIT_USAGE;
  }
  pp_options o;
  pp_options_default(&o);
  if (pp_options_preset(&o, model)) {
    fprintf(stderr, "portent predict: unknown --model '%s' (patent, patent+bw, steady, steady+mlp, steady+bw, full; +overlap, +strides, +carried, +inflight, +lanes, -assoc)\n", model);
    return EXIT_USAGE;
  }
  pt_diag d = {0};
  ptg_target *t = load_target(target_path, &d);
  if (!t) {
    fprintf(stderr, "portent predict: %s\n", d.msg);
    return EXIT_USAGE;
  }
  if (have_threads && threads > t->cores) {
    fprintf(stderr, "portent predict: --threads %d: target %s has %d cores\n", threads, t->name, t->cores);
    ptg_target_free(t);
    return EXIT_USAGE;
  }
  o.threads = threads;
  pa_profile *p = pa_profile_load(profile_path, &d);
  if (!p) {
    fprintf(stderr, "portent predict: %s\n", d.msg);
    ptg_target_free(t);
    return EXIT_USAGE;
  }
  pp_prediction *r = pp_predict_profile(p, t, &o, &d);
  int rc = EXIT_OK;
  if (!r) {
    fprintf(stderr, "portent predict: %s\n", d.msg);
    rc = d.err == PT_ERR_INPUT || d.err == PT_ERR_INVALID ? EXIT_USAGE : EXIT_FAILED;
  } else if (json) {
    char *s = pp_prediction_to_json(r);
    puts(s);
    free(s);
  } else {
    printf("%s on ", profile_path);
    pp_prediction_print(stdout, r, blocks);
  }
  pp_prediction_free(r);
  pa_profile_free(p);
  ptg_target_free(t);
  return rc;
}
