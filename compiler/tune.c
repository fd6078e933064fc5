/* The tuner: rounds of evolutionary search ranked by a cost model, measurement of the
 * round's top-k not yet measured (epsilon-greedy: a few random samples among them), each
 * result appended to the log at once, then the model trained on the round (TVM
 * SketchPolicy::Search). Resuming reads a log back: its candidates count as measured, train
 * the model and seed the next population. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "sketch_internal.h"

#define FAILED_COST 1e10 /* TVM records failed candidates with this cost (MAX_FLOAT in measure.py) */

struct pc_tuner {
  const pc_program *p;
  pc_cost_model model;
  pc_tune_opts o;
  char log_path[1024], target[256];
  pc_sketches *sk;
  pc_reference *ref;
  pt_rng rng;
  sk_hashset measured;
  sk_pop good; /* measured correct candidates, score = -seconds */
  /* pc_tuner_label: candidates the second model labelled, and those it scored (score = its) */
  sk_hashset labelled;
  sk_pop labelled_good;
  pc_tune_stats st;
  int curve_cap;
  pc_step *best_steps;
  int best_n;
};

void pc_tune_opts_default(pc_tune_opts *o) {
  memset(o, 0, sizeof *o);
  pc_sketch_opts_default(&o->sketch);
  o->population = 2048;
  o->generations = 4;
  o->mutation_prob = 0.85;
  o->crossover_prob = 0.05;
  o->eps_greedy = 0.05;
  o->rerank_cold = 128;
  o->rerank_pool = 128; /* docs/validation.md, session 8: every seed better re-timed quietly */
  o->local_share = 0;
  o->local_parents = 4;
  o->measure_per_round = 64;
  o->trials = 1000;
  o->seed = 1;
  pc_measure_opts_default(&o->measure);
  o->measure.min_time_s = 0.1;
  o->measure.min_repeats = 3;
  o->measure.timeout_s = 10;
  /* A search shares its machine: timed by CPU time, a candidate is not charged for the slices
   * another process takes (one thread only; docs/tuning.md, "Measuring on a shared machine"). */
  o->measure.cpu_clock = true;
  o->target = "llvm -keys=cpu";
}

pc_tuner *pc_tuner_new(const pc_program *p, const pc_cost_model *model, const pc_tune_opts *o, pt_diag *d) {
  pc_tuner *t = calloc(1, sizeof *t);
  t->p = p;
  t->model = *model;
  t->o = *o;
  if (o->log_path) snprintf(t->log_path, sizeof t->log_path, "%s", o->log_path);
  snprintf(t->target, sizeof t->target, "%s", o->target ? o->target : "llvm -keys=cpu");
  t->o.log_path = t->log_path[0] ? t->log_path : NULL;
  t->o.target = t->target;
  if (t->o.population < 2) t->o.population = 2;
  if (t->o.measure_per_round < 1) t->o.measure_per_round = 1;
  t->rng.s = o->seed * 0x9e3779b97f4a7c15ull + 17;
  t->sk = pc_sketches_generate(p, &t->o.sketch, d);
  if (!t->sk) {
    free(t);
    return NULL;
  }
  t->best_steps = malloc(sizeof(pc_step) * PC_MAX_STEPS);
  return t;
}

void pc_tuner_free(pc_tuner *t) {
  if (!t) return;
  pc_sketches_free(t->sk);
  pc_reference_free(t->ref);
  sk_hashset_free(&t->measured);
  sk_pop_free(&t->good);
  sk_hashset_free(&t->labelled);
  sk_pop_free(&t->labelled_good);
  free(t->st.curve);
  free(t->st.curve_wall);
  free(t->best_steps);
  free(t);
}

const pc_tune_stats *pc_tuner_stats(const pc_tuner *t) { return &t->st; }

pc_state *pc_tuner_best(const pc_tuner *t) {
  if (t->best_n == 0 && t->st.best_s <= 0) return NULL;
  pt_diag d = {0};
  return sk_replay(t->p, t->best_n, t->best_steps, &d);
}

