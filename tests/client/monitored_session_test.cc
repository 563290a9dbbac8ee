// MonitoredSession, Scaffold, ChiefSessionCreator, the standard hooks and
// the Coordinator (tf_behaviours.md §15), on small graphs run by the real
// session, and end to end on TensorFlow's regression model.
#include "graphrt/client/monitored_session.h"

#include <google/protobuf/text_format.h>
#include <gtest/gtest.h>

#include <atomic>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <thread>

#include "client_test_util.h"
#include "graphrt/client/coordinator.h"
#include "graphrt/client/event_writer.h"
#include "graphrt/client/hooks.h"
#include "graphrt/client/meta_graph.h"

namespace graphrt {
namespace {

namespace fs = std::filesystem;
using testing::MakeTensor;
using testing::ScopedTempDir;

// v (float, starts at 2) loses `delta` (default 1) per `train`, which also
// steps global_step; loss = sqrt(v after the update): 1, 0, NaN, ...
const char kCounterGraph[] = R"pb(
  node { name: "v" op: "VariableV2"
         attr { key: "dtype" value { type: DT_FLOAT } }
         attr { key: "shape" value { shape { } } } }
  node { name: "v/initial_value" op: "Const"
         attr { key: "dtype" value { type: DT_FLOAT } }
         attr { key: "value" value { tensor { dtype: DT_FLOAT tensor_shape { } float_val: 2 } } } }
  node { name: "v/Assign" op: "Assign" input: "v" input: "v/initial_value"
         attr { key: "T" value { type: DT_FLOAT } } }
  node { name: "delta/default" op: "Const"
         attr { key: "dtype" value { type: DT_FLOAT } }
         attr { key: "value" value { tensor { dtype: DT_FLOAT tensor_shape { } float_val: 1 } } } }
  node { name: "delta" op: "PlaceholderWithDefault" input: "delta/default"
         attr { key: "dtype" value { type: DT_FLOAT } }
         attr { key: "shape" value { shape { } } } }
  node { name: "update" op: "AssignSub" input: "v" input: "delta"
         attr { key: "T" value { type: DT_FLOAT } }
         attr { key: "use_locking" value { b: true } } }
  node { name: "loss" op: "Sqrt" input: "update" attr { key: "T" value { type: DT_FLOAT } } }
)pb";

// The counter graph with a global step that `train` increments.
proto::MetaGraphDef CounterMetaGraph() {
  proto::MetaGraphDef meta;
  *meta.mutable_graph_def() = testing::ParseGraph(kCounterGraph);
  std::string gs, inc;
  EXPECT_TRUE(GetOrCreateGlobalStep(&meta, nullptr, &gs).ok());
  EXPECT_TRUE(AddGlobalStepIncrement(&meta, nullptr, gs, &inc).ok());
  proto::NodeDef* train = meta.mutable_graph_def()->add_node();
  train->set_name("train");
  train->set_op("NoOp");
  train->add_input("^update");
  train->add_input("^" + inc);
  return meta;
}

float ReadFloat(Session* s, const std::string& tensor) {
  std::vector<Tensor> out;
  Status st = s->Run({}, {tensor}, {}, &out);
  EXPECT_TRUE(st.ok()) << st;
  return st.ok() ? out[0].data<float>()[0] : NAN;
}

int64_t ReadStep(Session* s) {
  int64_t step = -1;
  Status st = ReadInt64Scalar(s, "global_step:0", &step);
  EXPECT_TRUE(st.ok()) << st;
  return step;
}

// Records every call, prefixed with its name.
class RecordingHook : public SessionRunHook {
 public:
  RecordingHook(std::string name, std::vector<std::string>* log) : name_(std::move(name)), log_(log) {}
  Status Begin(Scaffold* scaffold) override {
    log_->push_back(name_ + ".begin" + (scaffold->finalized() ? "(finalized)" : ""));
    return Status::OK();
  }
  Status AfterCreateSession(Session*, Coordinator*) override {
    log_->push_back(name_ + ".after_create_session");
    return Status::OK();
  }
  Status BeforeRun(SessionRunContext* context, SessionRunArgs* args) override {
    log_->push_back(name_ + ".before_run");
    *args = extra;
    return Status::OK();
  }
  Status AfterRun(SessionRunContext* context, const SessionRunValues& values) override {
    log_->push_back(name_ + ".after_run");
    last_values = values.results;
    if (stop_after_runs > 0 && ++runs_ >= stop_after_runs) context->RequestStop();
    return Status::OK();
  }
  Status End(Session*) override {
    log_->push_back(name_ + ".end");
    return Status::OK();
  }

  SessionRunArgs extra;
  std::vector<Tensor> last_values;
  int stop_after_runs = 0;

 private:
  std::string name_;
  std::vector<std::string>* log_;
  int runs_ = 0;
};

Status NewMonitored(std::shared_ptr<Scaffold> scaffold, std::vector<std::shared_ptr<SessionRunHook>> hooks,
                    std::unique_ptr<MonitoredSession>* out, const std::string& checkpoint_dir = "") {
  return MonitoredSession::Create(std::make_unique<ChiefSessionCreator>(scaffold, SessionOptions(), checkpoint_dir),
                                  std::move(hooks), out);
}

bool ReadTextCheckpointState(const std::string& path, proto::CheckpointState* state) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return google::protobuf::TextFormat::ParseFromString(text.str(), state);
}

std::vector<std::string> IndexFiles(const std::string& dir) {
  std::vector<std::string> names;
  for (const auto& e : fs::directory_iterator(dir))
    if (e.path().extension() == ".index") names.push_back(e.path().stem().string());
  std::sort(names.begin(), names.end());
  return names;
}

class MonitoredSessionTest : public ::testing::Test {
 protected:
  void SetUp() override {
    GRAPHRT_REQUIRE_OPS("VariableV2", "Assign", "AssignSub", "AssignAdd", "IsVariableInitialized", "Sqrt",
                        "PlaceholderWithDefault", "SaveV2", "RestoreV2");
  }
};

// ------------------------------------------------------------ protocol

TEST_F(MonitoredSessionTest, HookCallOrderIsExact) {
  std::vector<std::string> log;
  auto a = std::make_shared<RecordingHook>("a", &log);
  auto b = std::make_shared<RecordingHook>("b", &log);
  std::unique_ptr<MonitoredSession> ms;
  Status s = NewMonitored(std::make_shared<Scaffold>(CounterMetaGraph()), {a, b}, &ms);
  ASSERT_TRUE(s.ok()) << s;
  for (int i = 0; i < 2; ++i) ASSERT_TRUE(ms->Run({}, {}, {"train"}, nullptr).ok());
  ASSERT_TRUE(ms->Close().ok());
  const std::vector<std::string> want = {
      "a.begin", "b.begin", "a.after_create_session", "b.after_create_session",  //
      "a.before_run", "b.before_run", "a.after_run", "b.after_run",              // step 1
      "a.before_run", "b.before_run", "a.after_run", "b.after_run",              // step 2
      "a.end", "b.end"};
  EXPECT_EQ(log, want);
  EXPECT_TRUE(ms->Close().ok());  // a second Close does nothing
  EXPECT_EQ(log.size(), want.size());
}

