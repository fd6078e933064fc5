/* Training TLP / MTL-TLP: LambdaRank (TLP's default) or MSE on labels min_latency/latency, Adam
 * (TLP's reference: lr 7e-4, batch 1024, 50 epochs); MTL-TLP sums each sample's loss over the
 * platforms that label it. Then the evaluation TLP reports: top-k per task, pairwise accuracy
 * and Spearman's rho. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "predictor.h"
#include "tlp.h"

void pp_tlp_train_opts_default(pp_tlp_train_opts *o) {
  *o = (pp_tlp_train_opts){.epochs = 50, .batch = 1024, .lr = 7e-4, .loss = PP_LOSS_LAMBDARANK, .seed = 1,
                           .target_platform = -1, .target_fraction = 1, .aux_weight = 1, .label_power = 1,
                           .rank = {.ndcg_k = 0, .gain_scale = 1}};
}

/* ---------------------------------------------------------------- training */

/* Whether some task has two labeled samples with distinct latencies, i.e. something to rank. */
static bool has_rankable_task(const pp_tlp_dataset *ds, const bool *keep) {
  int ng = ds->n_groups, np = ds->n_platforms;
  float *first = calloc((size_t)ng * np + 1, sizeof(float));
  bool found = false;
  for (int i = 0; i < ds->n && !found; i++) {
    if (ds->s[i].test) continue;
    for (int p = 0; p < np && !found; p++) {
      if (!keep[(size_t)i * np + p]) continue;
      float *f = &first[ds->s[i].group * np + p];
      if (*f == 0) *f = ds->s[i].latency[p];
      else if (*f != ds->s[i].latency[p]) found = true;
    }
  }
  free(first);
  return found;
}

/* A task-grouped epoch: tasks in a random order, each task's samples shuffled and contiguous,
 * packed whole into batches of at most bmax samples (a task larger than bmax is one batch of its
 * own); cut[0..nb] are the batch boundaries in order[]. */
static void group_order(const pp_tlp_dataset *ds, const int *train, int n_train, int *order, int bmax, int *cut,
                        pt_rng *r) {
  int ng = ds->n_groups;
  int *perm = malloc(sizeof(int) * (size_t)(ng + 1)), *start = calloc((size_t)ng + 2, sizeof(int));
  for (int t = 0; t < n_train; t++) start[ds->s[train[t]].group + 1]++;
  for (int g = 0; g < ng; g++) start[g + 1] += start[g];
  int *fill = malloc(sizeof(int) * (size_t)(ng + 1)), *by_group = malloc(sizeof(int) * (size_t)(n_train + 1));
  memcpy(fill, start, sizeof(int) * (size_t)ng);
  for (int t = 0; t < n_train; t++) by_group[fill[ds->s[train[t]].group]++] = t;
  for (int g = 0; g < ng; g++) perm[g] = g;
  pt_rng_shuffle(r, perm, ng);
  int at = 0, nb = 0;
  cut[0] = 0;
  for (int k = 0; k < ng; k++) {
    int g = perm[k], n = start[g + 1] - start[g];
    if (!n) continue;
    pt_rng_shuffle(r, by_group + start[g], n);
    if (at > cut[nb] && at - cut[nb] + n > bmax) cut[++nb] = at;
    memcpy(order + at, by_group + start[g], sizeof(int) * (size_t)n);
    at += n;
  }
  if (at > cut[nb]) cut[++nb] = at;
  free(perm), free(start), free(fill), free(by_group);
}

/* What one epoch needs besides its samples: the model, the options and the batch buffers (sized for
 * the largest batch of either phase). */
typedef struct {
  pp_tlp_model *m;
  const pp_tlp_dataset *ds;
  const pp_tlp_train_opts *o;
  const bool *keep;
  int n_out, np, n_params;
  float *batch_x, *scores, *dscores, *lab, *work, *sample_w, *head_w; /* lab, has: n_out x batch */
  int *group;
  bool *has;
  pp_tlp_adam adam;
} trainer;

