// Asynchronous kernels (ABI 1.3) for the executor's tests:
//   TestAsyncDelay(x: T) -> y: T  y = x, set on another thread after
//     delay_ms (delay_ms < 0: done is called before ComputeAsync returns);
//     `fail`: the kernel's error instead of y.
//   TestAsyncWait(x: T) -> y: T  waits until the step is cancelled, then
//     fails CANCELLED ("TestAsyncWait was cancelled"); never holds a thread.
//   TestAsyncLive() -> int64: TestAsyncWait calls waiting now (a test
//     waits for the Run under test to block before it cancels it).
#include <graphrt/sdk/sdk.h>
#include <graphrt/sdk/shape_fns.h>

#include <atomic>
#include <chrono>
#include <mutex>
#include <thread>
#include <vector>

using namespace graphrt::sdk;

namespace {

std::atomic<int64_t> g_waiting{0};

class AsyncDelayOp : public AsyncOpKernel {
 public:
  explicit AsyncDelayOp(OpKernelConstruction* c) : AsyncOpKernel(c) {
    OP_REQUIRES_OK(c, c->GetAttr("delay_ms", &delay_ms_));
    OP_REQUIRES_OK(c, c->GetAttr("fail", &fail_));
  }
  void ComputeAsync(OpKernelContext* ctx, DoneCallback done) override {
    auto finish = [ctx, done, fail = fail_] {
      if (fail) ctx->SetStatus(errors::InvalidArgument("TestAsyncDelay failed on purpose"));
      else ctx->set_output_from_input(0, 0);
      done();
    };
    if (delay_ms_ < 0) {
      finish();
      return;
    }
    std::thread([finish, ms = delay_ms_] {
      std::this_thread::sleep_for(std::chrono::milliseconds(ms));
      finish();
    }).detach();
  }

 private:
  int64_t delay_ms_ = 0;
  bool fail_ = false;
};

// One waiting call: the cancellation callback ends it.
struct Waiter {
  OpKernelContext* ctx;
  AsyncOpKernel::DoneCallback done;
  static void Cancel(void* arg) {
    auto* w = static_cast<Waiter*>(arg);
    --g_waiting;
    w->ctx->SetStatus(Status(GR_CANCELLED, "TestAsyncWait was cancelled"));
    auto done = std::move(w->done);
    delete w;
    done();
  }
};

class AsyncWaitOp : public AsyncOpKernel {
 public:
  using AsyncOpKernel::AsyncOpKernel;
  void ComputeAsync(OpKernelContext* ctx, DoneCallback done) override {
    auto* w = new Waiter{ctx, std::move(done)};
    ++g_waiting;
    int64_t token = 0;
    if (!ctx->OnCancel(&Waiter::Cancel, w, &token)) Waiter::Cancel(w);
  }
};

class AsyncLiveOp : public OpKernel {
 public:
  using OpKernel::OpKernel;
  void Compute(OpKernelContext* ctx) override {
    TensorView out;
    OP_REQUIRES_OK(ctx, ctx->allocate_output(0, std::vector<int64_t>{}, &out));
    *out.data<int64_t>() = g_waiting.load();
  }
};

}  // namespace

REGISTER_OP("TestAsyncDelay")
    .Input("x: T")
    .Output("y: T")
    .Attr("T: type")
    .Attr("delay_ms: int = 0")
    .Attr("fail: bool = false")
    .SetShapeFn(shape_fns::UnchangedShape);
REGISTER_KERNEL(Name("TestAsyncDelay").Device(DEVICE_CPU), AsyncDelayOp);
REGISTER_OP("TestAsyncWait").Input("x: T").Output("y: T").Attr("T: type").SetShapeFn(shape_fns::UnchangedShape);
REGISTER_KERNEL(Name("TestAsyncWait").Device(DEVICE_CPU), AsyncWaitOp);
REGISTER_OP("TestAsyncLive").Output("n: int64").SetIsStateful().SetShapeFn(shape_fns::ScalarShape);
REGISTER_KERNEL(Name("TestAsyncLive").Device(DEVICE_CPU), AsyncLiveOp);

GRAPHRT_PLUGIN("test_async", "1.0")