TEST_F(MonitoredSessionTest, ExtraFetchesFeedsAndTargetsOfHooks) {
  std::vector<std::string> log;
  auto a = std::make_shared<RecordingHook>("a", &log);
  auto b = std::make_shared<RecordingHook>("b", &log);
  // a feeds delta = 0.5 and fetches the loss; b runs the increment only.
  a->extra.feeds = {{"delta", Tensor::Scalar(GR_FLOAT, 0.5f)}};
  a->extra.fetches = {"loss:0", "global_step/read:0"};
  b->extra.targets = {"global_step/increment"};
  std::unique_ptr<MonitoredSession> ms;
  ASSERT_TRUE(NewMonitored(std::make_shared<Scaffold>(CounterMetaGraph()), {a, b}, &ms).ok());
  std::vector<Tensor> out;
  Status s = ms->Run({}, {"update:0"}, {}, &out);
  ASSERT_TRUE(s.ok()) << s;
  ASSERT_EQ(out.size(), 1u);  // only the caller's fetch
  EXPECT_EQ(out[0].data<float>()[0], 1.5f);
  ASSERT_EQ(a->last_values.size(), 2u);
  EXPECT_FLOAT_EQ(a->last_values[0].data<float>()[0], std::sqrt(1.5f));
  EXPECT_TRUE(b->last_values.empty());
  EXPECT_EQ(ReadStep(ms->raw_session()), 1);  // b's target ran

  // The same tensor fed twice is refused, naming who fed it.
  s = ms->Run({{"delta:0", Tensor::Scalar(GR_FLOAT, 1.0f)}}, {}, {"train"}, nullptr);
  EXPECT_EQ(s.code(), Code::kInvalidArgument);
  EXPECT_NE(s.message().find("Same tensor is fed by a SessionRunHook and user."), std::string::npos) << s;
}

TEST_F(MonitoredSessionTest, TwoHooksFeedingOneTensorIsAnError) {
  std::vector<std::string> log;
  auto a = std::make_shared<RecordingHook>("a", &log);
  auto b = std::make_shared<RecordingHook>("b", &log);
  a->extra.feeds = {{"delta", Tensor::Scalar(GR_FLOAT, 0.5f)}};
  b->extra.feeds = {{"delta:0", Tensor::Scalar(GR_FLOAT, 0.25f)}};
  std::unique_ptr<MonitoredSession> ms;
  ASSERT_TRUE(NewMonitored(std::make_shared<Scaffold>(CounterMetaGraph()), {a, b}, &ms).ok());
  Status s = ms->Run({}, {}, {"train"}, nullptr);
  EXPECT_EQ(s.code(), Code::kInvalidArgument);
  EXPECT_NE(s.message().find("Same tensor is fed by two hooks."), std::string::npos) << s;
  // A failed Run: Close does not call end() (TF: not while an exception propagates).
  EXPECT_TRUE(ms->Close().ok());
  EXPECT_EQ(std::count(log.begin(), log.end(), "a.end"), 0);
}

TEST_F(MonitoredSessionTest, RequestStopEndsTheLoop) {
  std::vector<std::string> log;
  auto a = std::make_shared<RecordingHook>("a", &log);
  a->stop_after_runs = 3;
  std::unique_ptr<MonitoredSession> ms;
  ASSERT_TRUE(NewMonitored(std::make_shared<Scaffold>(CounterMetaGraph()), {a}, &ms).ok());
  int runs = 0;
  while (!ms->ShouldStop()) {
    ASSERT_TRUE(ms->Run({}, {}, {"train"}, nullptr).ok());
    ++runs;
  }
  EXPECT_EQ(runs, 3);
  Status s = ms->Run({}, {}, {"train"}, nullptr);
  EXPECT_EQ(s.code(), Code::kFailedPrecondition);
  EXPECT_NE(s.message().find("Run called even after should_stop requested."), std::string::npos);
  EXPECT_EQ(ReadStep(ms->raw_session()), 3);
}

TEST_F(MonitoredSessionTest, CoordinatorStopAndErrorReachTheSession) {
  std::unique_ptr<MonitoredSession> ms;
  ASSERT_TRUE(NewMonitored(std::make_shared<Scaffold>(CounterMetaGraph()), {}, &ms).ok());
  EXPECT_FALSE(ms->ShouldStop());
  ms->coordinator()->Start("reader", [](Coordinator* c) { c->RequestStop(errors::DataLoss("bad record 7")); });
  EXPECT_TRUE(ms->coordinator()->WaitForStop(std::chrono::seconds(10)));
  EXPECT_TRUE(ms->ShouldStop());
  Status s = ms->Run({}, {}, {"train"}, nullptr);
  EXPECT_EQ(s.code(), Code::kDataLoss);
  s = ms->Close();
  EXPECT_EQ(s.code(), Code::kDataLoss);
  EXPECT_NE(s.message().find("bad record 7"), std::string::npos);
}

// ------------------------------------------------------- creation

TEST_F(MonitoredSessionTest, ChiefInitialisesWithoutCheckpointAndRestoresWithOne) {
  ScopedTempDir dir;
  auto scaffold = std::make_shared<Scaffold>(CounterMetaGraph());
  auto creator = std::make_unique<ChiefSessionCreator>(scaffold, SessionOptions(), dir.path());
  ChiefSessionCreator* chief = creator.get();
  std::unique_ptr<MonitoredSession> ms;
  ASSERT_TRUE(MonitoredSession::Create(std::move(creator), {}, &ms).ok());
  EXPECT_EQ(chief->restored_from(), "");
  EXPECT_EQ(ReadFloat(ms->raw_session(), "v:0"), 2.0f);  // v/Assign ran
  EXPECT_EQ(ReadStep(ms->raw_session()), 0);
  for (int i = 0; i < 3; ++i) ASSERT_TRUE(ms->Run({}, {}, {"train"}, nullptr).ok());
  std::string path;
  ASSERT_TRUE(scaffold->saver->Save(ms->raw_session(), dir.Join("model.ckpt"), 3, &path).ok());
  ASSERT_TRUE(ms->Close().ok());

  // A new MonitoredSession on the same directory restores step 3.
  auto creator2 = std::make_unique<ChiefSessionCreator>(std::make_shared<Scaffold>(CounterMetaGraph()),
                                                        SessionOptions(), dir.path());
  chief = creator2.get();
  ASSERT_TRUE(MonitoredSession::Create(std::move(creator2), {}, &ms).ok());
  EXPECT_EQ(chief->restored_from(), dir.Join("model.ckpt-3"));
  EXPECT_EQ(ReadFloat(ms->raw_session(), "v:0"), -1.0f);
  EXPECT_EQ(ReadStep(ms->raw_session()), 3);
}

// A damaged latest checkpoint: the chief restores the newest good one the
// state file lists, and says so on stderr naming both.
TEST_F(MonitoredSessionTest, ChiefFallsBackFromACorruptLatestCheckpoint) {
  ScopedTempDir dir;
  auto scaffold = std::make_shared<Scaffold>(CounterMetaGraph());
  std::unique_ptr<MonitoredSession> ms;
  ASSERT_TRUE(NewMonitored(scaffold, {}, &ms, dir.path()).ok());
  std::string path;
  for (int step = 1; step <= 3; ++step) {
    ASSERT_TRUE(ms->Run({}, {}, {"train"}, nullptr).ok());
    ASSERT_TRUE(scaffold->saver->Save(ms->raw_session(), dir.Join("model.ckpt"), step, &path).ok());
  }
  ASSERT_TRUE(ms->Close().ok());
  // One byte of step 3's data flipped; step 2's data file removed.
  const std::string data3 = dir.Join("model.ckpt-3.data-00000-of-00001");
  std::string bytes;
  {
    std::ifstream in(data3, std::ios::binary);
    std::stringstream ss;
    ss << in.rdbuf();
    bytes = ss.str();
  }
  ASSERT_FALSE(bytes.empty());
  bytes[0] ^= 0x40;
  std::ofstream(data3, std::ios::binary | std::ios::trunc) << bytes;
  fs::remove(dir.Join("model.ckpt-2.data-00000-of-00001"));

  auto creator = std::make_unique<ChiefSessionCreator>(std::make_shared<Scaffold>(CounterMetaGraph()),
                                                       SessionOptions(), dir.path());
  ChiefSessionCreator* chief = creator.get();
  ::testing::internal::CaptureStderr();
  Status s = MonitoredSession::Create(std::move(creator), {}, &ms);
  const std::string err = ::testing::internal::GetCapturedStderr();
  ASSERT_TRUE(s.ok()) << s;
  EXPECT_EQ(chief->restored_from(), dir.Join("model.ckpt-1"));
  EXPECT_EQ(ReadStep(ms->raw_session()), 1);
  EXPECT_NE(err.find("WARNING: graphrt: the latest checkpoint " + dir.Join("model.ckpt-3") + " does not restore"),
            std::string::npos) << err;
  EXPECT_NE(err.find("Checksum does not match"), std::string::npos) << err;
  EXPECT_NE(err.find("restored " + dir.Join("model.ckpt-1") + " instead"), std::string::npos) << err;
  ASSERT_TRUE(ms->Close().ok());

  // Nothing good left: the latest one's error.
  fs::remove(dir.Join("model.ckpt-1.data-00000-of-00001"));
  s = NewMonitored(std::make_shared<Scaffold>(CounterMetaGraph()), {}, &ms, dir.path());
  EXPECT_EQ(s.code(), Code::kDataLoss) << s;
  EXPECT_NE(s.message().find("model.ckpt-3"), std::string::npos) << s;
}

