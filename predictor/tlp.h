/* predictor/'s TLP and MTL-TLP cost models (Zhai et al., "TLP: A Deep Learning-based Cost
 * Model for Tensor Program Tuning", ASPLOS 2023): features taken straight from the schedule
 * steps, an attention network trained to rank, weights in safetensors. Module-internal public
 * header for now, to be merged into predictor.h. */
#ifndef PORTENT_PREDICTOR_TLP_H
#define PORTENT_PREDICTOR_TLP_H

#include <stdbool.h>

#include "compiler.h"

/* ---------------------------------------------------------------- safetensors */

/* One F32 tensor of a safetensors file (8-byte little-endian header length, JSON header with
 * dtype, shape, data_offsets, "__metadata__" string map, then the data). */
#define PP_ST_MAX_DIMS 4
typedef struct pp_st_tensor {
  char name[96];
  int ndim;
  int64_t shape[PP_ST_MAX_DIMS];
  const float *data; /* numel floats */
} pp_st_tensor;

typedef struct pp_st_meta {
  const char *key, *value;
} pp_st_meta;

/* Writes tensors and metadata atomically (temp + rename). */
int pp_st_write(const char *path, int n, const pp_st_tensor *t, int n_meta, const pp_st_meta *meta, pt_diag *d);

typedef struct pp_st_file pp_st_file;
/* Reads and validates a whole file: header length within the file, JSON header, every tensor
 * F32 with a shape matching its data_offsets inside the data region, no overlaps. Errors name
 * the file and the tensor. */
pp_st_file *pp_st_read(const char *path, pt_diag *d);
const pp_st_tensor *pp_st_find(const pp_st_file *f, const char *name); /* NULL if absent */
int pp_st_count(const pp_st_file *f);
const pp_st_tensor *pp_st_at(const pp_st_file *f, int i);
const char *pp_st_meta_get(const pp_st_file *f, const char *key); /* NULL if absent */
void pp_st_free(pp_st_file *f);
int64_t pp_st_numel(const pp_st_tensor *t);

/* ---------------------------------------------------------------- features */

#define PP_TLP_SEQ_LEN 25    /* TLP: cropping 54 x 40 to 25 x 22 improved accuracy */
#define PP_TLP_STEP_COLS 22  /* kind, stage and arguments: TLP's 22 */
#define PP_TLP_EXTENT_COLS 4 /* replayed loop extents after them (session 21) */
/* The default width: TLP's 22 and the extents (validation task-mean +0.048, SE 0.011, twelve seeds; session 21) */
#define PP_TLP_EMB (PP_TLP_STEP_COLS + PP_TLP_EXTENT_COLS)
#define PP_TLP_EMB_MIN (PC_STEP_COUNT + 1) /* the kind's one-hot and the stage id */
#define PP_TLP_EMB_MAX PP_TLP_EMB

/* Name arguments (pragma names, scopes) become token ids; 0 is "unknown". */
typedef struct pp_tlp_vocab {
  int n; /* tokens 1..n */
  char **tokens;
  int cap;
} pp_tlp_vocab;
/* id of a token, adding it when `grow` (0 when unknown and not growing). */
int pp_tlp_vocab_id(pp_tlp_vocab *v, const char *token, bool grow);
void pp_tlp_vocab_clear(pp_tlp_vocab *v);

/* The raw (unnormalized) features of a step sequence: seq_len x emb floats, row k = step k
 * (one-hot kind, then its numeric arguments as log2(1+|x|) with sign, its name arguments as
 * token ids), cropped to seq_len steps and min(emb, PP_TLP_STEP_COLS) columns, padded with
 * zero rows. When emb > PP_TLP_STEP_COLS and prog (the workload's program) is given, the steps
 * are replayed on it and the columns from PP_TLP_STEP_COLS hold the loop extents each step makes
 * or names (0 without prog, and from a step that does not replay on). Returns the number of
 * real rows. */
int pp_tlp_features(int n_steps, const pc_step *steps, const pc_program *prog, pp_tlp_vocab *v, bool grow,
                    int seq_len, int emb, float *out);
/* The program pp_tlp_features replays a workload's steps on at width emb: NULL when emb has no
 * extent columns, or when portent cannot build the workload (its extent columns stay 0). Caller frees. */
pc_program *pp_tlp_feature_program(int emb, const char *workload_key);

/* ---------------------------------------------------------------- datasets */

/* A platform name from a TVM target string: the -mcpu value (or the first word, e.g. "cuda"),
 * with "/Nc" appended when the target sets -num-cores. */
