// libFuzzer harness: bytes -> a TensorBoard event file -> ReadEventFile.
//
// Input: byte 0 odd: the rest is the file as is. Even: the rest is a run of
// TFRecord records whose masked CRCs the harness sets before writing the
// file, following the records' own (fuzzed) length fields, so that
// mutations get past the CRC checks to the length checks and the Event
// parser; a length that overruns the input keeps its header (with a right
// header CRC) and the rest as it is. Whatever reads back is written again
// with TFRecordWriter and read once more: the same events, byte for byte.
// A failing Status is fine; a crash, sanitizer report, escaped exception,
// leak or an allocation over the limit is not.
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include "graphrt/bundle/bundle.h"
#include "graphrt/client/event_writer.h"

namespace {

constexpr size_t kHeaderBytes = 12;  // uint64 length, uint32 masked CRC of it
constexpr size_t kFooterBytes = 4;   // uint32 masked CRC of the data

std::string g_dir;  // this process's scratch directory

uint32_t MaskedCrc(const char* data, size_t n) {
  return graphrt::bundle::MaskCrc(graphrt::bundle::Crc32c(data, n));
}

void PutCrc(uint32_t crc, char* out) {
  for (int i = 0; i < 4; ++i) out[i] = static_cast<char>((crc >> (8 * i)) & 0xff);
}

// Sets the CRCs of every record that `bytes` frames, in place.
void RepairCrcs(std::string* bytes) {
  size_t offset = 0;
  while (bytes->size() - offset >= kHeaderBytes) {
    char* header = bytes->data() + offset;
    PutCrc(MaskedCrc(header, 8), header + 8);
    uint64_t length = 0;
    for (int i = 7; i >= 0; --i) length = (length << 8) | static_cast<uint8_t>(header[i]);
    const size_t left = bytes->size() - offset - kHeaderBytes;
    if (length > left || left - length < kFooterBytes) return;
    char* data = header + kHeaderBytes;
    PutCrc(MaskedCrc(data, static_cast<size_t>(length)), data + length);
    offset += kHeaderBytes + static_cast<size_t>(length) + kFooterBytes;
  }
}

void WriteFile(const std::string& path, const std::string& bytes) {
  std::ofstream f(path, std::ios::binary | std::ios::trunc);
  f.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  if (!f) std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  char tmpl[] = "/tmp/fuzz_event_file_XXXXXX";
  if (mkdtemp(tmpl) == nullptr) std::abort();
  g_dir = tmpl;
  std::atexit([] {
    std::remove((g_dir + "/in.tfevents").c_str());
    std::remove((g_dir + "/again.tfevents").c_str());
    rmdir(g_dir.c_str());
  });
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 1) return 0;
  std::string bytes(reinterpret_cast<const char*>(data) + 1, size - 1);
  if ((data[0] & 1) == 0) RepairCrcs(&bytes);
  const std::string path = g_dir + "/in.tfevents";
  WriteFile(path, bytes);
  std::vector<graphrt::proto::Event> events;
  if (!graphrt::ReadEventFile(path, &events).ok()) return 0;

  const std::string again = g_dir + "/again.tfevents";
  std::vector<std::string> serialized;
  {
    std::unique_ptr<graphrt::TFRecordWriter> w;
    if (!graphrt::TFRecordWriter::Open(again, /*truncate=*/true, &w).ok()) std::abort();
    for (const graphrt::proto::Event& e : events) {
      serialized.push_back(e.SerializeAsString());
      if (!w->WriteRecord(serialized.back()).ok()) std::abort();
    }
    if (!w->Close().ok()) std::abort();
  }
  std::vector<graphrt::proto::Event> reread;
  if (!graphrt::ReadEventFile(again, &reread).ok() || reread.size() != events.size()) std::abort();
  for (size_t i = 0; i < reread.size(); ++i) {
    if (reread[i].SerializeAsString() != serialized[i]) std::abort();
  }
  return 0;
}
