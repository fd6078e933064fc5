/* portent bench predict --merge-rounds: one saved set's truth from several rounds of the same
 * schedules measured one round after another (each round a `--replay SET --measure-only --save
 * DIR` run), so that a burst of load lands on one round's figure of a candidate, not on all its
 * repeats. Per candidate the median over the rounds, each round's figure kept in the record;
 * the round-to-round Spearman within each workload says how far the truth itself repeats. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_predict.h"
#include "commands.h"
#include "compiler.h"
#include "predictor.h"

#define MAX_ROUNDS 64

/* Candidate j of workload w in round set r: its index there, -1 when that round lacks it
 * (not measured, or failed). The same number with other steps is not the same candidate. */
static int find_in(const bp_set *r, const char *workload, int candidate, const char *steps, bool *clash) {
  for (int i = 0; i < r->nw; i++) {
    if (strcmp(r->w[i].name, workload) != 0) continue;
    for (int j = 0; j < r->w[i].n; j++)
      if (r->w[i].candidate[j] == candidate) {
        if (strcmp(r->w[i].steps[j], steps) != 0) *clash = true;
        return j;
      }
  }
  return -1;
}

static const bp_workload *workload_in(const bp_set *r, const char *name) {
  for (int i = 0; i < r->nw; i++)
    if (strcmp(r->w[i].name, name) == 0) return &r->w[i];
  return NULL;
}

/* A workload's candidates in candidate order (as a run saves them), whichever round had which. */
static void sort_by_candidate(bp_workload *w) {
  for (int a = 1; a < w->n; a++)
    for (int b = a; b > 0 && w->candidate[b - 1] > w->candidate[b]; b--) {
#define SWAP(x) do { __typeof__(x[0]) t_ = x[b]; x[b] = x[b - 1], x[b - 1] = t_; } while (0)
      SWAP(w->candidate);
      SWAP(w->meas);
      SWAP(w->meas_min);
      SWAP(w->repeats);
      SWAP(w->prof);
      SWAP(w->steps);
      SWAP(w->record);
#undef SWAP
    }
}

/* The record line of the merged candidate: the first round's task and steps, cost = the median
 * over rounds, measurement cost summed, the latest timestamp; "portent" with the rounds. */
static char *merged_line(const char *first_record, pc_record *rec, double median, double cost, double stamp,
                         const char *platform, const char *workload, int candidate, int threads, double min_s,
                         int repeats, const double *round_s, int nr, bool cpu_clock, pt_diag *d) {
  if (pc_record_parse(first_record, rec, d) != 0) return NULL;
  rec->n_costs = 1, rec->costs[0] = median, rec->all_cost = cost, rec->timestamp = stamp;
  char *line = pc_record_format(rec);
  size_t cap = 64 + 24 * (size_t)nr, used = 0;
  char *rounds = malloc(cap);
  if (!rounds) {
    free(line);
    pt_fail(d, PT_ERR_NOMEM, "out of memory");
    return NULL;
  }
  used += (size_t)snprintf(rounds, cap, "%s, \"rounds\": [", cpu_clock ? ", \"clock\": \"cpu\"" : "");
  for (int k = 0; k < nr; k++) /* JSON has no NaN: a round that lacks the candidate is null */
    used += round_s[k] > 0 ? (size_t)snprintf(rounds + used, cap - used, k ? ", %.9g" : "%.9g", round_s[k])
                           : (size_t)snprintf(rounds + used, cap - used, k ? ", null" : "null");
  snprintf(rounds + used, cap - used, "]");
  char *out = line ? bp_record_line(line, platform, workload, candidate, threads, min_s, repeats, rounds) : NULL;
  free(line), free(rounds);
  return out;
}

/* v in JSON (null where it is not finite: no pairs, or a workload of one candidate), then tail. */
static void json_number(double v, const char *tail) {
  if (isfinite(v)) printf("%.4f%s", v, tail);
  else printf("null%s", tail);
}

/* Mean and least Spearman over the pairs of rounds (candidates both rounds have), and the mean
 * of each round against the merged median. */
static void repeatability(int nr, const bp_workload *m, const double *const *round_s,
                          double *mean_pair, double *min_pair, double *mean_vs_median) {
  double *a = malloc(sizeof *a * (m->n + 1)), *b = malloc(sizeof *b * (m->n + 1));
  double sum = 0, least = INFINITY, sum_m = 0;
  int pairs = 0, vs = 0;
  for (int p = 0; a && b && p < nr; p++) { /* out of memory: no pairs, NaN (null in JSON) */
    for (int q = p + 1; q < nr; q++) {
      int n = 0;
      for (int j = 0; j < m->n; j++)
        if (round_s[j][p] > 0 && round_s[j][q] > 0) a[n] = round_s[j][p], b[n] = round_s[j][q], n++;
      double s = pp_spearman(n, a, b);
      if (isfinite(s)) sum += s, pairs++, least = s < least ? s : least;
    }
    int n = 0;
    for (int j = 0; j < m->n; j++)
      if (round_s[j][p] > 0) a[n] = round_s[j][p], b[n] = m->meas[j], n++;
    double s = pp_spearman(n, a, b);
    if (isfinite(s)) sum_m += s, vs++;
  }
  *mean_pair = pairs ? sum / pairs : NAN, *min_pair = pairs ? least : NAN, *mean_vs_median = vs ? sum_m / vs : NAN;
  free(a), free(b);
}

