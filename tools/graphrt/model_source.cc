#include "model_source.h"

#include <algorithm>
#include <filesystem>

#include "graphrt/client/meta_graph.h"

namespace graphrt {
namespace cli {

void AddModelOptions(po::options_description* desc, bool for_run) {
  desc->add_options()
      ("tag", po::value<std::string>()->value_name("TAGS"),
       for_run ? "SavedModel: the MetaGraphDef's tag set, comma-separated (default: serve)"
               : "show only the MetaGraphDef with this tag set (comma-separated)")
      ("signature", po::value<std::string>()->value_name("KEY"),
       for_run ? "SavedModel or .meta: the signature whose input/output keys --feed and --fetch may "
                 "use, and whose outputs are fetched by default (default: serving_default)"
               : "show only this signature");
  if (for_run)
    desc->add_options()("checkpoint", po::value<std::string>()->value_name("PREFIX"),
                        ".meta file: restore the variables from checkpoint PREFIX through the file's saver");
}

std::set<std::string> ParseTags(const std::string& spec) {
  std::set<std::string> tags;
  size_t start = 0;
  while (start <= spec.size()) {
    size_t comma = spec.find(',', start);
    if (comma == std::string::npos) comma = spec.size();
    std::string t = spec.substr(start, comma - start);
    t.erase(0, t.find_first_not_of(' '));
    t.erase(t.find_last_not_of(' ') + 1);
    if (!t.empty()) tags.insert(t);
    start = comma + 1;
  }
  if (tags.empty()) tags.insert(kSavedModelTagServe);
  return tags;
}

bool IsMetaGraphFile(const std::string& path) {
  return path.size() > 5 && path.compare(path.size() - 5, 5, ".meta") == 0;
}

bool IsModelPath(const std::string& path) {
  std::error_code ec;
  return IsMetaGraphFile(path) || std::filesystem::is_directory(path, ec);
}

ModelSource::ModelSource(const po::variables_map& vm, const std::string& path, const SessionOptions& options)
    : path_(path) {
  const bool signature_given = vm.count("signature") > 0;
  signature_key_ = signature_given ? vm["signature"].as<std::string>() : kDefaultServingSignatureDefKey;
  if (IsMetaGraphFile(path)) {
    if (vm.count("tag")) throw UsageError("--tag applies to SavedModel directories, not to " + path);
    const std::string prefix = vm.count("checkpoint") ? vm["checkpoint"].as<std::string>() : "";
    Check(LoadMetaGraphAndCheckpoint(options, path, prefix, &bundle_));
  } else if (!MaybeSavedModelDirectory(path) && MaybeSessionBundleDirectory(path)) {
    // The older SessionBundle layout (export.meta + export checkpoint).
    if (vm.count("tag") || vm.count("checkpoint"))
      throw UsageError(path + " is a SessionBundle (export.meta): --tag and --checkpoint do not apply");
    Check(LoadSessionBundle(options, path, &bundle_));
  } else {
    if (vm.count("checkpoint"))
      throw UsageError("--checkpoint applies to .meta files; a SavedModel restores its own variables/");
    Check(LoadSavedModel(options, path, ParseTags(vm.count("tag") ? vm["tag"].as<std::string>() : ""), &bundle_));
  }
  const Status s = bundle_.GetSignature(signature_key_, &signature_);
  if (!s.ok()) {
    // Only a signature asked for by name must exist; without one, feeds and
    // fetches are tensor names.
    if (signature_given) Check(s, "--signature");
    no_signature_reason_ = s.message();
    signature_ = nullptr;
  }
}

std::string ModelSource::FeedTensor(const std::string& name) const {
  if (signature_ != nullptr) {
    auto it = signature_->inputs().find(name);
    if (it != signature_->inputs().end() && it->second.encoding_case() == proto::TensorInfo::kName)
      return it->second.name();
  }
  return name;
}

std::string ModelSource::FetchTensor(const std::string& name) const {
  if (signature_ != nullptr) {
    auto it = signature_->outputs().find(name);
    if (it != signature_->outputs().end() && it->second.encoding_case() == proto::TensorInfo::kName)
      return it->second.name();
  }
  return name;
}

std::vector<std::string> ModelSource::DefaultFetches() const {
  if (signature_ == nullptr)
    throw CliError(path_ + ": nothing to fetch by default: " + no_signature_reason_ +
                   "; name tensors with --fetch");
  std::vector<std::string> keys;
  for (const auto& [k, v] : signature_->outputs()) keys.push_back(k);
  std::sort(keys.begin(), keys.end());
  return keys;
}

}  // namespace cli
}  // namespace graphrt
