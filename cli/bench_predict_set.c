/* The candidate set of `portent bench predict` and its saved form: everything needed to
 * predict a machine's measured times later without running anything (the target file, the
 * records with their measured times, and the hardware-independent profiles, gzipped since a
 * fully unrolled schedule's profile is a megabyte of JSON). Cross-generation validation
 * (--cross A B) reads A's profiles and B's records and target. */
#include <cjson/cJSON.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <zlib.h>

#include "bench_predict.h"
#include "compiler.h"

static const char *const preset_names[BP_PRESETS] = {
    "patent", "patent+bw", "steady", "steady+mlp", "steady+bw", "full", "steady+bw-assoc", "steady+bw+overlap",
    "steady+bw+strides", "full+strides", "steady+bw+overlap+strides", "steady+bw+overlap+strides+carried",
    "steady+bw+overlap+strides+inflight", "steady+bw+overlap+strides+carried+inflight", "steady+bw+overlap+strides+lanes",
    "steady+bw+overlap+strides+lanes+sets", "steady+bw+overlap+strides+lanes+sets+carried",
    "steady+bw+overlap+strides+lanes+sets+carried+shared", "steady+bw+overlap+strides+lanes+sets+carried+shared+far",
    "steady+bw+overlap+strides+lanes+sets+carried+shared+far+busy",
    "steady+bw+overlap+strides+lanes+sets+carried+shared+far+busy+forward",
    "steady+bw+overlap+strides+lanes+sets+carried+shared+far+busy+forward+dirty",
    "steady+bw+overlap+strides+lanes+sets+carried+shared+far+busy+forward+dirty+llcwalk",
    "steady+bw+overlap+strides+lanes+sets+carried+shared+far+busy+forward+dirty+llcwalk+regs",
    "steady+bw+overlap+strides+lanes+sets+carried+shared+far+busy+forward+dirty+llcwalk+regs+memchain",
    "steady+bw+overlap+strides+lanes+sets+carried+shared+far+busy+forward+dirty+llcwalk+regs+memchain+setsum",
    "steady+bw+overlap+strides+lanes+sets+carried+shared+far+busy+forward+dirty+llcwalk+regs+memchain+setsum+streams",
    "steady+bw+overlap+strides+lanes+sets+carried+shared+far+busy+forward+dirty+llcwalk+regs+memchain+setsum+streams+cmpbr",
    "steady+bw+overlap+strides+lanes+sets+carried+shared+far+busy+forward+dirty+llcwalk+regs+memchain+setsum+streams+cmpbr+fold",
    "steady+bw+overlap+strides+lanes+sets+carried+shared+far+busy+forward+dirty+llcwalk+regs+memchain+setsum+streams+setns",
    "steady+bw+overlap+strides+lanes+sets+carried+shared+far+busy+forward+dirty+llcwalk+regs+memchain+setsum+streams+setloads"};
const char *bp_preset_name(int k) { return k >= 0 && k < BP_PRESETS ? preset_names[k] : "?"; }

bp_set *bp_set_new(void) {
  bp_set *s = calloc(1, sizeof *s);
  s->arena = pt_arena_new();
  s->threads = 1;
  return s;
}

void bp_set_free(bp_set *s) {
  if (!s) return;
  for (int i = 0; i < s->nw; i++) {
    bp_workload *w = &s->w[i];
    if (!s->borrowed)
      for (int j = 0; j < w->n; j++) pa_profile_free(w->prof[j]);
    free(w->meas), free(w->meas_min), free(w->repeats), free(w->prof), free(w->steps), free(w->record), free(w->candidate);
    for (int k = 0; k < BP_PRESETS; k++) free(w->pred[k]);
  }
  pt_arena_free(s->arena);
  free(s);
}

bp_workload *bp_set_workload(bp_set *s, const char *name) {
  for (int i = 0; i < s->nw; i++)
    if (strcmp(s->w[i].name, name) == 0) return &s->w[i];
  if (s->nw == (int)PT_ARRAY_LEN(s->w)) return NULL;
  bp_workload *w = &s->w[s->nw++];
  memset(w, 0, sizeof *w);
  w->name = pt_strdup(s->arena, name);
  return w;
}

