/* Shared by portent train and portent eval: data loading with a summary, metrics printing. */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tlp_cli.h"


int tlp_cli_load(pp_tlp_dataset *ds, int n_files, char **files, const char *pretrain, const pp_tlp_split *sp,
                 pp_tlp_vocab *v, bool grow, const char *cmd) {
  for (int i = 0; i < n_files; i++) {
    pt_diag d = {0};
    if (pp_tlp_dataset_load(ds, files[i], sp, v, grow, &d) < 0) {
      fprintf(stderr, "portent %s: %s\n", cmd, d.msg);
      return d.err ? d.err : PT_ERR_IO;
    }
  }
  int n_pre = 0;
  pt_diag d = {0};
  if (pretrain && pp_tlp_dataset_load_pretrain(ds, pretrain, sp, v, NULL, &n_pre, &d) < 0) {
    fprintf(stderr, "portent %s: %s\n", cmd, d.msg);
    return d.err ? d.err : PT_ERR_IO;
  }
  pp_tlp_dataset_finish(ds);
  int n_test = 0, n_pre_held = 0, n_groups = 0;
  bool *measured = calloc((size_t)ds->n_groups + 1, sizeof(bool));
  for (int i = 0; i < ds->n; i++) {
    const pp_tlp_sample *s = &ds->s[i];
    n_test += s->test && !s->pretrain, n_pre_held += s->test && s->pretrain;
    if (!s->pretrain && !measured[s->group]) measured[s->group] = true, n_groups++;
  }
  free(measured);
  if (pretrain)
    fprintf(stderr, "%s: %d pre-training schedules from %s (%d of them on held-out workloads, not used)\n", cmd, n_pre,
            pretrain, n_pre_held);
  fprintf(stderr,
          "%s: %d schedules (%d held out) in %d workloads, %d platform%s; skipped %d unreadable lines, %d failed "
          "measurements, %d non-finite or non-positive latencies; %d repeated measurements kept at their fastest\n",
          cmd, ds->n - n_pre, n_test, n_groups, ds->n_platforms, ds->n_platforms == 1 ? "" : "s", ds->n_bad_lines,
          ds->n_failed, ds->n_nonpositive, ds->n_duplicates);
  return 0;
}

void tlp_cli_print_metrics(FILE *f, const char *label, const pp_tlp_metrics *m) {
  fprintf(f, "%-28s tasks %4d  samples %6d  top-1 %.4f  top-5 %.4f  pairwise %.4f  spearman %.4f\n", label,
          m->n_tasks, m->n_samples, m->top1, m->top5, m->pairwise, m->spearman);
}

void tlp_cli_print_random(FILE *f, const char *label, const pp_tlp_dataset *ds, int platform, bool test_only,
                          const double *group_weight) {
  fprintf(f, "%-28s %40s top-1 %.4f  top-5 %.4f  pairwise 0.5     spearman 0\n", label, "",
          pp_tlp_random_topk(ds, platform, test_only, group_weight, 1),
          pp_tlp_random_topk(ds, platform, test_only, group_weight, 5));
}

int tlp_cli_parse_count(const char *cmd, const char *opt, const char *value, int *out) {
  char *end;
  errno = 0;
  long k = strtol(value, &end, 10);
  if (end != value && !*end && !errno && k >= 0 && k <= 100000) {
    *out = (int)k;
    return 0;
  }
  fprintf(stderr, "portent %s: %s wants a whole number from 0 to 100000, not '%s'\n", cmd, opt, value);
  return -1;
}

int tlp_cli_parse_rank(const char *cmd, const char *opt, const char *value, pp_tlp_rank *r) {
  char *end;
  errno = 0;
  if (strcmp(opt, "--ndcg-k") == 0) {
    long k = strtol(value, &end, 10);
    if (end != value && !*end && !errno && k >= 0 && k <= 1000000) {
      r->ndcg_k = (int)k;
      return 0;
    }
    fprintf(stderr, "portent %s: --ndcg-k wants a whole number >= 0 (0: the whole list), not '%s'\n", cmd, value);
    return -1;
  }
  double c = strtod(value, &end);
  if (end != value && !*end && !errno && c > 0 && c <= 64) {
    r->gain_scale = c;
    return 0;
  }
  fprintf(stderr, "portent %s: --gain-scale wants a number in (0, 64] (1: TLP's gain), not '%s'\n", cmd, value);
  return -1;
}
