// TensorFlow's older session API, still in its C API and used by early
// language bindings: TF_DeprecatedSession with TF_ExtendGraph (a serialized
// GraphDef) and TF_Run (tensors named by strings), over graphrt's Session.
// Partial runs (TF_PRunSetup / TF_PRun, and the TF_Session forms) answer
// TF_UNIMPLEMENTED: graphrt's sessions have none.
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "c_api_internal.h"
#include "graphrt/core/session.h"
#include "graphrt/distributed/grpc_session.h"
#include "tf_c_internal.h"

struct TF_DeprecatedSession {
  std::unique_ptr<graphrt::Session> session;
  std::mutex extend_mu;
  bool created = false;  // Create has run (the first TF_ExtendGraph)
};

namespace {

using graphrt::Status;
using graphrt::c_api_internal::Call;
using graphrt::c_api_internal::LoadDefaultPlugins;
using graphrt::c_api_internal::NullArgument;
using graphrt::c_api_internal::ParseProto;
namespace errors = graphrt::errors;

Status NoPartialRuns(const char* fn) {
  return errors::Unimplemented(fn, ": partial runs are not supported (graphrt's sessions run whole steps; "
                                   "feed and fetch everything in one run)");
}

// names[0..n) as strings, each non-NULL.
Status Names(const char* fn, const char* what, const char* const* names, int n, std::vector<std::string>* out) {
  if (n < 0) return errors::InvalidArgument(fn, ": the number of ", what, " is negative (", n, ")");
  if (n > 0 && names == nullptr) return NullArgument(fn, what);
  for (int i = 0; i < n; ++i) {
    if (names[i] == nullptr) return errors::InvalidArgument(fn, ": ", what, "[", i, "] is NULL");
    out->emplace_back(names[i]);
  }
  return Status::OK();
}

}  // namespace

