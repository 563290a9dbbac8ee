/* How large a tensor may be: the one rule the core and every plugin apply
 * wherever a shape turns into a count of elements or bytes (tensor
 * construction, output allocation, TensorProto and .npy parsing, shape
 * functions, kernels that multiply dims).
 *
 * Plain C and header-only, like c_api.h, so that a plugin built by any
 * compiler applies exactly the core's rule without linking anything.
 */
#ifndef GRAPHRT_SHAPE_LIMITS_H_
#define GRAPHRT_SHAPE_LIMITS_H_

#include <stdint.h>

#include "graphrt/c_api.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The product of a shape's nonzero dims may not exceed 2^58. Times the
 * largest element (16 bytes, complex128) that is below 2^62, so byte sizes,
 * strides and offsets computed from any valid shape -- an empty one with
 * huge dims included -- never overflow int64_t or size_t. (TensorFlow allows
 * up to 2^63-1 elements; no real tensor comes near either bound.) */
#define GR_MAX_TENSOR_ELEMENTS (INT64_C(1) << 58)

/* nonzero * d for dims in (0, GR_MAX_TENSOR_ELEMENTS]; 0 when the product
 * passes the limit. Without a division where the compiler has the builtin:
 * this runs for every tensor a kernel allocates or forwards. */
static inline int gr_mul_within_limit_(int64_t a, int64_t b, int64_t* out) {
#if defined(__GNUC__) || defined(__clang__)
  int64_t p;
  if (__builtin_mul_overflow(a, b, &p) || p > GR_MAX_TENSOR_ELEMENTS) return 0;
  *out = p;
  return 1;
#else
  if (a > GR_MAX_TENSOR_ELEMENTS / b) return 0;
  *out = a * b;
  return 1;
#endif
}

/* *out = a * b for dims a, b >= 0. Returns 0 (and leaves *out alone) when a
 * dim is negative or the product of the nonzero factors exceeds
 * GR_MAX_TENSOR_ELEMENTS; 1 otherwise. */
static inline int gr_mul_dims(int64_t a, int64_t b, int64_t* out) {
  if (a < 0 || b < 0) return 0;
  if (a == 0 || b == 0) {
    *out = 0;
    return 1;
  }
  return gr_mul_within_limit_(a, b, out);
}

/* *num_elements = the product of dims[0..rank). Returns GR_OK, or
 * GR_INVALID_ARGUMENT when rank < 0, a dim is negative, or the product of
 * the nonzero dims exceeds GR_MAX_TENSOR_ELEMENTS. */
static inline int32_t gr_shape_num_elements(const int64_t* dims, int32_t rank, int64_t* num_elements) {
  int64_t nonzero = 1;
  int empty = 0;
  int32_t i;
  if (rank < 0) return GR_INVALID_ARGUMENT;
  for (i = 0; i < rank; ++i) {
    const int64_t d = dims[i];
    if (d < 0) return GR_INVALID_ARGUMENT;
    if (d == 0) {
      empty = 1;
      continue;
    }
    if (!gr_mul_within_limit_(nonzero, d, &nonzero)) return GR_INVALID_ARGUMENT;
  }
  *num_elements = empty ? 0 : nonzero;
  return GR_OK;
}

#ifdef __cplusplus
}
#endif

#endif /* GRAPHRT_SHAPE_LIMITS_H_ */