/* Counts one measured candidate in the statistics and the curve. */
static void note_result(pc_tuner *t, const pc_step *steps, int n, uint64_t hash, bool ok, double seconds) {
  sk_hashset_add(&t->measured, hash);
  t->st.n_measured++;
  if (!ok) t->st.n_failed++;
  if (ok) {
    sk_pop_push(&t->good, steps, n, hash);
    t->good.c[t->good.n - 1].score = -seconds;
    if (t->st.best_s <= 0 || seconds < t->st.best_s) {
      t->st.best_s = seconds;
      memcpy(t->best_steps, steps, sizeof(pc_step) * (size_t)n);
      t->best_n = n;
    }
  }
  if (t->st.n_curve == t->curve_cap) {
    t->curve_cap = t->curve_cap ? 2 * t->curve_cap : 256;
    t->st.curve = realloc(t->st.curve, sizeof(double) * (size_t)t->curve_cap);
    t->st.curve_wall = realloc(t->st.curve_wall, sizeof(double) * (size_t)t->curve_cap);
  }
  t->st.curve[t->st.n_curve] = t->st.best_s;
  t->st.curve_wall[t->st.n_curve] = t->st.t_total;
  t->st.n_curve++;
}

/* Trains the model on measured (states, results) pairs, in chunks of replayed states. */
static int train(pc_tuner *t, int n, pc_step *const *steps, const int *n_steps, const pc_measure_result *res, pt_diag *d) {
  if (!t->model.update || n == 0) return 0;
  enum { CHUNK = 32 };
  pc_state *states[CHUNK];
  pc_measure_result rs[CHUNK];
  int rc = 0;
  for (int base = 0; base < n && rc == 0; base += CHUNK) {
    int k = 0;
    for (int i = base; i < n && i < base + CHUNK; i++) {
      pt_diag ignore = {0};
      pc_state *s = sk_replay(t->p, n_steps[i], steps[i], &ignore);
      if (!s) continue;
      states[k] = s;
      rs[k++] = res[i];
    }
    double t0 = pt_now();
    if (k) rc = t->model.update(t->model.self, t->p, k, states, rs, d);
    t->st.t_model += pt_now() - t0;
    t->st.t_train += pt_now() - t0;
    for (int i = 0; i < k; i++) pc_state_free(states[i]);
  }
  return rc;
}

/* ---------------------------------------------------------------- resume */

typedef struct {
  pc_tuner *t;
  pc_record_bad_fn on_bad;
  void *ctx;
  int n_bad;
  int n, cap;
  pc_step **steps;
  int *n_steps;
  pc_measure_result *res;
} resume_ctx;

static void report_bad(resume_ctx *rc, int line, const char *reason) {
  rc->n_bad++;
  if (rc->on_bad) rc->on_bad(line, reason, rc->ctx);
  else fprintf(stderr, "%s:%d: %s (skipped)\n", rc->t->log_path[0] ? rc->t->log_path : "log", line, reason);
}

static void on_bad_line(int line, const char *reason, void *ctx) { report_bad(ctx, line, reason); }