/* One pass over the samples idx[0..n) (x: their normalized features, in that order), batches of at
 * most bmax in the order rng draws; adds the loss to *total. target_waits: the target head's labels
 * do not train yet (MTL-TLP's warm start). */
static int train_epoch(trainer *tr, const int *idx, int n, const float *x, int bmax, int *order, int *cut,
                       pt_rng *rng, bool target_waits, double *total, pt_diag *d) {
  const pp_tlp_train_opts *o = tr->o;
  const pp_tlp_dataset *ds = tr->ds;
  size_t per = (size_t)ds->seq_len * ds->emb;
  float *w = pp_tlp_model_params(tr->m), *g = pp_tlp_model_grads(tr->m);
  if (o->task_batches) group_order(ds, idx, n, order, bmax, cut, rng);
  else pt_rng_shuffle(rng, order, n);
  for (int at = 0, nb = 0, b = 0; at < n; at += b, nb++) {
    b = o->task_batches ? cut[nb + 1] - cut[nb] : n - at < bmax ? n - at : bmax;
    for (int i = 0; i < b; i++) memcpy(tr->batch_x + per * i, x + per * order[at + i], sizeof(float) * per);
    if (pp_tlp_model_forward(tr->m, b, tr->batch_x, tr->scores) < 0)
      return pt_fail(d, PT_ERR_NOMEM, "TLP training: out of memory for a batch of %d", b);
    float *hw = tr->head_w; /* the other heads' losses scaled by aux_weight; the target's waits in a warm start */
    for (int out = 0; out < tr->n_out; out++) {
      hw[out] = o->target_platform >= 0 && out != o->target_platform ? (float)o->aux_weight : 1.0f;
      if (target_waits && out == o->target_platform) hw[out] = 0; /* its labels wait for the copy */
    }
    for (int i = 0; i < b; i++) {
      int si = idx[order[at + i]];
      tr->group[i] = ds->s[si].group;
      tr->sample_w[i] = o->group_weight ? o->group_weight[ds->s[si].group] : 1.0f;
      for (int out = 0; out < tr->n_out; out++) {
        tr->lab[(size_t)out * b + i] =
            o->label_power == 1 ? ds->s[si].label[out] : powf(ds->s[si].label[out], (float)o->label_power);
        tr->has[(size_t)out * b + i] = tr->keep[(size_t)si * tr->np + out];
      }
    }
    *total += pp_tlp_batch_loss(o->loss, &o->rank, b, tr->n_out, tr->scores, tr->lab, tr->has,
                                o->task_batches ? tr->group : NULL, hw, tr->sample_w, tr->dscores, tr->work);
    memset(g, 0, sizeof(float) * (size_t)tr->n_params);
    pp_tlp_model_backward(tr->m, tr->dscores);
    if (o->clip_norm > 0) { /* torch.nn.utils.clip_grad_norm_, as TLP's reference */
      double sq = 0;
      for (int k = 0; k < tr->n_params; k++) sq += (double)g[k] * g[k];
      double norm = sqrt(sq);
      if (norm > o->clip_norm)
        for (int k = 0; k < tr->n_params; k++) g[k] = (float)(g[k] * (o->clip_norm / (norm + 1e-6)));
    }
    pp_tlp_adam_step(&tr->adam, tr->n_params, w, g, o->lr);
  }
  return 0;
}

/* The largest batch an epoch over idx[0..n) makes: bmax, or with task batches its largest task; -1
 * out of memory. */
static int largest_batch(const pp_tlp_dataset *ds, const pp_tlp_train_opts *o, const int *idx, int n, int bmax) {
  int most = bmax;
  if (o->task_batches) { /* a task larger than a batch is a batch of its own */
    int *cnt = calloc((size_t)ds->n_groups + 1, sizeof(int));
    if (!cnt) return -1;
    for (int t = 0; t < n; t++)
      if (++cnt[ds->s[idx[t]].group] > most) most = cnt[ds->s[idx[t]].group];
    free(cnt);
  }
  return most;
}

