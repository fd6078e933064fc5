/* portent eval: ranks TVM records with a trained TLP / MTL-TLP model and prints TLP's metrics:
 * top-k per task (best latency / best latency among the model's k top-ranked), averaged over
 * tasks, and the mean per-task pairwise accuracy and Spearman's rho. */
#include <cjson/cJSON.h>
#include <stdlib.h>
#include <string.h>

#include "blas_env.h"
#include "commands.h"
#include "tlp_cli.h"

static void usage(FILE *f) {
  fprintf(f, "usage: portent eval --model model.safetensors --data records.jsonl [--data more.jsonl ...]\n"
             "       [--split split.json] [--platform P] [--weights weights.json] [--json] [--scores FILE]\n\n"
             "  --split FILE    evaluate only the workloads its \"test\" list holds out\n"
             "  --platform P    MTL-TLP: the platform (head) to rank for; default: every head in the data\n"
             "  --weights FILE  {\"workload key\": weight, ...}: weighted task averages (absent keys weigh 0)\n"
             "  --scores FILE   also write each sample's raw features and every head's score, one JSON\n"
             "                  object a line (scripts/tlp_torch_check.py recomputes them in PyTorch)\n"
             "Tokens the model's vocabulary lacks encode as 0 (unknown); failed measurements are skipped.\n");
}

/* Task weights by workload key, one per dataset group. */
static double *read_weights(const char *path, const pp_tlp_dataset *ds, pt_diag *d) {
  char *text = pt_read_file(path, NULL, d);
  if (!text) return NULL;
  cJSON *j = cJSON_Parse(text);
  free(text);
  if (!cJSON_IsObject(j)) {
    cJSON_Delete(j);
    pt_fail(d, PT_ERR_INPUT, "%s: expected {\"workload key\": weight, ...}", path);
    return NULL;
  }
  double *w = calloc((size_t)ds->n_groups + 1, sizeof(double));
  for (int g = 0; g < ds->n_groups; g++) {
    char *key = pp_tlp_group_key(ds, g);
    const cJSON *e = cJSON_GetObjectItemCaseSensitive(j, key);
    free(key);
    if (e && (!cJSON_IsNumber(e) || !(e->valuedouble >= 0))) {
      cJSON_Delete(j);
      free(w);
      pt_fail(d, PT_ERR_INPUT, "%s: the weight of %s is not a non-negative number", path, ds->groups[g]);
      return NULL;
    }
    w[g] = e ? e->valuedouble : 0;
  }
  cJSON_Delete(j);
  return w;
}

/* --scores: per sample its task, rows, raw features (seq_len x emb, before the model's
 * normalization) and every head's score, so that another implementation of the network can be
 * checked against this one on the same inputs. Written to a temporary file and renamed. */
static int write_scores(const char *path, pp_tlp_model *m, const pp_tlp_dataset *ds, pt_diag *d) {
  const pp_tlp_config *c = pp_tlp_model_config(m);
  int n = ds->n, n_out = c->n_out;
  const float **x = malloc(sizeof *x * (size_t)(n ? n : 1));
  int *rows = malloc(sizeof(int) * (size_t)(n ? n : 1));
  float *scores = malloc(sizeof(float) * (size_t)(n ? n : 1) * (size_t)n_out);
  int rc = x && rows && scores ? 0 : pt_fail(d, PT_ERR_NOMEM, "out of memory");
  for (int i = 0; i < n && rc == 0; i++) x[i] = ds->s[i].x, rows[i] = ds->s[i].n_rows;
  for (int o = 0; o < n_out && rc == 0; o++)
    if (pp_tlp_model_predict(m, n, x, rows, o, scores + (size_t)o * n) < 0) rc = pt_fail(d, PT_ERR_NOMEM, "out of memory");
  char tmp[4096];
  snprintf(tmp, sizeof tmp, "%s.tmp", path);
  FILE *f = rc == 0 ? fopen(tmp, "w") : NULL;
  if (rc == 0 && !f) rc = pt_fail(d, PT_ERR_IO, "%s: cannot write", path);
  for (int i = 0; i < n && f; i++) {
    fprintf(f, "{\"task\": %d, \"n_rows\": %d, \"x\": [", ds->s[i].group, rows[i]);
    for (int k = 0; k < c->seq_len * c->emb; k++) fprintf(f, "%s%.9g", k ? ", " : "", x[i][k]);
    fprintf(f, "], \"scores\": [");
    for (int o = 0; o < n_out; o++) fprintf(f, "%s%.9g", o ? ", " : "", scores[(size_t)o * n + i]);
    fprintf(f, "]}\n");
  }
  if (f && (fclose(f) != 0 || rename(tmp, path) != 0)) rc = pt_fail(d, PT_ERR_IO, "%s: cannot write", path);
  free(x), free(rows), free(scores);
  return rc;
}

