/* Corrupted target descriptions: each row edits one spot of a valid file and expects the
 * load to fail with a message naming the JSON path (table-driven, as libpfm4's validate). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "targets/targets.h"
#include "test.h"

static const char base[] =
    "{\"version\": 1, \"name\": \"t\",\n"
    " \"provenance\": {\"kind\": \"published\", \"sources\": [\"a\"]},\n"
    " \"cpu\": {\"isa\": \"x86_64\", \"microarchitecture\": \"x\", \"cores\": 2, \"frequency_ghz\": 3.0,\n"
    "         \"native_vector_bits\": 256, \"issue_width\": 4},\n"
    " \"units\": [{\"name\": \"fp\", \"pipes\": 2}],\n"
    " \"instructions\": [\n"
    "   {\"op\": \"add\", \"type\": \"f32\", \"bits\": 256, \"latency\": 3, \"recip_throughput\": 0.5, \"unit\": \"fp\"},\n"
    "   {\"op\": \"fma\", \"type\": \"f32\", \"bits\": 256, \"latency\": {\"value\": 4, \"spread\": 0.01, \"reps\": 3}, \"recip_throughput\": 0.5}],\n"
    " \"caches\": [{\"level\": 1, \"size\": 32768, \"line\": 64, \"latency_cycles\": 4,\n"
    "              \"bandwidth_gbs\": [{\"threads\": 1, \"read\": 100}]}],\n"
    " \"memory\": {\"latency_ns\": 80},\n"
    " \"runtime\": [{\"threads\": 2, \"fork_join_ns\": 1000}]}\n";

typedef struct {
  const char *find, *replace; /* NULL find: truncate at byte `replace` as a number */
  const char *expect;         /* substring of the error message */
} row;

static const row rows[] = {
    {"\"version\": 1", "\"version\": 7", "version: unsupported version 7"},
    {"\"version\": 1,", "", "version: missing"},
    {"\"version\": 1", "\"version\": \"1\"", "version: expected a number"},
    {"\"latency\": 3", "\"latency\": -3", "instructions[0].latency: -3 is out of range"},
    {"\"latency\": 3", "\"latency\": \"fast\"", "instructions[0].latency: expected a number"},
    {"\"value\": 4", "\"value\": \"x\"", "instructions[1].latency.value: expected a number"},
    {"\"recip_throughput\": 0.5}]", "\"recip_throughput\": 0}]", "instructions[1].recip_throughput: 0 is out of range"},
    {"\"op\": \"add\"", "\"op\": \"frob\"", "instructions[0].op: unknown operation class"},
    {"\"type\": \"f32\"", "\"type\": \"f33\"", "instructions[0].type: unknown element type"},
    {"\"bits\": 256", "\"bits\": 40", "instructions[0].bits: 40 is not a whole number"},
    {"\"type\": \"f32\", \"bits\": 256, \"latency\": {", "\"type\": \"f32\", \"bits\": 256, \"x\": 0, \"latency\": {", NULL},
    {"\"op\": \"fma\"", "\"op\": \"add\"", "instructions[1]: duplicate of instructions[0]"},
    {"\"size\": 32768", "\"size\": 16", "caches[0].size: smaller than a line"},
    {"\"line\": 64", "\"line\": 48", "caches[0].line: must be a power of two"},
    {"\"level\": 1", "\"level\": 2", "caches[0].level: expected 1"},
    {"\"read\": 100", "\"read\": -1", "caches[0].bandwidth_gbs[0].read: -1 is out of range"},
    {"\"threads\": 1,", "", "caches[0].bandwidth_gbs[0].threads: missing"},
    {"\"cores\": 2", "\"cores\": 0", "cpu.cores: must be at least 1"},
    {"\"cores\": 2", "\"cores\": 2.5", "cpu.cores: expected an integer"},
    {"\"kind\": \"published\"", "\"kind\": \"guessed\"", "provenance.kind"},
    {"\"caches\": [", "\"caches\": {\"a\": 1}, \"x\": [", "caches: expected an array"},
    {"\"memory\": {\"latency_ns\": 80}", "\"memory\": 80", "memory: expected an object"},
    {"\"fork_join_ns\": 1000", "\"fork_join_ns\": -1", "runtime[0].fork_join_ns: -1 is out of range"},
    {"\"sources\": [\"a\"]", "\"sources\": [1]", "provenance.sources[0]: expected a string"},
    {"\"unit\": \"fp\"", "\"unit\": \"fq\"", "instructions[0].unit: \"fq\" is not one of the file's units"},
    {"\"pipes\": 2", "\"pipes\": \"two\"", "units[0].pipes: expected a number"},
    {"\"memory\": {\"latency_ns\": 80}", "\"memory\": {\"latency_ns\": 80}, \"gpu\": {\"name\": \"x\", \"sms\": 0}", "gpu.sms: must be at least 1"},
    {"\"memory\": {\"latency_ns\": 80}", "\"memory\": {\"latency_ns\": 80}, \"gpu\": {\"sms\": 2}", "gpu.name: missing"},
    {NULL, "200", "not valid JSON"},
};

static char *edit(const row *r) {
  char *out = malloc(sizeof base + 256);
  if (!r->find) {
    size_t n = (size_t)atoi(r->replace);
    memcpy(out, base, n);
    out[n] = 0;
    return out;
  }
  const char *at = strstr(base, r->find);
  if (!at) {
    free(out);
    return NULL;
  }
  size_t pre = (size_t)(at - base);
  memcpy(out, base, pre);
  strcpy(out + pre, r->replace);
  strcat(out, at + strlen(r->find));
  return out;
}

int main(void) {
  pt_diag d = {0};
  ptg_target *t = ptg_target_parse(base, "base.json", &d);
  CHECK_MSG(t != NULL, "%s", d.msg);
  ptg_target_free(t);
  for (size_t i = 0; i < PT_ARRAY_LEN(rows); i++) {
    char *text = edit(&rows[i]);
    CHECK_MSG(text != NULL, "row %zu: '%s' not in the base file", i, rows[i].find);
    if (!text) continue;
    pt_diag_clear(&d);
    t = ptg_target_parse(text, "bad.json", &d);
    if (!rows[i].expect) { /* unknown keys are ignored (forward compatible) */
      CHECK_MSG(t != NULL, "row %zu: %s", i, d.msg);
    } else {
      CHECK_MSG(t == NULL, "row %zu: loaded", i);
      CHECK_MSG(strstr(d.msg, rows[i].expect) && strncmp(d.msg, "bad.json: ", 10) == 0,
                "row %zu: got '%s', expected '%s'", i, d.msg, rows[i].expect);
    }
    ptg_target_free(t);
    free(text);
  }
  TEST_DONE();
}