void pp_tlp_platform(const char *target, char *buf, size_t cap);

typedef struct pp_tlp_sample {
  int group;        /* workload key (+ target when single-platform) index */
  int n_rows;
  bool test;        /* held out by the split */
  bool pretrain;    /* loaded by pp_tlp_dataset_load_pretrain: trains only in the pre-training epochs */
  float *x;         /* seq_len x emb raw features */
  float *latency;   /* per platform, seconds (0: no label) */
  float *label;     /* per platform: min latency of its task / latency */
} pp_tlp_sample;

typedef struct pp_tlp_dataset {
  int seq_len, emb;
  bool multi_platform;  /* samples joined across platforms by (workload key, steps) */
  int n, cap;
  pp_tlp_sample *s;
  int n_groups;
  char **groups;
  int n_platforms;
  char **platforms;
  /* Lines skipped while loading, by reason. */
  int n_bad_lines, n_failed, n_nonpositive, n_duplicates;
  void *index; /* join table while loading */
} pp_tlp_dataset;

typedef struct pp_tlp_split {
  int n_test;
  char **test_keys; /* workload keys held out */
} pp_tlp_split;
/* {"test": ["workload key", ...]} (a "train" list, if present, is ignored: the rest trains). */
int pp_tlp_split_read(const char *path, pp_tlp_split *sp, pt_diag *d);
void pp_tlp_split_free(pp_tlp_split *sp);

void pp_tlp_dataset_init(pp_tlp_dataset *ds, bool multi_platform);
/* Adds a log's records: failed measurements, non-finite or non-positive latencies are counted
 * and skipped; the vocabulary grows on training rows only (test rows use it frozen). */
int pp_tlp_dataset_load(pp_tlp_dataset *ds, const char *path, const pp_tlp_split *sp, pp_tlp_vocab *v, bool grow,
                        pt_diag *d);
/* Adds a log of pre-training records (e.g. analytic labels of extra programs, `dataset collect
 * --analytic`) after the measured ones: each is a sample of its own task ("KEY @ pretrain TARGET",
 * never joined with a measured program nor ranked against one), flagged pretrain, and trains only
 * in pp_tlp_train_opts.pretrain_epochs; those of the split's held-out workloads are marked test and
 * never train. In a multi-platform dataset their labels go to `platform`'s head (the head that will
 * rank; NULL: the records' own platform). *n_added: the samples added (may be NULL). */
int pp_tlp_dataset_load_pretrain(pp_tlp_dataset *ds, const char *path, const pp_tlp_split *sp, pp_tlp_vocab *v,
                                 const char *platform, int *n_added, pt_diag *d);
/* Computes labels min_latency/latency within each task (group x platform). */
void pp_tlp_dataset_finish(pp_tlp_dataset *ds);
void pp_tlp_dataset_free(pp_tlp_dataset *ds);
int pp_tlp_platform_index(const pp_tlp_dataset *ds, const char *platform); /* -1 if absent */

/* ---------------------------------------------------------------- the network */

typedef struct pp_tlp_config {
  int seq_len, emb;
  int n_enc;
  int enc[6];       /* encoder widths; the last is the model width D (TLP: 64 128 256 256) */
  int heads;        /* self-attention heads (TLP: 8) */
  bool lstm;        /* TLP's alternative backbone: a one-layer LSTM instead of self-attention */
  int res_blocks;   /* TLP: 2 */
  int n_dec;
  int dec[6];       /* decoder widths before the final 1 (TLP: 256 128 64) */
  int n_out;        /* output heads: 1 for TLP, one per platform for MTL-TLP */
} pp_tlp_config;
void pp_tlp_config_default(pp_tlp_config *c);

typedef struct pp_tlp_model pp_tlp_model;
pp_tlp_model *pp_tlp_model_new(const pp_tlp_config *c, uint64_t seed, pt_diag *d);
void pp_tlp_model_free(pp_tlp_model *m);
const pp_tlp_config *pp_tlp_model_config(const pp_tlp_model *m);
int pp_tlp_model_n_params(const pp_tlp_model *m);
float *pp_tlp_model_params(pp_tlp_model *m);
float *pp_tlp_model_grads(pp_tlp_model *m);
/* Scores (higher = faster) of b samples of raw features for output head `out`. Normalizes
 * with the model's statistics. */