TEST_F(MonitoredSessionTest, NotReadyNamesTheUninitializedVariables) {
  auto scaffold = std::make_shared<Scaffold>(CounterMetaGraph());
  scaffold->init_op = {"delta/default"};  // initialises nothing
  std::unique_ptr<MonitoredSession> ms;
  Status s = NewMonitored(scaffold, {}, &ms);
  EXPECT_EQ(s.code(), Code::kFailedPrecondition);
  EXPECT_NE(s.message().find("Init operations did not make model ready."), std::string::npos) << s;
  EXPECT_NE(s.message().find("Variables not initialized: v, global_step"), std::string::npos) << s;

  // init_fn completes what init_op left out.
  scaffold = std::make_shared<Scaffold>(CounterMetaGraph());
  scaffold->init_op = {"v/Assign"};
  scaffold->init_fn = [](Session* session) {
    std::vector<Tensor> unused;
    return session->Run({}, {}, {"global_step/Assign"}, &unused);
  };
  s = NewMonitored(scaffold, {}, &ms);
  ASSERT_TRUE(s.ok()) << s;
  EXPECT_EQ(ReadStep(ms->raw_session()), 0);
}

// Resource variables: initialised by <var>/Assign (AssignVariableOp) found
// by name, checked with VarIsInitializedOp.
TEST_F(MonitoredSessionTest, ResourceVariablesAreInitialisedAndChecked) {
  GRAPHRT_REQUIRE_OPS("VarHandleOp", "AssignVariableOp", "ReadVariableOp", "VarIsInitializedOp");
  const char kResourceGraph[] = R"pb(
    node { name: "r" op: "VarHandleOp"
           attr { key: "dtype" value { type: DT_FLOAT } }
           attr { key: "shape" value { shape { } } }
           attr { key: "shared_name" value { s: "r" } } }
    node { name: "r/Initializer/value" op: "Const"
           attr { key: "dtype" value { type: DT_FLOAT } }
           attr { key: "value" value { tensor { dtype: DT_FLOAT tensor_shape { } float_val: 5 } } } }
    node { name: "r/Assign" op: "AssignVariableOp" input: "r" input: "r/Initializer/value"
           attr { key: "dtype" value { type: DT_FLOAT } } }
    node { name: "r/Read" op: "ReadVariableOp" input: "r" attr { key: "dtype" value { type: DT_FLOAT } } }
  )pb";
  proto::MetaGraphDef meta;
  *meta.mutable_graph_def() = testing::ParseGraph(kResourceGraph);
  auto scaffold = std::make_shared<Scaffold>(meta);
  std::unique_ptr<MonitoredSession> ms;
  Status s = NewMonitored(scaffold, {}, &ms);
  ASSERT_TRUE(s.ok()) << s;
  ASSERT_EQ(scaffold->ready_variables().size(), 1u);
  EXPECT_EQ(FindGraphNode(scaffold->graph(), TensorNameToNodeName(scaffold->ready_variables()[0].is_initialized_tensor))->op(),
            "VarIsInitializedOp");
  EXPECT_EQ(ReadFloat(ms->raw_session(), "r/Read:0"), 5.0f);

  scaffold = std::make_shared<Scaffold>(meta);
  scaffold->init_op = {"r/Initializer/value"};
  s = NewMonitored(scaffold, {}, &ms);
  EXPECT_EQ(s.code(), Code::kFailedPrecondition);
  EXPECT_NE(s.message().find("Variables not initialized: r"), std::string::npos) << s;
}

TEST_F(MonitoredSessionTest, ScaffoldTakesCollectionsAndRefusesTwoItems) {
  proto::MetaGraphDef meta = CounterMetaGraph();
  auto* init = (*meta.mutable_collection_def())[kInitOpCollection].mutable_node_list();
  init->add_value("v/Assign");
  init->add_value("global_step/Assign");
  Scaffold two(meta);
  Status s = two.Finalize();
  EXPECT_EQ(s.code(), Code::kInvalidArgument);
  EXPECT_NE(s.message().find("More than one item in collection init_op"), std::string::npos) << s;

  init->clear_value();
  init->add_value("v/Assign");
  Scaffold one(meta);
  ASSERT_TRUE(one.Finalize().ok());
  EXPECT_EQ(one.init_op, std::vector<std::string>{"v/Assign"});
  EXPECT_EQ(one.mutable_meta_graph(), nullptr);  // finalized
  ASSERT_NE(one.saver, nullptr);
  // The built saver covers both variables (save/ scope).
  EXPECT_EQ(one.saver->saver_def().restore_op_name(), "save/restore_all");
  EXPECT_EQ(one.ready_variables().size(), 2u);

  // The default init op groups the collection's initializers.
  Scaffold built(CounterMetaGraph());
  ASSERT_TRUE(built.Finalize().ok());
  ASSERT_EQ(built.init_op.size(), 1u);
  const proto::NodeDef* group = FindGraphNode(built.graph(), built.init_op[0]);
  ASSERT_NE(group, nullptr);
  EXPECT_EQ(group->op(), "NoOp");
  EXPECT_EQ(std::vector<std::string>(group->input().begin(), group->input().end()),
            (std::vector<std::string>{"^v/Assign", "^global_step/Assign"}));
}

TEST_F(MonitoredSessionTest, GetOrCreateGlobalStep) {
  proto::MetaGraphDef meta;
  *meta.mutable_graph_def() = testing::ParseGraph(kCounterGraph);
  std::string gs;
  ASSERT_TRUE(GetGlobalStep(meta, &gs).ok());
  EXPECT_EQ(gs, "");
  ASSERT_TRUE(GetOrCreateGlobalStep(&meta, nullptr, &gs).ok());
  EXPECT_EQ(gs, "global_step");
  const proto::NodeDef* var = FindGraphNode(meta.graph_def(), "global_step");
  ASSERT_NE(var, nullptr);
  EXPECT_EQ(var->op(), "VariableV2");
  EXPECT_EQ(var->attr().at("dtype").type(), proto::DT_INT64);
  EXPECT_EQ(var->attr().at("shape").shape().dim_size(), 0);
  // The variables collection lists v (found before) and global_step.
  const auto& vars = meta.collection_def().at(kGlobalVariablesCollection).bytes_list();
  ASSERT_EQ(vars.value_size(), 2);
  proto::VariableDef def;
  ASSERT_TRUE(def.ParseFromString(vars.value(0)));
  EXPECT_EQ(def.variable_name(), "v:0");
  EXPECT_EQ(def.initializer_name(), "v/Assign");
  ASSERT_TRUE(def.ParseFromString(meta.collection_def().at(kGlobalStepCollection).bytes_list().value(0)));
  EXPECT_EQ(def.variable_name(), "global_step:0");
  // A second call finds it.
  const int nodes = meta.graph_def().node_size();
  ASSERT_TRUE(GetOrCreateGlobalStep(&meta, nullptr, &gs).ok());
  EXPECT_EQ(meta.graph_def().node_size(), nodes);

  // A live session is extended too.
  proto::MetaGraphDef live;
  *live.mutable_graph_def() = testing::ParseGraph(kCounterGraph);
  std::unique_ptr<Session> session;
  ASSERT_TRUE(NewSession(SessionOptions(), &session).ok());
  ASSERT_TRUE(session->Create(live.graph_def()).ok());
  ASSERT_TRUE(GetOrCreateGlobalStep(&live, session.get(), &gs).ok());
  std::string inc;
  ASSERT_TRUE(AddGlobalStepIncrement(&live, session.get(), gs, &inc).ok());
  std::vector<Tensor> out;
  ASSERT_TRUE(session->Run({}, {}, {"global_step/Assign"}, &out).ok());
  ASSERT_TRUE(session->Run({}, {}, {inc}, &out).ok());
  ASSERT_TRUE(session->Run({}, {}, {inc}, &out).ok());
  EXPECT_EQ(ReadStep(session.get()), 2);

  // A node named global_step that is no variable.
  proto::MetaGraphDef bad;
  *bad.mutable_graph_def() = testing::ParseGraph(R"pb(node { name: "global_step" op: "NoOp" })pb");
  Status s = GetOrCreateGlobalStep(&bad, nullptr, &gs);
  EXPECT_EQ(s.code(), Code::kAlreadyExists);
  EXPECT_NE(s.message().find("global_step"), std::string::npos);
}

