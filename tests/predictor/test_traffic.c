/* Traffic per level (bytes_from): L1 delivers the bytes of every load and store; each level
 * below delivers a line for each access the levels above it missed, as the reuse histogram
 * and the target's caches say (DRAM last, at PP_MAX_LEVELS). A loop of 16 loads and one store
 * of 16 bytes run 10,000 times: 2.72 MB from L1, 170,000 accesses of 64-byte lines below. */
#include "predictor/synthetic.h"
#include "test.h"

#define ACCESSES 170000.0
#define L1_BYTES (17 * 16 * 10000.0)
#define LINE_BYTES (ACCESSES * 64)

static bool near(double x, double want) { return fabs(x - want) <= 1e-9 * fabs(want) + 1e-6; }

/* Checks the prediction's bytes_from (want[0..PP_MAX_LEVELS]) and hit fractions (hits). */
static void check_traffic(const char *what, const pa_profile *p, const ptg_target *t, const double *want,
                          const double *hits) {
  pt_diag d = {0};
  pp_options o = {.threads = 1}; /* the patent's model: traffic does not depend on the extensions */
  pp_prediction *r = pp_predict_profile(p, t, &o, &d);
  CHECK_MSG(r, "%s: %s", what, d.msg);
  if (!r) return;
  const pp_function_pred *f = &r->functions[0];
  for (int L = 0; L <= PP_MAX_LEVELS; L++) {
    CHECK_MSG(near(f->bytes_from[L], want[L]), "%s: bytes from [%d] %.9g, want %.9g", what, L, f->bytes_from[L], want[L]);
    CHECK_MSG(near(f->hit_fraction[L], hits[L]), "%s: hits at [%d] %.9g, want %.9g", what, L, f->hit_fraction[L], hits[L]);
  }
  pp_prediction_free(r);
}

int main(void) {
  /* the synthetic target with an L3 of 8 MiB (131,072 lines), 40 cycles, between L2 and DRAM */
  ptg_target *t = synthetic_target(512, 4);
  ptg_cache *caches = pt_alloc(t->arena, sizeof *caches * 3);
  memcpy(caches, t->caches, sizeof *caches * 2);
  caches[2] = (ptg_cache){.level = 3, .size_bytes = 8 << 20, .line_bytes = 64, .shared_by = 4};
  caches[2].latency_cycles.value = 40, caches[2].latency_ns.value = NAN;
  t->caches = caches, t->n_caches = 3;

  pa_node nodes[18];
  for (int i = 0; i < 16; i++) nodes[i] = synthetic_node(PA_OP_LOAD, "load", 4);
  nodes[16] = synthetic_node(PA_OP_STORE, "store", 4);
  nodes[17] = (pa_node){.op = PA_OP_OTHER, .opcode = "br", .elem = "void", .lanes = 1};
  synthetic_loop s;
  pa_reuse_hist h = {0};

  /* a working set in L1 (reuse at 8..15 lines): nothing comes from below */
  h.bins[4] = h.accesses = ACCESSES;
  pa_profile *p = synthetic_loop_profile(&s, nodes, 18, NULL, 0, 10000, &h);
  check_traffic("in L1", p, t, (double[]){L1_BYTES, 0, 0, 0, 0}, (double[]){1, 0, 0, 0, 0});

  /* 4 MiB (65,536 lines) walked again and again (reuse at 65,536..131,071 lines): beyond L2,
   * in L3, its first touches warm there from the previous run: every access a line from L3,
   * through L2 */
  memset(&h, 0, sizeof h);
  h.cold = 65536, h.bins[17] = ACCESSES - 65536, h.accesses = ACCESSES;
  p = synthetic_loop_profile(&s, nodes, 18, NULL, 0, 10000, &h);
  check_traffic("in L3", p, t, (double[]){L1_BYTES, LINE_BYTES, LINE_BYTES, 0, 0}, (double[]){0, 0, 1, 0, 0});

  /* 10.88 MB of first touches, beyond L3: every line from DRAM, through L2 and L3 */
  memset(&h, 0, sizeof h);
  h.cold = h.accesses = ACCESSES;
  p = synthetic_loop_profile(&s, nodes, 18, NULL, 0, 10000, &h);
  check_traffic("beyond L3", p, t, (double[]){L1_BYTES, LINE_BYTES, LINE_BYTES, 0, LINE_BYTES},
                (double[]){0, 0, 0, 0, 1});

  /* half the accesses hit L1, a quarter L2, an eighth L3, an eighth go to DRAM: L2 delivers
   * half of the lines, L3 a quarter, DRAM an eighth */
  memset(&h, 0, sizeof h);
  h.bins[4] = ACCESSES / 2, h.bins[13] = ACCESSES / 4, h.bins[17] = h.bins[22] = ACCESSES / 8, h.accesses = ACCESSES;
  p = synthetic_loop_profile(&s, nodes, 18, NULL, 0, 10000, &h);
  check_traffic("mixed", p, t, (double[]){L1_BYTES, LINE_BYTES / 2, LINE_BYTES / 4, 0, LINE_BYTES / 8},
                (double[]){0.5, 0.25, 0.125, 0, 0.125});

  /* the same on the two-level target: what L3 served now comes from DRAM */
  t->n_caches = 2;
  check_traffic("mixed, no L3", p, t, (double[]){L1_BYTES, LINE_BYTES / 2, 0, 0, LINE_BYTES / 4},
                (double[]){0.5, 0.25, 0, 0, 0.25});
  ptg_target_free(t);
  TEST_DONE();
}
