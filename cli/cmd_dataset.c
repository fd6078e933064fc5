/* portent dataset: build training data for the learned cost models. `collect` draws random
 * schedules of each workload (the tuner's sketches with random annotation), measures them in a
 * child process and appends TVM records; `merge` concatenates logs, dropping duplicates. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "commands.h"
#include "compiler.h"
#include "dataset_keys.h"
#include "measure_args.h"
#include "learn_bench.h"
#include "targets.h"
#include "tune_models.h"

static void collect_usage(FILE *f) {
  fprintf(f, "usage: portent dataset collect (--workloads a,b,...|'x:1,2;y:3,4'|@FILE|suite | --network NAME[,NAME...]|test|training|all)\n"
             "       --per-workload N --log data.jsonl [--seed S] [--shard i/N] [--threads T] [--min-time SEC]\n"
             "       [--timeout SEC] [--cpu-clock] [--target STR|T.json] [--max-gflop G] [--analytic T.json]\n"
             "       portent dataset merge -o out.jsonl [--combine] in1.jsonl [in2.jsonl ...]\n"
             "       portent dataset split --data records.jsonl [--test-fraction F] [--seed S] -o split.json\n"
             "       portent dataset remeasure --from in.jsonl --log out.jsonl [...]   (see --help)\n"
             "       portent dataset compare A.jsonl B.jsonl [--min-per-task N]\n\n"
             "collect: for each workload (suite names such as mm512, TVM keys, or name:p1,p2,...; 'suite' = the\n"
             "  whole benchmark suite) draw N random schedules from the tuner's sketches, measure each in a\n"
             "  child process (checked against the reference) and append one TVM record per schedule.\n"
             "  --network: the tasks of those networks (portent networks), each once however many networks\n"
             "  share it, smallest first; --max-gflop skips larger tasks. Resumable: a task's records already\n"
             "  in the log (same target) count, and only the rest of its N draws are measured.\n"
             "  --shard i/N keeps workloads i, i+N, i+2N, ... (0-based) so N machines split a list.\n"
             "  --target STR overrides the record's target string (default: this host's, with -mcpu); --target\n"
             "  T.json (a target file) keeps this host's string once the file is checked to describe this CPU.\n"
             "  --cpu-clock times one-thread runs by the thread's CPU time, as tune does (default: the wall\n"
             "  clock, which the saved datasets used): on a loaded machine, time slices that other\n"
             "  processes take are not charged to the kernel. Ignored with --threads > 1.\n"
             "  --analytic T.json labels each schedule with the analytic predictor on the target file instead\n"
             "  of measuring it (tens of ms a program): records of platform '<T>-analytic' (target string\n"
             "  'llvm -keys=cpu -mcpu=<T>-analytic'), cheap labels for pre-training (train tlp --pretrain).\n"
             "merge: writes every usable record of the inputs to -o (replacing it atomically), once per\n"
             "  (workload, target, steps); unreadable lines are reported with their line numbers. --combine\n"
             "  keeps every measurement of a program instead: the costs of its later records join the first\n"
             "  (a record's mean is then the mean of all), and a failure in any makes it failed.\n"
             "split: holds out a seeded share of the workloads for testing (portent train/eval --split), or\n"
             "  with --by-network the test networks' tasks (and 10%% of the rest for validation).\n"
             "remeasure: measures the programs of another log again here (another platform, or this one\n"
             "  twice); compare: how the latencies of two logs rank the same programs within each task.\n");
}

/* Splits a comma list (or "suite") into workload specs; returns the count. */
static int split_workloads(const char *list, char ***out) {
  int cap = 8, n = 0;
  char **v = malloc(sizeof *v * (size_t)cap);
  if (strcmp(list, "suite") == 0) {
    for (int i = 0; i < pc_suite_count(); i++) {
      if (n == cap) v = realloc(v, sizeof *v * (size_t)(cap *= 2));
      v[n++] = strdup(pc_suite_name(i));
    }
    *out = v;
    return n;
  }
  /* Parameterised specs hold commas ("matmul:64,64,64"), so such lists are ';'-separated;
   * '@FILE' reads one spec per line. */
  char *copy = NULL;
  if (list[0] == '@') {
    pt_diag d = {0};
    copy = pt_read_file(list + 1, NULL, &d);
    if (!copy) {
      fprintf(stderr, "portent dataset collect: %s\n", d.msg);
      free(v);
      return -1;
    }
  } else copy = strdup(list);
  const char *sep = strpbrk(copy, ":[;\n") ? ";\n" : ",";
  char *save = NULL;
  for (char *t = strtok_r(copy, sep, &save); t; t = strtok_r(NULL, sep, &save)) {
    while (*t == ' ') t++;
    if (!*t || *t == '#') continue;
    if (n == cap) v = realloc(v, sizeof *v * (size_t)(cap *= 2));
    v[n++] = strdup(t);
  }
  free(copy);
  *out = v;
  return n;
}