pp_tlp_model *pp_tlp_train(pp_tlp_dataset *ds, pp_tlp_vocab *vocab, const pp_tlp_config *cin,
                           const pp_tlp_train_opts *o, pt_diag *d) {
  pp_tlp_config c = *cin;
  c.seq_len = ds->seq_len, c.emb = ds->emb;
  c.n_out = ds->n_platforms > 0 ? ds->n_platforms : 1;
  int np = ds->n_platforms;
  if (o->epochs < 1 || o->batch < 1 || !(o->lr > 0) || !(o->aux_weight >= 0) || !(o->clip_norm >= 0) ||
      o->thin_block < 0 || o->thin_spread < 0 || o->warm_epochs < 0 || o->warm_epochs >= o->epochs ||
      o->avg_epochs < 0 || o->avg_epochs > o->epochs || !(o->label_power > 0 && o->label_power < 1e3) ||
      o->rank.ndcg_k < 0 || !(o->rank.gain_scale > 0 && o->rank.gain_scale <= 64) || o->pretrain_epochs < 0)
    return pt_fail(d, PT_ERR_INVALID, "TLP training: epochs, batch, learning rate and label power must be "
                                      "positive, the auxiliary weight, clipping norm, thinning block and "
                                      "pre-training epochs not negative, the warm-up epochs fewer than the "
                                      "epochs, the averaged epochs 0 to the epochs, the NDCG cut-off not "
                                      "negative, the gain scale in (0, 64]"), NULL;
  bool warm = o->warm_epochs > 0 && o->target_platform >= 0 && o->target_platform < np && o->warm_from >= 0 &&
              o->warm_from < np && o->warm_from != o->target_platform;
  if (o->warm_epochs > 0 && !warm)
    return pt_fail(d, PT_ERR_INVALID, "TLP training: a warm start needs a target head and another head to copy"), NULL;
  /* Which labels train: all of them, except a fraction of the target platform's (MTL-TLP); the
   * pre-training samples apart, in their own epochs. */
  bool *keep = calloc((size_t)ds->n * np + 1, sizeof(bool));
  int *train = malloc(sizeof(int) * (size_t)(ds->n + 1)), *pre = malloc(sizeof(int) * (size_t)(ds->n + 1));
  pp_tlp_train_keep(ds, o, keep);
  int n_train = 0, n_pre = 0;
  for (int i = 0; i < ds->n; i++) {
    bool any = false;
    for (int p = 0; p < np; p++) any |= keep[(size_t)i * np + p];
    if (any && !ds->s[i].pretrain) train[n_train++] = i;
  }
  for (int i = 0; i < ds->n && o->pretrain_epochs > 0; i++) /* every label of a pre-training sample trains */
    if (ds->s[i].pretrain && !ds->s[i].test) pre[n_pre++] = i;
  for (int i = 0; i < ds->n; i++) /* has_rankable_task looks at the measured labels alone */
    if (ds->s[i].pretrain)
      for (int p = 0; p < np; p++) keep[(size_t)i * np + p] = false;
  trainer tr = {.ds = ds, .o = o, .keep = keep, .n_out = c.n_out, .np = np};
  pp_tlp_avg avg = {0};
  float *x = NULL, *xpre = NULL;
  int *order = NULL, *cut = NULL;
  bool ok = false;
  if (n_train == 0) {
    pt_fail(d, PT_ERR_INPUT, "TLP training: no training sample (the data is empty, every record failed, or the "
                             "split holds out every workload)");
    goto fail;
  }
  if (!has_rankable_task(ds, keep)) {
    pt_fail(d, PT_ERR_INPUT, "TLP training: no task has two schedules with different latencies, nothing to rank "
                             "(%d training samples)", n_train);
    goto fail;
  }
  for (int t = 0; t < n_pre; t++) /* back, for the pre-training epochs */
    for (int p = 0; p < np; p++) keep[(size_t)pre[t] * np + p] = ds->s[pre[t]].latency[p] > 0;
  tr.m = pp_tlp_model_new(&c, o->seed, d);
  if (!tr.m) goto fail;
  pp_tlp_model *m = tr.m;
  for (int p = 0; p < np; p++) pp_tlp_model_set_platform(m, p, ds->platforms[p]);
  /* Normalization from the training rows (padding excluded). */
  float *mean = pp_tlp_model_norm_mean(m), *sd = pp_tlp_model_norm_std(m);
  double *s1 = calloc((size_t)c.emb, sizeof(double)), *s2 = calloc((size_t)c.emb, sizeof(double));
  long rows = 0;
  for (int t = 0; t < n_train; t++) {
    const pp_tlp_sample *s = &ds->s[train[t]];
    for (int r = 0; r < s->n_rows; r++, rows++)
      for (int k = 0; k < c.emb; k++) {
        double v = s->x[r * c.emb + k];
        s1[k] += v, s2[k] += v * v;
      }
  }
  for (int k = 0; k < c.emb; k++) {
    double mu = rows ? s1[k] / rows : 0, var = rows ? s2[k] / rows - mu * mu : 0;
    mean[k] = (float)mu;
    sd[k] = var > 1e-12 ? (float)sqrt(var) : 1.0f;
  }
  free(s1), free(s2);
  for (int i = 0; i < vocab->n; i++) pp_tlp_vocab_id(pp_tlp_model_vocab(m), vocab->tokens[i], true);

  size_t per = (size_t)c.seq_len * c.emb;
  int bmax = o->batch < n_train ? o->batch : n_train, bpre = o->batch < n_pre ? o->batch : n_pre;
  int balloc = largest_batch(ds, o, train, n_train, bmax), bp = largest_batch(ds, o, pre, n_pre, bpre);
  if (balloc < 0 || bp < 0) {
    pt_fail(d, PT_ERR_NOMEM, "TLP training: out of memory for %d samples", n_train + n_pre);
    goto fail;
  }
  if (bp > balloc) balloc = bp;
  int n_most = n_train > n_pre ? n_train : n_pre;
  x = malloc(sizeof(float) * per * (size_t)n_train);
  xpre = malloc(sizeof(float) * per * (size_t)n_pre + 1);
  tr.batch_x = malloc(sizeof(float) * per * (size_t)balloc);
  tr.scores = malloc(sizeof(float) * (size_t)balloc * c.n_out);
  tr.dscores = malloc(sizeof(float) * (size_t)balloc * c.n_out);
  tr.lab = malloc(sizeof(float) * (size_t)balloc * c.n_out), tr.work = malloc(sizeof(float) * (size_t)balloc * 2);
  tr.sample_w = malloc(sizeof(float) * (size_t)balloc), tr.head_w = malloc(sizeof(float) * (size_t)c.n_out);
  tr.group = malloc(sizeof(int) * (size_t)balloc);
  tr.has = malloc(sizeof(bool) * (size_t)balloc * c.n_out);
  order = malloc(sizeof(int) * (size_t)n_most), cut = malloc(sizeof(int) * (size_t)(n_most + 2));
  tr.n_params = pp_tlp_model_n_params(m);
  if (!x || !xpre || !tr.batch_x || !tr.scores || !tr.dscores || !tr.lab || !tr.work || !tr.sample_w || !tr.head_w ||
      !tr.group || !tr.has || !order ||
      !cut || pp_tlp_adam_init(&tr.adam, tr.n_params) < 0 ||
      (o->avg_epochs > 0 && pp_tlp_avg_init(&avg, tr.n_params) < 0)) {
    pt_fail(d, PT_ERR_NOMEM, "TLP training: out of memory for %d samples", n_train + n_pre);
    goto fail;
  }
  for (int t = 0; t < n_train; t++) pp_tlp_model_normalize(m, ds->s[train[t]].x, ds->s[train[t]].n_rows, x + per * t);
  for (int t = 0; t < n_pre; t++) pp_tlp_model_normalize(m, ds->s[pre[t]].x, ds->s[pre[t]].n_rows, xpre + per * t);
  float *w = pp_tlp_model_params(m);
  if (n_pre > 0) { /* pre-training: its own batch order, so that the epochs after draw TLP's */
    pt_rng prng = {o->seed ^ 0x9E3779B97F4A7C15ull};
    for (int t = 0; t < n_pre; t++) order[t] = t;
    for (int epoch = 0; epoch < o->pretrain_epochs; epoch++) {
      double t0 = pt_now(), total = 0;
      if (train_epoch(&tr, pre, n_pre, xpre, bpre, order, cut, &prng, false, &total, d) < 0) goto fail;
      if (!isfinite(total)) {
        pt_fail(d, PT_ERR_RUNTIME, "TLP pre-training diverged at epoch %d (loss not finite: out of memory, or try a lower --lr)",
                epoch + 1);
        goto fail;
      }
      if (o->verbose) fprintf(stderr, "pre-training epoch %3d  loss %.5g  %.1f s\n", epoch + 1, total, pt_now() - t0);
    }
    pp_tlp_adam_free(&tr.adam); /* the measured labels start a fresh Adam, as fine-tuning a pre-trained net does */
    if (pp_tlp_adam_init(&tr.adam, tr.n_params) < 0) {
      pt_fail(d, PT_ERR_NOMEM, "TLP training: out of memory");
      goto fail;
    }
  }
  for (int t = 0; t < n_train; t++) order[t] = t;
  pt_rng rng = {o->seed};
  for (int epoch = 0; epoch < o->epochs; epoch++) {
    double t0 = pt_now(), total = 0;
    if (warm && epoch == o->warm_epochs) pp_tlp_model_copy_head(m, o->warm_from, o->target_platform);
    if (train_epoch(&tr, train, n_train, x, bmax, order, cut, &rng, warm && epoch < o->warm_epochs, &total, d) < 0)
      goto fail;
    if (!isfinite(total)) {
      pt_fail(d, PT_ERR_RUNTIME, "TLP training diverged at epoch %d (loss not finite: out of memory, or try a lower --lr)", epoch + 1);
      goto fail;
    }
    if (o->verbose) fprintf(stderr, "epoch %3d  loss %.5g  %.1f s\n", epoch + 1, total, pt_now() - t0);
    if (o->avg_epochs > 0 && epoch >= o->epochs - o->avg_epochs) pp_tlp_avg_add(&avg, w);
    if (o->epoch_end) o->epoch_end(o->epoch_ctx, epoch, w, tr.n_params);
  }
  pp_tlp_avg_mean(&avg, w);
  ok = true;
fail:
  free(order), free(cut);
  free(keep), free(train), free(pre), free(x), free(xpre), pp_tlp_adam_free(&tr.adam), pp_tlp_avg_free(&avg);
  free(tr.batch_x), free(tr.scores), free(tr.dscores), free(tr.lab), free(tr.work);
  free(tr.sample_w), free(tr.head_w), free(tr.group), free(tr.has);
  if (!ok) {
    pp_tlp_model_free(tr.m);
    return NULL;
  }
  return tr.m;
}

