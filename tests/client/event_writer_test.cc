// TFRecord framing and TensorBoard event files (client/event_writer.h),
// and `graphrt events` on a file framed here.
// Files are read back byte by byte here, with a bitwise CRC32C written in
// this test (Castagnoli, reflected polynomial 0x82F63B78) and TensorFlow's
// mask, independent of the ISA-L CRC the writer uses.
#include "graphrt/client/event_writer.h"

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <climits>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <regex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "graphrt/proto/summary.pb.h"
#include "test_util.h"

namespace graphrt {
namespace {

namespace fs = std::filesystem;
using ::graphrt::testing::MakeTempDir;

uint32_t RefCrc32c(const std::string& data) {
  uint32_t crc = 0xffffffffu;
  for (unsigned char byte : data) {
    crc ^= byte;
    for (int k = 0; k < 8; ++k) crc = (crc & 1) ? (crc >> 1) ^ 0x82f63b78u : crc >> 1;
  }
  return crc ^ 0xffffffffu;
}

uint32_t RefMask(uint32_t crc) { return ((crc >> 15) | (crc << 17)) + 0xa282ead8u; }

uint64_t LE(const std::string& s, size_t at, int bytes) {
  uint64_t v = 0;
  for (int i = 0; i < bytes; ++i) v |= static_cast<uint64_t>(static_cast<unsigned char>(s[at + i])) << (8 * i);
  return v;
}

std::string ReadBytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

void WriteBytes(const std::string& path, const std::string& bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << bytes;
}

// Splits a TFRecord stream by hand, checking every field of the framing.
std::vector<std::string> HandParseRecords(const std::string& file) {
  std::vector<std::string> records;
  size_t at = 0;
  while (at < file.size()) {
    EXPECT_GE(file.size() - at, 16u) << "short record at " << at;
    if (file.size() - at < 16) break;
    const uint64_t len = LE(file, at, 8);
    EXPECT_EQ(LE(file, at + 8, 4), RefMask(RefCrc32c(file.substr(at, 8)))) << "length crc at " << at;
    EXPECT_LE(len, file.size() - at - 16);
    if (len > file.size() - at - 16) break;
    const std::string data = file.substr(at + 12, len);
    EXPECT_EQ(LE(file, at + 12 + len, 4), RefMask(RefCrc32c(data))) << "data crc at " << at;
    records.push_back(data);
    at += 16 + len;
  }
  return records;
}

std::string HostName() {
  char buf[HOST_NAME_MAX + 1] = {};
  EXPECT_EQ(gethostname(buf, sizeof(buf) - 1), 0);
  return buf;
}

TEST(TFRecordTest, ReferenceCrcMatchesKnownVectors) {
  // CRC-32C check value, and the masked CRCs of tf_proto_facts.md §5
  // (float bytes from real checkpoint files).
  EXPECT_EQ(RefCrc32c("123456789"), 0xe3069283u);
  EXPECT_EQ(RefMask(RefCrc32c(std::string("\x00\x00\x00\x3f", 4))), 0x1f273806u);
  EXPECT_EQ(RefMask(RefCrc32c(std::string("\x00\x00\x00\x40", 4))), 0x4f78fd10u);
}

TEST(TFRecordTest, FramingBytes) {
  // tf_proto_facts.md §10's vectors.
  EXPECT_EQ(TFRecordWriter::Frame(""), std::string("\0\0\0\0\0\0\0\0\x29\x03\x98\x07\xd8\xea\x82\xa2", 16));
  EXPECT_EQ(TFRecordWriter::Frame("abc"), std::string("\x03\0\0\0\0\0\0\0\xb0\x99\x49\x0e" "abc" "\x6e\x57\xf1\x21", 19));
  // Any data: length, both masked CRCs, data.
  std::string data;
  for (int i = 0; i < 1000; ++i) data += static_cast<char>((i * 37) & 0xff);
  const std::vector<std::string> got = HandParseRecords(TFRecordWriter::Frame(data));
  ASSERT_EQ(got.size(), 1u);
  EXPECT_EQ(got[0], data);
}

TEST(TFRecordTest, WriteAndReadBack) {
  const std::string path = MakeTempDir("tfrecord") + "/r.tfrecord";
  std::unique_ptr<TFRecordWriter> w;
  ASSERT_TRUE(TFRecordWriter::Open(path, true, &w).ok());
  // A record bigger than the writer's buffer goes out on its own.
  const std::vector<std::string> want = {"first", "", std::string(300 << 10, 'x'), std::string("\0\xff", 2)};
  for (const auto& r : want) ASSERT_TRUE(w->WriteRecord(r).ok());
  ASSERT_TRUE(w->Close().ok());
  ASSERT_TRUE(w->Close().ok());  // idempotent
  EXPECT_EQ(w->WriteRecord("late").code(), Code::kFailedPrecondition);
  EXPECT_EQ(HandParseRecords(ReadBytes(path)), want);
  std::vector<std::string> got;
  ASSERT_TRUE(ReadTFRecords(path, &got).ok());
  EXPECT_EQ(got, want);
  // Reopened without truncation: appended.
  ASSERT_TRUE(TFRecordWriter::Open(path, false, &w).ok());
  ASSERT_TRUE(w->WriteRecord("more").ok());
  w.reset();  // the destructor flushes
  ASSERT_TRUE(ReadTFRecords(path, &got).ok());
  ASSERT_EQ(got.size(), 5u);
  EXPECT_EQ(got[4], "more");
}

TEST(TFRecordTest, CorruptionAndTruncationAreDataLoss) {
  const std::string dir = MakeTempDir("tfrecord_bad");
  const std::string path = dir + "/r";
  const std::string good = TFRecordWriter::Frame("alpha") + TFRecordWriter::Frame("beta!");
  const size_t second = 16 + 5;  // offset of the second record
  std::vector<std::string> got;
  auto expect_loss = [&](const std::string& bytes, const std::string& what) {
    WriteBytes(path, bytes);
    const Status s = ReadTFRecords(path, &got);
    EXPECT_EQ(s.code(), Code::kDataLoss) << what << ": " << s;
    EXPECT_NE(s.message().find(what), std::string::npos) << s.message();
    EXPECT_NE(s.message().find(path), std::string::npos) << s.message();
  };
  std::string bad = good;
  bad[second + 12 + 2] ^= 0x01;  // a data byte of record 2
  expect_loss(bad, "corrupted record at " + std::to_string(second));
  bad = good;
  bad[1] ^= 0x40;  // the length of record 1
  expect_loss(bad, "corrupted record at 0");
  bad = good;
  bad[second + 12 + 5 + 1] ^= 0x01;  // the data crc of record 2
  expect_loss(bad, "corrupted record at " + std::to_string(second));
  // Cut inside the last record's data, its footer, its header.
  expect_loss(good.substr(0, good.size() - 6), "truncated record at " + std::to_string(second));
  expect_loss(good.substr(0, good.size() - 1), "truncated record at " + std::to_string(second));
  expect_loss(good.substr(0, second + 7), "truncated record at " + std::to_string(second));
  // A length that points past the end (with a valid length crc).
  std::string huge(16, '\0');
  huge[7] = 0x10;  // 2^60 bytes
  const uint32_t m = RefMask(RefCrc32c(huge.substr(0, 8)));
  for (int i = 0; i < 4; ++i) huge[8 + i] = static_cast<char>((m >> (8 * i)) & 0xff);
  expect_loss(good + huge, "truncated record at " + std::to_string(good.size()));
  // An empty file has no records; a missing one is NotFound.
  WriteBytes(path, "");
  ASSERT_TRUE(ReadTFRecords(path, &got).ok());
  EXPECT_TRUE(got.empty());
  EXPECT_EQ(ReadTFRecords(dir + "/missing", &got).code(), Code::kNotFound);
  EXPECT_EQ(ReadTFRecords(dir, &got).code(), Code::kInvalidArgument);
  // Records that are not Events.
  WriteBytes(path, TFRecordWriter::Frame("\xff\xff\xff"));
  std::vector<proto::Event> events;
  const Status s = ReadEventFile(path, &events);
  EXPECT_EQ(s.code(), Code::kDataLoss) << s;
  EXPECT_NE(s.message().find("not an Event"), std::string::npos) << s;
}

TEST(EventFileWriterTest, FileNameAndFirstEvent) {
  const std::string logdir = MakeTempDir("events") + "/run/train";  // created by Create
  const long long before = static_cast<long long>(std::time(nullptr));
  std::unique_ptr<EventFileWriter> w;
  ASSERT_TRUE(EventFileWriter::Create(logdir, ".v1", &w).ok());
  const long long after = static_cast<long long>(std::time(nullptr));
  const std::string name = fs::path(w->filename()).filename().string();
  EXPECT_EQ(fs::path(w->filename()).parent_path(), fs::path(logdir));
  std::smatch m;
  ASSERT_TRUE(std::regex_match(name, m, std::regex("events\\.out\\.tfevents\\.([0-9]{10})\\.(.*)\\.v1"))) << name;
  EXPECT_EQ(m[2].str(), HostName());
  const long long seconds = std::stoll(m[1].str());
  EXPECT_GE(seconds, before);
  EXPECT_LE(seconds, after);
  // The first event is on disk before any Flush: exactly
  // 09 <wall_time double LE> 1a 0d "brain.Event:2".
  const std::vector<std::string> records = HandParseRecords(ReadBytes(w->filename()));
  ASSERT_EQ(records.size(), 1u);
  std::string want = "\x09";
  const double wall = static_cast<double>(seconds);
  uint64_t bits;
  std::memcpy(&bits, &wall, 8);
  for (int i = 0; i < 8; ++i) want += static_cast<char>((bits >> (8 * i)) & 0xff);
  want += "\x1a\x0d" "brain.Event:2";
  EXPECT_EQ(records[0], want);
  // tf_proto_facts.md's bytes for T = 1500000000 check the layout above.
  std::string facts_want = "\x09";
  const double t0 = 1500000000.0;
  std::memcpy(&bits, &t0, 8);
  for (int i = 0; i < 8; ++i) facts_want += static_cast<char>((bits >> (8 * i)) & 0xff);
  EXPECT_EQ(facts_want, std::string("\x09\x00\x00\x00\xc0\x0b\x5a\xd6\x41", 9));
}

TEST(EventFileWriterTest, EventsReadBackEqual) {
  std::unique_ptr<EventFileWriter> w;
  ASSERT_TRUE(EventFileWriter::Create(MakeTempDir("events_rw"), "", &w).ok());
  const double t0 = static_cast<double>(std::time(nullptr));
  ASSERT_TRUE(w->AddScalar("loss", 0.25, 7).ok());
  proto::Summary s;
  proto::Summary::Value* v = s.add_value();
  v->set_tag("acc");
  v->set_simple_value(0.75f);
  ASSERT_TRUE(w->AddSummary(s.SerializeAsString(), 8).ok());
  proto::Event explicit_time;
  explicit_time.set_wall_time(123.5);
  explicit_time.set_step(9);
  explicit_time.mutable_session_log()->set_status(proto::SessionLog::CHECKPOINT);
  explicit_time.mutable_session_log()->set_checkpoint_path("/tmp/model.ckpt-9");
  ASSERT_TRUE(w->WriteEvent(explicit_time).ok());
  EXPECT_EQ(w->AddSummary("\xff\xff", 10).code(), Code::kInvalidArgument);
  ASSERT_TRUE(w->Flush().ok());

  const std::vector<std::string> records = HandParseRecords(ReadBytes(w->filename()));
  ASSERT_EQ(records.size(), 4u);
  std::vector<proto::Event> events;
  ASSERT_TRUE(ReadEventFile(w->filename(), &events).ok());
  ASSERT_EQ(events.size(), 4u);
  for (size_t i = 0; i < 4; ++i) EXPECT_EQ(events[i].SerializeAsString(), records[i]);
  EXPECT_EQ(events[0].file_version(), "brain.Event:2");
  EXPECT_EQ(events[1].step(), 7);
  ASSERT_EQ(events[1].summary().value_size(), 1);
  EXPECT_EQ(events[1].summary().value(0).tag(), "loss");
  EXPECT_EQ(events[1].summary().value(0).simple_value(), 0.25f);
  EXPECT_GE(events[1].wall_time(), t0);  // filled in: now
  EXPECT_LE(events[1].wall_time(), t0 + 60);
  EXPECT_EQ(events[2].step(), 8);
  EXPECT_EQ(events[2].summary().SerializeAsString(), s.SerializeAsString());
  EXPECT_EQ(events[3].SerializeAsString(), explicit_time.SerializeAsString());

  ASSERT_TRUE(w->Close().ok());
  ASSERT_TRUE(w->Close().ok());
  EXPECT_EQ(w->AddScalar("late", 1, 1).code(), Code::kFailedPrecondition);
  EXPECT_EQ(w->Flush().code(), Code::kFailedPrecondition);
}

TEST(EventFileWriterTest, DestructorFlushes) {
  std::unique_ptr<EventFileWriter> w;
  ASSERT_TRUE(EventFileWriter::Create(MakeTempDir("events_dtor"), "", &w).ok());
  const std::string path = w->filename();
  ASSERT_TRUE(w->AddScalar("x", 1.5, 1).ok());
  EXPECT_EQ(HandParseRecords(ReadBytes(path)).size(), 1u);  // still buffered
  w.reset();
  std::vector<proto::Event> events;
  ASSERT_TRUE(ReadEventFile(path, &events).ok());
  ASSERT_EQ(events.size(), 2u);
  EXPECT_EQ(events[1].summary().value(0).simple_value(), 1.5f);
}

TEST(EventFileWriterTest, ThreadsWriteWholeEvents) {
  std::unique_ptr<EventFileWriter> w;
  ASSERT_TRUE(EventFileWriter::Create(MakeTempDir("events_mt"), "", &w).ok());
  constexpr int kThreads = 4, kEach = 300;
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t)
    threads.emplace_back([&, t] {
      for (int i = 0; i < kEach; ++i) {
        EXPECT_TRUE(w->AddScalar("t" + std::to_string(t), i, i).ok());
        if (i % 50 == 0) {  // braces: EXPECT_TRUE is an if/else of its own
          EXPECT_TRUE(w->Flush().ok());
        }
      }
    });
  for (auto& th : threads) th.join();
  ASSERT_TRUE(w->Close().ok());
  std::vector<proto::Event> events;
  ASSERT_TRUE(ReadEventFile(w->filename(), &events).ok());
  ASSERT_EQ(events.size(), 1u + kThreads * kEach);
  std::set<std::pair<std::string, int64_t>> seen;
  for (size_t i = 1; i < events.size(); ++i) {
    ASSERT_EQ(events[i].summary().value_size(), 1);
    const auto& v = events[i].summary().value(0);
    EXPECT_EQ(v.simple_value(), static_cast<float>(events[i].step()));
    EXPECT_TRUE(seen.insert({v.tag(), events[i].step()}).second);
  }
  EXPECT_EQ(seen.size(), static_cast<size_t>(kThreads * kEach));
}

TEST(EventFileWriterTest, DeletedFileIsReplaced) {
  // TensorFlow's EventsWriter: Flush on a deleted file fails; the next write
  // starts a new file (with its own first event).
  std::unique_ptr<EventFileWriter> w;
  ASSERT_TRUE(EventFileWriter::Create(MakeTempDir("events_del"), "", &w).ok());
  ASSERT_TRUE(w->AddScalar("a", 1, 1).ok());
  ASSERT_TRUE(fs::remove(w->filename()));
  EXPECT_EQ(w->Flush().code(), Code::kDataLoss);
  ASSERT_TRUE(w->AddScalar("b", 2, 2).ok());
  ASSERT_TRUE(w->Flush().ok());
  std::vector<proto::Event> events;
  ASSERT_TRUE(ReadEventFile(w->filename(), &events).ok());
  ASSERT_EQ(events.size(), 2u);
  EXPECT_EQ(events[0].file_version(), "brain.Event:2");
  EXPECT_EQ(events[1].summary().value(0).tag(), "b");
}

TEST(EventFileWriterTest, UnwritableLogdirIsAnError) {
  const std::string dir = MakeTempDir("events_bad");
  WriteBytes(dir + "/file", "x");
  std::unique_ptr<EventFileWriter> w;
  const Status s = EventFileWriter::Create(dir + "/file/sub", "", &w);
  EXPECT_FALSE(s.ok());
  EXPECT_NE(s.message().find(dir + "/file/sub"), std::string::npos) << s;
  EXPECT_EQ(w, nullptr);
}

TEST(EventFileWriterTest, SummariesOfASessionLandInTheFile) {
  testing::LoadStandardPlugins();
  const std::string g = R"(
    node { name: "x" op: "Placeholder" attr { key: "dtype" value { type: DT_FLOAT } } }
    node { name: "tag" op: "Const" attr { key: "dtype" value { type: DT_STRING } }
           attr { key: "value" value { tensor { dtype: DT_STRING tensor_shape {} string_val: "loss" } } } }
    node { name: "htag" op: "Const" attr { key: "dtype" value { type: DT_STRING } }
           attr { key: "value" value { tensor { dtype: DT_STRING tensor_shape {} string_val: "weights" } } } }
    node { name: "w" op: "Const" attr { key: "dtype" value { type: DT_FLOAT } }
           attr { key: "value" value { tensor { dtype: DT_FLOAT tensor_shape { dim { size: 3 } }
                                                float_val: 0.5 float_val: -1 float_val: 2 } } } }
    node { name: "loss" op: "ScalarSummary" input: "tag" input: "x" attr { key: "T" value { type: DT_FLOAT } } }
    node { name: "weights" op: "HistogramSummary" input: "htag" input: "w" attr { key: "T" value { type: DT_FLOAT } } }
    node { name: "merged" op: "MergeSummary" input: "loss" input: "weights" attr { key: "N" value { i: 2 } } }
  )";
  std::unique_ptr<Session> session = testing::CreateSession(testing::ParseGraph(g));
  ASSERT_NE(session, nullptr);
  std::unique_ptr<EventFileWriter> w;
  ASSERT_TRUE(EventFileWriter::Create(MakeTempDir("events_session"), "", &w).ok());
  std::vector<std::string> produced;
  for (int step = 0; step < 3; ++step) {
    std::vector<Tensor> out;
    const Status st = session->Run({{"x:0", Tensor::Scalar<float>(GR_FLOAT, 1.0f / (step + 1))}}, {"merged:0"}, {}, &out);
    ASSERT_TRUE(st.ok()) << st;
    produced.emplace_back(out[0].string_at(0));
    ASSERT_TRUE(w->AddSummary(produced.back(), step * 100).ok());
  }
  ASSERT_TRUE(w->Close().ok());
  std::vector<proto::Event> events;
  ASSERT_TRUE(ReadEventFile(w->filename(), &events).ok());
  ASSERT_EQ(events.size(), 4u);
  for (int step = 0; step < 3; ++step) {
    const proto::Event& e = events[step + 1];
    EXPECT_EQ(e.step(), step * 100);
    EXPECT_EQ(e.summary().SerializeAsString(), produced[step]);
    ASSERT_EQ(e.summary().value_size(), 2);
    EXPECT_EQ(e.summary().value(0).tag(), "loss");
    EXPECT_EQ(e.summary().value(0).simple_value(), 1.0f / (step + 1));
    EXPECT_EQ(e.summary().value(1).tag(), "weights");
    const proto::HistogramProto& h = e.summary().value(1).histo();
    EXPECT_EQ(h.num(), 3);
    EXPECT_EQ(h.min(), -1);
    EXPECT_EQ(h.max(), 2);
    EXPECT_EQ(h.sum(), 1.5);
    EXPECT_EQ(h.sum_squares(), 5.25);
    double total = 0;
    for (double c : h.bucket()) total += c;
    EXPECT_EQ(total, 3);
  }
}

