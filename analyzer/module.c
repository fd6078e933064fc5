/* Loading an LLVM module (.ll text or .bc bitcode) with the parser's own diagnostics, and the
 * small helpers every pass shares: a pointer map and the list of defined functions. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>
#include <llvm-c/Analysis.h>
#include <llvm-c/IRReader.h>

#include "internal.h"

pa_module *pa_module_load(const char *path, pt_diag *d) {
  LLVMMemoryBufferRef buf = NULL;
  char *msg = NULL;
  if (LLVMCreateMemoryBufferWithContentsOfFile(path, &buf, &msg)) {
    pt_fail(d, PT_ERR_IO, "%s: cannot open: %s", path, msg ? msg : "?");
    LLVMDisposeMessage(msg);
    return NULL;
  }
  size_t n = LLVMGetBufferSize(buf);
  const unsigned char *s = (const unsigned char *)LLVMGetBufferStart(buf);
  /* Raw bitcode magic 'BC' 0xC0DE, or the bitcode wrapper header 0x0B17C0DE. */
  bool bitcode = n >= 4 && ((s[0] == 'B' && s[1] == 'C' && s[2] == 0xC0 && s[3] == 0xDE) ||
                            (s[0] == 0xDE && s[1] == 0xC0 && s[2] == 0x17 && s[3] == 0x0B));
  LLVMContextRef ctx = LLVMContextCreate();
  LLVMModuleRef mod = NULL;
  /* LLVMParseIRInContext reads bitcode too (llvm::parseIR checks the magic) and, unlike
   * LLVMParseBitcodeInContext2, returns the reader's error instead of letting the context's
   * default diagnostic handler print it and exit the process. */
  if (LLVMParseIRInContext(ctx, buf, &mod, &msg)) { /* takes the buffer */
    /* LLVM's message is "file:line:col: error: ..." (text) or "file: error: ..." (bitcode),
     * then for text the offending line and a caret. */
    size_t len = msg ? strlen(msg) : 0;
    while (len && (msg[len - 1] == '\n')) msg[--len] = 0;
    pt_fail(d, PT_ERR_INPUT, "%s%s", msg ? msg : path, bitcode ? " (malformed LLVM bitcode)" : "");
    LLVMDisposeMessage(msg);
    LLVMContextDispose(ctx);
    return NULL;
  }
  if (LLVMVerifyModule(mod, LLVMReturnStatusAction, &msg)) {
    pt_fail(d, PT_ERR_INPUT, "%s: invalid IR: %s", path, msg ? msg : "?");
    LLVMDisposeMessage(msg);
    LLVMDisposeModule(mod);
    LLVMContextDispose(ctx);
    return NULL;
  }
  LLVMDisposeMessage(msg);
  pa_module *m = calloc(1, sizeof *m);
  m->ctx = ctx;
  m->mod = mod;
  snprintf(m->source_buf, sizeof m->source_buf, "%s", path);
  m->source = m->source_buf;
  return m;
}

pa_module *pa_module_from_llvm(LLVMModuleRef mod) {
  pa_module *m = calloc(1, sizeof *m);
  m->mod = mod;
  m->source = "<memory>";
  return m;
}

LLVMModuleRef pa_module_llvm(const pa_module *m) { return m->mod; }

void pa_module_free(pa_module *m) {
  if (!m) return;
  if (m->ctx) {
    LLVMDisposeModule(m->mod);
    LLVMContextDispose(m->ctx);
  }
  free(m);
}

int pa_defined_functions(LLVMModuleRef mod, LLVMValueRef **out) {
  int n = 0, cap = 16;
  LLVMValueRef *fs = malloc(sizeof *fs * cap);
  for (LLVMValueRef f = LLVMGetFirstFunction(mod); f; f = LLVMGetNextFunction(f)) {
    if (LLVMIsDeclaration(f)) continue;
    size_t len;
    const char *name = LLVMGetValueName2(f, &len);
    if (strncmp(name, "__pa_", 5) == 0) continue; /* our own wrapper */
    if (n == cap) fs = realloc(fs, sizeof *fs * (cap *= 2));
    fs[n++] = f;
  }
  *out = fs;
  return n;
}

const char *pa_value_name(pt_arena *a, LLVMValueRef v) {
  size_t len;
  const char *s = LLVMGetValueName2(v, &len);
  return pt_strdup(a, s ? s : "");
}

int pa_json_error_line(const char *text) {
  const char *at = cJSON_GetErrorPtr();
  int line = 1;
  for (const char *p = text; at && p < at && *p; p++) line += *p == '\n';
  return line;
}

/* ------------------------------------------------------------- pointer map */
static size_t ptr_hash(const void *p) {
  uint64_t x = (uint64_t)(uintptr_t)p;
  x ^= x >> 33;
  x *= 0xff51afd7ed558ccdULL; /* murmur3 fmix64 constant */
  x ^= x >> 33;
  return (size_t)x;
}

void pa_ptrmap_init(pa_ptrmap *m, size_t expected) {
  m->cap = 16;
  while (m->cap < expected * 2 + 2) m->cap *= 2;
  m->keys = calloc(m->cap, sizeof *m->keys);
  m->vals = calloc(m->cap, sizeof *m->vals);
  m->n = 0;
}

void pa_ptrmap_put(pa_ptrmap *m, const void *key, int val) {
  if ((m->n + 1) * 2 > m->cap) {
    pa_ptrmap old = *m;
    pa_ptrmap_init(m, old.cap);
    for (size_t i = 0; i < old.cap; i++)
      if (old.keys[i]) pa_ptrmap_put(m, old.keys[i], old.vals[i]);
    pa_ptrmap_free(&old);
  }
  size_t i = ptr_hash(key) & (m->cap - 1);
  while (m->keys[i] && m->keys[i] != key) i = (i + 1) & (m->cap - 1);
  if (!m->keys[i]) m->n++;
  m->keys[i] = key;
  m->vals[i] = val;
}

int pa_ptrmap_get(const pa_ptrmap *m, const void *key) {
  size_t i = ptr_hash(key) & (m->cap - 1);
  while (m->keys[i]) {
    if (m->keys[i] == key) return m->vals[i];
    i = (i + 1) & (m->cap - 1);
  }
  return -1;
}

void pa_ptrmap_free(pa_ptrmap *m) {
  free(m->keys);
  free(m->vals);
  m->keys = NULL;
  m->vals = NULL;
}

const char *pa_callee_name(LLVMValueRef call) {
  LLVMValueRef f = LLVMGetCalledValue(call);
  if (!f || !LLVMIsAFunction(f)) return "";
  size_t len;
  return LLVMGetValueName2(f, &len);
}
