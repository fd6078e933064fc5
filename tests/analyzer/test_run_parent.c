/* What the run leaves in the process that profiles (it compiles the instrumented module
 * itself since session 16, run.c and jit.c): the native codegen exactly as before (the
 * instrumented compile's LLVM options are put back), and arguments kept between runs exactly
 * as filled (a kernel's writes stay in the forked child). And a process that saw a kernel
 * crash profiles the next one as before. */
#include <llvm-c/Core.h>
#include <llvm-c/Target.h>
#include <llvm-c/TargetMachine.h>

#include "analyzer/analyzer.h"
#include "test.h"

/* FNV-1a of the host assembly of m's module at O3, as portent's native compiles make it. */
static uint64_t native_asm_hash(pa_module *m) {
  LLVMInitializeNativeTarget();
  LLVMInitializeNativeAsmPrinter();
  char *triple = LLVMGetDefaultTargetTriple(), *err = NULL;
  LLVMTargetRef target;
  CHECK(!LLVMGetTargetFromTriple(triple, &target, &err));
  char *cpu = LLVMGetHostCPUName(), *features = LLVMGetHostCPUFeatures();
  LLVMTargetMachineRef tm = LLVMCreateTargetMachine(target, triple, cpu, features, LLVMCodeGenLevelAggressive,
                                                    LLVMRelocPIC, LLVMCodeModelDefault);
  LLVMModuleRef copy = LLVMCloneModule(pa_module_llvm(m));
  LLVMMemoryBufferRef out = NULL;
  CHECK_MSG(!LLVMTargetMachineEmitToMemoryBuffer(tm, copy, LLVMAssemblyFile, &err, &out), "%s", err ? err : "");
  uint64_t h = 1469598103934665603ULL;
  const unsigned char *p = (const unsigned char *)LLVMGetBufferStart(out);
  for (size_t i = 0; i < LLVMGetBufferSize(out); i++) h = (h ^ p[i]) * 1099511628211ULL;
  LLVMDisposeMemoryBuffer(out);
  LLVMDisposeModule(copy);
  LLVMDisposeTargetMachine(tm);
  LLVMDisposeMessage(cpu);
  LLVMDisposeMessage(features);
  LLVMDisposeMessage(triple);
  return h;
}

static pa_profile *build(pa_module *m, const char *spec_json, const pa_options *opt) {
  pt_diag d = {0};
  pa_run_spec *s = pa_run_spec_parse(spec_json, "spec.json", &d);
  CHECK_MSG(s, "%s", d.msg);
  pa_profile *p = s ? pa_profile_build(m, s, opt, &d) : NULL;
  if (!p) fprintf(stderr, "build: %s\n", d.msg);
  pa_run_spec_free(s);
  return p;
}

/* The count of bump's loop block: its buffer's first word as filled (at least 1). */
static uint64_t loop_count(pa_module *m, const char *spec_json) {
  pa_profile *p = build(m, spec_json, &(pa_options){.no_reuse = true});
  CHECK(p);
  if (!p) return 0;
  const pa_function *f = pa_profile_function(p, "bump");
  uint64_t n = f && f->n_blocks == 3 ? f->blocks[1].count : 0;
  pa_profile_free(p);
  return n;
}

int main(void) {
  pt_diag d = {0};
  pa_module *gemm = pa_module_load(PA_KERNEL_DIR "/gemm.ll", &d);
  CHECK_MSG(gemm, "%s", d.msg);
  pa_run_spec *gs = pa_run_spec_load(PA_FIXTURE_DIR "/gemm_spec.json", &d);
  CHECK_MSG(gs, "%s", d.msg);
  if (gemm && gs) {
    uint64_t before = native_asm_hash(gemm);
    pa_profile *p = pa_profile_build(gemm, gs, &(pa_options){.sample_rate = 0.01, .line_filter = true}, &d);
    CHECK_MSG(p, "%s", d.msg);
    pa_profile_free(p);
    CHECK_MSG(native_asm_hash(gemm) == before, "an instrumented run changed the native code of gemm.ll");
  }
  pa_run_spec_free(gs);

  pa_module *bump = pa_module_load(PA_FIXTURE_DIR "/bump.ll", &d);
  CHECK_MSG(bump, "%s", d.msg);
  pa_module *crash = pa_module_load(PA_FIXTURE_DIR "/crash.ll", &d);
  CHECK_MSG(crash, "%s", d.msg);
  if (bump && crash) {
    const char *a = "{\"entry\":\"bump\",\"args\":[{\"kind\":\"buffer\",\"type\":\"i32\",\"count\":16}]}";
    const char *b = "{\"entry\":\"bump\",\"seed\":7,\"args\":[{\"kind\":\"buffer\",\"type\":\"i32\",\"count\":16}]}";
    uint64_t first = loop_count(bump, a), again = loop_count(bump, a);
    CHECK_MSG(first >= 1 && first <= 100, "bump looped %llu times: its word is not as filled", (unsigned long long)first);
    CHECK_MSG(again == first, "the second run looped %llu times, the first %llu: the kept arguments changed",
              (unsigned long long)again, (unsigned long long)first);
    uint64_t other = loop_count(bump, b); /* other arguments, then the first ones made again */
    CHECK_MSG(other >= 1 && other <= 100, "seed 7: %llu loops", (unsigned long long)other);
    pa_profile *p = build(crash, "{\"entry\":\"crash\",\"args\":[{\"kind\":\"null\"}]}", &(pa_options){0});
    CHECK_MSG(!p, "the crashing kernel gave a profile");
    pa_profile_free(p);
    uint64_t third = loop_count(bump, a);
    CHECK_MSG(third == first, "after other arguments and a crash: %llu loops, first %llu", (unsigned long long)third,
              (unsigned long long)first);
  }
  pa_module_free(crash);
  pa_module_free(bump);
  pa_module_free(gemm);
  TEST_DONE();
}
