/* A minimal check harness for the C API tests (plain C11): CHECK* print the
 * file, line and what failed, count the failure and go on; a test program
 * returns c_test_failures() != 0 from main. */
#ifndef GRAPHRT_TESTS_C_TEST_UTIL_H_
#define GRAPHRT_TESTS_C_TEST_UTIL_H_

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "graphrt/c_client.h"

static int c_test_failures_ = 0;

static inline int c_test_failures(void) { return c_test_failures_; }

#define CHECK(cond)                                                    \
  do {                                                                 \
    if (!(cond)) {                                                     \
      fprintf(stderr, "%s:%d: CHECK failed: %s\n", __FILE__, __LINE__, #cond); \
      ++c_test_failures_;                                              \
    }                                                                  \
  } while (0)

/* The status is OK; prints its message otherwise. */
#define CHECK_OK(status)                                                          \
  do {                                                                            \
    if (GRC_GetCode(status) != GRC_OK) {                                          \
      fprintf(stderr, "%s:%d: expected OK, got %s: %s\n", __FILE__, __LINE__,    \
              GRC_CodeName(GRC_GetCode(status)), GRC_Message(status));            \
      ++c_test_failures_;                                                         \
    }                                                                             \
  } while (0)

/* The status has `code` and its message contains `part`. */
#define CHECK_ERROR(status, code, part)                                                      \
  do {                                                                                       \
    if (GRC_GetCode(status) != (code) || strstr(GRC_Message(status), (part)) == NULL) {      \
      fprintf(stderr, "%s:%d: expected %s containing \"%s\", got %s: %s\n", __FILE__, __LINE__, \
              GRC_CodeName(code), (part), GRC_CodeName(GRC_GetCode(status)), GRC_Message(status)); \
      ++c_test_failures_;                                                                    \
    }                                                                                        \
  } while (0)

#define CHECK_NEAR(a, b, tol)                                                                    \
  do {                                                                                           \
    double a_ = (a), b_ = (b);                                                                   \
    if (!(fabs(a_ - b_) <= (tol))) {                                                             \
      fprintf(stderr, "%s:%d: %s = %.9g, expected %.9g (tolerance %g)\n", __FILE__, __LINE__, #a, \
              a_, b_, (double)(tol));                                                            \
      ++c_test_failures_;                                                                        \
    }                                                                                            \
  } while (0)

/* Where TensorFlow's files are: $GRAPHRT_SHARED_DIR/tf_testdata when the
 * variable is set, else the build's default (GRAPHRT_TESTDATA, from CMake's
 * GRAPHRT_SHARED_DIR). A user's clone has no ../shared beside it. */
static inline const char* testdata_root(void) {
  static char root[4096];
  const char* env = getenv("GRAPHRT_SHARED_DIR");
  if (env != NULL && env[0] != '\0') {
    snprintf(root, sizeof root, "%s/tf_testdata", env);
  } else {
    snprintf(root, sizeof root, "%s", GRAPHRT_TESTDATA);
  }
  return root;
}

/* A file of tf_testdata; static buffer ("" when the path does not fit). */
static inline const char* testdata(const char* rel) {
  static char path[8192];
  if (snprintf(path, sizeof path, "%s/%s", testdata_root(), rel) >= (int)sizeof path) path[0] = '\0';
  return path;
}

static int c_test_skips_ = 0;

/* Whether tf_testdata/<rel> (a file) can be read. When it cannot, counts a
 * skip and says what is missing and where it was looked for; the caller
 * then returns without checking anything. */
static inline int testdata_present(const char* caller, const char* rel) {
  FILE* f = fopen(testdata(rel), "rb");
  if (f != NULL) {
    fclose(f);
    return 1;
  }
  ++c_test_skips_;
  printf("SKIPPED %s: needs tf_testdata/%s, not found under %s (set GRAPHRT_SHARED_DIR to the folder that "
         "holds tf_testdata)\n", caller, rel, testdata_root());
  return 0;
}

/* In a void test function: skip it unless tf_testdata/<rel> is there. */
#define REQUIRE_TESTDATA(rel)                   \
  do {                                          \
    if (!testdata_present(__func__, (rel))) return; \
  } while (0)

/* main's exit status: 1 on a failed check, else CTest's skip code 77 when a
 * test was skipped (SKIP_RETURN_CODE in tests/c_api/CMakeLists.txt), else 0. */
static inline int c_test_exit(void) { return c_test_failures_ != 0 ? 1 : c_test_skips_ != 0 ? 77 : 0; }

/* A float tensor copied from `values` (library memory). */
static inline GRC_Tensor* float_tensor(const int64_t* dims, int num_dims, const float* values, size_t n) {
  GRC_Status* s = GRC_NewStatus();
  GRC_Tensor* t = GRC_NewAllocatedTensor(GRC_FLOAT, dims, num_dims, s);
  CHECK_OK(s);
  GRC_DeleteStatus(s);
  if (t == NULL) return NULL;
  CHECK(GRC_TensorByteSize(t) == n * sizeof(float));
  if (n > 0) memcpy(GRC_TensorData(t), values, n * sizeof(float));
  return t;
}

static inline GRC_Tensor* float_scalar(float v) { return float_tensor(NULL, 0, &v, 1); }

/* Element i of a float tensor (NAN for a missing or non-float tensor). */
static inline float float_at(const GRC_Tensor* t, int64_t i) {
  if (t == NULL || GRC_TensorType(t) != GRC_FLOAT || i >= GRC_TensorElementCount(t)) return NAN;
  return ((const float*)GRC_TensorData(t))[i];
}

#endif /* GRAPHRT_TESTS_C_TEST_UTIL_H_ */