/* The analytic predictor's latency of one schedule as a record (1 / its score), or -1 when it
 * cannot predict it. */
static int analytic_record(pc_cost_model *analytic, const pc_program *p, pc_state *s, pc_record *r) {
  double score = 0, t0 = pt_now();
  pt_diag pd = {0};
  if (analytic->predict(analytic->self, p, 1, &s, &score, &pd) < 0 || !(score > 0) || !isfinite(score)) return -1;
  memset(r, 0, sizeof *r);
  snprintf(r->workload_key, sizeof r->workload_key, "%s", p->key);
  r->n_steps = s->n_steps;
  memcpy(r->steps, s->steps, sizeof(pc_step) * (size_t)s->n_steps);
  r->n_costs = 1, r->costs[0] = 1 / score;
  r->all_cost = pt_now() - t0;
  r->timestamp = (double)time(NULL);
  snprintf(r->version, sizeof r->version, "%s", PC_RECORD_VERSION);
  return 0;
}

/* Draws `per_workload` schedules of one workload and measures those past the first `skip` (already
 * in the log: the same seeded draws, so resuming measures exactly what one run would), or with
 * `analytic` labels them with its prediction. */
static int collect_one(const char *spec, int per_workload, int skip, pt_rng *rng, const pc_measure_opts *mo,
                       pc_cost_model *analytic, const char *target, const char *log, int *n_ok, int *n_fail) {
  pt_diag d = {0};
  pc_program *p = pc_workload_build(spec, &d);
  if (!p) {
    fprintf(stderr, "portent dataset collect: %s: %s\n", spec, d.msg);
    return -1;
  }
  pc_reference *ref = analytic ? NULL : pc_reference_new(p, mo, &d);
  pc_sketch_opts so;
  pc_sketch_opts_default(&so);
  so.num_cores = (int)sysconf(_SC_NPROCESSORS_ONLN); /* same sketches whatever --threads */
  pc_sketches *sk = ref || analytic ? pc_sketches_generate(p, &so, &d) : NULL;
  if (!sk || pc_sketches_count(sk) == 0) {
    fprintf(stderr, "portent dataset collect: %s: %s\n", spec, d.msg[0] ? d.msg : "no sketches");
    pc_reference_free(ref);
    pc_program_free(p);
    return -1;
  }
  int rc = 0;
  for (int k = 0; k < per_workload; k++) {
    pc_state *s = NULL;
    for (int attempt = 0; attempt < 50 && !s; attempt++) {
      pt_diag sd = {0};
      s = pc_sketch_sample(sk, (int)pt_rng_range(rng, pc_sketches_count(sk)), rng, &sd);
    }
    if (!s) break;
    if (k < skip) {
      pc_state_free(s);
      continue;
    }
    pc_measure_result res = {.error = PC_MEASURE_OK};
    pt_diag md = {0};
    double t0 = pt_now();
    pc_record r;
    if (analytic && analytic_record(analytic, p, s, &r) < 0) { /* not written: a resumed run draws it again */
      pc_state_free(s);
      (*n_fail)++;
      continue;
    }
    if (!analytic) {
      pc_measure(s, ref, mo, &res, &md);
      pc_record_from_measure(&r, s, &res, pt_now() - t0);
    }
    if (target) snprintf(r.target, sizeof r.target, "%s", target);
    pc_state_free(s);
    if (pc_record_append(log, &r, &md) < 0) {
      fprintf(stderr, "portent dataset collect: %s\n", md.msg);
      rc = -1;
      break;
    }
    if (res.error == PC_MEASURE_OK) (*n_ok)++;
    else (*n_fail)++;
    fprintf(stderr, "\rcollect %s: %d/%d", spec, k + 1, per_workload);
  }
  fprintf(stderr, "\n");
  pc_sketches_free(sk);
  pc_reference_free(ref);
  pc_program_free(p);
  return rc;
}


