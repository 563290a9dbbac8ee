// Plugin resources through the ABI 1.2 resource manager: a counter object
// per (container, name), in the session's default container or the step's.
//   TestCounter(name, per_step) -> int64: increments and returns the count.
//   TestDeleteCounter(name): deletes it (NotFound when absent).
//   TestLiveCounters -> int64: objects made and not yet destroyed.
//   TestCounterHandle(name) -> resource: a handle to counter `name` (a
//   resource that is not a variable, for kernels that must refuse it).
#include <graphrt/sdk/sdk.h>

#include <atomic>
#include <string>
#include <vector>

namespace graphrt {
namespace sdk {
namespace {

std::atomic<int64_t> g_live{0};

struct Counter {
  std::atomic<int64_t> count{0};
};

void* MakeCounter(void* arg, GR_StatusSink* status) {
  const std::string& name = *static_cast<const std::string*>(arg);
  if (name == "refuse") {
    Api().status_set(status, GR_INVALID_ARGUMENT, "refusing to make counter 'refuse'");
    return nullptr;
  }
  ++g_live;
  return new Counter();
}
void DestroyCounter(void* p) {
  --g_live;
  delete static_cast<Counter*>(p);
}

class CounterOp : public OpKernel {
 public:
  explicit CounterOp(OpKernelConstruction* c) : OpKernel(c) {
    OP_REQUIRES_OK(c, c->GetAttr("name", &name_));
    OP_REQUIRES_OK(c, c->GetAttr("per_step", &per_step_));
  }
  void Compute(OpKernelContext* ctx) override {
    const char* container = per_step_ ? ctx->step_container() : "";
    GR_Resource* r = nullptr;
    const int32_t code = Api().ctx_lookup_resource(ctx->raw(), container, name_.c_str(), "TestCounter", MakeCounter,
                                                   &name_, DestroyCounter, &r);
    OP_REQUIRES(ctx, code == GR_OK, Status(code, "lookup failed"));
    const int64_t value = ++static_cast<Counter*>(Api().resource_object(r))->count;
    Api().resource_release(r);
    TensorView out;
    OP_REQUIRES_OK(ctx, ctx->allocate_output(0, std::vector<int64_t>{}, &out));
    *out.data<int64_t>() = value;
  }

 private:
  std::string name_;
  bool per_step_ = false;
};

class DeleteCounterOp : public OpKernel {
 public:
  explicit DeleteCounterOp(OpKernelConstruction* c) : OpKernel(c) { OP_REQUIRES_OK(c, c->GetAttr("name", &name_)); }
  void Compute(OpKernelContext* ctx) override { OP_REQUIRES_OK(ctx, ctx->DeleteResource("", name_, "TestCounter")); }

 private:
  std::string name_;
};

class LiveCountersOp : public OpKernel {
 public:
  explicit LiveCountersOp(OpKernelConstruction* c) : OpKernel(c) {}
  void Compute(OpKernelContext* ctx) override {
    TensorView out;
    OP_REQUIRES_OK(ctx, ctx->allocate_output(0, std::vector<int64_t>{}, &out));
    *out.data<int64_t>() = g_live.load();
  }
};

class CounterHandleOp : public OpKernel {
 public:
  explicit CounterHandleOp(OpKernelConstruction* c) : OpKernel(c) { OP_REQUIRES_OK(c, c->GetAttr("name", &name_)); }
  void Compute(OpKernelContext* ctx) override {
    OP_REQUIRES_OK(ctx, ctx->set_output_resource_handle(0, "", name_, "TestCounter"));
  }

 private:
  std::string name_;
};

REGISTER_OP("TestCounter").Output("count: int64").Attr("name: string").Attr("per_step: bool = false").SetIsStateful();
REGISTER_OP("TestDeleteCounter").Attr("name: string").SetIsStateful();
REGISTER_OP("TestLiveCounters").Output("live: int64").SetIsStateful();
REGISTER_OP("TestCounterHandle").Output("handle: resource").Attr("name: string").SetIsStateful();
REGISTER_KERNEL(Name("TestCounter").Device(DEVICE_CPU), CounterOp);
REGISTER_KERNEL(Name("TestCounterHandle").Device(DEVICE_CPU), CounterHandleOp);
REGISTER_KERNEL(Name("TestDeleteCounter").Device(DEVICE_CPU), DeleteCounterOp);
REGISTER_KERNEL(Name("TestLiveCounters").Device(DEVICE_CPU), LiveCountersOp);

}  // namespace
}  // namespace sdk
}  // namespace graphrt

GRAPHRT_PLUGIN("test_resources", "0.1.0")
