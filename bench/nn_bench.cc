// Softmax / LogSoftmax, FusedBatchNormV3 (inference and training) and LRN on
// CPU: graphrt's kernels (ops/nn/cpu/nn_kernels.cc, norm_kernels.cc) through
// a Session (one node fed by a Placeholder) against a direct oneDNN 2.6
// primitive doing the same math, on 1 and 2 threads:
//   * BM_Session: the session, intra = inter op threads = T;
//   * BM_Dnnl omp:0 "split": oneDNN run the way a graphrt kernel runs it:
//     primitives created for one OpenMP thread, each call single-threaded,
//     the work split over T threads by us (softmax rows, batch images for
//     inference batch norm, channel blocks for training batch norm, pixel
//     rows for LRN; an OpenMP team here, the session's oneTBB pool in a
//     kernel), only for tensors of at least kParallelMinElements (32 Ki)
//     elements, as the kernels' ForRange does;
//   * BM_Dnnl omp:1: one primitive call over the whole tensor on oneDNN's
//     own OpenMP team of T threads (what oneDNN does by itself).
// Before timing, every direct case runs once and its outputs are compared
// with the session's (direct kernels, 1 thread) on the same input; TF's LRN
// parameters are mapped to oneDNN's (local_size n = 2r+1, alpha' = alpha *
// n, k = bias). A mismatch skips the case with an error instead of a figure.
// The label says which oneDNN implementation ran (jit or reference) and in
// how many parts.
//
// GRAPHRT_NN_NORM_IMPL (dnnl | direct) selects the LRN kernel's path when
// the kernel is built (a session's first Run): BM_Session impl:1 forces the
// direct loops, impl:2 oneDNN (even its reference loop), so the kernel's
// own two paths are compared in the same run too. For the other ops impl:1
// and impl:2 run the same (direct) kernel.
//
// At the end it prints per case and thread count the medians (us) and the
// ratios ours/split and ours/omp (graphrt's direct kernel through a session
// over direct oneDNN: below 1, graphrt is faster) and kdnnl/ours (the LRN
// kernel's oneDNN path over its direct one). The machine has 2 shared
// cores: compare only figures of one run, interleaved, medians:
//
//   build/bin/graphrt_bench_nn --benchmark_repetitions=5
//       --benchmark_enable_random_interleaving=true --benchmark_min_time=0.2
// (one command line).
#include <benchmark/benchmark.h>

#include <oneapi/dnnl/dnnl.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "graphrt/core/graph_def_io.h"
#include "graphrt/core/runtime.h"
#include "graphrt/core/session.h"
#include "bench_util.h"