static int cmp_task_flops(const void *a, const void *b) {
  const pc_network_task *x = a, *y = b;
  return x->flops < y->flops ? -1 : x->flops > y->flops ? 1 : strcmp(x->key, y->key);
}

/* The networks' tasks as specs, smallest first (a short collection covers the most tasks);
 * tasks above max_gflop are left out and counted. */
static int network_specs(const char *list, double max_gflop, char ***out) {
  pt_diag d = {0};
  pc_network_task *t;
  int n = pc_networks_tasks(list, &t, &d);
  if (n < 0) {
    fprintf(stderr, "portent dataset collect: %s\n", d.msg);
    return -1;
  }
  qsort(t, (size_t)n, sizeof *t, cmp_task_flops);
  char **v = malloc(sizeof *v * (size_t)(n + 1));
  int kept = 0;
  for (int i = 0; i < n; i++)
    if (max_gflop <= 0 || t[i].flops * 1e-9 <= max_gflop) v[kept++] = strdup(t[i].key);
  if (kept < n) fprintf(stderr, "portent dataset collect: %d of %d tasks above %g GFLOP left out\n", n - kept, n, max_gflop);
  free(t);
  *out = v;
  return kept;
}

/* Records already in the log per workload (for the target collected), to resume: matched by the
 * workload key the records carry, which a suite name or a "name:p1,p2" spec is built into. */
typedef struct {
  char **keys;
  int n, *count;
  char target[256];
} resume_ctx;

static char *spec_key(const char *spec) {
  pt_diag d = {0};
  pc_program *p = pc_workload_build(spec, &d);
  char *key = strdup(p ? p->key : spec); /* unbuildable: collect_one says so */
  pc_program_free(p);
  return key;
}

static int count_existing(const pc_record *r, int line, void *ctx) {
  (void)line;
  resume_ctx *c = ctx;
  if (strcmp(r->target, c->target) != 0) return 0;
  for (int i = 0; i < c->n; i++)
    if (strcmp(c->keys[i], r->workload_key) == 0) {
      c->count[i]++;
      break;
    }
  return 0;
}

