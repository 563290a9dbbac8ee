// libFuzzer harness: bytes -> TensorProto -> Tensor::FromProto. What converts
// must come back from AsProtoTensorContent to the same dtype and shape, and
// from then on round-trip to the same proto.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "graphrt/core/tensor.h"
#include "graphrt/proto/tensor.pb.h"

namespace {

// FromProto allocates from the allocator it is given; sessions give a
// budgeted one. Here: the host heap, refusing more than 64 MiB at once, so
// a proto declaring 4 TB of repeated values is a ResourceExhausted Status.
// (At 256 MiB a 54-byte proto of 9.6 M empty strings took 0.8 s under ASan
// and, on a loaded machine, past the 10 s timeout: time in proportion to a
// size the budget allows, not a defect.)
class LimitedHostAllocator final : public graphrt::Allocator {
 public:
  const char* Name() const override { return "host (fuzz limit 64 MiB)"; }
  void* Allocate(size_t bytes, size_t alignment) override {
    return bytes > (size_t{64} << 20) ? nullptr : graphrt::HostAllocator()->Allocate(bytes, alignment);
  }
  void Deallocate(void* ptr, size_t bytes) override { graphrt::HostAllocator()->Deallocate(ptr, bytes); }
};

LimitedHostAllocator limited;

[[noreturn]] void Fail(const char* what) {
  std::fprintf(stderr, "fuzz_tensor_proto: %s\n", what);
  std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  graphrt::proto::TensorProto p;
  if (!p.ParseFromArray(data, static_cast<int>(size))) return 0;
  graphrt::Tensor t;
  if (!graphrt::Tensor::FromProto(p, &t, &limited).ok()) return 0;
  // The round trip writes one proto entry per element: for millions of
  // (empty) strings that is seconds under ASan, the harness's time, not a
  // defect. Conversion of large tensors is covered by the unit tests.
  if (t.NumElements() > (int64_t{1} << 16)) return 0;
  graphrt::proto::TensorProto first;
  t.AsProtoTensorContent(&first);
  graphrt::Tensor again;
  if (!graphrt::Tensor::FromProto(first, &again).ok()) Fail("FromProto refused AsProtoTensorContent's output");
  if (again.dtype() != t.dtype() || again.shape() != t.shape()) Fail("round trip changed the dtype or shape");
  graphrt::proto::TensorProto second;
  again.AsProtoTensorContent(&second);
  if (second.SerializeAsString() != first.SerializeAsString()) Fail("proto -> tensor -> proto is not stable");
  return 0;
}
