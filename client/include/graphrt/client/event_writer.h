// TensorBoard event files: TensorFlow's TFRecord framing and the
// events.out.tfevents.* files that TF1's FileWriter / EventsWriter write
// (../shared/tf_proto_facts.md §10).
//
// A TFRecord file is a run of records, each
//   uint64 length (little-endian) | uint32 masked_crc32c(the 8 length bytes)
//   | data[length] | uint32 masked_crc32c(data)
// with no header or footer. An event file is a TFRecord file of serialized
// Events whose first is {wall_time, file_version: "brain.Event:2"}.
#ifndef GRAPHRT_CLIENT_EVENT_WRITER_H_
#define GRAPHRT_CLIENT_EVENT_WRITER_H_

#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include "graphrt/core/status.h"
#include "graphrt/proto/event.pb.h"

namespace graphrt {

// Writes TFRecord records to one file. Records are framed into a buffer of
// whole records that goes to the file (opened O_APPEND) in single writes,
// so two writers on one file never interleave parts of records. Not
// thread-safe (EventFileWriter locks around it).
class TFRecordWriter {
 public:
  // Opens `path` for appending, creating it if missing (truncating it first
  // when `truncate`).
  static Status Open(const std::string& path, bool truncate, std::unique_ptr<TFRecordWriter>* out);
  ~TFRecordWriter();  // flushes (errors are lost: call Close to see them)
  TFRecordWriter(const TFRecordWriter&) = delete;
  TFRecordWriter& operator=(const TFRecordWriter&) = delete;

  Status WriteRecord(std::string_view data);
  // Hands the buffered records to the OS.
  Status Flush();
  // Flushes and closes; idempotent. Writing afterwards is FailedPrecondition.
  Status Close();
  // False once the file has been deleted (unlinked) while open.
  bool FileStillExists() const;
  const std::string& path() const { return path_; }

  // The framed bytes of one record.
  static std::string Frame(std::string_view data);

 private:
  TFRecordWriter(std::string path, int fd) : path_(std::move(path)), fd_(fd) {}
  Status WriteBuffer();

  std::string path_;
  int fd_ = -1;
  std::string buffer_;
};

// Reads every record of a TFRecord file, checking both masked CRCs of each.
// DataLoss naming the file and the record's offset on a CRC mismatch
// ("corrupted record at <offset>") or a short header or body ("truncated
// record at <offset>", a cut-off last record included); NotFound when the
// file cannot be opened, InvalidArgument for a directory. With
// `incomplete_tail`, a cut-off last record (a writer still writing it) is
// not an error: the records before it come back and *incomplete_tail gets
// its bytes (0 when the file ends after a complete record).
Status ReadTFRecords(const std::string& path, std::vector<std::string>* records,
                     uint64_t* incomplete_tail = nullptr);

// Each complete record parsed as an Event (DataLoss when one does not
// parse or a CRC does not match), as TensorBoard reads a file that a run is
// still writing: a cut-off last record ends the events without error, its
// bytes in *incomplete_tail when given.
Status ReadEventFile(const std::string& path, std::vector<proto::Event>* events,
                     uint64_t* incomplete_tail = nullptr);

// One TensorBoard event file, as TF1's tf.summary.FileWriter writes it.
// Thread-safe: hooks may call it from several threads.
class EventFileWriter {
 public:
  // Creates <logdir>/events.out.tfevents.<seconds>.<hostname><suffix>
  // (<seconds>: 10 digits, zero-padded; logdir created if missing) and
  // writes and flushes the first event (wall_time = those seconds,
  // file_version "brain.Event:2"). Should the file exist already (another
  // writer in the same second), the events are appended to it.
  static Status Create(const std::string& logdir, const std::string& suffix, std::unique_ptr<EventFileWriter>* out);
  ~EventFileWriter();  // closes
  EventFileWriter(const EventFileWriter&) = delete;
  EventFileWriter& operator=(const EventFileWriter&) = delete;

  // Buffers one event; wall_time is set to now when 0. If the file was
  // deleted since the last write, starts a new file first (as TensorFlow's
  // EventsWriter does).
  Status WriteEvent(const proto::Event& event);
  // An Event{wall_time now, step, summary}; InvalidArgument if
  // `serialized_summary` is not a Summary.
  Status AddSummary(const std::string& serialized_summary, int64_t step);
  // An Event{step, summary{value{tag, simple_value}}} (simple_value is a
  // float, as in TensorFlow).
  Status AddScalar(const std::string& tag, double value, int64_t step);
  // Writes the buffered events to the file; DataLoss if the file has been
  // deleted.
  Status Flush();
  // Flushes and closes; idempotent. Writing afterwards is FailedPrecondition.
  Status Close();
  // The current file's path (it changes only when a deleted file is
  // replaced by WriteEvent).
  const std::string& filename() const { return filename_; }

 private:
  EventFileWriter(std::string logdir, std::string suffix) : logdir_(std::move(logdir)), suffix_(std::move(suffix)) {}
  Status OpenNewFile();  // caller holds mu_
  Status WriteLocked(const proto::Event& event);

  const std::string logdir_;
  const std::string suffix_;
  std::mutex mu_;
  std::string filename_;
  std::unique_ptr<TFRecordWriter> writer_;
  bool closed_ = false;
};

}  // namespace graphrt

#endif  // GRAPHRT_CLIENT_EVENT_WRITER_H_
