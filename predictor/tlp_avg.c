/* Weight averaging for TLP training (stochastic weight averaging: Izmailov et al., "Averaging
 * Weights Leads to Wider Optima and Better Generalization", UAI 2018): the mean of parameter
 * snapshots taken along the end of a constant-rate Adam run, in place of its last iterate, whose
 * ranking moves from epoch to epoch. Sums in double so that 100 snapshots lose nothing. */
#include <stdlib.h>

#include "tlp.h"

int pp_tlp_avg_init(pp_tlp_avg *a, int n) {
  a->n = n, a->count = 0;
  a->sum = calloc((size_t)n + 1, sizeof(double));
  return a->sum ? 0 : -1;
}

void pp_tlp_avg_add(pp_tlp_avg *a, const float *w) {
  for (int k = 0; k < a->n; k++) a->sum[k] += w[k];
  a->count++;
}

void pp_tlp_avg_mean(const pp_tlp_avg *a, float *w) {
  if (a->count == 0) return;
  for (int k = 0; k < a->n; k++) w[k] = (float)(a->sum[k] / a->count);
}

void pp_tlp_avg_free(pp_tlp_avg *a) {
  free(a->sum);
  a->sum = NULL, a->n = a->count = 0;
}
