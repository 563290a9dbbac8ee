#include "generated_inputs.h"

#include <map>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "graphrt/core/tensor_shape.h"
#include "graphrt/core/types.h"

namespace graphrt {
namespace cli {
namespace {

bool IsPlaceholderOp(const std::string& op) { return op == "Placeholder" || op == "PlaceholderV2"; }

std::string DimsString(const std::vector<int64_t>& dims) {
  std::string s = "[";
  for (size_t i = 0; i < dims.size(); ++i) s += (i ? "," : "") + std::to_string(dims[i]);
  return s + "]";
}

// One dim of a --shape value: digits only, below 2^62 (the shape check
// after it rejects products that overflow).
bool ParseDim(const std::string& s, int64_t* out) {
  if (s.empty() || s.size() > 18) return false;
  int64_t v = 0;
  for (char c : s) {
    if (c < '0' || c > '9') return false;
    v = v * 10 + (c - '0');
  }
  *out = v;
  return true;
}

// The placeholder's declared shape: unknown rank when it has none (or,
// before GraphDef version 22, an empty one, as TensorFlow reads it).
PartialTensorShape DeclaredShape(const proto::GraphDef& g, const proto::NodeDef& n, const std::string& graph_path) {
  auto it = n.attr().find("shape");
  if (it == n.attr().end() || it->second.value_case() != proto::AttrValue::kShape) return PartialTensorShape();
  const proto::TensorShapeProto& p = it->second.shape();
  if (g.versions().producer() <= 21 && !p.unknown_rank() && p.dim_size() == 0) return PartialTensorShape();
  PartialTensorShape s;
  Check(PartialTensorShape::FromProto(p, &s), "placeholder '" + n.name() + "' in " + graph_path);
  return s;
}

template <typename T, typename Dist>
void Fill(Tensor* t, std::mt19937_64* rng, Dist dist) {
  T* p = t->data<T>();
  for (int64_t i = 0, n = t->NumElements(); i < n; ++i) p[i] = static_cast<T>(dist(*rng));
}

// The dtypes FillRandom knows (not half, bfloat16, complex, quantized,
// string: none is a likely placeholder to bench without a --feed).
bool CanGenerate(DataType t) {
  switch (t) {
    case GR_FLOAT: case GR_DOUBLE: case GR_INT8: case GR_UINT8: case GR_INT16: case GR_UINT16:
    case GR_INT32: case GR_UINT32: case GR_INT64: case GR_UINT64: case GR_BOOL:
      return true;
    default:
      return false;
  }
}

void FillRandom(Tensor* t, std::mt19937_64* rng) {
  std::uniform_real_distribution<double> real(-1.0, 1.0);
  std::uniform_int_distribution<int> small(0, 9);
  switch (t->dtype()) {
    case GR_FLOAT: Fill<float>(t, rng, real); break;
    case GR_DOUBLE: Fill<double>(t, rng, real); break;
    case GR_INT8: Fill<int8_t>(t, rng, small); break;
    case GR_UINT8: Fill<uint8_t>(t, rng, small); break;
    case GR_INT16: Fill<int16_t>(t, rng, small); break;
    case GR_UINT16: Fill<uint16_t>(t, rng, small); break;
    case GR_INT32: Fill<int32_t>(t, rng, small); break;
    case GR_UINT32: Fill<uint32_t>(t, rng, small); break;
    case GR_INT64: Fill<int64_t>(t, rng, small); break;
    case GR_UINT64: Fill<uint64_t>(t, rng, small); break;
    case GR_BOOL: Fill<bool>(t, rng, std::uniform_int_distribution<int>(0, 1)); break;
    default: break;  // CanGenerate said no first
  }
}

}  // namespace

std::map<std::string, std::vector<int64_t>> ParseShapeSpecs(const std::vector<std::string>& specs) {
  std::map<std::string, std::vector<int64_t>> shapes;
  for (const std::string& spec : specs) {
    const size_t eq = spec.find('=');
    if (eq == std::string::npos || eq == 0)
      throw UsageError("--shape '" + spec + "': expected NAME=D0,D1,... (e.g. x=1,224,224,3)");
    const std::string name = spec.substr(0, eq);
    std::string dims = spec.substr(eq + 1);
    if (dims.size() >= 2 && dims.front() == '[' && dims.back() == ']') dims = dims.substr(1, dims.size() - 2);
    std::vector<int64_t> v;
    size_t start = 0;
    while (!dims.empty() && start <= dims.size()) {
      size_t comma = dims.find(',', start);
      if (comma == std::string::npos) comma = dims.size();
      int64_t d;
      if (!ParseDim(dims.substr(start, comma - start), &d))
        throw UsageError("--shape '" + spec + "': dims must be non-negative integers, e.g. x=1,224,224,3");
      v.push_back(d);
      start = comma + 1;
    }
    if (!shapes.emplace(name, v).second) throw UsageError("--shape '" + name + "' given twice");
  }
  return shapes;
}

std::set<std::string> NodesNeeded(const proto::GraphDef& g, const std::vector<std::string>& fetches,
                                  const std::vector<std::string>& targets,
                                  const std::set<std::string>& fed_nodes) {
  std::map<std::string, const proto::NodeDef*> by_name;
  for (const proto::NodeDef& n : g.node()) by_name.emplace(n.name(), &n);
  std::vector<std::string> stack;
  for (const std::string& f : fetches) stack.push_back(InputNodeName(f));
  stack.insert(stack.end(), targets.begin(), targets.end());
  std::set<std::string> needed;
  while (!stack.empty()) {
    const std::string name = std::move(stack.back());
    stack.pop_back();
    if (!needed.insert(name).second || fed_nodes.count(name)) continue;
    auto it = by_name.find(name);
    if (it == by_name.end()) continue;
    for (const std::string& in : it->second->input()) stack.push_back(InputNodeName(in));
  }
  return needed;
}

std::vector<GeneratedInput> GenerateInputs(const proto::GraphDef& g, const std::string& graph_path,
                                           const std::set<std::string>& needed,
                                           const std::set<std::string>& fed_nodes,
                                           const std::map<std::string, std::vector<int64_t>>& shapes,
                                           int64_t max_bytes, uint32_t seed) {
  for (const auto& [name, dims] : shapes) {
    const proto::NodeDef* n = FindNode(g, name);
    if (n == nullptr) throw CliError("--shape '" + name + "': no node named '" + name + "' in " + graph_path);
    if (!IsPlaceholderOp(n->op()) && n->op() != "PlaceholderWithDefault")
      throw CliError("--shape '" + name + "': node '" + name + "' is a " + n->op() + ", not a placeholder");
    if (fed_nodes.count(name))
      throw UsageError("--shape '" + name + "': '" + name + "' is fed with --feed; give one or the other");
  }
  std::mt19937_64 rng(seed);
  std::vector<GeneratedInput> out;
  int64_t total_bytes = 0;
  for (const proto::NodeDef& n : g.node()) {
    const auto given = shapes.find(n.name());
    const bool wanted = (IsPlaceholderOp(n.op()) && needed.count(n.name()) && !fed_nodes.count(n.name())) ||
                        (n.op() == "PlaceholderWithDefault" && given != shapes.end());
    if (!wanted) continue;
    const std::string what = "placeholder '" + n.name() + "'";
    auto dt = n.attr().find("dtype");
    if (dt == n.attr().end() || dt->second.value_case() != proto::AttrValue::kType)
      throw CliError(what + " in " + graph_path + " has no dtype attr");
    DataType dtype;
    Check(ValidateDataType(dt->second.type(), /*allow_ref=*/false, what, &dtype));
    const PartialTensorShape declared = DeclaredShape(g, n, graph_path);
    std::vector<int64_t> dims;
    if (given != shapes.end()) {
      dims = given->second;
      bool compatible = declared.unknown_rank() || declared.rank() == static_cast<int>(dims.size());
      for (int i = 0; compatible && i < declared.rank(); ++i)
        compatible = declared.dim_size(i) < 0 || declared.dim_size(i) == dims[i];
      if (!compatible)
        throw CliError("--shape " + n.name() + "=" + DimsString(dims) + " does not fit " + what + " of shape " +
                       declared.DebugString());
    } else if (declared.unknown_rank()) {
      throw CliError(what + " has an unknown shape: give it with --shape " + n.name() +
                     "=D0,D1,... (or feed it with --feed)");
    } else {
      dims = declared.dims();
      for (int i = 0; i < declared.rank(); ++i)
        if (dims[i] < 0)
          throw CliError(what + " has shape " + declared.DebugString() + " with dim " + std::to_string(i) +
                         " unknown: give its size with --shape " + n.name() + "=D0,D1,... (or feed it with --feed)");
    }
    TensorShape shape;
    Check(TensorShape::FromDims(dims.data(), static_cast<int>(dims.size()), &shape), "--shape for " + what);
    if (!CanGenerate(dtype))
      throw CliError("cannot generate values of dtype " + DataTypeString(dtype) + " for " + what +
                     ": feed it with --feed NAME=FILE.npy");
    const int64_t element_bytes = static_cast<int64_t>(DataTypeSize(dtype));
    // num_elements <= 2^58 (FromDims) and element_bytes <= 16: no overflow.
    total_bytes += shape.num_elements() * element_bytes;
    if (total_bytes > max_bytes)
      throw CliError("generated inputs would take " + HumanBytes(total_bytes) + " (at " + what + " " +
                     shape.DebugString() + "), more than the " + HumanBytes(max_bytes) +
                     " allowed; use smaller --shape values or raise --memory-limit");
    GeneratedInput in{n.name() + ":0", Tensor()};
    Check(Tensor::Allocate(HostAllocator(), dtype, shape, &in.value), "generating " + what);
    FillRandom(&in.value, &rng);
    out.push_back(std::move(in));
  }
  return out;
}

}  // namespace cli
}  // namespace graphrt
