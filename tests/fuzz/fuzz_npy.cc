// libFuzzer harness: bytes -> ParseNpy. What parses must serialize, parse
// again to the same dtype and shape, and serialize to the same bytes.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "graphrt/core/npy.h"
#include "graphrt/core/tensor.h"

namespace {

[[noreturn]] void Fail(const char* what, const graphrt::Status& s) {
  std::fprintf(stderr, "fuzz_npy: %s: %s\n", what, s.ToString().c_str());
  std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string bytes(reinterpret_cast<const char*>(data), size);
  graphrt::Tensor t;
  if (!graphrt::ParseNpy(bytes, "fuzz input", &t).ok()) return 0;
  std::string first;
  if (graphrt::Status s = graphrt::SerializeNpy(t, &first); !s.ok()) Fail("SerializeNpy of a parsed tensor", s);
  graphrt::Tensor again;
  if (graphrt::Status s = graphrt::ParseNpy(first, "serialized", &again); !s.ok()) Fail("ParseNpy of SerializeNpy", s);
  if (again.dtype() != t.dtype() || again.shape() != t.shape()) {
    std::fprintf(stderr, "fuzz_npy: round trip changed %s to %s\n", t.DebugString(0).c_str(),
                 again.DebugString(0).c_str());
    std::abort();
  }
  // The first write normalises (byte order, fortran order, '<U' strings); from
  // then on a round trip must be exact.
  std::string second;
  if (graphrt::Status s = graphrt::SerializeNpy(again, &second); !s.ok()) Fail("SerializeNpy, second time", s);
  if (second != first) {
    std::fprintf(stderr, "fuzz_npy: serialize -> parse -> serialize changed the bytes\n");
    std::abort();
  }
  return 0;
}
