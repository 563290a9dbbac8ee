// libFuzzer harness: bytes -> a checkpoint through graphrt_bundle.
//
// Input: byte 0 chooses the format. Even: V2 bundle, then a little-endian
// uint32 n, n bytes of .index, the rest = data shard 0. Odd: V1, the rest is
// one TensorSlice file. Every tensor the reader lists is looked up whole and
// as its first half along dimension 0; a failing Status is fine, a crash,
// sanitizer report or an allocation over the limit is not.
#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "graphrt/bundle/bundle.h"

namespace bd = graphrt::bundle;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 1) return 0;
  const char* p = reinterpret_cast<const char*>(data);
  std::unique_ptr<bd::CheckpointReader> r;
  if ((data[0] & 1) == 0) {
    if (size < 5) return 0;
    uint32_t n = 0;
    std::memcpy(&n, p + 1, 4);
    const size_t rest = size - 5;
    if (n > rest) n = static_cast<uint32_t>(rest);
    const std::string index(p + 5, n);
    std::vector<std::string> shards = {std::string(p + 5 + n, rest - n)};
    if (!bd::CheckpointReader::OpenV2FromMemory(index, std::move(shards), &r).ok()) return 0;
  } else {
    if (!bd::CheckpointReader::OpenV1FromMemory(std::string(p + 1, size - 1), &r).ok()) return 0;
  }
  for (const bd::EntryInfo& e : r->entries()) {
    bd::TensorValue t;
    (void)r->Lookup(e.name, &t);
    if (!e.dims.empty() && e.dims[0] > 1) {
      bd::TensorSlice half;
      half.extents.resize(e.dims.size());
      half.extents[0].start = 0;
      half.extents[0].length = e.dims[0] / 2;
      (void)r->LookupSlice(e.name, half, &t);
    }
  }
  return 0;
}
