// TF1's queues (FIFOQueueV2, PaddingFIFOQueueV2, RandomShuffleQueueV2 and
// the V2 enqueue/dequeue/close/size ops). Expected values follow
// TensorFlow's documented queue semantics (data_flow_ops.cc, the
// QueueBase/FIFOQueue behaviour its Python tests check) worked out by hand;
// error texts are TensorFlow's. Blocking is checked with concurrent Runs of
// one session, at 1 and 2 threads. The real TF graphs are the grappler
// queues_and_loops / loops_and_queues (tf_testdata README items 17, 18).
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <future>
#include <memory>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "graphrt/core/graph_def_io.h"
#include "op_test_util.h"

namespace graphrt {
namespace {

using namespace ::graphrt::testing;  // NOLINT
using namespace std::chrono_literals;

// ------------------------------------------------------------ graph text

std::string Attr(const std::string& key, const std::string& value) {
  return "attr { key: \"" + key + "\" value { " + value + " } } ";
}
std::string Types(const std::vector<std::string>& types) {
  std::string s = "list { ";
  for (const std::string& t : types) s += "type: " + t + " ";
  return s + "}";
}
// Shapes as text: "[2]" style lists of dims, -1 unknown.
std::string Shapes(const std::vector<Dims>& shapes) {
  std::string s = "list { ";
  for (const Dims& d : shapes) s += "shape " + ShapeProto(d) + " ";
  return s + "}";
}

std::string Queue(const std::string& name, const std::string& op, const std::vector<std::string>& types,
                  const std::vector<Dims>& shapes, int capacity, const std::string& extra = "") {
  return NodeText(name, op, {},
                  Attr("component_types", Types(types)) + Attr("shapes", Shapes(shapes)) +
                      Attr("capacity", "i: " + std::to_string(capacity)) + extra);
}
std::string Fifo(const std::string& name, int capacity, const std::vector<Dims>& shapes = {},
                 const std::string& extra = "") {
  return Queue(name, "FIFOQueueV2", {"DT_INT32"}, shapes, capacity, extra);
}
std::string Enqueue(const std::string& name, const std::string& queue, const std::vector<std::string>& values,
                    const std::vector<std::string>& types = {"DT_INT32"}, bool many = false) {
  std::vector<std::string> inputs{queue};
  inputs.insert(inputs.end(), values.begin(), values.end());
  return NodeText(name, many ? "QueueEnqueueManyV2" : "QueueEnqueueV2", inputs, Attr("Tcomponents", Types(types)));
}
std::string Dequeue(const std::string& name, const std::string& queue, const std::vector<std::string>& types = {"DT_INT32"},
                    const std::string& op = "QueueDequeueV2", const std::string& n = "") {
  std::vector<std::string> inputs{queue};
  if (!n.empty()) inputs.push_back(n);
  return NodeText(name, op, inputs, Attr("component_types", Types(types)));
}
std::string Close(const std::string& name, const std::string& queue, bool cancel_pending_enqueues = false) {
  return NodeText(name, "QueueCloseV2", {queue},
                  Attr("cancel_pending_enqueues", cancel_pending_enqueues ? "b: true" : "b: false"));
}
std::string SizeAndClosed(const std::string& queue) {
  return NodeText("size", "QueueSizeV2", {queue}, "") + NodeText("is_closed", "QueueIsClosedV2", {queue}, "");
}
std::string Int(const std::string& name, int32_t v) {
  return ConstNode(name, "DT_INT32", {}, "int_val", {std::to_string(v)});
}

// q: FIFO int32 scalars of `capacity`; enq (feed x), deq, close, close_cancel,
// size, is_closed; deq_many / deq_up_to of `n` (feed).
std::string ScalarQueue(int capacity, const std::string& op = "FIFOQueueV2", const std::string& extra = "") {
  return Queue("q", op, {"DT_INT32"}, {{}}, capacity, extra) + PlaceholderNode("x", "DT_INT32") +
         PlaceholderNode("n", "DT_INT32") + Enqueue("enq", "q", {"x"}) + Dequeue("deq", "q") +
         Dequeue("deq_many", "q", {"DT_INT32"}, "QueueDequeueManyV2", "n") +
         Dequeue("deq_up_to", "q", {"DT_INT32"}, "QueueDequeueUpToV2", "n") + Close("close", "q") +
         Close("close_cancel", "q", true) + SizeAndClosed("q");
}

Tensor Scalar(int32_t v) { return MakeTensor<int32_t>(GR_INT32, {}, {v}); }

Status Enq(Session* s, int32_t v) {
  std::vector<Tensor> out;
  return s->Run({{"x", Scalar(v)}}, {}, {"enq"}, &out);
}
Status Deq(Session* s, int32_t* v) {
  std::vector<Tensor> out;
  Status st = s->Run({}, {"deq:0"}, {}, &out);
  if (st.ok()) *v = out[0].scalar<int32_t>();
  return st;
}
int32_t DeqOk(Session* s) {
  int32_t v = -1;
  Status st = Deq(s, &v);
  EXPECT_TRUE(st.ok()) << st;
  return v;
}
Status Many(Session* s, const std::string& op, int32_t n, Tensor* t) {
  std::vector<Tensor> out;
  Status st = s->Run({{"n", Scalar(n)}}, {op + ":0"}, {}, &out);
  if (st.ok()) *t = out[0];
  return st;
}
int32_t Size(Session* s) {
  std::vector<Tensor> out;
  EXPECT_TRUE(s->Run({}, {"size:0"}, {}, &out).ok());
  return out.empty() ? -1 : out[0].scalar<int32_t>();
}
Status RunTarget(Session* s, const std::string& target) {
  std::vector<Tensor> out;
  return s->Run({}, {}, {target}, &out);
}

std::unique_ptr<Session> Open(const std::string& g, int threads = 1) { return CreateSession(ParseGraph(g), threads); }

// ------------------------------------------------------------------ FIFO

TEST(FifoQueue, FirstInFirstOutAcrossRuns) {
  auto s = Open(ScalarQueue(10));
  for (int v : {3, 1, 2}) ASSERT_TRUE(Enq(s.get(), v).ok());
  EXPECT_EQ(Size(s.get()), 3);
  EXPECT_EQ(DeqOk(s.get()), 3);
  EXPECT_EQ(DeqOk(s.get()), 1);
  EXPECT_EQ(DeqOk(s.get()), 2);
  EXPECT_EQ(Size(s.get()), 0);
}

TEST(FifoQueue, TupleOfComponents) {
  const std::string g = Queue("q", "FIFOQueueV2", {"DT_INT32", "DT_FLOAT"}, {}, -1) +
                        PlaceholderNode("a", "DT_INT32") + PlaceholderNode("b", "DT_FLOAT") +
                        Enqueue("enq", "q", {"a", "b"}, {"DT_INT32", "DT_FLOAT"}) +
                        Dequeue("deq", "q", {"DT_INT32", "DT_FLOAT"});
  auto s = Open(g);
  std::vector<Tensor> out;
  ASSERT_TRUE(s->Run({{"a", MakeTensor<int32_t>(GR_INT32, {2}, {4, 5})},
                      {"b", MakeTensor<float>(GR_FLOAT, {}, {2.5f})}},
                     {}, {"enq"}, &out)
                  .ok());
  ASSERT_TRUE(s->Run({}, {"deq:0", "deq:1"}, {}, &out).ok());
  EXPECT_EQ(ToVector<int32_t>(out[0]), (std::vector<int32_t>{4, 5}));
  EXPECT_EQ(out[1].scalar<float>(), 2.5f);
}

TEST(FifoQueue, FullQueueBlocksEnqueueUntilADequeueInAnotherRun) {
  for (int threads : {1, 2}) {
    auto s = Open(ScalarQueue(1), threads);
    ASSERT_TRUE(Enq(s.get(), 1).ok());
    auto blocked = std::async(std::launch::async, [&] { return Enq(s.get(), 2); });
    EXPECT_EQ(blocked.wait_for(30ms), std::future_status::timeout);
    EXPECT_EQ(Size(s.get()), 1);
    EXPECT_EQ(DeqOk(s.get()), 1);
    ASSERT_EQ(blocked.wait_for(5s), std::future_status::ready);
    EXPECT_TRUE(blocked.get().ok());
    EXPECT_EQ(DeqOk(s.get()), 2);
  }
}

TEST(FifoQueue, EmptyQueueBlocksDequeueUntilAnEnqueueInAnotherRun) {
  for (int threads : {1, 2}) {
    auto s = Open(ScalarQueue(5), threads);
    auto blocked = std::async(std::launch::async, [&] {
      int32_t v = -1;
      Status st = Deq(s.get(), &v);
      return st.ok() ? v : -100 - static_cast<int>(st.code());
    });
    EXPECT_EQ(blocked.wait_for(30ms), std::future_status::timeout);
    ASSERT_TRUE(Enq(s.get(), 42).ok());
    ASSERT_EQ(blocked.wait_for(5s), std::future_status::ready);
    EXPECT_EQ(blocked.get(), 42);
    EXPECT_EQ(Size(s.get()), 0);
  }
}

TEST(FifoQueue, ProducersAndConsumersInConcurrentRuns) {
  auto s = Open(ScalarQueue(3), 2);
  std::atomic<int64_t> sum{0};
  std::atomic<int> failures{0};
  std::vector<std::thread> threads;
  for (int p = 0; p < 2; ++p)
    threads.emplace_back([&, p] {
      for (int i = 1; i <= 40; ++i)
        if (!Enq(s.get(), p * 1000 + i).ok()) ++failures;
    });
  for (int c = 0; c < 2; ++c)
    threads.emplace_back([&] {
      for (int i = 0; i < 40; ++i) {
        int32_t v = 0;
        if (Deq(s.get(), &v).ok()) sum += v;
        else ++failures;
      }
    });
  for (std::thread& t : threads) t.join();
  EXPECT_EQ(failures.load(), 0);
  EXPECT_EQ(sum.load(), 2 * (40 * 41 / 2) + 1000 * 40);
}

TEST(FifoQueue, EnqueueManyAndDequeueMany) {
  const std::string g = Fifo("q", 10, {{2}}) + ConstInt32("rows", {1, 2, 3, 4, 5, 6}) +
                        ConstNode("rows3x2", "DT_INT32", {3, 2}, "int_val", {"1", "2", "3", "4", "5", "6"}) +
                        PlaceholderNode("n", "DT_INT32") + Enqueue("enq_many", "q", {"rows3x2"}, {"DT_INT32"}, true) +
                        Dequeue("deq_many", "q", {"DT_INT32"}, "QueueDequeueManyV2", "n") + Dequeue("deq", "q") +
                        SizeAndClosed("q");
  auto s = Open(g);
  ASSERT_TRUE(RunTarget(s.get(), "enq_many").ok());
  EXPECT_EQ(Size(s.get()), 3);
  Tensor t;
  ASSERT_TRUE(Many(s.get(), "deq_many", 2, &t).ok());
  EXPECT_EQ(DimsOf(t), (Dims{2, 2}));
  EXPECT_EQ(ToVector<int32_t>(t), (std::vector<int32_t>{1, 2, 3, 4}));
  ASSERT_TRUE(Many(s.get(), "deq_many", 0, &t).ok());  // n = 0: an empty batch at once
  EXPECT_EQ(DimsOf(t), (Dims{0, 2}));
  std::vector<Tensor> out;
  ASSERT_TRUE(s->Run({}, {"deq:0"}, {}, &out).ok());
  EXPECT_EQ(ToVector<int32_t>(out[0]), (std::vector<int32_t>{5, 6}));
  Status st = Many(s.get(), "deq_many", -1, &t);
  EXPECT_EQ(st.code(), Code::kInvalidArgument) << st;
  EXPECT_TRUE(Contains(st.message(), "Dequeue requested negative count: -1")) << st;
}

TEST(FifoQueue, DequeueManyLargerThanTheCapacityTakesElementsAsTheyCome) {
  for (int threads : {1, 2}) {
    auto s = Open(ScalarQueue(2), threads);
    auto many = std::async(std::launch::async, [&] {
      Tensor t;
      Status st = Many(s.get(), "deq_many", 5, &t);
      EXPECT_TRUE(st.ok()) << st;
      return st.ok() ? ToVector<int32_t>(t) : std::vector<int32_t>{};
    });
    for (int v = 1; v <= 5; ++v) ASSERT_TRUE(Enq(s.get(), v).ok());
    ASSERT_EQ(many.wait_for(5s), std::future_status::ready);
    EXPECT_EQ(many.get(), (std::vector<int32_t>{1, 2, 3, 4, 5}));
  }
}

TEST(FifoQueue, DequeueManyNeedsSpecifiedShapes) {
  auto s = Open(Fifo("q", 5) + PlaceholderNode("n", "DT_INT32") +
                Dequeue("deq_many", "q", {"DT_INT32"}, "QueueDequeueManyV2", "n"));
  Tensor t;
  Status st = Many(s.get(), "deq_many", 1, &t);
  EXPECT_EQ(st.code(), Code::kInvalidArgument) << st;
  EXPECT_TRUE(Contains(st.message(),
                       "FIFOQueue's DequeueMany and DequeueUpTo require the components to have specified shapes."))
      << st;
}

// -------------------------------------------------------------- closing

TEST(FifoQueue, CloseRefusesEnqueuesAndDrainsThenFailsDequeues) {
  auto s = Open(ScalarQueue(5));
  ASSERT_TRUE(Enq(s.get(), 7).ok());
  std::vector<Tensor> out;
  ASSERT_TRUE(s->Run({}, {"is_closed:0"}, {}, &out).ok());
  EXPECT_FALSE(out[0].scalar<bool>());
  ASSERT_TRUE(RunTarget(s.get(), "close").ok());
  ASSERT_TRUE(s->Run({}, {"is_closed:0"}, {}, &out).ok());
  EXPECT_TRUE(out[0].scalar<bool>());
  Status st = Enq(s.get(), 8);
  EXPECT_EQ(st.code(), Code::kCancelled) << st;
  EXPECT_TRUE(Contains(st.message(), "FIFOQueue '_0_q' is closed.")) << st;
  EXPECT_EQ(DeqOk(s.get()), 7);
  int32_t v = 0;
  st = Deq(s.get(), &v);
  EXPECT_EQ(st.code(), Code::kOutOfRange) << st;
  EXPECT_TRUE(Contains(st.message(),
                       "FIFOQueue '_0_q' is closed and has insufficient elements (requested 1, current size 0)"))
      << st;
  EXPECT_TRUE(Contains(st.message(), "Node 'deq'")) << st;
  EXPECT_TRUE(RunTarget(s.get(), "close").ok());  // closing twice is fine
}

TEST(FifoQueue, CloseEndsABlockedDequeueWithOutOfRange) {
  for (int threads : {1, 2}) {
    auto s = Open(ScalarQueue(5), threads);
    auto blocked = std::async(std::launch::async, [&] {
      int32_t v = 0;
      return Deq(s.get(), &v);
    });
    EXPECT_EQ(blocked.wait_for(20ms), std::future_status::timeout);
    ASSERT_TRUE(RunTarget(s.get(), "close").ok());
    ASSERT_EQ(blocked.wait_for(5s), std::future_status::ready);
    EXPECT_EQ(blocked.get().code(), Code::kOutOfRange);
  }
}

TEST(FifoQueue, DequeueUpToHandsOutWhatAClosedQueueHasLeft) {
  auto s = Open(ScalarQueue(5));
  for (int v : {1, 2}) ASSERT_TRUE(Enq(s.get(), v).ok());
  Tensor t;
  // Open: UpTo waits for all n, like Many (here n is there).
  ASSERT_TRUE(Many(s.get(), "deq_up_to", 1, &t).ok());
  EXPECT_EQ(ToVector<int32_t>(t), (std::vector<int32_t>{1}));
  ASSERT_TRUE(RunTarget(s.get(), "close").ok());
  ASSERT_TRUE(Many(s.get(), "deq_up_to", 3, &t).ok());
  EXPECT_EQ(DimsOf(t), (Dims{1}));
  EXPECT_EQ(ToVector<int32_t>(t), (std::vector<int32_t>{2}));
  Status st = Many(s.get(), "deq_up_to", 3, &t);
  EXPECT_EQ(st.code(), Code::kOutOfRange) << st;
  EXPECT_TRUE(Contains(st.message(), "(requested 3, current size 0)")) << st;
}

TEST(FifoQueue, DequeueManyOnAClosedQueueFailsAndKeepsTheElements) {
  auto s = Open(ScalarQueue(5));
  for (int v : {1, 2}) ASSERT_TRUE(Enq(s.get(), v).ok());
  ASSERT_TRUE(RunTarget(s.get(), "close").ok());
  Tensor t;
  Status st = Many(s.get(), "deq_many", 3, &t);
  EXPECT_EQ(st.code(), Code::kOutOfRange) << st;
  EXPECT_EQ(Size(s.get()), 2);
  EXPECT_EQ(DeqOk(s.get()), 1);
}

TEST(FifoQueue, BlockedDequeueManyGivesBackWhatItTookWhenTheQueueCloses) {
  auto s = Open(ScalarQueue(5));
  auto many = std::async(std::launch::async, [&] {
    Tensor t;
    return Many(s.get(), "deq_many", 3, &t);
  });
  for (int v : {1, 2}) ASSERT_TRUE(Enq(s.get(), v).ok());
  EXPECT_EQ(many.wait_for(20ms), std::future_status::timeout);
  ASSERT_TRUE(RunTarget(s.get(), "close").ok());
  ASSERT_EQ(many.wait_for(5s), std::future_status::ready);
  EXPECT_EQ(many.get().code(), Code::kOutOfRange);
  EXPECT_EQ(Size(s.get()), 2);
  EXPECT_EQ(DeqOk(s.get()), 1);
  EXPECT_EQ(DeqOk(s.get()), 2);
}

TEST(FifoQueue, CloseLetsABlockedEnqueueFinishUnlessCancellingIt) {
  for (bool cancel : {false, true}) {
    auto s = Open(ScalarQueue(1));
    ASSERT_TRUE(Enq(s.get(), 1).ok());
    auto blocked = std::async(std::launch::async, [&] { return Enq(s.get(), 2); });
    EXPECT_EQ(blocked.wait_for(20ms), std::future_status::timeout);
    ASSERT_TRUE(RunTarget(s.get(), cancel ? "close_cancel" : "close").ok());
    if (cancel) {
      ASSERT_EQ(blocked.wait_for(5s), std::future_status::ready);
      Status st = blocked.get();
      EXPECT_EQ(st.code(), Code::kCancelled) << st;
      EXPECT_TRUE(Contains(st.message(), "Enqueue operation was cancelled")) << st;
      EXPECT_EQ(DeqOk(s.get()), 1);
    } else {
      EXPECT_EQ(blocked.wait_for(20ms), std::future_status::timeout);
      EXPECT_EQ(DeqOk(s.get()), 1);
      ASSERT_EQ(blocked.wait_for(5s), std::future_status::ready);
      EXPECT_TRUE(blocked.get().ok());
      EXPECT_EQ(DeqOk(s.get()), 2);
    }
    int32_t v = 0;
    EXPECT_EQ(Deq(s.get(), &v).code(), Code::kOutOfRange);
  }
}

// ------------------------------------------------------ the step's end

TEST(FifoQueue, RunTimeoutEndsADequeueOnAnEmptyQueue) {
  for (int threads : {1, 2}) {
    auto s = Open(ScalarQueue(5), threads);
    proto::RunOptions options;
    options.set_timeout_in_ms(20);
    std::vector<Tensor> out;
    const auto start = std::chrono::steady_clock::now();
    Status st = s->Run(options, {}, {"deq:0"}, {}, &out, nullptr);
    EXPECT_EQ(st.code(), Code::kDeadlineExceeded) << st;
    EXPECT_LT(std::chrono::steady_clock::now() - start, 5s);
    // The timed-out dequeue is gone: it does not take the next element.
    ASSERT_TRUE(Enq(s.get(), 9).ok());
    EXPECT_EQ(DeqOk(s.get()), 9);
  }
}

TEST(FifoQueue, TimeoutSession) {  // tf_behaviours.md TimeoutSession
  LoadStandardPlugins();
  SessionOptions options = OpTestOptions(1);
  options.config.set_operation_timeout_in_ms(100);
  std::unique_ptr<Session> s;
  ASSERT_TRUE(NewSession(options, &s).ok());
  ASSERT_TRUE(s->Create(ParseGraph(ScalarQueue(5))).ok());
  std::vector<Tensor> out;
  EXPECT_EQ(s->Run({}, {"deq:0"}, {}, &out).code(), Code::kDeadlineExceeded);
  proto::RunOptions run_options;
  run_options.set_timeout_in_ms(20);
  EXPECT_EQ(s->Run(run_options, {}, {"deq:0"}, {}, &out, nullptr).code(), Code::kDeadlineExceeded);
  EXPECT_TRUE(s->Close().ok());
}

TEST(FifoQueue, SessionCloseEndsARunBlockedInDequeue) {
  for (int threads : {1, 2}) {
    auto s = Open(ScalarQueue(5), threads);
    auto blocked = std::async(std::launch::async, [&] {
      int32_t v = 0;
      return Deq(s.get(), &v);
    });
    EXPECT_EQ(blocked.wait_for(30ms), std::future_status::timeout);
    const auto start = std::chrono::steady_clock::now();
    EXPECT_TRUE(s->Close().ok());
    ASSERT_EQ(blocked.wait_for(5s), std::future_status::ready);
    EXPECT_LT(std::chrono::steady_clock::now() - start, 2s);
    Status st = blocked.get();
    EXPECT_EQ(st.code(), Code::kCancelled) << st;
  }
}

TEST(FifoQueue, AnotherNodesErrorEndsABlockedDequeue) {
  // deq waits on the empty queue; `bad` fails (a negative count), which
  // cancels the step.
  auto s = Open(ScalarQueue(5) + Int("minus", -1) +
                Dequeue("bad", "q", {"DT_INT32"}, "QueueDequeueManyV2", "minus"));
  std::vector<Tensor> out;
  Status st = s->Run({}, {"deq:0", "bad:0"}, {}, &out);
  EXPECT_EQ(st.code(), Code::kInvalidArgument) << st;
  EXPECT_TRUE(Contains(st.message(), "negative count")) << st;
  ASSERT_TRUE(Enq(s.get(), 3).ok());
  EXPECT_EQ(DeqOk(s.get()), 3);
}

TEST(FifoQueue, EnqueueAndDequeueInOneRun) {
  // The dequeue may start first: it waits for the enqueue of the same step.
  for (int threads : {1, 2}) {
    auto s = Open(ScalarQueue(5) + Int("c", 11) + Enqueue("enq_c", "q", {"c"}));
    std::vector<Tensor> out;
    ASSERT_TRUE(s->Run({}, {"deq:0"}, {"enq_c"}, &out).ok());
    EXPECT_EQ(out[0].scalar<int32_t>(), 11);
    (void)threads;
  }
}

// ------------------------------------------------- validation, sharing

TEST(FifoQueue, EnqueueChecksTypesAndShapes) {
  const std::string g = Fifo("q", 5, {{2}}) + PlaceholderNode("x", "DT_INT32") + PlaceholderNode("f", "DT_FLOAT") +
                        Enqueue("enq", "q", {"x"}) + Enqueue("enq_f", "q", {"f"}, {"DT_FLOAT"}) +
                        Enqueue("enq_many", "q", {"x"}, {"DT_INT32"}, true) + SizeAndClosed("q");
  auto s = Open(g);
  std::vector<Tensor> out;
  Status st = s->Run({{"x", MakeTensor<int32_t>(GR_INT32, {3}, {1, 2, 3})}}, {}, {"enq"}, &out);
  EXPECT_EQ(st.code(), Code::kInvalidArgument) << st;
  EXPECT_TRUE(Contains(st.message(), "Shape mismatch in tuple component 0. Expected [2], got [3]")) << st;
  st = s->Run({{"f", MakeTensor<float>(GR_FLOAT, {2}, {1, 2})}}, {}, {"enq_f"}, &out);
  EXPECT_EQ(st.code(), Code::kInvalidArgument) << st;
  EXPECT_TRUE(Contains(st.message(), "Signature mismatch")) << st;
  st = s->Run({{"x", Scalar(1)}}, {}, {"enq_many"}, &out);
  EXPECT_EQ(st.code(), Code::kInvalidArgument) << st;
  EXPECT_TRUE(Contains(st.message(), "rank at least 1")) << st;
  st = s->Run({{"x", MakeTensor<int32_t>(GR_INT32, {2, 3}, {1, 2, 3, 4, 5, 6})}}, {}, {"enq_many"}, &out);
  EXPECT_EQ(st.code(), Code::kInvalidArgument) << st;
  EXPECT_EQ(Size(s.get()), 0);  // nothing of a refused enqueue got in
  // A huge batch of empty elements is refused, not allocated.
  const std::string g2 = Fifo("q", 5, {{0}}) + PlaceholderNode("x", "DT_INT32") +
                         Enqueue("enq_many", "q", {"x"}, {"DT_INT32"}, true);
  auto s2 = Open(g2);
  st = s2->Run({{"x", Tensor(GR_INT32, TensorShape({int64_t{1} << 40, 0}))}}, {}, {"enq_many"}, &out);
  EXPECT_EQ(st.code(), Code::kInvalidArgument) << st;
  EXPECT_TRUE(Contains(st.message(), "empty elements")) << st;
}

TEST(FifoQueue, SharedNameIsOneQueueAcrossNodes) {
  const std::string shared = Attr("shared_name", "s: \"shared\"");
  const std::string g = Fifo("q1", 5, {}, shared) + Fifo("q2", 5, {}, shared) + Int("c", 5) +
                        Enqueue("enq", "q1", {"c"}) + Dequeue("deq", "q2") +
                        Fifo("q3", 7, {}, shared) + NodeText("size3", "QueueSizeV2", {"q3"}, "");
  auto s = Open(g);
  ASSERT_TRUE(RunTarget(s.get(), "enq").ok());
  EXPECT_EQ(DeqOk(s.get()), 5);
  std::vector<Tensor> out;
  Status st = s->Run({}, {"size3:0"}, {}, &out);
  EXPECT_EQ(st.code(), Code::kInvalidArgument) << st;
  EXPECT_TRUE(Contains(st.message(), "Shared queue 'shared' has capacity 5 but requested capacity was 7")) << st;
}

TEST(FifoQueue, PrivateQueuesOfTwoNodesAreDistinct) {
  const std::string g = Fifo("a", 5) + Fifo("b", 5) + Int("c", 1) + Enqueue("enq", "a", {"c"}) +
                        NodeText("size_a", "QueueSizeV2", {"a"}, "") + NodeText("size_b", "QueueSizeV2", {"b"}, "");
  auto s = Open(g);
  ASSERT_TRUE(RunTarget(s.get(), "enq").ok());
  std::vector<Tensor> out;
  ASSERT_TRUE(s->Run({}, {"size_a:0", "size_b:0"}, {}, &out).ok());
  EXPECT_EQ(out[0].scalar<int32_t>(), 1);
  EXPECT_EQ(out[1].scalar<int32_t>(), 0);
}

// ------------------------------------------------------------- padding

TEST(PaddingFifoQueue, DequeueManyPadsToTheBatchMaximum) {
  const std::string g = Queue("q", "PaddingFIFOQueueV2", {"DT_INT32"}, {{-1}}, 5) + PlaceholderNode("x", "DT_INT32") +
                        PlaceholderNode("n", "DT_INT32") + Enqueue("enq", "q", {"x"}) + Dequeue("deq", "q") +
                        Dequeue("deq_many", "q", {"DT_INT32"}, "QueueDequeueManyV2", "n");
  auto s = Open(g);
  std::vector<Tensor> out;
  for (const std::vector<int32_t>& v : std::vector<std::vector<int32_t>>{{1}, {2, 3, 4}, {5, 6}, {7, 8}})
    ASSERT_TRUE(s->Run({{"x", MakeTensor<int32_t>(GR_INT32, {static_cast<int64_t>(v.size())}, v)}}, {}, {"enq"}, &out)
                    .ok());
  Tensor t;
  ASSERT_TRUE(Many(s.get(), "deq_many", 3, &t).ok());
  EXPECT_EQ(DimsOf(t), (Dims{3, 3}));
  EXPECT_EQ(ToVector<int32_t>(t), (std::vector<int32_t>{1, 0, 0, 2, 3, 4, 5, 6, 0}));
  // A single dequeue is not padded.
  ASSERT_TRUE(s->Run({}, {"deq:0"}, {}, &out).ok());
  EXPECT_EQ(ToVector<int32_t>(out[0]), (std::vector<int32_t>{7, 8}));
  // The rank is fixed.
  Status st = s->Run({{"x", MakeTensor<int32_t>(GR_INT32, {1, 1}, {1})}}, {}, {"enq"}, &out);
  EXPECT_EQ(st.code(), Code::kInvalidArgument) << st;
  EXPECT_TRUE(Contains(st.message(), "Shape mismatch in tuple component 0. Expected [?], got [1,1]")) << st;
}

TEST(PaddingFifoQueue, TwoDimensionalStringsAndEmptyBatch) {
  const std::string g = Queue("q", "PaddingFIFOQueueV2", {"DT_STRING"}, {{-1, 2}}, 5) +
                        PlaceholderNode("x", "DT_STRING") + PlaceholderNode("n", "DT_INT32") +
                        Enqueue("enq", "q", {"x"}, {"DT_STRING"}) +
                        Dequeue("deq_many", "q", {"DT_STRING"}, "QueueDequeueManyV2", "n");
  auto s = Open(g);
  auto strings = [](int64_t rows, const std::vector<std::string>& v) {
    Tensor t(GR_STRING, TensorShape({rows, 2}));
    for (size_t i = 0; i < v.size(); ++i) t.set_string(static_cast<int64_t>(i), v[i]);
    return t;
  };
  std::vector<Tensor> out;
  ASSERT_TRUE(s->Run({{"x", strings(1, {"a", "b"})}}, {}, {"enq"}, &out).ok());
  ASSERT_TRUE(s->Run({{"x", strings(2, {"c", "d", "e", "f"})}}, {}, {"enq"}, &out).ok());
  Tensor t;
  ASSERT_TRUE(Many(s.get(), "deq_many", 2, &t).ok());
  EXPECT_EQ(DimsOf(t), (Dims{2, 2, 2}));
  std::vector<std::string> v;
  for (int64_t i = 0; i < t.NumElements(); ++i) v.emplace_back(t.string_at(i));
  EXPECT_EQ(v, (std::vector<std::string>{"a", "b", "", "", "c", "d", "e", "f"}));
  ASSERT_TRUE(Many(s.get(), "deq_many", 0, &t).ok());
  EXPECT_EQ(DimsOf(t), (Dims{0, 0, 2}));
}

TEST(PaddingFifoQueue, NeedsAShapePerComponent) {
  auto s = Open(Queue("q", "PaddingFIFOQueueV2", {"DT_INT32"}, {}, 5) + SizeAndClosed("q"));
  std::vector<Tensor> out;
  Status st = s->Run({}, {"size:0"}, {}, &out);
  EXPECT_EQ(st.code(), Code::kInvalidArgument) << st;
  EXPECT_TRUE(Contains(st.message(), "Shapes must be provided for all components, but received 1 dtypes and 0 shapes."))
      << st;
}

// ------------------------------------------------------- random shuffle

std::string Seeded(int min_after_dequeue) {
  return Attr("min_after_dequeue", "i: " + std::to_string(min_after_dequeue)) + Attr("seed", "i: 87654321") +
         Attr("seed2", "i: 12");
}

TEST(RandomShuffleQueue, KeepsMinAfterDequeueUntilClosedAndShuffles) {
  for (int threads : {1, 2}) {
    auto s = Open(ScalarQueue(20, "RandomShuffleQueueV2", Seeded(3)), threads);
    for (int v = 0; v < 10; ++v) ASSERT_TRUE(Enq(s.get(), v).ok());
    std::vector<int32_t> got;
    for (int i = 0; i < 7; ++i) got.push_back(DeqOk(s.get()));
    // 3 left: a dequeue waits (min_after_dequeue) until the Run times out.
    proto::RunOptions options;
    options.set_timeout_in_ms(20);
    std::vector<Tensor> out;
    EXPECT_EQ(s->Run(options, {}, {"deq:0"}, {}, &out, nullptr).code(), Code::kDeadlineExceeded);
    EXPECT_EQ(Size(s.get()), 3);
    ASSERT_TRUE(RunTarget(s.get(), "close").ok());
    Tensor t;
    ASSERT_TRUE(Many(s.get(), "deq_up_to", 5, &t).ok());
    for (int32_t v : ToVector<int32_t>(t)) got.push_back(v);
    ASSERT_EQ(got.size(), 10u);
    std::vector<int32_t> sorted = got;
    std::sort(sorted.begin(), sorted.end());
    EXPECT_EQ(sorted, (std::vector<int32_t>{0, 1, 2, 3, 4, 5, 6, 7, 8, 9}));
    EXPECT_NE(got, sorted);  // shuffled (fixed seed: deterministic)
  }
}

TEST(RandomShuffleQueue, SameSeedsSameOrder) {
  std::vector<int32_t> orders[2];
  for (auto& order : orders) {
    auto s = Open(ScalarQueue(20, "RandomShuffleQueueV2", Seeded(0)));
    for (int v = 0; v < 8; ++v) ASSERT_TRUE(Enq(s.get(), v).ok());
    for (int i = 0; i < 8; ++i) order.push_back(DeqOk(s.get()));
  }
  EXPECT_EQ(orders[0], orders[1]);
}

TEST(RandomShuffleQueue, MinAfterDequeueMustBeBelowCapacity) {
  auto s = Open(ScalarQueue(3, "RandomShuffleQueueV2", Seeded(3)));
  std::vector<Tensor> out;
  Status st = s->Run({}, {"size:0"}, {}, &out);
  EXPECT_EQ(st.code(), Code::kInvalidArgument) << st;
  EXPECT_TRUE(Contains(st.message(), "min_after_dequeue 3 must be < capacity 3")) << st;
}

TEST(RandomShuffleQueue, ClosedEmptyQueueMessage) {
  auto s = Open(ScalarQueue(5, "RandomShuffleQueueV2", Seeded(0)));
  ASSERT_TRUE(RunTarget(s.get(), "close").ok());
  int32_t v = 0;
  Status st = Deq(s.get(), &v);
  EXPECT_EQ(st.code(), Code::kOutOfRange) << st;
  EXPECT_TRUE(Contains(st.message(), "RandomShuffleQueue '_0_q' is closed and has insufficient elements")) << st;
}

// ------------------------------------------------ real TensorFlow graphs

std::unique_ptr<Session> LoadTf(const std::string& rel, int threads) {
  const std::string path = SharedPath("tf_testdata/" + rel);
  if (path.empty()) return nullptr;
  proto::GraphDef g;
  Status st = ReadGraphDefFromFile(path, &g);
  EXPECT_TRUE(st.ok()) << st;
  return CreateSession(g, threads);
}

float Sum(const Tensor& t) {
  float s = 0;
  for (float v : ToVector<float>(t)) s += v;
  return s;
}

TEST(TfQueueGraphs, QueuesAndLoops) {  // tf_testdata README item 18
  for (int threads : {1, 2}) {
    auto s = LoadTf("tensorflow/grappler/queues_and_loops.pbtxt", threads);
    if (!s) GTEST_SKIP() << "tf_testdata not present";
    std::vector<Tensor> out;
    ASSERT_TRUE(s->Run({}, {"while/Exit:0"}, {}, &out).ok());  // no queue op runs
    EXPECT_EQ(out[0].scalar<int32_t>(), 10);
    ASSERT_TRUE(RunTarget(s.get(), "fifo_queue_enqueue").ok());
    ASSERT_TRUE(RunTarget(s.get(), "fifo_queue_1_enqueue").ok());
    ASSERT_TRUE(s->Run({}, {"concat:0"}, {}, &out).ok());
    EXPECT_EQ(DimsOf(out[0]), (Dims{2048, 4}));
    EXPECT_EQ(Sum(out[0]), 8192.0f);
    // One Run: the dequeues wait for the enqueues of the same step.
    ASSERT_TRUE(s->Run({}, {"concat:0"}, {"fifo_queue_enqueue", "fifo_queue_1_enqueue"}, &out).ok());
    EXPECT_EQ(DimsOf(out[0]), (Dims{2048, 4}));
    EXPECT_EQ(Sum(out[0]), 8192.0f);
    // q0 empty: Exit_1 would wait forever; the Run's timeout ends it.
    proto::RunOptions options;
    options.set_timeout_in_ms(30);
    EXPECT_EQ(s->Run(options, {}, {"while/Exit_1:0"}, {}, &out, nullptr).code(), Code::kDeadlineExceeded);
  }
}

TEST(TfQueueGraphs, LoopsAndQueues) {  // tf_testdata README item 17
  for (int threads : {1, 2}) {
    auto s = LoadTf("tensorflow/grappler/loops_and_queues.pbtxt", threads);
    if (!s) GTEST_SKIP() << "tf_testdata not present";
    std::vector<Tensor> out;
    ASSERT_TRUE(s->Run({}, {"while/Exit:0", "while/Exit_1:0"}, {}, &out).ok());
    EXPECT_EQ(out[0].scalar<int32_t>(), 3);
    EXPECT_EQ(DimsOf(out[1]), (Dims{1, 1, 8}));
    EXPECT_EQ(Sum(out[1]), 8.0f);
    // With the in-loop queue path (capacity 1, blocking enqueue and dequeue
    // across iterations) the outer results are the same.
    Status st = s->Run({}, {"while/Exit:0", "while/Exit_1:0"}, {"while/fifo_queue_enqueue", "while/while/Exit_1"}, &out);
    ASSERT_TRUE(st.ok()) << st;
    EXPECT_EQ(out[0].scalar<int32_t>(), 3);
    EXPECT_EQ(DimsOf(out[1]), (Dims{1, 1, 8}));
  }
}

}  // namespace
}  // namespace graphrt
