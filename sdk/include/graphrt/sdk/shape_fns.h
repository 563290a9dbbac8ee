// Common shape functions for REGISTER_OP(...).SetShapeFn(...), plus the
// small shape helpers (merge, rank checks, broadcasting) they are built from.
// Header-only, like the rest of the SDK: everything is inline and hidden.
//
// Conventions follow graphrt::sdk::PartialShape: rank -1 = unknown rank,
// dim -1 = unknown dim. When a function cannot be sure of a dim it produces
// an unknown one rather than a guess.
#ifndef GRAPHRT_SDK_SHAPE_FNS_H_
#define GRAPHRT_SDK_SHAPE_FNS_H_

#include <graphrt/sdk/sdk.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#pragma GCC visibility push(hidden)

namespace graphrt {
namespace sdk {
namespace shape_fns {

// ------------------------------------------------------------- printing

// "[2,?,3]" for known rank, "<unknown>" otherwise (TensorFlow's spelling).
inline std::string ShapeString(const PartialShape& s) {
  if (!s.known_rank()) return "<unknown>";
  std::string out = "[";
  for (size_t i = 0; i < s.dims.size(); ++i) {
    if (i) out += ",";
    out += s.dims[i] < 0 ? std::string("?") : std::to_string(s.dims[i]);
  }
  return out + "]";
}

inline std::string ShapeString(const int64_t* dims, int rank) { return DimsString(dims, rank); }

inline std::string ShapeString(const std::vector<int64_t>& dims) {
  return ShapeString(dims.data(), static_cast<int>(dims.size()));
}

// A kernel input's or output's shape, "[2,3]".
inline std::string ShapeString(const TensorView& v) { return ShapeString(v.dims_data(), v.rank()); }

// ----------------------------------------------------- building blocks

// Merges two dims that must be equal; an unknown dim takes the other's value.
inline Status MergeDim(int64_t a, int64_t b, int64_t* out) {
  if (a < 0) {
    *out = b;
  } else if (b < 0 || a == b) {
    *out = a;
  } else {
    return errors::InvalidArgument("Dimensions must be equal, but are ", a, " and ", b);
  }
  return Status();
}

// Merges two shapes that must be equal (TensorFlow's InferenceContext::Merge).
inline Status Merge(const PartialShape& a, const PartialShape& b, PartialShape* out) {
  if (!a.known_rank()) {
    *out = b;
    return Status();
  }
  if (!b.known_rank()) {
    *out = a;
    return Status();
  }
  if (a.rank != b.rank) {
    return errors::InvalidArgument("Shapes must be equal rank, but are ", a.rank, " and ", b.rank);
  }
  PartialShape r = a;
  for (int32_t i = 0; i < a.rank; ++i) {
    Status s = MergeDim(a.dims[i], b.dims[i], &r.dims[i]);
    if (!s.ok()) {
      return errors::InvalidArgument("Dimension ", i, " in both shapes must be equal, but are ",
                                     a.dims[i], " and ", b.dims[i], ". Shapes are ", ShapeString(a),
                                     " and ", ShapeString(b), ".");
    }
  }
  *out = std::move(r);
  return Status();
}

// `s` must have exactly `rank` dims; an unknown-rank `s` becomes `rank`
// unknown dims.
inline Status WithRank(const PartialShape& s, int32_t rank, PartialShape* out) {
  if (!s.known_rank()) {
    *out = PartialShape::Known(std::vector<int64_t>(static_cast<size_t>(rank), -1));
    return Status();
  }
  if (s.rank != rank) {
    return errors::InvalidArgument("Shape must be rank ", rank, " but is rank ", s.rank);
  }
  *out = s;
  return Status();
}

// `s` must have at least `rank` dims; unknown rank stays unknown.
inline Status WithRankAtLeast(const PartialShape& s, int32_t rank, PartialShape* out) {
  if (s.known_rank() && s.rank < rank) {
    return errors::InvalidArgument("Shape must be at least rank ", rank, " but is rank ", s.rank);
  }
  *out = s;
  return Status();
}

// *n = the number of elements of `s`, or -1 when its rank or a dim is
// unknown. graphrt's size rule (graphrt/shape_limits.h) applies to what is
// known: a known dim below -1, or known nonzero dims whose product already
// exceeds 2^58, fit no tensor, so they are an InvalidArgument even when
// another dim is unknown.
inline Status NumElements(const PartialShape& s, int64_t* n) {
  *n = -1;
  if (!s.known_rank()) return Status();
  std::vector<int64_t> known;
  known.reserve(s.dims.size());
  for (int64_t d : s.dims) {
    if (d < -1) return errors::InvalidArgument("shape ", ShapeString(s), " has a negative dimension");
    if (d >= 0) known.push_back(d);
  }
  int64_t count = 0;
  Status st = NumElementsOf(known, &count);
  if (!st.ok()) return errors::InvalidArgument("shape ", ShapeString(s), " has more than 2^58 elements");
  if (known.size() == s.dims.size()) *n = count;
  return Status();
}

// *out = a + b for dims (Concat's sum along the axis, Pad's dim plus its
// paddings) under the same rule: no dim of a valid shape exceeds 2^58, so
// neither may a sum. -1 (unknown) in either keeps the sum unknown.
inline Status AddDims(int64_t a, int64_t b, int64_t* out) {
  if (a < -1 || b < -1) return errors::InvalidArgument("negative dimension in ", a, " + ", b);
  if (a == -1 || b == -1) {
    *out = -1;
  } else if (a > GR_MAX_TENSOR_ELEMENTS - b) {
    return errors::InvalidArgument("dimension ", a, " + ", b, " exceeds 2^58 elements");
  } else {
    *out = a + b;
  }
  return Status();
}

// *out = a * b for dims (Tile's dim * multiple) under the same rule; -1
// (unknown) in either keeps the product unknown, except that 0 times
// anything is 0.
inline Status MultiplyPartialDims(int64_t a, int64_t b, int64_t* out) {
  if (a < -1 || b < -1) return errors::InvalidArgument("negative dimension in ", a, " * ", b);
  if (a == 0 || b == 0) {
    *out = 0;
    return Status();
  }
  if (a == -1 || b == -1) {
    *out = -1;
    return Status();
  }
  return MultiplyDims(a, b, out);
}

// ---------------------------------------------------------- broadcasting

// Numpy broadcasting of two fully known shapes. Returns false (and leaves
// *out unspecified) when they are incompatible. Usable from kernels.
inline bool BroadcastShapes(const std::vector<int64_t>& a, const std::vector<int64_t>& b,
                            std::vector<int64_t>* out) {
  const size_t ra = a.size(), rb = b.size();
  const size_t r = std::max(ra, rb);
  out->assign(r, 1);
  for (size_t i = 0; i < r; ++i) {
    // Right-aligned: missing leading dims count as 1.
    const int64_t da = i < r - ra ? 1 : a[i - (r - ra)];
    const int64_t db = i < r - rb ? 1 : b[i - (r - rb)];
    if (da == db || db == 1) {
      (*out)[i] = da;
    } else if (da == 1) {
      (*out)[i] = db;
    } else {
      return false;
    }
  }
  return true;
}

// Broadcasting over partial shapes. A dim that is unknown on one side takes
// the other side's value when that value is > 1 (the program is assumed to
// be correct, as TensorFlow does), and stays unknown otherwise.
inline Status BroadcastPartialShapes(const PartialShape& x, const PartialShape& y,
                                     PartialShape* out) {
  if (!x.known_rank() || !y.known_rank()) {
    *out = PartialShape::Unknown();
    return Status();
  }
  const int32_t r = std::max(x.rank, y.rank);
  std::vector<int64_t> dims(static_cast<size_t>(r));
  for (int32_t i = 0; i < r; ++i) {
    const int64_t dx = i < r - x.rank ? 1 : x.dims[i - (r - x.rank)];
    const int64_t dy = i < r - y.rank ? 1 : y.dims[i - (r - y.rank)];
    int64_t d;
    if (dx < 0 || dy < 0) {
      if (dx > 1) {
        d = dx;
      } else if (dy > 1) {
        d = dy;
      } else if (dx == 1) {
        d = dy;
      } else if (dy == 1) {
        d = dx;
      } else {
        d = -1;
      }
    } else if (dx == dy || dy == 1) {
      d = dx;
    } else if (dx == 1) {
      d = dy;
    } else {
      return errors::InvalidArgument("Incompatible shapes: ", ShapeString(x), " vs. ",
                                     ShapeString(y));
    }
    dims[i] = d;
  }
  // Two valid shapes can broadcast to one that no tensor may have
  // ([2^40,1] and [1,2^40]): say so here rather than at allocation.
  PartialShape result = PartialShape::Known(std::move(dims));
  int64_t unused;
  if (!NumElements(result, &unused).ok()) {
    return errors::InvalidArgument("Broadcasting ", ShapeString(x), " and ", ShapeString(y),
                                   " gives shape ", ShapeString(result),
                                   " of more than 2^58 elements");
  }
  *out = std::move(result);
  return Status();
}

// ------------------------------------------------------ shape functions

// Output 0 has the shape of input 0.
inline Status UnchangedShape(InferenceContext* c) {
  c->set_output(0, c->input(0));
  return Status();
}

// Output 0 is a scalar.
inline Status ScalarShape(InferenceContext* c) {
  c->set_output(0, PartialShape::Known({}));
  return Status();
}

// Every output has an unknown shape.
inline Status UnknownShape(InferenceContext* c) {
  const int n = c->num_outputs();
  for (int i = 0; i < n; ++i) c->set_output(i, PartialShape::Unknown());
  return Status();
}

// For ops without outputs (NoOp): nothing to set.
inline Status NoOutputs(InferenceContext*) { return Status(); }

// Output 0 = numpy broadcast of inputs 0 and 1.
inline Status BroadcastBinaryOpShape(InferenceContext* c) {
  PartialShape out;
  Status s = BroadcastPartialShapes(c->input(0), c->input(1), &out);
  if (!s.ok()) return s;
  c->set_output(0, out);
  return Status();
}

}  // namespace shape_fns
}  // namespace sdk
}  // namespace graphrt

#pragma GCC visibility pop

#endif  // GRAPHRT_SDK_SHAPE_FNS_H_
