// libFuzzer harness for what the distributed runtime reads from the network
// and the environment: the first byte picks TF_CONFIG's JSON, a --cluster
// flag, a rendezvous key (RecvTensor, RunGraph), a GraphDef given to a
// worker (RegisterGraph, binary) built into a WorkerGraph, or a
// RecvTensorResponse from a peer (tensor_coding.h), in slices as gRPC
// delivers them, or RunGraph's and RunStep's messages with their tensors. A failing Status
// is not a finding; a crash, sanitizer report, leak or hang is.
#include <algorithm>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "graphrt/core/cluster_step.h"
#include "graphrt/core/rendezvous.h"
#include "graphrt/core/runtime.h"
#include "graphrt/distributed/server.h"
#include "graphrt/proto/master.pb.h"
#include "tensor_coding.h"

namespace graphrt {
namespace {

void FuzzOne(uint8_t kind, const std::string& text) {
  switch (kind % 5) {
    case 0: {
      proto::ClusterDef cluster;
      std::string job;
      int task = 0;
      distributed::ParseTfConfig(text, &cluster, &job, &task).IgnoreError();
      break;
    }
    case 1: {
      proto::ClusterDef cluster;
      distributed::AddJobFromFlag(text, &cluster).IgnoreError();
      break;
    }
    case 2: {
      Rendezvous::ParsedKey key;
      if (Rendezvous::ParseKey(text, &key).ok()) {
        std::string task;
        TaskOfDevice(key.src_device, &task).IgnoreError();
      }
      break;
    }
    case 4: {
      // The kind's other bits choose the slices' size and the message:
      // RecvTensorResponse, RunGraphRequest (feeds), RunStepResponse
      // (fetches).
      const size_t piece = 1 + (kind / 5) % 16;
      std::vector<grpc::Slice> slices;
      for (size_t i = 0; i < text.size(); i += piece)
        slices.emplace_back(text.data() + i, std::min(piece, text.size() - i));
      if (slices.empty()) slices.emplace_back(std::string());
      grpc::ByteBuffer buffer(slices.data(), slices.size());
      switch (kind / 80) {
        case 0: {
          Tensor value;
          bool is_dead = false;
          distributed::DecodeRecvTensorResponse(&buffer, HostAllocator(), &value, &is_dead).IgnoreError();
          break;
        }
        case 1: {
          proto::RunGraphRequest rest;
          distributed::NamedTensors tensors;
          distributed::DecodeWithTensors(&buffer, distributed::kRunGraphSendField, &proto::RunGraphRequest::mutable_send,
                                         HostAllocator(), &rest, &tensors)
              .IgnoreError();
          break;
        }
        default: {
          proto::RunStepResponse rest;
          distributed::NamedTensors tensors;
          distributed::DecodeWithTensors(&buffer, distributed::kRunStepTensorField,
                                         &proto::RunStepResponse::mutable_tensor, HostAllocator(), &rest, &tensors)
              .IgnoreError();
          break;
        }
      }
      break;
    }
    default: {
      proto::GraphDef def;
      if (!def.ParseFromString(text)) return;
      static SharedResources* shared = new SharedResources();
      proto::ConfigProto config;
      config.mutable_graphrt_options()->set_session_memory_limit_bytes(int64_t{64} << 20);
      config.mutable_graphrt_options()->set_max_graph_nodes(1 << 12);
      auto state = std::make_shared<WorkerState>(config, shared);
      std::unique_ptr<WorkerGraph> graph;
      WorkerGraph::Create(def, "/job:localhost/replica:0/task:0", state, &graph).IgnoreError();
      break;
    }
  }
}

}  // namespace
}  // namespace graphrt

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  graphrt::Runtime::Global().LoadDefaultPlugins().IgnoreError();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  graphrt::FuzzOne(data[0], std::string(reinterpret_cast<const char*>(data) + 1, size - 1));
  return 0;
}