namespace graphrt {
namespace {

enum class Kind { kSoftmax, kLogSoftmax, kBnInference, kBnTraining, kLrn };

struct Case {
  std::string name;
  Kind kind;
  std::vector<int64_t> dims;  // as the graph sees them (NHWC or NCHW)
  bool nchw = false;
  // LRN's attrs (TF's names).
  int64_t radius = 5;
  float bias = 1, alpha = 1, beta = 0.5f;
};

std::vector<Case> MakeCases() {
  std::vector<Case> v;
  for (Kind k : {Kind::kSoftmax, Kind::kLogSoftmax})
    for (std::vector<int64_t> d : {std::vector<int64_t>{64, 10}, {256, 1000}, {32, 32000}}) {
      Case c;
      c.kind = k;
      c.dims = d;
      c.name = std::string(k == Kind::kSoftmax ? "Softmax" : "LogSoftmax") + "[" + std::to_string(d[0]) +
               "," + std::to_string(d[1]) + "]";
      v.push_back(c);
    }
  for (Kind k : {Kind::kBnInference, Kind::kBnTraining})
    for (bool nchw : {false, true})
      for (std::vector<int64_t> d : {std::vector<int64_t>{8, 112, 112, 64}, {32, 28, 28, 256}}) {
        Case c;
        c.kind = k;
        c.nchw = nchw;
        c.dims = nchw ? std::vector<int64_t>{d[0], d[3], d[1], d[2]} : d;
        c.name = std::string(k == Kind::kBnInference ? "BN-inf" : "BN-train") + (nchw ? " NCHW" : " NHWC") +
                 "[" + std::to_string(c.dims[0]) + "," + std::to_string(c.dims[1]) + "," +
                 std::to_string(c.dims[2]) + "," + std::to_string(c.dims[3]) + "]";
        v.push_back(c);
      }
  {
    Case c;
    c.kind = Kind::kLrn;
    c.dims = {8, 56, 56, 64};
    c.name = "LRN-tf r5 b1 a1 B.5 [8,56,56,64]";
    v.push_back(c);
    c.radius = 2;
    c.bias = 1;
    c.alpha = 1e-4f;
    c.beta = 0.75f;
    c.name = "LRN-alexnet r2 b1 a1e-4 B.75 [8,56,56,64]";
    v.push_back(c);
    c.bias = 2;
    c.name = "LRN-alexnet r2 b2 a1e-4 B.75 [8,56,56,64]";
    v.push_back(c);
    // TF's radius with AlexNet's exponent: oneDNN's jit takes any window
    // size but only beta 0.75 and 1.
    c.radius = 5;
    c.bias = 1;
    c.name = "LRN r5 b1 a1e-4 B.75 [8,56,56,64]";
    v.push_back(c);
  }
  return v;
}
const std::vector<Case>& Cases() {
  static const std::vector<Case> cases = MakeCases();
  return cases;
}

int64_t NumElements(const std::vector<int64_t>& d) {
  int64_t n = 1;
  for (int64_t x : d) n *= x;
  return n;
}
int64_t Channels(const Case& c) { return c.nchw ? c.dims[1] : c.dims.back(); }

// The case's inputs, the same for the session and oneDNN.
struct Inputs {
  std::vector<float> x, scale, offset, mean, var;
};
Inputs MakeInputs(const Case& c) {
  Inputs in;
  const bool softmax = c.kind == Kind::kSoftmax || c.kind == Kind::kLogSoftmax;
  in.x = bench::RandomFloats(static_cast<size_t>(NumElements(c.dims)), 3, softmax ? -8.f : -2.f, softmax ? 8.f : 3.f);
  const size_t C = static_cast<size_t>(Channels(c));
  in.scale = bench::RandomFloats(C, 4, 0.5f, 2.f);
  in.offset = bench::RandomFloats(C, 5, -1.f, 1.f);
  in.mean = bench::RandomFloats(C, 6, -0.5f, 0.5f);
  in.var = bench::RandomFloats(C, 7, 0.5f, 3.f);
  return in;
}

constexpr float kEpsilon = 0.001f;

std::string FloatConst(const std::string& name, const std::vector<float>& v) {
  return "node { name: '" + name + "' op: 'Const' attr { key: 'dtype' value { type: DT_FLOAT } } "
         "attr { key: 'value' value { tensor { dtype: DT_FLOAT tensor_shape { dim { size: " +
         std::to_string(v.size()) + " } } " + bench::FloatValText(v) + "} } } }\n";
}

proto::GraphDef CaseGraph(const Case& c, const Inputs& in) {
  std::string g = "node { name: 'x' op: 'Placeholder' attr { key: 'dtype' value { type: DT_FLOAT } } }\n";
  const std::string t = "attr { key: 'T' value { type: DT_FLOAT } } ";
  char buf[256];
  switch (c.kind) {
    case Kind::kSoftmax:
    case Kind::kLogSoftmax:
      g += "node { name: 'y' op: '" + std::string(c.kind == Kind::kSoftmax ? "Softmax" : "LogSoftmax") +
           "' input: 'x' " + t + "}\n";
      break;
    case Kind::kBnInference:
    case Kind::kBnTraining:
      g += FloatConst("scale", in.scale) + FloatConst("offset", in.offset) + FloatConst("mean", in.mean) +
           FloatConst("var", in.var);
      std::snprintf(buf, sizeof(buf), "attr { key: 'epsilon' value { f: %.9g } } ", kEpsilon);
      g += "node { name: 'y' op: 'FusedBatchNormV3' input: 'x' input: 'scale' input: 'offset' "
           "input: 'mean' input: 'var' " + t + "attr { key: 'U' value { type: DT_FLOAT } } " + buf +
           "attr { key: 'is_training' value { b: " + (c.kind == Kind::kBnTraining ? "true" : "false") +
           " } } attr { key: 'data_format' value { s: '" + (c.nchw ? "NCHW" : "NHWC") + "' } } }\n";
      break;
    case Kind::kLrn:
      std::snprintf(buf, sizeof(buf),
                    "attr { key: 'depth_radius' value { i: %lld } } attr { key: 'bias' value { f: %.9g } } "
                    "attr { key: 'alpha' value { f: %.9g } } attr { key: 'beta' value { f: %.9g } } ",
                    static_cast<long long>(c.radius), c.bias, c.alpha, c.beta);
      g += "node { name: 'y' op: 'LRN' input: 'x' " + t + buf + "}\n";
      break;
  }
  proto::GraphDef def;
  if (!ParseGraphDefText(g, &def).ok()) std::abort();
  return def;
}

// What a training step fetches: y and the running statistics; otherwise y.
std::vector<std::string> Fetches(const Case& c) {
  if (c.kind == Kind::kBnTraining) return {"y:0", "y:1", "y:2"};
  return {"y:0"};
}

Tensor FeedX(const Case& c, const Inputs& in) {
  Tensor x(GR_FLOAT, TensorShape(c.dims));
  std::copy(in.x.begin(), in.x.end(), x.data<float>());
  return x;
}

const char* kImplVars[] = {"GRAPHRT_NN_NORM_IMPL"};

// impl: 0 the kernels' default, 1 direct (ours), 2 oneDNN.
Status MakeSession(const Case& c, const Inputs& in, int threads, int impl, std::unique_ptr<Session>* s) {
  for (const char* v : kImplVars) {
    if (impl == 0) {
      unsetenv(v);
    } else {
      setenv(v, impl == 1 ? "direct" : "dnnl", 1);
    }
  }
  SessionOptions opts;
  opts.config.set_intra_op_parallelism_threads(threads);
  opts.config.set_inter_op_parallelism_threads(threads);
  Status st = NewSession(opts, s);
  if (st.ok()) st = (*s)->Create(CaseGraph(c, in));
  // Kernels are built by the first Run: the variables must still be set.
  std::vector<Tensor> out;
  if (st.ok()) st = (*s)->Run({{"x", FeedX(c, in)}}, Fetches(c), {}, &out);
  for (const char* v : kImplVars) unsetenv(v);
  return st;
}

// The session's outputs for the case (1 thread, default implementation),
// computed once per case: what oneDNN's outputs are checked against.
const std::vector<Tensor>& SessionReference(int case_index) {
  static std::map<int, std::vector<Tensor>> cache;
  auto it = cache.find(case_index);
  if (it != cache.end()) return it->second;
  const Case& c = Cases()[case_index];
  const Inputs in = MakeInputs(c);
  std::unique_ptr<Session> s;
  std::vector<Tensor> out;
  if (MakeSession(c, in, 1, 1, &s).ok()) {
    if (!s->Run({{"x", FeedX(c, in)}}, Fetches(c), {}, &out).ok()) out.clear();
  }
  return cache[case_index] = out;
}

// range(0): case; range(1): threads; range(2): impl (0 default, 1 direct, 2 oneDNN).
void BM_Session(benchmark::State& state) {
  const Case& c = Cases()[state.range(0)];
  const int threads = static_cast<int>(state.range(1));
  const int impl = static_cast<int>(state.range(2));
  const Inputs in = MakeInputs(c);
  std::unique_ptr<Session> s;
  Status st = MakeSession(c, in, threads, impl, &s);
  if (!st.ok()) {
    state.SkipWithError(("session setup failed: " + st.ToString()).c_str());
    return;
  }
  std::vector<std::pair<std::string, Tensor>> feeds = {{"x", FeedX(c, in)}};
  const std::vector<std::string> fetches = Fetches(c);
  std::vector<Tensor> out;
  for (auto _ : state) {
    out.clear();  // the outputs are freed before the next Run, as in a serving loop
    st = s->Run(feeds, fetches, {}, &out);
    if (!st.ok()) {
      state.SkipWithError(st.ToString().c_str());
      return;
    }
  }
  state.SetLabel(c.name);
}

// ------------------------------------------------------- direct oneDNN

constexpr int64_t kParallelMinElements = 32 * 1024;  // ops/common/cpu/parallel.h

using dnnl::memory;

const dnnl::engine& Engine() {
  static const dnnl::engine eng(dnnl::engine::kind::cpu, 0);
  return eng;
}

// One primitive over a part of the tensor: which part, and its arguments
// as offsets into the whole buffers.
struct Part {
  dnnl::primitive prim;
  memory::desc data_md;  // src and dst
  int64_t offset = 0;    // first element of the part in x / y
  int64_t c0 = 0;        // first channel (channel split)
  std::string impl;
};

memory::desc PlainDesc(const Case& c, const std::vector<int64_t>& dims_graph_order) {
  // oneDNN's logical order is N, C, spatial; the graph's is NHWC or NCHW.
  const std::vector<int64_t>& d = dims_graph_order;
  if (c.kind == Kind::kSoftmax || c.kind == Kind::kLogSoftmax)
    return memory::desc({d[0], d[1]}, memory::data_type::f32, memory::format_tag::ab);
  if (c.nchw) return memory::desc({d[0], d[1], d[2], d[3]}, memory::data_type::f32, memory::format_tag::nchw);
  return memory::desc({d[0], d[3], d[1], d[2]}, memory::data_type::f32, memory::format_tag::nhwc);
}

dnnl::primitive MakePrimitive(const Case& c, const memory::desc& md, const dnnl::engine& eng, std::string* impl) {
  switch (c.kind) {
    case Kind::kSoftmax: {
      dnnl::softmax_forward::primitive_desc pd({dnnl::prop_kind::forward_inference, md, 1}, eng);
      *impl = pd.impl_info_str();
      return dnnl::softmax_forward(pd);
    }
    case Kind::kLogSoftmax: {
      dnnl::logsoftmax_forward::primitive_desc pd({dnnl::prop_kind::forward_inference, md, 1}, eng);
      *impl = pd.impl_info_str();
      return dnnl::logsoftmax_forward(pd);
    }
    case Kind::kBnInference:
    case Kind::kBnTraining: {
      const bool train = c.kind == Kind::kBnTraining;
      auto flags = dnnl::normalization_flags::use_scale | dnnl::normalization_flags::use_shift;
      if (!train) flags = flags | dnnl::normalization_flags::use_global_stats;
      dnnl::batch_normalization_forward::primitive_desc pd(
          {train ? dnnl::prop_kind::forward_training : dnnl::prop_kind::forward_inference, md, kEpsilon, flags},
          eng);
      *impl = pd.impl_info_str();
      return dnnl::batch_normalization_forward(pd);
    }
    case Kind::kLrn: {
      // TF: x / (bias + alpha * sum)^beta over 2r+1 channels; oneDNN
      // divides its alpha by the window size n.
      const int64_t n = 2 * c.radius + 1;
      dnnl::lrn_forward::primitive_desc pd({dnnl::prop_kind::forward_inference, dnnl::algorithm::lrn_across_channels,
                                            md, n, c.alpha * static_cast<float>(n), c.beta, c.bias},
                                           eng);
      *impl = pd.impl_info_str();
      return dnnl::lrn_forward(pd);
    }
  }
  std::abort();
}

// The parts of the split mode: rows (softmax), batch images (inference
// batch norm, LRN) or channel blocks (training batch norm, whose
// statistics need the whole batch: a strided view of C/T channels).
std::vector<Part> MakeParts(const Case& c, int parts_wanted, const dnnl::engine& eng) {
  std::vector<Part> parts;
  const int64_t total = NumElements(c.dims);
  const int parts_n = total >= kParallelMinElements ? parts_wanted : 1;
  if (c.kind == Kind::kBnTraining && parts_n > 1) {
    const int64_t C = Channels(c);
    const int64_t N = c.dims[0];
    const int64_t H = c.nchw ? c.dims[2] : c.dims[1], W = c.nchw ? c.dims[3] : c.dims[2];
    const int64_t per = (C / parts_n + 15) / 16 * 16;
    for (int64_t c0 = 0; c0 < C; c0 += per) {
      const int64_t cb = std::min(per, C - c0);
      // Logical dims N, cb, H, W; strides of the whole tensor.
      const memory::dims strides = c.nchw ? memory::dims{C * H * W, H * W, W, 1} : memory::dims{H * W * C, 1, W * C, C};
      Part p;
      p.data_md = memory::desc({N, cb, H, W}, memory::data_type::f32, strides);
      p.offset = c.nchw ? c0 * H * W : c0;
      p.c0 = c0;
      p.prim = MakePrimitive(c, p.data_md, eng, &p.impl);
      parts.push_back(std::move(p));
    }
    return parts;
  }
  // LRN as the kernel sees it: rows of C channels ([rows, C, 1, 1] nhwc),
  // any number of rows per part.
  const bool lrn_rows = c.kind == Kind::kLrn && parts_n > 1;
  const int64_t outer = lrn_rows ? total / c.dims[3] : c.dims[0];
  const int64_t per = (outer + parts_n - 1) / parts_n;
  for (int64_t o0 = 0; o0 < outer; o0 += per) {
    std::vector<int64_t> d = lrn_rows ? std::vector<int64_t>{outer, 1, 1, c.dims[3]} : c.dims;
    d[0] = std::min(per, outer - o0);
    Part p;
    p.data_md = PlainDesc(c, d);
    p.offset = o0 * (total / outer);
    p.prim = MakePrimitive(c, p.data_md, eng, &p.impl);
    parts.push_back(std::move(p));
  }
  return parts;
}

struct DnnlBuffers {
  std::vector<float> x, y, scale, offset, mean, var;
};

void ExecutePart(const Case& c, const Part& p, DnnlBuffers* b, const dnnl::engine& eng, dnnl::stream& s) {
  memory src(p.data_md, eng, b->x.data() + p.offset);
  memory dst(p.data_md, eng, b->y.data() + p.offset);
  std::unordered_map<int, memory> args = {{DNNL_ARG_SRC, src}, {DNNL_ARG_DST, dst}};
  if (c.kind == Kind::kBnInference || c.kind == Kind::kBnTraining) {
    const int64_t cb = p.data_md.dims()[1];
    const memory::desc v({cb}, memory::data_type::f32, memory::format_tag::a);
    args.insert({DNNL_ARG_SCALE, memory(v, eng, b->scale.data() + p.c0)});
    args.insert({DNNL_ARG_SHIFT, memory(v, eng, b->offset.data() + p.c0)});
    args.insert({DNNL_ARG_MEAN, memory(v, eng, b->mean.data() + p.c0)});
    args.insert({DNNL_ARG_VARIANCE, memory(v, eng, b->var.data() + p.c0)});
  }
  p.prim.execute(s, args);
  s.wait();
}

// Compares oneDNN's outputs with the session's; "" when they agree.
std::string CheckAgainstSession(const Case& c, int case_index, const DnnlBuffers& b) {
  const std::vector<Tensor>& ref = SessionReference(case_index);
  if (ref.empty()) return "the session reference failed";
  auto cmp = [](const char* what, const float* got, const float* want, int64_t n, double tol) -> std::string {
    for (int64_t i = 0; i < n; ++i) {
      const double g = got[i], w = want[i];
      if (!(std::fabs(g - w) <= tol * std::max(1.0, std::fabs(w)))) {
        char buf[160];
        std::snprintf(buf, sizeof(buf), "oneDNN and graphrt disagree: %s[%lld] %.7g vs %.7g", what,
                      static_cast<long long>(i), g, w);
        return buf;
      }
    }
    return "";
  };
  // Training statistics are float sums over N*H*W elements in oneDNN
  // (double in graphrt): a looser bound there.
  const double tol = c.kind == Kind::kBnTraining ? 2e-4 : 2e-5;
  std::string e = cmp("y", b.y.data(), ref[0].data<float>(), ref[0].NumElements(), tol);
  if (!e.empty() || c.kind != Kind::kBnTraining) return e;
  // oneDNN's variance is the biased one; TF's batch_variance output is
  // Bessel-corrected.
  const int64_t C = Channels(c);
  const double n = static_cast<double>(NumElements(c.dims) / C);
  std::vector<float> unbiased(static_cast<size_t>(C));
  for (int64_t i = 0; i < C; ++i) unbiased[i] = static_cast<float>(b.var[i] * n / (n - 1));
  e = cmp("mean", b.mean.data(), ref[1].data<float>(), C, tol);
  if (e.empty()) e = cmp("variance", unbiased.data(), ref[2].data<float>(), C, tol);
  return e;
}

// range(0): case; range(1): threads; range(2): 0 split by us, 1 oneDNN's OpenMP.
void BM_Dnnl(benchmark::State& state) {
  const int case_index = static_cast<int>(state.range(0));
  const Case& c = Cases()[case_index];
  const int threads = static_cast<int>(state.range(1));
  const bool omp = state.range(2) != 0;
  const dnnl::engine& eng = Engine();
  const Inputs in = MakeInputs(c);
  DnnlBuffers b;
  b.x = in.x;
  b.y.assign(in.x.size(), 0.f);
  b.scale = in.scale;
  b.offset = in.offset;
  b.mean = in.mean;
  b.var = in.var;
  std::vector<Part> parts;
  try {
    bench::SetOmpThreads(omp ? threads : 1);  // primitives pick their blocking for this count
    parts = MakeParts(c, omp ? 1 : threads, eng);
  } catch (const dnnl::error& e) {
    bench::SetOmpThreads(1);
    state.SkipWithError((std::string("oneDNN: ") + e.what()).c_str());
    return;
  }
  const int nparts = static_cast<int>(parts.size());
  auto run_all = [&]() {
    if (nparts == 1) {
      thread_local dnnl::stream s(eng);
      ExecutePart(c, parts[0], &b, eng, s);
      return;
    }
#ifdef GRAPHRT_HAVE_OPENMP
#pragma omp parallel for num_threads(threads) schedule(static)
#endif
    for (int i = 0; i < nparts; ++i) {
      thread_local dnnl::stream s(eng);  // oneDNN runs single-threaded inside a parallel region
      ExecutePart(c, parts[i], &b, eng, s);
    }
  };
  run_all();
  const std::string bad = CheckAgainstSession(c, case_index, b);
  if (!bad.empty()) {
    bench::SetOmpThreads(1);
    state.SkipWithError(bad.c_str());
    return;
  }
  for (auto _ : state) run_all();
  bench::SetOmpThreads(1);
  state.SetLabel(c.name + " [" + parts[0].impl + (nparts > 1 ? " x" + std::to_string(nparts) : "") + "]");
}

void SessionArgs(benchmark::internal::Benchmark* b) {
  for (int64_t i = 0; i < static_cast<int64_t>(Cases().size()); ++i)
    for (int64_t threads : {1, 2})
      for (int64_t impl : {1, 2}) b->Args({i, threads, impl});
}
void DnnlArgs(benchmark::internal::Benchmark* b) {
  for (int64_t i = 0; i < static_cast<int64_t>(Cases().size()); ++i)
    for (int64_t threads : {1, 2})
      for (int64_t omp : {0, 1}) b->Args({i, threads, omp});
}

BENCHMARK(BM_Session)->Apply(SessionArgs)->ArgNames({"case", "threads", "impl"})->UseRealTime()->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_Dnnl)->Apply(DnnlArgs)->ArgNames({"case", "threads", "omp"})->UseRealTime()->Unit(benchmark::kMicrosecond);

// Prints every result and, at the end, the session's time over the direct
// oneDNN times per case (medians when repeated).
class RatioReporter : public benchmark::ConsoleReporter {
 public:
  void ReportRuns(const std::vector<Run>& runs) override {
    ConsoleReporter::ReportRuns(runs);
    for (const Run& r : runs) {
      if (r.error_occurred) continue;
      if (r.run_type == Run::RT_Iteration && r.repetitions <= 1) {
        times_[r.run_name.str()] = r.GetAdjustedRealTime();
      } else if (r.run_type == Run::RT_Aggregate && r.aggregate_name == "median") {
        times_[r.run_name.str()] = r.GetAdjustedRealTime();
      }
    }
  }
  void Finalize() override {
    ConsoleReporter::Finalize();
    std::printf("\nratios (time / time; below 1: the first is faster), medians in us:\n");
    std::printf("  %-44s %2s %9s %9s %9s %9s  %7s %7s %7s\n", "case", "T", "ours", "ours-dnnl", "dnnl-split",
                "dnnl-omp", "ours/sp", "ours/omp", "kdnnl/ours");
    for (int i = 0; i < static_cast<int>(Cases().size()); ++i)
      for (int threads : {1, 2}) {
        const std::string a = "case:" + std::to_string(i) + "/threads:" + std::to_string(threads);
        const double ours = Get("BM_Session/" + a + "/impl:1/real_time");
        const double kd = Get("BM_Session/" + a + "/impl:2/real_time");
        const double sp = Get("BM_Dnnl/" + a + "/omp:0/real_time");
        const double om = Get("BM_Dnnl/" + a + "/omp:1/real_time");
        if (ours <= 0) continue;
        std::printf("  %-44s %2d %9.1f %9.1f %9.1f %9.1f  %7.3f %7.3f %7.3f\n", Cases()[i].name.c_str(), threads,
                    ours, kd, sp, om, sp > 0 ? ours / sp : 0.0, om > 0 ? ours / om : 0.0,
                    kd > 0 ? kd / ours : 0.0);
      }
  }

 private:
  double Get(const std::string& k) const {
    auto it = times_.find(k);
    return it == times_.end() ? -1.0 : it->second;
  }
  std::map<std::string, double> times_;
};

}  // namespace
}  // namespace graphrt

int main(int argc, char** argv) {
  for (size_t i = 0; i < graphrt::Cases().size(); ++i)
    std::printf("case %zu: %s\n", i, graphrt::Cases()[i].name.c_str());
  graphrt::RatioReporter reporter;
  return graphrt::bench::RunWithPlugins(argc, argv, &reporter);
}
