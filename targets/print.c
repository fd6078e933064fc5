/* Human-readable tables of a target description and of two side by side (`portent targets
 * show` / `diff`, and the measured-vs-published part of `portent bench characterize`). */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "internal.h"

static const char *fmt_fig(char *buf, size_t n, double v) {
  if (isnan(v)) snprintf(buf, n, "-");
  else if (fabs(v) >= 100) snprintf(buf, n, "%.0f", v);
  else snprintf(buf, n, "%.2f", v);
  return buf;
}

static const char *fmt_bytes(char *buf, size_t n, int64_t b) {
  if (b >= (1 << 20) && b % (1 << 20) == 0) snprintf(buf, n, "%lld MiB", (long long)(b >> 20));
  else if (b >= 1024) snprintf(buf, n, "%lld KiB", (long long)(b >> 10));
  else snprintf(buf, n, "%lld B", (long long)b);
  return buf;
}

void ptg_target_print(FILE *f, const ptg_target *t) {
  char a[32], b[32], c[32], d[32];
  fprintf(f, "%s (%s%s%s)\n", t->name, t->provenance, t->date ? ", " : "", t->date ? t->date : "");
  fprintf(f, "  cpu        %s %s, %s family %d model %d (%s)\n", t->isa ? t->isa : "?", t->model_name ? t->model_name : "",
          t->vendor ? t->vendor : "?", t->family, t->model, t->microarchitecture);
  fprintf(f, "  cores      %d x %d threads, %d socket(s), %d NUMA node(s)\n", t->cores, t->threads_per_core, t->sockets, t->numa_nodes);
  fprintf(f, "  clock      %s GHz   vectors %d-bit (ISA %d)   issue width %s\n", fmt_fig(a, sizeof a, t->frequency_ghz.value),
          t->native_vector_bits, t->max_vector_bits, fmt_fig(b, sizeof b, t->issue_width.value));
  if (t->n_features) {
    fprintf(f, "  features  ");
    for (int i = 0; i < t->n_features; i++) fprintf(f, " %s", t->features[i]);
    fputc('\n', f);
  }
  if (t->tool && t->repetitions) fprintf(f, "  tool       %s, %d repetitions per figure\n", t->tool, t->repetitions);
  else if (t->tool) fprintf(f, "  tool       %s\n", t->tool);
  for (int i = 0; i < t->n_sources; i++) fprintf(f, "  source     %s\n", t->sources[i]);
  if (t->counters) fprintf(f, "  counters   %s\n", t->counters);
  fprintf(f, "  registers  %d vector registers of %d bits", ptg_target_vector_registers(t), t->max_vector_bits);
  if (!isnan(t->spill_update_cycles.value)) fprintf(f, "; spilled tile %.2f cycles per accumulator update", t->spill_update_cycles.value);
  fputc('\n', f);
  fprintf(f, "\n  %-8s %-5s %5s %9s %9s %7s  %-8s %s\n", "op", "type", "bits", "latency", "rthroughput", "spread", "unit",
          "instruction");
  for (int i = 0; i < t->n_insts; i++) {
    const ptg_inst *r = &t->insts[i];
    double spread = fmax(r->latency.spread, r->recip_throughput.spread);
    fprintf(f, "  %-8s %-5s %5d %9s %11s %6.1f%%  %-8s %s\n", ptg_op_name(r->op), ptg_elem_name(r->elem), r->vector_bits,
            fmt_fig(a, sizeof a, r->latency.value), fmt_fig(b, sizeof b, r->recip_throughput.value), 100 * spread,
            r->unit ? r->unit : "-", r->instruction ? r->instruction : (r->source ? r->source : ""));
  }
  for (int i = 0; i < t->n_units; i++)
    fprintf(f, "  unit %-4s %d pipe(s): %s\n", t->units[i].name, t->units[i].pipes, t->units[i].classes ? t->units[i].classes : "");
  fprintf(f, "\n  %-6s %9s %5s %5s %7s %9s %8s %9s %10s %10s\n", "cache", "size", "line", "ways", "shared", "latency", "ns",
          "in flight", "detected", "read GB/s");
  for (int i = 0; i < t->n_caches; i++) {
    const ptg_cache *k = &t->caches[i];
    char det[32] = "-", bw[64] = "-";
    if (k->detected_bytes) fmt_bytes(det, sizeof det, k->detected_bytes);
    if (k->n_bandwidth) {
      const ptg_bandwidth *last = &k->bandwidth[k->n_bandwidth - 1];
      snprintf(bw, sizeof bw, "%.0f (%d thr)", k->bandwidth[0].read.value, k->bandwidth[0].threads);
      if (k->n_bandwidth > 1) snprintf(bw + strlen(bw), sizeof bw - strlen(bw), ", %.0f (%d)", last->read.value, last->threads);
    }
    fprintf(f, "  L%-5d %9s %5d %5d %7d %9s %8s %9s %10s  %s\n", k->level, fmt_bytes(a, sizeof a, k->size_bytes), k->line_bytes,
            k->associativity, k->shared_by, fmt_fig(b, sizeof b, k->latency_cycles.value), fmt_fig(c, sizeof c, k->latency_ns.value),
            fmt_fig(d, sizeof d, k->overlapping_misses.value), det, bw);
  }
  const ptg_cache *l1 = ptg_target_cache(t, 1);
  for (int i = 0; l1 && i < l1->n_set_walks; i++) {
    const ptg_set_walk *w = &l1->set_walks[i];
    fprintf(f, "  L1     set walk, stride %lld B, %d set(s), %lld lines: %s ns per access, %s misses in flight",
            (long long)w->stride_bytes, w->sets, (long long)w->lines, fmt_fig(a, sizeof a, w->ns_per_access.value),
            fmt_fig(b, sizeof b, w->overlapping_misses.value));
    if (w->rmw_ns_per_access.value > 0)
      fprintf(f, ", read-modify-write %s ns per access", fmt_fig(c, sizeof c, w->rmw_ns_per_access.value));
    fputc('\n', f);
  }
  for (int i = 0; l1 && i < l1->n_set_streams; i++) {
    const ptg_set_stream *w = &l1->set_streams[i];
    fprintf(f, "  L1     %d streams in one set position, %d read-modify-write: %s ns per access\n", w->streams,
            w->rmw_streams, fmt_fig(a, sizeof a, w->ns_per_access.value));
  }
  for (int i = 0; l1 && i < l1->n_set_loads; i++) {
    const ptg_set_load *w = &l1->set_loads[i];
    fprintf(f, "  L1     column of %lld lines %lld B apart (%d set(s)) read by %d load(s) at once: %s ns per element\n",
            (long long)w->lines, (long long)w->stride_bytes, w->sets, w->loads, fmt_fig(a, sizeof a, w->ns_per_access.value));
  }
  fprintf(f, "  memory   latency %s ns (%s cycles), %s overlapping misses\n", fmt_fig(a, sizeof a, t->memory.latency_ns.value),
          fmt_fig(b, sizeof b, t->memory.latency_cycles.value), fmt_fig(c, sizeof c, t->memory.overlapping_misses.value));
  for (int i = 0; i < t->memory.n_strided; i++) {
    const ptg_strided_walk *w = &t->memory.strided[i];
    fprintf(f, "  memory   strided walk, stride %lld B, %s pages: %s ns per access, %s misses in flight\n",
            (long long)w->stride_bytes, fmt_bytes(a, sizeof a, w->page_bytes), fmt_fig(b, sizeof b, w->ns_per_access.value),
            fmt_fig(c, sizeof c, w->overlapping_misses.value));
  }
  for (int i = 0; i < t->memory.n_bandwidth; i++) {
    const ptg_bandwidth *bw = &t->memory.bandwidth[i];
    fprintf(f, "  memory   %d thread(s): read %.1f, write %.1f, copy %.1f, triad %.1f GB/s\n", bw->threads, bw->read.value,
            bw->write.value, bw->copy.value, bw->triad.value);
  }
  for (int i = 0; i < t->n_runtime; i++)
    fprintf(f, "  pool     %d thread(s): fork/join %s ns, barrier %s ns\n", t->runtime[i].threads,
            fmt_fig(a, sizeof a, t->runtime[i].fork_join_ns.value), fmt_fig(b, sizeof b, t->runtime[i].barrier_ns.value));
  if (t->gpu.present) {
    const ptg_gpu *u = &t->gpu;
    fprintf(f, "\n  gpu      %s (compute %s), %d SMs at %s GHz, %s memory, %s L2\n", u->name,
            u->compute_capability ? u->compute_capability : "?", u->sms, fmt_fig(a, sizeof a, u->clock_ghz),
            fmt_bytes(b, sizeof b, u->memory_bytes), fmt_bytes(c, sizeof c, u->l2_bytes));
    fprintf(f, "  gpu      launch %s us, device copy %s GB/s", fmt_fig(a, sizeof a, u->launch_us.value),
            fmt_fig(b, sizeof b, u->memory_bandwidth_gbs.value));
    fprintf(f, ", host->device %s GB/s", fmt_fig(a, sizeof a, u->h2d_gbs.value));
    fprintf(f, ", device->host %s GB/s", fmt_fig(a, sizeof a, u->d2h_gbs.value));
    fprintf(f, ", fp32 %s TFLOP/s\n", fmt_fig(a, sizeof a, u->fp32_tflops.value));
    fprintf(f, "  gpu      mma fp16 %s, bf16 %s TFLOP/s; L2 copy %s GB/s, shared memory %s GB/s\n",
            fmt_fig(a, sizeof a, u->fp16_mma_tflops.value), fmt_fig(b, sizeof b, u->bf16_mma_tflops.value),
            fmt_fig(c, sizeof c, u->l2_bandwidth_gbs.value), fmt_fig(d, sizeof d, u->smem_bandwidth_gbs.value));
    fprintf(f, "  gpu      latency ns: shared %s, L1 %s", fmt_fig(a, sizeof a, u->smem_latency_ns.value),
            fmt_fig(b, sizeof b, u->l1_latency_ns.value));
    fprintf(f, ", L2 %s, memory %s; kernels timed by %s\n", fmt_fig(a, sizeof a, u->l2_latency_ns.value),
            fmt_fig(b, sizeof b, u->memory_latency_ns.value), u->timer ? u->timer : "?");
    fprintf(f, "  gpu      SM clock while running %s GHz\n", fmt_fig(a, sizeof a, u->sm_clock_ghz.value));
  }
}

