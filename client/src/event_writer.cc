// TFRecord framing and TensorBoard event files (event_writer.h).
#include "graphrt/client/event_writer.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cinttypes>
#include <climits>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <utility>

#include "graphrt/bundle/bundle.h"
#include "graphrt/proto/summary.pb.h"

namespace graphrt {
namespace {

namespace fs = std::filesystem;

// Records are buffered up to this many bytes before a write (one record
// larger than that goes out on its own).
constexpr size_t kBufferBytes = 256 << 10;
constexpr size_t kHeaderBytes = 12;  // length + its masked crc
constexpr size_t kFooterBytes = 4;   // masked crc of the data

void PutLE(uint64_t v, int bytes, char* out) {
  for (int i = 0; i < bytes; ++i) out[i] = static_cast<char>((v >> (8 * i)) & 0xff);
}

uint64_t GetLE(const char* p, int bytes) {
  uint64_t v = 0;
  for (int i = 0; i < bytes; ++i) v |= static_cast<uint64_t>(static_cast<unsigned char>(p[i])) << (8 * i);
  return v;
}

uint32_t MaskedCrc(const char* data, size_t n) { return bundle::MaskCrc(bundle::Crc32c(data, n)); }

std::string ErrnoText() { return std::strerror(errno); }

double NowSeconds() {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

std::string HostName() {
  char buf[HOST_NAME_MAX + 1] = {};
  if (gethostname(buf, sizeof(buf) - 1) != 0) return "localhost";
  return buf;
}

// Reads exactly n bytes at the current position; false on a short read.
bool ReadFully(std::FILE* f, char* out, size_t n) { return std::fread(out, 1, n, f) == n; }

}  // namespace

// ------------------------------------------------------------- TFRecordWriter

Status TFRecordWriter::Open(const std::string& path, bool truncate, std::unique_ptr<TFRecordWriter>* out) {
  const int flags = O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC | (truncate ? O_TRUNC : 0);
  const int fd = ::open(path.c_str(), flags, 0644);
  if (fd < 0) return errors::Unavailable("Could not open ", path, " for writing: ", ErrnoText());
  out->reset(new TFRecordWriter(path, fd));
  return Status();
}

TFRecordWriter::~TFRecordWriter() { Close().IgnoreError(); }

std::string TFRecordWriter::Frame(std::string_view data) {
  std::string out(kHeaderBytes + data.size() + kFooterBytes, '\0');
  PutLE(data.size(), 8, &out[0]);
  PutLE(MaskedCrc(out.data(), 8), 4, &out[8]);
  if (!data.empty()) std::memcpy(&out[kHeaderBytes], data.data(), data.size());
  PutLE(MaskedCrc(data.data(), data.size()), 4, &out[kHeaderBytes + data.size()]);
  return out;
}

Status TFRecordWriter::WriteRecord(std::string_view data) {
  if (fd_ < 0) return errors::FailedPrecondition("TFRecord file ", path_, " is closed");
  buffer_ += Frame(data);
  if (buffer_.size() >= kBufferBytes) return WriteBuffer();
  return Status();
}

Status TFRecordWriter::WriteBuffer() {
  size_t done = 0;
  while (done < buffer_.size()) {
    const ssize_t n = ::write(fd_, buffer_.data() + done, buffer_.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      Status s = errors::Unavailable("Could not write to ", path_, ": ", n < 0 ? ErrnoText() : "no progress");
      buffer_.erase(0, done);
      return s;
    }
    done += static_cast<size_t>(n);
  }
  buffer_.clear();
  return Status();
}

Status TFRecordWriter::Flush() {
  if (fd_ < 0) return errors::FailedPrecondition("TFRecord file ", path_, " is closed");
  return WriteBuffer();
}

Status TFRecordWriter::Close() {
  if (fd_ < 0) return Status();
  Status s = WriteBuffer();
  if (::close(fd_) != 0 && s.ok()) s = errors::Unavailable("Could not close ", path_, ": ", ErrnoText());
  fd_ = -1;
  return s;
}

bool TFRecordWriter::FileStillExists() const {
  struct stat st;
  return fd_ >= 0 && ::fstat(fd_, &st) == 0 && st.st_nlink > 0;
}

// ------------------------------------------------------------------ reading

Status ReadTFRecords(const std::string& path, std::vector<std::string>* records, uint64_t* incomplete_tail) {
  records->clear();
  if (incomplete_tail != nullptr) *incomplete_tail = 0;
  std::unique_ptr<std::FILE, int (*)(std::FILE*)> f(std::fopen(path.c_str(), "rb"), &std::fclose);
  if (!f) return errors::NotFound("Could not open TFRecord file ", path, ": ", ErrnoText());
  struct stat st;
  if (::fstat(fileno(f.get()), &st) != 0) return errors::Unavailable("Could not stat ", path, ": ", ErrnoText());
  if (S_ISDIR(st.st_mode)) return errors::InvalidArgument("TFRecord file ", path, " is a directory");
  const uint64_t file_size = static_cast<uint64_t>(st.st_size);
  uint64_t offset = 0;
  while (offset < file_size) {
    // A record cut short can only be the last one: a writer still writing
    // it (TensorBoard's reader stops there too). Checksums of complete
    // headers and records are still checked: damage is an error.
    auto truncated = [&] {
      if (incomplete_tail == nullptr) return errors::DataLoss("truncated record at ", offset, " in ", path);
      *incomplete_tail = file_size - offset;
      return Status::OK();
    };
    auto corrupted = [&] { return errors::DataLoss("corrupted record at ", offset, " in ", path); };
    char header[kHeaderBytes];
    if (file_size - offset < kHeaderBytes || !ReadFully(f.get(), header, kHeaderBytes)) return truncated();
    if (MaskedCrc(header, 8) != static_cast<uint32_t>(GetLE(header + 8, 4))) return corrupted();
    const uint64_t length = GetLE(header, 8);
    // Checked against what is left of the file before anything is
    // allocated from it.
    if (length > file_size - offset - kHeaderBytes || file_size - offset - kHeaderBytes - length < kFooterBytes)
      return truncated();
    std::string data(static_cast<size_t>(length), '\0');
    char footer[kFooterBytes];
    if (!ReadFully(f.get(), data.data(), data.size()) || !ReadFully(f.get(), footer, kFooterBytes)) return truncated();
    if (MaskedCrc(data.data(), data.size()) != static_cast<uint32_t>(GetLE(footer, 4))) return corrupted();
    records->push_back(std::move(data));
    offset += kHeaderBytes + length + kFooterBytes;
  }
  return Status();
}

Status ReadEventFile(const std::string& path, std::vector<proto::Event>* events, uint64_t* incomplete_tail) {
  events->clear();
  std::vector<std::string> records;
  uint64_t tail = 0;
  if (Status s = ReadTFRecords(path, &records, &tail); !s.ok()) return s;
  if (incomplete_tail != nullptr) *incomplete_tail = tail;
  uint64_t offset = 0;
  for (size_t i = 0; i < records.size(); ++i) {
    proto::Event e;
    if (records[i].size() > static_cast<size_t>(INT_MAX) ||
        !e.ParseFromArray(records[i].data(), static_cast<int>(records[i].size())))
      return errors::DataLoss("record ", i, " at ", offset, " in ", path, " is not an Event");
    events->push_back(std::move(e));
    offset += kHeaderBytes + records[i].size() + kFooterBytes;
  }
  return Status();
}

// ------------------------------------------------------------ EventFileWriter

Status EventFileWriter::Create(const std::string& logdir, const std::string& suffix,
                               std::unique_ptr<EventFileWriter>* out) {
  std::error_code ec;
  fs::create_directories(logdir, ec);
  if (ec) return errors::Unavailable("Could not create log directory ", logdir, ": ", ec.message());
  std::unique_ptr<EventFileWriter> w(new EventFileWriter(logdir, suffix));
  {
    std::lock_guard<std::mutex> lock(w->mu_);
    if (Status s = w->OpenNewFile(); !s.ok()) return s;
  }
  *out = std::move(w);
  return Status();
}

EventFileWriter::~EventFileWriter() { Close().IgnoreError(); }

Status EventFileWriter::OpenNewFile() {
  if (writer_) writer_->Close().IgnoreError();  // a deleted file: nothing left to save
  writer_.reset();
  const auto seconds = static_cast<long long>(std::chrono::duration_cast<std::chrono::seconds>(
                                                  std::chrono::system_clock::now().time_since_epoch())
                                                  .count());
  char stamp[32];
  std::snprintf(stamp, sizeof(stamp), "%010lld", seconds);
  const std::string name = "events.out.tfevents." + std::string(stamp) + "." + HostName() + suffix_;
  const std::string path = (fs::path(logdir_) / name).string();
  std::unique_ptr<TFRecordWriter> w;
  if (Status s = TFRecordWriter::Open(path, /*truncate=*/false, &w); !s.ok()) return s;
  proto::Event first;
  first.set_wall_time(static_cast<double>(seconds));
  first.set_file_version("brain.Event:2");
  if (Status s = w->WriteRecord(first.SerializeAsString()); !s.ok()) return s;
  if (Status s = w->Flush(); !s.ok()) return s;
  filename_ = path;
  writer_ = std::move(w);
  return Status();
}

Status EventFileWriter::WriteLocked(const proto::Event& event) {
  if (closed_) return errors::FailedPrecondition("event file writer for ", filename_, " is closed");
  if (!writer_->FileStillExists()) {
    std::fprintf(stderr, "graphrt: event file %s was deleted; starting a new one\n", filename_.c_str());
    if (Status s = OpenNewFile(); !s.ok()) return s;
  }
  std::string bytes;
  if (event.wall_time() == 0) {
    proto::Event stamped = event;
    stamped.set_wall_time(NowSeconds());
    bytes = stamped.SerializeAsString();
  } else {
    bytes = event.SerializeAsString();
  }
  return writer_->WriteRecord(bytes);
}

Status EventFileWriter::WriteEvent(const proto::Event& event) {
  std::lock_guard<std::mutex> lock(mu_);
  return WriteLocked(event);
}

Status EventFileWriter::AddSummary(const std::string& serialized_summary, int64_t step) {
  proto::Event e;
  e.set_step(step);
  if (serialized_summary.size() > static_cast<size_t>(INT_MAX) ||
      !e.mutable_summary()->ParseFromArray(serialized_summary.data(), static_cast<int>(serialized_summary.size())))
    return errors::InvalidArgument("AddSummary: the ", serialized_summary.size(), "-byte string is not a serialized Summary");
  return WriteEvent(e);
}

Status EventFileWriter::AddScalar(const std::string& tag, double value, int64_t step) {
  proto::Event e;
  e.set_step(step);
  proto::Summary::Value* v = e.mutable_summary()->add_value();
  v->set_tag(tag);
  v->set_simple_value(static_cast<float>(value));
  return WriteEvent(e);
}

Status EventFileWriter::Flush() {
  std::lock_guard<std::mutex> lock(mu_);
  if (closed_) return errors::FailedPrecondition("event file writer for ", filename_, " is closed");
  if (Status s = writer_->Flush(); !s.ok()) return s;
  if (!writer_->FileStillExists()) return errors::DataLoss("event file ", filename_, " was deleted while open");
  return Status();
}

Status EventFileWriter::Close() {
  std::lock_guard<std::mutex> lock(mu_);
  if (closed_) return Status();
  closed_ = true;
  return writer_ ? writer_->Close() : Status();
}

}  // namespace graphrt
