/* +streams: sequential streams whose current lines share one L1 set position. A loop that walks
 * several rows side by side (an element or a vector of each per iteration) keeps one current line
 * per row; rows a multiple of 4 KiB apart put those lines in one set, and past its ways they
 * evict each other before the next element (bert_ffn1 #25: twelve rows, six of them read-modify-
 * written, 13.75 ns an iteration against 1.86 with padded rows; docs/validation.md, session 15).
 * The reuse histograms and +sets (walks of a line or more per iteration) do not see it. Priced at
 * the target's measured figure for that many streams and read-modify-write share
 * (caches[0].set_streams, `portent characterize --only l1streams`).
 *
 * Placement: offsets within one object are the profile's (exact). Across objects the profile has
 * no addresses; the measuring harness (compiler/measure.c) starts a large buffer it only reads at
 * PC_INPUT_PAGE_OFFSET within its page and one the kernel writes (its output, a stage's
 * intermediate) at PC_OUTPUT_PAGE_OFFSET, so this model starts an object the function stores to
 * at the second and any other at the first (offsets compared modulo a page). mm1024 #32 reads 16
 * rows of B and adds into a row of C, all at page multiples: taken as 17 streams in one position
 * with C read-modify-written it was priced 1.8 times its time on Zen 4, C's row being 4 lines
 * away. A small object placed anywhere in the heap can share or miss a position this way; the
 * figure says so only in docs/validation.md. */
#include <math.h>
#include <stdlib.h>

#include "internal.h"

#define PAGE_BYTES 4096

static int64_t mod_floor(int64_t a, int64_t b) {
  int64_t r = a % b;
  return r < 0 ? r + b : r;
}

typedef struct {
  const pa_node *n;
  int64_t line;   /* the stream's line at the loop's first iteration (its object's own offsets) */
  int64_t slot;   /* its line within a page: the L1 set position it walks from (where_placed) */
  double execs;   /* executions per thread of the costliest block touching it */
  bool loaded, stored;
} stream;

/* Whether node n walks a sequential stream this model looks at: a plain load or store with a
 * known offset whose innermost stride moves less than a line (so it stays on a line for several
 * iterations, as a row walked along does), not 0. */
static bool is_stream(const pa_node *n) {
  if (n->op != PA_OP_LOAD && n->op != PA_OP_STORE) return false;
  if (n->n_strides < 1 || !n->has_offset || n->array <= 0 || pp_wraps_in_loop(n)) return false;
  int64_t s = n->strides[0];
  return s != PA_STRIDE_UNKNOWN && s != 0 && s > -PA_LINE_BYTES && s < PA_LINE_BYTES;
}

/* Sets each stream's slot from its offset and where the harness starts its object: written
 * objects (any store of f) apart from read-only ones. Run only for loops with more streams than
 * ways, so the scan of f is rare. */
static void where_placed(const pa_function *f, stream *s, int m) {
  int top = 0;
  for (int a = 0; a < m; a++) top = s[a].n->array > top ? s[a].n->array : top;
  bool *written = calloc((size_t)top + 1, sizeof *written);
  for (int j = 0; j < f->n_blocks; j++)
    for (int i = 0; i < f->blocks[j].n_nodes; i++) {
      const pa_node *n = &f->blocks[j].nodes[i];
      if (n->op == PA_OP_STORE && n->array > 0 && n->array <= top) written[n->array] = true;
    }
  for (int a = 0; a < m; a++) {
    int64_t start = written[s[a].n->array] ? PC_OUTPUT_PAGE_OFFSET : PC_INPUT_PAGE_OFFSET;
    s[a].slot = mod_floor(s[a].n->offset + start, PAGE_BYTES) / PA_LINE_BYTES;
  }
  free(written);
}

double pp_loop_set_streams(pp_predictor *pp, const pa_function *f, int loop, const double *trip, const double *ecount) {
  const ptg_target *t = pp->t;
  const ptg_cache *l1 = ptg_target_cache(t, 1);
  if (!l1 || l1->n_set_streams == 0 || l1->associativity < 1 || loop < 0 || loop >= f->n_loops) return 0;
  const pa_loop *L = &f->loops[loop];
  int cap = pp_loop_nodes(f, L);
  if (cap <= l1->associativity) return 0; /* too few accesses to overflow a set */
  stream *s = malloc(sizeof *s * (size_t)cap);
  int m = 0;
  for (int k = 0; k < L->n_blocks; k++) {
    int j = L->blocks[k];
    if (!pp_loop_walk_block(f, loop, j, trip, ecount)) continue;
    const pa_block *b = &f->blocks[j];
    for (int i = 0; i < b->n_nodes; i++) {
      const pa_node *n = &b->nodes[i];
      if (!is_stream(n)) continue;
      int64_t line = n->offset >= 0 ? n->offset / PA_LINE_BYTES : -((-n->offset + PA_LINE_BYTES - 1) / PA_LINE_BYTES);
      int at = 0; /* one stream: the same object, stride and line (a load and its store back) */
      while (at < m && !(s[at].n->array == n->array && s[at].n->strides[0] == n->strides[0] && s[at].line == line)) at++;
      if (at == m) s[m++] = (stream){n, line, 0, ecount[j], false, false};
      else if (ecount[j] > s[at].execs) s[at].execs = ecount[j];
      s[at].loaded |= n->op == PA_OP_LOAD, s[at].stored |= n->op == PA_OP_STORE;
    }
  }
  double need = 0;
  if (m <= l1->associativity) { /* too few streams to overflow a set wherever they start */
    free(s);
    return 0;
  }
  where_placed(f, s, m);
  /* streams moving together (one innermost stride) from one position share a set at every
   * iteration; each overflowing position costs its streams the measured time per access */
  for (int a = 0; a < m; a++) {
    bool done = false;
    for (int v = 0; v < a && !done; v++) done = s[v].slot == s[a].slot && s[v].n->strides[0] == s[a].n->strides[0];
    if (done) continue;
    int streams = 0, rmw = 0;
    double execs = 0;
    for (int v = a; v < m; v++) {
      if (s[v].slot != s[a].slot || s[v].n->strides[0] != s[a].n->strides[0]) continue;
      streams++;
      rmw += s[v].loaded && s[v].stored;
      if (s[v].execs > execs) execs = s[v].execs;
    }
    if (streams <= l1->associativity) continue;
    double ns = ptg_target_set_stream_ns(t, streams, rmw);
    if (ns > 0) need += execs * streams * ns * pp->freq_ghz;
  }
  free(s);
  return need;
}
