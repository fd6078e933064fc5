/* Errors, arena, time, atomic file writes and the seeded PRNG shared by every module. */
#include "common.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

const char *pt_err_name(int err) {
  switch (err) {
  case PT_OK: return "ok";
  case PT_ERR_INPUT: return "malformed input";
  case PT_ERR_INVALID: return "invalid";
  case PT_ERR_IO: return "i/o error";
  case PT_ERR_LLVM: return "llvm error";
  case PT_ERR_RUNTIME: return "runtime error";
  case PT_ERR_NOMEM: return "out of memory";
  case PT_ERR_UNSUPPORTED: return "unsupported";
  }
  return "unknown error";
}

int pt_fail(pt_diag *d, int err, const char *fmt, ...) {
  if (!d) return err;
  va_list ap;
  va_start(ap, fmt);
  if (d->err == 0) {
    d->err = err;
    vsnprintf(d->msg, sizeof d->msg, fmt, ap);
  } else {
    size_t n = strlen(d->msg);
    if (n + 3 < sizeof d->msg) {
      memcpy(d->msg + n, "; ", 2);
      vsnprintf(d->msg + n + 2, sizeof d->msg - n - 2, fmt, ap);
    }
  }
  va_end(ap);
  return err;
}

void pt_diag_clear(pt_diag *d) {
  d->err = 0;
  d->msg[0] = 0;
}

typedef struct pt_block {
  struct pt_block *next;
  size_t used, cap;
  _Alignas(16) unsigned char data[];
} pt_block;

struct pt_arena {
  pt_block *head;
};

pt_arena *pt_arena_new(void) { return calloc(1, sizeof(pt_arena)); }

void pt_arena_free(pt_arena *a) {
  if (!a) return;
  for (pt_block *b = a->head; b;) {
    pt_block *n = b->next;
    free(b);
    b = n;
  }
  free(a);
}

void *pt_alloc(pt_arena *a, size_t size) {
  size = (size + 15) & ~(size_t)15;
  if (!a->head || a->head->used + size > a->head->cap) {
    size_t cap = size > 65536 ? size : 65536;
    pt_block *b = malloc(sizeof(pt_block) + cap);
    if (!b) abort(); /* arena exhaustion is not recoverable */
    b->next = a->head;
    b->used = 0;
    b->cap = cap;
    a->head = b;
  }
  void *p = a->head->data + a->head->used;
  a->head->used += size;
  memset(p, 0, size);
  return p;
}

void *pt_memdup(pt_arena *a, const void *src, size_t n) {
  void *p = pt_alloc(a, n ? n : 1);
  if (n) memcpy(p, src, n);
  return p;
}

char *pt_strdup(pt_arena *a, const char *s) {
  size_t n = strlen(s) + 1;
  char *p = pt_alloc(a, n);
  memcpy(p, s, n);
  return p;
}

char *pt_sprintf(pt_arena *a, const char *fmt, ...) {
  va_list ap, ap2;
  va_start(ap, fmt);
  va_copy(ap2, ap);
  int n = vsnprintf(NULL, 0, fmt, ap);
  va_end(ap);
  char *p = pt_alloc(a, (size_t)n + 1);
  vsnprintf(p, (size_t)n + 1, fmt, ap2);
  va_end(ap2);
  return p;
}

void pt_sbuf_printf(pt_sbuf *b, const char *fmt, ...) {
  if (b->cap == 0 || b->len + 1 >= b->cap) return;
  va_list ap;
  va_start(ap, fmt);
  int n = vsnprintf(b->buf + b->len, b->cap - b->len, fmt, ap);
  va_end(ap);
  if (n > 0) b->len += (size_t)n;
  if (b->len >= b->cap) b->len = b->cap - 1;
}

double pt_now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

double pt_cpu_now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

int pt_write_file_atomic(const char *path, const void *data, size_t len, pt_diag *d) {
  size_t n = strlen(path);
  char *tmp = malloc(n + 32);
  snprintf(tmp, n + 32, "%s.tmp.%ld", path, (long)getpid());
  int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC, 0644);
  if (fd < 0) {
    int e = pt_fail(d, PT_ERR_IO, "%s: cannot write: %s", path, strerror(errno));
    free(tmp);
    return e;
  }
  const char *p = data;
  size_t left = len;
  while (left > 0) {
    ssize_t w = write(fd, p, left);
    if (w < 0) {
      if (errno == EINTR) continue;
      int e = pt_fail(d, PT_ERR_IO, "%s: write failed: %s", path, strerror(errno));
      close(fd);
      unlink(tmp);
      free(tmp);
      return e;
    }
    p += w;
    left -= (size_t)w;
  }
  if (fsync(fd) != 0 || close(fd) != 0 || rename(tmp, path) != 0) {
    int e = pt_fail(d, PT_ERR_IO, "%s: cannot finish writing: %s", path, strerror(errno));
    unlink(tmp);
    free(tmp);
    return e;
  }
  free(tmp);
  return PT_OK;
}

char *pt_read_file(const char *path, size_t *len, pt_diag *d) {
  FILE *f = fopen(path, "rb");
  if (!f) {
    pt_fail(d, PT_ERR_IO, "%s: cannot open: %s", path, strerror(errno));
    return NULL;
  }
  size_t cap = 4096, n = 0;
  char *buf = malloc(cap);
  for (;;) {
    if (n + 4096 > cap) {
      cap *= 2;
      buf = realloc(buf, cap);
    }
    size_t r = fread(buf + n, 1, cap - n - 1, f);
    n += r;
    if (r == 0) break;
  }
  int bad = ferror(f);
  fclose(f);
  if (bad) {
    free(buf);
    pt_fail(d, PT_ERR_IO, "%s: read error", path);
    return NULL;
  }
  buf[n] = 0;
  if (len) *len = n;
  return buf;
}

uint64_t pt_rng_next(pt_rng *r) { return pt_rng_mix(r->s += PT_RNG_STEP); }

double pt_rng_uniform(pt_rng *r) { return pt_rng_unit(pt_rng_next(r)); }

int64_t pt_rng_range(pt_rng *r, int64_t n) { return n <= 0 ? 0 : (int64_t)(pt_rng_next(r) % (uint64_t)n); }

void pt_rng_shuffle(pt_rng *r, int *v, int n) {
  for (int i = n - 1; i > 0; i--) {
    int j = (int)pt_rng_range(r, i + 1), t = v[i];
    v[i] = v[j], v[j] = t;
  }
}

int64_t pt_gcd64(int64_t a, int64_t b) {
  while (b) {
    int64_t r = a % b;
    a = b, b = r;
  }
  return a;
}

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

double pt_median(double *v, int n) {
  if (n <= 0) return 0;
  qsort(v, (size_t)n, sizeof *v, cmp_double);
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}