int cmd_eval(int argc, char **argv) {
  restart_without_forced_blas_core(NULL, argc, argv);
  const char *model_path = NULL, *split_path = NULL, *platform = NULL, *weights_path = NULL, *scores_path = NULL;
  double *weights = NULL;
  char **files = calloc((size_t)argc + 1, sizeof(char *));
  int n_files = 0;
  bool json = false;
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i];
    bool v = i + 1 < argc;
    if (strcmp(a, "--help") == 0) {
      usage(stdout);
      free(files);
      return EXIT_OK;
    } else if (strcmp(a, "--model") == 0 && v) model_path = argv[++i];
    else if (strcmp(a, "--data") == 0 && v) files[n_files++] = argv[++i];
    else if (strcmp(a, "--split") == 0 && v) split_path = argv[++i];
    else if (strcmp(a, "--platform") == 0 && v) platform = argv[++i];
    else if (strcmp(a, "--weights") == 0 && v) weights_path = argv[++i];
    else if (strcmp(a, "--scores") == 0 && v) scores_path = argv[++i];
    else if (strcmp(a, "--json") == 0) json = true;
    else {
      fprintf(stderr, "portent eval: unexpected argument '%s'\n", a);
      usage(stderr);
      free(files);
      return EXIT_USAGE;
    }
  }
  if (!model_path || !n_files) {
    fprintf(stderr, "portent eval: --model and --data are required\n");
    free(files);
    return EXIT_USAGE;
  }
  pt_diag d = {0};
  pp_tlp_model *m = pp_tlp_model_load(model_path, &d);
  if (!m) {
    fprintf(stderr, "portent eval: %s\n", d.msg);
    free(files);
    return EXIT_USAGE;
  }
  fprintf(stderr, "OpenBLAS core: %s\n", pp_tlp_blas_core());
  int n_out = pp_tlp_model_config(m)->n_out;
  /* A one-head model was trained with tasks = (workload key, target); several heads join the
   * platforms (MTL-TLP). The head names say which: "all" or platform names. */
  bool mtl = !(n_out == 1 && strcmp(pp_tlp_model_platform(m, 0), "all") == 0);
  pp_tlp_split split = {0};
  pp_tlp_dataset ds;
  pp_tlp_dataset_init(&ds, mtl);
  ds.seq_len = pp_tlp_model_config(m)->seq_len; /* features shaped as the model was trained */
  ds.emb = pp_tlp_model_config(m)->emb;
  int rc = EXIT_OK;
  if (split_path && pp_tlp_split_read(split_path, &split, &d) < 0) {
    fprintf(stderr, "portent eval: %s\n", d.msg);
    rc = EXIT_USAGE;
    goto done;
  }
  if (tlp_cli_load(&ds, n_files, files, NULL, split_path ? &split : NULL, pp_tlp_model_vocab(m), false, "eval") < 0) {
    rc = EXIT_USAGE;
    goto done;
  }
  if (weights_path && !(weights = read_weights(weights_path, &ds, &d))) {
    fprintf(stderr, "portent eval: %s\n", d.msg);
    rc = EXIT_USAGE;
    goto done;
  }
  if (scores_path && write_scores(scores_path, m, &ds, &d) < 0) {
    fprintf(stderr, "portent eval: %s\n", d.msg);
    rc = EXIT_FAILED;
    goto done;
  }
  if (json) printf("[");
  int shown = 0;
  for (int out = 0; out < n_out; out++) {
    const char *name = pp_tlp_model_platform(m, out);
    if (platform && strcmp(platform, name) != 0) continue;
    int p = pp_tlp_platform_index(&ds, name);
    if (p < 0) continue;
    pp_tlp_metrics mt;
    double t0 = pt_now();
    if (pp_tlp_evaluate(m, &ds, p, out, split_path != NULL, weights, &mt, &d) < 0) {
      fprintf(stderr, "portent eval: %s\n", d.msg);
      rc = EXIT_FAILED;
      continue;
    }
    if (json)
      printf("%s{\"platform\": \"%s\", \"tasks\": %d, \"samples\": %d, \"top1\": %.6g, \"top5\": %.6g, "
             "\"pairwise\": %.6g, \"spearman\": %.6g}",
             shown ? ", " : "", name, mt.n_tasks, mt.n_samples, mt.top1, mt.top5, mt.pairwise, mt.spearman);
    else {
      tlp_cli_print_metrics(stdout, name, &mt);
      tlp_cli_print_random(stdout, "  random ranking", &ds, p, split_path != NULL, weights);
      double secs = pt_now() - t0;
      fprintf(stderr, "ranked %d schedules in %.2f s (%.0f per second; the network, features were computed while loading)\n", mt.n_samples, secs,
              mt.n_samples / (secs > 0 ? secs : 1e-9));
    }
    shown++;
  }
  if (json) printf("]\n");
  if (!shown && rc == EXIT_OK) {
    fprintf(stderr, "portent eval: no labeled record on %s%s\n", platform ? "platform " : "the model's platforms",
            platform ? platform : "");
    rc = EXIT_USAGE;
  }
done:
  free(weights);
  pp_tlp_dataset_free(&ds);
  pp_tlp_split_free(&split);
  pp_tlp_model_free(m);
  free(files);
  return rc;
}