int pp_tlp_model_predict(pp_tlp_model *m, int b, const float *const *x, const int *n_rows, int out, float *scores);
/* Forward of normalized inputs (b x seq_len x emb), scores for every head (b x n_out), keeping
 * activations for pp_tlp_model_backward (which adds d loss/d params into the gradients). */
int pp_tlp_model_forward(pp_tlp_model *m, int b, const float *x, float *scores);
void pp_tlp_model_backward(pp_tlp_model *m, const float *dscores);
/* Raw features -> the network's input (padding rows stay zero). */
void pp_tlp_model_normalize(const pp_tlp_model *m, const float *raw, int n_rows, float *out);
/* The parameter tensors in order (cols 0: a bias vector), for the weights file. */
int pp_tlp_model_tensor_count(const pp_tlp_model *m);
const char *pp_tlp_model_tensor(pp_tlp_model *m, int i, int *rows, int *cols, float **data);
/* Normalization statistics (emb floats each) and vocabulary, stored with the weights. */
float *pp_tlp_model_norm_mean(pp_tlp_model *m);
float *pp_tlp_model_norm_std(pp_tlp_model *m);
pp_tlp_vocab *pp_tlp_model_vocab(pp_tlp_model *m);
/* Platform names of the output heads (MTL-TLP), n_out entries; set by training. */
void pp_tlp_model_set_platform(pp_tlp_model *m, int out, const char *name);
const char *pp_tlp_model_platform(const pp_tlp_model *m, int out);
/* Copies output head `from`'s decoder weights into head `to` (MTL-TLP's warm start of a head
 * with few labels from a head trained on many). */
void pp_tlp_model_copy_head(pp_tlp_model *m, int from, int to);
int pp_tlp_model_save(const pp_tlp_model *m, const char *path, pt_diag *d);
pp_tlp_model *pp_tlp_model_load(const char *path, pt_diag *d);

/* Layers, exposed for the gradient checks. Row-major matrices; W is out x in (PyTorch). */
void pp_nn_linear_fwd(int rows, int in, int out, const float *x, const float *w, const float *b, float *y);
/* dx (may be NULL) = dy W; dw += dy^T x; db += column sums of dy. */
void pp_nn_linear_bwd(int rows, int in, int out, const float *x, const float *w, const float *dy, float *dx, float *dw,
                      float *db);
/* Multi-head self-attention core on qkv (b*l x 3D rows: q, k, v): o (b*l x D) and the
 * probabilities p (b x heads x l x l) kept for the backward pass. */
void pp_nn_attention_fwd(int b, int l, int dim, int heads, const float *qkv, float *p, float *o);
void pp_nn_attention_bwd(int b, int l, int dim, int heads, const float *qkv, const float *p, const float *dout,
                         float *dqkv);

/* The OpenBLAS kernel set in use ("Haswell", "SkylakeX", "Zen", ...). */
const char *pp_tlp_blas_core(void);
/* The threads OpenBLAS runs a product on (OPENBLAS_NUM_THREADS, else the cores). */
int pp_tlp_blas_threads(void);

/* One-layer LSTM (gates i, f, g, o as PyTorch): xg = x W_ih^T + b_ih for all b*l rows; keeps
 * the activated gates (b*l x 4D) and cells (b*l x D); h is the output (b*l x D). */
void pp_nn_lstm_fwd(int b, int l, int dim, const float *xg, const float *w_hh, const float *b_hh, float *gates,
                    float *cell, float *h);
/* dxg (b*l x 4D): d loss / d xg; dw_hh, db_hh accumulate. */
void pp_nn_lstm_bwd(int b, int l, int dim, const float *gates, const float *cell, const float *h, const float *w_hh,
                    const float *dh_out, float *dxg, float *dw_hh, float *db_hh);

/* ---------------------------------------------------------------- losses */

typedef enum { PP_LOSS_LAMBDARANK, PP_LOSS_MSE } pp_tlp_loss;
/* LambdaRank's weighting of a pair. TLP's reference is {0, 1}: |delta NDCG| over the whole list,
 * gain 2^label - 1. */
typedef struct pp_tlp_rank {
  int ndcg_k;        /* > 0: |delta NDCG@k|, positions from k on discount 0, so a pair counts only when
                        the swap moves an item into, out of or within the predicted top k; 0: whole list */
  double gain_scale; /* gain 2^(scale x label) - 1: above 1, steeper at the top (label 1 the best) */
} pp_tlp_rank;
/* Loss over n scores with labels (entries with has[i] false are ignored; has may be NULL),
 * its gradient written to grad (zero for ignored entries). LambdaRank is TLP's: NDCG-weighted
 * pairwise logistic loss summed over pairs with label_i > label_j, weighted as rank says (NULL:
 * TLP's). MSE is the mean squared error (rank unused). NaN (and a zero gradient) when out of memory. */