// ------------------------------------------------------- recovery

// Delegates to a real session, except that its Run number `fail_at` that
// has target "train" returns `error` instead.
class FlakySession : public Session {
 public:
  FlakySession(std::unique_ptr<Session> inner, int fail_at, Status error)
      : inner_(std::move(inner)), fail_at_(fail_at), error_(std::move(error)) {}
  Status Create(const proto::GraphDef& g) override { return inner_->Create(g); }
  Status Extend(const proto::GraphDef& g) override { return inner_->Extend(g); }
  Status Run(const FeedList& in, const std::vector<std::string>& out, const std::vector<std::string>& targets,
             std::vector<Tensor>* outputs) override {
    if (std::count(targets.begin(), targets.end(), "train") && ++train_runs_ == fail_at_) return error_;
    return inner_->Run(in, out, targets, outputs);
  }
  Status Run(const proto::RunOptions& o, const FeedList& in, const std::vector<std::string>& out,
             const std::vector<std::string>& targets, std::vector<Tensor>* outputs, proto::RunMetadata* md) override {
    if (std::count(targets.begin(), targets.end(), "train") && ++train_runs_ == fail_at_) return error_;
    return inner_->Run(o, in, out, targets, outputs, md);
  }
  Status Close() override { return inner_->Close(); }

 private:
  std::unique_ptr<Session> inner_;
  int fail_at_;
  int train_runs_ = 0;
  Status error_;
};

// A ChiefSessionCreator whose first session is a FlakySession.
class FlakyCreator : public SessionCreator {
 public:
  FlakyCreator(std::shared_ptr<Scaffold> scaffold, const std::string& dir, int fail_at, Status error)
      : chief_(std::move(scaffold), SessionOptions(), dir), fail_at_(fail_at), error_(std::move(error)) {}
  Status CreateSession(std::unique_ptr<Session>* out) override {
    std::unique_ptr<Session> s;
    GR_RETURN_IF_ERROR(chief_.CreateSession(&s));
    if (++created_ == 1) s = std::make_unique<FlakySession>(std::move(s), fail_at_, error_);
    *out = std::move(s);
    return Status::OK();
  }
  Scaffold* scaffold() override { return chief_.scaffold(); }
  const ChiefSessionCreator& chief() const { return chief_; }

 private:
  ChiefSessionCreator chief_;
  int fail_at_;
  Status error_;
  int created_ = 0;
};

TEST_F(MonitoredSessionTest, AbortedRunRecoversFromTheLatestCheckpoint) {
  ScopedTempDir dir;
  CheckpointSaverHook::Options ckpt;
  ckpt.checkpoint_dir = dir.path();
  ckpt.save_steps = 2;
  ckpt.log = [](const std::string&) {};
  std::vector<std::string> log;
  auto rec = std::make_shared<RecordingHook>("r", &log);
  // The 4th train step aborts.
  auto creator = std::make_unique<FlakyCreator>(std::make_shared<Scaffold>(CounterMetaGraph()), dir.path(), 4,
                                                errors::Aborted("worker restarted"));
  const FlakyCreator* flaky = creator.get();
  std::unique_ptr<MonitoredSession> ms;
  ASSERT_TRUE(MonitoredSession::Create(std::move(creator), {std::make_shared<CheckpointSaverHook>(ckpt), rec}, &ms).ok());
  for (int i = 0; i < 3; ++i) ASSERT_TRUE(ms->Run({}, {}, {"train"}, nullptr).ok());
  // Checkpoints at creation (0) and at 2; the state is at step 3.
  EXPECT_EQ(IndexFiles(dir.path()), (std::vector<std::string>{"model.ckpt-0", "model.ckpt-2"}));
  EXPECT_EQ(ReadStep(ms->raw_session()), 3);
  log.clear();
  // Step 4 aborts: the session is re-created from model.ckpt-2 (step 2,
  // v = 0) and the step runs again there.
  Status s = ms->Run({}, {"update:0"}, {"train"}, nullptr);
  ASSERT_TRUE(s.ok()) << s;
  EXPECT_EQ(ms->sessions_created(), 2);
  EXPECT_EQ(flaky->chief().restored_from(), dir.Join("model.ckpt-2"));
  EXPECT_EQ(log, (std::vector<std::string>{"r.before_run", "r.after_create_session", "r.before_run", "r.after_run"}));
  EXPECT_EQ(ReadStep(ms->raw_session()), 3);
  EXPECT_EQ(ReadFloat(ms->raw_session(), "v:0"), -1.0f);
  ASSERT_TRUE(ms->Run({}, {}, {"train"}, nullptr).ok());
  EXPECT_EQ(ReadStep(ms->raw_session()), 4);
  ASSERT_TRUE(ms->Close().ok());
  EXPECT_EQ(IndexFiles(dir.path()), (std::vector<std::string>{"model.ckpt-0", "model.ckpt-2", "model.ckpt-4"}));
}

TEST_F(MonitoredSessionTest, OtherErrorsPropagateWithoutRecovery) {
  for (const Status& error : {errors::InvalidArgument("bad input 3"), errors::Unavailable("try later")}) {
    auto creator = std::make_unique<FlakyCreator>(std::make_shared<Scaffold>(CounterMetaGraph()), "", 1, error);
    std::unique_ptr<MonitoredSession> ms;
    // Not recoverable (SingularMonitoredSession): even Unavailable propagates.
    ASSERT_TRUE(MonitoredSession::Create(std::move(creator), {}, &ms, /*recoverable=*/false).ok());
    Status s = ms->Run({}, {}, {"train"}, nullptr);
    EXPECT_EQ(s.code(), error.code());
    EXPECT_EQ(ms->sessions_created(), 1);
  }
  // Recoverable, InvalidArgument still propagates.
  auto creator = std::make_unique<FlakyCreator>(std::make_shared<Scaffold>(CounterMetaGraph()), "", 1,
                                                errors::InvalidArgument("bad input 3"));
  std::unique_ptr<MonitoredSession> ms;
  ASSERT_TRUE(MonitoredSession::Create(std::move(creator), {}, &ms).ok());
  Status s = ms->Run({}, {}, {"train"}, nullptr);
  EXPECT_EQ(s.code(), Code::kInvalidArgument);
  EXPECT_NE(s.message().find("bad input 3"), std::string::npos);
  EXPECT_EQ(ms->sessions_created(), 1);
}

// ------------------------------------------------------------- hooks