static int on_record(const pc_record *r, int line, void *ctx) {
  resume_ctx *rc = ctx;
  pc_tuner *t = rc->t;
  if (strcmp(r->workload_key, t->p->key) != 0) return 0; /* another workload's record */
  if (t->target[0] && r->target[0] && strcmp(r->target, t->target) != 0) return 0;
  pt_diag d = {0};
  pc_state *s = sk_replay(t->p, r->n_steps, r->steps, &d);
  if (!s) {
    char msg[1100];
    snprintf(msg, sizeof msg, "steps do not apply to %s: %.1000s", t->p->name, d.msg);
    report_bad(rc, line, msg);
    return 0;
  }
  pc_state_free(s);
  uint64_t h = sk_steps_hash(r->n_steps, r->steps);
  if (sk_hashset_has(&t->measured, h)) return 0; /* measured twice (two tuners): count once */
  double sec = 0;
  bool ok = r->error_code == PC_MEASURE_OK && r->n_costs > 0;
  if (ok) {
    double c[16];
    memcpy(c, r->costs, sizeof(double) * (size_t)r->n_costs);
    for (int i = 1; i < r->n_costs; i++) /* median of the repeats */
      for (int j = i; j > 0 && c[j] < c[j - 1]; j--) {
        double x = c[j];
        c[j] = c[j - 1];
        c[j - 1] = x;
      }
    sec = r->n_costs % 2 ? c[r->n_costs / 2] : 0.5 * (c[r->n_costs / 2 - 1] + c[r->n_costs / 2]);
    ok = sec > 0 && sec < FAILED_COST;
  }
  note_result(t, r->steps, r->n_steps, h, ok, sec);
  t->st.n_resumed++;
  if (rc->n == rc->cap) {
    rc->cap = rc->cap ? 2 * rc->cap : 64;
    rc->steps = realloc(rc->steps, sizeof(pc_step *) * (size_t)rc->cap);
    rc->n_steps = realloc(rc->n_steps, sizeof(int) * (size_t)rc->cap);
    rc->res = realloc(rc->res, sizeof(pc_measure_result) * (size_t)rc->cap);
  }
  rc->steps[rc->n] = malloc(sizeof(pc_step) * (size_t)(r->n_steps ? r->n_steps : 1));
  memcpy(rc->steps[rc->n], r->steps, sizeof(pc_step) * (size_t)r->n_steps);
  rc->n_steps[rc->n] = r->n_steps;
  memset(&rc->res[rc->n], 0, sizeof(pc_measure_result));
  rc->res[rc->n].error = ok ? PC_MEASURE_OK : (pc_measure_error)(r->error_code ? r->error_code : PC_MEASURE_UNKNOWN);
  rc->res[rc->n].median_s = rc->res[rc->n].min_s = rc->res[rc->n].max_s = sec;
  rc->n++;
  return 0;
}

int pc_tuner_resume(pc_tuner *t, const char *log_path, pc_record_bad_fn on_bad, void *ctx, int *n_bad, pt_diag *d) {
  resume_ctx rc = {t, on_bad, ctx, 0, 0, 0, NULL, NULL, NULL};
  if (!t->log_path[0]) snprintf(t->log_path, sizeof t->log_path, "%s", log_path);
  int n = pc_record_read_file(log_path, on_record, on_bad_line, &rc, NULL, d);
  int err = n < 0 ? n : train(t, rc.n, rc.steps, rc.n_steps, rc.res, d);
  for (int i = 0; i < rc.n; i++) free(rc.steps[i]);
  free(rc.steps);
  free(rc.n_steps);
  free(rc.res);
  if (n_bad) *n_bad = rc.n_bad;
  return err < 0 ? err : t->st.n_resumed;
}

/* ---------------------------------------------------------------- rounds */

/* The initial population: the best of `seeds` (the measured candidates; Ansor: 20%), then
 * random samples not in `done`. */
static void init_population(pc_tuner *t, const sk_hashset *done, sk_pop *seeds, sk_pop *pop, sk_pop *random_out) {
  if (seeds->n > 1) qsort(seeds->c, (size_t)seeds->n, sizeof(sk_cand), sk_cand_cmp_score_desc);
  int n_seeds = (int)(0.2 * t->o.population);
  for (int i = 0; i < seeds->n && i < n_seeds; i++) sk_pop_push(pop, seeds->c[i].steps, seeds->c[i].n, seeds->c[i].hash);
  int before = pop->n;
  sk_sample_population(t->sk, t->o.population - pop->n, done, &t->rng, pop);
  for (int i = before; i < pop->n; i++) sk_pop_push(random_out, pop->c[i].steps, pop->c[i].n, pop->c[i].hash);
}

