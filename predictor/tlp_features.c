/* TLP's features: the schedule primitives themselves, no program generated (TLP section 4).
 * Each step is one row: a one-hot of its kind, then its arguments in record order, numbers as
 * sign(x) log2(1 + |x|) and names (pragma names, cache scopes) as token ids of a vocabulary
 * built on the training set. Rows beyond seq_len and columns beyond emb are cropped. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tlp.h"

int pp_tlp_vocab_id(pp_tlp_vocab *v, const char *token, bool grow) {
  for (int i = 0; i < v->n; i++)
    if (strcmp(v->tokens[i], token) == 0) return i + 1;
  if (!grow) return 0;
  if (v->n == v->cap) {
    v->cap = v->cap ? v->cap * 2 : 16;
    v->tokens = realloc(v->tokens, sizeof(char *) * (size_t)v->cap);
  }
  v->tokens[v->n++] = strdup(token);
  return v->n;
}

void pp_tlp_vocab_clear(pp_tlp_vocab *v) {
  for (int i = 0; i < v->n; i++) free(v->tokens[i]);
  free(v->tokens);
  memset(v, 0, sizeof *v);
}

static float mag(double x) { return (float)(x < 0 ? -log2(1 - x) : log2(1 + x)); }

typedef struct {
  float *row;
  int emb, col;
} row_writer;

static void put_num(row_writer *w, double x) {
  if (w->col < w->emb) w->row[w->col] = mag(x);
  w->col++;
}

static void put_token(row_writer *w, pp_tlp_vocab *v, bool grow, const char *token) {
  if (w->col < w->emb) w->row[w->col] = (float)pp_tlp_vocab_id(v, token, grow);
  w->col++;
}

static void put_ids(row_writer *w, int n, const int *ids) {
  for (int i = 0; i < n; i++) put_num(w, ids[i]);
}

static void encode_step(const pc_step *s, pp_tlp_vocab *v, bool grow, row_writer *w) {
  if ((int)s->kind < w->emb) w->row[s->kind] = 1;
  w->col = PC_STEP_COUNT;
  put_num(w, s->stage_id);
  switch (s->kind) {
  case PC_STEP_AN:
    put_num(w, s->iter_id), put_num(w, s->annotation);
    break;
  case PC_STEP_FU:
  case PC_STEP_RE:
    put_ids(w, s->n_ids, s->ids);
    break;
  case PC_STEP_PR: {
    /* "auto_unroll_max_step$64": the name is a token, the value a number. */
    char name[64];
    snprintf(name, sizeof name, "%s", s->pragma);
    char *dollar = strchr(name, '$');
    double value = 0;
    if (dollar) *dollar = 0, value = atof(dollar + 1);
    put_num(w, s->iter_id), put_token(w, v, grow, name), put_num(w, value);
    break;
  }
  case PC_STEP_SP:
    put_num(w, s->iter_id), put_num(w, (double)s->extent), put_num(w, s->inner_to_outer);
    for (int i = 0; i < s->n_lengths; i++) put_num(w, (double)s->lengths[i]);
    break;
  case PC_STEP_FSP:
    put_num(w, s->iter_id), put_num(w, s->src_step_id), put_num(w, s->n_split);
    break;
  case PC_STEP_FFSP:
    put_num(w, s->iter_id), put_num(w, s->level), put_num(w, s->factor_or_nparts);
    put_ids(w, s->n_ids, s->ids);
    break;
  case PC_STEP_SA:
    put_num(w, s->iter_id), put_num(w, s->factor), put_num(w, s->offset);
    break;
  case PC_STEP_CA:
    put_num(w, s->target_stage_id), put_num(w, s->target_iter_id);
    break;
  case PC_STEP_CI:
  case PC_STEP_CR:
    break;
  case PC_STEP_CHR:
    put_token(w, v, grow, s->scope);
    put_ids(w, s->n_ids, s->ids);
    break;
  case PC_STEP_CHW:
    put_token(w, v, grow, s->scope);
    break;
  case PC_STEP_RF:
    put_num(w, s->iter_id), put_num(w, s->factor_iter_id);
    break;
  case PC_STEP_COUNT:
    break;
  }
}

int pp_tlp_features(int n_steps, const pc_step *steps, pp_tlp_vocab *v, bool grow, int seq_len, int emb, float *out) {
  memset(out, 0, sizeof(float) * (size_t)seq_len * (size_t)emb);
  int rows = n_steps < seq_len ? n_steps : seq_len;
  for (int k = 0; k < rows; k++) {
    row_writer w = {out + (size_t)k * (size_t)emb, emb, 0};
    encode_step(&steps[k], v, grow, &w);
  }
  return rows;
}
