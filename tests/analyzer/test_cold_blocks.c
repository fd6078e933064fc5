/* Cold blocks out of line (pa_options.inline_cold_blocks false, the default): a block executed at
 * most 1/PA_COLD_RATIO as often as its function's busiest calls the runtime's slow path every
 * time instead of testing its lines inline. The runtime repeats every inline test, so the
 * profile must be byte for byte the one with inline tests everywhere, with and without the line
 * filter, on portent kernels (default and random schedules); and the matmul's default schedule
 * (a 512-iteration k loop inside the tile loops) must have cold blocks, so less code. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <llvm-c/Analysis.h>
#include <llvm-c/Core.h>

#include "analyzer/internal.h"
#include "compiler/compiler.h"
#include "schedules.h"
#include "test.h"

/* IR instructions of mod instrumented for a line-filtered sampled run (on a copy). */
static int instrumented_size(LLVMModuleRef mod, bool inline_cold) {
  LLVMModuleRef copy = LLVMCloneModule(mod);
  pa_module *m = pa_module_from_llvm(copy);
  pt_diag d = {0};
  pa_profile *p = pa_profile_static(m, &d);
  CHECK_MSG(p, "%s", d.msg);
  int64_t locals = 0, n = 0;
  if (p && pa_instrument(copy, &(pa_hook_opts){PA_HOOKS_FILTERED, NULL, p, true, inline_cold}, &locals, NULL, &d) == PT_OK) {
    char *msg = NULL;
    CHECK_MSG(!LLVMVerifyModule(copy, LLVMReturnStatusAction, &msg), "the instrumented module does not verify: %s", msg);
    LLVMDisposeMessage(msg);
    for (LLVMValueRef f = LLVMGetFirstFunction(copy); f; f = LLVMGetNextFunction(f))
      for (LLVMBasicBlockRef b = LLVMGetFirstBasicBlock(f); b; b = LLVMGetNextBasicBlock(b))
        for (LLVMValueRef in = LLVMGetFirstInstruction(b); in; in = LLVMGetNextInstruction(in)) n++;
  }
  pa_profile_free(p);
  pa_module_free(m);
  LLVMDisposeModule(copy);
  return (int)n;
}

/* The profile's JSON (the caller frees), NULL when the run failed. */
static char *profile_json(pc_kernel *k, pa_options o, const char *what) {
  int nb = pc_kernel_n_buffers(k);
  int64_t sizes[PC_MAX_STAGES];
  for (int b = 0; b < nb; b++) sizes[b] = pc_kernel_buffer_numel(k, b);
  pa_run_spec *spec = pa_run_spec_portent(pc_kernel_name(k), nb, sizes, 1, 1);
  spec->timeout_s = 60;
  pt_diag d = {0};
  pa_profile *p = pa_profile_llvm(pc_kernel_module(k), spec, &o, &d);
  CHECK_MSG(p, "%s: %s", what, d.msg);
  char *json = p ? pa_profile_to_json(p) : NULL;
  pa_profile_free(p);
  pa_run_spec_free(spec);
  return json;
}

static void check(const char *what, const pc_state *s, bool is_default, void *name) {
  pt_diag d = {0};
  pc_kernel *k = pc_lower(s, &(pc_lower_opts){0}, &d);
  CHECK_MSG(k, "%s: %s", what, d.msg);
  if (!k) return;
  int out_of_line = instrumented_size(pc_kernel_module(k), false), inline_all = instrumented_size(pc_kernel_module(k), true);
  printf("  %s: %d IR instructions instrumented, %d with inline tests in every block\n", what, out_of_line, inline_all);
  CHECK_MSG(out_of_line <= inline_all, "%s: %d instructions out of line against %d inline", what, out_of_line, inline_all);
  if (is_default && strncmp(name, "matmul", 6) == 0)
    CHECK_MSG(out_of_line < inline_all, "%s: no cold block (the tile loops' stores of C)", what);
  const pa_options modes[] = {{.sample_rate = 0.01, .static_counts = true, .line_filter = true},
                              {.sample_rate = 0.01, .static_counts = true}};
  for (size_t i = 0; i < PT_ARRAY_LEN(modes); i++) {
    pa_options a = modes[i], b = modes[i];
    b.inline_cold_blocks = true;
    char *x = profile_json(k, a, what), *y = profile_json(k, b, what);
    CHECK_MSG(x && y && strcmp(x, y) == 0, "%s: %s: the profile with cold blocks out of line differs", what,
              modes[i].line_filter ? "line-filtered 1%" : "sampled 1%");
    free(x), free(y);
  }
  pc_kernel_free(k);
}

int main(void) {
  bool quick = getenv("PORTENT_TEST_QUICK") != NULL;
  const char *names[] = {"matmul:64,64,512", "conv2d_nchw:1,32,28,28,32,3,3,1,1"};
  for (size_t i = 0; i < PT_ARRAY_LEN(names); i++) for_each_schedule(names[i], quick ? 1 : 3, 17, check, (void *)names[i]);
  TEST_DONE();
}
