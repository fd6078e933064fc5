/* portent bench predict: the predictor against measurements on this machine. For each suite
 * workload, the default schedule and random valid schedules are measured (pc_measure) and
 * predicted from the host's target description (bench_predict_report.c prints the metrics).
 * --save keeps the set for later, --cross predicts one saved machine's times from another's
 * profiles, --mca compares loop bodies with llvm-mca. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_predict.h"
#include "commands.h"
#include "host_target.h"
#include "compiler.h"
#include "predictor.h"
#include "targets.h"

static void usage(FILE *f) {
  fprintf(f,
          "usage: portent bench predict [--target T.json] [--workloads a,b,...] [--candidates N] [--seed S]\n"
          "       [--sample RATE] [--min-time SEC] [--timeout SEC] [--cpu-clock] [--threads N] [--svg FILE] [--cache DIR] [--remeasure]\n"
          "       [--replay SET [--measure-only]] [--tuned LOG[,LOG...] [--tuned-count K]]\n"
          "       [--save DIR [--platform NAME]] [--truth median|min] [--worst K] [--pairs W] [--tsv FILE] [--mca [N]]\n"
          "       [--json]\n"
          "       portent bench predict --cross A B [--truth median|min] [--worst K] [--pairs W] [--split LIST] [--svg FILE]\n"
          "       [--json]\n"
          "       portent bench predict --from A [--restatic [IRDIR] | --reprofile] [--save DIR] [--mca [N]] [--worst K] [--pairs W]\n"
          "       portent bench predict --merge-rounds SET1,SET2,... --save DIR [--platform NAME] [--json]\n\n"
          "  --target T.json   target description of this machine (default: the shipped one named as\n"
          "                    characterize names this host, e.g. targets/zen4-epyc-2c.json; else zen5-epyc-2c)\n"
          "  --workloads LIST  suite workloads or operator specs, comma-separated (default: the suite)\n"
          "  --candidates N    random schedules per workload besides the default one (default 30)\n"
          "  --seed S          seed of the random schedules (default 1)\n"
          "  --sample RATE     SHARDS rate of the reuse profiles (default 0.01)\n"
          "  --min-time SEC    minimum timed seconds per measurement (default 0.05)\n"
          "  --timeout SEC     a candidate's run (warm-up and repeats) killed after SEC seconds of the wall\n"
          "                    clock and counted as failed (default 10)\n"
          "  --cpu-clock       with --threads 1: time each run by the thread's CPU time, not the wall clock\n"
          "                    (time slices other processes take are not counted; saved records say\n"
          "                    \"clock\": \"cpu\")\n"
          "  --threads N       threads for measurement and prediction (default 1)\n"
          "  --svg FILE        scatter of predicted vs measured (default predict-scatter.svg)\n"
          "  --tuned LOGS      also the K fastest distinct valid schedules of each workload in these\n"
          "                    tuning logs (TVM records, comma-separated), as candidates 1000, 1001 ...\n"
          "  --tuned-count K   how many per workload (default 3)\n"
          "  --cache DIR       keep each candidate's measured time and profile in DIR and reuse them on\n"
          "                    the next run with the same seed (re-evaluates model changes without measuring)\n"
          "  --remeasure       with --cache: measure every candidate again, reusing only cached profiles\n"
          "  --replay SET      measure and profile a saved set's schedules (its workloads, steps and\n"
          "                    candidate numbers) instead of drawing random ones: how a second machine\n"
          "                    makes a set that --cross pairs one to one with the first\n"
          "  --measure-only    with --replay: measure only, and predict from SET's own profiles (made on\n"
          "                    the machine SET comes from): the cross-machine check in one run, without\n"
          "                    the cost of profiling; --save then keeps SET's profiles with this run's times\n"
          "  --save DIR        write the set (target file, records with measured times, gzipped profiles)\n"
          "                    to DIR, e.g. data/predict/zen5, so it can be predicted later without running\n"
          "  --platform NAME   the platform name the saved records carry (default: DIR's last component)\n"
          "  --cross A B       predict B's measured times from A's profiles and B's target file; A and B\n"
          "                    are saved sets (a name means data/predict/NAME in the source tree)\n"
          "  --from A          evaluate a saved set as it is (the same as --cross A A)\n"
          "  --merge-rounds SETS  the saved sets SETS are rounds of one set's schedules measured one after\n"
          "                    another (each `--replay S --measure-only --save ROUND`): --save DIR gets\n"
          "                    each candidate's median over the rounds (each round's time kept in its\n"
          "                    record), the rounds' target file and profiles (the replayed set's); prints\n"
          "                    the round-to-round Spearman within each workload (how far the measured\n"
          "                    order repeats)\n"
          "  --restatic [IRDIR]  with --cross/--from: give A's profiles today's static analysis (per-access\n"
          "                    strides, parallel bodies' chunk work) without running, keeping their\n"
          "                    measured counts and reuse: from\n"
          "                    IRDIR/WORKLOAD_CANDIDATE.ll (the modules as A's portent version lowered\n"
          "                    them) or by lowering each schedule again; a profile whose code differs keeps\n"
          "                    its own. With --save DIR: rewrite DIR/profiles.jsonl.gz with the result\n"
          "  --reprofile       with --cross/--from: profile A's schedules again with today's analyzer (each\n"
          "                    old profile's SHARDS rate, A's threads), keeping A's measured times; with\n"
          "                    --save DIR as --restatic (profiles are target-neutral: any machine will do)\n"
          "  --truth median|min  the measured time compared with: the median of the repeats (default) or\n"
          "                    the fastest one (preemption on a shared machine only ever adds time)\n"
          "  --worst K         list the K candidates the default model misses most (default 0)\n"
          "  --pairs W         workload W's pairs that the default model orders against the measured times:\n"
          "                    how many are measured within 5%% of each other, predicted within 3%%, or\n"
          "                    neither; the candidates in most; the model's tie groups (predictions within\n"
          "                    0.5%%) with their measured spread and the Spearman that keeping them tied\n"
          "                    allows at best\n"
          "  --tsv FILE        write every candidate's measured time and each preset's prediction (seconds)\n"
          "                    as tab-separated columns, for analyses beyond the printed metrics\n"
          "  --split LIST      every model's metrics on the workloads named (comma-separated) and on the\n"
          "                    others: choose a default on one half, judge it on the other\n"
          "  --mca [N]         llvm-mca-19 vs the simulator on the innermost loop bodies of the first N\n"
          "                    candidates of each workload (default 3)\n"
          "  --json            print the summary as JSON\n");
}

/* --cross A B (and --from A = --cross A A): no measurement, no profiling. */
static int cross(const char *a_name, const char *b_name, bp_report_opts *ro, int mca, bool truth_min, bool restatic,
                 bool reprofile, const char *ir_dir, const char *save) {
  char a_dir[1024], b_dir[1024], tpath[1100];
  bp_set_dir(a_name, a_dir, sizeof a_dir);
  bp_set_dir(b_name, b_dir, sizeof b_dir);
  pt_diag d = {0};
  bp_set *a = bp_load(a_dir, true, &d), *b = a && strcmp(a_dir, b_dir) != 0 ? bp_load(b_dir, false, &d) : a;
  snprintf(tpath, sizeof tpath, "%s/target.json", b_dir);
  ptg_target *t = b ? ptg_target_load(tpath, &d) : NULL;
  if (!t) {
    fprintf(stderr, "portent bench predict: %s\n", d.msg);
    if (b != a) bp_set_free(b);
    bp_set_free(a);
    return EXIT_USAGE;
  }
  if (restatic || reprofile) {
    if (reprofile) bp_reprofile(a, ro->worst > 0);
    else bp_restatic(a, ir_dir, ro->worst > 0);
    if (save && bp_save_profiles(a, save, &d) != 0) {
      fprintf(stderr, "portent bench predict: %s\n", d.msg);
      if (b != a) bp_set_free(b);
      bp_set_free(a);
      ptg_target_free(t);
      return EXIT_FAILED;
    }
  }
  bp_set *c = a;
  int unmatched = 0;
  if (b != a) { /* B's measured times, A's profiles of the same schedules */
    c = bp_set_new();
    c->borrowed = true, c->threads = b->threads;
    for (int i = 0; i < b->nw; i++) {
      const bp_workload *wb = &b->w[i];
      bp_workload *wa = NULL;
      for (int q = 0; q < a->nw; q++)
        if (strcmp(a->w[q].name, wb->name) == 0) wa = &a->w[q];
      for (int j = 0; j < wb->n; j++) {
        /* the same schedule: the same candidate number if its steps match (a random schedule
         * drawn twice pairs with itself), otherwise the first with the same steps */
        int m = -1;
        for (int q = 0; wa && q < wa->n && m < 0; q++)
          if (wa->candidate[q] == wb->candidate[j] && strcmp(wa->steps[q], wb->steps[j]) == 0) m = q;
        for (int q = 0; wa && q < wa->n && m < 0; q++)
          if (strcmp(wa->steps[q], wb->steps[j]) == 0) m = q;
        if (m < 0) {
          unmatched++;
          continue;
        }
        bp_workload *wc = bp_set_workload(c, wb->name);
        bp_set_add(c, wc, wb->candidate[j], wb->meas[j], wa->prof[m], wb->steps[j], NULL);
        bp_set_add_spread(wc, wb->meas_min[j], wb->repeats[j]);
      }
    }
  }
  if (truth_min) bp_set_use_min(c);
  char title[2300];
  snprintf(title, sizeof title, "profiles: %s; measured times (%s) and target: %s%s", a_dir,
           truth_min ? "fastest repeat" : "median", b_dir,
           unmatched ? pt_sprintf(c->arena, " (%d of B's candidates have no profile in A: skipped)", unmatched) : "");
  ro->title = title;
  int rc = bp_report(t, c, ro);
  if (mca > 0 && rc == EXIT_OK) rc = bp_mca(t, c, mca, ro->json);
  if (c != a) bp_set_free(c);
  if (b != a) bp_set_free(b);
  bp_set_free(a);
  ptg_target_free(t);
  return rc;
}