TEST_F(MonitoredSessionTest, CheckpointSaverHookCadenceAndListeners) {
  ScopedTempDir dir;
  struct Listener : CheckpointSaverListener {
    std::vector<std::string> calls;
    void Begin() override { calls.push_back("begin"); }
    void BeforeSave(Session*, int64_t step) override { calls.push_back("before " + std::to_string(step)); }
    bool AfterSave(Session*, int64_t step) override {
      calls.push_back("after " + std::to_string(step));
      return false;
    }
    void End(Session*, int64_t step) override { calls.push_back("end " + std::to_string(step)); }
  };
  auto listener = std::make_shared<Listener>();
  std::vector<std::string> lines;
  CheckpointSaverHook::Options ckpt;
  ckpt.checkpoint_dir = dir.Join("train");  // created by the hook
  ckpt.save_steps = 3;
  ckpt.listeners = {listener};
  ckpt.log = [&](const std::string& l) { lines.push_back(l); };
  std::unique_ptr<MonitoredSession> ms;
  Status s = NewMonitored(std::make_shared<Scaffold>(CounterMetaGraph()),
                          {std::make_shared<CheckpointSaverHook>(ckpt),
                           std::make_shared<StopAtStepHook>(std::nullopt, 7)},
                          &ms);
  ASSERT_TRUE(s.ok()) << s;
  int runs = 0;
  while (!ms->ShouldStop()) {
    ASSERT_TRUE(ms->Run({}, {}, {"train"}, nullptr).ok());
    ++runs;
  }
  EXPECT_EQ(runs, 7);
  ASSERT_TRUE(ms->Close().ok());
  // Step 0 at creation, every 3 steps, and the last step at end.
  EXPECT_EQ(IndexFiles(dir.Join("train")),
            (std::vector<std::string>{"model.ckpt-0", "model.ckpt-3", "model.ckpt-6", "model.ckpt-7"}));
  EXPECT_TRUE(fs::exists(dir.Join("train/graph.pbtxt")));
  EXPECT_TRUE(fs::exists(dir.Join("train/model.ckpt-7.meta")));
  EXPECT_EQ(LatestCheckpoint(dir.Join("train")), dir.Join("train/model.ckpt-7"));
  // The state file names them relative to the directory (TF's Scaffold saver).
  proto::CheckpointState state;
  ASSERT_TRUE(ReadTextCheckpointState(dir.Join("train/checkpoint"), &state));
  EXPECT_EQ(state.model_checkpoint_path(), "model.ckpt-7");
  EXPECT_EQ(listener->calls, (std::vector<std::string>{"begin", "before 0", "after 0", "before 3", "after 3", "before 6",
                                                       "after 6", "before 7", "after 7", "end 7"}));
  ASSERT_EQ(lines.size(), 4u);
  EXPECT_EQ(lines[1], "Saving checkpoints for 3 into " + dir.Join("train/model.ckpt") + "-3.");
}

TEST_F(MonitoredSessionTest, CheckpointListenerCanStopAndEndDoesNotSaveTwice) {
  ScopedTempDir dir;
  struct StopAt4 : CheckpointSaverListener {
    bool AfterSave(Session*, int64_t step) override { return step == 4; }
  };
  CheckpointSaverHook::Options ckpt;
  ckpt.checkpoint_dir = dir.path();
  ckpt.save_steps = 2;
  ckpt.listeners = {std::make_shared<StopAt4>()};
  ckpt.log = [](const std::string&) {};
  std::unique_ptr<MonitoredSession> ms;
  ASSERT_TRUE(NewMonitored(std::make_shared<Scaffold>(CounterMetaGraph()), {std::make_shared<CheckpointSaverHook>(ckpt)}, &ms).ok());
  int runs = 0;
  while (!ms->ShouldStop() && runs < 100) {
    ASSERT_TRUE(ms->Run({}, {}, {"train"}, nullptr).ok());
    ++runs;
  }
  EXPECT_EQ(runs, 4);
  ASSERT_TRUE(ms->Close().ok());
  EXPECT_EQ(IndexFiles(dir.path()), (std::vector<std::string>{"model.ckpt-0", "model.ckpt-2", "model.ckpt-4"}));
}

TEST_F(MonitoredSessionTest, CheckpointSaverHookEverySecondsWithAFakeClock) {
  ScopedTempDir dir;
  double now = 0;
  CheckpointSaverHook::Options ckpt;
  ckpt.checkpoint_dir = dir.path();
  ckpt.save_secs = 10;
  ckpt.clock = [&] { return now; };
  ckpt.log = [](const std::string&) {};
  std::unique_ptr<MonitoredSession> ms;
  ASSERT_TRUE(NewMonitored(std::make_shared<Scaffold>(CounterMetaGraph()), {std::make_shared<CheckpointSaverHook>(ckpt)}, &ms).ok());
  // 4 s per step: saves when 10 s have passed since the last save, at steps 3 and 6.
  for (int i = 0; i < 7; ++i) {
    now += 4;
    ASSERT_TRUE(ms->Run({}, {}, {"train"}, nullptr).ok());
  }
  ASSERT_TRUE(ms->Close().ok());
  EXPECT_EQ(IndexFiles(dir.path()),
            (std::vector<std::string>{"model.ckpt-0", "model.ckpt-3", "model.ckpt-6", "model.ckpt-7"}));
}

TEST_F(MonitoredSessionTest, HooksNeedAGlobalStepAndValidSettings) {
  proto::MetaGraphDef no_step;
  *no_step.mutable_graph_def() = testing::ParseGraph(kCounterGraph);
  std::unique_ptr<MonitoredSession> ms;
  Status s = NewMonitored(std::make_shared<Scaffold>(no_step), {std::make_shared<StopAtStepHook>(3, std::nullopt)}, &ms);
  EXPECT_EQ(s.code(), Code::kFailedPrecondition);
  EXPECT_NE(s.message().find("Global step should be created to use StopAtStepHook."), std::string::npos) << s;
  s = NewMonitored(std::make_shared<Scaffold>(CounterMetaGraph()), {std::make_shared<StopAtStepHook>(3, 4)}, &ms);
  EXPECT_NE(s.message().find("Only one of num_steps or last_step can be specified."), std::string::npos) << s;
  s = NewMonitored(std::make_shared<Scaffold>(CounterMetaGraph()),
                   {std::make_shared<StopAtStepHook>(std::nullopt, std::nullopt)}, &ms);
  EXPECT_NE(s.message().find("One of num_steps or last_step must be specified."), std::string::npos) << s;
  CheckpointSaverHook::Options both;
  both.checkpoint_dir = "/tmp";
  both.save_steps = 1;
  both.save_secs = 1;
  s = NewMonitored(std::make_shared<Scaffold>(CounterMetaGraph()), {std::make_shared<CheckpointSaverHook>(both)}, &ms);
  EXPECT_EQ(s.code(), Code::kInvalidArgument);
  LoggingTensorHook::Options none;
  none.tensors = {{"v", "v:0"}};
  s = NewMonitored(std::make_shared<Scaffold>(CounterMetaGraph()), {std::make_shared<LoggingTensorHook>(none)}, &ms);
  EXPECT_NE(s.message().find("either at_end and/or exactly one of every_n_iter and every_n_secs must be provided."),
            std::string::npos)
      << s;
}

TEST_F(MonitoredSessionTest, StopAtStepHookCountsFromTheRestoredStep) {
  ScopedTempDir dir;
  // First run: 5 steps, saved at the end.
  CheckpointSaverHook::Options ckpt;
  ckpt.checkpoint_dir = dir.path();
  ckpt.save_steps = 100;
  ckpt.log = [](const std::string&) {};
  for (int round = 1; round <= 2; ++round) {
    std::unique_ptr<MonitoredSession> ms;
    ASSERT_TRUE(NewMonitored(std::make_shared<Scaffold>(CounterMetaGraph()),
                             {std::make_shared<StopAtStepHook>(5, std::nullopt), std::make_shared<CheckpointSaverHook>(ckpt)},
                             &ms, dir.path())
                    .ok());
    int runs = 0;
    while (!ms->ShouldStop()) {
      ASSERT_TRUE(ms->Run({}, {}, {"train"}, nullptr).ok());
      ++runs;
    }
    EXPECT_EQ(runs, 5);
    EXPECT_EQ(ReadStep(ms->raw_session()), 5 * round);
    ASSERT_TRUE(ms->Close().ok());
  }
  EXPECT_EQ(LatestCheckpoint(dir.path()), dir.Join("model.ckpt-10"));
}

