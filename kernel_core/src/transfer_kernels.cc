#include "transfer_kernels.h"

#include <memory>
#include <utility>
#include <vector>

#include "executor_internal.h"
#include "graphrt/core/partition.h"
#include "graphrt/core/rendezvous.h"
#include "graphrt/core/runtime.h"
#include "node_def_util.h"

namespace graphrt {
namespace {

// The key both sides of a pair compute from their (identical) attrs.
// Transfers run in the root frame only (InsertTransfers refuses others).
Status TransferKeyOf(const proto::NodeDef& def, Rendezvous::ParsedKey* key) {
  const proto::AttrValue* name = FindAttr(def, "tensor_name");
  const proto::AttrValue* send = FindAttr(def, "send_device");
  const proto::AttrValue* incarnation = FindAttr(def, "send_device_incarnation");
  const proto::AttrValue* recv = FindAttr(def, "recv_device");
  if (!name || !send || !incarnation || !recv)
    return errors::InvalidArgument(NodePrefix(def), ": a transfer needs the attrs tensor_name, send_device, ",
                                   "send_device_incarnation and recv_device");
  return Rendezvous::ParseKey(Rendezvous::CreateKey(send->s(), static_cast<uint64_t>(incarnation->i()), recv->s(),
                                                    name->s(), 0, 0),
                              key);
}

bool BoolAttr(const proto::NodeDef& def, const char* name) {
  const proto::AttrValue* v = FindAttr(def, name);
  return v != nullptr && v->b();
}

Rendezvous* RendezvousOf(GR_KernelContext* ctx) {
  Rendezvous* r = ctx->call.step->args->rendezvous;
  if (r == nullptr)
    ctx->call.status = errors::Internal("a transfer ran in a step without a rendezvous (the session did not ",
                                        "expect transfers in this graph)");
  return r;
}

// ---- _Send: hands its input to the rendezvous; never waits.

struct SendKernel {
  Rendezvous::ParsedKey key;
};

void* CreateSend(GR_KernelConstruction* kc, void*) {
  auto k = std::make_unique<SendKernel>();
  kc->status = TransferKeyOf(*kc->node, &k->key);
  return kc->status.ok() ? k.release() : nullptr;
}

void ComputeSend(void* kernel, GR_KernelContext* ctx) {
  Rendezvous* r = RendezvousOf(ctx);
  if (r == nullptr) return;
  Status s = r->Send(static_cast<SendKernel*>(kernel)->key, ctx->call.inputs[0], /*is_dead=*/false);
  if (!s.ok()) ctx->call.status = std::move(s);
}

// ---- _Recv: waits (asynchronously) for the value, then moves it into the
// memory its consumers read, ordered on the devices' compute streams.

// The step's first error, or why else it ended.
Status StepAbortStatus(StepState* s) {
  {
    std::lock_guard<std::mutex> lock(s->mu);
    if (!s->error.ok()) return s->error;
  }
  return errors::Cancelled("The step was cancelled while a transfer waited");
}

// A step cancellation callback: wakes every _Recv of the step.
void AbortTransfers(void* step) {
  auto* s = static_cast<StepState*>(step);
  s->args->rendezvous->StartAbort(StepAbortStatus(s));
}

struct RecvKernel {
  Rendezvous::ParsedKey key;
  Device* src = nullptr;  // the sending device (null only when the value is in host memory)
  Device* dst = nullptr;  // this node's device
  DataType type = GR_FLOAT;
  bool src_host = false;  // the value arrives in host memory
  bool dst_host = false;  // consumers read host memory

  void Deliver(AsyncNode* n, const Status& status, const Tensor& value, bool is_dead) const;

