/* portent dataset remeasure: measures on this machine exactly the programs (workload + steps) of
 * another log, so two platforms carry labels for the same schedules (issue 15's two real CPU
 * platforms, and a same-machine rerun that shows how noisy single measurements are). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "commands.h"
#include "compiler.h"
#include "dataset_keys.h"
#include "measure_args.h"

static void remeasure_usage(FILE *f) {
  fprintf(f, "usage: portent dataset remeasure --from in.jsonl [--from ...] --log out.jsonl [--shard i/N]\n"
             "       [--limit N] [--failed] [--threads T] [--min-time SEC] [--timeout SEC] [--cpu-clock] [--target STR|T.json]\n\n"
             "Measures every distinct (workload, steps) of the --from logs again on this machine and\n"
             "appends one record each to --log, grouped by workload (one reference output per task).\n"
             "Records that failed on their own platform are left out unless --failed. Resumable: a\n"
             "program already in --log with this target string is not measured again. --shard i/N keeps\n"
             "tasks i, i+N, ... (0-based); --limit stops after N measurements. --cpu-clock: as in dataset\n"
             "collect (one-thread runs timed by the thread's CPU time).\n");
}

typedef struct {
  char *key;   /* workload key */
  char *steps; /* steps JSON */
  uint64_t h;
  int group;
} program_ref;

typedef struct {
  program_ref *v;
  int n, cap;
  char **groups; /* workload keys in order of first appearance */
  int n_groups, groups_cap;
  ds_hashset seen; /* programs measured here already or listed */
  bool with_failed;
  const char *target; /* when reading --log: only this target's records count */
} remeasure_set;

static int group_of(remeasure_set *m, const char *key) {
  for (int g = m->n_groups - 1; g >= 0; g--)
    if (strcmp(m->groups[g], key) == 0) return g;
  if (m->n_groups == m->groups_cap) {
    m->groups_cap = m->groups_cap ? 2 * m->groups_cap : 64;
    m->groups = realloc(m->groups, sizeof *m->groups * (size_t)m->groups_cap);
  }
  m->groups[m->n_groups] = strdup(key);
  return m->n_groups++;
}

/* --log first: what is already measured here goes into `seen`, so --from's copies are skipped. */
static int mark_done(const pc_record *r, int line, void *ctx) {
  (void)line;
  remeasure_set *m = ctx;
  if (strcmp(r->target, m->target) != 0) return 0;
  char *steps = pc_steps_to_json(r->n_steps, r->steps);
  if (!steps) return -1;
  ds_hashset_insert(&m->seen, ds_program_hash(r->workload_key, NULL, steps), NULL);
  free(steps);
  return 0;
}

static int add_program(const pc_record *r, int line, void *ctx) {
  (void)line;
  remeasure_set *m = ctx;
  if (r->error_code != PC_MEASURE_OK && !m->with_failed) return 0;
  char *steps = pc_steps_to_json(r->n_steps, r->steps);
  if (!steps) return -1;
  uint64_t h = ds_program_hash(r->workload_key, NULL, steps);
  if (!ds_hashset_insert(&m->seen, h, NULL)) {
    free(steps);
    return 0;
  }
  if (m->n == m->cap) {
    m->cap = m->cap ? 2 * m->cap : 256;
    m->v = realloc(m->v, sizeof *m->v * (size_t)m->cap);
  }
  m->v[m->n++] = (program_ref){strdup(r->workload_key), steps, h, group_of(m, r->workload_key)};
  return 0;
}

static int by_group(const void *a, const void *b) {
  const program_ref *x = a, *y = b;
  return x->group != y->group ? (x->group > y->group) - (x->group < y->group) : (x < y ? -1 : x > y);
}

