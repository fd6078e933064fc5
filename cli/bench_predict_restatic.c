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
        n->periods = m->periods ? pt_memdup(to->arena, m->periods, 2 * sizeof(int64_t) * (size_t)m->n_strides) : NULL;
        n->period_strides = n->periods ? n->periods + m->n_strides : NULL;
        n->array = m->array;
        n->has_offset = m->has_offset, n->offset = m->offset;
        n->lane_step = m->lane_step;
      }
  }
  return true;
}

/* Grafts m's static analysis onto `to` and recounts how its parallel bodies' work falls on
 * their iterations; false when m is other code. */
static bool restatic_from(pa_profile *to, const pa_module *m, pt_diag *d) {
  pa_profile *st = pa_profile_static(m, d);
  bool ok = st && graft(to, st);
  if (ok) pa_profile_chunk_work(m, to);
  pa_profile_free(st);
  return ok;
}

static bool restatic_lowered(pa_profile *to, pc_program *prog, const char *steps_json, pt_diag *d) {
  pc_state *s = pc_state_new(prog);
  bool ok = false;
  if (bp_apply_steps(s, steps_json, d) == 0) {
    pc_lower_opts lo = {0};
    pc_kernel *k = pc_lower(s, &lo, d);
    pa_module *m = k ? pa_module_from_llvm(pc_kernel_module(k)) : NULL;
    ok = m && restatic_from(to, m, d);
    pa_module_free(m);
    pc_kernel_free(k);
  }
  pc_state_free(s);
  return ok;
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
      bool ok = false, lowered = false;
      if (ir_dir) {
        char path[1200];
        snprintf(path, sizeof path, "%s/%s_%d.ll", ir_dir, w->name, w->candidate[j]);
        FILE *f = fopen(path, "r");
        pa_module *m = f ? (fclose(f), pa_module_load(path, &dj)) : NULL;
        ok = m && restatic_from(w->prof[j], m, &dj);
        pa_module_free(m);
      }
      if (!ok) {
        pt_diag_clear(&dj);
        lowered = w->steps[j] != NULL;
        ok = lowered && restatic_lowered(w->prof[j], prog, w->steps[j], &dj);
      }
      matched += ok;
      if (!ok && verbose)
        fprintf(stderr, "  %s #%d: %s\n", w->name, w->candidate[j], lowered && !dj.msg[0] ? "lowers to different code now" : dj.msg);
      pt_diag_clear(&dj);
    }
    pc_program_free(prog);
  }
  fprintf(stderr, "restatic: static fields recomputed for %d of %d profiles (the others keep theirs)\n", matched,
          total);
  return matched;
}