/* Searches and returns the candidates to measure (best by score, eps-greedy random share;
 * with `local`, the local search's share first), none in `done` (the measured candidates, or
 * the labelled ones when the second model's predictions stand in for measurements); `seeds`
 * start the population. */
static int pick_candidates(pc_tuner *t, int want, bool local, const sk_hashset *done, sk_pop *seeds, sk_pop *chosen,
                           pt_diag *d) {
  sk_pop pop = {0}, random = {0}, best = {0};
  double t0 = pt_now();
  init_population(t, done, seeds, &pop, &random);
  /* A learned first model scores at random before its first round and little better after
   * it: then the second model ranks a wider choice (cold start). */
  int n_known = t->st.n_measured + t->st.n_labelled;
  bool cold = t->o.rerank && t->o.rerank_cold > 2 * t->o.measure_per_round && n_known < 2 * t->o.measure_per_round;
  int keep = cold ? t->o.rerank_cold : 2 * t->o.measure_per_round;
  if (!cold && t->o.rerank && t->o.rerank_pool > keep) keep = t->o.rerank_pool;
  int rc = sk_evolve(t->p, &t->model, &t->o, done, &pop, keep, &t->rng, &best, &t->st.t_model,
                     &t->st.n_scored, d);
  /* Cascade: a slower model re-ranks the cheap model's best (DESIGN: cheap model, then the
   * analytical one on the top few). */
  if (rc == 0 && t->o.rerank && best.n > 1) {
    int top = !cold && t->o.rerank_top > 0 && t->o.rerank_top < best.n ? t->o.rerank_top : best.n;
    sk_pop head = {0};
    for (int i = 0; i < top; i++) sk_pop_push(&head, best.c[i].steps, best.c[i].n, best.c[i].hash);
    double t_before = t->st.t_model;
    rc = sk_predict(t->p, t->o.rerank, &head, &t->st.t_model, &t->st.n_reranked, d);
    t->st.t_rerank += t->st.t_model - t_before;
    if (rc == 0) {
      qsort(head.c, (size_t)head.n, sizeof(sk_cand), sk_cand_cmp_score_desc);
      for (int i = 0; i < top; i++) {
        free(best.c[i].steps);
        best.c[i] = head.c[i];
      }
      head.n = 0;
    }
    sk_pop_free(&head);
  }
  t->st.t_search += pt_now() - t0;
  /* Local search: the fastest measured candidates' neighbours take their share first. */
  int n_local = local ? (int)(t->o.local_share * want + 0.5) : 0;
  if (n_local > want) n_local = want;
  if (rc == 0 && n_local > 0 && t->good.n > 0) {
    sk_pop parents = {0}; /* t->good is sorted fastest first by init_population */
    for (int i = 0; i < t->good.n && i < (t->o.local_parents > 0 ? t->o.local_parents : 1); i++)
      sk_pop_push(&parents, t->good.c[i].steps, t->good.c[i].n, t->good.c[i].hash);
    const pc_cost_model *ranker = t->o.rerank ? t->o.rerank : &t->model;
    double t1 = pt_now();
    rc = sk_local_pick(t->p, ranker, &t->o, &parents, n_local, &t->measured, &t->rng, chosen, &t->st.t_model,
                       &t->st.n_scored, d);
    t->st.t_search += pt_now() - t1;
    sk_pop_free(&parents);
  }
  if (rc == 0) {
    sk_hashset taken = {0};
    for (int i = 0; i < chosen->n; i++) sk_hashset_add(&taken, chosen->c[i].hash);
    int n_good = (int)((1.0 - t->o.eps_greedy) * want);
    if (n_good < 1) n_good = 1;
    for (int i = 0; i < best.n && chosen->n < n_good; i++)
      if (!sk_hashset_has(done, best.c[i].hash) && sk_hashset_add(&taken, best.c[i].hash)) {
        sk_pop_push(chosen, best.c[i].steps, best.c[i].n, best.c[i].hash);
        chosen->c[chosen->n - 1].score = best.c[i].score;
      }
    for (int i = 0; i < random.n && chosen->n < want; i++) {
      int k = i + (int)pt_rng_range(&t->rng, random.n - i); /* a random one among the rest */
      sk_cand tmp = random.c[i];
      random.c[i] = random.c[k];
      random.c[k] = tmp;
      if (!sk_hashset_has(done, random.c[i].hash) && sk_hashset_add(&taken, random.c[i].hash))
        sk_pop_push(chosen, random.c[i].steps, random.c[i].n, random.c[i].hash);
    }
    for (int i = 0; i < best.n && chosen->n < want; i++)
      if (!sk_hashset_has(done, best.c[i].hash) && sk_hashset_add(&taken, best.c[i].hash))
        sk_pop_push(chosen, best.c[i].steps, best.c[i].n, best.c[i].hash);
    sk_hashset_free(&taken);
  }
  sk_pop_free(&pop);
  sk_pop_free(&random);
  sk_pop_free(&best);
  return rc;
}