static int cmd_collect(int argc, char **argv) {
  const char *list = NULL, *log = NULL, *networks = NULL, *analytic_path = NULL;
  int per = 0;
  double max_gflop = 0;
  uint64_t seed = 1;
  measure_args ma;
  measure_args_init(&ma);
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i];
    bool v = i + 1 < argc;
    int taken = measure_args_take(&ma, "dataset collect", argc, argv, &i);
    if (taken < 0) return EXIT_USAGE;
    if (taken) continue;
    if (strcmp(a, "--help") == 0) {
      collect_usage(stdout);
      return EXIT_OK;
    } else if (strcmp(a, "--workloads") == 0 && v) list = argv[++i];
    else if (strcmp(a, "--network") == 0 && v) networks = argv[++i];
    else if (strcmp(a, "--max-gflop") == 0 && v) max_gflop = atof(argv[++i]);
    else if (strcmp(a, "--per-workload") == 0 && v) per = atoi(argv[++i]);
    else if (strcmp(a, "--log") == 0 && v) log = argv[++i];
    else if (strcmp(a, "--seed") == 0 && v) seed = strtoull(argv[++i], NULL, 10);
    else if (strcmp(a, "--analytic") == 0 && v) analytic_path = argv[++i];
    else {
      fprintf(stderr, "portent dataset collect: unexpected argument '%s'\n", a);
      collect_usage(stderr);
      return EXIT_USAGE;
    }
  }
  if (analytic_path && ma.target) {
    fprintf(stderr, "portent dataset collect: --analytic names the records' target itself (<file>-analytic); "
                    "drop --target\n");
    return EXIT_USAGE;
  }
  if (!list == !networks || !log || per < 1 || ma.mo.threads < 1 || ma.mo.timeout_s <= 0) {
    fprintf(stderr, "portent dataset collect: one of --workloads or --network, --log and --per-workload >= 1 are required\n");
    return EXIT_USAGE;
  }
  char **specs;
  int n = networks ? network_specs(networks, max_gflop, &specs) : split_workloads(list, &specs);
  if (n < 0) return EXIT_USAGE;
  resume_ctx rc_ctx = {NULL, n, calloc((size_t)n + 1, sizeof(int)), ""};
  pc_cost_model analytic = {0};
  ptg_target *tg = NULL;
  if (analytic_path) { /* the target file's predictor labels; its records name the platform after the file */
    pt_diag d = {0};
    char platform[160];
    tg = ptg_target_load(analytic_path, &d);
    if (!tg || tune_model_new("analytic", tg, 0, seed, &analytic, &d) < 0) {
      fprintf(stderr, "portent dataset collect: --analytic %s\n", d.msg);
      ptg_target_free(tg);
      for (int w = 0; w < n; w++) free(specs[w]);
      free(specs), free(rc_ctx.count);
      return EXIT_USAGE;
    }
    lb_analytic_platform(analytic_path, platform, sizeof platform);
    snprintf(rc_ctx.target, sizeof rc_ctx.target, "llvm -keys=cpu -mcpu=%s", platform);
  } else if (measure_args_target(&ma, "dataset collect", rc_ctx.target, sizeof rc_ctx.target) < 0) {
    for (int w = 0; w < n; w++) free(specs[w]);
    free(specs), free(rc_ctx.count);
    return EXIT_USAGE;
  }
  if (access(log, F_OK) == 0) {
    rc_ctx.keys = malloc(sizeof(char *) * (size_t)(n + 1));
    for (int w = 0; w < n; w++) rc_ctx.keys[w] = spec_key(specs[w]);
    pt_diag d = {0};
    int bad = 0;
    if (pc_record_read_file(log, count_existing, NULL, &rc_ctx, &bad, &d) < 0)
      fprintf(stderr, "portent dataset collect: %s (not resuming)\n", d.msg);
    for (int w = 0; w < n; w++) free(rc_ctx.keys[w]);
    free(rc_ctx.keys);
  }
  int n_ok = 0, n_fail = 0, failed = 0, done = 0;
  for (int w = 0; w < n; w++) {
    /* One stream per workload: (seed, index) for a list, (seed, key hash) for networks, so a
     * shard draws what the full run would and a task draws the same whichever networks ask. */
    uint64_t stream = networks ? ds_fnv(1469598103934665603ull, specs[w]) : (uint64_t)w;
    pt_rng rng = {seed * 0x9E3779B97F4A7C15ull + stream};
    if (w % ma.n_shards == ma.shard) {
      if (rc_ctx.count[w] >= per) done++;
      else if (collect_one(specs[w], per, rc_ctx.count[w], &rng, &ma.mo, analytic_path ? &analytic : NULL,
                           rc_ctx.target, log, &n_ok, &n_fail) < 0)
        failed++;
    }
    free(specs[w]);
  }
  free(specs);
  free(rc_ctx.count);
  if (analytic_path) analytic.free(analytic.self), ptg_target_free(tg);
  if (done) printf("%d workloads already had %d records in %s\n", done, per, log);
  if (analytic_path)
    printf("labelled %d records with the analytic predictor on %s into %s (%d schedules it could not predict)\n", n_ok,
           analytic_path, log, n_fail);
  else printf("collected %d records (%d ran correctly, %d failed) into %s\n", n_ok + n_fail, n_ok, n_fail, log);
  return failed ? EXIT_FAILED : EXIT_OK;
}

