/* `portent bench predict --pairs W`: where a workload's ranking is lost. The pairs of
 * candidates the default model orders against their measured times, each put in the first
 * class it fits (measured within 5% of each other: below the measurement's resolution;
 * predicted within 3%: below the model's; the rest), the candidates in most of them, and the
 * model's tie groups (candidates whose predictions lie within 0.5% of the next) with the
 * spread of their measured times and the Spearman a model that keeps each group tied could
 * reach at best (session 13, docs/validation.md: mm512's naive k loop). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_predict.h"
#include "commands.h"
#include "predictor.h"

#define MEASURED_CLOSE 1.05 /* session 12's classes */
#define PREDICTED_CLOSE 1.03
#define TIE_STEP 1.005 /* neighbouring predictions this close are one tie group */

static bool within(double a, double b, double ratio) {
  double lo = a < b ? a : b, hi = a < b ? b : a;
  return lo > 0 && hi <= lo * ratio;
}

typedef struct {
  double v;
  int j;
} keyed;

static int by_value(const void *a, const void *b) {
  double x = ((const keyed *)a)->v, y = ((const keyed *)b)->v;
  return x < y ? -1 : x > y ? 1 : 0;
}

static int by_count(const void *a, const void *b) {
  double x = ((const keyed *)a)->v, y = ((const keyed *)b)->v;
  return x > y ? -1 : x < y ? 1 : ((const keyed *)a)->j - ((const keyed *)b)->j;
}

/* The pair classes of workload w under prediction pred: counts[0..2] = measured close,
 * predicted close, the rest; per candidate its misordered pairs (all, and of the rest). */
static int misordered(const bp_workload *w, const double *pred, int counts[3], int *all, int *rest) {
  int bad = 0;
  counts[0] = counts[1] = counts[2] = 0;
  for (int j = 0; j < w->n; j++) all[j] = rest[j] = 0;
  for (int a = 0; a < w->n; a++)
    for (int b = a + 1; b < w->n; b++) {
      double dm = w->meas[a] - w->meas[b], dp = pred[a] - pred[b];
      if (!(dm * dp < 0)) continue;
      bad++, all[a]++, all[b]++;
      int c = within(w->meas[a], w->meas[b], MEASURED_CLOSE) ? 0 : within(pred[a], pred[b], PREDICTED_CLOSE) ? 1 : 2;
      counts[c]++;
      if (c == 2) rest[a]++, rest[b]++;
    }
  return bad;
}

int bp_print_pairs(const bp_set *s, const char *name) {
  const bp_workload *w = NULL;
  for (int i = 0; i < s->nw && !w; i++)
    if (strcmp(s->w[i].name, name) == 0) w = &s->w[i];
  if (!w) {
    fprintf(stderr, "portent bench predict: --pairs: '%s' is not a workload of the set\n", name);
    return EXIT_USAGE;
  }
  int n = w->n;
  const double *pred = w->pred[BP_HEADLINE];
  int counts[3], *all = malloc(sizeof(int) * (size_t)(2 * n + 1)), *rest = all + n;
  int bad = misordered(w, pred, counts, all, rest);
  printf("\nmisordered pairs of %s (%s): %d of %d, Spearman %.3f\n", name, bp_preset_name(BP_HEADLINE), bad,
         n * (n - 1) / 2, pp_spearman(n, pred, w->meas));
  printf("  measured within %.0f%% of each other: %d; predicted within %.0f%%: %d; the rest: %d\n",
         100 * (MEASURED_CLOSE - 1), counts[0], 100 * (PREDICTED_CLOSE - 1), counts[1], counts[2]);
  keyed *k = malloc(sizeof *k * (size_t)(n + 1));
  for (int j = 0; j < n; j++) k[j] = (keyed){all[j], j};
  qsort(k, n, sizeof *k, by_count);
  printf("  candidates in most (pairs of the rest in parentheses):");
  for (int q = 0; q < n && q < 8 && k[q].v > 0; q++) printf(" #%d %d (%d)", w->candidate[k[q].j], all[k[q].j], rest[k[q].j]);
  printf("\n");
  /* tie groups: runs of the sorted predictions, each within TIE_STEP of the one before */
  for (int j = 0; j < n; j++) k[j] = (keyed){pred[j], j};
  qsort(k, n, sizeof *k, by_value);
  double *oracle = malloc(sizeof(double) * (size_t)(n + 1));
  for (int j = 0; j < n; j++) oracle[j] = w->meas[j];
  int groups = 0;
  for (int q = 0; q < n;) {
    int e = q + 1;
    while (e < n && k[e - 1].v > 0 && k[e].v <= k[e - 1].v * TIE_STEP) e++;
    if (e - q >= 3) {
      int m = e - q;
      keyed *sorted = malloc(sizeof *sorted * (size_t)m); /* the group's measured times, sorted */
      for (int r = 0; r < m; r++) sorted[r] = (keyed){w->meas[k[q + r].j], r};
      qsort(sorted, m, sizeof *sorted, by_value);
      double lo = sorted[0].v, hi = sorted[m - 1].v;
      double median = m % 2 ? sorted[m / 2].v : (sorted[m / 2 - 1].v + sorted[m / 2].v) / 2;
      free(sorted);
      if (groups++ == 0) printf("  tie groups (each prediction within %.1f%% of the one before):\n", 100 * (TIE_STEP - 1));
      printf("    %d candidates predicted %.4g-%.4g ms, measured %.4g-%.4g ms (%.2fx):", m, k[q].v * 1e3,
             k[e - 1].v * 1e3, lo * 1e3, hi * 1e3, lo > 0 ? hi / lo : NAN);
      for (int r = q; r < e; r++) printf(" #%d", w->candidate[k[r].j]), oracle[k[r].j] = median;
      printf("\n");
    }
    q = e;
  }
  if (groups > 0)
    printf("  Spearman with each tie group at its median measured time and every other candidate at its own "
           "(the best a model that keeps the groups tied can reach): %.3f\n",
           pp_spearman(n, oracle, w->meas));
  else
    printf("  no tie groups of 3 or more\n");
  free(oracle), free(k), free(all);
  return EXIT_OK;
}
