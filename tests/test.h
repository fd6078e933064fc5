/* Minimal test harness: CHECK records a failure and goes on; main returns the count. */
#ifndef PORTENT_TEST_H
#define PORTENT_TEST_H
#include <stdio.h>
#include <string.h>

static int test_failures;
#define CHECK(cond)                                                              \
  do {                                                                           \
    if (!(cond)) {                                                               \
      fprintf(stderr, "%s:%d: CHECK failed: %s\n", __FILE__, __LINE__, #cond);   \
      test_failures++;                                                           \
    }                                                                            \
  } while (0)
#define CHECK_MSG(cond, ...)                                                     \
  do {                                                                           \
    if (!(cond)) {                                                               \
      fprintf(stderr, "%s:%d: CHECK failed: %s: ", __FILE__, __LINE__, #cond);   \
      fprintf(stderr, __VA_ARGS__);                                              \
      fputc('\n', stderr);                                                       \
      test_failures++;                                                           \
    }                                                                            \
  } while (0)
#define TEST_DONE()                                                              \
  do {                                                                           \
    if (test_failures) fprintf(stderr, "%d check(s) failed\n", test_failures);   \
    return test_failures ? 1 : 0;                                                \
  } while (0)
#endif
