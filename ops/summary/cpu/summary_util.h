// Shared by the summary family's kernels: string elements of inputs, and
// output 0 as a serialized Summary.
#ifndef GRAPHRT_OPS_SUMMARY_CPU_SUMMARY_UTIL_H_
#define GRAPHRT_OPS_SUMMARY_CPU_SUMMARY_UTIL_H_

#include <graphrt/sdk/sdk.h>

#include <cstdint>
#include <string>
#include <string_view>

#include "graphrt/summary/summary.pb.h"

namespace graphrt {
namespace sdk {
namespace summary_util {

inline std::string_view StringAt(const TensorView& t, int64_t i) {
  const GR_StringElem& e = t.data<GR_StringElem>()[i];
  return std::string_view(e.data, e.size);
}

// Output 0 = `s` serialized, a scalar string.
inline void OutputSummary(OpKernelContext* ctx, const ::graphrt::summary::Summary& s) {
  std::string bytes;
  OP_REQUIRES(ctx, s.SerializeToString(&bytes),
              errors::Internal("the summary does not fit in a protocol buffer (", s.ByteSizeLong(), " bytes)"));
  TensorView out;
  OP_REQUIRES_OK(ctx, ctx->allocate_output(0, {}, &out));
  Api().string_assign(out.raw(), 0, bytes.data(), bytes.size());
}

}  // namespace summary_util
}  // namespace sdk
}  // namespace graphrt

#endif  // GRAPHRT_OPS_SUMMARY_CPU_SUMMARY_UTIL_H_
