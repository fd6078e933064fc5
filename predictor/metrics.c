/* Ranking metrics of the evaluation: MAPE, Spearman's rho, pairwise ranking accuracy and
 * TLP's top-k score (Zhai et al., "TLP", ASPLOS 2023: best latency / best latency among the
 * model's k top-ranked candidates). Lower predicted = faster. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "predictor.h"

double pp_mape(int n, const double *pred, const double *meas) {
  double s = 0;
  int k = 0;
  for (int i = 0; i < n; i++)
    if (meas[i] > 0) s += fabs(pred[i] - meas[i]) / meas[i], k++;
  return k ? s / k : NAN;
}

typedef struct {
  double v;
  int i;
} keyed;

static int cmp_keyed(const void *a, const void *b) {
  double x = ((const keyed *)a)->v, y = ((const keyed *)b)->v;
  return x < y ? -1 : x > y ? 1 : 0;
}

/* Ranks 1..n, ties get their average rank. */
static void ranks(int n, const double *v, double *r) {
  keyed *k = malloc(sizeof *k * (n ? n : 1));
  for (int i = 0; i < n; i++) k[i] = (keyed){v[i], i};
  qsort(k, n, sizeof *k, cmp_keyed);
  for (int i = 0; i < n;) {
    int j = i;
    while (j + 1 < n && k[j + 1].v == k[i].v) j++;
    for (int m = i; m <= j; m++) r[k[m].i] = (i + j) / 2.0 + 1;
    i = j + 1;
  }
  free(k);
}

double pp_spearman(int n, const double *a, const double *b) {
  if (n < 2) return NAN;
  double *ra = malloc(sizeof *ra * n), *rb = malloc(sizeof *rb * n);
  ranks(n, a, ra), ranks(n, b, rb);
  double ma = 0, mb = 0, sab = 0, saa = 0, sbb = 0;
  for (int i = 0; i < n; i++) ma += ra[i], mb += rb[i];
  ma /= n, mb /= n;
  for (int i = 0; i < n; i++) {
    sab += (ra[i] - ma) * (rb[i] - mb);
    saa += (ra[i] - ma) * (ra[i] - ma);
    sbb += (rb[i] - mb) * (rb[i] - mb);
  }
  free(ra), free(rb);
  return saa > 0 && sbb > 0 ? sab / sqrt(saa * sbb) : NAN;
}

double pp_pairwise_accuracy(int n, const double *pred, const double *meas) {
  long ok = 0, all = 0;
  for (int i = 0; i < n; i++)
    for (int j = i + 1; j < n; j++) {
      if (meas[i] == meas[j]) continue;
      all++;
      ok += (pred[i] < pred[j]) == (meas[i] < meas[j]) && pred[i] != pred[j];
    }
  return all ? (double)ok / all : NAN;
}

double pp_topk(int n, const double *pred, const double *meas, int k) {
  if (n <= 0) return NAN;
  keyed *o = malloc(sizeof *o * n);
  double best = INFINITY;
  for (int i = 0; i < n; i++) {
    o[i] = (keyed){pred[i], i};
    if (meas[i] < best) best = meas[i];
  }
  qsort(o, n, sizeof *o, cmp_keyed);
  double chosen = INFINITY;
  for (int i = 0; i < n && i < k; i++)
    if (meas[o[i].i] < chosen) chosen = meas[o[i].i];
  free(o);
  return best / chosen;
}

static bool same_program(const char *a, const char *b) { return a && b && strcmp(a, b) == 0; }

int pp_distinct_programs(int n, const char *const *id, const double *pred, const double *meas, double *pred_out,
                         double *meas_out) {
  int *group = malloc(sizeof *group * (n ? n : 1)), groups = 0;
  double *pv = malloc(sizeof *pv * (n ? n : 1)), *mv = malloc(sizeof *mv * (n ? n : 1));
  if (!group || !pv || !mv) {
    free(group), free(pv), free(mv);
    return -1;
  }
  for (int i = 0; i < n; i++) {
    group[i] = groups;
    for (int j = 0; j < i; j++)
      if (same_program(id[i], id[j])) {
        group[i] = group[j];
        break;
      }
    if (group[i] < groups) continue;
    int k = 0; /* a new program: the median over it and its later copies */
    for (int j = i; j < n; j++)
      if (j == i || same_program(id[i], id[j])) pv[k] = pred[j], mv[k] = meas[j], k++;
    pred_out[groups] = pt_median(pv, k), meas_out[groups] = pt_median(mv, k);
    groups++;
  }
  free(group), free(pv), free(mv);
  return groups;
}
