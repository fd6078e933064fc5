/* Which labels train TLP / MTL-TLP: the target platform's share (TLP's 7% and 20% settings) drawn
 * label by label, as TLP thins a dataset; per task in blocks, so that the few labels kept are
 * spread over the tasks instead of leaving a third of them with none (at 7% of ~13 schedules a
 * task, a label-by-label draw keeps none of 39% of the tasks and a pair of only 23%); or dealt out
 * evenly, the share's exact count B labels per task at a time (a user who measures a few programs
 * of every task). */
#include <math.h>
#include <stdlib.h>

#include "predictor.h"
#include "tlp.h"

/* Per task: its training samples labelled on the target, a random floor(x) or ceil(x) blocks of
 * B of them with x = fraction * n / B (the expected count stays fraction * n). */
static void keep_by_task(const pp_tlp_dataset *ds, const pp_tlp_train_opts *o, bool *keep, pt_rng *r) {
  int np = ds->n_platforms, tp = o->target_platform, b = o->thin_block;
  int *idx = malloc(sizeof(int) * (size_t)(ds->n + 1));
  for (int g = 0; g < ds->n_groups; g++) {
    int n = 0;
    for (int i = 0; i < ds->n; i++)
      if (ds->s[i].group == g && !ds->s[i].test && ds->s[i].latency[tp] > 0) idx[n++] = i;
    if (!n) continue;
    double x = o->target_fraction * n / b;
    int blocks = (int)floor(x) + (pt_rng_uniform(r) < x - floor(x)), k = blocks * b < n ? blocks * b : n;
    for (int j = 0; j < k; j++) { /* a partial Fisher-Yates shuffle: the first k are the draw */
      int pick = j + (int)pt_rng_range(r, (uint64_t)(n - j)), t = idx[j];
      idx[j] = idx[pick], idx[pick] = t;
      keep[(size_t)idx[j] * np + tp] = true;
    }
  }
  free(idx);
}

/* The share as an exact count, round(fraction x the target's training labels), dealt to the tasks
 * in a random order, B at a time (B = o->thin_spread), round after round until the count is
 * reached: every task keeps B before any keeps 2B, and with count >= B x tasks every task keeps
 * some. Which labels of a task: a random order of them. */
static void keep_spread(const pp_tlp_dataset *ds, const pp_tlp_train_opts *o, bool *keep, pt_rng *r) {
  int np = ds->n_platforms, tp = o->target_platform, ng = ds->n_groups, b = o->thin_spread;
  int *count = calloc((size_t)ng + 1, sizeof(int)), *start = calloc((size_t)ng + 2, sizeof(int));
  int *idx = malloc(sizeof(int) * (size_t)(ds->n + 1)), *taken = calloc((size_t)ng + 1, sizeof(int));
  int *order = malloc(sizeof(int) * (size_t)(ng + 1)), *fill = calloc((size_t)ng + 1, sizeof(int));
  for (int i = 0; i < ds->n; i++)
    if (!ds->s[i].test && ds->s[i].latency[tp] > 0) count[ds->s[i].group]++;
  for (int g = 0; g < ng; g++) start[g + 1] = start[g] + count[g], order[g] = g;
  for (int i = 0; i < ds->n; i++) /* each task's labelled samples, contiguous */
    if (!ds->s[i].test && ds->s[i].latency[tp] > 0) idx[start[ds->s[i].group] + fill[ds->s[i].group]++] = i;
  for (int g = 0; g < ng; g++) pt_rng_shuffle(r, idx + start[g], count[g]);
  pt_rng_shuffle(r, order, ng);
  int left = (int)lround(o->target_fraction * start[ng]);
  for (bool moved = true; left > 0 && moved;) {
    moved = false;
    for (int k = 0; k < ng && left > 0; k++) {
      int g = order[k];
      for (int j = 0; j < b && taken[g] < count[g] && left > 0; j++, left--, moved = true)
        keep[(size_t)idx[start[g] + taken[g]++] * np + tp] = true;
    }
  }
  free(count), free(start), free(idx), free(taken), free(order), free(fill);
}

int pp_tlp_train_keep(const pp_tlp_dataset *ds, const pp_tlp_train_opts *o, bool *keep) {
  int np = ds->n_platforms, tp = o->target_platform;
  bool thin = tp >= 0 && tp < np && o->target_fraction < 1, by_task = thin && o->thin_block > 0,
       spread = thin && o->thin_spread > 0;
  pt_rng r = {o->seed ^ 0x5DEECE66Dull};
  for (int i = 0; i < ds->n; i++)
    for (int p = 0; p < np; p++) {
      bool k = !ds->s[i].test && ds->s[i].latency[p] > 0;
      if (k && p == tp && thin) k = !by_task && !spread && pt_rng_uniform(&r) < o->target_fraction;
      if (o->target_only && p != tp) k = false;
      keep[(size_t)i * np + p] = k;
    }
  if (spread) keep_spread(ds, o, keep, &r);
  else if (by_task) keep_by_task(ds, o, keep, &r);
  int n = 0;
  for (int i = 0; i < ds->n; i++) {
    bool any = false;
    for (int p = 0; p < np; p++) any |= keep[(size_t)i * np + p];
    n += any;
  }
  return n;
}
