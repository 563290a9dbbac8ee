// Helpers shared by the parsing family's op definitions and kernels.
#ifndef GRAPHRT_OPS_PARSING_PARSING_UTIL_H_
#define GRAPHRT_OPS_PARSING_PARSING_UTIL_H_

#include <graphrt/sdk/sdk.h>
#include <graphrt/sdk/shape_fns.h>

#include <cstdint>
#include <string>
#include <vector>

#pragma GCC visibility push(hidden)

namespace graphrt {
namespace sdk {
namespace parsing {

// Whether this SDK can read a list(shape) attr (dense_shapes). The SDK of
// ABI 1.2 cannot: GR_CoreApi has no list(shape) accessor and AttrReader no
// Get(name, std::vector<PartialShape>*). Once both exist, dense features
// work without a change here.
template <typename R>
concept ReadsShapeLists = requires(const R& r, std::vector<PartialShape>* v) { r.Get("dense_shapes", v); };
inline constexpr bool kSdkReadsShapeLists = ReadsShapeLists<AttrReader>;

// dense_shapes of a node with `count` dense features. An empty list needs
// no accessor; a non-empty one is Unimplemented on an SDK that cannot read
// it (the kernel fails at construction, naming the node).
template <typename Ctx>
Status GetDenseShapes(const Ctx* c, int64_t count, std::vector<PartialShape>* out) {
  if constexpr (ReadsShapeLists<AttrReader>) {
    GR_RETURN_IF_ERROR_SDK(c->GetAttr("dense_shapes", out));
  } else {
    // The string-list reader succeeds exactly on an empty list.
    std::vector<std::string> probe;
    if (count == 0 && c->GetAttr("dense_shapes", &probe).ok() && probe.empty()) {
      out->clear();
      return Status();
    }
    return errors::Unimplemented(
        "dense features need the list(shape) attr 'dense_shapes', which this build's plugin ABI "
        "cannot hand to a plugin (no list(shape) accessor); only sparse and ragged features "
        "can be parsed");
  }
  if (static_cast<int64_t>(out->size()) != count) {
    return errors::InvalidArgument("len(dense_shapes) = ", out->size(), " but there are ", count,
                                   " dense features");
  }
  return Status();
}

// TensorFlow's rule for dense_shapes[i]: known rank, every dim known except
// possibly the first (-1: a variable-length feature).
inline Status CheckDenseShape(const PartialShape& s, int i) {
  bool ok = s.known_rank();
  for (int d = 1; ok && d < s.rank; ++d) ok = s.dims[d] >= 0;
  if (ok && s.rank > 0) ok = s.dims[0] >= -1;
  if (!ok) {
    return errors::InvalidArgument("dense_shapes[", i, "] has unknown rank or unknown inner dimensions: ",
                                   shape_fns::ShapeString(s));
  }
  return Status();
}

}  // namespace parsing
}  // namespace sdk
}  // namespace graphrt

#pragma GCC visibility pop

#endif  // GRAPHRT_OPS_PARSING_PARSING_UTIL_H_
