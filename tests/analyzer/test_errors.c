/* Bad inputs give clear errors that name the input: malformed IR (LLVM's file:line:col),
 * a missing entry, a spec with a missing or mistyped argument or a too-small buffer, a kernel
 * that crashes or hangs under instrumentation (and no profile file is left behind). */
#include <stdlib.h>
#include <unistd.h>

#include <llvm-c/BitWriter.h>

#include "analyzer/analyzer.h"
#include "test.h"

static pa_module *load_kernel(const char *name) {
  char path[512];
  snprintf(path, sizeof path, "%s/%s.ll", PA_KERNEL_DIR, name);
  pt_diag d = {0};
  pa_module *m = pa_module_load(path, &d);
  CHECK_MSG(m, "%s", d.msg);
  return m;
}

/* Builds a profile from a spec and writes it to out_path only on success, as the CLI does;
 * returns the diagnostic text. */
static const char *try_build(pa_module *m, const char *spec_json, const char *out_path, pt_diag *d) {
  pt_diag_clear(d);
  pa_run_spec *s = pa_run_spec_parse(spec_json, "spec.json", d);
  if (!s) return d->msg;
  pa_options opt = {0};
  pa_profile *p = pa_profile_build(m, s, &opt, d);
  if (p) pa_profile_save(p, out_path, d);
  pa_profile_free(p);
  pa_run_spec_free(s);
  if (!p) fprintf(stderr, "expected error: %s\n", d->msg);
  return p ? "" : d->msg;
}