/* ---------------------------------------------------------------- merge */

/* Records seen, by a 64-bit FNV-1a hash of (workload key, target, steps): a log of millions of
 * lines dedupes in memory without keeping the lines (a collision is ~1e-8 likely at 1e6). */
typedef struct {
  char *line;     /* the first record of the program, formatted */
  int n_costs;    /* every measurement's costs, for --combine */
  double costs[16];
  int error_code; /* the first failure, if any measurement failed */
} merge_entry;

typedef struct {
  ds_hashset seen; /* per program: index into e (--combine) */
  char *text; /* the merged log, written at once (atomically) at the end */
  size_t len, text_cap;
  int written, dup;
  bool combine;
  merge_entry *e;
  int n_e, e_cap;
} merge_ctx;

static void text_append(merge_ctx *m, const char *line) {
  size_t n = strlen(line);
  if (m->len + n + 2 > m->text_cap) {
    m->text_cap = 2 * (m->len + n + 2) + 4096;
    m->text = realloc(m->text, m->text_cap);
  }
  memcpy(m->text + m->len, line, n);
  m->len += n;
  m->text[m->len++] = '\n';
  m->written++;
}

/* --combine: a program measured again adds its costs (up to a record's 16) to the first record;
 * a failure in any measurement makes the program failed. */
static void entry_add(merge_entry *e, const pc_record *r) {
  if (r->error_code != 0 && e->error_code == 0) e->error_code = r->error_code;
  for (int i = 0; i < r->n_costs && e->n_costs < 16; i++) e->costs[e->n_costs++] = r->costs[i];
}

/* The combined records, in first-seen order. */
static void combine_flush(merge_ctx *m) {
  for (int i = 0; i < m->n_e; i++) {
    merge_entry *e = &m->e[i];
    pc_record r;
    pt_diag d = {0};
    char *text = NULL;
    if (pc_record_parse(e->line, &r, &d) == 0) {
      r.error_code = e->error_code;
      r.n_costs = e->n_costs;
      memcpy(r.costs, e->costs, sizeof r.costs);
      text = pc_record_format(&r);
    }
    text_append(m, text ? text : e->line);
    free(text);
    free(e->line);
  }
}

static int merge_record(const pc_record *r, int line, void *ctx) {
  (void)line;
  merge_ctx *m = ctx;
  char *steps = pc_steps_to_json(r->n_steps, r->steps);
  uint64_t h = ds_program_hash(r->workload_key, r->target, steps);
  free(steps);
  int *entry;
  if (!ds_hashset_insert(&m->seen, h, &entry)) {
    m->dup++;
    if (m->combine) entry_add(&m->e[*entry], r);
    return 0;
  }
  char *text = pc_record_format(r);
  if (!text) return 0; /* what a record cannot hold (the reader accepted it): nothing to copy */
  if (!m->combine) {
    text_append(m, text);
    free(text);
    return 0;
  }
  if (m->n_e == m->e_cap) {
    m->e_cap = m->e_cap ? 2 * m->e_cap : 1024;
    m->e = realloc(m->e, sizeof *m->e * (size_t)m->e_cap);
  }
  m->e[m->n_e] = (merge_entry){text, 0, {0}, 0};
  entry_add(&m->e[m->n_e], r);
  *entry = m->n_e++;
  return 0;
}