double pp_tlp_loss_eval(pp_tlp_loss kind, const pp_tlp_rank *rank, int n, const float *scores, const float *labels,
                        const bool *has, float *grad);
/* The loss of one training batch over its n_out platform heads (MTL-TLP: each sample's loss sums over
 * the platforms that label it). scores, dscores: b x n_out, sample-major (the network's); labels, has:
 * n_out x b, head-major (has false: that head has no label for the sample, ignored). group (NULL: one
 * list per head spanning the batch, TLP's mix): each sample's task, a task's samples contiguous, so
 * that each head ranks each task's samples it labels as a list of its own and no pair spans two tasks
 * (whole-task batches). head_weight[out] and sample_weight[i] (NULL: 1 each) scale the gradient. Returns
 * the sum over lists of head weight x the list's first sample's weight x the list's loss; dscores is
 * its gradient where a list's samples weigh the same (always with group: a task's weight is one).
 * work: 2 b floats of scratch. */
double pp_tlp_batch_loss(pp_tlp_loss kind, const pp_tlp_rank *rank, int b, int n_out, const float *scores,
                         const float *labels, const bool *has, const int *group, const float *head_weight,
                         const float *sample_weight, float *dscores, float *work);

/* ---------------------------------------------------------------- training and evaluation */

typedef struct pp_tlp_train_opts {
  int epochs;          /* TLP: 50 */
  int batch;           /* TLP: 1024 */
  double lr;           /* Adam, TLP: 7e-4 */
  pp_tlp_loss loss;
  uint64_t seed;
  int target_platform; /* MTL-TLP: head whose labels are thinned (-1: none) */
  double target_fraction; /* share of the target platform's labeled samples kept (1: all) */
  bool target_only;    /* train on the target platform's labels alone (the single-task baseline) */
  bool verbose;        /* a line per epoch on stderr */
  bool task_batches;   /* batches of whole tasks, each task its own LambdaRank list (no pair across
                          tasks); false: TLP's reference, a random mix whose lists span tasks */
  double aux_weight;   /* MTL-TLP: the other heads' losses scaled by this (1: TLP's plain sum) */
  double clip_norm;    /* gradients scaled to this global L2 norm when above it (TLP's reference:
                          0.5); 0: no clipping */
  const float *group_weight; /* n_groups entries: each sample's loss scaled by its task's weight, as
                                TLP's score weighs tasks (NULL: 1 each) */
  int thin_block;      /* how the target's share is drawn: 0, each label alone (a task may keep none);
                          B >= 1, per task, in blocks of B labels (stratified: every task keeps about
                          its share; B = 2 keeps pairs, so a kept task has something to rank) */
  int thin_spread;     /* B > 0: the target's share drawn instead as an exact count, round(fraction x its
                          training labels), dealt to the tasks B at a time in a random order (every
                          task keeps B before any keeps 2B); 0: off */
  int warm_epochs;     /* MTL-TLP: the first warm_epochs train every head but the target's, whose
                          decoder then starts as a copy of head warm_from's (0: off) */
  int warm_from;
  int avg_epochs;      /* > 0: the model returned holds the mean of the parameters at the end of each of
                          the last avg_epochs epochs (weight averaging, pp_tlp_avg); 0: the last iterate
                          (TLP's reference) */
  double label_power;  /* p: each training label min_latency/latency raised to p (1: TLP's; p > 1 sharpens
                          the gain of the near-best schedules apart) */
  pp_tlp_rank rank;    /* LambdaRank's truncation and gain ({0, 1}: TLP's) */
  int pretrain_epochs; /* > 0: first this many epochs on the pretrain samples alone (their own batch order,
                          seeded apart), then Adam restarts and `epochs` train on the others as without
                          them; normalization is the others' either way. 0: pretrain samples unused */
  /* Called after each epoch with the parameters as trained (before any averaging), e.g. to average
   * other windows of epochs from the same run; NULL: none. */
  void (*epoch_end)(void *ctx, int epoch, const float *params, int n_params);
  void *epoch_ctx;
} pp_tlp_train_opts;

/* Which labels train (keep: n samples x n_platforms): every training sample's labels, the target
 * platform's thinned to o->target_fraction as o->thin_spread or o->thin_block says (seeded by o->seed), and only the
 * target's with o->target_only. Returns the number of training samples with some label kept. */
