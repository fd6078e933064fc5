/* portent bench learn: TLP's evaluation on held-out networks. Records of the test networks'
 * tasks (compiler/networks.c) are ranked by each cost model — analytic, xgb, xgb-imp when built
 * in, TLP, MTL-TLP (with the analytic predictor's labels on shipped targets as auxiliary
 * platforms, and without) — trained on the other tasks; scores are TLP's weighted top-k. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "blas_env.h"
#include "commands.h"
#include "learn_bench.h"
#include "predictor.h"
#include "tlp.h"
#include "tlp_cli.h"
#include "tune_models.h"

static void usage(FILE *f) {
  fprintf(f,
          "usage: portent bench learn --data records.jsonl [--data ...] [--target T.json] [--aux-targets A.json,B.json]\n"
          "       [--epochs N] [--batch B] [--width D] [--analytic-per-task N] [--aux-per-task N] [--seed S]\n"
          "       [--lr R] [--clip C] [--task-batches|--mixed-batches] [--aux-weight W] [--seeds N] [--val-networks LIST]\n"
          "       [--platform P] [--fractions 0.07,0.2,1] [--per-task] [--rows TEXT]\n"
          "       [--train-weights none|occurrences|time] [--thin-block B] [--thin-spread B] [--warm-epochs E]\n"
          "       [--other-heads] [--aux-heads] [--aux-missing] [--aux-cache DIR] [--avg-epochs K]\n"
          "       [--avg-rows K1,K2,..] [--label-power P] [--ndcg-k K] [--gain-scale C]\n"
          "       [--pretrain F [--pretrain-epochs E]]\n"
          "       [--models analytic,xgb,xgb-imp,tlp,mtl,transfer] [--quick]\n\n"
          "Test tasks: the test networks' (portent networks) tasks found in the records, each weighted by its\n"
          "occurrences w. The other tasks train, 10%% of them held out for validation (TLP's 9:1), or with\n"
          "--val-networks every task of those training networks, weighted by its occurrences in them.\n"
          "Score top-k = sum_t w_t min_latency_t / sum_t w_t (best latency among the model's k top-ranked of t).\n"
          "  --platform P             the platform ranked (its -mcpu value, e.g. znver4; default: the most common\n"
          "                           target string's); records of another platform are the second real platform\n"
          "                           of MTL-TLP (mtl) and of transfer: its measured latencies as the ranking, and\n"
          "                           TLP trained on its labels alone, scored with its head\n"
          "  --fractions LIST         MTL-TLP's shares of the ranked platform's training labels (default\n"
          "                           0.07,0.2,1: TLP's 7%%, 20%% and all; at 1, TLP alone is the tlp row)\n"
          "  --rows TEXT              mtl: only the rows whose name contains TEXT (e.g. 'aux'), to split a run\n"
          "  --per-task               each test task's top-1 per model, with its share of the weighted score\n"
          "  --train-weights W        TLP's loss of a training task scaled by its occurrences in the training\n"
          "                           networks (occurrences), times its best latency (time: its share of a score\n"
          "                           like the test's), mean 1 over the samples; default none (TLP's)\n"
          "  --thin-block B           how the F%% of the ranked platform's labels are drawn: 0 (default), label by\n"
          "                           label (a task may keep none); B >= 1, per task, in blocks of B (stratified:\n"
          "                           each task keeps about F%% of its labels; 2: pairs, something to rank)\n"
          "  --thin-spread B          instead, F%% of the labels as an exact count dealt to the training tasks B at\n"
          "                           a time in a random order: every task keeps B before any keeps 2B (B above\n"
          "                           any task's size: whole tasks, a few measured fully)\n"
          "  --warm-epochs E          MTL-TLP with a second real platform: the first E epochs train the other\n"
          "                           heads only, then the ranked platform's head starts as a copy of the other\n"
          "                           real platform's and all train (default 0: together from the start)\n"
          "  --other-heads            MTL-TLP with a second real platform: also score its rows with that platform's\n"
          "                           head (h:other) and both heads' standardized scores summed (h:both)\n"
          "  --aux-heads              MTL-TLP with auxiliary platforms: also score its rows with the first\n"
          "                           auxiliary (analytic) head (h:aux) and the ranked platform's and that head's\n"
          "                           standardized scores summed (h:+aux)\n"
          "  --target T.json          the analytic model's target (default targets/zen5-epyc-2c.json)\n"
          "  --analytic-per-task N    the analytic model profiles each candidate: it ranks the first N of each\n"
          "                           test task (default 8); every model is also scored on that subset\n"
          "  --aux-targets LIST       MTL-TLP's auxiliary platforms, labelled by the analytic predictor on\n"
          "                           those targets for every schedule of each training task, or the first\n"
          "                           --aux-per-task N (at least 2; default all, which profiles every training\n"
          "                           program: see --aux-cache) (default: Skylake-SP and Neoverse N1 files)\n"
          "  --aux-missing            auxiliary labels only on the programs the other real platform did not measure\n"
          "  --aux-cache DIR          each auxiliary platform's labels read from DIR when saved there before (the file\n"
          "                           names the target file and the options; delete it when the records change),\n"
          "                           else made and saved there, so that runs of other seeds reuse them\n"
          "  --epochs 100 --batch 128 --width 128  TLP's training (TLP's reference: 50, 1024, 256 over millions\n"
          "                           of records; a few thousand need more passes, see docs/learning.md)\n"
          "  --emb E                  TLP's feature columns: 22 TLP's, 23 to 26 (default, session 21) add the loop\n"
          "                           extents each step makes or names, replayed on the workload (docs/learning.md)\n"
          "  --lr 7e-4                Adam's learning rate (TLP's reference)\n"
          "  --clip C                 gradients scaled to global L2 norm C when above (TLP's reference: 0.5;\n"
          "                           default 0: none)\n"
          "  --task-batches           batches of whole tasks, LambdaRank within each task (the TLP rows' default\n"
          "                           since session 17; MTL-TLP's rows with it only when given)\n"
          "  --mixed-batches          TLP's reference: a random mix whose ranked lists span tasks (MTL-TLP's default)\n"
          "  --avg-epochs K           TLP, MTL-TLP: the parameters averaged over the last K epochs (weight averaging;\n"
          "                           default 0: the last epoch's, TLP's)\n"
          "  --avg-rows K1,K2,..      up to 4 extra rows per seed from the same training, averaged over the last Ki\n"
          "                           epochs (1: the last epoch's): windows compared paired, without retraining\n"
          "  --label-power P          training labels (min latency / latency)^P (default 1, TLP's)\n"
          "  --ndcg-k K               LambdaRank weighs a pair by its change of NDCG@K (only swaps into, out of or\n"
          "                           within the predicted top K count; default 0: the whole list, TLP's)\n"
          "  --gain-scale C           LambdaRank's gain 2^(C x label) - 1 (default 1, TLP's; C > 1 steeper at the top)\n"
          "  --pretrain F             the tlp row first trains E epochs (--pretrain-epochs, default 5) on F's records\n"
          "                           alone (e.g. dataset collect --analytic: analytic labels of extra programs),\n"
          "                           labels to the ranked head, then as without F; F's records of a workload that\n"
          "                           is no training task here (validation, test, absent) are not used\n"
          "  --aux-weight W           MTL-TLP: the auxiliary platforms' loss scaled by W (default 1: TLP's sum)\n"
          "  --seeds N                TLP trained with seeds S..S+N-1 (1 to 8): a row each (their spread) and one\n"
          "                           for their ensemble (per-task standardized scores averaged), MTL-TLP too\n"
          "  --val-networks LIST      validation = whole training networks (e.g. resnet34,mobilenet_v1,bert_medium),\n"
          "                           scored as the test networks are; a task shared with a test network stays test\n"
          "  --quick                  a few tasks, tiny network, for tests\n");
}

/* Splits "a,b,c" into at most cap entries (pointers into the copied string *buf). */
static int split_list(const char *s, char **buf, const char **out, int cap) {
  *buf = strdup(s);
  int n = 0;
  char *save = NULL;
  for (char *t = strtok_r(*buf, ",", &save); t && n < cap; t = strtok_r(NULL, ",", &save)) out[n++] = t;
  return n;
}

