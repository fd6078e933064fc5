/* portent train: fits TLP (one output head) or MTL-TLP (one head per platform, shared backbone)
 * to TVM records and writes the weights as safetensors. MTL-TLP can thin the target platform's
 * labels (--fractions) to show what the other platforms' data buys. */
#include <stdlib.h>
#include <string.h>

#include "blas_env.h"
#include "commands.h"
#include "tlp_cli.h"

static void usage(FILE *f) {
  fprintf(f,
          "usage: portent train tlp|mtl-tlp --data records.jsonl [--data more.jsonl ...] -o model.safetensors\n"
          "       [--split split.json] [--epochs N] [--batch B] [--lr LR] [--loss lambdarank|mse] [--seed S]\n"
          "       [--width D] [--emb E] [--backbone attention|lstm] [--task-batches|--mixed-batches] [--clip C]\n"
          "       [--avg-epochs K]\n"
          "       [--label-power P] [--ndcg-k K] [--gain-scale C] [--pretrain F [--pretrain-epochs E]] [--quiet]\n"
          "       mtl-tlp: --target-platform P [--fractions 0.07,0.2,1] [--baseline]\n\n"
          "  tlp       one head; tasks are (workload key, target); labels min latency / latency per task\n"
          "  mtl-tlp   one head per platform (the target string's -mcpu, plus /Nc with -num-cores); a schedule's\n"
          "            records on several platforms are one sample whose loss sums over the labeled platforms\n"
          "  --split FILE        {\"test\": [workload keys]} held out; metrics are then reported on them\n"
          "  --epochs N          default 50, --batch B default 1024, --lr default 7e-4 (TLP's reference)\n"
          "  --width D           model width D (default 256): encoder D/4 D/2 D D, decoder D D/2 D/4\n"
          "  --emb E             feature columns: 22 TLP's, 23 to 26 (default, session 21) add the loop extents each\n"
          "                      step makes or names, replayed on the workload (docs/learning.md, Features)\n"
          "  --backbone B        attention (default, 8 heads) or lstm (the variant TLP compared)\n"
          "  --task-batches      batches of whole tasks, LambdaRank within each task (tlp's default since session 17)\n"
          "  --mixed-batches     TLP's reference: a random mix whose lists span tasks (mtl-tlp's default)\n"
          "  --clip C            gradients scaled to global L2 norm C when above (TLP's reference 0.5; default 0)\n"
          "  --avg-epochs K      the model saved is the mean of the parameters at the end of the last K\n"
          "                      epochs (weight averaging; default 0: the last epoch's, TLP's)\n"
          "  --label-power P     labels (min latency / latency)^P (default 1, TLP's; P > 1 sets the near-best apart)\n"
          "  --ndcg-k K          LambdaRank weighs a pair by its change of NDCG@K: only swaps into, out of or\n"
          "                      within the predicted top K count (default 0: the whole list, TLP's)\n"
          "  --gain-scale C      LambdaRank's gain 2^(C x label) - 1, steeper at the top for C > 1 (default 1)\n"
          "  --pretrain F        tlp: first E epochs (--pretrain-epochs, default 5) on F's records alone, e.g. analytic\n"
          "                      labels of extra programs (dataset collect --analytic T.json), then the epochs on\n"
          "                      --data as without F; F's records of --split's held-out workloads are not used\n"
          "  --fractions LIST    mtl-tlp: train once per share of the target platform's labels kept; -o gets\n"
          "                      the last model\n"
          "  --baseline          mtl-tlp: also train on the target platform's labels alone (TLP) per fraction\n");
}

static int parse_width(int w, pp_tlp_config *c) {
  if (w < 8 || w % 8) return -1;
  c->enc[0] = w / 4, c->enc[1] = w / 2, c->enc[2] = w, c->enc[3] = w;
  c->dec[0] = w, c->dec[1] = w / 2, c->dec[2] = w / 4;
  return 0;
}

