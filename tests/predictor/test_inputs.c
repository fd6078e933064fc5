/* Bad inputs: a corrupted or unknown-version profile, a corrupted target, a thread count of 0
 * or above the target's cores, a profile with no counts: clear errors, no prediction. */
#include "predictor.h"
#include "synthetic.h"
#include "test.h"

int main(void) {
  pt_diag d = {0};
  ptg_target *t = synthetic_shipped_target("amd-zen4", &d);
  CHECK_MSG(t, "%s", d.msg);
  if (!t) TEST_DONE();

  pt_diag_clear(&d);
  CHECK(pa_profile_parse("{\"version\": 1, \"kind\": \"portent-profile\", \"functions\": [", "broken.json", &d) == NULL);
  CHECK(d.err != 0 && strstr(d.msg, "broken.json"));
  pt_diag_clear(&d);
  CHECK(pa_profile_parse("{\"version\": 99, \"kind\": \"portent-profile\", \"functions\": []}", "v99.json", &d) == NULL);
  CHECK(d.err != 0);
  pt_diag_clear(&d);
  CHECK(pa_profile_parse("{\"version\": 1, \"kind\": \"portent-prediction\", \"seconds\": 1}", "pred.json", &d) == NULL);
  CHECK_MSG(strstr(d.msg, "pred.json") && strstr(d.msg, "not a portent profile"), "%s", d.msg);
  pt_diag_clear(&d);
  CHECK(ptg_target_parse("{\"version\": 1, \"name\": ", "t.json", &d) == NULL);
  CHECK(d.err != 0);

  pp_options o = {0};
  o.threads = t->cores + 1;
  pt_diag_clear(&d);
  CHECK(pp_predictor_new(t, &o, &d) == NULL);
  CHECK_MSG(strstr(d.msg, "cores"), "%s", d.msg);
  o.threads = -1;
  pt_diag_clear(&d);
  CHECK(pp_predictor_new(t, &o, &d) == NULL);

  /* a static profile without trip counts: no counts to multiply by */
  pa_node n = {.op = PA_OP_ADD, .opcode = "add", .elem = "i64", .lanes = 1, .bits = 64};
  pa_block b = {.name = "b", .loop = -1, .static_count_per_call = -1, .n_nodes = 1, .nodes = &n};
  pa_function f = {.name = "f", .n_blocks = 1, .blocks = &b};
  pa_profile p = {.version = PA_PROFILE_VERSION, .source = "static.json", .counts_source = "none", .n_functions = 1,
                  .functions = &f};
  o.threads = 1;
  pt_diag_clear(&d);
  CHECK(pp_predict_profile(&p, t, &o, &d) == NULL);
  CHECK_MSG(strstr(d.msg, "static.json") && strstr(d.msg, "counts"), "%s", d.msg);
  p.version = 7;
  pt_diag_clear(&d);
  CHECK(pp_predict_profile(&p, t, &o, &d) == NULL);
  CHECK_MSG(strstr(d.msg, "version"), "%s", d.msg);
  /* with a static trip count it predicts */
  p.version = PA_PROFILE_VERSION;
  b.static_count_per_call = 100;
  pt_diag_clear(&d);
  pp_prediction *r = pp_predict_profile(&p, t, &o, &d);
  CHECK_MSG(r && r->seconds > 0, "%s", d.msg);
  pp_prediction_free(r);
  ptg_target_free(t);
  TEST_DONE();
}
