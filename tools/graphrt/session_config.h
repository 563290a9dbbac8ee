// The session settings of every command that makes a session (run, bench,
// dot --placed, train): a ConfigProto from --config, then the switches a
// TensorFlow user reaches for, each overriding what --config says.
#ifndef GRAPHRT_TOOLS_GRAPHRT_SESSION_CONFIG_H_
#define GRAPHRT_TOOLS_GRAPHRT_SESSION_CONFIG_H_

#include "cli.h"
#include "graphrt/core/session.h"
#include "graphrt/distributed/server.h"

namespace graphrt {
namespace cli {

// --target grpc://HOST:PORT (a master; commands that run nodes take their
// --target NODE for it too), --config, --threads, --intra-op-threads, --inter-op-threads,
// --memory-limit, --allow-soft-placement, --log-device-placement,
// --opt-level, --layout-optimizer, --remapping, --dependency-optimization,
// --allow-dir (the file-access policy: ConfigProto.graphrt_options).
void AddSessionConfigOptions(po::options_description* desc);

// --tls-cert, --tls-key, --tls-ca: mutual TLS with a cluster (a server's
// own, or a client's; AddSessionConfigOptions adds them).
void AddTlsOptions(po::options_description* desc);
distributed::TlsFiles TlsFromArgs(const po::variables_map& vm);
// A client's: makes them this process's (distributed::SetClientTls) when
// any is given. Throws CliError naming a file that cannot be read.
void UseClientTls(const po::variables_map& vm);

// Whether a --target value names a session target ("grpc://host:port")
// rather than a node to run.
bool IsSessionTarget(const std::string& target);

// The options they ask for (and, with a grpc:// target, UseClientTls).
// Throws UsageError for a bad value and CliError for a --config that cannot
// be read or parsed.
SessionOptions SessionOptionsFromArgs(const po::variables_map& vm);

}  // namespace cli
}  // namespace graphrt

#endif  // GRAPHRT_TOOLS_GRAPHRT_SESSION_CONFIG_H_