/* ---------------------------------------------------------------- evaluation */

char *pp_tlp_group_key(const pp_tlp_dataset *ds, int group) {
  const char *g = ds->groups[group], *at = ds->multi_platform ? NULL : strstr(g, " @ ");
  size_t n = at ? (size_t)(at - g) : strlen(g);
  char *k = malloc(n + 1);
  memcpy(k, g, n);
  k[n] = 0;
  return k;
}

int pp_tlp_evaluate(pp_tlp_model *m, const pp_tlp_dataset *ds, int platform, int out, bool test_only,
                    const double *group_weight, pp_tlp_metrics *r, pt_diag *d) {
  memset(r, 0, sizeof *r);
  if (platform < 0 || platform >= ds->n_platforms)
    return pt_fail(d, PT_ERR_INVALID, "evaluation: platform %d not in the data", platform);
  int *idx = malloc(sizeof(int) * (size_t)(ds->n + 1));
  int n = 0;
  for (int i = 0; i < ds->n; i++)
    if (ds->s[i].latency[platform] > 0 && !ds->s[i].pretrain && (!test_only || ds->s[i].test)) idx[n++] = i;
  const float **xs = malloc(sizeof(float *) * (size_t)(n + 1));
  int *rows = malloc(sizeof(int) * (size_t)(n + 1));
  float *sc = malloc(sizeof(float) * (size_t)(n + 1));
  for (int i = 0; i < n; i++) xs[i] = ds->s[idx[i]].x, rows[i] = ds->s[idx[i]].n_rows;
  int rc = n ? pp_tlp_model_predict(m, n, xs, rows, out, sc) : 0;
  free(xs), free(rows);
  if (rc < 0) {
    free(idx), free(sc);
    return pt_fail(d, rc, "evaluation: prediction failed (%s)", pt_err_name(rc));
  }
  /* Per task: its samples' negated scores (lower = predicted faster) and latencies. */
  double *pred = malloc(sizeof(double) * (size_t)(n + 1)), *meas = malloc(sizeof(double) * (size_t)(n + 1));
  double w_all = 0, w_rank = 0;
  for (int gidx = 0; gidx < ds->n_groups; gidx++) {
    int k = 0;
    for (int i = 0; i < n; i++)
      if (ds->s[idx[i]].group == gidx) pred[k] = -sc[i], meas[k] = ds->s[idx[i]].latency[platform], k++;
    double w = group_weight ? group_weight[gidx] : 1;
    if (k == 0 || !(w > 0)) continue;
    r->n_tasks++;
    r->n_samples += k;
    r->top1 += w * pp_topk(k, pred, meas, 1);
    r->top5 += w * pp_topk(k, pred, meas, 5);
    w_all += w;
    double pa = pp_pairwise_accuracy(k, pred, meas), sp = pp_spearman(k, pred, meas);
    if (isfinite(pa) && isfinite(sp)) r->pairwise += w * pa, r->spearman += w * sp, w_rank += w;
  }
  if (w_all > 0) r->top1 /= w_all, r->top5 /= w_all;
  if (w_rank > 0) r->pairwise /= w_rank, r->spearman /= w_rank;
  else r->pairwise = r->spearman = NAN;
  free(idx), free(sc), free(pred), free(meas);
  if (!r->n_tasks) return pt_fail(d, PT_ERR_INPUT, "evaluation: no labeled sample%s on platform '%s'",
                                  test_only ? " in the test split" : "", ds->platforms[platform]);
  return 0;
}

