/* Cost models by name for the tuning commands: random (compiler/), xgb (predictor/learned.h),
 * xgb-imp[:LOG] (learned.h: pruned + redistributed, importance pre-fitted on LOG or online),
 * analytic (predictor/predictor.h), tlp:WEIGHTS (predictor/tlp.h: pretrained, fine-tuned online on the
 * task's measurements; tlp-offline:WEIGHTS as trained, tlp-head:WEIGHTS fine-tuning the last layers). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "learned.h"
#include "predictor.h"
#include "tlp.h"
#include "tune_models.h"

const char *tune_model_names(void) { return "random, xgb, xgb-imp[:PREFIT.jsonl], analytic, tlp[-offline|-head]:WEIGHTS.safetensors[@PLATFORM], or A+B (B re-ranks A's best)"; }

/* The predictor's models come as allocated structs: keep the contents, free the shell. */
static int take(pc_cost_model *m, pc_cost_model *out) {
  *out = *m;
  free(m);
  return 0;
}

/* tlp:PATH[@PLATFORM]: an MTL-TLP model ranks with the head of PLATFORM, by default this host's
 * (-mcpu, as training names platforms) when it has one; TLP's single head otherwise. `online`
 * NULL: the model as trained. */
static pc_cost_model *tlp_model(const char *arg, const pp_tlp_finetune_opts *online, pt_diag *d) {
  char path[1024], platform[128] = "";
  snprintf(path, sizeof path, "%s", arg);
  char *at = strrchr(path, '@');
  if (at && !strchr(at, '/')) { /* an '@' inside a folder's name is part of the path */
    snprintf(platform, sizeof platform, "%s", at + 1);
    *at = 0;
  }
  if (!platform[0]) {
    pp_tlp_model *m = pp_tlp_model_load(path, d);
    if (!m) return NULL;
    char host[256];
    pc_host_target_string(host, sizeof host);
    pp_tlp_platform(host, platform, sizeof platform);
    bool has = false;
    for (int o = 0; o < pp_tlp_model_config(m)->n_out; o++) has |= strcmp(pp_tlp_model_platform(m, o), platform) == 0;
    if (!has) platform[0] = 0;
    pp_tlp_model_free(m);
  }
  pc_cost_model *cm = pp_cost_model_tlp(path, platform[0] ? platform : NULL, online, d);
  if (cm) fprintf(stderr, "tlp: %s ranks with the head of %s, %s; OpenBLAS core: %s\n", path,
                  platform[0] ? platform : "its first platform",
                  !online ? "offline" : online->head_only ? "fine-tuning its last layers online" : "fine-tuned online",
                  pp_tlp_blas_core());
  return cm;
}

int tune_model_new(const char *name, const ptg_target *target, int threads, uint64_t seed, pc_cost_model *out, pt_diag *d) {
  if (strcmp(name, "random") == 0) {
    *out = pc_cost_model_random(seed);
    return 0;
  }
  if (strcmp(name, "xgb") == 0) {
    pp_xgb_opts o;
    pp_xgb_opts_default(&o);
    o.seed = seed;
    pc_cost_model *m = pp_cost_model_xgb(&o, d);
    return m ? take(m, out) : (d->err ? d->err : PT_ERR_RUNTIME);
  }
  if (strcmp(name, "xgb-imp") == 0 || strncmp(name, "xgb-imp:", 8) == 0) {
    pp_xgb_imp_opts o;
    pp_xgb_imp_opts_default(&o);
    o.xgb.seed = seed;
    o.prefit = name[7] == ':' ? name + 8 : NULL;
    pc_cost_model *m = pp_cost_model_xgb_imp(&o, d);
    return m ? take(m, out) : (d->err ? d->err : PT_ERR_RUNTIME);
  }
  if (strcmp(name, "analytic") == 0) {
    if (!target) return pt_fail(d, PT_ERR_INPUT, "the analytic model needs --target T.json");
    /* Predicted on the threads the candidates run on: a one-thread search ranked for all the
     * target's cores favoured the candidates whose parallel loop splits evenly over them. */
    pp_analytic_opts ao = {0};
    pp_options_default(&ao.predict);
    ao.predict.threads = ao.profile_threads = threads < target->cores ? threads : 0;
    pc_cost_model *m = pp_cost_model_analytic(target, &ao, d);
    return m ? take(m, out) : (d->err ? d->err : PT_ERR_RUNTIME);
  }
  const char *tlp_kinds[] = {"tlp:", "tlp-head:", "tlp-offline:"};
  for (int k = 0; k < 3; k++) {
    size_t len = strlen(tlp_kinds[k]);
    if (strncmp(name, tlp_kinds[k], len) != 0) continue;
    pp_tlp_finetune_opts o;
    pp_tlp_finetune_opts_default(&o);
    o.seed = seed, o.head_only = k == 1;
    pc_cost_model *m = tlp_model(name + len, k == 2 ? NULL : &o, d);
    return m ? take(m, out) : (d->err ? d->err : PT_ERR_RUNTIME);
  }
  return pt_fail(d, PT_ERR_INPUT, "unknown cost model '%s' (available: %s)", name, tune_model_names());
}

double tune_model_local_share(const char *spec) {
  const char *plus = strchr(spec, '+');
  size_t len = plus ? (size_t)(plus - spec) : strlen(spec);
  return len == strlen("analytic") && strncmp(spec, "analytic", len) == 0 ? 0.5 : 0;
}

int tune_models_new(const char *spec, const ptg_target *target, int threads, uint64_t seed, pc_cost_model *model,
                    pc_cost_model *rerank, bool *has_rerank, pt_diag *d) {
  char first[512]; /* tlp:PATH carries a file path */
  const char *plus = strchr(spec, '+');
  size_t len = plus ? (size_t)(plus - spec) : strlen(spec);
  if (len >= sizeof first) len = sizeof first - 1;
  memcpy(first, spec, len);
  first[len] = 0;
  *has_rerank = false;
  int rc = tune_model_new(first, target, threads, seed, model, d);
  if (rc || !plus) return rc;
  rc = tune_model_new(plus + 1, target, threads, seed + 1, rerank, d);
  if (rc) {
    model->free(model->self);
    return rc;
  }
  *has_rerank = true;
  return 0;
}

void tune_sketch_opts_from_target(const ptg_target *target, bool cache_rule, pc_sketch_opts *o) {
  if (target->native_vector_bits >= 64) o->vector_lanes = target->native_vector_bits / 32;
  /* x86 without AVX-512 has 16 vector registers; AVX-512 and AArch64 have 32 */
  o->vector_registers = target->isa && strcmp(target->isa, "x86_64") == 0 && target->max_vector_bits < 512 ? 16 : 32;
  for (int level = 1; level <= 2; level++) {
    const ptg_cache *c = ptg_target_cache(target, level);
    o->cache_bytes[level - 1] = cache_rule && c && c->size_bytes > 0 ? c->size_bytes / (c->shared_by > 1 ? c->shared_by : 1) : 0;
  }
}
