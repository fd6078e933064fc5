/* +memchain (predictor/memory_chains.c): accumulators kept in memory. A loop that adds into one
 * float through memory (c[0] += a[i]: load, fadd, store, the next iteration's load forwarded from
 * that store) runs a link per iteration: the add's latency plus the target's store-to-load
 * forwarding (cpu.store_forward_cycles; Zen 3's file measures it), where each block priced alone
 * is about 2 cycles. Two blocks that add into the element each iteration moves (c[i] += a[i];
 * c[i] += b[i]) chain within the iteration: two adds and one forwarding. One block adding into
 * the element each iteration moves chains nothing: unchanged. A target without the figure takes
 * an L1 hit's latency for the forwarding. The name parses; the default has it. */
#include <math.h>
#include <stdio.h>

#include "test.h"
#include "synthetic.h"

#define N 4096

/* for i < N: c[0] += a[i] through memory */
static const char *invariant_ir =
    "define void @inv(ptr %c, ptr %a) {\n"
    "entry:\n  br label %loop\n"
    "loop:\n  %i = phi i64 [0, %entry], [%in, %loop]\n  %x = load float, ptr %c\n"
    "  %p = getelementptr float, ptr %a, i64 %i\n  %y = load float, ptr %p\n  %s = fadd float %x, %y\n"
    "  store float %s, ptr %c\n  %in = add i64 %i, 1\n  %d = icmp eq i64 %in, 4096\n"
    "  br i1 %d, label %exit, label %loop\n"
    "exit:\n  ret void\n}\n";

/* for i < N: c[i] += a[i]; c[i] += b[i] (the second add in a block of its own, when `two`) */
static const char *moved_fmt =
    "define void @mov(ptr %%c, ptr %%a, ptr %%b) {\n"
    "entry:\n  br label %%loop\n"
    "loop:\n  %%i = phi i64 [0, %%entry], [%%in, %%second]\n  %%q = getelementptr float, ptr %%c, i64 %%i\n"
    "  %%x = load float, ptr %%q\n  %%p = getelementptr float, ptr %%a, i64 %%i\n  %%y = load float, ptr %%p\n"
    "  %%s = fadd float %%x, %%y\n  store float %%s, ptr %%q\n  br label %%second\n"
    "second:\n%s  %%in = add i64 %%i, 1\n  %%d = icmp eq i64 %%in, 4096\n  br i1 %%d, label %%exit, label %%loop\n"
    "exit:\n  ret void\n}\n";
static const char *second_add =
    "  %x2 = load float, ptr %q\n  %r = getelementptr float, ptr %b, i64 %i\n  %y2 = load float, ptr %r\n"
    "  %s2 = fadd float %x2, %y2\n  store float %s2, ptr %q\n";

static double cycles(const char *ir, const char *entry, const ptg_target *t, bool chains) {
  pt_diag d = {0};
  pa_profile *p = synthetic_profile_ir(ir, entry, &d);
  CHECK_MSG(p, "%s", d.msg);
  if (!p) return NAN;
  pp_options o;
  pp_options_default(&o);
  o.threads = 1, o.mem_chains = chains;
  double s = synthetic_seconds(p, t, &o, &d);
  CHECK_MSG(s > 0, "%s", d.msg);
  pa_profile_free(p);
  return s * t->frequency_ghz.value * 1e9 / N;
}

int main(void) {
  pt_diag d = {0};
  ptg_target *t = synthetic_test_target("zen3-epyc-2c", &d);
  if (!t) TEST_DONE();
  pp_options def = synthetic_defaults(), parsed = synthetic_preset("steady+bw+carried+memchain");
  CHECK(def.mem_chains && def.carried);
  CHECK(parsed.mem_chains && parsed.carried);
  double fwd = t->store_forward_cycles.value, add = 0;
  CHECK_MSG(fwd > 1 && fwd < 50, "zen3's store_forward_cycles: %g", fwd);
  add = ptg_target_inst(t, PTG_OP_ADD, PTG_ELEM_F32, 32).latency;
  CHECK_MSG(add > 1 && add < 10, "zen3's f32 add latency: %g", add);

  /* c[0] += a[i]: a link an iteration */
  double with = cycles(invariant_ir, "inv", t, true), without = cycles(invariant_ir, "inv", t, false);
  CHECK_MSG(fabs(with - (add + fwd)) < 0.1 * (add + fwd), "c[0] += a[i]: %g cycles an iteration, want %g + %g", with,
            add, fwd);
  CHECK_MSG(without < 0.5 * with, "c[0] += a[i] without +memchain: %g against %g", without, with);

  /* two adds into c[i] in two blocks: two adds and one forwarding an iteration */
  char two[4096], one[4096];
  snprintf(two, sizeof two, moved_fmt, second_add);
  snprintf(one, sizeof one, moved_fmt, "");
  double two_with = cycles(two, "mov", t, true), two_without = cycles(two, "mov", t, false);
  CHECK_MSG(two_with >= 0.9 * (2 * add + fwd) && two_with <= 1.1 * fmax(2 * add + fwd, two_without),
            "two blocks into c[i]: %g cycles an iteration, want %g", two_with, 2 * add + fwd);
  CHECK_MSG(two_without < 0.8 * two_with, "two blocks into c[i] without +memchain: %g against %g", two_without, two_with);
  double one_with = cycles(one, "mov", t, true), one_without = cycles(one, "mov", t, false);
  CHECK_MSG(fabs(one_with - one_without) <= 1e-9 * one_without, "one block into c[i]: %g vs %g", one_with, one_without);

  /* no figure: an L1 hit's latency */
  t->store_forward_cycles.value = NAN;
  double l1 = t->caches[0].latency_cycles.value, fallback = cycles(invariant_ir, "inv", t, true);
  CHECK_MSG(fabs(fallback - (add + l1)) < 0.1 * (add + l1), "no figure: %g cycles an iteration, want %g + %g", fallback,
            add, l1);
  ptg_target_free(t);
  TEST_DONE();
}
