/* portent tune: Ansor-style search for a workload's schedule (sketches, random annotation,
 * evolutionary search ranked by a cost model, measurement of each round's top-k), every
 * measurement appended to a records log at once so a killed run resumes where it stopped. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "blas_env.h"
#include "commands.h"
#include "compiler.h"
#include "targets.h"
#include "tune_models.h"

static void usage(FILE *f) {
  fprintf(f,
          "usage: portent tune WORKLOAD [--target T.json] [--model random|xgb|analytic] [--trials N]\n"
          "       [--measure-per-round K] [--population P] [--generations G] [--log records.jsonl]\n"
          "       [--resume] [--seed S] [--threads N] [--min-time SEC] [--timeout SEC] [--wall-clock] [--lanes L]\n"
          "       [--cache-rule] [--min-reduction-tile N] [--local-share F] [--measure 0] [-o best.ll|.o|.s] [--curve curve.svg]\n"
          "       [--quiet] [--json]\n\n"
          "  --target T.json        vector width, registers, L1/L2 sizes and cores of the target (default: 16\n"
          "                         lanes, this machine's cores)\n"
          "  --cache-rule           with --target: sample tile sizes preferring blocks that fit its L1/L2\n"
          "                         (off by default: it did not help, docs/tuning.md)\n"
          "  --min-reduction-tile N sample tile sizes preferring an inner reduction tile (r1) of at least N\n"
          "                         (0 off, the default; docs/tuning.md)\n"
          "  --model M              cost model ranking candidates: %s (default random)\n"
          "  --local-share F        share of each round measured among the unmeasured one-mutation neighbours\n"
          "                         of the 4 fastest measured candidates, ranked by the model (default 0.5\n"
          "                         when the search model is analytic, else 0)\n"
          "  --rerank-top K         with --model A+B: B re-ranks A's K best each round (default 16)\n"
          "  --rerank-cold N        with --model A+B: until 2 x --measure-per-round are measured, B re-ranks\n"
          "                         A's N best (default 128; 0 off)\n"
          "  --rerank-pool N        with --model A+B: after that, B re-ranks A's N best when N > 2 x K\n"
          "                         (default 128; 0 off)\n"
          "  --trials N             measurements in all, resumed ones included (default 1000)\n"
          "  --measure-per-round K  candidates measured per search round (default 64)\n"
          "  --population P         evolutionary population (default 2048)\n"
          "  --generations G        evolution iterations per round (default 4)\n"
          "  --log FILE             append every measured candidate as a TVM record, at once\n"
          "  --resume               read --log first: its candidates count as measured and train the model\n"
          "  --measure 0            measure nothing: rank with the model and emit its predicted best\n"
          "  --analytic-labels N    with --measure 0 and --model A+analytic where A learns (xgb, xgb-imp): A first\n"
          "                         trains on N random candidates labelled by the analytic model's predictions\n"
          "                         (default 2 x --measure-per-round; 0: A ranks untrained; nothing is logged)\n"
          "  --label-rounds R       then R search rounds label --measure-per-round picks each and retrain A\n"
          "                         (default 2)\n"
          "  --label-check N        print how A orders N fresh candidates against the analytic model\n"
          "                         (share of pairs alike; 0.5 is chance)\n"
          "  --wall-clock           time one-thread candidates by the wall clock (default: the thread's CPU\n"
          "                         time, which another process's time slices do not inflate)\n"
          "  -o FILE                the best schedule's module (.ll target-neutral IR, .o/.s host code)\n"
          "  --curve FILE.svg       best latency against measurements (default: LOG.svg when --log is given)\n"
          "Prints a progress line per measurement on standard error and the best steps at the end.\n",
          tune_model_names());
}

typedef struct {
  const pc_program *p;
  int trials;
  bool quiet, tty;
} progress;

static void on_measured(void *ctx, const pc_tune_stats *st, const pc_measure_result *r) {
  progress *pg = ctx;
  if (pg->quiet) return;
  char last[64];
  if (r->error == PC_MEASURE_OK) snprintf(last, sizeof last, "%.4g ms", r->median_s * 1e3);
  else snprintf(last, sizeof last, "error %d", r->error);
  fprintf(stderr, "%stune %s: %d/%d measured, best %.4g ms (%.1f GFLOP/s), last %s%s", pg->tty ? "\r" : "", pg->p->name,
          st->n_measured, pg->trials, st->best_s * 1e3, st->best_s > 0 ? pg->p->flops * 1e-9 / st->best_s : 0.0, last,
          pg->tty ? "   " : "\n");
  fflush(stderr);
}

int cmd_tune(int argc, char **argv) {
  restart_without_forced_blas_core(NULL, argc, argv); /* tlp:WEIGHTS ranks with OpenBLAS */
  const char *workload = NULL, *target_path = NULL, *model_name = "random", *out = NULL, *curve = NULL;
  bool resume = false, json = false, quiet = false;
  int measure = 1, lanes = 0;
  bool threads_given = false;
  bool cache_rule = false;
  double local_share = -1; /* -1: the model's default (tune_model_local_share) */
  int analytic_labels = -1, label_rounds = 2, label_check = 0; /* -1: 2 x measure_per_round */
  pc_tune_opts o;
  pc_tune_opts_default(&o);
  o.measure.threads = (int)sysconf(_SC_NPROCESSORS_ONLN);
  o.sketch.num_cores = o.measure.threads;
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i];
    bool v = i + 1 < argc;
    if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
      usage(stdout);
      return EXIT_OK;
    } else if (strcmp(a, "--target") == 0 && v) target_path = argv[++i];
    else if (strcmp(a, "--model") == 0 && v) model_name = argv[++i];
    else if (strcmp(a, "--trials") == 0 && v) o.trials = atoi(argv[++i]);
    else if (strcmp(a, "--measure-per-round") == 0 && v) o.measure_per_round = atoi(argv[++i]);
    else if (strcmp(a, "--population") == 0 && v) o.population = atoi(argv[++i]);
    else if (strcmp(a, "--generations") == 0 && v) o.generations = atoi(argv[++i]);
    else if (strcmp(a, "--log") == 0 && v) o.log_path = argv[++i];
    else if (strcmp(a, "--resume") == 0) resume = true;
    else if (strcmp(a, "--seed") == 0 && v) o.seed = strtoull(argv[++i], NULL, 10);
    else if (strcmp(a, "--threads") == 0 && v) o.measure.threads = atoi(argv[++i]), threads_given = true;
    else if (strcmp(a, "--min-time") == 0 && v) o.measure.min_time_s = atof(argv[++i]);
    else if (strcmp(a, "--timeout") == 0 && v) o.measure.timeout_s = atof(argv[++i]);
    else if (strcmp(a, "--wall-clock") == 0) o.measure.cpu_clock = false;
    else if (strcmp(a, "--lanes") == 0 && v) lanes = atoi(argv[++i]);
    else if (strcmp(a, "--cache-rule") == 0) cache_rule = true;
    else if (strcmp(a, "--min-reduction-tile") == 0 && v) o.sketch.min_reduction_tile = atoi(argv[++i]);
    else if (strcmp(a, "--measure") == 0 && v) measure = atoi(argv[++i]);
    else if (strcmp(a, "--rerank-top") == 0 && v) o.rerank_top = atoi(argv[++i]);
    else if (strcmp(a, "--rerank-cold") == 0 && v) o.rerank_cold = atoi(argv[++i]);
    else if (strcmp(a, "--rerank-pool") == 0 && v) o.rerank_pool = atoi(argv[++i]);
    else if (strcmp(a, "--local-share") == 0 && v) local_share = atof(argv[++i]);
    else if (strcmp(a, "--analytic-labels") == 0 && v) analytic_labels = atoi(argv[++i]);
    else if (strcmp(a, "--label-rounds") == 0 && v) label_rounds = atoi(argv[++i]);
    else if (strcmp(a, "--label-check") == 0 && v) label_check = atoi(argv[++i]);
    else if (strcmp(a, "-o") == 0 && v) out = argv[++i];
    else if (strcmp(a, "--curve") == 0 && v) curve = argv[++i];
    else if (strcmp(a, "--quiet") == 0) quiet = true;
    else if (strcmp(a, "--json") == 0) json = true;
    else if (a[0] != '-' && !workload) workload = a;
    else {
      fprintf(stderr, "portent tune: unexpected argument '%s'\n", a);
      usage(stderr);
      return EXIT_USAGE;
    }
  }
  if (!workload || o.trials < 1 || o.measure_per_round < 1 || o.population < 2 || o.generations < 0 ||
      o.measure.threads < 1 || o.measure.timeout_s <= 0 || o.measure.min_time_s < 0 || lanes < 0 ||
      o.sketch.min_reduction_tile < 0 || label_rounds < 0 || label_check < 0) {
    fprintf(stderr, "portent tune: %s\n", workload ? "--trials, --measure-per-round, --population, --threads must be positive"
                                                   : "missing WORKLOAD");
    usage(stderr);
    return EXIT_USAGE;
  }
  if (resume && !o.log_path) {
    fprintf(stderr, "portent tune: --resume needs --log FILE\n");
    return EXIT_USAGE;
  }
  pt_diag d = {0};
  ptg_target *target = NULL;
  if (target_path) {
    target = ptg_target_load(target_path, &d);
    if (!target) {
      fprintf(stderr, "portent tune: %s\n", d.msg);
      return EXIT_USAGE;
    }
    tune_sketch_opts_from_target(target, cache_rule, &o.sketch);
    if (target->cores > 0) o.sketch.num_cores = target->cores;
  }
  if (lanes > 0) o.sketch.vector_lanes = lanes;
  pc_program *p = pc_workload_build(workload, &d);
  if (!p) {
    fprintf(stderr, "portent tune: %s\n", d.msg);
    ptg_target_free(target);
    return EXIT_USAGE;
  }
  int status = EXIT_FAILED;
  pc_cost_model model, rerank;
  bool has_rerank = false;
  /* The analytic model predicts for the threads the candidates run on; with --measure 0 on a
   * remote target, for --threads or else all its cores (this machine's count means nothing). */
  int model_threads = measure == 0 && !threads_given ? 0 : o.measure.threads;
  o.local_share = local_share < 0 ? tune_model_local_share(model_name) : local_share;
  if (tune_models_new(model_name, target, model_threads, o.seed, &model, &rerank, &has_rerank, &d)) {
    fprintf(stderr, "portent tune: %s\n", d.msg);
    pc_program_free(p);
    ptg_target_free(target);
    return EXIT_USAGE;
  }
  if (has_rerank) o.rerank = &rerank;
  if (o.rerank_top <= 0) o.rerank_top = 16;
  if (measure == 0 && strcmp(model_name, "analytic") != 0 && !strstr(model_name, "+analytic")) {
    fprintf(stderr, "portent tune: --measure 0 ranks with a model that needs no measurements: use --model analytic\n");
    model.free(model.self);
    if (has_rerank) rerank.free(rerank.self);
    pc_program_free(p);
    ptg_target_free(target);
    return EXIT_USAGE;
  }
  progress pg = {p, o.trials, quiet || json, isatty(2) != 0};
  o.on_measured = on_measured;
  o.ctx = &pg;
  pc_tuner *t = pc_tuner_new(p, &model, &o, &d);
  pc_state *best = NULL;
  if (!t) {
    fprintf(stderr, "portent tune: %s\n", d.msg);
    goto done;
  }
  if (resume && access(o.log_path, F_OK) == 0) {
    int n_bad = 0;
    int n = pc_tuner_resume(t, o.log_path, NULL, NULL, &n_bad, &d);
    if (n < 0) {
      fprintf(stderr, "portent tune: %s\n", d.msg);
      goto done;
    }
    if (!json) /* even with --quiet: what was reused matters */
      fprintf(stderr, "tune %s: resumed %d measured candidates from %s (%d unusable lines skipped), best %.4g ms\n",
              p->name, n, o.log_path, n_bad, pc_tuner_stats(t)->best_s * 1e3);
  }
  /* the analytic model's score is 1 / predicted seconds (alone, or last in a cascade) */
  bool is_analytic = strcmp(model_name, "analytic") == 0 || strstr(model_name, "+analytic") != NULL;
  /* Cascade A+analytic with --measure 0: A learns the analytic model's order first, on its
   * predictions as labels (pc_tuner_label: nothing measured or logged); resumed measurements
   * train A instead, as before. */
  bool labels = measure == 0 && has_rerank && model.update && strcmp(rerank.name, "analytic") == 0;
  double agreement = -1;
  if (labels && pc_tuner_stats(t)->n_measured == 0) {
    int n_sample = analytic_labels < 0 ? 2 * o.measure_per_round : analytic_labels;
    if (pc_tuner_label(t, n_sample, n_sample > 0 ? label_rounds : 0, &d) < 0) {
      fprintf(stderr, "portent tune: %s\n", d.msg);
      goto done;
    }
  } else if (labels && analytic_labels > 0 && !json)
    fprintf(stderr, "tune %s: --analytic-labels ignored: the model trained on the resumed measurements\n", p->name);
  if (measure == 0) {
    best = pc_tuner_predict_best(t, &d);
    if (best && label_check > 0 && pc_tuner_label_agreement(t, label_check, &agreement, &d) < 0) {
      fprintf(stderr, "portent tune: %s\n", d.msg);
      goto done;
    }
  } else {
    if (pc_tuner_run(t, &d) != 0) {
      fprintf(stderr, "\nportent tune: %s\n", d.msg);
      goto done;
    }
    if (pg.tty && !pg.quiet) fprintf(stderr, "\n");
    best = pc_tuner_best(t);
  }
  const pc_tune_stats *st = pc_tuner_stats(t);
  if (!best) {
    fprintf(stderr, "portent tune: no candidate %s (%d measured, %d failed)%s%s\n",
            measure ? "ran correctly" : "was found", st->n_measured, st->n_failed, d.msg[0] ? ": " : "", d.msg);
    goto done;
  }
  char *steps = pc_steps_to_json(best->n_steps, best->steps);
  /* candidates the model(s) scored per second of prediction (training excluded) */
  long ranked = st->n_scored + st->n_reranked;
  double t_rank = st->t_model - st->t_train, rank_rate = t_rank > 0 ? ranked / t_rank : 0;
  if (json) {
    printf("{\"workload\": \"%s\", \"model\": \"%s\", \"best_seconds\": %.9g, \"gflops\": %.3f, \"measured\": %d, "
           "\"failed\": %d, \"resumed\": %d, \"rounds\": %d, \"ranked\": %ld, \"ranked_per_s\": %.1f, \"predicted_seconds\": %.9g,\n \"analytic_labels\": %d, \"label_rounds\": %d, \"label_agreement\": %.4f,\n \"seconds\": {\"search\": %.3f, \"model\": %.3f, \"train\": %.3f, "
           "\"compile\": %.3f, \"measure\": %.3f, \"total\": %.3f},\n \"steps\": %s}\n",
           p->name, model_name, st->best_s, st->best_s > 0 ? p->flops * 1e-9 / st->best_s : 0.0, st->n_measured,
           st->n_failed, st->n_resumed, st->rounds, ranked, rank_rate,
           !measure && is_analytic && st->predicted_score > 0 ? 1 / st->predicted_score : 0.0, st->n_labelled,
           st->label_rounds, agreement, st->t_search - (st->t_model - st->t_train),
           st->t_model, st->t_train, st->t_compile, st->t_measure, st->t_total, steps);
  } else {
    if (measure) printf("best: %.4g ms (%.1f GFLOP/s) after %d measurements (%d failed, %d resumed)\n", st->best_s * 1e3,
                        p->flops * 1e-9 / st->best_s, st->n_measured, st->n_failed, st->n_resumed);
    else if (is_analytic && st->predicted_score > 0)
      printf("predicted best (nothing measured): %.4g ms predicted\n", 1e3 / st->predicted_score);
    else printf("predicted best (nothing measured):\n");
    if (st->n_labelled > 0)
      printf("labels: %s trained on %d analytic predictions (a sample, then %d search rounds)\n", model.name,
             st->n_labelled, st->label_rounds);
    if (agreement >= 0)
      printf("label check: %s orders %.3f of %d fresh candidates' pairs as analytic does (0.5: chance)\n", model.name,
             agreement, label_check);
    printf("time: search %.1f s, cost model %.1f s (of which training %.1f s), compile %.1f s, measurement %.1f s, "
           "total %.1f s\n", st->t_search - (st->t_model - st->t_train), st->t_model, st->t_train, st->t_compile,
           st->t_measure, st->t_total);
    printf("ranked: %ld candidates, %.1f per second of cost model\n", ranked, rank_rate);
    printf("steps: %s\n", steps);
  }
  free(steps);
  status = EXIT_OK;
  if (out) {
    pc_lower_opts lo = {0};
    pc_kernel *k = pc_lower(best, &lo, &d);
    if (!k || pc_kernel_emit(k, out, &d)) {
      fprintf(stderr, "portent tune: %s: %s\n", out, d.msg);
      status = EXIT_FAILED;
    }
    pc_kernel_free(k);
  }
  char curve_buf[1100];
  if (!curve && o.log_path) {
    snprintf(curve_buf, sizeof curve_buf, "%s.svg", o.log_path);
    curve = curve_buf;
  }
  if (curve && measure && st->n_curve > 0) {
    const char *names[1] = {model_name};
    const double *series[1] = {st->curve};
    int n_points[1] = {st->n_curve};
    char title[160];
    snprintf(title, sizeof title, "portent tune %s (%s model)", p->name, model_name);
    if (pc_tune_curve_svg(curve, title, 1, names, n_points, series, &d)) {
      fprintf(stderr, "portent tune: %s\n", d.msg);
      status = EXIT_FAILED;
    }
  }
done:
  pc_state_free(best);
  pc_tuner_free(t);
  model.free(model.self);
  if (has_rerank) rerank.free(rerank.self);
  pc_program_free(p);
  ptg_target_free(target);
  return status;
}