// ------------------------------------------------------------- graphrt events

// A record framed here (the test's own CRC), not by TFRecordWriter.
std::string RefFrame(const std::string& data) {
  std::string out;
  auto put = [&](uint64_t v, int bytes) {
    for (int i = 0; i < bytes; ++i) out += static_cast<char>((v >> (8 * i)) & 0xff);
  };
  put(data.size(), 8);
  put(RefMask(RefCrc32c(out.substr(0, 8))), 4);
  out += data;
  put(RefMask(RefCrc32c(data)), 4);
  return out;
}

// Runs `graphrt <args>`; *out gets stdout and stderr; returns the exit code.
int RunCli(const std::string& args, std::string* out) {
  out->clear();
  FILE* p = popen((std::string(GRAPHRT_CLI) + " " + args + " 2>&1").c_str(), "r");
  if (p == nullptr) return -1;
  char buf[4096];
  size_t n;
  while ((n = std::fread(buf, 1, sizeof(buf), p)) > 0) out->append(buf, n);
  const int status = pclose(p);
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

bool Has(const std::string& haystack, const std::string& needle) { return haystack.find(needle) != std::string::npos; }

TEST(EventsCliTest, PrintsStepsTagsAndValues) {
  const std::string dir = MakeTempDir("events_cli");
  const std::string path = dir + "/events.out.tfevents.1500000000.host";
  proto::Event first;
  first.set_wall_time(1500000000);
  first.set_file_version("brain.Event:2");
  proto::Event scalars;
  scalars.set_step(10);
  for (auto [tag, v] : {std::pair<const char*, float>{"loss", 0.5f}, {"accuracy", 0.75f}}) {
    proto::Summary::Value* val = scalars.mutable_summary()->add_value();
    val->set_tag(tag);
    val->set_simple_value(v);
  }
  proto::Event later;
  later.set_step(20);
  proto::Summary::Value* loss = later.mutable_summary()->add_value();
  loss->set_tag("loss");
  loss->set_simple_value(0.25f);
  proto::Summary::Value* h = later.mutable_summary()->add_value();
  h->set_tag("weights");
  h->mutable_histo()->set_min(-1);
  h->mutable_histo()->set_max(3);
  h->mutable_histo()->set_num(4);
  h->mutable_histo()->set_sum(6);
  proto::Event ckpt;
  ckpt.set_step(20);
  ckpt.mutable_session_log()->set_status(proto::SessionLog::CHECKPOINT);
  ckpt.mutable_session_log()->set_checkpoint_path("/tmp/model.ckpt-20");
  std::string file;
  for (const proto::Event* e : {&first, &scalars, &later, &ckpt}) file += RefFrame(e->SerializeAsString());
  WriteBytes(path, file);

  std::string out;
  ASSERT_EQ(RunCli("events " + path, &out), 0) << out;
  for (const char* line : {"(4 events)", "step 0  file_version  brain.Event:2", "step 10  scalar  loss = 0.5",
                           "step 10  scalar  accuracy = 0.75", "step 20  scalar  loss = 0.25",
                           "step 20  histogram  weights  num 4 min -1 max 3 mean 1.5",
                           "step 20  session_log  CHECKPOINT /tmp/model.ckpt-20"})
    EXPECT_TRUE(Has(out, line)) << "'" << line << "' not in:\n" << out;
  // A directory, one tag.
  ASSERT_EQ(RunCli("events " + dir + " --tag loss", &out), 0) << out;
  EXPECT_TRUE(Has(out, "step 10  scalar  loss = 0.5")) << out;
  EXPECT_TRUE(Has(out, "step 20  scalar  loss = 0.25")) << out;
  EXPECT_FALSE(Has(out, "accuracy")) << out;
  EXPECT_FALSE(Has(out, "file_version")) << out;

  // The first record is 16 + 24 bytes: a byte of the second one's data
  // zeroed, then the file cut inside the second record.
  std::string bad = file;
  bad[60] = '\0';
  WriteBytes(dir + "/bad", bad);
  EXPECT_EQ(RunCli("events " + dir + "/bad", &out), 1);
  EXPECT_TRUE(Has(out, "graphrt: error: events: corrupted record at 40 in " + dir + "/bad")) << out;
  WriteBytes(dir + "/short", file.substr(0, 50));
  EXPECT_EQ(RunCli("events " + dir + "/short", &out), 1);
  EXPECT_TRUE(Has(out, "truncated record at 40")) << out;
  EXPECT_EQ(RunCli("events " + dir + "/missing", &out), 1);
  EXPECT_TRUE(Has(out, "Could not open")) << out;
  EXPECT_EQ(RunCli("events", &out), 2);
  EXPECT_TRUE(Has(out, "missing PATH")) << out;
}

}  // namespace
}  // namespace graphrt
