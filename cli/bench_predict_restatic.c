/* Recomputing the static parts of a saved set's profiles: each record's schedule is lowered
 * again (no run) and its static analysis grafted onto the saved profile, whose measured counts
 * and reuse stay. This is how a model that reads a newer static field (per-access strides, a
 * gather's lane step) is evaluated on a set profiled before the field existed, without
 * re-measuring. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_predict.h"
#include "compiler.h"

/* Copies the static per-node fields of `from` into `to` when both describe the same code
 * (the same functions by name, the same blocks and node opcodes); false otherwise. */
static bool graft(pa_profile *to, const pa_profile *from) {
  for (int i = 0; i < to->n_functions; i++) {
    const pa_function *g = pa_profile_function(from, to->functions[i].name);
    const pa_function *f = &to->functions[i];
    if (!g || g->n_blocks != f->n_blocks) return false;
    for (int j = 0; j < f->n_blocks; j++) {
      const pa_block *a = &f->blocks[j], *b = &g->blocks[j];
      if (a->n_nodes != b->n_nodes) return false;
      for (int k = 0; k < a->n_nodes; k++)
        if (a->nodes[k].op != b->nodes[k].op || strcmp(a->nodes[k].opcode, b->nodes[k].opcode) != 0) return false;
    }
  }
  for (int i = 0; i < to->n_functions; i++) {
    pa_function *f = &to->functions[i];
    const pa_function *g = pa_profile_function(from, f->name);
    for (int j = 0; j < f->n_blocks; j++)
      for (int k = 0; k < f->blocks[j].n_nodes; k++) {
        pa_node *n = &f->blocks[j].nodes[k];
        const pa_node *m = &g->blocks[j].nodes[k];
        n->n_strides = m->n_strides;
        n->strides = m->n_strides ? pt_memdup(to->arena, m->strides, sizeof(int64_t) * (size_t)m->n_strides) : NULL;
        n->array = m->array;
        n->lane_step = m->lane_step;
      }
  }
  return true;
}

static pa_profile *lower_static(pc_program *prog, const char *steps_json, pt_diag *d) {
  pc_state *s = pc_state_new(prog);
  pc_step *steps = malloc(sizeof *steps * PC_MAX_STEPS);
  int n_steps = 0;
  int rc = pc_steps_from_json(steps_json, &n_steps, steps, PC_MAX_STEPS, d);
  if (rc == 0) rc = pc_state_apply_all(s, n_steps, steps, d);
  free(steps);
  pa_profile *p = NULL;
  if (rc == 0) {
    pc_lower_opts lo = {0};
    pc_kernel *k = pc_lower(s, &lo, d);
    pa_module *m = k ? pa_module_from_llvm(pc_kernel_module(k)) : NULL;
    p = m ? pa_profile_static(m, d) : NULL;
    pa_module_free(m);
    pc_kernel_free(k);
  }
  pc_state_free(s);
  return p;
}

static pa_profile *load_static(const char *path, pt_diag *d) {
  pa_module *m = pa_module_load(path, d);
  pa_profile *p = m ? pa_profile_static(m, d) : NULL;
  pa_module_free(m);
  return p;
}

int bp_restatic(bp_set *s, const char *ir_dir, bool verbose) {
  int matched = 0, total = 0;
  for (int i = 0; i < s->nw; i++) {
    bp_workload *w = &s->w[i];
    pt_diag d = {0};
    pc_program *prog = pc_workload_build(w->name, &d);
    if (!prog) {
      fprintf(stderr, "  %s: %s\n", w->name, d.msg);
      total += w->n;
      continue;
    }
    for (int j = 0; j < w->n; j++, total++) {
      pt_diag dj = {0};
      pa_profile *st = NULL;
      bool ok = false;
      if (ir_dir) {
        char path[1200];
        snprintf(path, sizeof path, "%s/%s_%d.ll", ir_dir, w->name, w->candidate[j]);
        FILE *f = fopen(path, "r");
        if (f) fclose(f), st = load_static(path, &dj);
        ok = st && graft(w->prof[j], st);
      }
      if (!ok) {
        pa_profile_free(st);
        pt_diag_clear(&dj);
        st = w->steps[j] ? lower_static(prog, w->steps[j], &dj) : NULL;
        ok = st && graft(w->prof[j], st);
      }
      matched += ok;
      if (!ok && verbose)
        fprintf(stderr, "  %s #%d: %s\n", w->name, w->candidate[j], st ? "lowers to different code now" : dj.msg);
      pa_profile_free(st);
    }
    pc_program_free(prog);
  }
  fprintf(stderr, "restatic: static fields recomputed for %d of %d profiles (the others keep theirs)\n", matched,
          total);
  return matched;
}
