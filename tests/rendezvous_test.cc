// The step rendezvous (TensorFlow's rendezvous_test.cc, restated): keys,
// Send/Recv in either order, RecvAsync, abort, duplicate sends.
#include <gtest/gtest.h>

#include <atomic>
#include <thread>
#include <vector>

#include "graphrt/core/rendezvous.h"
#include "test_util.h"

namespace graphrt {
namespace {

using testing::MakeTensor;

constexpr char kCpu[] = "/job:localhost/replica:0/task:0/device:CPU:0";
constexpr char kGpu[] = "/job:localhost/replica:0/task:0/device:GPU:0";

Rendezvous::ParsedKey KeyFor(const std::string& tensor_name, int64_t iter = 0) {
  Rendezvous::ParsedKey k;
  EXPECT_TRUE(Rendezvous::ParseKey(Rendezvous::CreateKey(kCpu, 7, kGpu, tensor_name, 0, iter), &k).ok());
  return k;
}

Tensor Scalar(float v) { return MakeTensor<float>(GR_FLOAT, {}, {v}); }

TEST(RendezvousKey, CreateKeyIsTensorFlowsFormat) {
  // TensorFlow's own example key.
  EXPECT_EQ(Rendezvous::CreateKey("/job:mnist/replica:1/task:2/CPU:0", 7890,
                                  "/job:mnist/replica:1/task:2/device:GPU:0", "var0", 0, 0),
            "/job:mnist/replica:1/task:2/CPU:0;0000000000001ed2;/job:mnist/replica:1/task:2/device:GPU:0;var0;0:0");
}

TEST(RendezvousKey, ParseKeySplitsItBack) {
  Rendezvous::ParsedKey k;
  const std::string key =
      "/job:mnist/replica:1/task:2/CPU:0;0000000000001ed2;/job:mnist/replica:1/task:2/device:GPU:0;var0;3:4";
  ASSERT_TRUE(Rendezvous::ParseKey(key, &k).ok());
  EXPECT_EQ(k.full_key, key);
  EXPECT_EQ(k.src_device, "/job:mnist/replica:1/task:2/CPU:0");
  EXPECT_EQ(k.src.type, "CPU");
  EXPECT_EQ(k.src.job, "mnist");
  EXPECT_EQ(k.src.replica, 1);
  EXPECT_EQ(k.src.task, 2);
  EXPECT_EQ(k.src_incarnation, 7890u);
  EXPECT_EQ(k.dst.type, "GPU");
  EXPECT_EQ(k.dst.id, 0);
  EXPECT_EQ(k.edge_name, "var0");
  EXPECT_EQ(k.frame_iter, "3:4");
}

TEST(RendezvousKey, MalformedKeysAreInvalidArgument) {
  const std::string good_src = "/job:a/replica:0/task:0/device:CPU:0";
  for (const std::string& bad : {
           std::string(""),
           good_src + ";0000000000000001;" + good_src + ";t",                 // four parts
           good_src + ";0000000000000001;" + good_src + ";t;0:0;extra",       // six parts
           std::string("/job:a/device:CPU:0;01;") + good_src + ";t;0:0",      // src lacks replica/task
           good_src + ";01;/foo:bar;t;0:0",                                   // malformed dst
           good_src + ";xyz;" + good_src + ";t;0:0",                          // incarnation not hex
           good_src + ";01;" + good_src + ";;0:0",                            // no tensor name
           good_src + ";01;" + good_src + ";t;00",                            // no frame:iter
       }) {
    Rendezvous::ParsedKey k;
    Status s = Rendezvous::ParseKey(bad, &k);
    EXPECT_EQ(s.code(), Code::kInvalidArgument) << bad;
    EXPECT_NE(s.message().find("Invalid rendezvous key"), std::string::npos) << s;
  }
}

TEST(LocalRendezvous, SendThenRecv) {
  LocalRendezvous r;
  ASSERT_TRUE(r.Send(KeyFor("a"), Scalar(3), /*is_dead=*/false).ok());
  Tensor v;
  bool dead = true;
  ASSERT_TRUE(r.Recv(KeyFor("a"), &v, &dead).ok());
  EXPECT_FALSE(dead);
  EXPECT_EQ(v.scalar<float>(), 3.0f);
}

TEST(LocalRendezvous, DeadnessCrosses) {
  LocalRendezvous r;
  ASSERT_TRUE(r.Send(KeyFor("a"), Tensor(), /*is_dead=*/true).ok());
  Tensor v;
  bool dead = false;
  ASSERT_TRUE(r.Recv(KeyFor("a"), &v, &dead).ok());
  EXPECT_TRUE(dead);
}

TEST(LocalRendezvous, RecvBlocksUntilTheSend) {
  LocalRendezvous r;
  std::atomic<bool> sent{false};
  std::thread sender([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    sent = true;
    EXPECT_TRUE(r.Send(KeyFor("a"), Scalar(5), false).ok());
  });
  Tensor v;
  bool dead;
  ASSERT_TRUE(r.Recv(KeyFor("a"), &v, &dead).ok());
  EXPECT_TRUE(sent.load());
  EXPECT_EQ(v.scalar<float>(), 5.0f);
  sender.join();
}

TEST(LocalRendezvous, RecvAsyncCallsBackOnceAtOnceWhenTheValueIsThere) {
  LocalRendezvous r;
  ASSERT_TRUE(r.Send(KeyFor("a"), Scalar(1), false).ok());
  int calls = 0;
  r.RecvAsync(KeyFor("a"), [&](const Status& s, const Tensor& v, bool dead) {
    ++calls;
    EXPECT_TRUE(s.ok());
    EXPECT_EQ(v.scalar<float>(), 1.0f);
  });
  EXPECT_EQ(calls, 1);  // before RecvAsync returned
}

TEST(LocalRendezvous, RecvAsyncCallsBackWhenTheValueArrives) {
  LocalRendezvous r;
  int calls = 0;
  float got = 0;
  r.RecvAsync(KeyFor("a"), [&](const Status& s, const Tensor& v, bool) {
    ++calls;
    ASSERT_TRUE(s.ok());
    got = v.scalar<float>();
  });
  EXPECT_EQ(calls, 0);
  ASSERT_TRUE(r.Send(KeyFor("b"), Scalar(9), false).ok());  // another key: no wake-up
  EXPECT_EQ(calls, 0);
  ASSERT_TRUE(r.Send(KeyFor("a"), Scalar(2), false).ok());
  EXPECT_EQ(calls, 1);
  EXPECT_EQ(got, 2.0f);
  // The key is free again: a second round works.
  ASSERT_TRUE(r.Send(KeyFor("a"), Scalar(4), false).ok());
  Tensor v;
  bool dead;
  ASSERT_TRUE(r.Recv(KeyFor("a"), &v, &dead).ok());
  EXPECT_EQ(v.scalar<float>(), 4.0f);
}

TEST(LocalRendezvous, PingPong) {
  LocalRendezvous r;
  constexpr int kRounds = 200;
  std::thread other([&] {
    for (int i = 0; i < kRounds; ++i) {
      Tensor v;
      bool dead;
      ASSERT_TRUE(r.Recv(KeyFor("ping", i), &v, &dead).ok());
      ASSERT_TRUE(r.Send(KeyFor("pong", i), Scalar(v.scalar<float>() + 1), false).ok());
    }
  });
  float x = 0;
  for (int i = 0; i < kRounds; ++i) {
    ASSERT_TRUE(r.Send(KeyFor("ping", i), Scalar(x), false).ok());
    Tensor v;
    bool dead;
    ASSERT_TRUE(r.Recv(KeyFor("pong", i), &v, &dead).ok());
    x = v.scalar<float>();
  }
  other.join();
  EXPECT_EQ(x, static_cast<float>(kRounds));
}

TEST(LocalRendezvous, DuplicateSendIsAbortedAsInTensorFlow1) {
  LocalRendezvous r;
  ASSERT_TRUE(r.Send(KeyFor("a"), Scalar(1), false).ok());
  Status s = r.Send(KeyFor("a"), Scalar(2), false);
  EXPECT_EQ(s.code(), Code::kAborted);
  EXPECT_NE(s.message().find("Duplicated send: " + KeyFor("a").full_key), std::string::npos) << s;
  // The first value is still the one received.
  Tensor v;
  bool dead;
  ASSERT_TRUE(r.Recv(KeyFor("a"), &v, &dead).ok());
  EXPECT_EQ(v.scalar<float>(), 1.0f);
}

TEST(LocalRendezvous, AbortWakesEveryWaiterWithTheFirstError) {
  LocalRendezvous r;
  std::vector<Status> got(3);
  std::vector<std::thread> waiters;
  std::atomic<int> done{0};
  for (int i = 0; i < 3; ++i)
    r.RecvAsync(KeyFor("k" + std::to_string(i)), [&, i](const Status& s, const Tensor& v, bool) {
      got[i] = s;
      EXPECT_FALSE(v.IsInitialized());
      ++done;
    });
  // A blocking Recv on another thread as well.
  Status blocked;
  std::thread t([&] {
    Tensor v;
    bool dead;
    blocked = r.Recv(KeyFor("blocking"), &v, &dead);
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(10));
  r.StartAbort(errors::Aborted("partition on XPU:0 failed"));
  r.StartAbort(errors::Cancelled("a later error"));  // the first stands
  t.join();
  EXPECT_EQ(done.load(), 3);
  for (const Status& s : got) {
    EXPECT_EQ(s.code(), Code::kAborted);
    EXPECT_NE(s.message().find("partition on XPU:0 failed"), std::string::npos) << s;
  }
  EXPECT_EQ(blocked.code(), Code::kAborted) << blocked;
  // Later Sends and Recvs fail with it.
  Status s = r.Send(KeyFor("x"), Scalar(1), false);
  EXPECT_EQ(s.code(), Code::kAborted);
  EXPECT_NE(s.message().find("partition on XPU:0 failed"), std::string::npos);
  Status late;
  r.RecvAsync(KeyFor("x"), [&](const Status& st, const Tensor&, bool) { late = st; });
  EXPECT_EQ(late.code(), Code::kAborted);
}

TEST(LocalRendezvous, AbortReleasesValuesNeverReceived) {
  LocalRendezvous r;
  Tensor big = MakeTensor<float>(GR_FLOAT, {4}, {1, 2, 3, 4});
  ASSERT_TRUE(r.Send(KeyFor("a"), big, false).ok());
  r.StartAbort(errors::Aborted("step failed"));
  Tensor v;
  bool dead;
  EXPECT_EQ(r.Recv(KeyFor("a"), &v, &dead).code(), Code::kAborted);  // gone with the abort
}

TEST(LocalRendezvous, DestroyingItCallsPendingWaiters) {
  Status got;
  {
    LocalRendezvous r;
    ASSERT_TRUE(r.Send(KeyFor("unreceived"), Scalar(1), false).ok());
    r.RecvAsync(KeyFor("never_sent"), [&](const Status& s, const Tensor&, bool) { got = s; });
  }
  EXPECT_EQ(got.code(), Code::kAborted);
}

TEST(LocalRendezvous, ManySendersAndReceivers) {
  LocalRendezvous r;
  constexpr int kKeys = 400;
  std::atomic<int> sum{0};
  std::thread recv_thread([&] {
    for (int i = 0; i < kKeys; ++i)
      r.RecvAsync(KeyFor("t" + std::to_string(i)), [&](const Status& s, const Tensor& v, bool) {
        EXPECT_TRUE(s.ok());
        sum += static_cast<int>(v.scalar<float>());
      });
  });
  std::thread send_thread([&] {
    for (int i = 0; i < kKeys; ++i) EXPECT_TRUE(r.Send(KeyFor("t" + std::to_string(i)), Scalar(i), false).ok());
  });
  recv_thread.join();
  send_thread.join();
  EXPECT_EQ(sum.load(), kKeys * (kKeys - 1) / 2);
}

}  // namespace
}  // namespace graphrt