TEST_F(MonitoredSessionTest, NanTensorHookFailsOrStops) {
  std::vector<std::string> lines;
  auto log = [&](const std::string& l) { lines.push_back(l); };
  // loss = sqrt(2 - step): 1, 0, then NaN at step 3.
  std::unique_ptr<MonitoredSession> ms;
  ASSERT_TRUE(NewMonitored(std::make_shared<Scaffold>(CounterMetaGraph()),
                           {std::make_shared<NanTensorHook>("loss:0", true, log)}, &ms)
                  .ok());
  ASSERT_TRUE(ms->Run({}, {}, {"train"}, nullptr).ok());
  ASSERT_TRUE(ms->Run({}, {}, {"train"}, nullptr).ok());
  EXPECT_TRUE(lines.empty());
  Status s = ms->Run({}, {}, {"train"}, nullptr);
  EXPECT_EQ(s.code(), Code::kInvalidArgument);
  EXPECT_NE(s.message().find("NaN loss during training."), std::string::npos) << s;
  EXPECT_EQ(lines, std::vector<std::string>{"Model diverged with loss = NaN."});

  ASSERT_TRUE(NewMonitored(std::make_shared<Scaffold>(CounterMetaGraph()),
                           {std::make_shared<NanTensorHook>("loss:0", false, log)}, &ms)
                  .ok());
  int runs = 0;
  while (!ms->ShouldStop() && runs < 10) {
    ASSERT_TRUE(ms->Run({}, {}, {"train"}, nullptr).ok());
    ++runs;
  }
  EXPECT_EQ(runs, 3);
}

TEST_F(MonitoredSessionTest, LoggingTensorHookEveryNIterAndAtEnd) {
  std::vector<std::string> lines;
  double now = 0;
  LoggingTensorHook::Options opts;
  opts.tensors = {{"v", "v:0"}, {"step", "global_step:0"}};
  opts.every_n_iter = 2;
  opts.at_end = true;
  opts.clock = [&] { return now; };
  opts.log = [&](const std::string& l) { lines.push_back(l); };
  std::unique_ptr<MonitoredSession> ms;
  // Logging a fetch of v while train runs races with the update: fetch
  // in runs without a target.
  ASSERT_TRUE(NewMonitored(std::make_shared<Scaffold>(CounterMetaGraph()), {std::make_shared<LoggingTensorHook>(opts)}, &ms).ok());
  for (int i = 0; i < 5; ++i) {
    now += 0.25;
    ASSERT_TRUE(ms->Run({}, {}, {}, nullptr).ok());
    ASSERT_TRUE(ms->Run({}, {}, {"train"}, nullptr).ok());  // the hook counts this one too
  }
  ASSERT_TRUE(ms->Close().ok());
  // Iterations 0, 2, 4, 6, 8 are the first runs of each pair (before train):
  // v = 2, 1, 0, -1, -2; then at end v = -3.
  EXPECT_EQ(lines, (std::vector<std::string>{"v = 2, step = 0", "v = 1, step = 1 (0.250 sec)",
                                             "v = 0, step = 2 (0.250 sec)", "v = -1, step = 3 (0.250 sec)",
                                             "v = -2, step = 4 (0.250 sec)", "v = -3, step = 5"}));

  // A formatter replaces the line.
  lines.clear();
  opts.every_n_iter = 0;
  opts.formatter = [](const std::vector<std::pair<std::string, Tensor>>& values) {
    return "custom " + values[0].first + "=" + values[0].second.SummarizeValue(3);
  };
  ASSERT_TRUE(NewMonitored(std::make_shared<Scaffold>(CounterMetaGraph()), {std::make_shared<LoggingTensorHook>(opts)}, &ms).ok());
  ASSERT_TRUE(ms->Run({}, {}, {"train"}, nullptr).ok());
  EXPECT_TRUE(lines.empty());  // at_end only
  ASSERT_TRUE(ms->Close().ok());
  EXPECT_EQ(lines, std::vector<std::string>{"custom v=1"});
}

TEST_F(MonitoredSessionTest, LoggingTensorHookEveryNSeconds) {
  std::vector<std::string> lines;
  double now = 0;
  LoggingTensorHook::Options opts;
  opts.tensors = {{"step", "global_step/read:0"}};
  opts.every_n_secs = 1;
  opts.clock = [&] { return now; };
  opts.log = [&](const std::string& l) { lines.push_back(l); };
  std::unique_ptr<MonitoredSession> ms;
  ASSERT_TRUE(NewMonitored(std::make_shared<Scaffold>(CounterMetaGraph()), {std::make_shared<LoggingTensorHook>(opts)}, &ms).ok());
  // 0.4 s per pair of runs: logged at t = 0.4 (first), 1.6, 2.8.
  for (int i = 0; i < 7; ++i) {
    now += 0.4;
    ASSERT_TRUE(ms->Run({}, {}, {}, nullptr).ok());
    ASSERT_TRUE(ms->Run({}, {}, {"global_step/increment"}, nullptr).ok());
  }
  ASSERT_TRUE(ms->Close().ok());
  EXPECT_EQ(lines, (std::vector<std::string>{"step = 0", "step = 3 (1.200 sec)", "step = 6 (1.200 sec)"}));
}

TEST_F(MonitoredSessionTest, StepCounterHookReportsStepsPerSecond) {
  double now = 100;
  std::vector<std::string> lines;
  std::vector<std::tuple<std::string, double, int64_t>> scalars;
  StepCounterHook::Options opts;
  opts.every_n_steps = 2;
  opts.clock = [&] { return now; };
  opts.log = [&](const std::string& l) { lines.push_back(l); };
  opts.add_scalar = [&](const std::string& tag, double v, int64_t step) {
    scalars.emplace_back(tag, v, step);
    return Status::OK();
  };
  std::unique_ptr<MonitoredSession> ms;
  ASSERT_TRUE(NewMonitored(std::make_shared<Scaffold>(CounterMetaGraph()), {std::make_shared<StepCounterHook>(opts)}, &ms).ok());
  // Steps take 0.5 s: 2 steps per second.
  for (int i = 0; i < 5; ++i) {
    now += 0.5;
    ASSERT_TRUE(ms->Run({}, {"global_step/read:0"}, {}, nullptr).ok());  // reads the step without racing train
    ASSERT_TRUE(ms->Run({}, {}, {"train"}, nullptr).ok());
  }
  ASSERT_TRUE(ms->Close().ok());
  ASSERT_FALSE(lines.empty());
  for (const std::string& l : lines) EXPECT_EQ(l, "global_step/sec: 2") << l;
  ASSERT_EQ(scalars.size(), lines.size());
  EXPECT_EQ(std::get<0>(scalars[0]), "global_step/sec");
  EXPECT_DOUBLE_EQ(std::get<1>(scalars[0]), 2.0);
}

// The counter graph with a ScalarSummary of v after each update, in the
// `summaries` collection.
proto::MetaGraphDef CounterWithSummary() {
  proto::MetaGraphDef meta = CounterMetaGraph();
  proto::GraphDef extra = testing::ParseGraph(R"pb(
    node { name: "v_summary/tags" op: "Const"
           attr { key: "dtype" value { type: DT_STRING } }
           attr { key: "value" value { tensor { dtype: DT_STRING tensor_shape { } string_val: "v" } } } }
    node { name: "v_summary" op: "ScalarSummary" input: "v_summary/tags" input: "update"
           attr { key: "T" value { type: DT_FLOAT } } }
  )pb");
  for (const auto& n : extra.node()) *meta.mutable_graph_def()->add_node() = n;
  (*meta.mutable_collection_def())[kSummariesCollection].mutable_node_list()->add_value("v_summary:0");
  return meta;
}

