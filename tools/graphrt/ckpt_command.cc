// `graphrt ckpt`: list, print and export the tensors of a TensorFlow
// checkpoint (V2 bundle or V1 TensorSlice files) through graphrt_bundle.
#include <cstring>
#include <filesystem>
#include <iostream>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "cli.h"
#include "graphrt/bundle/bundle.h"
#include "graphrt/core/npy.h"
#include "graphrt/core/types.h"

namespace graphrt {
namespace cli {

namespace {

namespace bd = bundle;

void CheckBundle(const bd::Status& s, const std::string& context) {
  if (!s.ok()) throw CliError(context + ": " + s.message);
}

// A checkpoint value as a core tensor (for printing and .npy writing).
Tensor ToTensor(const bd::TensorValue& v, const std::string& name) {
  DataType dt;
  Check(ValidateDataType(v.dtype, false, "tensor " + name, &dt));
  Tensor t(dt, TensorShape(v.dims));
  if (dt == GR_STRING) {
    for (size_t i = 0; i < v.strings.size(); ++i) t.set_string(static_cast<int64_t>(i), v.strings[i]);
  } else if (!v.bytes.empty()) {
    std::memcpy(t.raw_data(), v.bytes.data(), v.bytes.size());
  }
  return t;
}

// "w/.ATTRIBUTES/VARIABLE_VALUE" -> "w_.ATTRIBUTES_VARIABLE_VALUE.npy".
std::string NpyName(const std::string& tensor) {
  std::string s;
  for (char c : tensor) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' ||
                    c == '-' || c == '_';
    s += ok ? c : '_';
  }
  if (s.empty() || s[0] == '.') s = "_" + s;
  return s + ".npy";
}

std::string SlicesString(const bd::EntryInfo& e) {
  if (e.slices.size() == 1 && e.slices[0].IsFull()) return "";
  std::string s = " slices:";
  for (const bd::TensorSlice& sl : e.slices) s += " " + sl.DebugString();
  if (e.slices.empty()) s += " (none)";
  return s;
}

}  // namespace

int CkptCommand(const std::vector<std::string>& args) {
  const std::string usage =
      "usage: graphrt ckpt PREFIX [--tensor NAME] [--out DIR]\n"
      "\n"
      "Lists the tensors of the TensorFlow checkpoint PREFIX -- a V2 bundle\n"
      "(PREFIX.index + PREFIX.data-*) or V1 TensorSlice files (PREFIX itself,\n"
      "PREFIX-SSSSS-of-NNNNN, or a glob pattern) -- with dtype and shape.\n"
      "With --tensor, prints that tensor's values; with --out, writes each tensor\n"
      "(or only the --tensor one) as DIR/<name>.npy, '/' and other characters\n"
      "outside [A-Za-z0-9._-] in the name becoming '_'.\n"
      "\n"
      "examples:\n"
      "  graphrt ckpt model/variables/variables\n"
      "  graphrt ckpt model.ckpt-1000 --tensor dense/kernel\n"
      "  graphrt ckpt model.ckpt-1000 --out weights/\n";
  po::options_description visible("options");
  visible.add_options()("tensor", po::value<std::string>(), "print the values of this tensor")(
      "out", po::value<std::string>(), "write the tensors as .npy files into this directory")(
      "max-values", po::value<int64_t>()->default_value(1000), "print at most this many values of --tensor");
  po::options_description hidden;
  hidden.add_options()("prefix", po::value<std::string>());
  po::positional_options_description pos;
  pos.add("prefix", 1);
  po::variables_map vm;
  if (!ParseArgs("ckpt", args, visible, hidden, pos, usage, &vm)) return 0;
  if (!vm.count("prefix")) throw UsageError("ckpt: missing PREFIX (see 'graphrt ckpt --help')");
  const std::string prefix = vm["prefix"].as<std::string>();
  const int64_t max_values = vm["max-values"].as<int64_t>();
  if (max_values < 0) throw UsageError("ckpt: --max-values must be >= 0");

  std::unique_ptr<bd::CheckpointReader> reader;
  CheckBundle(bd::CheckpointReader::Open(prefix, &reader), "ckpt");
  const bd::EntryInfo* only = nullptr;
  if (vm.count("tensor")) {
    only = reader->Find(vm["tensor"].as<std::string>());
    if (!only) throw CliError("ckpt: Key " + vm["tensor"].as<std::string>() + " not found in checkpoint " + prefix);
  }
  std::cout << "checkpoint: " << prefix << " (" << (reader->is_v1() ? "V1 TensorSlice" : "V2 bundle") << ", "
            << reader->entries().size() << " tensors)\n";
  std::vector<const bd::EntryInfo*> shown;
  if (only) {
    shown.push_back(only);
  } else {
    for (const bd::EntryInfo& e : reader->entries()) shown.push_back(&e);
  }
  for (const bd::EntryInfo* e : shown)
    std::cout << e->name << "  " << bd::DTypeName(e->dtype) << "  " << bd::ShapeString(e->dims) << SlicesString(*e)
              << "\n";

  if (only) {
    bd::TensorValue v;
    CheckBundle(reader->Lookup(only->name, &v), "ckpt");
    const Tensor t = ToTensor(v, only->name);
    std::cout << "values: " << TensorValuesString(t, max_values);
    if (t.NumElements() > max_values) std::cout << " (" << t.NumElements() << " values)";
    std::cout << "\n";
  }
  if (vm.count("out")) {
    const std::string dir = vm["out"].as<std::string>();
    std::error_code ec;
    std::filesystem::create_directories(dir, ec);
    if (ec) throw CliError("--out " + dir + ": cannot create directory: " + ec.message());
    std::set<std::string> used;
    for (const bd::EntryInfo* e : shown) {
      const std::string file = NpyName(e->name);
      if (!used.insert(file).second)
        throw CliError("--out: tensors " + e->name + " and another one both map to the file name " + file);
      bd::TensorValue v;
      CheckBundle(reader->Lookup(e->name, &v), "ckpt");
      const std::string path = (std::filesystem::path(dir) / file).string();
      Check(WriteNpy(path, ToTensor(v, e->name)), "--out: writing " + e->name);
      std::cout << "wrote " << path << "\n";
    }
  }
  return 0;
}

}  // namespace cli
}  // namespace graphrt