int bp_merge_rounds(const char *dirs, const char *save, const char *platform, bool json) {
  pt_diag d = {0};
  bp_set *r[MAX_ROUNDS] = {0};
  char dir[MAX_ROUNDS][1024];
  int nr = 0, rc = EXIT_USAGE;
  char *list = strdup(dirs), *target = NULL, *out = NULL;
  size_t target_len = 0, cap = 1 << 16, used = 0;
  pc_record *rec = malloc(sizeof *rec);
  bp_set *m = bp_set_new();
  double **round_s = NULL;
  int n_all = 0;
  if (!list || !rec || !m) goto oom;
  for (char *tok = strtok(list, ","); tok; tok = strtok(NULL, ",")) {
    if (nr == MAX_ROUNDS) {
      fprintf(stderr, "portent bench predict: --merge-rounds: more than %d rounds\n", MAX_ROUNDS);
      goto done;
    }
    bp_set_dir(tok, dir[nr], sizeof dir[nr]);
    if (!(r[nr] = bp_load(dir[nr], true, &d))) {
      fprintf(stderr, "portent bench predict: --merge-rounds: round %d: %s\n", nr + 1, d.msg);
      goto done;
    }
    /* every round measured on one machine with one target file and thread count */
    char path[1100];
    snprintf(path, sizeof path, "%s/target.json", dir[nr]);
    size_t len;
    char *t = pt_read_file(path, &len, &d);
    if (!t) {
      fprintf(stderr, "portent bench predict: --merge-rounds: %s\n", d.msg);
      goto done;
    }
    bool same = !target || (len == target_len && memcmp(t, target, len) == 0);
    if (!target) target = t, target_len = len;
    else free(t);
    if (!same || r[nr]->threads != r[0]->threads || r[nr]->cpu_clock != r[0]->cpu_clock) {
      fprintf(stderr, "portent bench predict: --merge-rounds: %s: %s than %s's: not rounds of one set\n", dir[nr],
              !same ? "another target.json" : r[nr]->threads != r[0]->threads ? "another thread count" : "another clock",
              dir[0]);
      goto done;
    }
    nr++;
  }
  if (nr < 2) {
    fprintf(stderr, "portent bench predict: --merge-rounds needs two rounds or more (comma-separated sets)\n");
    goto done;
  }
  /* the union of the rounds' candidates, in the order they first appear */
  m->threads = r[0]->threads;
  for (int k = 0; k < nr; k++)
    for (int i = 0; i < r[k]->nw; i++) {
      bp_workload *w = &r[k]->w[i];
      bp_workload *mw = bp_set_workload(m, w->name);
      for (int j = 0; mw && j < w->n; j++) {
        bool clash = false;
        if (find_in(m, w->name, w->candidate[j], w->steps[j], &clash) >= 0 || clash) {
          if (clash) {
            fprintf(stderr, "portent bench predict: --merge-rounds: %s #%d has other steps in %s than in an earlier round\n",
                    w->name, w->candidate[j], dir[k]);
            goto done;
          }
          continue;
        }
        /* its profile from the first round that has it (every round's is the replayed set's) */
        bp_set_add(m, mw, w->candidate[j], 0, w->prof[j], w->steps[j], w->record[j]);
        w->prof[j] = NULL;
      }
    }
  for (int i = 0; i < m->nw; i++) sort_by_candidate(&m->w[i]);
  for (int i = 0; i < m->nw; i++) n_all += m->w[i].n;
  round_s = calloc((size_t)n_all + 1, sizeof *round_s);
  out = malloc(cap);
  if (!round_s || !out) goto oom;
  const char *slash = strrchr(save, '/');
  char plat[256];
  snprintf(plat, sizeof plat, "%s", platform ? platform : slash && slash[1] ? slash + 1 : save);
  int at = 0, partial = 0;
  for (int i = 0; i < m->nw; i++) {
    bp_workload *w = &m->w[i];
    for (int j = 0; j < w->n; j++, at++) {
      double v[MAX_ROUNDS], cost = 0, stamp = 0, min_s = INFINITY;
      int nv = 0, repeats = 0;
      if (!(round_s[at] = malloc(sizeof(double) * nr))) goto oom;
      for (int k = 0; k < nr; k++) {
        bool clash = false;
        int q = find_in(r[k], w->name, w->candidate[j], w->steps[j], &clash);
        const bp_workload *rw = workload_in(r[k], w->name);
        round_s[at][k] = q >= 0 ? rw->meas[q] : NAN;
        if (q < 0) continue;
        v[nv++] = rw->meas[q];
        repeats += rw->repeats[q];
        if (rw->meas_min[q] > 0 && rw->meas_min[q] < min_s) min_s = rw->meas_min[q];
        if (pc_record_parse(rw->record[q], rec, &d) == 0) cost += rec->all_cost, stamp = fmax(stamp, rec->timestamp);
      }
      partial += nv < nr;
      w->meas[j] = pt_median(v, nv);
      char *line = merged_line(w->record[j], rec, w->meas[j], cost, stamp, plat, w->name, w->candidate[j], m->threads,
                               isfinite(min_s) ? min_s : 0, repeats, round_s[at], nr, m->threads == 1 && r[0]->cpu_clock,
                               &d);
      if (!line) {
        fprintf(stderr, "portent bench predict: --merge-rounds: %s #%d: %s\n", w->name, w->candidate[j], d.msg);
        goto done;
      }
      size_t l = strlen(line);
      while (used + l + 2 > cap) {
        char *grown = realloc(out, cap * 2);
        if (!grown) {
          free(line);
          goto oom;
        }
        out = grown, cap *= 2;
      }
      memcpy(out + used, line, l), used += l, out[used++] = '\n';
      free(line);
    }
  }
  /* the set: the rounds' target, records with the medians, the profiles */
  char path[1200];
  rc = EXIT_FAILED;
  if (bp_mkdir_p(save, &d) != 0) goto io_fail;
  snprintf(path, sizeof path, "%s/target.json", save);
  if (pt_write_file_atomic(path, target, target_len, &d) != 0) goto io_fail;
  snprintf(path, sizeof path, "%s/records.jsonl", save);
  if (pt_write_file_atomic(path, out, used, &d) != 0 || bp_save_profiles(m, save, &d) != 0) goto io_fail;
  /* how far the truth repeats: the ceiling of any model's Spearman */
  if (json) printf("{\"rounds\": %d, \"candidates\": %d, \"partial\": %d, \"workloads\": {", nr, n_all, partial);
  else {
    fprintf(stderr, "saved %s (platform %s): %d candidates, the median of %d rounds (%d not measured in every round)\n",
            save, plat, n_all, nr, partial);
    printf("round-to-round Spearman within each workload (%d rounds: mean and least over the %d pairs; each round "
           "against the median), and the median spread of a candidate's rounds (max / min - 1)\n",
           nr, nr * (nr - 1) / 2);
    printf("%-14s %5s %9s %9s %11s %8s\n", "workload", "n", "pairs", "least", "vs median", "spread");
  }
  double sum_pair = 0, sum_least = 0, sum_vs = 0;
  int nw = 0;
  at = 0;
  for (int i = 0; i < m->nw; i++) {
    const bp_workload *w = &m->w[i];
    double mean_pair, min_pair, vs, *spread = malloc(sizeof *spread * (w->n + 1));
    int ns = 0;
    for (int j = 0; spread && j < w->n; j++) {
      double lo = INFINITY, hi = 0;
      for (int k = 0; k < nr; k++)
        if (round_s[at + j][k] > 0) lo = fmin(lo, round_s[at + j][k]), hi = fmax(hi, round_s[at + j][k]);
      if (hi > 0) spread[ns++] = hi / lo - 1;
    }
    repeatability(nr, w, (const double *const *)(round_s + at), &mean_pair, &min_pair, &vs);
    double med_spread = pt_median(spread, ns);
    free(spread);
    at += w->n;
    if (isfinite(mean_pair)) sum_pair += mean_pair, sum_least += min_pair, sum_vs += vs, nw++;
    if (json) {
      printf("%s\"%s\": {\"n\": %d, \"spearman_pairs\": ", i ? ", " : "", w->name, w->n);
      json_number(mean_pair, ", \"spearman_least\": ");
      json_number(min_pair, ", \"spearman_vs_median\": ");
      json_number(vs, ", \"median_spread\": ");
      json_number(med_spread, "}");
    }
    else printf("%-14s %5d %9.3f %9.3f %11.3f %7.1f%%\n", w->name, w->n, mean_pair, min_pair, vs, 100 * med_spread);
  }
  if (json) {
    printf("}, \"mean\": {\"spearman_pairs\": ");
    json_number(nw ? sum_pair / nw : NAN, ", \"spearman_least\": ");
    json_number(nw ? sum_least / nw : NAN, ", \"spearman_vs_median\": ");
    json_number(nw ? sum_vs / nw : NAN, "}}\n");
  }
  else printf("%-14s %5d %9.3f %9.3f %11.3f\n", "mean", n_all, sum_pair / nw, sum_least / nw, sum_vs / nw);
  rc = EXIT_OK;
  goto done;
oom:
  fprintf(stderr, "portent bench predict: --merge-rounds: out of memory\n");
  rc = EXIT_FAILED;
  goto done;
io_fail:
  fprintf(stderr, "portent bench predict: --merge-rounds: --save %s: %s\n", save, d.msg);
done:
  for (int i = 0; round_s && i < n_all; i++) free(round_s[i]);
  free(round_s);
  for (int k = 0; k < nr; k++) bp_set_free(r[k]);
  bp_set_free(m);
  free(list), free(target), free(out), free(rec);
  return rc;
}
