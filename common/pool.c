/* The thread pool generated kernels run their parallel loops on: persistent workers woken
 * per call, static contiguous chunks (as TVM's parallel_for does), caller runs chunk 0. */
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>

#include "common.h"

struct pt_pool {
  int n;
  pthread_t *threads;
  pthread_mutex_t mu;
  pthread_cond_t wake, done;
  uint64_t generation;
  int pending;
  bool stop;
  void (*fn)(void *, int64_t, int64_t);
  void *ctx;
  int64_t total;
};

typedef struct {
  pt_pool *pool;
  int index;
} worker_arg;

static void chunk(int64_t n, int parts, int i, int64_t *b, int64_t *e) {
  int64_t per = n / parts, rem = n % parts;
  *b = i * per + (i < rem ? i : rem);
  *e = *b + per + (i < rem ? 1 : 0);
}

static void *worker(void *arg) {
  worker_arg *w = arg;
  pt_pool *p = w->pool;
  int index = w->index;
  free(w);
  uint64_t seen = 0;
  pthread_mutex_lock(&p->mu);
  for (;;) {
    while (!p->stop && p->generation == seen) pthread_cond_wait(&p->wake, &p->mu);
    if (p->stop) break;
    seen = p->generation;
    void (*fn)(void *, int64_t, int64_t) = p->fn;
    void *ctx = p->ctx;
    int64_t total = p->total;
    pthread_mutex_unlock(&p->mu);
    int64_t b, e;
    chunk(total, p->n, index, &b, &e);
    if (b < e) fn(ctx, b, e);
    pthread_mutex_lock(&p->mu);
    if (--p->pending == 0) pthread_cond_signal(&p->done);
  }
  pthread_mutex_unlock(&p->mu);
  return NULL;
}

pt_pool *pt_pool_new(int n_threads) {
  if (n_threads < 1) n_threads = 1;
  pt_pool *p = calloc(1, sizeof *p);
  p->n = n_threads;
  pthread_mutex_init(&p->mu, NULL);
  pthread_cond_init(&p->wake, NULL);
  pthread_cond_init(&p->done, NULL);
  p->threads = calloc((size_t)n_threads, sizeof(pthread_t));
  for (int i = 1; i < n_threads; i++) {
    worker_arg *w = malloc(sizeof *w);
    w->pool = p;
    w->index = i;
    pthread_create(&p->threads[i], NULL, worker, w);
  }
  return p;
}

void pt_pool_free(pt_pool *p) {
  if (!p) return;
  pthread_mutex_lock(&p->mu);
  p->stop = true;
  pthread_cond_broadcast(&p->wake);
  pthread_mutex_unlock(&p->mu);
  for (int i = 1; i < p->n; i++) pthread_join(p->threads[i], NULL);
  pthread_mutex_destroy(&p->mu);
  pthread_cond_destroy(&p->wake);
  pthread_cond_destroy(&p->done);
  free(p->threads);
  free(p);
}

int pt_pool_threads(const pt_pool *p) { return p ? p->n : 1; }

void pt_parallel_for(pt_pool *p, void (*fn)(void *, int64_t, int64_t), void *ctx, int64_t n) {
  if (n <= 0) return;
  if (!p || p->n == 1 || n == 1) {
    fn(ctx, 0, n);
    return;
  }
  pthread_mutex_lock(&p->mu);
  p->fn = fn;
  p->ctx = ctx;
  p->total = n;
  p->pending = p->n - 1;
  p->generation++;
  pthread_cond_broadcast(&p->wake);
  pthread_mutex_unlock(&p->mu);
  int64_t b, e;
  chunk(n, p->n, 0, &b, &e);
  if (b < e) fn(ctx, b, e);
  pthread_mutex_lock(&p->mu);
  while (p->pending > 0) pthread_cond_wait(&p->done, &p->mu);
  pthread_mutex_unlock(&p->mu);
}