std::vector<proto::Event> EventsIn(const std::string& dir) {
  std::vector<proto::Event> events;
  for (const auto& e : fs::directory_iterator(dir)) {
    if (e.path().filename().string().rfind("events.out.tfevents.", 0) != 0) continue;
    std::vector<proto::Event> file;
    Status s = ReadEventFile(e.path().string(), &file);
    EXPECT_TRUE(s.ok()) << s;
    events.insert(events.end(), file.begin(), file.end());
  }
  return events;
}

TEST_F(MonitoredSessionTest, SummariesStepRateAndCheckpointEventsInOneEventFile) {
  GRAPHRT_REQUIRE_OPS("ScalarSummary");
  ScopedTempDir dir;
  MonitoredTrainingSessionOptions opts;
  opts.checkpoint_dir = dir.path();
  opts.save_checkpoint_steps = 3;
  opts.save_summaries_steps = 2;
  opts.log_step_count_steps = 2;
  opts.hooks = {std::make_shared<StopAtStepHook>(std::nullopt, 5)};
  std::unique_ptr<MonitoredSession> ms;
  Status s = NewMonitoredTrainingSession(std::make_shared<Scaffold>(CounterWithSummary()), opts, &ms);
  ASSERT_TRUE(s.ok()) << s;
  int steps = 0;
  while (!ms->ShouldStop()) {
    ASSERT_TRUE(ms->Run({}, {}, {"train"}, nullptr).ok());
    ++steps;
  }
  ASSERT_TRUE(ms->Close().ok());
  EXPECT_EQ(steps, 5);
  std::vector<std::pair<int64_t, float>> v;  // (step, value) of tag v
  std::vector<int64_t> starts, checkpoints, rates;
  std::vector<std::string> checkpoint_paths;
  for (const proto::Event& e : EventsIn(dir.path())) {
    if (e.has_session_log() && e.session_log().status() == proto::SessionLog::START) starts.push_back(e.step());
    if (e.has_session_log() && e.session_log().status() == proto::SessionLog::CHECKPOINT) {
      checkpoints.push_back(e.step());
      checkpoint_paths.push_back(e.session_log().checkpoint_path());
    }
    if (e.has_summary())
      for (const auto& value : e.summary().value()) {
        if (value.tag() == "v") v.emplace_back(e.step(), value.simple_value());
        if (value.tag() == "global_step/sec") rates.push_back(e.step());
      }
  }
  // v after step k is 2 - k; summaries at the first step, then every 2.
  EXPECT_EQ(v, (std::vector<std::pair<int64_t, float>>{{1, 1.0f}, {3, -1.0f}, {5, -3.0f}}));
  EXPECT_EQ(starts, std::vector<int64_t>{1});
  EXPECT_EQ(checkpoints, (std::vector<int64_t>{0, 3, 5}));
  EXPECT_EQ(checkpoint_paths.back(), dir.Join("model.ckpt-5"));
  EXPECT_FALSE(rates.empty());  // the rate itself depends on the machine
}

TEST_F(MonitoredSessionTest, SummarySaverHookScalarTensorsAndErrors) {
  ScopedTempDir dir;
  SummarySaverHook::Options opts;
  opts.save_steps = 1;
  opts.output_dir = dir.path();
  opts.scalars = {{"value/v", "update:0"}, {"step", "global_step/read:0"}};
  auto hook = std::make_shared<SummarySaverHook>(opts);
  std::unique_ptr<MonitoredSession> ms;
  ASSERT_TRUE(NewMonitored(std::make_shared<Scaffold>(CounterMetaGraph()), {hook}, &ms).ok());
  for (int i = 0; i < 2; ++i) ASSERT_TRUE(ms->Run({}, {}, {"train"}, nullptr).ok());
  ASSERT_TRUE(ms->Close().ok());
  std::vector<std::pair<int64_t, float>> v;
  for (const proto::Event& e : EventsIn(dir.path()))
    for (const auto& value : e.summary().value())
      if (value.tag() == "value/v") v.emplace_back(e.step(), value.simple_value());
  EXPECT_EQ(v, (std::vector<std::pair<int64_t, float>>{{1, 1.0f}, {2, 0.0f}}));

  // A summary tensor that is not a string is refused, naming it.
  SummarySaverHook::Options bad;
  bad.save_steps = 1;
  bad.output_dir = dir.path();
  bad.summary_op = {"update:0"};
  ASSERT_TRUE(NewMonitored(std::make_shared<Scaffold>(CounterMetaGraph()), {std::make_shared<SummarySaverHook>(bad)}, &ms).ok());
  Status s = ms->Run({}, {}, {"train"}, nullptr);
  EXPECT_EQ(s.code(), Code::kInvalidArgument);
  EXPECT_NE(s.message().find("summary tensor update:0 is float"), std::string::npos) << s;
}

// ------------------------------------------- TensorFlow's regression model

// The regression model's train graph with a global step that each step
// increments (its `train` GradientDescent op does not).
proto::MetaGraphDef RegressionTrainGraph(const std::string& dir, std::string* increment) {
  proto::SavedModel sm;
  EXPECT_TRUE(ReadSavedModelFromDirectory(dir, &sm).ok());
  const proto::MetaGraphDef* meta = nullptr;
  EXPECT_TRUE(FindMetaGraphDefByTags(sm, {"train", "serve"}, &meta).ok());
  if (meta == nullptr) return {};
  proto::MetaGraphDef out = *meta;
  std::string gs;
  EXPECT_TRUE(GetOrCreateGlobalStep(&out, nullptr, &gs).ok());
  EXPECT_TRUE(AddGlobalStepIncrement(&out, nullptr, gs, increment).ok());
  return out;
}

TEST_F(MonitoredSessionTest, RegressionModelTrainsCheckpointsAndResumes) {
  GRAPHRT_TESTDATA(model, "rust/test_resources/regression-model");
  GRAPHRT_REQUIRE_MODEL_OPS(model, "IsVariableInitialized", "AssignAdd");
  ScopedTempDir dir;
  std::string increment;
  const proto::MetaGraphDef graph = RegressionTrainGraph(model, &increment);
  // The README's deterministic check: y = 0.1x + 0.3, 201 steps from the
  // random init bring w to 0.1 and b to 0.3.
  const std::vector<float> x = {-1, -0.5f, 0, 0.5f, 1};
  std::vector<float> y;
  for (float v : x) y.push_back(0.1f * v + 0.3f);
  const FeedList feeds = {{"x:0", MakeTensor<float>(GR_FLOAT, {5}, x)}, {"y:0", MakeTensor<float>(GR_FLOAT, {5}, y)}};
  MonitoredTrainingSessionOptions opts;
  opts.checkpoint_dir = dir.path();
  opts.save_checkpoint_steps = 50;
  opts.log_step_count_steps = 0;
  opts.hooks = {std::make_shared<StopAtStepHook>(std::nullopt, 201),
                std::make_shared<NanTensorHook>("Mean:0")};
  std::unique_ptr<MonitoredSession> ms;
  Status s = NewMonitoredTrainingSession(std::make_shared<Scaffold>(graph), opts, &ms);
  ASSERT_TRUE(s.ok()) << s;
  int steps = 0;
  while (!ms->ShouldStop()) {
    s = ms->Run(feeds, {}, {"train", increment}, nullptr);
    ASSERT_TRUE(s.ok()) << s;
    ++steps;
  }
  EXPECT_EQ(steps, 201);
  EXPECT_NEAR(ReadFloat(ms->raw_session(), "w:0"), 0.1f, 1e-5);
  EXPECT_NEAR(ReadFloat(ms->raw_session(), "b:0"), 0.3f, 1e-5);
  ASSERT_TRUE(ms->Close().ok());
  // Saved at 0, 50, 100, 150, 200 and at the end 201; max_to_keep 5
  // dropped step 0.
  EXPECT_EQ(IndexFiles(dir.path()), (std::vector<std::string>{"model.ckpt-100", "model.ckpt-150", "model.ckpt-200",
                                                              "model.ckpt-201", "model.ckpt-50"}));

  // A new run on the directory resumes at 201 with the trained weights.
  std::vector<std::string> lines;
  LoggingTensorHook::Options logging;
  logging.tensors = {{"step", "global_step:0"}};
  logging.at_end = true;
  logging.log = [&](const std::string& l) { lines.push_back(l); };
  opts.hooks = {std::make_shared<StopAtStepHook>(3, std::nullopt), std::make_shared<LoggingTensorHook>(logging)};
  s = NewMonitoredTrainingSession(std::make_shared<Scaffold>(graph), opts, &ms);
  ASSERT_TRUE(s.ok()) << s;
  EXPECT_EQ(ReadStep(ms->raw_session()), 201);
  EXPECT_NEAR(ReadFloat(ms->raw_session(), "w:0"), 0.1f, 1e-5);
  while (!ms->ShouldStop()) ASSERT_TRUE(ms->Run(feeds, {}, {"train", increment}, nullptr).ok());
  EXPECT_EQ(ReadStep(ms->raw_session()), 204);
  ASSERT_TRUE(ms->Close().ok());
  EXPECT_EQ(lines, std::vector<std::string>{"step = 204"});
  EXPECT_EQ(LatestCheckpoint(dir.path()), dir.Join("model.ckpt-204"));
}

