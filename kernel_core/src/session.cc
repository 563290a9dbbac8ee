#include "graphrt/core/session.h"

#include <map>
#include <mutex>

namespace graphrt {
namespace {

struct FactoryTable {
  std::mutex mu;
  std::map<std::string, std::unique_ptr<SessionFactory>> by_prefix;
};

FactoryTable& Factories() {
  static FactoryTable* t = new FactoryTable();
  return *t;
}

}  // namespace

void RegisterDirectSessionFactory();  // direct_session.cc

void RegisterSessionFactory(const std::string& target_prefix, std::unique_ptr<SessionFactory> f) {
  FactoryTable& t = Factories();
  std::lock_guard<std::mutex> lock(t.mu);
  t.by_prefix[target_prefix] = std::move(f);
}

Status NewSession(const SessionOptions& options, std::unique_ptr<Session>* out) {
  static std::once_flag builtin;
  std::call_once(builtin, RegisterDirectSessionFactory);
  FactoryTable& t = Factories();
  SessionFactory* best = nullptr;
  size_t best_len = 0;
  {
    std::lock_guard<std::mutex> lock(t.mu);
    for (auto& [prefix, f] : t.by_prefix) {
      const bool match = prefix.empty() ? options.target.empty() : options.target.rfind(prefix, 0) == 0;
      if (match && (best == nullptr || prefix.size() >= best_len)) {
        best = f.get();
        best_len = prefix.size();
      }
    }
  }
  if (best == nullptr)
    return errors::NotFound("No session factory registered for target '", options.target,
                            "' (\"\" and \"direct://\" run in process; other targets need a plugin)");
  return best->NewSession(options, out);
}

}  // namespace graphrt
