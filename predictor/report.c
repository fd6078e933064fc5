/* Prediction reports: a readable breakdown (functions, the costliest blocks, memory levels,
 * fallbacks) and the JSON the --json flag prints (docs/formats.md, "Prediction"). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "internal.h"

static const char *level_name(int idx, int levels, char *buf) {
  if (idx == PP_MAX_LEVELS) return "DRAM";
  (void)levels;
  snprintf(buf, 8, "L%d", (idx + 1) % 100); /* levels are 1..PP_MAX_LEVELS */
  return buf;
}

/* The model line's words (PP_SWITCHES), space-separated, into buf. */
static const char *model_words(const pp_options *o, char *buf, size_t size) {
  size_t len = 0;
  buf[0] = 0;
  for (int k = 0; k < PP_N_SWITCHES && len < size; k++) {
    const char *word = pp_switch_on(o, k) ? pp_switches[k].word : pp_switches[k].off_word;
    if (word) len += (size_t)snprintf(buf + len, size - len, "%s%s", len ? " " : "", word);
  }
  return buf;
}

static int cmp_block(const void *a, const void *b) {
  double x = (*(const pp_block_pred *const *)a)->total_cycles, y = (*(const pp_block_pred *const *)b)->total_cycles;
  return x < y ? 1 : x > y ? -1 : 0;
}

void pp_prediction_print(FILE *f, const pp_prediction *r, int top_blocks) {
  const pp_options *o = &r->options;
  char model[PP_N_SWITCHES * 16];
  fprintf(f, "target %s, %d thread(s), %.3f GHz; model: %s\n", r->target, r->threads, r->frequency_ghz,
          model_words(o, model, sizeof model));
  fprintf(f, "predicted %.6g s (%.4g ms): compute %.4g ms, memory %.4g ms, bandwidth %.4g ms, fork/join %.4g ms; "
             "bound: %s\n",
          r->seconds, r->seconds * 1e3, r->compute_seconds * 1e3, r->memory_seconds * 1e3,
          r->bandwidth_extra_seconds * 1e3, r->fork_join_seconds * 1e3, pp_bound_name(r->bound));
  char lb[8];
  for (int i = 0; i < r->n_functions; i++) {
    const pp_function_pred *fp = &r->functions[i];
    if (fp->seconds <= 0 && fp->cycles <= 0) continue;
    fprintf(f, "  %-28s %10.4g ms %s work/thread %.3f  load %.1f cyc  bound %s", fp->name, fp->seconds * 1e3,
            fp->parallel ? "parallel" : "serial  ", fp->work_fraction, fp->load_latency, pp_bound_name(fp->bound));
    if (fp->core_share < 1) fprintf(f, "  core share %.3f (all busy)", fp->core_share);
    fprintf(f, "\n");
    fprintf(f, "    hits:");
    for (int L = 0; L <= PP_MAX_LEVELS; L++)
      if (L < r->levels || L == PP_MAX_LEVELS) fprintf(f, " %s %.1f%%", level_name(L, r->levels, lb), 100 * fp->hit_fraction[L]);
    fprintf(f, "\n    bytes from:");
    for (int L = 0; L <= PP_MAX_LEVELS; L++)
      if (L < r->levels || L == PP_MAX_LEVELS) fprintf(f, " %s %.3g MB", level_name(L, r->levels, lb), fp->bytes_from[L] / 1e6);
    fprintf(f, "\n");
  }
  if (top_blocks > 0 && r->n_blocks > 0) {
    const pp_block_pred **order = malloc(sizeof *order * r->n_blocks);
    for (int i = 0; i < r->n_blocks; i++) order[i] = &r->blocks[i];
    qsort(order, r->n_blocks, sizeof *order, cmp_block);
    fprintf(f, "  costliest blocks (cycles per execution x executions per thread):\n");
    double hz = r->frequency_ghz * 1e9;
    for (int i = 0; i < r->n_blocks && i < top_blocks && order[i]->total_cycles > 0; i++) {
      const pp_block_pred *b = order[i];
      fprintf(f, "    %-24s %-14s %8.2f cyc (compute %.2f) x %-12.0f = %9.4g ms  %3d uops  %s%s%s\n", b->function_name,
              b->name, b->cycles, b->compute_cycles, b->ecount, b->total_cycles / hz * 1e3, b->uops,
              pp_bound_name(b->bound), b->unit ? " " : "", b->unit ? b->unit : "");
    }
    free(order);
  }
  for (int i = 0; i < r->n_fallbacks; i++) fprintf(f, "  fallback: %s\n", r->fallbacks[i]);
}