double ptg_rel_diff(double a, double b) {
  if (isnan(a) || isnan(b)) return NAN;
  double m = fmax(fabs(a), fabs(b));
  return m == 0 ? 0 : (b - a) / fmax(fabs(a), 1e-12);
}

static void diff_line(FILE *f, const char *label, double a, double b, double tol) {
  char x[32], y[32];
  double r = ptg_rel_diff(a, b);
  fprintf(f, "  %-26s %10s %10s", label, fmt_fig(x, sizeof x, a), fmt_fig(y, sizeof y, b));
  if (isnan(r)) fprintf(f, "\n");
  else fprintf(f, " %+8.1f%%%s\n", 100 * r, fabs(r) > tol ? "  *" : "");
}

void ptg_target_print_diff(FILE *f, const ptg_target *a, const ptg_target *b, double tol) {
  fprintf(f, "  A = %s (%s), B = %s (%s); diff = (B - A) / A\n", a->name, a->provenance, b->name, b->provenance);
  fprintf(f, "  %-26s %10s %10s %9s   (* = differs by more than %.0f%%)\n", "figure", "A", "B", "diff", 100 * tol);
  diff_line(f, "clock GHz", a->frequency_ghz.value, b->frequency_ghz.value, tol);
  diff_line(f, "issue width", a->issue_width.value, b->issue_width.value, tol);
  diff_line(f, "store forward fail cycles", a->store_forward_fail_cycles.value, b->store_forward_fail_cycles.value, tol);
  diff_line(f, "store forward cycles", a->store_forward_cycles.value, b->store_forward_cycles.value, tol);
  diff_line(f, "spill update cycles", a->spill_update_cycles.value, b->spill_update_cycles.value, tol);
  /* rows of a, then rows only b has */
  for (int pass = 0; pass < 2; pass++) {
    const ptg_target *x = pass ? b : a, *y = pass ? a : b;
    for (int i = 0; i < x->n_insts; i++) {
      const ptg_inst *r = &x->insts[i];
      const ptg_inst *s = ptg_target_find_inst(y, r->op, r->elem, r->vector_bits);
      if (pass && s) continue;
      const ptg_inst *ra = pass ? s : r, *rb = pass ? r : s;
      char label[64];
      snprintf(label, sizeof label, "%s %s %d lat", ptg_op_name(r->op), ptg_elem_name(r->elem), r->vector_bits);
      diff_line(f, label, ra ? ra->latency.value : NAN, rb ? rb->latency.value : NAN, tol);
      snprintf(label, sizeof label, "%s %s %d rtp", ptg_op_name(r->op), ptg_elem_name(r->elem), r->vector_bits);
      diff_line(f, label, ra ? ra->recip_throughput.value : NAN, rb ? rb->recip_throughput.value : NAN, tol);
    }
  }
  int levels = a->n_caches > b->n_caches ? a->n_caches : b->n_caches;
  for (int l = 1; l <= levels; l++) {
    const ptg_cache *ka = ptg_target_cache(a, l), *kb = ptg_target_cache(b, l);
    char label[64];
    snprintf(label, sizeof label, "L%d size KiB", l);
    diff_line(f, label, ka ? (double)ka->size_bytes / 1024 : NAN, kb ? (double)kb->size_bytes / 1024 : NAN, tol);
    snprintf(label, sizeof label, "L%d latency cycles", l);
    diff_line(f, label, ka ? ka->latency_cycles.value : NAN, kb ? kb->latency_cycles.value : NAN, tol);
    snprintf(label, sizeof label, "L%d misses in flight", l);
    if (l > 1) diff_line(f, label, ka ? ka->overlapping_misses.value : NAN, kb ? kb->overlapping_misses.value : NAN, tol);
    snprintf(label, sizeof label, "L%d read GB/s, 1 thread", l);
    diff_line(f, label, ptg_target_bandwidth(a, l, 1, PTG_BW_READ), ptg_target_bandwidth(b, l, 1, PTG_BW_READ), tol);
  }
  diff_line(f, "memory latency ns", a->memory.latency_ns.value, b->memory.latency_ns.value, tol);
  diff_line(f, "memory read GB/s, 1 thread", ptg_target_bandwidth(a, 0, 1, PTG_BW_READ), ptg_target_bandwidth(b, 0, 1, PTG_BW_READ), tol);
  diff_line(f, "overlapping misses", a->memory.overlapping_misses.value, b->memory.overlapping_misses.value, tol);
  /* strided walks of a, then those only b has */
  for (int pass = 0; pass < 2; pass++) {
    const ptg_target *x = pass ? b : a, *y = pass ? a : b;
    for (int i = 0; i < x->memory.n_strided; i++) {
      const ptg_strided_walk *w = &x->memory.strided[i], *v = ptg_target_strided_walk(y, w->stride_bytes, w->page_bytes);
      if (pass && v) continue;
      const ptg_strided_walk *wa = pass ? v : w, *wb = pass ? w : v;
      char label[64];
      snprintf(label, sizeof label, "stride %lld/%lldK in flight", (long long)w->stride_bytes, (long long)(w->page_bytes >> 10));
      diff_line(f, label, wa ? wa->overlapping_misses.value : NAN, wb ? wb->overlapping_misses.value : NAN, tol);
    }
  }
  for (int i = 0; i < a->n_runtime; i++) {
    char label[64];
    snprintf(label, sizeof label, "fork/join ns, %d threads", a->runtime[i].threads);
    diff_line(f, label, a->runtime[i].fork_join_ns.value, ptg_target_fork_join_ns(b, a->runtime[i].threads), tol);
  }
  if (a->gpu.present || b->gpu.present) {
    const ptg_gpu *ga = &a->gpu, *gb = &b->gpu;
    diff_line(f, "gpu sms", ga->present ? ga->sms : NAN, gb->present ? gb->sms : NAN, tol);
    diff_line(f, "gpu clock_ghz", ga->present ? ga->clock_ghz : NAN, gb->present ? gb->clock_ghz : NAN, tol);
#define PTG_X(field, key, lo, hi, doc) \
  diff_line(f, "gpu " key, ga->present ? ga->field.value : NAN, gb->present ? gb->field.value : NAN, tol);
    PTG_GPU_FIGURES(PTG_X)
#undef PTG_X
  }
}
