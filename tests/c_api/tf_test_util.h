/* Helpers for the tests of TensorFlow's C API names (graphrt/tf_c_api.h),
 * on top of c_test_util.h's CHECK harness. Plain C11. */
#ifndef GRAPHRT_TESTS_TF_TEST_UTIL_H_
#define GRAPHRT_TESTS_TF_TEST_UTIL_H_

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "c_test_util.h"
#include "graphrt/tf_c_api.h"

/* The TF status is OK; prints its message otherwise. */
#define TF_CHECK_OK(status)                                                                  \
  do {                                                                                       \
    if (TF_GetCode(status) != TF_OK) {                                                       \
      fprintf(stderr, "%s:%d: expected TF_OK, got %d: %s\n", __FILE__, __LINE__,            \
              (int)TF_GetCode(status), TF_Message(status));                                  \
      ++c_test_failures_;                                                                    \
    }                                                                                        \
  } while (0)

/* The TF status has `code` and its message contains `part`. */
#define TF_CHECK_ERROR(status, code, part)                                                   \
  do {                                                                                       \
    if (TF_GetCode(status) != (code) || strstr(TF_Message(status), (part)) == NULL) {        \
      fprintf(stderr, "%s:%d: expected code %d containing \"%s\", got %d: %s\n", __FILE__,  \
              __LINE__, (int)(code), (part), (int)TF_GetCode(status), TF_Message(status));   \
      ++c_test_failures_;                                                                    \
    }                                                                                        \
  } while (0)

/* A file's bytes as a buffer (NULL, counted as a failure, if unreadable). */
static inline TF_Buffer* read_buffer(const char* path) {
  FILE* f = fopen(path, "rb");
  CHECK(f != NULL);
  if (f == NULL) return NULL;
  fseek(f, 0, SEEK_END);
  const long n = ftell(f);
  fseek(f, 0, SEEK_SET);
  char* bytes = (char*)malloc(n > 0 ? (size_t)n : 1);
  const size_t got = fread(bytes, 1, (size_t)n, f);
  fclose(f);
  CHECK(got == (size_t)n);
  TF_Buffer* b = TF_NewBufferFromString(bytes, got);
  free(bytes);
  return b;
}

/* The tf2onnx regression graph (tf_testdata README item 10): nodes X, W,
 * W/read, b, b/read, Mul, Add, pred with pred = X*W + b,
 * W = 0.21396178, b = 1.0495254. */
#define REGRESSION_PB "tf2onnx/models/regression/graphdef/frozen.pb"
#define REGRESSION_W 0.21396178
#define REGRESSION_B 1.0495254

/* Imports the regression graph into g under prefix (NULL: none). */
static inline void import_regression(TF_Graph* g, const char* prefix, TF_Status* s) {
  TF_Buffer* def = read_buffer(testdata(REGRESSION_PB));
  TF_ImportGraphDefOptions* opts = TF_NewImportGraphDefOptions();
  if (prefix != NULL) TF_ImportGraphDefOptionsSetPrefix(opts, prefix);
  TF_GraphImportGraphDef(g, def, opts, s);
  TF_DeleteImportGraphDefOptions(opts);
  TF_DeleteBuffer(def);
}

/* A float tensor copied from `values` (library memory). */
static inline TF_Tensor* tf_floats(const int64_t* dims, int num_dims, const float* values, size_t n) {
  TF_Tensor* t = TF_AllocateTensor(TF_FLOAT, dims, num_dims, n * sizeof(float));
  CHECK(t != NULL);
  if (t != NULL && n > 0) memcpy(TF_TensorData(t), values, n * sizeof(float));
  return t;
}

/* Element i of a float tensor (NAN for a missing or non-float tensor). */
static inline float tf_float_at(const TF_Tensor* t, int64_t i) {
  if (t == NULL || TF_TensorType(t) != TF_FLOAT || i >= TF_TensorElementCount(t)) return NAN;
  return ((const float*)TF_TensorData(t))[i];
}

/* Operation `name` of g as output 0. */
static inline TF_Output tf_out(TF_Graph* g, const char* name) {
  TF_Output o = {TF_GraphOperationByName(g, name), 0};
  CHECK(o.oper != NULL);
  return o;
}

#endif /* GRAPHRT_TESTS_TF_TEST_UTIL_H_ */
