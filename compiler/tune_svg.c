/* The tuning curve as an SVG: best latency so far (log scale) against the number of
 * measurements, one polyline per series (a model), with axes, ticks and a legend. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "compiler.h"

typedef struct {
  char *s;
  size_t len, cap;
} sbuf;

static void put(sbuf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void put(sbuf *b, const char *fmt, ...) {
  va_list ap;
  for (;;) {
    va_start(ap, fmt);
    int n = vsnprintf(b->s ? b->s + b->len : NULL, b->s ? b->cap - b->len : 0, fmt, ap);
    va_end(ap);
    if (n < 0) return;
    if (b->s && b->len + (size_t)n < b->cap) {
      b->len += (size_t)n;
      return;
    }
    b->cap = (b->cap + (size_t)n + 1) * 2;
    b->s = realloc(b->s, b->cap);
  }
}

static void xml_text(sbuf *b, const char *s) {
  for (; *s; s++) {
    if (*s == '<') put(b, "&lt;");
    else if (*s == '>') put(b, "&gt;");
    else if (*s == '&') put(b, "&amp;");
    else put(b, "%c", *s);
  }
}

int pc_tune_curve_svg(const char *path, const char *title, int n_series, const char *const *names,
                      const int *n_points, const double *const *best_s, pt_diag *d) {
  static const char *colors[] = {"#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b"};
  const double W = 640, H = 400, L = 70, R = 20, T = 40, B = 50;
  int max_n = 1;
  double lo = INFINITY, hi = 0;
  for (int s = 0; s < n_series; s++) {
    if (n_points[s] > max_n) max_n = n_points[s];
    for (int i = 0; i < n_points[s]; i++)
      if (best_s[s][i] > 0) {
        lo = fmin(lo, best_s[s][i]);
        hi = fmax(hi, best_s[s][i]);
      }
  }
  if (!(hi > 0)) lo = 1e-3, hi = 1e-2;
  double llo = floor(log10(lo)), lhi = ceil(log10(hi));
  if (lhi <= llo) lhi = llo + 1;
  sbuf b = {0};
  put(&b, "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%.0f\" height=\"%.0f\" font-family=\"sans-serif\" font-size=\"12\">\n", W, H);
  put(&b, "<rect width=\"100%%\" height=\"100%%\" fill=\"white\"/>\n<text x=\"%.0f\" y=\"22\" font-size=\"14\">", L);
  xml_text(&b, title ? title : "tuning curve");
  put(&b, "</text>\n");
  double pw = W - L - R, ph = H - T - B;
#define XP(i) (L + pw * (double)(i) / (double)(max_n > 1 ? max_n - 1 : 1))
#define YP(v) (T + ph * (lhi - log10(v)) / (lhi - llo))
  put(&b, "<rect x=\"%.0f\" y=\"%.0f\" width=\"%.0f\" height=\"%.0f\" fill=\"none\" stroke=\"#444\"/>\n", L, T, pw, ph);
  for (double e = llo; e <= lhi + 1e-9; e++) {
    double y = YP(pow(10, e));
    put(&b, "<line x1=\"%.0f\" x2=\"%.0f\" y1=\"%.1f\" y2=\"%.1f\" stroke=\"#ddd\"/>", L, L + pw, y, y);
    put(&b, "<text x=\"%.0f\" y=\"%.1f\" text-anchor=\"end\">%g ms</text>\n", L - 6, y + 4, pow(10, e) * 1e3);
  }
  for (int k = 0; k <= 4; k++) {
    int i = (int)((double)(max_n - 1) * k / 4.0);
    put(&b, "<text x=\"%.1f\" y=\"%.0f\" text-anchor=\"middle\">%d</text>\n", XP(i), T + ph + 18, i + 1);
  }
  put(&b, "<text x=\"%.0f\" y=\"%.0f\" text-anchor=\"middle\">measurements</text>\n", L + pw / 2, H - 8);
  put(&b, "<text x=\"16\" y=\"%.0f\" transform=\"rotate(-90 16 %.0f)\" text-anchor=\"middle\">best latency</text>\n", T + ph / 2, T + ph / 2);
  for (int s = 0; s < n_series; s++) {
    const char *c = colors[s % 6];
    put(&b, "<polyline fill=\"none\" stroke=\"%s\" stroke-width=\"2\" points=\"", c);
    for (int i = 0; i < n_points[s]; i++)
      if (best_s[s][i] > 0) put(&b, "%.1f,%.1f ", XP(i), YP(best_s[s][i]));
    put(&b, "\"/>\n<text x=\"%.0f\" y=\"%.0f\" fill=\"%s\">", L + pw - 150, T + 18 + 16 * s, c);
    xml_text(&b, names && names[s] ? names[s] : "");
    put(&b, "</text>\n");
  }
  put(&b, "</svg>\n");
  int rc = pt_write_file_atomic(path, b.s, b.len, d);
  free(b.s);
  return rc;
}