extern "C" {

TF_DeprecatedSession* TF_NewDeprecatedSession(const TF_SessionOptions* opts, TF_Status* status) {
  static const char* fn = "TF_NewDeprecatedSession";
  TF_DeprecatedSession* result = nullptr;
  Call(status, fn, [&]() -> Status {
    GR_RETURN_IF_ERROR(LoadDefaultPlugins());
    graphrt::distributed::RegisterGrpcSessionFactory();  // TF_SetTarget("grpc://...")
    auto s = std::make_unique<TF_DeprecatedSession>();
    GR_RETURN_IF_ERROR(graphrt::NewSession(opts ? opts->options : graphrt::SessionOptions(), &s->session));
    result = s.release();
    return Status::OK();
  });
  return result;
}

void TF_CloseDeprecatedSession(TF_DeprecatedSession* s, TF_Status* status) {
  static const char* fn = "TF_CloseDeprecatedSession";
  Call(status, fn, [&]() -> Status {
    if (s == nullptr) return NullArgument(fn, "session");
    return s->session->Close();
  });
}

void TF_DeleteDeprecatedSession(TF_DeprecatedSession* s, TF_Status* status) {
  static const char* fn = "TF_DeleteDeprecatedSession";
  Call(status, fn, [&]() -> Status {
    if (s == nullptr) return Status::OK();
    const Status closed = s->session->Close();
    delete s;
    return closed;
  });
}

void TF_ExtendGraph(TF_DeprecatedSession* s, const void* proto, size_t proto_len, TF_Status* status) {
  static const char* fn = "TF_ExtendGraph";
  Call(status, fn, [&]() -> Status {
    if (s == nullptr) return NullArgument(fn, "session");
    graphrt::proto::GraphDef def;
    GR_RETURN_IF_ERROR(ParseProto(fn, proto, proto_len, "proto", &def));
    std::lock_guard<std::mutex> l(s->extend_mu);
    GR_RETURN_IF_ERROR(s->created ? s->session->Extend(def) : s->session->Create(def));
    s->created = true;
    return Status::OK();
  });
}

void TF_Run(TF_DeprecatedSession* s, const TF_Buffer* run_options, const char** input_names, TF_Tensor** inputs,
            int ninputs, const char** output_names, TF_Tensor** outputs, int noutputs, const char** target_oper_names,
            int ntargets, TF_Buffer* run_metadata, TF_Status* status) {
  static const char* fn = "TF_Run";
  Call(status, fn, [&]() -> Status {
    if (noutputs > 0 && outputs == nullptr) return NullArgument(fn, "outputs");
    for (int i = 0; i < noutputs; ++i) outputs[i] = nullptr;
    if (s == nullptr) return NullArgument(fn, "session");
    std::vector<std::string> in_names, out_names, targets;
    GR_RETURN_IF_ERROR(Names(fn, "input_names", input_names, ninputs, &in_names));
    GR_RETURN_IF_ERROR(Names(fn, "output_names", output_names, noutputs, &out_names));
    GR_RETURN_IF_ERROR(Names(fn, "target_oper_names", target_oper_names, ntargets, &targets));
    if (ninputs > 0 && inputs == nullptr) return NullArgument(fn, "inputs");
    graphrt::proto::RunOptions opts;
    GR_RETURN_IF_ERROR(graphrt::tf_c::BufferArguments(fn, run_options, &opts, run_metadata, "run_metadata"));
    {
      std::lock_guard<std::mutex> l(s->extend_mu);
      if (!s->created)
        return errors::FailedPrecondition(fn, ": Session was not created with a graph before Run() "
                                              "(call TF_ExtendGraph first)");
    }
    // The input tensors stay the caller's (TensorFlow 1.15's rule).
    std::vector<std::pair<std::string, graphrt::Tensor>> feeds;
    for (int i = 0; i < ninputs; ++i) {
      if (inputs[i] == nullptr) return errors::InvalidArgument(fn, ": inputs[", i, "] ('", in_names[i], "') is NULL");
      feeds.emplace_back(in_names[i], inputs[i]->tensor);
    }
    std::vector<graphrt::Tensor> results;
    graphrt::proto::RunMetadata metadata;
    GR_RETURN_IF_ERROR(s->session->Run(opts, feeds, out_names, targets, &results, run_metadata ? &metadata : nullptr));
    if (static_cast<int>(results.size()) != noutputs)
      return errors::Internal(fn, ": the run returned ", results.size(), " tensors for ", noutputs, " outputs");
    if (run_metadata != nullptr) GR_RETURN_IF_ERROR(graphrt::tf_c::FillBuffer(fn, metadata, run_metadata));
    std::vector<std::unique_ptr<TF_Tensor>> made;
    for (auto& t : results) made.push_back(std::make_unique<TF_Tensor>(TF_Tensor{std::move(t)}));
    for (int i = 0; i < noutputs; ++i) outputs[i] = made[i].release();
    return Status::OK();
  });
}

void TF_PRunSetup(TF_DeprecatedSession*, const char**, int, const char**, int, const char**, int, const char** handle,
                  TF_Status* status) {
  if (handle != nullptr) *handle = nullptr;
  Call(status, "TF_PRunSetup", [] { return NoPartialRuns("TF_PRunSetup"); });
}

void TF_PRun(TF_DeprecatedSession*, const char*, const char**, TF_Tensor**, int, const char**, TF_Tensor** outputs,
             int noutputs, const char**, int, TF_Status* status) {
  for (int i = 0; outputs != nullptr && i < noutputs; ++i) outputs[i] = nullptr;
  Call(status, "TF_PRun", [] { return NoPartialRuns("TF_PRun"); });
}

void TF_SessionPRunSetup(TF_Session*, const TF_Output*, int, const TF_Output*, int, const TF_Operation* const*, int,
                         const char** handle, TF_Status* status) {
  if (handle != nullptr) *handle = nullptr;
  Call(status, "TF_SessionPRunSetup", [] { return NoPartialRuns("TF_SessionPRunSetup"); });
}

void TF_SessionPRun(TF_Session*, const char*, const TF_Output*, TF_Tensor* const*, int, const TF_Output*,
                    TF_Tensor** output_values, int noutputs, const TF_Operation* const*, int, TF_Status* status) {
  for (int i = 0; output_values != nullptr && i < noutputs; ++i) output_values[i] = nullptr;
  Call(status, "TF_SessionPRun", [] { return NoPartialRuns("TF_SessionPRun"); });
}

void TF_DeletePRunHandle(const char* handle) {
  // TF_PRunSetup never hands out a handle here; a NULL one is fine to delete.
  (void)handle;
}

}  // extern "C"