char *pp_prediction_to_json(const pp_prediction *r) {
  cJSON *o = cJSON_CreateObject();
  cJSON_AddStringToObject(o, "kind", "portent-prediction");
  cJSON_AddNumberToObject(o, "version", 1);
  cJSON_AddStringToObject(o, "target", r->target);
  cJSON_AddNumberToObject(o, "threads", r->threads);
  char model[PP_N_SWITCHES * 16];
  cJSON_AddStringToObject(o, "model", model_words(&r->options, model, sizeof model));
  cJSON *opt = cJSON_AddObjectToObject(o, "options");
  for (int k = 0; k < PP_N_SWITCHES; k++) cJSON_AddBoolToObject(opt, pp_switches[k].field, pp_switch_on(&r->options, k));
  cJSON_AddNumberToObject(o, "seconds", r->seconds);
  cJSON_AddNumberToObject(o, "cycles", r->cycles);
  cJSON_AddNumberToObject(o, "compute_seconds", r->compute_seconds);
  cJSON_AddNumberToObject(o, "memory_seconds", r->memory_seconds);
  cJSON_AddNumberToObject(o, "bandwidth_extra_seconds", r->bandwidth_extra_seconds);
  cJSON_AddNumberToObject(o, "fork_join_seconds", r->fork_join_seconds);
  cJSON_AddStringToObject(o, "bound", pp_bound_name(r->bound));
  cJSON *fs = cJSON_AddArrayToObject(o, "functions");
  char lb[8];
  for (int i = 0; i < r->n_functions; i++) {
    const pp_function_pred *fp = &r->functions[i];
    cJSON *f = cJSON_CreateObject();
    cJSON_AddStringToObject(f, "name", fp->name);
    cJSON_AddBoolToObject(f, "parallel", fp->parallel);
    cJSON_AddNumberToObject(f, "seconds", fp->seconds);
    cJSON_AddNumberToObject(f, "cycles", fp->cycles);
    cJSON_AddNumberToObject(f, "compute_cycles", fp->compute_cycles);
    cJSON_AddNumberToObject(f, "memory_cycles", fp->memory_cycles);
    cJSON_AddNumberToObject(f, "bandwidth_seconds", fp->bandwidth_seconds);
    if (fp->bandwidth_level > 0)
      cJSON_AddStringToObject(f, "bandwidth_level", level_name(fp->bandwidth_level - 1, r->levels, lb));
    cJSON_AddNumberToObject(f, "fork_join_seconds", fp->fork_join_seconds);
    cJSON_AddNumberToObject(f, "work_fraction", fp->work_fraction);
    cJSON_AddNumberToObject(f, "core_share", fp->core_share);
    cJSON_AddNumberToObject(f, "load_latency_cycles", fp->load_latency);
    cJSON_AddStringToObject(f, "bound", pp_bound_name(fp->bound));
    cJSON *hits = cJSON_AddObjectToObject(f, "hit_fraction"), *bytes = cJSON_AddObjectToObject(f, "bytes_from");
    for (int L = 0; L <= PP_MAX_LEVELS; L++)
      if (L < r->levels || L == PP_MAX_LEVELS) {
        cJSON_AddNumberToObject(hits, level_name(L, r->levels, lb), fp->hit_fraction[L]);
        cJSON_AddNumberToObject(bytes, level_name(L, r->levels, lb), fp->bytes_from[L]);
      }
    cJSON *bs = cJSON_AddArrayToObject(f, "blocks");
    for (int j = 0; j < r->n_blocks; j++) {
      const pp_block_pred *b = &r->blocks[j];
      if (b->function != i) continue;
      cJSON *x = cJSON_CreateObject();
      cJSON_AddStringToObject(x, "name", b->name);
      cJSON_AddNumberToObject(x, "ecount", b->ecount);
      cJSON_AddNumberToObject(x, "cycles", b->cycles);
      cJSON_AddNumberToObject(x, "compute_cycles", b->compute_cycles);
      cJSON_AddNumberToObject(x, "total_cycles", b->total_cycles);
      cJSON_AddNumberToObject(x, "uops", b->uops);
      cJSON_AddStringToObject(x, "bound", pp_bound_name(b->bound));
      if (b->unit) cJSON_AddStringToObject(x, "unit", b->unit);
      cJSON_AddItemToArray(bs, x);
    }
    cJSON_AddItemToArray(fs, f);
  }
  cJSON *fb = cJSON_AddArrayToObject(o, "fallbacks");
  for (int i = 0; i < r->n_fallbacks; i++) cJSON_AddItemToArray(fb, cJSON_CreateString(r->fallbacks[i]));
  char *s = cJSON_Print(o);
  cJSON_Delete(o);
  return s;
}