void bp_set_add(bp_set *s, bp_workload *w, int candidate, double meas, pa_profile *p, const char *steps,
                const char *record) {
  if (w->n == w->cap) {
    w->cap = w->cap ? 2 * w->cap : 32;
    w->meas = realloc(w->meas, sizeof *w->meas * w->cap);
    w->meas_min = realloc(w->meas_min, sizeof *w->meas_min * w->cap);
    w->repeats = realloc(w->repeats, sizeof *w->repeats * w->cap);
    w->prof = realloc(w->prof, sizeof *w->prof * w->cap);
    w->steps = realloc(w->steps, sizeof *w->steps * w->cap);
    w->record = realloc(w->record, sizeof *w->record * w->cap);
    w->candidate = realloc(w->candidate, sizeof *w->candidate * w->cap);
    for (int k = 0; k < BP_PRESETS; k++) w->pred[k] = realloc(w->pred[k], sizeof(double) * w->cap);
  }
  int j = w->n++;
  w->meas[j] = meas, w->prof[j] = p, w->candidate[j] = candidate, w->meas_min[j] = NAN, w->repeats[j] = 0;
  w->steps[j] = steps ? pt_strdup(s->arena, steps) : "[]";
  w->record[j] = record ? pt_strdup(s->arena, record) : NULL;
  for (int k = 0; k < BP_PRESETS; k++) w->pred[k][j] = 0;
}

void bp_set_add_spread(bp_workload *w, double min_s, int repeats) {
  if (w->n > 0) w->meas_min[w->n - 1] = min_s, w->repeats[w->n - 1] = repeats;
}

int bp_set_use_min(bp_set *s) {
  int k = 0;
  for (int i = 0; i < s->nw; i++)
    for (int j = 0; j < s->w[i].n; j++)
      if (s->w[i].meas_min[j] > 0) s->w[i].meas[j] = s->w[i].meas_min[j], k++;
  return k;
}

void bp_set_dir(const char *name, char *buf, size_t cap) {
  struct stat st;
  if (strchr(name, '/') || (stat(name, &st) == 0 && S_ISDIR(st.st_mode))) snprintf(buf, cap, "%s", name);
  else snprintf(buf, cap, "%s/../data/predict/%s", ptg_shipped_dir(), name); /* the source tree's */
}

int bp_mkdir_p(const char *dir, pt_diag *d) {
  char buf[1024];
  snprintf(buf, sizeof buf, "%s", dir);
  for (char *p = buf + 1; *p; p++)
    if (*p == '/') {
      *p = 0;
      if (mkdir(buf, 0777) != 0 && errno != EEXIST) return pt_fail(d, PT_ERR_IO, "%s: %s", buf, strerror(errno));
      *p = '/';
    }
  if (mkdir(buf, 0777) != 0 && errno != EEXIST) return pt_fail(d, PT_ERR_IO, "%s: %s", buf, strerror(errno));
  return 0;
}

char *bp_record_line(const char *line, const char *platform, const char *workload, int candidate, int threads,
                     double min_s, int repeats, const char *more) {
  size_t n = strlen(line);
  while (n > 0 && line[n - 1] != '}') n--;
  if (n == 0) return NULL;
  if (!more) more = "";
  size_t cap = n + strlen(platform) + strlen(workload) + strlen(more) + 192;
  char *out = malloc(cap), spread[96] = "";
  if (min_s > 0) snprintf(spread, sizeof spread, ", \"min_s\": %.9g, \"repeats\": %d", min_s, repeats);
  snprintf(out, cap, "%.*s, \"portent\": {\"platform\": \"%s\", \"workload\": \"%s\", \"candidate\": %d, \"threads\": %d%s%s}}",
           (int)(n - 1), line, platform, workload, candidate, threads, spread, more);
  return out;
}

int bp_save(const bp_set *s, const char *dir, const char *platform, const char *target_path, pt_diag *d) {
  char path[1200];
  int rc = bp_mkdir_p(dir, d);
  if (rc) return rc;
  size_t len;
  char *target = pt_read_file(target_path, &len, d);
  if (!target) return PT_ERR_IO;
  snprintf(path, sizeof path, "%s/target.json", dir);
  rc = pt_write_file_atomic(path, target, len, d);
  free(target);
  if (rc) return rc;
  /* records: one buffer, one atomic write */
  size_t cap = 1 << 16, used = 0;
  char *rec = malloc(cap);
  for (int i = 0; i < s->nw; i++)
    for (int j = 0; j < s->w[i].n; j++) {
      if (!s->w[i].record[j]) continue;
      char *line = bp_record_line(s->w[i].record[j], platform, s->w[i].name, s->w[i].candidate[j], s->threads,
                                  s->w[i].meas_min[j], s->w[i].repeats[j], s->cpu_clock ? ", \"clock\": \"cpu\"" : NULL);
      if (!line) continue;
      size_t l = strlen(line);
      while (used + l + 2 > cap) cap *= 2, rec = realloc(rec, cap);
      memcpy(rec + used, line, l), used += l, rec[used++] = '\n';
      free(line);
    }
  snprintf(path, sizeof path, "%s/records.jsonl", dir);
  rc = pt_write_file_atomic(path, rec, used, d);
  free(rec);
  if (rc) return rc;
  return bp_save_profiles(s, dir, d);
}