int cmd_train(int argc, char **argv) {
  if (argc >= 2 && strcmp(argv[1], "--help") == 0) {
    usage(stdout);
    return EXIT_OK;
  }
  if (argc < 2 || (strcmp(argv[1], "tlp") != 0 && strcmp(argv[1], "mtl-tlp") != 0)) {
    usage(stderr);
    return EXIT_USAGE;
  }
  restart_without_forced_blas_core(NULL, argc, argv);
  bool mtl = strcmp(argv[1], "mtl-tlp") == 0, baseline = false;
  char **files = calloc((size_t)argc, sizeof(char *));
  int n_files = 0, n_frac = 0, pre_epochs = -1, batches = -1; /* 1 task, 0 mixed, -1 the default */
  int emb = PP_TLP_EMB;
  double fractions[16];
  const char *out = NULL, *split_path = NULL, *target = NULL, *pretrain = NULL;
  pp_tlp_config cfg;
  pp_tlp_config_default(&cfg);
  pp_tlp_train_opts o;
  pp_tlp_train_opts_default(&o);
  o.verbose = true;
  for (int i = 2; i < argc; i++) {
    const char *a = argv[i];
    bool v = i + 1 < argc;
    if (strcmp(a, "--help") == 0) {
      usage(stdout);
      free(files);
      return EXIT_OK;
    } else if (strcmp(a, "--data") == 0 && v) files[n_files++] = argv[++i];
    else if (strcmp(a, "-o") == 0 && v) out = argv[++i];
    else if (strcmp(a, "--split") == 0 && v) split_path = argv[++i];
    else if (strcmp(a, "--epochs") == 0 && v) o.epochs = atoi(argv[++i]);
    else if (strcmp(a, "--batch") == 0 && v) o.batch = atoi(argv[++i]);
    else if (strcmp(a, "--lr") == 0 && v) o.lr = atof(argv[++i]);
    else if (strcmp(a, "--seed") == 0 && v) o.seed = strtoull(argv[++i], NULL, 10);
    else if (strcmp(a, "--quiet") == 0) o.verbose = false;
    else if (strcmp(a, "--task-batches") == 0) batches = 1;
    else if (strcmp(a, "--mixed-batches") == 0) batches = 0;
    else if (strcmp(a, "--clip") == 0 && v) o.clip_norm = atof(argv[++i]);
    else if (strcmp(a, "--avg-epochs") == 0 && v) o.avg_epochs = atoi(argv[++i]);
    else if (strcmp(a, "--label-power") == 0 && v) o.label_power = atof(argv[++i]);
    else if (strcmp(a, "--pretrain") == 0 && v) pretrain = argv[++i];
    else if (strcmp(a, "--pretrain-epochs") == 0 && v) {
      if (tlp_cli_parse_count("train", a, argv[++i], &pre_epochs) < 0) {
        free(files);
        return EXIT_USAGE;
      }
    } else if ((strcmp(a, "--ndcg-k") == 0 || strcmp(a, "--gain-scale") == 0) && v) {
      if (tlp_cli_parse_rank("train", a, argv[++i], &o.rank) < 0) {
        free(files);
        return EXIT_USAGE;
      }
    } else if (strcmp(a, "--baseline") == 0) baseline = true;
    else if (strcmp(a, "--target-platform") == 0 && v) target = argv[++i];
    else if (strcmp(a, "--backbone") == 0 && v) {
      a = argv[++i];
      if (strcmp(a, "attention") != 0 && strcmp(a, "lstm") != 0) {
        fprintf(stderr, "portent train: --backbone is attention or lstm, not '%s'\n", a);
        free(files);
        return EXIT_USAGE;
      }
      cfg.lstm = strcmp(a, "lstm") == 0;
    }
    else if (strcmp(a, "--width") == 0 && v) {
      if (parse_width(atoi(argv[++i]), &cfg) < 0) {
        fprintf(stderr, "portent train: --width wants a multiple of 8, at least 8\n");
        free(files);
        return EXIT_USAGE;
      }
    } else if (strcmp(a, "--emb") == 0 && v) {
      emb = atoi(argv[++i]);
      if (emb < PP_TLP_EMB_MIN || emb > PP_TLP_EMB_MAX) {
        fprintf(stderr, "portent train: --emb wants %d to %d feature columns\n", PP_TLP_EMB_MIN, PP_TLP_EMB_MAX);
        free(files);
        return EXIT_USAGE;
      }
    } else if (strcmp(a, "--loss") == 0 && v) {
      a = argv[++i];
      if (strcmp(a, "lambdarank") == 0) o.loss = PP_LOSS_LAMBDARANK;
      else if (strcmp(a, "mse") == 0) o.loss = PP_LOSS_MSE;
      else {
        fprintf(stderr, "portent train: --loss is lambdarank or mse, not '%s'\n", a);
        free(files);
        return EXIT_USAGE;
      }
    } else if (strcmp(a, "--fractions") == 0 && v) {
      char *copy = strdup(argv[++i]), *save = NULL;
      for (char *t = strtok_r(copy, ",", &save); t && n_frac < 16; t = strtok_r(NULL, ",", &save))
        fractions[n_frac++] = atof(t);
      free(copy);
    } else {
      fprintf(stderr, "portent train: unexpected argument '%s'\n", a);
      usage(stderr);
      free(files);
      return EXIT_USAGE;
    }
  }
  bool bad_frac = false;
  for (int i = 0; i < n_frac; i++) bad_frac |= !(fractions[i] > 0 && fractions[i] <= 1);
  if (!n_files || !out || o.epochs < 1 || o.batch < 1 || !(o.lr > 0) || !(o.clip_norm >= 0) || bad_frac || (mtl && !target) ||
      o.avg_epochs < 0 || o.avg_epochs > o.epochs || !(o.label_power > 0 && o.label_power < 1e3) ||
      (!mtl && (target || n_frac || baseline)) || (mtl && pretrain) || (pre_epochs >= 0 && !pretrain)) {
    fprintf(stderr, "portent train: %s\n",
            !n_files || !out ? "--data and -o are required"
            : mtl && !target ? "mtl-tlp needs --target-platform"
            : mtl && pretrain ? "--pretrain is tlp's (single task), not mtl-tlp's"
            : pre_epochs >= 0 && !pretrain ? "--pretrain-epochs needs --pretrain"
            : !mtl && (target || n_frac || baseline) ? "--target-platform, --fractions, --baseline are mtl-tlp's"
                                                      : "--epochs, --batch, --lr, --label-power must be positive, --clip "
                                                        ">= 0, --avg-epochs 0 to --epochs, fractions in (0, 1]");
    free(files);
    return EXIT_USAGE;
  }
  if (!n_frac) fractions[n_frac++] = 1;
  o.pretrain_epochs = !pretrain ? 0 : pre_epochs >= 0 ? pre_epochs : 5;
  /* tlp: whole tasks by default (validation task-mean +0.04 over TLP's mix, session 17); mtl-tlp: TLP's mix */
  o.task_batches = batches >= 0 ? batches == 1 : !mtl;
  fprintf(stderr, "OpenBLAS core: %s\n", pp_tlp_blas_core());

  pp_tlp_split split = {0};
  pt_diag d = {0};
  if (split_path && pp_tlp_split_read(split_path, &split, &d) < 0) {
    fprintf(stderr, "portent train: %s\n", d.msg);
    free(files);
    return EXIT_USAGE;
  }
  pp_tlp_dataset ds;
  pp_tlp_dataset_init(&ds, mtl);
  ds.emb = emb;
  pp_tlp_vocab vocab = {0};
  int rc = EXIT_OK;
  if (tlp_cli_load(&ds, n_files, files, pretrain, split_path ? &split : NULL, &vocab, true, "train") < 0) {
    rc = EXIT_USAGE;
    goto done;
  }
  int tp = -1;
  if (mtl) {
    tp = pp_tlp_platform_index(&ds, target);
    if (tp < 0) {
      fprintf(stderr, "portent train: target platform '%s' not in the data (platforms:", target);
      for (int p = 0; p < ds.n_platforms; p++) fprintf(stderr, " %s", ds.platforms[p]);
      fprintf(stderr, ")\n");
      rc = EXIT_USAGE;
      goto done;
    }
  }
  for (int f = 0; f < n_frac; f++)
    for (int base = baseline ? 1 : 0; base >= 0; base--) {
      pp_tlp_train_opts fo = o;
      fo.target_platform = tp;
      fo.target_fraction = fractions[f];
      fo.target_only = base;
      double t0 = pt_now();
      pp_tlp_model *m = pp_tlp_train(&ds, &vocab, &cfg, &fo, &d);
      if (!m) {
        fprintf(stderr, "portent train: %s\n", d.msg);
        rc = d.err == PT_ERR_INPUT ? EXIT_USAGE : EXIT_FAILED;
        goto done;
      }
      double secs = pt_now() - t0;
      char label[96];
      bool held = split_path != NULL;
      for (int p = 0; p < ds.n_platforms; p++) {
        if (mtl && p != tp) continue;
        pp_tlp_metrics mt;
        pt_diag ed = {0};
        if (mtl)
          snprintf(label, sizeof label, "%s %s %.0f%% %s", base ? "tlp" : "mtl-tlp", target, fractions[f] * 100,
                   held ? "test" : "train");
        else snprintf(label, sizeof label, "tlp %s", held ? "test" : "train");
        if (pp_tlp_evaluate(m, &ds, p, p, held, NULL, &mt, &ed) == 0) {
          tlp_cli_print_metrics(stdout, label, &mt);
          if (f == 0 && base == (baseline ? 1 : 0)) tlp_cli_print_random(stdout, "  random ranking", &ds, p, held, NULL);
        } else fprintf(stderr, "portent train: %s\n", ed.msg);
      }
      printf("trained in %.1f s (%d parameters)\n", secs, pp_tlp_model_n_params(m));
      fflush(stdout);
      if (f == n_frac - 1 && !base && pp_tlp_model_save(m, out, &d) < 0) {
        fprintf(stderr, "portent train: %s\n", d.msg);
        rc = EXIT_FAILED;
      }
      pp_tlp_model_free(m);
    }
  if (rc == EXIT_OK) printf("wrote %s\n", out);
done:
  pp_tlp_dataset_free(&ds);
  pp_tlp_vocab_clear(&vocab);
  pp_tlp_split_free(&split);
  free(files);
  return rc;
}
