/* Counters out of innermost loops (pa_options.counters_in_memory false, the default): a loop whose
 * latch is its only exit adds the counts of the blocks that dominate the latch at the exit, from
 * its iterations. The profile must be byte for byte the one
 * with the counters in memory, in every mode that counts, on portent kernels (default and random
 * schedules) and on loop shapes that do not qualify (a break, a top-tested loop, an exit block
 * shared with the loop's guard: their counters stay in memory); and the loops that qualify must
 * add at their exits (sums named `pa.carried`). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <llvm-c/Analysis.h>
#include <llvm-c/Core.h>

#include "analyzer/internal.h"
#include "compiler/compiler.h"
#include "schedules.h"
#include "test.h"

/* Counters added at loop exits (sums named pa.carried, pa.carried1, ...) in mod
 * instrumented (a copy) for a line-filtered sampled run with every block counted. */
static int carried_exits(LLVMModuleRef mod, bool in_memory) {
  LLVMModuleRef copy = LLVMCloneModule(mod);
  pa_module *m = pa_module_from_llvm(copy);
  pt_diag d = {0};
  pa_profile *p = pa_profile_static(m, &d);
  CHECK_MSG(p, "%s", d.msg);
  int64_t locals = 0;
  int n = 0;
  pa_hook_opts o = {.mode = PA_HOOKS_FILTERED, .profile = p, .line_filter = true, .counters_in_memory = in_memory};
  if (p && pa_instrument(copy, &o, &locals, NULL, &d) == PT_OK) {
    char *msg = NULL;
    CHECK_MSG(!LLVMVerifyModule(copy, LLVMReturnStatusAction, &msg), "the instrumented module does not verify: %s", msg);
    LLVMDisposeMessage(msg);
    size_t nl;
    for (LLVMValueRef f = LLVMGetFirstFunction(copy); f; f = LLVMGetNextFunction(f))
      for (LLVMBasicBlockRef b = LLVMGetFirstBasicBlock(f); b; b = LLVMGetNextBasicBlock(b))
        for (LLVMValueRef in = LLVMGetFirstInstruction(b); in; in = LLVMGetNextInstruction(in))
          n += strncmp(LLVMGetValueName2(in, &nl), "pa.carried", 10) == 0;
  }
  pa_profile_free(p);
  pa_module_free(m);
  LLVMDisposeModule(copy);
  return n;
}

static const pa_options modes[] = {{.sample_rate = 0.01, .static_counts = true, .line_filter = true},
                                   {.sample_rate = 0.01, .line_filter = true},
                                   {.sample_rate = 0.01},
                                   {.no_reuse = true},
                                   {.sample_rate = 1}};
static const char *const mode_names[] = {"line-filtered 1% static counts", "line-filtered 1%", "sampled 1%", "counts only",
                                         "rate 1"};

/* The profile's JSON (the caller frees), NULL when the run failed. */
static char *profile_json(LLVMModuleRef mod, const pa_run_spec *spec, pa_options o, const char *what) {
  pt_diag d = {0};
  pa_profile *p = pa_profile_llvm(mod, spec, &o, &d);
  CHECK_MSG(p, "%s: %s", what, d.msg);
  char *json = p ? pa_profile_to_json(p) : NULL;
  pa_profile_free(p);
  return json;
}

static void same_profiles(LLVMModuleRef mod, const pa_run_spec *spec, const char *what, int n_modes) {
  for (int i = 0; i < n_modes; i++) {
    pa_options a = modes[i], b = modes[i];
    b.counters_in_memory = true;
    char *x = profile_json(mod, spec, a, what), *y = profile_json(mod, spec, b, what);
    CHECK_MSG(x && y && strcmp(x, y) == 0, "%s: %s: the profile with counters in registers differs", what, mode_names[i]);
    free(x), free(y);
  }
}

static void check(const char *what, const pc_state *s, bool is_default, void *name) {
  pt_diag d = {0};
  pc_kernel *k = pc_lower(s, &(pc_lower_opts){0}, &d);
  CHECK_MSG(k, "%s: %s", what, d.msg);
  if (!k) return;
  LLVMModuleRef mod = pc_kernel_module(k);
  int exits = carried_exits(mod, false);
  printf("  %s: %d counters added at loop exits\n", what, exits);
  CHECK_MSG(carried_exits(mod, true) == 0, "%s: counts added at exits with counters_in_memory", what);
  if (is_default && strncmp(name, "matmul", 6) == 0) CHECK_MSG(exits >= 1, "%s: the k loop counts in memory", what);
  int nb = pc_kernel_n_buffers(k);
  int64_t sizes[PC_MAX_STAGES];
  for (int b = 0; b < nb; b++) sizes[b] = pc_kernel_buffer_numel(k, b);
  pa_run_spec *spec = pa_run_spec_portent(pc_kernel_name(k), nb, sizes, 1, 1);
  spec->timeout_s = 60;
  same_profiles(mod, spec, what, (int)PT_ARRAY_LEN(modes));
  pa_run_spec_free(spec);
  pc_kernel_free(k);
}

static void check_shapes(void) {
  pt_diag d = {0};
  pa_module *m = pa_module_load(PA_FIXTURE_DIR "/loop_exits.ll", &d);
  CHECK_MSG(m, "%s", d.msg);
  if (!m) return;
  LLVMModuleRef mod = pa_module_llvm(m);
  int exits = carried_exits(mod, false);
  CHECK_MSG(exits == 2, "loop_exits.ll: %d counters added at loop exits; want 2 (rot's: rot and rot.latch)", exits);
  pa_run_spec *spec = pa_run_spec_parse("{\"entry\": \"loop_exits\", \"seed\": 3, \"args\": ["
                                        "{\"kind\": \"buffer\", \"type\": \"f32\", \"count\": 1024},"
                                        "{\"kind\": \"buffer\", \"type\": \"f32\", \"count\": 1024}]}",
                                        "inline spec", &d);
  CHECK_MSG(spec, "%s", d.msg);
  if (spec) {
    /* the counts themselves: rot 1000 times, its conditional block as often as a[i] > 0.5 */
    pa_profile *p = pa_profile_llvm(mod, spec, &(pa_options){.no_reuse = true}, &d);
    CHECK_MSG(p, "%s", d.msg);
    const pa_function *f = p ? pa_profile_function(p, "loop_exits") : NULL;
    for (int b = 0; f && b < f->n_blocks; b++) {
      if (strcmp(f->blocks[b].name, "rot") == 0 || strcmp(f->blocks[b].name, "rot.latch") == 0)
        CHECK_MSG(f->blocks[b].count == 1000, "%s: count %llu, want 1000", f->blocks[b].name,
                  (unsigned long long)f->blocks[b].count);
      if (strcmp(f->blocks[b].name, "top") == 0)
        CHECK_MSG(f->blocks[b].count == 778, "top: count %llu, want 778", (unsigned long long)f->blocks[b].count);
    }
    pa_profile_free(p);
    same_profiles(mod, spec, "loop_exits.ll", (int)PT_ARRAY_LEN(modes));
  }
  pa_run_spec_free(spec);
  pa_module_free(m);
}

int main(void) {
  bool quick = getenv("PORTENT_TEST_QUICK") != NULL;
  check_shapes();
  const char *names[] = {"matmul:64,64,512", "conv2d_nchw:1,32,28,28,32,3,3,1,1"};
  for (size_t i = 0; i < PT_ARRAY_LEN(names); i++) for_each_schedule(names[i], quick ? 1 : 3, 29, check, (void *)names[i]);
  TEST_DONE();
}
