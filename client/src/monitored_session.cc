// Scaffold, ChiefSessionCreator and MonitoredSession (tf_behaviours.md §15:
// Scaffold.finalize, SessionManager.prepare_session, the run protocol and
// _RecoverableSession).
#include "graphrt/client/monitored_session.h"

#include <iostream>
#include <map>
#include <set>

#include "file_util.h"
#include "graphrt/client/meta_graph.h"

namespace graphrt {

namespace {

bool IsVariableOp(const std::string& op) { return op == "VariableV2" || op == "Variable" || op == "VarHandleOp"; }

// "x" -> "x:0": one spelling per tensor, to compare feeds.
std::string CanonicalTensorName(const std::string& name) {
  return name.find(':') == std::string::npos ? name + ":0" : name;
}

std::string Join(const std::vector<std::string>& parts, const char* sep = ", ") {
  std::string out;
  for (const std::string& p : parts) out += (out.empty() ? "" : sep) + p;
  return out;
}

// A name not in `taken` (the graph's node names): base, base_1, base_2, ...;
// it is added to `taken`.
std::string UniqueNodeName(std::set<std::string>* taken, const std::string& base) {
  std::string name = base;
  for (int i = 1; taken->count(name); ++i) name = base + "_" + std::to_string(i);
  taken->insert(name);
  return name;
}

std::set<std::string> NodeNames(const proto::GraphDef& graph) {
  std::set<std::string> names;
  for (const proto::NodeDef& n : graph.node()) names.insert(n.name());
  return names;
}

// The single item of collection `name` (a node_list): "" when absent or empty.
Status SingleCollectionItem(const proto::MetaGraphDef& meta, const std::string& name, std::string* item) {
  item->clear();
  auto it = meta.collection_def().find(name);
  if (it == meta.collection_def().end()) return Status::OK();
  const proto::CollectionDef& c = it->second;
  if (c.kind_case() != proto::CollectionDef::kNodeList)
    return errors::InvalidArgument("collection ", name, " is not a node_list");
  if (c.node_list().value_size() > 1)
    return errors::InvalidArgument("More than one item in collection ", name, ": ",
                                   Join({c.node_list().value().begin(), c.node_list().value().end()}));
  if (c.node_list().value_size() == 1) *item = c.node_list().value(0);
  return Status::OK();
}

std::vector<std::string> NodeListItems(const proto::MetaGraphDef& meta, const std::string& name) {
  auto it = meta.collection_def().find(name);
  if (it == meta.collection_def().end() || it->second.kind_case() != proto::CollectionDef::kNodeList) return {};
  return {it->second.node_list().value().begin(), it->second.node_list().value().end()};
}

struct VariableInfo {
  std::string node;         // variable node name
  std::string initializer;  // "" when unknown
};

// The variables of a VariableDef collection; `present` is false when the
// meta graph has no such collection.
Status VariablesOfCollection(const proto::MetaGraphDef& meta, const std::string& name, std::vector<VariableInfo>* out,
                             bool* present) {
  out->clear();
  auto it = meta.collection_def().find(name);
  *present = it != meta.collection_def().end();
  if (!*present) return Status::OK();
  if (it->second.kind_case() != proto::CollectionDef::kBytesList)
    return errors::InvalidArgument("collection ", name, " is not a bytes_list of VariableDefs");
  for (const std::string& bytes : it->second.bytes_list().value()) {
    proto::VariableDef def;
    if (!def.ParseFromString(bytes))
      return errors::DataLoss("collection ", name, " holds a VariableDef that does not parse");
    out->push_back({TensorNameToNodeName(def.variable_name()), TensorNameToNodeName(def.initializer_name())});
  }
  return Status::OK();
}

// Every variable node of the graph, its initializer found by TF's naming
// (<var>/Assign, or <var>/Assign for AssignVariableOp) when the graph has
// no collections to say.
std::vector<VariableInfo> VariablesInGraph(const proto::GraphDef& graph) {
  const std::set<std::string> names = NodeNames(graph);
  std::vector<VariableInfo> out;
  for (const proto::NodeDef& n : graph.node()) {
    if (!IsVariableOp(n.op())) continue;
    const std::string init = n.name() + "/Assign";
    out.push_back({n.name(), names.count(init) ? init : ""});
  }
  return out;
}

Status GlobalVariables(const proto::MetaGraphDef& meta, std::vector<VariableInfo>* out) {
  bool present;
  GR_RETURN_IF_ERROR(VariablesOfCollection(meta, kGlobalVariablesCollection, out, &present));
  if (!present) *out = VariablesInGraph(meta.graph_def());
  return Status::OK();
}

proto::NodeDef* AddNode(proto::GraphDef* g, const std::string& name, const std::string& op) {
  proto::NodeDef* n = g->add_node();
  n->set_name(name);
  n->set_op(op);
  return n;
}

// A Const scalar of int32 or int64 `dtype`.
proto::NodeDef* AddIntScalarConst(proto::GraphDef* g, const std::string& name, proto::DataType dtype, int64_t value) {
  proto::NodeDef* n = AddNode(g, name, "Const");
  (*n->mutable_attr())["dtype"].set_type(dtype);
  proto::TensorProto* t = (*n->mutable_attr())["value"].mutable_tensor();
  t->set_dtype(dtype);
  t->mutable_tensor_shape();
  if (dtype == proto::DT_INT64) {
    t->add_int64_val(value);
  } else {
    t->add_int_val(static_cast<int32_t>(value));
  }
  return n;
}

// A NoOp `name` with a control input from each of `deps`.
std::string AddGroup(proto::GraphDef* g, std::set<std::string>* taken, const std::string& base,
                     const std::vector<std::string>& deps) {
  proto::NodeDef* n = AddNode(g, UniqueNodeName(taken, base), "NoOp");
  for (const std::string& d : deps) {
    std::string input = "^";  // (not "^" + name: GCC 12 warns of a false -Wrestrict there)
    input += TensorNameToNodeName(d);
    n->add_input(input);
  }
  return n->name();
}

// Saver::Create extends a session with the saver's nodes; the Scaffold
// builds its saver before any session exists, into the graph every session
// will be created on. This stands in for that session: it only accepts
// the new nodes (Saver::Create adds them to the graph itself).
class GraphOnlySession : public Session {
 public:
  Status Create(const proto::GraphDef&) override { return Status::OK(); }
  Status Extend(const proto::GraphDef&) override { return Status::OK(); }
  Status Run(const std::vector<std::pair<std::string, Tensor>>&, const std::vector<std::string>&,
             const std::vector<std::string>&, std::vector<Tensor>*) override {
    return errors::Internal("the Scaffold's graph-building session cannot run");
  }
  Status Run(const proto::RunOptions&, const std::vector<std::pair<std::string, Tensor>>&,
             const std::vector<std::string>&, const std::vector<std::string>&, std::vector<Tensor>*,
             proto::RunMetadata*) override {
    return errors::Internal("the Scaffold's graph-building session cannot run");
  }
  Status Close() override { return Status::OK(); }
};

bool IsRecoverable(const Status& s) { return s.code() == Code::kAborted || s.code() == Code::kUnavailable; }

// TF retries forever; a bound keeps a session that aborts every time from
// spinning a program for ever.
constexpr int kMaxConsecutiveRecoveries = 100;

}  // namespace

// ------------------------------------------------------------ graph helpers

const proto::NodeDef* FindGraphNode(const proto::GraphDef& graph, const std::string& name) {
  for (const proto::NodeDef& n : graph.node())
    if (n.name() == name) return &n;
  return nullptr;
}

Status GetGlobalStep(const proto::MetaGraphDef& meta_graph, std::string* node_name) {
  node_name->clear();
  std::vector<VariableInfo> vars;
  bool present;
  GR_RETURN_IF_ERROR(VariablesOfCollection(meta_graph, kGlobalStepCollection, &vars, &present));
  if (vars.size() > 1) return errors::InvalidArgument("More than one item in collection ", kGlobalStepCollection);
  if (vars.size() == 1) {
    if (FindGraphNode(meta_graph.graph_def(), vars[0].node) == nullptr)
      return errors::NotFound("the global_step collection names '", vars[0].node, "', which is not in the graph");
    *node_name = vars[0].node;
    return Status::OK();
  }
  const proto::NodeDef* n = FindGraphNode(meta_graph.graph_def(), "global_step");
  if (n != nullptr && IsVariableOp(n->op())) *node_name = n->name();
  return Status::OK();
}

Status GetOrCreateGlobalStep(proto::MetaGraphDef* meta_graph, Session* session, std::string* node_name) {
  GR_RETURN_IF_ERROR(GetGlobalStep(*meta_graph, node_name));
  if (!node_name->empty()) return Status::OK();
  const proto::GraphDef& graph = meta_graph->graph_def();
  if (FindGraphNode(graph, "global_step") != nullptr)
    return errors::AlreadyExists("the graph has a node 'global_step' that is not a variable (",
                                 FindGraphNode(graph, "global_step")->op(), "); cannot create the global step");
  // The `variables` collection becomes authoritative once it exists: when
  // the graph has none, it first lists the variables already there.
  bool present;
  std::vector<VariableInfo> existing;
  GR_RETURN_IF_ERROR(VariablesOfCollection(*meta_graph, kGlobalVariablesCollection, &existing, &present));
  auto& collections = *meta_graph->mutable_collection_def();
  if (!present) {
    auto* list = collections[kGlobalVariablesCollection].mutable_bytes_list();
    for (const VariableInfo& v : VariablesInGraph(graph)) {
      proto::VariableDef def;
      def.set_variable_name(v.node + ":0");
      def.set_initializer_name(v.initializer);
      def.set_trainable(true);
      list->add_value(def.SerializeAsString());
    }
  }
  proto::GraphDef added;
  proto::NodeDef* var = AddNode(&added, "global_step", "VariableV2");
  (*var->mutable_attr())["dtype"].set_type(proto::DT_INT64);
  (*var->mutable_attr())["shape"].mutable_shape();
  (*var->mutable_attr())["container"].set_s("");
  (*var->mutable_attr())["shared_name"].set_s("");
  proto::NodeDef* zeros = AddIntScalarConst(&added, "global_step/Initializer/zeros", proto::DT_INT64, 0);
  (*zeros->mutable_attr())["_class"].mutable_list()->add_s("loc:@global_step");
  proto::NodeDef* assign = AddNode(&added, "global_step/Assign", "Assign");
  assign->add_input("global_step");
  assign->add_input(zeros->name());
  (*assign->mutable_attr())["T"].set_type(proto::DT_INT64);
  (*assign->mutable_attr())["validate_shape"].set_b(true);
  (*assign->mutable_attr())["use_locking"].set_b(true);
  (*assign->mutable_attr())["_class"].mutable_list()->add_s("loc:@global_step");
  proto::NodeDef* read = AddNode(&added, "global_step/read", "Identity");
  read->add_input("global_step");
  (*read->mutable_attr())["T"].set_type(proto::DT_INT64);
  (*read->mutable_attr())["_class"].mutable_list()->add_s("loc:@global_step");
  if (session != nullptr)
    GR_RETURN_IF_ERROR(session->Extend(added).WithContext("adding the global step to the session"));
  for (const proto::NodeDef& n : added.node()) *meta_graph->mutable_graph_def()->add_node() = n;
  proto::VariableDef def;
  def.set_variable_name("global_step:0");
  def.set_initializer_name("global_step/Assign");
  def.set_snapshot_name("global_step/read:0");
  def.set_initial_value_name("global_step/Initializer/zeros:0");
  def.set_trainable(false);
  collections[kGlobalVariablesCollection].mutable_bytes_list()->add_value(def.SerializeAsString());
  collections[kGlobalStepCollection].mutable_bytes_list()->add_value(def.SerializeAsString());
  *node_name = "global_step";
  return Status::OK();
}

Status AddGlobalStepIncrement(proto::MetaGraphDef* meta_graph, Session* session, const std::string& global_step,
                              std::string* node_name) {
  const proto::NodeDef* var = FindGraphNode(meta_graph->graph_def(), global_step);
  if (var == nullptr || !IsVariableOp(var->op()) || var->op() == "VarHandleOp")
    return errors::InvalidArgument("AddGlobalStepIncrement: '", global_step, "' is not a ref variable of the graph");
  auto dtype = var->attr().find("dtype");
  const int type = dtype == var->attr().end() ? proto::DT_INVALID : dtype->second.type();
  if (type != proto::DT_INT64 && type != proto::DT_INT32)
    return errors::InvalidArgument("the global step '", global_step, "' must be int32 or int64");
  std::set<std::string> taken = NodeNames(meta_graph->graph_def());
  proto::GraphDef added;
  proto::NodeDef* one = AddIntScalarConst(&added, UniqueNodeName(&taken, global_step + "/increment/value"),
                                         static_cast<proto::DataType>(type), 1);
  proto::NodeDef* add = AddNode(&added, UniqueNodeName(&taken, global_step + "/increment"), "AssignAdd");
  add->add_input(global_step);
  add->add_input(one->name());
  (*add->mutable_attr())["T"].set_type(static_cast<proto::DataType>(type));
  (*add->mutable_attr())["use_locking"].set_b(true);
  one->set_device(var->device());
  add->set_device(var->device());
  if (session != nullptr) GR_RETURN_IF_ERROR(session->Extend(added).WithContext("adding " + add->name()));
  *node_name = add->name();
  for (const proto::NodeDef& n : added.node()) *meta_graph->mutable_graph_def()->add_node() = n;
  return Status::OK();
}

Status ReadInt64Scalar(Session* session, const std::string& tensor, int64_t* value) {
  std::vector<Tensor> out;
  GR_RETURN_IF_ERROR(session->Run({}, {tensor}, {}, &out));
  if (out.size() != 1 || out[0].NumElements() != 1 || (out[0].dtype() != GR_INT64 && out[0].dtype() != GR_INT32))
    return errors::InvalidArgument("expected ", tensor, " to be an int32 or int64 scalar, got ",
                                   out.empty() ? std::string("nothing") : out[0].DebugString(3));
  *value = out[0].dtype() == GR_INT64 ? out[0].data<int64_t>()[0] : out[0].data<int32_t>()[0];
  return Status::OK();
}

// ---------------------------------------------------------------- Scaffold

Scaffold::Scaffold(proto::MetaGraphDef meta_graph) : meta_graph_(std::move(meta_graph)) {
  // As TF's Scaffold saver: the state file names checkpoints relative to
  // its directory, so a checkpoint directory can move.
  saver_options.save_relative_paths = true;
}

Status Scaffold::Finalize() {
  if (finalized_) return Status::OK();
  proto::GraphDef* graph = meta_graph_.mutable_graph_def();
  std::vector<VariableInfo> globals, locals;
  GR_RETURN_IF_ERROR(GlobalVariables(meta_graph_, &globals));
  bool present;
  GR_RETURN_IF_ERROR(VariablesOfCollection(meta_graph_, kLocalVariablesCollection, &locals, &present));
  // Node pointers stay valid while nodes are added (RepeatedPtrField).
  std::map<std::string, const proto::NodeDef*> by_name;
  for (const proto::NodeDef& n : graph->node()) by_name[n.name()] = &n;
  for (const auto* list : {&globals, &locals})
    for (const VariableInfo& v : *list)
      if (!by_name.count(v.node))
        return errors::NotFound("Scaffold: variable '", v.node, "' of the collections is not in the graph");

  std::set<std::string> taken = NodeNames(*graph);
  // An init op: the collection's single item, else a NoOp `base` grouping
  // the variables' initializers and `extra` (none when there are none and
  // !always: running nothing is what an empty group does).
  auto init_op_of = [&](const char* collection, const std::vector<VariableInfo>& vars,
                        const std::vector<std::string>& extra, const char* base, bool always,
                        std::vector<std::string>* op) -> Status {
    if (!op->empty()) return Status::OK();  // set by the caller
    std::string item;
    GR_RETURN_IF_ERROR(SingleCollectionItem(meta_graph_, collection, &item));
    if (!item.empty()) {
      *op = {TensorNameToNodeName(item)};
      return Status::OK();
    }
    std::vector<std::string> inits;
    for (const VariableInfo& v : vars)
      if (!v.initializer.empty()) inits.push_back(v.initializer);
    inits.insert(inits.end(), extra.begin(), extra.end());
    if (always || !inits.empty()) *op = {AddGroup(graph, &taken, base, inits)};
    return Status::OK();
  };
  // global_variables_initializer.
  GR_RETURN_IF_ERROR(init_op_of(kInitOpCollection, globals, {}, "init", true, &init_op));
  // Readiness: one IsVariableInitialized / VarIsInitializedOp per variable
  // (graphrt has no ReportUninitializedVariables).
  auto add_checks = [&](const std::vector<VariableInfo>& vars, std::vector<VariableCheck>* checks) {
    for (const VariableInfo& v : vars) {
      const proto::NodeDef* var = by_name.at(v.node);
      const bool resource = var->op() == "VarHandleOp";
      auto dtype = var->attr().find("dtype");
      proto::NodeDef* check = AddNode(
          graph, UniqueNodeName(&taken, std::string("report_uninitialized_variables/") +
                                            (resource ? "VarIsInitializedOp" : "IsVariableInitialized")),
          resource ? "VarIsInitializedOp" : "IsVariableInitialized");
      check->add_input(v.node);
      check->set_device(var->device());
      if (!resource && dtype != var->attr().end()) (*check->mutable_attr())["dtype"] = dtype->second;
      checks->push_back({v.node, check->name() + ":0"});
    }
  };
  std::string ready;
  GR_RETURN_IF_ERROR(SingleCollectionItem(meta_graph_, kReadyOpCollection, &ready));
  if (ready_op.empty()) ready_op = ready;
  std::vector<VariableInfo> all = globals;
  all.insert(all.end(), locals.begin(), locals.end());
  if (ready_op.empty()) add_checks(all, &ready_variables_);
  GR_RETURN_IF_ERROR(SingleCollectionItem(meta_graph_, kReadyForLocalInitOpCollection, &ready));
  if (ready_for_local_init_op.empty()) ready_for_local_init_op = ready;
  if (ready_for_local_init_op.empty()) add_checks(globals, &ready_for_local_variables_);

  // local_variables_initializer + tables_initializer.
  GR_RETURN_IF_ERROR(init_op_of(kLocalInitOpCollection, locals, NodeListItems(meta_graph_, kTableInitializerCollection),
                                "init_all_tables", false, &local_init_op));
  if (summary_op.empty()) {
    std::string item;
    GR_RETURN_IF_ERROR(SingleCollectionItem(meta_graph_, kSummaryOpCollection, &item));
    // merge_all_summaries: every summary tensor (each written as it is,
    // which is what merging them would give).
    summary_op = item.empty() ? NodeListItems(meta_graph_, kSummariesCollection) : std::vector<std::string>{item};
  }
  if (saver == nullptr) {
    auto it = meta_graph_.collection_def().find(kSaversCollection);
    if (it != meta_graph_.collection_def().end() && it->second.bytes_list().value_size() > 0) {
      if (it->second.bytes_list().value_size() > 1)
        return errors::InvalidArgument("More than one item in collection ", kSaversCollection);
      proto::SaverDef def;
      if (!def.ParseFromString(it->second.bytes_list().value(0)))
        return errors::DataLoss("the '", kSaversCollection, "' collection holds a SaverDef that does not parse");
      std::unique_ptr<Saver> s;
      GR_RETURN_IF_ERROR(Saver::FromSaverDef(def, &meta_graph_, saver_options, &s));
      saver = std::move(s);
    } else if (!all.empty()) {
      // TF's Saver(allow_empty=True): no variables, no saver.
      SaverOptions options = saver_options;
      for (const VariableInfo& v : all) options.var_names.push_back(v.node);
      GraphOnlySession builder;
      std::unique_ptr<Saver> s;
      GR_RETURN_IF_ERROR(Saver::Create(&builder, graph, options, &s).WithContext("Scaffold: building the saver"));
      *meta_graph_.mutable_saver_def() = s->saver_def();
      (*meta_graph_.mutable_collection_def())[kSaversCollection].mutable_bytes_list()->add_value(
          s->saver_def().SerializeAsString());
      saver = std::move(s);
    }
  }
  finalized_ = true;
  return Status::OK();
}

Status ReportUninitialized(Session* session, const std::string& report_tensor,
                           const std::vector<Scaffold::VariableCheck>& checks, std::vector<std::string>* not_ready) {
  not_ready->clear();
  std::vector<std::string> fetches;
  if (!report_tensor.empty()) {
    fetches.push_back(report_tensor);
  } else {
    for (const auto& c : checks) fetches.push_back(c.is_initialized_tensor);
  }
  if (fetches.empty()) return Status::OK();
  std::vector<Tensor> out;
  Status s = session->Run({}, fetches, {}, &out);
  if (s.code() == Code::kFailedPrecondition && s.message().find("uninitialized") != std::string::npos) {
    not_ready->push_back(s.message());
    return Status::OK();
  }
  GR_RETURN_IF_ERROR(s.WithContext("checking whether the model is ready"));
  if (!report_tensor.empty()) {
    if (out.size() != 1 || out[0].dtype() != GR_STRING)
      return errors::InvalidArgument("ready op ", report_tensor, " must give a string tensor");
    for (int64_t i = 0; i < out[0].NumElements(); ++i) not_ready->emplace_back(out[0].string_at(i));
    return Status::OK();
  }
  for (size_t i = 0; i < checks.size(); ++i) {
    if (out[i].dtype() != GR_BOOL || out[i].NumElements() != 1)
      return errors::Internal("readiness check ", checks[i].is_initialized_tensor, " did not give a bool scalar");
    if (!out[i].data<bool>()[0]) not_ready->push_back(checks[i].variable);
  }
  return Status::OK();
}

// ---------------------------------------------------------- session creators

ChiefSessionCreator::ChiefSessionCreator(std::shared_ptr<Scaffold> scaffold, SessionOptions options,
                                         std::string checkpoint_dir, std::string checkpoint_filename_with_path)
    : scaffold_(scaffold ? std::move(scaffold) : std::make_shared<Scaffold>()),
      options_(std::move(options)),
      checkpoint_dir_(std::move(checkpoint_dir)),
      checkpoint_path_(std::move(checkpoint_filename_with_path)) {}

Status ChiefSessionCreator::CreateSession(std::unique_ptr<Session>* out) {
  out->reset();
  restored_from_.clear();
  if (!checkpoint_dir_.empty() && !checkpoint_path_.empty())
    return errors::InvalidArgument("Can not provide both checkpoint_dir and checkpoint_filename_with_path.");
  GR_RETURN_IF_ERROR(scaffold_->Finalize());
  Scaffold& sc = *scaffold_;
  std::unique_ptr<Session> session;
  GR_RETURN_IF_ERROR(NewSession(options_, &session));
  GR_RETURN_IF_ERROR(session->Create(sc.graph()).WithContext("creating the session"));

  std::string prefix = checkpoint_path_;
  if (prefix.empty() && !checkpoint_dir_.empty()) prefix = LatestCheckpoint(checkpoint_dir_);
  if (!prefix.empty()) {
    if (sc.saver == nullptr)
      return errors::FailedPrecondition("cannot restore ", prefix, ": the graph has no variables and no saver");
    Status restored = sc.saver->Restore(session.get(), prefix);
    // A damaged latest checkpoint (DataLoss, a file gone): the newest older
    // one the state file lists that restores, with a warning naming both.
    proto::CheckpointState listed;
    if ((restored.code() == Code::kDataLoss || restored.code() == Code::kNotFound) && checkpoint_path_.empty() &&
        GetCheckpointState(checkpoint_dir_, &listed).ok()) {
      for (int i = listed.all_model_checkpoint_paths_size() - 1; i >= 0; --i) {
        const std::string& older = listed.all_model_checkpoint_paths(i);
        if (older == prefix || !CheckpointExists(older)) continue;
        if (!sc.saver->Restore(session.get(), older).ok()) continue;
        std::cerr << "WARNING: graphrt: the latest checkpoint " << prefix << " does not restore (" << restored
                  << "); restored " << older << " instead, the newest good one listed in "
                  << client_internal::JoinPath(checkpoint_dir_, "checkpoint") << "\n";
        prefix = older;
        restored = Status::OK();
        break;
      }
    }
    GR_RETURN_IF_ERROR(restored);
    // Older checkpoints join the saver's rotation (max_to_keep).
    proto::CheckpointState state;
    if (!checkpoint_dir_.empty() && sc.saver->last_checkpoints().empty() &&
        GetCheckpointState(checkpoint_dir_, &state).ok())
      sc.saver->RecoverLastCheckpoints({state.all_model_checkpoint_paths().begin(), state.all_model_checkpoint_paths().end()});
    restored_from_ = prefix;
  } else {
    if (sc.init_op.empty() && !sc.init_fn && sc.local_init_op.empty())
      return errors::FailedPrecondition("Model is not initialized and no init_op or init_fn or local_init_op was given");
    if (!sc.init_op.empty()) {
      std::vector<Tensor> unused;
      GR_RETURN_IF_ERROR(
          session->Run(sc.init_feed_dict, {}, sc.init_op, &unused).WithContext("running init_op " + Join(sc.init_op)));
    }
    if (sc.init_fn) GR_RETURN_IF_ERROR(sc.init_fn(session.get()).WithContext("running init_fn"));
  }
  const std::string what = "Init op: " + Join(sc.init_op) + ", init fn: " + (sc.init_fn ? "yes" : "none") +
                           ", local_init_op: " + (sc.local_init_op.empty() ? "none" : Join(sc.local_init_op));
  std::vector<std::string> not_ready;
  if (!sc.local_init_op.empty()) {
    GR_RETURN_IF_ERROR(
        ReportUninitialized(session.get(), sc.ready_for_local_init_op, sc.ready_for_local_init_variables(), &not_ready));
    if (!not_ready.empty())
      return errors::FailedPrecondition("Init operations did not make model ready for local_init.  ", what,
                                        ", error: Variables not initialized: ", Join(not_ready));
    std::vector<Tensor> unused;
    GR_RETURN_IF_ERROR(
        session->Run({}, {}, sc.local_init_op, &unused).WithContext("running local_init_op " + Join(sc.local_init_op)));
  }
  GR_RETURN_IF_ERROR(ReportUninitialized(session.get(), sc.ready_op, sc.ready_variables(), &not_ready));
  if (!not_ready.empty())
    return errors::FailedPrecondition("Init operations did not make model ready.  ", what,
                                      ", error: Variables not initialized: ", Join(not_ready));
  *out = std::move(session);
  return Status::OK();
}

// ------------------------------------------------------- MonitoredSession

Status MonitoredSession::Create(std::unique_ptr<SessionCreator> creator,
                                std::vector<std::shared_ptr<SessionRunHook>> hooks,
                                std::unique_ptr<MonitoredSession>* out, bool recoverable) {
  out->reset();
  if (creator == nullptr) return errors::InvalidArgument("MonitoredSession needs a session creator");
  std::unique_ptr<MonitoredSession> ms(new MonitoredSession());
  ms->creator_ = std::move(creator);
  ms->hooks_ = std::move(hooks);
  ms->recoverable_ = recoverable;
  for (const auto& h : ms->hooks_) {
    if (h == nullptr) return errors::InvalidArgument("MonitoredSession: a hook is null");
    GR_RETURN_IF_ERROR(h->Begin(ms->creator_->scaffold()));
  }
  GR_RETURN_IF_ERROR(ms->creator_->scaffold()->Finalize());
  Status s = ms->CreateSessionAndCallHooks();
  for (int i = 0; recoverable && IsRecoverable(s) && i < kMaxConsecutiveRecoveries; ++i)
    s = ms->CreateSessionAndCallHooks();
  if (!s.ok()) {
    ms->failed_ = true;
    return s;
  }
  *out = std::move(ms);
  return Status::OK();
}

MonitoredSession::~MonitoredSession() { Close().IgnoreError(); }

Status MonitoredSession::CreateSessionAndCallHooks() {
  if (session_ != nullptr) {
    session_->Close().IgnoreError();  // a broken session: its close error is no news
    session_.reset();
  }
  GR_RETURN_IF_ERROR(creator_->CreateSession(&session_));
  ++sessions_created_;
  for (const auto& h : hooks_) GR_RETURN_IF_ERROR(h->AfterCreateSession(session_.get(), &coord_));
  return Status::OK();
}

bool MonitoredSession::ShouldStop() const { return stop_requested_ || coord_.ShouldStop(); }

Status MonitoredSession::Run(const FeedList& feeds, const std::vector<std::string>& fetches,
                             const std::vector<std::string>& targets, std::vector<Tensor>* outputs) {
  if (closed_) return errors::FailedPrecondition("MonitoredSession: Run called after Close");
  GR_RETURN_IF_ERROR(coord_.RequestedError());
  if (ShouldStop()) return errors::FailedPrecondition("Run called even after should_stop requested.");
  Status s = RunOnce(feeds, fetches, targets, outputs);
  for (int i = 0; recoverable_ && IsRecoverable(s) && i < kMaxConsecutiveRecoveries; ++i) {
    std::cerr << "graphrt: MonitoredSession: " << s.ToString()
              << "; re-creating the session from the latest checkpoint and running again\n";
    s = CreateSessionAndCallHooks();
    if (s.ok()) s = RunOnce(feeds, fetches, targets, outputs);
  }
  if (!s.ok()) failed_ = true;
  return s;
}

Status MonitoredSession::RunOnce(const FeedList& feeds, const std::vector<std::string>& fetches,
                                 const std::vector<std::string>& targets, std::vector<Tensor>* outputs) {
  if (session_ == nullptr) return errors::FailedPrecondition("MonitoredSession has no session");
  const SessionRunArgs original{fetches, feeds, targets};
  SessionRunContext context(&original, session_.get());
  std::vector<SessionRunArgs> hook_args(hooks_.size());
  for (size_t i = 0; i < hooks_.size(); ++i) GR_RETURN_IF_ERROR(hooks_[i]->BeforeRun(&context, &hook_args[i]));

  // Merge: the caller's request first, then each hook's.
  FeedList all_feeds = feeds;
  std::map<std::string, int> fed_by;  // tensor -> -1 (user) or hook index
  for (const auto& [name, t] : feeds) fed_by[CanonicalTensorName(name)] = -1;
  std::vector<std::string> all_fetches = fetches;
  std::vector<std::string> all_targets = targets;
  std::set<std::string> target_set(targets.begin(), targets.end());
  std::vector<size_t> fetch_start(hooks_.size());
  for (size_t i = 0; i < hooks_.size(); ++i) {
    for (const auto& [name, t] : hook_args[i].feeds) {
      auto [it, inserted] = fed_by.emplace(CanonicalTensorName(name), static_cast<int>(i));
      if (!inserted)
        return errors::InvalidArgument(it->second < 0 ? "Same tensor is fed by a SessionRunHook and user."
                                                      : "Same tensor is fed by two hooks.",
                                       " (", name, ")");
      all_feeds.emplace_back(name, t);
    }
    fetch_start[i] = all_fetches.size();
    all_fetches.insert(all_fetches.end(), hook_args[i].fetches.begin(), hook_args[i].fetches.end());
    for (const std::string& t : hook_args[i].targets)
      if (target_set.insert(t).second) all_targets.push_back(t);
  }
  std::vector<Tensor> results;
  // Nothing asked for (a hook that fetches only now and then): no Run, as
  // TF's session.run([]) does nothing.
  if (!all_fetches.empty() || !all_targets.empty())
    GR_RETURN_IF_ERROR(session_->Run(all_feeds, all_fetches, all_targets, &results));
  if (results.size() != all_fetches.size())
    return errors::Internal("the session returned ", results.size(), " tensors for ", all_fetches.size(), " fetches");
  for (size_t i = 0; i < hooks_.size(); ++i) {
    SessionRunValues values;
    values.results.assign(results.begin() + static_cast<std::ptrdiff_t>(fetch_start[i]),
                          results.begin() + static_cast<std::ptrdiff_t>(fetch_start[i] + hook_args[i].fetches.size()));
    GR_RETURN_IF_ERROR(hooks_[i]->AfterRun(&context, values));
  }
  if (context.stop_requested()) stop_requested_ = true;
  if (outputs != nullptr) outputs->assign(results.begin(), results.begin() + static_cast<std::ptrdiff_t>(fetches.size()));
  return Status::OK();
}

Status MonitoredSession::Close() {
  if (closed_) return Status::OK();
  closed_ = true;
  Status first;
  if (!failed_ && session_ != nullptr) {
    for (const auto& h : hooks_) {
      first = h->End(session_.get());
      if (!first.ok()) break;
    }
  }
  coord_.RequestStop();
  // Threads that outlive the grace period are left to the Coordinator's
  // destructor (TF: ignore_live_threads=True here).
  Status joined = coord_.Join(std::chrono::seconds(120), /*ignore_live_threads=*/true);
  if (first.ok()) first = joined;
  if (session_ != nullptr) session_->Close().IgnoreError();  // TF suppresses close errors
  session_.reset();
  return first;
}

}  // namespace graphrt
