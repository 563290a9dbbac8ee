// Embeds graphrt: loads a model (a SavedModel directory or a GraphDef file),
// lists its inputs and outputs, runs it on the float values given on the
// command line, and prints the results.
//
//   embed MODEL [VALUE ...]
//
// Every input gets the values (float inputs only, to keep the example
// short); an input's unknown dimension takes whatever length makes them fit.
#include <cstdlib>
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include "graphrt/model.h"

namespace {

std::string ShapeString(const graphrt::PartialTensorShape& s) { return s.DebugString(); }

// The input's shape for `count` values: known dims as they are, the first
// unknown one sized to fit, others 1.
bool ShapeFor(const graphrt::PartialTensorShape& declared, int64_t count, graphrt::TensorShape* out) {
  if (declared.unknown_rank()) {
    *out = graphrt::TensorShape({count});
    return true;
  }
  int64_t known = 1;
  int unknown = -1;
  for (int i = 0; i < declared.rank(); ++i) {
    if (declared.dim_size(i) >= 0) known *= declared.dim_size(i);
    else if (unknown < 0) unknown = i;
  }
  std::vector<int64_t> dims = declared.dims();
  for (int64_t& d : dims)
    if (d < 0) d = 1;
  if (unknown >= 0) {
    if (known == 0 || count % known != 0) return false;
    dims[unknown] = count / known;
  } else if (known != count) {
    return false;
  }
  *out = graphrt::TensorShape(dims);
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::cerr << "usage: embed MODEL [VALUE ...]\n";
    return 2;
  }
  std::unique_ptr<graphrt::Model> model;
  graphrt::Status s = graphrt::Model::Load(argv[1], {}, &model);
  if (!s.ok()) {
    std::cerr << "loading " << argv[1] << ": " << s.ToString() << "\n";
    return 1;
  }
  for (const graphrt::TensorSpec& in : model->inputs())
    std::cout << "input  " << in.name << " (" << in.tensor << "): " << graphrt::DataTypeString(in.dtype) << " "
              << ShapeString(in.shape) << "\n";
  for (const graphrt::TensorSpec& out : model->outputs())
    std::cout << "output " << out.name << " (" << out.tensor << "): " << graphrt::DataTypeString(out.dtype) << " "
              << ShapeString(out.shape) << "\n";

  const int64_t count = argc - 2;
  std::vector<graphrt::Tensor> inputs;
  for (const graphrt::TensorSpec& in : model->inputs()) {
    graphrt::TensorShape shape;
    if (in.dtype != GR_FLOAT || !ShapeFor(in.shape, count, &shape)) {
      std::cerr << "input " << in.name << " (" << graphrt::DataTypeString(in.dtype) << " " << ShapeString(in.shape)
                << ") cannot take " << count << " float values\n";
      return 1;
    }
    // The tensor adopts this buffer without copying (it is 64-byte
    // aligned) and frees it when the last tensor using it is gone.
    const size_t bytes = static_cast<size_t>(count) * sizeof(float);
    auto* data = static_cast<float*>(std::aligned_alloc(64, (bytes + 63) / 64 * 64 + 64));
    for (int64_t i = 0; i < count; ++i) data[i] = std::strtof(argv[2 + i], nullptr);
    graphrt::Tensor t;
    s = graphrt::TensorFromMemory(GR_FLOAT, shape, data, bytes, [](void* p) { std::free(p); }, &t);
    if (!s.ok()) {
      std::free(data);
      std::cerr << s.ToString() << "\n";
      return 1;
    }
    inputs.push_back(std::move(t));
  }
  std::vector<graphrt::Tensor> outputs;
  s = model->Run(inputs, &outputs);
  if (!s.ok()) {
    std::cerr << "run: " << s.ToString() << "\n";
    return 1;
  }
  for (size_t i = 0; i < outputs.size(); ++i) {
    const graphrt::Tensor& t = outputs[i];
    std::cout << model->outputs()[i].name << " = " << t.shape().DebugString() << " [";
    if (t.dtype() == GR_FLOAT)
      for (int64_t k = 0; k < t.NumElements(); ++k) std::cout << (k ? ", " : "") << t.data<float>()[k];
    else
      std::cout << graphrt::DataTypeString(t.dtype()) << " values";
    std::cout << "]\n";
  }
  return 0;
}