int bp_save_profiles(const bp_set *s, const char *dir, pt_diag *d) {
  char path[1200], tmp[1300];
  int rc = 0;
  snprintf(path, sizeof path, "%s/profiles.jsonl.gz", dir);
  snprintf(tmp, sizeof tmp, "%s.tmp", path);
  gzFile gz = gzopen(tmp, "wb9");
  if (!gz) return pt_fail(d, PT_ERR_IO, "%s: cannot write", tmp);
  for (int i = 0; i < s->nw && rc == 0; i++)
    for (int j = 0; j < s->w[i].n && rc == 0; j++) {
      char *json = pa_profile_to_json(s->w[i].prof[j]);
      if (!json || gzprintf(gz, "{\"workload\": \"%s\", \"candidate\": %d, \"profile\": ", s->w[i].name,
                            s->w[i].candidate[j]) <= 0 ||
          gzwrite(gz, json, (unsigned)strlen(json)) <= 0 || gzputs(gz, "}\n") < 0)
        rc = pt_fail(d, PT_ERR_IO, "%s: write failed", tmp);
      free(json);
    }
  if (gzclose(gz) != Z_OK && rc == 0) rc = pt_fail(d, PT_ERR_IO, "%s: write failed", tmp);
  if (rc == 0 && rename(tmp, path) != 0) rc = pt_fail(d, PT_ERR_IO, "%s: %s", path, strerror(errno));
  if (rc) remove(tmp);
  return rc;
}

/* Whole gzipped file, NUL-terminated (plain files read too: gzread passes them through). */
static char *read_gz(const char *path, pt_diag *d) {
  gzFile gz = gzopen(path, "rb");
  if (!gz) {
    pt_fail(d, PT_ERR_IO, "%s: %s", path, strerror(errno));
    return NULL;
  }
  size_t cap = 1 << 20, used = 0;
  char *buf = malloc(cap);
  for (;;) {
    if (cap - used < (1 << 16)) cap *= 2, buf = realloc(buf, cap);
    int got = gzread(gz, buf + used, (unsigned)(cap - used - 1));
    if (got < 0) {
      int err;
      pt_fail(d, PT_ERR_INPUT, "%s: corrupt gzip data: %s", path, gzerror(gz, &err));
      gzclose(gz), free(buf);
      return NULL;
    }
    if (got == 0) break;
    used += (size_t)got;
  }
  gzclose(gz);
  buf[used] = 0;
  return buf;
}

static int find(const bp_workload *w, int candidate) {
  for (int j = 0; j < w->n; j++)
    if (w->candidate[j] == candidate) return j;
  return -1;
}