static int cmd_merge(int argc, char **argv) {
  const char *out = NULL;
  int first = 0;
  bool combine = false;
  for (int i = 1; i < argc; i++) {
    if (strcmp(argv[i], "--help") == 0) {
      collect_usage(stdout);
      return EXIT_OK;
    } else if (strcmp(argv[i], "-o") == 0 && i + 1 < argc) out = argv[++i];
    else if (strcmp(argv[i], "--combine") == 0) combine = true;
    else if (!first) first = i;
  }
  if (!out || !first) {
    collect_usage(stderr);
    return EXIT_USAGE;
  }
  pt_diag d = {0};
  merge_ctx m = {.combine = combine};
  int rc = EXIT_OK;
  for (int i = first; i < argc; i++) {
    if (strcmp(argv[i], "-o") == 0) {
      i++;
      continue;
    }
    if (strcmp(argv[i], "--combine") == 0) continue;
    int bad = 0;
    if (pc_record_read_file(argv[i], merge_record, NULL, &m, &bad, &d) < 0) {
      fprintf(stderr, "portent dataset merge: %s\n", d.msg);
      rc = EXIT_FAILED;
      break;
    }
  }
  if (combine) combine_flush(&m);
  if (rc == EXIT_OK && pt_write_file_atomic(out, m.text ? m.text : "", m.len, &d) < 0) {
    fprintf(stderr, "portent dataset merge: %s\n", d.msg);
    rc = EXIT_FAILED;
  }
  ds_hashset_free(&m.seen);
  free(m.e);
  free(m.text);
  if (rc != EXIT_OK) return rc;
  printf("merged %d records into %s (%d duplicates %s)\n", m.written, out, m.dup,
         combine ? "combined: their costs added to the first" : "dropped");
  return rc;
}

/* ---------------------------------------------------------------- split */

typedef struct {
  char **keys;
  int n, cap;
} key_set;

static int collect_key(const pc_record *r, int line, void *ctx) {
  (void)line;
  key_set *k = ctx;
  for (int i = 0; i < k->n; i++)
    if (strcmp(k->keys[i], r->workload_key) == 0) return 0;
  if (k->n == k->cap) k->keys = realloc(k->keys, sizeof(char *) * (size_t)(k->cap = k->cap ? 2 * k->cap : 64));
  k->keys[k->n++] = strdup(r->workload_key);
  return 0;
}