int main(void) {
  pt_diag d = {0};
  char dir[] = "/tmp/pa_errors_XXXXXX";
  CHECK(mkdtemp(dir));
  char bad[600], out[600];
  snprintf(bad, sizeof bad, "%s/bad.ll", dir);
  snprintf(out, sizeof out, "%s/profile.json", dir);
  FILE *f = fopen(bad, "w");
  fputs("define void @f() {\nentry:\n  %x = fadd float 1.0, %nope\n  ret void\n}\n", f);
  fclose(f);

  /* Malformed IR: the parser's own position and message. */
  CHECK(pa_module_load(bad, &d) == NULL);
  fprintf(stderr, "expected error: %s\n", d.msg);
  CHECK_MSG(strstr(d.msg, "bad.ll:3:") && strstr(d.msg, "error:") && strstr(d.msg, "nope"), "%s", d.msg);
  CHECK(d.err == PT_ERR_INPUT);
  pt_diag_clear(&d);
  CHECK(pa_module_load("/nonexistent/x.ll", &d) == NULL && d.err == PT_ERR_IO);

  pa_module *gemm = load_kernel("gemm");
  if (gemm) {
    /* Bitcode: the same module reads back with the same id; a truncated file is an error
     * (LLVM's default handler would print and exit the process). */
    char bc[600], cut[600];
    snprintf(bc, sizeof bc, "%s/gemm.bc", dir);
    snprintf(cut, sizeof cut, "%s/cut.bc", dir);
    CHECK(LLVMWriteBitcodeToFile(pa_module_llvm(gemm), bc) == 0);
    size_t len = 0;
    char *bytes = pt_read_file(bc, &len, &d);
    FILE *cf = fopen(cut, "wb");
    fwrite(bytes, 1, len / 3, cf);
    fclose(cf);
    free(bytes);
    pa_module *g2 = pa_module_load(bc, &d);
    CHECK_MSG(g2, "%s", d.msg);
    pa_profile *s1 = pa_profile_static(gemm, &d), *s2 = g2 ? pa_profile_static(g2, &d) : NULL;
    CHECK(s1 && s2 && strcmp(s1->module_id, s2->module_id) == 0);
    pa_profile_free(s1);
    pa_profile_free(s2);
    pa_module_free(g2);
    pt_diag_clear(&d);
    CHECK(pa_module_load(cut, &d) == NULL);
    CHECK_MSG(strstr(d.msg, "cut.bc: error:") && strstr(d.msg, "(malformed LLVM bitcode)"), "%s", d.msg);
    fprintf(stderr, "expected error: %s\n", d.msg);
    unlink(bc);
    unlink(cut);

    const char *msg = try_build(gemm, "{\"entry\":\"gemm2\",\"args\":[]}", out, &d);
    CHECK_MSG(strstr(msg, "'gemm2' is not defined"), "%s", msg);
    msg = try_build(gemm,
                    "{\"entry\":\"gemm\",\"args\":[{\"kind\":\"buffer\",\"type\":\"f32\",\"count\":1440},"
                    "{\"kind\":\"buffer\",\"type\":\"f32\",\"count\":1760}]}",
                    out, &d);
    CHECK_MSG(strstr(msg, "gives 2 argument(s) but 'gemm' takes 3"), "%s", msg);
    msg = try_build(gemm,
                    "{\"entry\":\"gemm\",\"args\":[{\"kind\":\"buffer\",\"type\":\"f32\",\"count\":1440},"
                    "{\"kind\":\"scalar\",\"type\":\"i32\",\"value\":3},{\"kind\":\"buffer\",\"type\":\"f32\",\"count\":1584}]}",
                    out, &d);
    CHECK_MSG(strstr(msg, "args[1] does not match parameter 1") && strstr(msg, "ptr"), "%s", msg);
    msg = try_build(gemm, "{\"entry\":\"gemm\",\"args\":[{\"kind\":\"buffer\",\"type\":\"f32\"}]}", out, &d);
    CHECK_MSG(strstr(msg, "spec.json: args[0].count"), "%s", msg);
    msg = try_build(gemm, "{\"entry\":\"gemm\",\n\"args\":[}", out, &d);
    CHECK_MSG(strstr(msg, "spec.json:2: malformed JSON"), "%s", msg);
    /* B (args[2]) needs 44 x 36 floats; 1000 is too few: the guard page names it. */
    msg = try_build(gemm,
                    "{\"entry\":\"gemm\",\"args\":[{\"kind\":\"buffer\",\"type\":\"f32\",\"count\":1440},"
                    "{\"kind\":\"buffer\",\"type\":\"f32\",\"count\":1760},{\"kind\":\"buffer\",\"type\":\"f32\",\"count\":1000}]}",
                    out, &d);
    CHECK_MSG(strstr(msg, "SIGSEGV") && strstr(msg, "args[2]") && strstr(msg, "too small"), "%s", msg);
    CHECK(d.err == PT_ERR_RUNTIME);
    CHECK(access(out, F_OK) != 0); /* no profile written */
  }
  pa_module_free(gemm);

  pt_diag_clear(&d);
  pa_module *crash = pa_module_load(PA_FIXTURE_DIR "/crash.ll", &d);
  CHECK_MSG(crash, "%s", d.msg);
  if (crash) {
    const char *msg = try_build(crash, "{\"entry\":\"crash\",\"args\":[{\"kind\":\"null\"}]}", out, &d);
    CHECK_MSG(strstr(msg, "crash.ll: running 'crash': kernel crashed (SIGSEGV) at address 0x10"), "%s", msg);
    CHECK(access(out, F_OK) != 0);
  }
  pa_module_free(crash);

  pt_diag_clear(&d);
  pa_module *undef = pa_module_load(PA_FIXTURE_DIR "/undefined.ll", &d);
  if (undef) {
    const char *msg = try_build(undef, "{\"entry\":\"f\",\"args\":[{\"kind\":\"null\"}]}", out, &d);
    CHECK_MSG(strstr(msg, "'nonexistent_fn' is declared but defined neither"), "%s", msg);
  }
  pa_module_free(undef);

  pt_diag_clear(&d);
  pa_module *hang = pa_module_load(PA_FIXTURE_DIR "/hang.ll", &d);
  if (hang) {
    double t0 = pt_now();
    const char *msg = try_build(
        hang, "{\"entry\":\"hang\",\"timeout_s\":0.5,\"args\":[{\"kind\":\"buffer\",\"type\":\"i32\",\"count\":1}]}", out, &d);
    CHECK_MSG(strstr(msg, "'hang' did not finish within 0.5 s"), "%s", msg);
    CHECK(pt_now() - t0 < 5);
    CHECK(access(out, F_OK) != 0);
  }
  pa_module_free(hang);
  unlink(bad);
  rmdir(dir);
  TEST_DONE();
}