static int append_record(pc_tuner *t, const sk_cand *c, const pc_measure_result *r, double wall, pt_diag *d) {
  if (!t->o.log_path) return 0;
  pc_record *rec = calloc(1, sizeof *rec);
  snprintf(rec->workload_key, sizeof rec->workload_key, "%s", t->p->key);
  snprintf(rec->target, sizeof rec->target, "%s", t->target);
  rec->n_steps = c->n;
  memcpy(rec->steps, c->steps, sizeof(pc_step) * (size_t)c->n);
  rec->n_costs = 1;
  rec->costs[0] = r->error == PC_MEASURE_OK ? r->median_s : FAILED_COST;
  rec->error_code = r->error;
  rec->all_cost = wall;
  rec->timestamp = (double)time(NULL);
  rec->has_hw_params = true;
  rec->hw_params[0] = t->o.sketch.num_cores;
  rec->hw_params[1] = 4 * t->o.sketch.vector_lanes; /* vector_unit_bytes */
  rec->hw_params[2] = 64;                           /* cache_line_bytes */
  int rc = pc_record_append(t->o.log_path, rec, d);
  free(rec);
  return rc;
}

int pc_tuner_round(pc_tuner *t, pt_diag *d) {
  double t_start = pt_now();
  int want = t->o.trials - t->st.n_measured;
  if (want > t->o.measure_per_round) want = t->o.measure_per_round;
  if (want <= 0) return 0;
  if (!t->ref) {
    t->ref = pc_reference_new(t->p, &t->o.measure, d);
    if (!t->ref) return d->err ? d->err : PT_ERR_RUNTIME;
  }
  sk_pop chosen = {0};
  int rc = pick_candidates(t, want, true, &t->measured, &t->good, &chosen, d);
  t->st.t_total += pt_now() - t_start;
  pc_step **steps = malloc(sizeof(pc_step *) * (size_t)(chosen.n + 1));
  int *n_steps = malloc(sizeof(int) * (size_t)(chosen.n + 1));
  pc_measure_result *res = calloc((size_t)chosen.n + 1, sizeof(pc_measure_result));
  int n_done = 0;
  for (int i = 0; rc == 0 && i < chosen.n; i++) {
    double t0 = pt_now();
    const sk_cand *c = &chosen.c[i];
    pt_diag md = {0};
    pc_state *s = sk_replay(t->p, c->n, c->steps, &md);
    pc_measure_result *r = &res[n_done];
    if (!s) {
      r->error = PC_MEASURE_INSTANTIATION_ERROR;
      snprintf(r->message, sizeof r->message, "%.250s", md.msg);
    } else if (pc_measure(s, t->ref, &t->o.measure, r, &md) != 0) {
      r->error = PC_MEASURE_UNKNOWN; /* the measurement itself failed (fork, memory) */
      snprintf(r->message, sizeof r->message, "%.250s", md.msg);
    }
    pc_state_free(s);
    double wall = pt_now() - t0;
    t->st.t_compile += r->compile_s;
    t->st.t_measure += wall - r->compile_s;
    t->st.t_total += wall;
    if ((rc = append_record(t, c, r, wall, d))) break;
    note_result(t, c->steps, c->n, c->hash, r->error == PC_MEASURE_OK, r->median_s);
    steps[n_done] = c->steps;
    n_steps[n_done++] = c->n;
    if (t->o.on_measured) t->o.on_measured(t->o.ctx, &t->st, r);
  }
  double t0 = pt_now();
  if (rc == 0) rc = train(t, n_done, steps, n_steps, res, d);
  t->st.t_total += pt_now() - t0;
  t->st.rounds++;
  free(steps);
  free(n_steps);
  free(res);
  sk_pop_free(&chosen);
  return rc ? rc : n_done;
}