static int cmp_float(const void *a, const void *b) {
  float x = *(const float *)a, y = *(const float *)b;
  return x < y ? -1 : x > y;
}

/* What a random ranking scores: E[best / min latency of k schedules drawn without replacement],
 * exactly: with latencies sorted ascending, the i-th is the minimum of the draw with
 * probability C(n-1-i, k-1) / C(n, k). Averaged over tasks like pp_tlp_evaluate. */
double pp_tlp_random_topk(const pp_tlp_dataset *ds, int platform, bool test_only, const double *group_weight, int k) {
  float *lat = malloc(sizeof(float) * (size_t)(ds->n + 1));
  double sum = 0, tasks = 0;
  for (int g = 0; g < ds->n_groups; g++) {
    double w = group_weight ? group_weight[g] : 1;
    if (!(w > 0)) continue;
    int n = 0;
    for (int i = 0; i < ds->n; i++)
      if (ds->s[i].group == g && ds->s[i].latency[platform] > 0 && !ds->s[i].pretrain && (!test_only || ds->s[i].test))
        lat[n++] = ds->s[i].latency[platform];
    if (!n) continue;
    qsort(lat, (size_t)n, sizeof(float), cmp_float);
    int kk = k < n ? k : n;
    double e = 0, p = (double)kk / n; /* P(min is the first) = C(n-1, k-1) / C(n, k) = k / n */
    for (int i = 0; i + kk <= n; i++) {
      e += p * lat[0] / lat[i];
      /* C(n-2-i, k-1) / C(n-1-i, k-1) = (n-1-i-(k-1)) / (n-1-i) */
      if (n - 1 - i > 0) p *= (double)(n - 1 - i - (kk - 1)) / (n - 1 - i);
    }
    sum += w * e, tasks += w;
  }
  free(lat);
  return tasks > 0 ? sum / tasks : NAN;
}
