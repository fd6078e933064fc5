/* Parsing of the workload and schedule options the compile/run/analyze commands share. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "schedule_args.h"

const char *const schedule_args_help =
    "  WORKLOAD              a suite name (mm512, conv_r50_3, ...), a TVM-style key\n"
    "                        '[\"matmul_add\", 1024, 1024, 1024, \"float32\"]' or name:p1,p2,...\n"
    "  --expr FILE           a user expression file instead of a WORKLOAD (docs/expressions.md)\n"
    "  --schedule FILE       steps from a records log (its fastest valid record for the\n"
    "                        workload) or a file holding a JSON steps array\n"
    "  --steps JSON          steps inline, in record encoding: '[[\"SP\", 2, 0, 512, [16], 1], ...]'\n"
    "  --naive               no schedule: the reference loop nest\n"
    "  (default: portent's hand-written schedule: tiles, vectorize, parallel)\n";

int schedule_args_take(schedule_args *a, int argc, char **argv, int *i) {
  const char *o = argv[*i];
  if (strcmp(o, "--naive") == 0) {
    a->naive = true;
    return 1;
  }
  const char **slot = strcmp(o, "--expr") == 0 ? &a->expr_file
                      : strcmp(o, "--schedule") == 0 ? &a->schedule
                      : strcmp(o, "--steps") == 0 ? &a->steps : NULL;
  if (!slot) return 0;
  if (*i + 1 >= argc) {
    fprintf(stderr, "portent: %s needs a value\n", o);
    return -1;
  }
  *slot = argv[++*i];
  return 1;
}

typedef struct {
  const char *key;
  double best;
  pc_record *rec;
  int n_match;
} best_ctx;

static int take_best(const pc_record *r, int line, void *ctx) {
  best_ctx *b = ctx;
  (void)line;
  if (r->error_code != 0 || r->n_costs == 0) return 0;
  if (b->key[0] && strcmp(r->workload_key, b->key) != 0) return 0;
  double mean = 0;
  for (int i = 0; i < r->n_costs; i++) mean += r->costs[i] / r->n_costs;
  b->n_match++;
  if (!b->rec || mean < b->best) {
    if (!b->rec) b->rec = malloc(sizeof *b->rec);
    *b->rec = *r;
    b->best = mean;
  }
  return 0;
}

static int load_schedule_file(const char *path, const pc_program *p, int *n, pc_step *steps, pt_diag *d) {
  size_t len;
  char *text = pt_read_file(path, &len, d);
  if (!text) return PT_ERR_IO;
  const char *s = text;
  while (*s == ' ' || *s == '\n' || *s == '\t' || *s == '\r') s++;
  int rc;
  if (*s == '[') {
    rc = pc_steps_from_json(s, n, steps, PC_MAX_STEPS, d);
    if (rc) pt_fail(d, rc, "(in %s)", path);
  } else {
    best_ctx b = {p->key, 0, NULL, 0};
    rc = pc_record_read_file(path, take_best, NULL, &b, NULL, d);
    if (rc >= 0 && !b.rec)
      rc = pt_fail(d, PT_ERR_INPUT, "%s: no valid record for workload key %s", path, p->key);
    if (rc >= 0 && b.rec) {
      *n = b.rec->n_steps;
      memcpy(steps, b.rec->steps, sizeof(pc_step) * (size_t)b.rec->n_steps);
      rc = 0;
    }
    free(b.rec);
  }
  free(text);
  return rc < 0 ? rc : 0;
}

pc_state *schedule_args_build(const schedule_args *a, pc_program **prog) {
  pt_diag d = {0};
  pc_program *p = NULL;
  if (a->expr_file) {
    size_t len;
    char *text = pt_read_file(a->expr_file, &len, &d);
    if (text) p = pc_expr_parse(text, a->expr_file, &d);
    free(text);
  } else if (a->workload) {
    p = pc_workload_build(a->workload, &d);
  } else {
    pt_fail(&d, PT_ERR_INPUT, "no workload given (portent workloads lists them)");
  }
  if (!p) {
    fprintf(stderr, "portent: %s\n", d.msg);
    return NULL;
  }
  pc_state *s = pc_state_new(p);
  if (!s) {
    fprintf(stderr, "portent: %s: more than %d stages\n", p->name, PC_MAX_STAGES);
    pc_program_free(p);
    return NULL;
  }
  int rc = 0;
  static pc_step steps[PC_MAX_STEPS];
  int n = 0;
  if (a->steps) rc = pc_steps_from_json(a->steps, &n, steps, PC_MAX_STEPS, &d);
  else if (a->schedule) rc = load_schedule_file(a->schedule, p, &n, steps, &d);
  if (!rc && (a->steps || a->schedule)) rc = pc_state_apply_all(s, n, steps, &d);
  else if (!rc && !a->naive) rc = pc_schedule_default(s, a->lanes, &d);
  if (rc) {
    fprintf(stderr, "portent: %s\n", d.msg);
    pc_state_free(s);
    pc_program_free(p);
    return NULL;
  }
  *prog = p;
  return s;
}
