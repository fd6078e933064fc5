/* Profiling a saved set's schedules again with today's analyzer: each record's schedule is
 * lowered and run instrumented as `bench predict` profiled it (the set's thread count, each old
 * profile's own SHARDS rate and line filter), and the new profile replaces the old one; the
 * measured times stay. Profiles are target-neutral, so a set measured on another machine is
 * re-profiled on any: this is how an analyzer change (masked lanes counted, session 23) reaches
 * the sets whose truth was measured where no session runs now. */
#include <stdio.h>
#include <stdlib.h>

#include "bench_predict.h"
#include "compiler.h"
#include "predictor.h"

static pa_profile *profile_steps(pc_program *prog, const char *steps_json, int threads, const pa_profile *old,
                                 pt_diag *d) {
  pc_state *s = pc_state_new(prog);
  pa_profile *p = NULL;
  if (bp_apply_steps(s, steps_json, d) == 0) {
    pa_options po = {.sample_rate = old->sample_rate > 0 && old->sample_rate < 1 ? old->sample_rate : 1,
                     .line_filter = old->line_filter};
    p = pp_profile_state(s, threads, &po, 30, d);
  }
  pc_state_free(s);
  return p;
}

int bp_reprofile(bp_set *s, bool verbose) {
  int done = 0, total = 0;
  int threads = s->threads > 0 ? s->threads : 1;
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
      pa_profile *p = w->steps[j] ? profile_steps(prog, w->steps[j], threads, w->prof[j], &dj) : NULL;
      if (p) {
        pa_profile_free(w->prof[j]);
        w->prof[j] = p, done++;
      } else if (verbose || dj.msg[0])
        fprintf(stderr, "  %s #%d: kept the old profile: %s\n", w->name, w->candidate[j], dj.msg[0] ? dj.msg : "no steps");
    }
    pc_program_free(prog);
  }
  fprintf(stderr, "reprofile: made again for %d of %d profiles (the others keep theirs)\n", done, total);
  return done;
}