int pc_tuner_run(pc_tuner *t, pt_diag *d) {
  int empty = 0;
  while (t->st.n_measured < t->o.trials) {
    int n = pc_tuner_round(t, d);
    if (n < 0) return n;
    /* Ansor retries a round that found nothing new once before giving up. */
    if (n == 0 && ++empty > 1) break;
    if (n > 0) empty = 0;
  }
  return 0;
}

/* ---------------------------------------------------------------- predicted labels */

/* Scores candidates with the second model and trains the first on the scores as if they were
 * measurements: a score is a throughput at some scale (analytic: 1 / predicted seconds), so
 * 1 / score stands for the median seconds (xgb normalizes by the workload's best, so the
 * scale drops out). Nothing is logged, counted as measured or drawn in the curve. */
static int label_and_train(pc_tuner *t, sk_pop *cands, pt_diag *d) {
  double t0 = pt_now(), t_before = t->st.t_model;
  int rc = sk_predict(t->p, t->o.rerank, cands, &t->st.t_model, &t->st.n_reranked, d);
  t->st.t_rerank += t->st.t_model - t_before;
  t->st.t_search += pt_now() - t0;
  if (rc || cands->n == 0) return rc;
  pc_step **steps = malloc(sizeof(pc_step *) * (size_t)cands->n);
  int *n_steps = malloc(sizeof(int) * (size_t)cands->n);
  pc_measure_result *res = calloc((size_t)cands->n, sizeof(pc_measure_result));
  for (int i = 0; i < cands->n; i++) {
    const sk_cand *c = &cands->c[i];
    bool ok = isfinite(c->score) && c->score > 0;
    res[i].error = ok ? PC_MEASURE_OK : PC_MEASURE_INSTANTIATION_ERROR; /* not scored: did not replay */
    res[i].median_s = res[i].min_s = res[i].max_s = ok ? 1 / c->score : 0;
    snprintf(res[i].message, sizeof res[i].message, "predicted by %s", t->o.rerank->name ? t->o.rerank->name : "a model");
    sk_hashset_add(&t->labelled, c->hash);
    if (ok) {
      sk_pop_push(&t->labelled_good, c->steps, c->n, c->hash);
      t->labelled_good.c[t->labelled_good.n - 1].score = c->score;
    }
    steps[i] = c->steps;
    n_steps[i] = c->n;
  }
  t->st.n_labelled += cands->n;
  rc = train(t, cands->n, steps, n_steps, res, d);
  free(steps);
  free(n_steps);
  free(res);
  return rc;
}