static int cmp_str(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

/* Appends `"name": [keys...]` to text as a JSON member. */
static void keys_json(pt_sbuf *b, const char *name, char **keys, int n) {
  pt_sbuf_printf(b, "\"%s\": [", name);
  for (int i = 0; i < n; i++) {
    pt_sbuf_printf(b, "%s\n  \"", i ? "," : "");
    for (const char *c = keys[i]; *c; c++) pt_sbuf_printf(b, *c == '"' || *c == '\\' ? "\\%c" : "%c", *c);
    pt_sbuf_printf(b, "\"");
  }
  pt_sbuf_printf(b, "\n]");
}

static void shuffle_keys(char **keys, int n, uint64_t seed) {
  qsort(keys, (size_t)n, sizeof(char *), cmp_str);
  pt_rng rng = {seed};
  for (int i = n - 1; i > 0; i--) {
    int j = (int)pt_rng_range(&rng, i + 1);
    char *t = keys[i];
    keys[i] = keys[j], keys[j] = t;
  }
}

/* TLP's split: the test networks' tasks are the test set; a seeded share of the other tasks
 * (validation_fraction) is the validation set, or every task of the training networks
 * val_networks names; the rest trains. */
static int split_by_network(key_set *k, double validation_fraction, const char *val_networks, uint64_t seed,
                            const char *out, pt_diag *d) {
  pc_network_task *t;
  int nt = pc_networks_tasks("test", &t, d);
  if (nt < 0) return -1;
  char **test = malloc(sizeof(char *) * (size_t)(k->n + 1)), **rest = malloc(sizeof(char *) * (size_t)(k->n + 1));
  int n_test = 0, n_rest = 0;
  for (int i = 0; i < k->n; i++) {
    bool is_test = false;
    for (int j = 0; j < nt && !is_test; j++) is_test = strcmp(t[j].key, k->keys[i]) == 0;
    if (is_test) test[n_test++] = k->keys[i];
    else rest[n_rest++] = k->keys[i];
  }
  free(t);
  int n_val = 0;
  if (val_networks) { /* the validation networks' tasks first, the rest after them */
    pc_network_task *vt;
    int nv = lb_val_network_tasks(val_networks, &vt, d);
    if (nv < 0) {
      free(test), free(rest);
      return nv;
    }
    qsort(rest, (size_t)n_rest, sizeof(char *), cmp_str);
    for (int i = 0; i < n_rest; i++) {
      bool is_val = false;
      for (int j = 0; j < nv && !is_val; j++) is_val = strcmp(vt[j].key, rest[i]) == 0;
      if (is_val) {
        char *x = rest[i];
        memmove(rest + n_val + 1, rest + n_val, sizeof(char *) * (size_t)(i - n_val));
        rest[n_val++] = x;
      }
    }
    free(vt);
    if (!n_val) {
      free(test), free(rest);
      return pt_fail(d, PT_ERR_INPUT, "--val-networks %s: none of their tasks is in the data", val_networks);
    }
  } else {
    shuffle_keys(rest, n_rest, seed);
    n_val = (int)(validation_fraction * n_rest + 0.5);
    if (n_val >= n_rest) n_val = n_rest - 1;
    if (n_val < 0) n_val = 0;
  }
  qsort(test, (size_t)n_test, sizeof(char *), cmp_str);
  size_t cap = 256;
  for (int i = 0; i < k->n; i++) cap += 2 * strlen(k->keys[i]) + 8;
  pt_sbuf b = {malloc(cap), cap, 0};
  pt_sbuf_printf(&b, "{");
  keys_json(&b, "test", test, n_test);
  pt_sbuf_printf(&b, ",\n");
  keys_json(&b, "validation", rest, n_val);
  pt_sbuf_printf(&b, "}\n");
  int rc = 0;
  if (!n_test || n_rest < 1) rc = pt_fail(d, PT_ERR_INPUT, "the data has %d test-network tasks and %d others: need both", n_test, n_rest);
  else if (n_val >= n_rest) rc = pt_fail(d, PT_ERR_INPUT, "--val-networks %s leave no training task", val_networks);
  else rc = pt_write_file_atomic(out, b.buf, b.len, d);
  if (rc == 0)
    printf("test networks' tasks: %d held out; validation: %d; training: %d (of %d workloads) in %s\n", n_test, n_val,
           n_rest - n_val, k->n, out);
  free(b.buf);
  free(test);
  free(rest);
  return rc;
}

/* Holds out a seeded random share of the workloads (TLP splits by task, never by schedule). */
static int cmd_split(int argc, char **argv) {
  const char *out = NULL;
  bool by_network = false;
  const char *val_networks = NULL;
  double frac = 0.2, val_frac = 0.1;
  uint64_t seed = 1;
  key_set k = {0};
  pt_diag d = {0};
  int rc = EXIT_OK;
  for (int i = 1; i < argc && rc == EXIT_OK; i++) {
    bool v = i + 1 < argc;
    if (strcmp(argv[i], "--help") == 0) {
      printf("usage: portent dataset split --data records.jsonl [--data ...] [--test-fraction F] [--seed S] -o split.json\n"
             "       portent dataset split --data records.jsonl --by-network [--validation-fraction V | --val-networks LIST]\n"
             "                                 [--seed S] -o split.json\n"
             "Writes {\"test\": [workload keys]}: a seeded share F (default 0.2) of the workloads, at least one.\n"
             "--by-network: the test networks' tasks (portent networks) are the test set, and a seeded share V\n"
             "(default 0.1) of the other workloads goes to {\"validation\": [...]}, or with --val-networks every\n"
             "task of those training networks (e.g. resnet34,mobilenet_v1,bert_medium), as bench learn holds out.\n");
      return EXIT_OK;
    } else if (strcmp(argv[i], "--data") == 0 && v) {
      if (pc_record_read_file(argv[++i], collect_key, NULL, &k, NULL, &d) < 0) {
        fprintf(stderr, "portent dataset split: %s\n", d.msg);
        rc = EXIT_USAGE;
      }
    } else if (strcmp(argv[i], "--test-fraction") == 0 && v) frac = atof(argv[++i]);
    else if (strcmp(argv[i], "--by-network") == 0) by_network = true;
    else if (strcmp(argv[i], "--validation-fraction") == 0 && v) val_frac = atof(argv[++i]);
    else if (strcmp(argv[i], "--val-networks") == 0 && v) val_networks = argv[++i];
    else if (strcmp(argv[i], "--seed") == 0 && v) seed = strtoull(argv[++i], NULL, 10);
    else if (strcmp(argv[i], "-o") == 0 && v) out = argv[++i];
    else {
      fprintf(stderr, "portent dataset split: unexpected argument '%s'\n", argv[i]);
      rc = EXIT_USAGE;
    }
  }
  if (rc == EXIT_OK && (!out || k.n < 2 || !(frac > 0 && frac < 1))) {
    fprintf(stderr, "portent dataset split: needs -o, --data with at least two workloads (has %d), 0 < F < 1\n", k.n);
    rc = EXIT_USAGE;
  }
  if (rc == EXIT_OK && by_network) {
    if (!(val_frac >= 0 && val_frac < 1)) {
      fprintf(stderr, "portent dataset split: --validation-fraction wants 0 <= V < 1\n");
      rc = EXIT_USAGE;
    } else if (split_by_network(&k, val_frac, val_networks, seed, out, &d) < 0) {
      fprintf(stderr, "portent dataset split: %s\n", d.msg);
      rc = d.err == PT_ERR_IO ? EXIT_FAILED : EXIT_USAGE;
    }
  } else if (rc == EXIT_OK) {
    shuffle_keys(k.keys, k.n, seed);
    int n_test = (int)(frac * k.n + 0.5);
    n_test = n_test < 1 ? 1 : n_test >= k.n ? k.n - 1 : n_test;
    size_t cap = 64;
    for (int i = 0; i < n_test; i++) cap += 2 * strlen(k.keys[i]) + 8;
    char *text = malloc(cap);
    size_t len = (size_t)snprintf(text, cap, "{\"test\": [");
    for (int i = 0; i < n_test; i++) {
      len += (size_t)snprintf(text + len, cap - len, "%s\n  \"", i ? "," : "");
      for (const char *c = k.keys[i]; *c; c++) {
        if (*c == '"' || *c == '\\') text[len++] = '\\';
        text[len++] = *c;
      }
      text[len++] = '"';
    }
    len += (size_t)snprintf(text + len, cap - len, "\n]}\n");
    if (pt_write_file_atomic(out, text, len, &d) < 0) {
      fprintf(stderr, "portent dataset split: %s\n", d.msg);
      rc = EXIT_FAILED;
    } else printf("held out %d of %d workloads in %s\n", n_test, k.n, out);
    free(text);
  }
  for (int i = 0; i < k.n; i++) free(k.keys[i]);
  free(k.keys);
  return rc;
}

int cmd_dataset(int argc, char **argv) {
  if (argc < 2 || strcmp(argv[1], "--help") == 0) {
    collect_usage(argc < 2 ? stderr : stdout);
    return argc < 2 ? EXIT_USAGE : EXIT_OK;
  }
  if (strcmp(argv[1], "collect") == 0) return cmd_collect(argc - 1, argv + 1);
  if (strcmp(argv[1], "merge") == 0) return cmd_merge(argc - 1, argv + 1);
  if (strcmp(argv[1], "split") == 0) return cmd_split(argc - 1, argv + 1);
  if (strcmp(argv[1], "remeasure") == 0) return cmd_dataset_remeasure(argc - 1, argv + 1);
  if (strcmp(argv[1], "compare") == 0) return cmd_dataset_compare(argc - 1, argv + 1);
  fprintf(stderr, "portent dataset: unknown subcommand '%s'\n", argv[1]);
  return EXIT_USAGE;
}