bp_set *bp_load(const char *dir, bool profiles, pt_diag *d) {
  char path[1200];
  snprintf(path, sizeof path, "%s/records.jsonl", dir);
  size_t len;
  char *text = pt_read_file(path, &len, d);
  if (!text) return NULL;
  bp_set *s = bp_set_new();
  pc_record *r = malloc(sizeof *r);
  int line_no = 0;
  for (char *line = text, *next; line && *line; line = next) {
    next = strchr(line, '\n');
    if (next) *next++ = 0;
    line_no++;
    int rc = pc_record_parse(line, r, d);
    if (rc == PC_RECORD_SKIP) continue;
    cJSON *o = rc == 0 ? cJSON_Parse(line) : NULL;
    const cJSON *x = cJSON_GetObjectItemCaseSensitive(o, "portent");
    const cJSON *wl = cJSON_GetObjectItemCaseSensitive(x, "workload");
    const cJSON *cand = cJSON_GetObjectItemCaseSensitive(x, "candidate");
    const cJSON *th = cJSON_GetObjectItemCaseSensitive(x, "threads");
    const cJSON *mn = cJSON_GetObjectItemCaseSensitive(x, "min_s"), *rp = cJSON_GetObjectItemCaseSensitive(x, "repeats");
    if (rc != 0 || !cJSON_IsString(wl) || !cJSON_IsNumber(cand)) {
      if (rc == 0) pt_fail(d, PT_ERR_INPUT, "%s:%d: no \"portent\": {\"workload\", \"candidate\"} (not a saved set?)",
                           path, line_no);
      else pt_fail(d, PT_ERR_INPUT, "%s:%d: %s", path, line_no, pt_sprintf(s->arena, "%s", d->msg));
      cJSON_Delete(o);
      goto fail;
    }
    if (cJSON_IsNumber(th)) s->threads = th->valueint;
    const cJSON *clock = cJSON_GetObjectItemCaseSensitive(x, "clock");
    if (cJSON_IsString(clock) && strcmp(clock->valuestring, "cpu") == 0) s->cpu_clock = true;
    bp_workload *w = bp_set_workload(s, wl->valuestring);
    char *steps = pc_steps_to_json(r->n_steps, r->steps);
    if (w && r->error_code == PC_MEASURE_OK && r->n_costs > 0 && r->costs[0] > 0) {
      bp_set_add(s, w, cand->valueint, r->costs[0], NULL, steps, line);
      if (cJSON_IsNumber(mn)) bp_set_add_spread(w, mn->valuedouble, cJSON_IsNumber(rp) ? rp->valueint : 0);
    }
    free(steps);
    cJSON_Delete(o);
  }
  if (profiles) {
    snprintf(path, sizeof path, "%s/profiles.jsonl.gz", dir);
    char *gz = read_gz(path, d);
    if (!gz) goto fail;
    line_no = 0;
    for (char *line = gz, *next; line && *line; line = next) {
      next = strchr(line, '\n');
      if (next) *next++ = 0;
      line_no++;
      cJSON *o = cJSON_Parse(line);
      const cJSON *wl = cJSON_GetObjectItemCaseSensitive(o, "workload");
      const cJSON *cand = cJSON_GetObjectItemCaseSensitive(o, "candidate");
      const cJSON *prof = cJSON_GetObjectItemCaseSensitive(o, "profile");
      if (!cJSON_IsString(wl) || !cJSON_IsNumber(cand) || !cJSON_IsObject(prof)) {
        pt_fail(d, PT_ERR_INPUT, "%s: line %d: expected {\"workload\", \"candidate\", \"profile\"}", path, line_no);
        cJSON_Delete(o), free(gz);
        goto fail;
      }
      bp_workload *w = bp_set_workload(s, wl->valuestring);
      int j = w ? find(w, cand->valueint) : -1;
      if (j >= 0 && !w->prof[j]) {
        char *pj = cJSON_PrintUnformatted(prof);
        char *name = pt_sprintf(s->arena, "%s: line %d", path, line_no);
        w->prof[j] = pj ? pa_profile_parse(pj, name, d) : NULL;
        free(pj);
        if (!w->prof[j]) {
          cJSON_Delete(o), free(gz);
          goto fail;
        }
      }
      cJSON_Delete(o);
    }
    free(gz);
    /* a record without a profile cannot be predicted: drop it */
    for (int i = 0; i < s->nw; i++) {
      bp_workload *w = &s->w[i];
      int k = 0;
      for (int j = 0; j < w->n; j++)
        if (w->prof[j]) {
          w->meas[k] = w->meas[j], w->prof[k] = w->prof[j], w->steps[k] = w->steps[j];
          w->meas_min[k] = w->meas_min[j], w->repeats[k] = w->repeats[j];
          w->record[k] = w->record[j], w->candidate[k] = w->candidate[j], k++;
        }
      w->n = k;
    }
  }
  free(r), free(text);
  return s;
fail:
  free(r), free(text);
  bp_set_free(s);
  return NULL;
}

int bp_apply_steps(pc_state *s, const char *steps_json, pt_diag *d) {
  pc_step *steps = malloc(sizeof *steps * PC_MAX_STEPS);
  int n_steps = 0;
  int rc = pc_steps_from_json(steps_json, &n_steps, steps, PC_MAX_STEPS, d);
  if (rc == 0) rc = pc_state_apply_all(s, n_steps, steps, d);
  free(steps);
  return rc;
}