/* Measures programs [from, to) of one task; returns measurements made, or -1 on a log error. */
static int remeasure_task(const program_ref *v, int from, int to, int budget, const pc_measure_opts *mo,
                          const char *target, const char *log, int *n_fail) {
  pt_diag d = {0};
  pc_program *p = pc_workload_build(v[from].key, &d);
  pc_reference *ref = p ? pc_reference_new(p, mo, &d) : NULL;
  if (!ref) {
    fprintf(stderr, "portent dataset remeasure: task %.80s: %s (its %d programs skipped)\n", v[from].key, d.msg,
            to - from);
    pc_program_free(p);
    *n_fail += to - from;
    return 0;
  }
  int done = 0;
  for (int i = from; i < to && done < budget; i++) {
    pc_step *steps = malloc(sizeof *steps * PC_MAX_STEPS);
    int n_steps = 0;
    pc_state *s = pc_state_new(p);
    pt_diag sd = {0};
    if (pc_steps_from_json(v[i].steps, &n_steps, steps, PC_MAX_STEPS, &sd) < 0 ||
        pc_state_apply_all(s, n_steps, steps, &sd) < 0) {
      fprintf(stderr, "portent dataset remeasure: task %.80s: a program's steps no longer apply: %s\n", v[i].key,
              sd.msg);
      (*n_fail)++;
      pc_state_free(s);
      free(steps);
      continue;
    }
    free(steps);
    pc_measure_result res;
    double t0 = pt_now();
    pc_measure(s, ref, mo, &res, &sd);
    pc_record r;
    pc_record_from_measure(&r, s, &res, pt_now() - t0);
    snprintf(r.target, sizeof r.target, "%s", target);
    pc_state_free(s);
    if (pc_record_append(log, &r, &sd) < 0) {
      fprintf(stderr, "portent dataset remeasure: %s\n", sd.msg);
      done = -1;
      break;
    }
    if (res.error != PC_MEASURE_OK) (*n_fail)++;
    done++;
  }
  pc_reference_free(ref);
  pc_program_free(p);
  return done;
}

int cmd_dataset_remeasure(int argc, char **argv) {
  const char *from[16], *log = NULL;
  int n_from = 0, limit = -1;
  remeasure_set m = {0};
  measure_args ma;
  measure_args_init(&ma);
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i];
    bool v = i + 1 < argc;
    int taken = measure_args_take(&ma, "dataset remeasure", argc, argv, &i);
    if (taken < 0) return EXIT_USAGE;
    if (taken) continue;
    if (strcmp(a, "--help") == 0) {
      remeasure_usage(stdout);
      return EXIT_OK;
    } else if (strcmp(a, "--from") == 0 && v && n_from < 16) from[n_from++] = argv[++i];
    else if (strcmp(a, "--log") == 0 && v) log = argv[++i];
    else if (strcmp(a, "--limit") == 0 && v) limit = atoi(argv[++i]);
    else if (strcmp(a, "--failed") == 0) m.with_failed = true;
    else {
      fprintf(stderr, "portent dataset remeasure: unexpected argument '%s'\n", a);
      remeasure_usage(stderr);
      return EXIT_USAGE;
    }
  }
  if (!n_from || !log || ma.mo.threads < 1 || ma.mo.timeout_s <= 0) {
    fprintf(stderr, "portent dataset remeasure: --from and --log are required\n");
    remeasure_usage(stderr);
    return EXIT_USAGE;
  }
  char host[256];
  if (measure_args_target(&ma, "dataset remeasure", host, sizeof host) < 0) return EXIT_USAGE;
  m.target = host;
  pt_diag d = {0};
  int n_done = 0;
  if (access(log, F_OK) == 0) {
    if (pc_record_read_file(log, mark_done, NULL, &m, NULL, &d) < 0) {
      fprintf(stderr, "portent dataset remeasure: %s\n", d.msg);
      return EXIT_FAILED;
    }
    n_done = (int)m.seen.n;
  }
  for (int f = 0; f < n_from; f++) {
    int bad = 0;
    if (pc_record_read_file(from[f], add_program, NULL, &m, &bad, &d) < 0) {
      fprintf(stderr, "portent dataset remeasure: %s\n", d.msg);
      return EXIT_USAGE;
    }
  }
  qsort(m.v, (size_t)m.n, sizeof *m.v, by_group);
  printf("%d programs of %d tasks to measure (%d already in %s for %s)\n", m.n, m.n_groups, n_done, log, host);
  int measured = 0, n_fail = 0, rc = EXIT_OK;
  for (int i = 0; i < m.n && (limit < 0 || measured < limit);) {
    int j = i;
    while (j < m.n && m.v[j].group == m.v[i].group) j++;
    if (m.v[i].group % ma.n_shards == ma.shard) {
      int got = remeasure_task(m.v, i, j, limit < 0 ? j - i : limit - measured, &ma.mo, host, log, &n_fail);
      if (got < 0) {
        rc = EXIT_FAILED;
        break;
      }
      measured += got;
      fprintf(stderr, "\rremeasure: %d measured", measured);
    }
    i = j;
  }
  fprintf(stderr, "\n");
  printf("measured %d programs (%d failed here) into %s\n", measured, n_fail, log);
  for (int i = 0; i < m.n; i++) free(m.v[i].key), free(m.v[i].steps);
  for (int g = 0; g < m.n_groups; g++) free(m.groups[g]);
  free(m.v);
  free(m.groups);
  ds_hashset_free(&m.seen);
  return rc;
}