 private:
  void Fail(AsyncNode* n, const Status& s) const {
    n->call.status = Status(s.code(), "receiving " + key.edge_name + " from " + key.src_device + ": " + s.message());
    AsyncKernelDone(n);
  }
  void Finish(AsyncNode* n, Tensor out) const {
    n->call.outputs[0] = std::move(out);
    AsyncKernelDone(n);
  }
  void ToDevice(AsyncNode* n, const Tensor& host_value, Tensor out) const;
  void FromDevice(AsyncNode* n, const Tensor& value, Tensor out, bool then_to_device) const;
  void BetweenDevices(AsyncNode* n, const Tensor& value, Tensor out) const;
};

void* CreateRecv(GR_KernelConstruction* kc, void*) {
  auto k = std::make_unique<RecvKernel>();
  const proto::NodeDef& def = *kc->node;
  kc->status = TransferKeyOf(def, &k->key);
  if (!kc->status.ok()) return nullptr;
  k->dst = kc->device;
  k->type = BaseType((*kc->output_types)[0]);
  std::vector<Device*> devices;
  kc->status = Runtime::Global().devices().GetDevices(&devices);
  if (!kc->status.ok()) return nullptr;
  const proto::AttrValue* local_src = FindAttr(def, kSendDeviceLocalAttr);
  const std::string& src_name = local_src != nullptr ? local_src->s() : k->key.src_device;
  for (Device* d : devices)
    if (d->name() == src_name) k->src = d;
  k->src_host = BoolAttr(def, kSendFromHostAttr) || (k->src != nullptr && k->src->host_memory());
  k->dst_host = BoolAttr(def, kRecvOnHostAttr) || k->dst == nullptr || k->dst->host_memory();
  if (!k->src_host && k->src == nullptr) {
    kc->status = errors::InvalidArgument(NodePrefix(def), ": sending device '", k->key.src_device,
                                         "' is not a device of this process");
    return nullptr;
  }
  return k.release();
}

void ComputeRecvAsync(void* kernel, GR_KernelContext* ctx) {
  auto* k = static_cast<const RecvKernel*>(kernel);
  auto* n = static_cast<AsyncNode*>(ctx);
  Rendezvous* r = RendezvousOf(ctx);
  if (r == nullptr) {
    AsyncKernelDone(ctx);
    return;
  }
  StepState* s = ctx->call.step;
  int64_t token = -1;
  // A failure anywhere in the step aborts the rendezvous, so no _Recv
  // waits for a _Send that will never run.
  const bool registered = StepOnCancel(s, &AbortTransfers, s, &token);
  if (!registered) AbortTransfers(s);
  r->RecvAsync(k->key, [k, n, s, registered, token](const Status& status, const Tensor& value, bool is_dead) {
    if (registered) StepRemoveOnCancel(s, token);
    k->Deliver(n, status, value, is_dead);
  });
}

void RecvKernel::Deliver(AsyncNode* n, const Status& status, const Tensor& value, bool is_dead) const {
  if (!status.ok()) {
    n->call.status = status;  // the step's abort: its own error already names the node that failed
    AsyncKernelDone(n);
    return;
  }
  if (is_dead) {
    n->dead_output = true;
    AsyncKernelDone(n);
    return;
  }
  if (value.dtype() != type)
    return Fail(n, errors::Internal("the value is ", DataTypeString(value.dtype()), ", expected ",
                                    DataTypeString(type)));
  if (src_host && dst_host) return Finish(n, value);  // one memory: no copy
  Tensor out;
  Status s = Tensor::Allocate(OutputAllocator(*n->call.item, 0, n->call.step), type, value.shape(), &out);
  if (!s.ok()) return Fail(n, s);
  if (value.TotalBytes() == 0) return Finish(n, std::move(out));
  if (src_host) return ToDevice(n, value, std::move(out));
  if (dst_host) return FromDevice(n, value, std::move(out), /*then_to_device=*/false);
  return BetweenDevices(n, value, std::move(out));
}

// Host -> dst: enqueued on dst's stream, where its consumers' kernels
// follow, so the node is done at once; the host value lives until the copy
// has run.
void RecvKernel::ToDevice(AsyncNode* n, const Tensor& host_value, Tensor out) const {
  void* stream = dst->compute_stream();
  Status s = dst->CopyHostToDeviceAsync(stream, host_value.raw_data(), out.raw_data(), host_value.TotalBytes());
  if (s.ok()) s = dst->HostCallback(stream, [keep = host_value](const Status&) {});
  if (!s.ok()) return Fail(n, s);
  Finish(n, std::move(out));
}

// src -> host (`out`), on src's stream after the producer; done (or, for a
// device that cannot reach src's memory, the copy onward) when a host
// callback says the copy has run.
void RecvKernel::FromDevice(AsyncNode* n, const Tensor& value, Tensor out, bool then_to_device) const {
  void* stream = src->compute_stream();
  Status s = src->CopyDeviceToHostAsync(stream, value.raw_data(), out.raw_data(), value.TotalBytes());
  if (s.ok())
    s = src->HostCallback(stream, [this, n, value, out, then_to_device](const Status& copied) mutable {
      if (!copied.ok()) return Fail(n, copied);
      if (!then_to_device) return Finish(n, std::move(out));
      Tensor device_out;
      Status a = Tensor::Allocate(n->call.item->allocator, type, out.shape(), &device_out);
      if (!a.ok()) return Fail(n, a);
      ToDevice(n, out, std::move(device_out));
    });
  if (!s.ok()) Fail(n, s);
}

// src -> dst, both device memories. The same backend copies directly on
// src's stream (after the producer) and dst's stream waits for it; other
// backends go through host memory.
void RecvKernel::BetweenDevices(AsyncNode* n, const Tensor& value, Tensor out) const {
  if (src->plugin() != dst->plugin() || src->type() != dst->type()) {
    Tensor staging;
    Status a = Tensor::Allocate(StepHostAllocator(n->call.step), type, value.shape(), &staging);
    if (!a.ok()) return Fail(n, a);
    return FromDevice(n, value, std::move(staging), /*then_to_device=*/true);
  }
  void* src_stream = src->compute_stream();
  void* dst_stream = dst->compute_stream();
  void* event = nullptr;
  Status s = src->CopyDeviceToDeviceAsync(src_stream, value.raw_data(), out.raw_data(), value.TotalBytes());
  if (s.ok()) s = src->CreateEvent(&event);
  if (s.ok()) s = src->RecordEvent(src_stream, event);
  if (s.ok()) s = dst->StreamWaitEvent(dst_stream, event);
  if (s.ok()) {
    // Past the wait on dst's stream the copy has run: the source value and
    // the event can go.
    Device* owner = src;
    s = dst->HostCallback(dst_stream, [owner, event, keep = value](const Status&) { owner->DestroyEvent(event); });
    if (s.ok()) return Finish(n, std::move(out));
  }
  if (event != nullptr) {
    // Not yet waited on by dst: gone once src has run what precedes it.
    src->SyncEvent(event).IgnoreError();
    src->DestroyEvent(event);
  }
  Fail(n, s);
}

KernelRegistration MakeRegistration(const char* op, bool recv) {
  KernelRegistration r;
  r.op = op;
  r.device_type = "*";
  r.plugin = "graphrt core";
  r.flags = GR_KERNEL_INEXPENSIVE;
  if (recv) {
    r.create = CreateRecv;
    r.compute_async = ComputeRecvAsync;
    r.destroy = [](void* k) { delete static_cast<RecvKernel*>(k); };
  } else {
    r.create = CreateSend;
    r.compute = ComputeSend;
    r.destroy = [](void* k) { delete static_cast<SendKernel*>(k); };
  }
  return r;
}

}  // namespace

const KernelRegistration* TransferKernel(const std::string& op) {
  static const KernelRegistration send = MakeRegistration(kSendOp, false);
  static const KernelRegistration recv = MakeRegistration(kRecvOp, true);
  if (op == kSendOp) return &send;
  if (op == kRecvOp) return &recv;
  return nullptr;
}

void SendDeadValue(void* send_kernel, StepState* s) {
  Rendezvous* r = s->args->rendezvous;
  Status st = r == nullptr ? errors::Internal("a transfer ran in a step without a rendezvous")
                           : r->Send(static_cast<SendKernel*>(send_kernel)->key, Tensor(), /*is_dead=*/true);
  if (!st.ok()) RecordError(s, std::move(st));
}

}  // namespace graphrt
