/* TLP's features: the schedule primitives themselves, no program generated (TLP section 4).
 * Each step is one row: a one-hot of its kind, then its arguments in record order, numbers as
 * sign(x) log2(1 + |x|) and names (pragma names, cache scopes) as token ids of a vocabulary
 * built on the training set. Rows beyond seq_len and argument columns beyond PP_TLP_STEP_COLS
 * are cropped. Columns from PP_TLP_STEP_COLS to emb hold the loop extents the step makes or
 * names, read by replaying the steps on the workload's loop nest (no lowering): an iterator id
 * says nothing by itself, and the network sees the rows as a set, so it cannot follow an id to
 * the split that made the loop (session 21). */
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

static int64_t leaf_extent(const pc_stage *st, int i) {
  return i >= 0 && i < st->n_leaves ? st->nodes[st->leaves[i]].extent : 0;
}

/* The extents of the loops step s made or named, read from state `st` after it is applied: a
 * split's parts outer to inner (a vectorized or unrolled loop's length is one of them), a fused
 * loop's, an annotated loop's (the vector length, the parallel extent), after a reorder the
 * innermost loops outer to inner, and for compute_at how many times the attach point runs and
 * the target's loop volume inside it. */
static void put_extents(const pc_state *state, const pc_step *s, row_writer *w) {
  const pc_stage *st = &state->stages[s->stage_id];
  int parts = 0;
  switch (s->kind) {
  case PC_STEP_SP: parts = s->n_lengths + 1; break;
  case PC_STEP_FSP: parts = s->n_split + 1; break;
  case PC_STEP_FFSP: parts = 2; break;
  case PC_STEP_FU: put_num(w, (double)leaf_extent(st, s->ids[0])); return;
  case PC_STEP_AN: put_num(w, (double)leaf_extent(st, s->iter_id)); return;
  case PC_STEP_RE: {
    int first = st->n_leaves - (w->emb - w->col);
    for (int i = first < 0 ? 0 : first; i < st->n_leaves; i++) put_num(w, (double)leaf_extent(st, i));
    return;
  }
  case PC_STEP_CA: {
    const pc_stage *t = &state->stages[s->target_stage_id];
    double outer = 1, inner = 1;
    for (int i = 0; i < t->n_leaves; i++) {
      if (i <= s->target_iter_id) outer *= (double)leaf_extent(t, i);
      else inner *= (double)leaf_extent(t, i);
    }
    put_num(w, outer), put_num(w, inner);
    return;
  }
  default: return;
  }
  for (int c = 0; c < parts; c++) put_num(w, (double)leaf_extent(st, s->iter_id + c));
}

int pp_tlp_features(int n_steps, const pc_step *steps, const pc_program *prog, pp_tlp_vocab *v, bool grow,
                    int seq_len, int emb, float *out) {
  memset(out, 0, sizeof(float) * (size_t)seq_len * (size_t)emb);
  int rows = n_steps < seq_len ? n_steps : seq_len;
  int arg_cols = emb < PP_TLP_STEP_COLS ? emb : PP_TLP_STEP_COLS;
  pc_state *state = prog && emb > PP_TLP_STEP_COLS ? pc_state_new(prog) : NULL;
  for (int k = 0; k < rows; k++) {
    float *row = out + (size_t)k * (size_t)emb;
    row_writer w = {row, arg_cols, 0};
    encode_step(&steps[k], v, grow, &w);
    if (!state) continue;
    pt_diag d = {0};
    if (pc_state_replay(state, &steps[k], &d) < 0) { /* a step that does not replay: no extents from here on */
      pc_state_free(state);
      state = NULL;
      continue;
    }
    row_writer e = {row, emb, PP_TLP_STEP_COLS};
    put_extents(state, &steps[k], &e);
  }
  pc_state_free(state);
  return rows;
}

pc_program *pp_tlp_feature_program(int emb, const char *workload_key) {
  if (emb <= PP_TLP_STEP_COLS) return NULL;
  pt_diag d = {0};
  return pc_workload_build(workload_key, &d);
}