int cmd_bench_predict(int argc, char **argv) {
  const char *target_path = NULL, *workloads = NULL, *svg = "predict-scatter.svg", *cache = NULL;
  const char *save = NULL, *platform = NULL, *cross_a = NULL, *cross_b = NULL, *replay = NULL, *rounds = NULL;
  int candidates = 30, threads = 1, worst = 0, mca = 0;
  const char *tsv = NULL, *split = NULL, *pairs = NULL, *tuned_logs = NULL;
  int tuned_count = 3;
  bool remeasure = false, truth_min = false, restatic = false, reprofile = false, measure_only = false, cpu_clock = false;
  const char *ir_dir = NULL;
  unsigned long long seed = 1;
  double sample = 0.01, min_time = 0.05, timeout = 10;
  bool json = false;
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i];
    bool has_val = i + 1 < argc;
    if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
      usage(stdout);
      return EXIT_OK;
    } else if (strcmp(a, "--json") == 0) json = true;
    else if (strcmp(a, "--target") == 0 && has_val) target_path = argv[++i];
    else if (strcmp(a, "--workloads") == 0 && has_val) workloads = argv[++i];
    else if (strcmp(a, "--candidates") == 0 && has_val) candidates = atoi(argv[++i]);
    else if (strcmp(a, "--seed") == 0 && has_val) seed = strtoull(argv[++i], NULL, 10);
    else if (strcmp(a, "--sample") == 0 && has_val) sample = atof(argv[++i]);
    else if (strcmp(a, "--min-time") == 0 && has_val) min_time = atof(argv[++i]);
    else if (strcmp(a, "--threads") == 0 && has_val) threads = atoi(argv[++i]);
    else if (strcmp(a, "--cpu-clock") == 0) cpu_clock = true;
    else if (strcmp(a, "--timeout") == 0 && has_val) timeout = atof(argv[++i]);
    else if (strcmp(a, "--svg") == 0 && has_val) svg = argv[++i];
    else if (strcmp(a, "--cache") == 0 && has_val) cache = argv[++i];
    else if (strcmp(a, "--remeasure") == 0) remeasure = true;
    else if (strcmp(a, "--restatic") == 0) {
      restatic = true;
      if (has_val && argv[i + 1][0] != '-') ir_dir = argv[++i];
    }
    else if (strcmp(a, "--reprofile") == 0) reprofile = true;
    else if (strcmp(a, "--replay") == 0 && has_val) replay = argv[++i];
    else if (strcmp(a, "--measure-only") == 0) measure_only = true;
    else if (strcmp(a, "--tuned") == 0 && has_val) tuned_logs = argv[++i];
    else if (strcmp(a, "--tuned-count") == 0 && has_val) tuned_count = atoi(argv[++i]);
    else if (strcmp(a, "--truth") == 0 && has_val && (strcmp(argv[i + 1], "min") == 0 || strcmp(argv[i + 1], "median") == 0))
      truth_min = strcmp(argv[++i], "min") == 0;
    else if (strcmp(a, "--save") == 0 && has_val) save = argv[++i];
    else if (strcmp(a, "--platform") == 0 && has_val) platform = argv[++i];
    else if (strcmp(a, "--cross") == 0 && i + 2 < argc) cross_a = argv[++i], cross_b = argv[++i];
    else if (strcmp(a, "--from") == 0 && has_val) cross_a = cross_b = argv[++i];
    else if (strcmp(a, "--merge-rounds") == 0 && has_val) rounds = argv[++i];
    else if (strcmp(a, "--worst") == 0 && has_val) worst = atoi(argv[++i]);
    else if (strcmp(a, "--tsv") == 0 && has_val) tsv = argv[++i];
    else if (strcmp(a, "--split") == 0 && has_val) split = argv[++i];
    else if (strcmp(a, "--pairs") == 0 && has_val) pairs = argv[++i];
    else if (strcmp(a, "--mca") == 0) mca = has_val && argv[i + 1][0] >= '0' && argv[i + 1][0] <= '9' ? atoi(argv[++i]) : 3;
    else {
      fprintf(stderr, "portent bench predict: unexpected argument '%s'\n", a);
      usage(stderr);
      return EXIT_USAGE;
    }
  }
  if (rounds) { /* nothing measured or predicted: the rounds' records merged */
    if (!save || cross_a || replay || tuned_logs || cache) {
      fprintf(stderr, "portent bench predict: --merge-rounds needs --save DIR (and no --cross, --from, --replay, --tuned or --cache)\n");
      return EXIT_USAGE;
    }
    return bp_merge_rounds(rounds, save, platform, json);
  }
  if ((restatic || reprofile) && (!cross_a || (restatic && reprofile))) {
    fprintf(stderr, "portent bench predict: --restatic and --reprofile go with --from or --cross, one of them\n");
    return EXIT_USAGE;
  }
  if (measure_only && (!replay || cache)) {
    fprintf(stderr, "portent bench predict: --measure-only needs --replay SET (and no --cache)\n");
    return EXIT_USAGE;
  }
  if (tuned_logs && replay) {
    fprintf(stderr, "portent bench predict: --tuned draws new candidates; --replay takes the set's (tuned ones too)\n");
    return EXIT_USAGE;
  }
  if (tuned_logs) { /* a log that cannot be read stops here, before anything is measured */
    int n = 0;
    pt_diag dl = {0};
    char **none = bp_tuned_steps(tuned_logs, "", 1, &n, &dl);
    if (!none) {
      fprintf(stderr, "portent bench predict: --tuned: %s\n", dl.msg);
      return EXIT_USAGE;
    }
    free(none);
  }
  if (candidates < 0 || tuned_count < 1 || threads < 1 || !(sample > 0 && sample <= 1) || !(min_time > 0) || !(timeout > 0) || worst < 0 || mca < 0) {
    fprintf(stderr, "portent bench predict: --candidates >= 0, --tuned-count >= 1, --threads >= 1, --sample in (0,1], --min-time > 0, --timeout > 0, "
                    "--worst >= 0, --mca >= 0\n");
    return EXIT_USAGE;
  }
  bp_report_opts ro = {.json = json, .svg = svg, .worst = worst, .tsv = tsv, .split = split, .pairs = pairs};
  if (cross_a) return cross(cross_a, cross_b, &ro, mca, truth_min, restatic, reprofile, ir_dir, save);
  pt_diag d = {0};
  char path[1024];
  if (!target_path) target_path = host_target_path(path, sizeof path);
  ptg_target *t = ptg_target_load(target_path, &d);
  if (!t) {
    fprintf(stderr, "portent bench predict: %s\n", d.msg);
    return EXIT_USAGE;
  }
  if (threads > t->cores) {
    fprintf(stderr, "portent bench predict: --threads %d: target %s has %d cores\n", threads, t->name, t->cores);
    ptg_target_free(t);
    return EXIT_USAGE;
  }
  /* the workload list: --replay takes a saved set's workloads and schedules */
  int nw = 0;
  const char *names[64];
  char *list = workloads && !replay ? strdup(workloads) : NULL;
  bp_set *from = NULL;
  if (replay) {
    char dir[1024];
    bp_set_dir(replay, dir, sizeof dir);
    if (!(from = bp_load(dir, measure_only, &d))) {
      fprintf(stderr, "portent bench predict: --replay: %s\n", d.msg);
      ptg_target_free(t);
      return EXIT_USAGE;
    }
    for (int i = 0; i < from->nw && nw < 64; i++) names[nw++] = from->w[i].name;
  } else if (list) {
    /* a token that starts with a digit continues the previous spec: "mm512,matmul:32,24,40" */
    for (char *tok = strtok(list, ","); tok && nw < 64; tok = strtok(NULL, ","))
      if (nw > 0 && tok[0] >= '0' && tok[0] <= '9') tok[-1] = ',';
      else names[nw++] = tok;
  } else
    for (int i = 0; i < pc_suite_count() && nw < 64; i++) names[nw++] = pc_suite_name(i);
  pp_options ho;
  pp_options_default(&ho);
  ho.threads = threads, ho.no_breakdown = true;
  pp_predictor *headline = pp_predictor_new(t, &ho, &d);
  bp_set *set = bp_set_new();
  set->threads = threads;
  set->cpu_clock = cpu_clock && threads == 1; /* pc_measure_clock's rule */
  pc_record *rec = malloc(sizeof *rec);
  int failed = 0;
  double prof_seconds = 0, counts_seconds = 0;
  int counts_n = 0, n_profiled = 0; /* profiles made in this run (not from --cache) */
  pt_rng rng = {seed};
  for (int w = 0; w < nw && headline; w++) {
    pc_program *prog = pc_workload_build(names[w], &d);
    if (!prog) {
      fprintf(stderr, "portent bench predict: %s\n", d.msg);
      pt_diag_clear(&d);
      continue;
    }
    pc_measure_opts mo;
    pc_measure_opts_default(&mo);
    mo.threads = threads, mo.min_time_s = min_time, mo.seed = 1, mo.cpu_clock = cpu_clock;
    mo.timeout_s = timeout;
    pc_reference *ref = pc_reference_new(prog, &mo, &d);
    if (!ref) {
      fprintf(stderr, "portent bench predict: %s: %s\n", names[w], d.msg);
      pt_diag_clear(&d);
      pc_program_free(prog);
      continue;
    }
    bp_workload *wl = bp_set_workload(set, names[w]);
    bp_workload *rw = from ? &from->w[w] : NULL;
    int cap = rw ? rw->n : candidates + 1;
    int n_tuned = 0, t = 0, attempts = 0;
    char **tuned = NULL;
    if (tuned_logs && !(tuned = bp_tuned_steps(tuned_logs, prog->key, tuned_count, &n_tuned, &d))) {
      fprintf(stderr, "portent bench predict: --tuned: %s\n", d.msg);
      pt_diag_clear(&d);
    }
    bool tuned_phase = false; /* after the default and random candidates: the tuned ones */
    for (int c = 0, k = 0; wl; attempts++, k++) {
      if (rw && k >= rw->n) break;
      if (!rw && !tuned_phase && (c >= cap || attempts >= 4 * cap)) tuned_phase = true;
      if (tuned_phase && t >= n_tuned) break;
      pt_diag dc = {0};
      pc_state *s = pc_state_new(prog);
      int rc;
      const char *given = rw ? rw->steps[k] : tuned_phase ? tuned[t] : NULL;
      if (given) { /* the saved set's schedule under its candidate number, or a tuned one */
        rc = bp_apply_steps(s, given, &dc);
        attempts = rw ? rw->candidate[k] : BP_TUNED_FIRST + t++;
      } else
        rc = attempts == 0 ? pc_schedule_default(s, 16, &dc) : pc_schedule_random(s, &rng, &dc);
      char *steps_now = pc_steps_to_json(s->n_steps, s->steps);
      pc_measure_result mr = {0};
      char cpath[1200], ppath[1200];
      pa_profile *p = NULL;
      bool cached = false;
      if (cache) {
        snprintf(cpath, sizeof cpath, "%s/%s_s%llu_t%d_%d.time", cache, names[w], seed, threads, attempts);
        snprintf(ppath, sizeof ppath, "%s/%s_s%llu_t%d_%d.profile.json", cache, names[w], seed, threads, attempts);
        FILE *cf = fopen(cpath, "r");
        if (cf) {
          double v = 0;
          cached = fscanf(cf, "%lf", &v) == 1;
          fclose(cf);
          if (cached && !(v > 0)) { /* a candidate that failed before */
            failed++;
            pc_state_free(s), free(steps_now);
            continue;
          }
          /* the cache is keyed by position: its steps must be this run's (the generator of
           * random schedules changes between portent versions) */
          char spath[1300];
          snprintf(spath, sizeof spath, "%s.steps", cpath);
          char *was = pt_read_file(spath, NULL, &dc);
          if (!was || strcmp(was, steps_now) != 0) cached = false; /* older caches kept no steps */
          free(was), pt_diag_clear(&dc);
          if (cached && (p = pa_profile_load(ppath, &dc))) mr.median_s = v;
          else cached = false, p = NULL;
        }
      }
      double t_measure = pt_now();
      if (!cached || remeasure) {
        if (rc == 0) rc = pc_measure(s, ref, &mo, &mr, &dc);
        if (rc != 0 || mr.error != PC_MEASURE_OK || !(mr.median_s > 0)) {
          fprintf(stderr, "  %s #%d: not measured: %s (error %d)\n", names[w], attempts,
                  rc != 0 ? dc.msg : mr.message, (int)mr.error);
          failed++;
          if (cache && !cached) pt_write_file_atomic(cpath, "0\n", 2, &dc);
          pa_profile_free(p);
          pc_state_free(s), free(steps_now);
          continue;
        }
      }
      t_measure = pt_now() - t_measure;
      if (rw && measure_only) { /* the set's own profile; this set frees it */
        p = rw->prof[k];
        rw->prof[k] = NULL;
      } else if (!cached) {
        double t0 = pt_now();
        pa_options po = {.sample_rate = sample};
        p = pp_profile_state(s, threads, &po, 30, &dc);
        prof_seconds += pt_now() - t0;
        n_profiled += p != NULL;
        if (!p && cache) pt_write_file_atomic(cpath, "0\n", 2, &dc); /* too slow to profile: skip next time */
        if (p && cache) {
          char line[64];
          int len = snprintf(line, sizeof line, "%.9g\n", mr.median_s);
          char spath[1300];
          snprintf(spath, sizeof spath, "%s.steps", cpath);
          if (pa_profile_save(p, ppath, &dc) == 0 && pt_write_file_atomic(spath, steps_now, strlen(steps_now), &dc) == 0)
            pt_write_file_atomic(cpath, line, (size_t)len, &dc);
        }
        if (c < 5) { /* the analytic cost model's way: counts only, no reuse */
          t0 = pt_now();
          pa_options qo = {.no_reuse = true};
          pa_profile *q = pp_profile_state(s, threads, &qo, 5, &dc);
          pp_prediction *r = q ? pp_predict(headline, q, &dc) : NULL;
          counts_seconds += pt_now() - t0, counts_n++; /* a timed-out one is scored too (last) */
          pp_prediction_free(r);
          pa_profile_free(q);
        }
      }
      if (!p) {
        fprintf(stderr, "  %s: profile failed: %s\n", names[w], dc.msg);
        failed++;
        pc_state_free(s), free(steps_now);
        continue;
      }
      pc_record_from_measure(rec, s, &mr, !cached || remeasure ? t_measure : 0);
      char *line = pc_record_format(rec), *steps = steps_now;
      pc_state_free(s);
      bp_set_add(set, wl, attempts, mr.median_s, p, steps, line);
      if (mr.min_s > 0) bp_set_add_spread(wl, mr.min_s, mr.repeats);
      free(line), free(steps);
      pp_prediction *r = pp_predict(headline, p, &dc);
      fprintf(stderr, "  %s #%d%s: measured %.4g ms, predicted %.4g ms\n", names[w], attempts,
              attempts == 0 ? " (default)" : attempts >= BP_TUNED_FIRST ? " (tuned)" : "", mr.median_s * 1e3, r ? r->seconds * 1e3 : NAN);
      pp_prediction_free(r);
      c++;
    }
    for (int i = 0; i < n_tuned; i++) free(tuned[i]);
    free(tuned);
    pc_reference_free(ref);
    pc_program_free(prog);
  }
  free(rec);
  bp_set_free(from);
  int rc = EXIT_OK;
  if (save) {
    const char *slash = strrchr(save, '/');
    char plat[256];
    snprintf(plat, sizeof plat, "%s", platform ? platform : slash && slash[1] ? slash + 1 : save);
    if (bp_save(set, save, plat, target_path, &d) != 0) {
      fprintf(stderr, "portent bench predict: --save %s: %s\n", save, d.msg);
      rc = EXIT_FAILED;
    } else if (!json)
      fprintf(stderr, "saved %s (platform %s)\n", save, plat);
  }
  if (truth_min) bp_set_use_min(set);
  ro.prof_seconds = prof_seconds, ro.n_profiled = n_profiled;
  ro.counts_seconds = counts_seconds, ro.counts_n = counts_n, ro.failed = failed;
  int rr = bp_report(t, set, &ro);
  if (rr == EXIT_OK && mca > 0) rr = bp_mca(t, set, mca, json);
  if (rc == EXIT_OK) rc = rr;
  bp_set_free(set);
  pp_predictor_free(headline);
  free(list);
  ptg_target_free(t);
  return rc;
}
