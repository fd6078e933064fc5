/* What `portent bench learn` shares between its files: the records grouped into tasks with
 * their role (training, validation, test network), each model's scores per candidate, and
 * TLP's weighted top-k over them. */
#ifndef PORTENT_CLI_LEARN_BENCH_H
#define PORTENT_CLI_LEARN_BENCH_H

#include <stdio.h>

#include "compiler.h"
#include "tlp.h"

#define LB_MAX_AUX 4
#define LB_MAX_NETS 8
#define LB_MAX_MODELS 40
#define LB_MAX_FRACTIONS 4
#define LB_MAX_AVG_ROWS 4
#define LB_AUX_ALL 1000000 /* --aux-per-task all */
#define LB_AUX_PATH 512    /* an auxiliary label file's path */

enum { LB_TRAIN, LB_VAL, LB_TEST };
/* Training batches: whole tasks, LambdaRank within each (--task-batches), or TLP's random mix whose
 * lists span tasks (--mixed-batches); by default whole tasks for the TLP rows (single task: validation
 * task-mean +0.04 over TLP's mix, session 17) and the mix for MTL-TLP's (not measured with them). */
enum { LB_BATCHES_DEFAULT, LB_BATCHES_TASK, LB_BATCHES_MIXED };
/* --train-weights: how TLP's training weighs a task's loss */
enum { LB_TW_NONE, LB_TW_OCCURRENCES, LB_TW_TIME };

typedef struct lb_opts {
  const char *target_path; /* the analytic model's target file (the command defaults it to the shipped
                              zen5-epyc-2c.json) */
  int n_aux;
  const char *aux_paths[LB_MAX_AUX];
  int epochs, batch, width;
  int emb;             /* TLP's feature columns: PP_TLP_STEP_COLS, or more for the replayed loop extents */
  double lr, clip;     /* Adam's rate; gradient norm clipping (0: none) */
  double aux_weight;   /* MTL-TLP: the auxiliary heads' loss scaled by this */
  int batches;         /* LB_BATCHES_*: how TLP's and MTL-TLP's training batches are drawn */
  int avg_epochs;      /* TLP, MTL-TLP: the parameters averaged over the last K epochs (0: the last epoch's) */
  double label_power;  /* training labels (min latency / latency)^p (1: TLP's) */
  pp_tlp_rank rank;    /* LambdaRank's NDCG cut-off and gain scale ({0, 1}: TLP's) */
  const char *pretrain; /* the plain tlp row first trains pretrain_epochs on this file's records (labels of
                           extra programs of the training tasks) alone; NULL: none */
  int pretrain_epochs;
  int n_avg_rows;      /* extra rows per seed from the same training run, its parameters averaged over the
                          last avg_rows[i] epochs (1: the last epoch's), to compare windows paired by seed */
  int avg_rows[LB_MAX_AVG_ROWS];
  int n_fractions;     /* MTL-TLP's shares of the ranked platform's labels (0: 7%, 20%, 100%) */
  double fractions[LB_MAX_FRACTIONS];
  int n_seeds;         /* TLP models trained with seeds seed..seed+n-1; scored each and as an ensemble */
  int analytic_per_task, aux_per_task; /* aux_per_task: LB_AUX_ALL labels every schedule */
  bool aux_missing;    /* auxiliary labels only on the programs the other real platform did not measure */
  const char *aux_cache; /* a folder: each auxiliary platform's labels read from a file there when it
                            exists, else made and saved there (NULL: made in a temporary file) */
  int max_test_tasks, max_train_tasks; /* 0: all (--quick limits them) */
  double val_fraction;
  const char *val_networks; /* comma-separated training networks held out whole as validation (NULL:
                               val_fraction of the tasks) */
  const char *platform; /* the platform ranked (-mcpu value, as MTL-TLP names it); NULL: the most common
                           target string's */
  uint64_t seed;
  double throughput_s; /* how long the throughput loop runs */
  bool per_task;       /* print each test task's top-1 per model */
  const char *rows;    /* MTL-TLP: only the variants whose name contains this (NULL: all) */
  int train_weights;   /* LB_TW_*: TLP's loss per training task as the score weighs a test task */
  int thin_block;      /* MTL-TLP's share of the ranked platform drawn label by label (0) or per task
                          in blocks of this many labels */
  bool other_heads;    /* MTL-TLP with a second real platform: also rows scored by the other platform's
                          head and by both heads */
  bool aux_heads;      /* MTL-TLP with auxiliary platforms: also rows scored by the first auxiliary head
                          and by the ranked platform's head and it together */
  int thin_spread;     /* B > 0: MTL-TLP's share drawn as an exact count dealt to the tasks B at a time
                          (pp_tlp_train_opts.thin_spread) */
  int warm_epochs;     /* MTL-TLP: epochs before the ranked platform's head starts as a copy of the
                          other real platform's (0: trained together from the start) */
  bool quick, run_analytic, run_xgb, run_xgb_imp, run_tlp, run_mtl, run_transfer;
} lb_opts;
void lb_opts_default(lb_opts *o);
void lb_opts_quick(lb_opts *o);