int pc_tuner_label(pc_tuner *t, int n_sample, int rounds, pt_diag *d) {
  if (!t->o.rerank || !t->model.update || t->st.n_measured > 0 || n_sample <= 0) return 0;
  double t0 = pt_now();
  sk_pop cands = {0};
  sk_sample_population(t->sk, n_sample, &t->labelled, &t->rng, &cands);
  int rc = label_and_train(t, &cands, d);
  for (int r = 0; rc == 0 && r < rounds; r++) {
    sk_pop_clear(&cands);
    rc = pick_candidates(t, t->o.measure_per_round, false, &t->labelled, &t->labelled_good, &cands, d);
    if (rc == 0 && cands.n == 0) break; /* the search found nothing new */
    if (rc == 0) rc = label_and_train(t, &cands, d);
    if (rc == 0) t->st.label_rounds++;
  }
  sk_pop_free(&cands);
  t->st.t_total += pt_now() - t0;
  return rc ? rc : t->st.n_labelled;
}

int pc_tuner_label_agreement(pc_tuner *t, int n, double *agreement, pt_diag *d) {
  *agreement = -1;
  if (!t->o.rerank || n < 2) return 0;
  pt_rng rng = {t->rng.s ^ 0x6a09e667f3bcc909ull}; /* the search's own draws stay as they were */
  sk_pop first = {0}, second = {0};
  sk_sample_population(t->sk, n, &t->labelled, &rng, &first);
  for (int i = 0; i < first.n; i++) sk_pop_push(&second, first.c[i].steps, first.c[i].n, first.c[i].hash);
  int rc = sk_predict(t->p, &t->model, &first, NULL, NULL, d);
  if (rc == 0) rc = sk_predict(t->p, t->o.rerank, &second, NULL, NULL, d);
  double agree = 0;
  long pairs = 0;
  for (int i = 0; rc == 0 && i < first.n; i++)
    for (int j = i + 1; j < first.n; j++) {
      double a = second.c[i].score, b = second.c[j].score, x = first.c[i].score, y = first.c[j].score;
      if (!isfinite(a) || !isfinite(b) || a == b) continue; /* the reference must order the pair */
      pairs++;
      agree += x == y ? 0.5 : (x > y) == (a > b);
    }
  if (rc == 0 && pairs > 0) *agreement = agree / (double)pairs;
  sk_pop_free(&first);
  sk_pop_free(&second);
  return rc;
}

pc_state *pc_tuner_predict_best(pc_tuner *t, pt_diag *d) {
  /* With predicted labels the search skips the labelled candidates (their second-model score
   * is known) and the best labelled one competes with its pick, as a tuning's best measured
   * candidate does with the next round's. */
  bool labels = t->st.n_labelled > 0;
  sk_pop chosen = {0};
  double t0 = pt_now();
  int rc = pick_candidates(t, 1, false, labels ? &t->labelled : &t->measured, labels ? &t->labelled_good : &t->good,
                           &chosen, d);
  if (rc == 0 && labels) {
    double t_before = t->st.t_model; /* the pick's score may be the first model's (no re-rank of one) */
    rc = sk_predict(t->p, t->o.rerank, &chosen, &t->st.t_model, &t->st.n_reranked, d);
    t->st.t_rerank += t->st.t_model - t_before;
    const sk_cand *top = NULL;
    for (int i = 0; i < t->labelled_good.n; i++)
      if (!top || t->labelled_good.c[i].score > top->score) top = &t->labelled_good.c[i];
    if (rc == 0 && top && (chosen.n == 0 || top->score > chosen.c[0].score)) {
      sk_pop_clear(&chosen);
      sk_pop_push(&chosen, top->steps, top->n, top->hash);
      chosen.c[0].score = top->score;
    }
  }
  t->st.t_total += pt_now() - t0;
  pc_state *s = NULL;
  if (rc == 0 && chosen.n > 0) {
    s = sk_replay(t->p, chosen.c[0].n, chosen.c[0].steps, d);
    t->st.predicted_score = chosen.c[0].score;
  }
  else if (rc == 0) pt_fail(d, PT_ERR_INVALID, "%s: the search found no candidate", t->p->name);
  sk_pop_free(&chosen);
  return s;
}