int pp_tlp_train_keep(const pp_tlp_dataset *ds, const pp_tlp_train_opts *o, bool *keep);
void pp_tlp_train_opts_default(pp_tlp_train_opts *o);

/* Trains a new model on the dataset's training samples (normalization and vocabulary from
 * them; the vocabulary is moved into the model). Fails with a clear error when there is no
 * training sample or no task with two distinct latencies to rank. */
pp_tlp_model *pp_tlp_train(pp_tlp_dataset *ds, pp_tlp_vocab *vocab, const pp_tlp_config *c,
                           const pp_tlp_train_opts *o, pt_diag *d);

typedef struct pp_tlp_metrics {
  int n_tasks, n_samples;
  double top1, top5;       /* TLP's top-k, averaged over tasks */
  double pairwise, spearman; /* averaged over tasks with >= 2 distinct latencies */
} pp_tlp_metrics;
/* Ranks each task's samples (test ones when test_only) on platform `platform` with head `out`.
 * group_weight (n_groups entries, may be NULL for 1 each) weights the tasks' averages, as TLP
 * weights a task by how often it occurs in its networks. */
int pp_tlp_evaluate(pp_tlp_model *m, const pp_tlp_dataset *ds, int platform, int out, bool test_only,
                    const double *group_weight, pp_tlp_metrics *r, pt_diag *d);
/* The workload key of a group ("KEY @ TARGET" for single-platform data). Caller frees. */
char *pp_tlp_group_key(const pp_tlp_dataset *ds, int group);

/* The expected top-k of a random ranking on the same tasks (the baseline to beat). */
double pp_tlp_random_topk(const pp_tlp_dataset *ds, int platform, bool test_only, const double *group_weight, int k);

/* A running sum of parameter snapshots whose mean replaces the last iterate (stochastic weight
 * averaging: the parameters at the end of several epochs of a constant-rate run, averaged). */
typedef struct pp_tlp_avg {
  int n, count;
  double *sum;
} pp_tlp_avg;
int pp_tlp_avg_init(pp_tlp_avg *a, int n_params);
void pp_tlp_avg_add(pp_tlp_avg *a, const float *w);
/* w := the mean of the snapshots added (unchanged when none was). */
void pp_tlp_avg_mean(const pp_tlp_avg *a, float *w);
void pp_tlp_avg_free(pp_tlp_avg *a);

/* ---------------------------------------------------------------- fine-tuning */

/* Adam's moments and step count (torch.optim.Adam, beta 0.9 / 0.999). */
typedef struct pp_tlp_adam {
  long step;
  float *m, *v;
} pp_tlp_adam;
int pp_tlp_adam_init(pp_tlp_adam *a, int n_params);
/* One step on n parameters w with gradient g. */
void pp_tlp_adam_step(pp_tlp_adam *a, int n, float *w, const float *g, double lr);
void pp_tlp_adam_free(pp_tlp_adam *a);

typedef struct pp_tlp_finetune_opts {
  int epochs;     /* passes over the task's records per fine-tuning */
  int batch;      /* records per LambdaRank list and Adam step */
  double lr;
  bool head_only; /* only the ranked head's decoder and the residual blocks learn */
  uint64_t seed;
} pp_tlp_finetune_opts;
void pp_tlp_finetune_opts_default(pp_tlp_finetune_opts *o);

/* Fine-tunes the network on one task's n records: x holds normalized features (n x seq_len x
 * emb, pp_tlp_model_normalize), label each record's min latency / latency; the loss is
 * LambdaRank on head `out`, the optimizer Adam continuing from `adam`'s state. */
int pp_tlp_finetune(pp_tlp_model *m, int out, int n, const float *x, const float *label, const pp_tlp_finetune_opts *o,
                    pp_tlp_adam *adam, pt_rng *rng, pt_diag *d);

/* ---------------------------------------------------------------- the cost model */

/* The search's interface over a trained model file (head 0, or the head of `platform` when
 * not NULL). With `online` (not NULL) update() keeps the task's measured records and, before
 * the next prediction, fine-tunes the network on all of them (pp_tlp_finetune, continuing);
 * NULL keeps the offline model (no update). Free with pp_cost_model_free. */
pc_cost_model *pp_cost_model_tlp(const char *path, const char *platform, const pp_tlp_finetune_opts *online,
                                 pt_diag *d);

#endif