/* The target files the asked models read (the analytic model's, MTL-TLP's auxiliary platforms'),
 * loaded once before any training: a wrong path is a usage error, not a failure after an hour. */
static bool target_files_load(const lb_opts *o, pt_diag *d) {
  int n = 0;
  const char *paths[LB_MAX_AUX + 1];
  if (o->run_analytic) paths[n++] = o->target_path;
  for (int a = 0; o->run_mtl && a < o->n_aux; a++) paths[n++] = o->aux_paths[a];
  for (int i = 0; i < n; i++) {
    ptg_target *t = ptg_target_load(paths[i], d);
    if (!t) return false;
    ptg_target_free(t);
  }
  return true;
}

static bool avg_rows_ok(const lb_opts *o) {
  if (o->n_avg_rows > LB_MAX_AVG_ROWS) return false;
  for (int k = 0; k < o->n_avg_rows; k++)
    if (o->avg_rows[k] < 1 || o->avg_rows[k] > o->epochs) return false;
  return true;
}

int cmd_bench_learn(int argc, char **argv) {
  restart_without_forced_blas_core("bench", argc, argv);
  lb_opts o;
  lb_opts_default(&o);
  const char *files[64];
  int n_files = 0;
  /* The shipped files by their installed path, so that the command runs from any directory. */
  char target_default[1024], aux_default[2100];
  snprintf(target_default, sizeof target_default, "%s/zen5-epyc-2c.json", ptg_shipped_dir());
  snprintf(aux_default, sizeof aux_default, "%s/intel-skylake-sp.json,%s/arm-neoverse-n1.json", ptg_shipped_dir(),
           ptg_shipped_dir());
  o.target_path = target_default;
  const char *aux_list = aux_default;
  const char *models = "analytic,xgb,xgb-imp,tlp,mtl";
  const char *fraction_list = NULL;
  int pre_epochs = -1; /* --pretrain-epochs (-1: not given) */
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i];
    bool v = i + 1 < argc;
    if (strcmp(a, "--help") == 0) {
      usage(stdout);
      return EXIT_OK;
    } else if (strcmp(a, "--data") == 0 && v && n_files < 64) files[n_files++] = argv[++i];
    else if (strcmp(a, "--target") == 0 && v) o.target_path = argv[++i];
    else if (strcmp(a, "--aux-targets") == 0 && v) aux_list = argv[++i];
    else if (strcmp(a, "--epochs") == 0 && v) o.epochs = atoi(argv[++i]);
    else if (strcmp(a, "--batch") == 0 && v) o.batch = atoi(argv[++i]);
    else if (strcmp(a, "--width") == 0 && v) o.width = atoi(argv[++i]);
    else if (strcmp(a, "--emb") == 0 && v) o.emb = atoi(argv[++i]);
    else if (strcmp(a, "--lr") == 0 && v) o.lr = atof(argv[++i]);
    else if (strcmp(a, "--clip") == 0 && v) o.clip = atof(argv[++i]);
    else if (strcmp(a, "--task-batches") == 0) o.batches = LB_BATCHES_TASK;
    else if (strcmp(a, "--mixed-batches") == 0) o.batches = LB_BATCHES_MIXED;
    else if (strcmp(a, "--avg-epochs") == 0 && v) o.avg_epochs = atoi(argv[++i]);
    else if (strcmp(a, "--label-power") == 0 && v) o.label_power = atof(argv[++i]);
    else if (strcmp(a, "--pretrain") == 0 && v) o.pretrain = argv[++i];
    else if (strcmp(a, "--pretrain-epochs") == 0 && v) {
      if (tlp_cli_parse_count("bench learn", a, argv[++i], &pre_epochs) < 0) return EXIT_USAGE;
    } else if ((strcmp(a, "--ndcg-k") == 0 || strcmp(a, "--gain-scale") == 0) && v) {
      if (tlp_cli_parse_rank("bench learn", a, argv[++i], &o.rank) < 0) return EXIT_USAGE;
    } else if (strcmp(a, "--avg-rows") == 0 && v) {
      char *buf;
      const char *items[LB_MAX_AVG_ROWS + 1];
      int n = split_list(argv[++i], &buf, items, LB_MAX_AVG_ROWS + 1);
      o.n_avg_rows = n;
      for (int k = 0; k < n && k < LB_MAX_AVG_ROWS; k++) o.avg_rows[k] = atoi(items[k]);
      free(buf);
    }
    else if (strcmp(a, "--aux-weight") == 0 && v) o.aux_weight = atof(argv[++i]);
    else if (strcmp(a, "--seeds") == 0 && v) o.n_seeds = atoi(argv[++i]);
    else if (strcmp(a, "--val-networks") == 0 && v) o.val_networks = argv[++i];
    else if (strcmp(a, "--platform") == 0 && v) o.platform = argv[++i];
    else if (strcmp(a, "--fractions") == 0 && v) fraction_list = argv[++i];
    else if (strcmp(a, "--per-task") == 0) o.per_task = true;
    else if (strcmp(a, "--rows") == 0 && v) o.rows = argv[++i];
    else if (strcmp(a, "--train-weights") == 0 && v) {
      const char *tw = argv[++i];
      if (strcmp(tw, "none") == 0) o.train_weights = LB_TW_NONE;
      else if (strcmp(tw, "occurrences") == 0) o.train_weights = LB_TW_OCCURRENCES;
      else if (strcmp(tw, "time") == 0) o.train_weights = LB_TW_TIME;
      else {
        fprintf(stderr, "portent bench learn: --train-weights takes none, occurrences or time (not '%s')\n", tw);
        return EXIT_USAGE;
      }
    }
    else if (strcmp(a, "--thin-block") == 0 && v) o.thin_block = atoi(argv[++i]);
    else if (strcmp(a, "--thin-spread") == 0 && v) o.thin_spread = atoi(argv[++i]);
    else if (strcmp(a, "--aux-missing") == 0) o.aux_missing = true;
    else if (strcmp(a, "--aux-cache") == 0 && v) o.aux_cache = argv[++i];
    else if (strcmp(a, "--warm-epochs") == 0 && v) o.warm_epochs = atoi(argv[++i]);
    else if (strcmp(a, "--other-heads") == 0) o.other_heads = true;
    else if (strcmp(a, "--aux-heads") == 0) o.aux_heads = true;
    else if (strcmp(a, "--analytic-per-task") == 0 && v) o.analytic_per_task = atoi(argv[++i]);
    else if (strcmp(a, "--aux-per-task") == 0 && v) {
      const char *n = argv[++i];
      o.aux_per_task = strcmp(n, "all") == 0 ? LB_AUX_ALL : atoi(n);
    }
    else if (strcmp(a, "--seed") == 0 && v) o.seed = strtoull(argv[++i], NULL, 10);
    else if (strcmp(a, "--models") == 0 && v) models = argv[++i];
    else if (strcmp(a, "--quick") == 0) lb_opts_quick(&o);
    else {
      fprintf(stderr, "portent bench learn: unexpected argument '%s'\n", a);
      usage(stderr);
      return EXIT_USAGE;
    }
  }
  if (!n_files || o.epochs < 1 || o.batch < 1 || o.width < 8 || o.width % 8 || o.analytic_per_task < 0 ||
      o.emb < PP_TLP_EMB_MIN || o.emb > PP_TLP_EMB_MAX ||
      !(o.lr > 0) || !(o.clip >= 0) || !(o.aux_weight >= 0) || o.n_seeds < 1 || o.n_seeds > 8 || o.thin_block < 0 ||
      o.thin_spread < 0 || o.warm_epochs < 0 || o.warm_epochs >= o.epochs || o.avg_epochs < 0 ||
      o.avg_epochs > o.epochs || !(o.label_power > 0 && o.label_power < 1e3) || !avg_rows_ok(&o)) {
    fprintf(stderr, "portent bench learn: --data is required; --epochs, --batch, --lr, --label-power positive; "
                    "--width a multiple of 8; --emb %d to %d; --clip, --aux-weight, --thin-block, --thin-spread >= 0; --seeds 1 to "
                    "8; --warm-epochs 0 to epochs - 1; --avg-epochs 0 to epochs; --avg-rows 1 to %d windows of 1 "
                    "to epochs\n", PP_TLP_EMB_MIN, PP_TLP_EMB_MAX, LB_MAX_AVG_ROWS);
    return EXIT_USAGE;
  }
  if (pre_epochs >= 0 && !o.pretrain) {
    fprintf(stderr, "portent bench learn: --pretrain-epochs needs --pretrain\n");
    return EXIT_USAGE;
  }
  o.pretrain_epochs = !o.pretrain ? 0 : pre_epochs >= 0 ? pre_epochs : 5;
  if (fraction_list) {
    char *buf;
    const char *items[LB_MAX_FRACTIONS + 1];
    int n = split_list(fraction_list, &buf, items, LB_MAX_FRACTIONS + 1);
    for (int k = 0; k < n && k < LB_MAX_FRACTIONS; k++) o.fractions[k] = atof(items[k]);
    o.n_fractions = n;
    free(buf);
    for (int k = 0; k < n; k++)
      if (n > LB_MAX_FRACTIONS || !(o.fractions[k] > 0 && o.fractions[k] <= 1)) {
        fprintf(stderr, "portent bench learn: --fractions takes 1 to %d shares in (0, 1], e.g. 0.07,0.2,1\n",
                LB_MAX_FRACTIONS);
        return EXIT_USAGE;
      }
  }
  /* Labels are min_latency / latency within a task: one labelled schedule per task is always 1,
   * so an auxiliary platform would give LambdaRank no pair to rank (measured: MTL-TLP then equals
   * TLP to the last digit). */
  if (o.aux_per_task < 2) {
    fprintf(stderr, "portent bench learn: --aux-per-task must be at least 2 (one label per task ranks nothing)\n");
    return EXIT_USAGE;
  }
  char *aux_buf, *model_buf;
  o.n_aux = split_list(aux_list, &aux_buf, o.aux_paths, LB_MAX_AUX);
  const char *model_names[8];
  int n_models = split_list(models, &model_buf, model_names, 8);
  for (int m = 0; m < n_models; m++) {
    const char *nm = model_names[m];
    if (strcmp(nm, "analytic") == 0) o.run_analytic = true;
    else if (strcmp(nm, "xgb") == 0) o.run_xgb = true;
    else if (strcmp(nm, "xgb-imp") == 0) o.run_xgb_imp = true;
    else if (strcmp(nm, "tlp") == 0) o.run_tlp = true;
    else if (strcmp(nm, "mtl") == 0) o.run_mtl = true;
    else if (strcmp(nm, "transfer") == 0) o.run_transfer = true;
    else {
      fprintf(stderr, "portent bench learn: --models takes analytic, xgb, xgb-imp, tlp, mtl, transfer (not '%s')\n", nm);
      free(aux_buf), free(model_buf);
      return EXIT_USAGE;
    }
  }
  pt_diag d = {0};
  if (!target_files_load(&o, &d)) {
    fprintf(stderr, "portent bench learn: %s\n", d.msg);
    free(aux_buf), free(model_buf);
    return EXIT_USAGE;
  }
  if (o.run_tlp || o.run_mtl || o.run_transfer) fprintf(stderr, "OpenBLAS core: %s\n", pp_tlp_blas_core());
  lb_data data;
  int rc = EXIT_OK;
  if (lb_data_load(&data, n_files, files, &o, &d) < 0) {
    fprintf(stderr, "portent bench learn: %s\n", d.msg);
    lb_data_free(&data); /* what was read before the error */
    free(aux_buf), free(model_buf);
    return d.err == PT_ERR_IO ? EXIT_FAILED : EXIT_USAGE;
  }
  if (lb_run(&data, &o, files, n_files, &d) < 0) {
    fprintf(stderr, "portent bench learn: %s\n", d.msg);
    rc = EXIT_FAILED;
  }
  lb_data_free(&data);
  free(aux_buf), free(model_buf);
  return rc;
}