// init_fn after init_op: the SavedModel's own weights, then the README's
// single GradientDescent(0.5) step.
TEST_F(MonitoredSessionTest, RegressionModelInitFnRestoresTheSavedModel) {
  GRAPHRT_TESTDATA(model, "rust/test_resources/regression-model");
  GRAPHRT_REQUIRE_MODEL_OPS(model, "IsVariableInitialized", "AssignAdd");
  std::string increment;
  auto scaffold = std::make_shared<Scaffold>(RegressionTrainGraph(model, &increment));
  std::shared_ptr<Saver> saved_model_saver;
  {
    std::unique_ptr<Saver> s;
    ASSERT_TRUE(Saver::FromSaverDef(scaffold->meta_graph().saver_def(), nullptr, SaverOptions(), &s).ok());
    saved_model_saver = std::move(s);
  }
  scaffold->init_fn = [&](Session* session) { return saved_model_saver->Restore(session, model + "/variables/variables"); };
  std::unique_ptr<MonitoredSession> ms;
  ASSERT_TRUE(NewMonitored(scaffold, {}, &ms).ok());
  EXPECT_NEAR(ReadFloat(ms->raw_session(), "w:0"), -0.85786223f, 1e-6);
  EXPECT_EQ(ReadStep(ms->raw_session()), 0);  // init_op initialised the new global step
  const FeedList feeds = {{"x:0", MakeTensor<float>(GR_FLOAT, {3}, {1, 2, 3})},
                          {"y:0", MakeTensor<float>(GR_FLOAT, {3}, {0.4f, 0.5f, 0.6f})}};
  std::vector<Tensor> out;
  ASSERT_TRUE(ms->Run(feeds, {"Mean:0"}, {}, &out).ok());
  EXPECT_NEAR(out[0].scalar<float>(), 5.5211017f, 1e-5);
  ASSERT_TRUE(ms->Run(feeds, {}, {"train", increment}, nullptr).ok());
  EXPECT_NEAR(ReadFloat(ms->raw_session(), "w:0"), 4.2121615f, 1e-5);
  EXPECT_NEAR(ReadFloat(ms->raw_session(), "b:0"), 2.2157245f, 1e-5);
  EXPECT_EQ(ReadStep(ms->raw_session()), 1);
}

// ---------------------------------------------------------- Coordinator

TEST(CoordinatorTest, ThreadsStopOnRequestAndJoinReportsTheFirstError) {
  Coordinator coord;
  std::atomic<int> stopped{0};
  for (int i = 0; i < 4; ++i) {
    coord.Start("worker" + std::to_string(i), [&stopped, i](Coordinator* c) {
      for (int n = 0; !c->ShouldStop(); ++n) {
        if (i == 2 && n == 50) throw std::runtime_error("worker 2 failed at 50");
        std::this_thread::sleep_for(std::chrono::microseconds(100));
      }
      ++stopped;
    });
  }
  Status s = coord.Join(std::chrono::seconds(10));
  EXPECT_EQ(s.code(), Code::kInternal);
  EXPECT_NE(s.message().find("thread worker2: worker 2 failed at 50"), std::string::npos) << s;
  EXPECT_EQ(stopped.load(), 3);  // the other three saw the stop
  EXPECT_TRUE(coord.ShouldStop());
  // A later error is not recorded over the first.
  coord.RequestStop(errors::Internal("second"));
  EXPECT_NE(coord.RequestedError().message().find("worker 2 failed"), std::string::npos);
  coord.ClearStop();
  EXPECT_FALSE(coord.ShouldStop());
  EXPECT_TRUE(coord.RequestedError().ok());
}

TEST(CoordinatorTest, CleanStopAndWaitForStop) {
  Coordinator coord;
  EXPECT_FALSE(coord.WaitForStop(std::chrono::milliseconds(10)));
  coord.Start("reader", [](Coordinator* c) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    c->RequestStop(errors::OutOfRange("End of sequence"));  // the normal end of input
  });
  EXPECT_TRUE(coord.WaitForStop(std::chrono::seconds(10)));
  EXPECT_TRUE(coord.Join().ok());
  // All threads ending without a stop request also ends Join.
  Coordinator quiet;
  std::atomic<int> done{0};
  for (int i = 0; i < 3; ++i) quiet.Start("t", [&](Coordinator*) { ++done; });
  EXPECT_TRUE(quiet.Join(std::chrono::seconds(10)).ok());
  EXPECT_EQ(done.load(), 3);
  EXPECT_FALSE(quiet.ShouldStop());
}

TEST(CoordinatorTest, JoinNamesThreadsStillRunningAfterTheGracePeriod) {
  Coordinator coord;
  std::atomic<bool> release{false};
  coord.Start("stubborn", [&](Coordinator*) {
    while (!release) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  });
  coord.Start("polite", [](Coordinator* c) { c->WaitForStop(std::chrono::seconds(30)); });
  coord.RequestStop();
  Status s = coord.Join(std::chrono::milliseconds(50));
  EXPECT_EQ(s.code(), Code::kInternal);
  EXPECT_NE(s.message().find("Coordinator stopped with threads still running: stubborn"), std::string::npos) << s;
  EXPECT_EQ(s.message().find("polite"), std::string::npos) << s;
  EXPECT_TRUE(coord.Join(std::chrono::milliseconds(10), /*ignore_live_threads=*/true).ok());
  release = true;
  EXPECT_TRUE(coord.Join(std::chrono::seconds(10)).ok());
}

TEST(CoordinatorTest, StopOnExceptionRecordsAnError) {
  Coordinator coord;
  coord.Start("guarded", [](Coordinator* c) {
    try {
      StopOnException guard(c, "loading batch");
      throw 42;  // not a std::exception: only the guard sees it
    } catch (int) {
    }
  });
  EXPECT_TRUE(coord.WaitForStop(std::chrono::seconds(10)));
  Status s = coord.Join();
  EXPECT_EQ(s.code(), Code::kInternal);
  EXPECT_NE(s.message().find("loading batch"), std::string::npos) << s;
  // A scope left normally requests nothing.
  Coordinator calm;
  { StopOnException guard(&calm, "nothing"); }
  EXPECT_FALSE(calm.ShouldStop());
}

}  // namespace
}  // namespace graphrt