typedef struct lb_cand {
  int n_steps;
  pc_step *steps;
  double latency; /* mean of the record's costs, seconds */
  double other_latency; /* the same program on the other platform (lb_data.other), seconds; 0: not
                           measured there */
} lb_cand;

typedef struct lb_task {
  char key[512];
  int role;
  int net_weight[LB_MAX_NETS]; /* occurrences in each test network */
  double weight;               /* summed over the test networks, or over the validation networks
                                  (--val-networks); 1 for the others */
  int n, cap;
  lb_cand *c;
  double *scores[LB_MAX_MODELS]; /* per model, n entries (NaN: not ranked); higher = faster */
} lb_task;

typedef struct lb_data {
  char target[256]; /* the records' (most common, or --platform's) target string: the platform ranked */
  char other[256];  /* the most common target string of another platform ("" when there is none): the
                       second real platform, whose measured latencies lb_cand.other_latency holds */
  int n_tasks;
  lb_task *t;
  int n_nets;
  char nets[LB_MAX_NETS][32];
  int n_records, n_failed, n_other_target;
  int n_unreadable; /* lines that are no record (JSON has no NaN: a NaN cost makes its line one) */
  int n_other_joined; /* candidates whose program was measured on the other platform too */
  int n_targets; /* distinct target strings in the records (real platforms) */
  int n_models;
  char model_names[LB_MAX_MODELS][48];
  double train_s[LB_MAX_MODELS]; /* -1: nothing trained */
} lb_data;

/* The tasks of comma-separated training networks (--val-networks), each once with its occurrences
 * summed over them; refuses test networks and unknown names. Returns the count (*out malloc'd). */
int lb_val_network_tasks(const char *list, pc_network_task **out, pt_diag *d);

/* Reads the records, keeps the successful ones of the ranked target (--platform's, or the most
 * common), groups them by task and gives each task its role; fails when there is no test-network
 * task or no training task. */
int lb_data_load(lb_data *data, int n_files, const char **files, const lb_opts *o, pt_diag *d);
void lb_data_free(lb_data *data);
/* Which target string is ranked (--platform's most common, or the most common of all) and which is
 * the other platform (the most common of a different platform), from the targets' record counts. */
int lb_pick_targets(lb_data *data, int n_targets, char (*targets)[256], const int *counts, const char *platform,
                    pt_diag *d);
/* Joins each candidate with the same program (workload key and steps) measured on data->other:
 * its latency into other_latency (the fastest when measured several times). */
int lb_join_other(lb_data *data, int n_files, const char **files, pt_diag *d);

/* The platform name of a target file's analytic labels: "<file name without extension>-analytic"
 * (MTL-TLP's auxiliary heads, dataset collect --analytic). */
void lb_analytic_platform(const char *target_path, char *out, size_t cap);

/* A new model row (scores NaN); returns its index or -1 when the table is full. */
int lb_add_model(lb_data *data, const char *name);

/* TLP's top-k over the tasks of `role`: sum w min_latency / sum w (best latency among the k
 * top-scored), candidates [0, limit) of each task (limit 0: all), weights of test network
 * `net` (-1: summed over them; validation tasks weigh their occurrences in the validation
 * networks, or 1 when validation is a share of tasks). model -1: a random ranking's
 * expectation (of the denominator). NaN when no task has two candidates. */
double lb_topk(const lb_data *data, int model, int role, int net, int k, int limit);

/* The same tasks' top-k (best / best of the model's k picks) averaged with every task weighing 1:
 * beside TLP's weighted score, which three 8-candidate BERT-base tasks decide half of on our data,
 * a figure that one pick moves by at most 1/(number of tasks). NaN when no task has two candidates. */
double lb_task_mean(const lb_data *data, int model, int role, int k);

/* A task's best measured latency, and the best latency among model m's k top-scored candidates
 * (m -1: a random ranking's expectation). */
double lb_task_best(const lb_task *t);
double lb_task_pick(const lb_task *t, int model, int k);

/* Trains and scores every asked model, then prints the tables. */
int lb_run(lb_data *data, const lb_opts *o, const char **files, int n_files, pt_diag *d);

#endif
