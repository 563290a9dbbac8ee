// The grpc:// session target without the rest of the distributed API (no
// generated protos): what a binding includes to make sure it is there.
#ifndef GRAPHRT_DISTRIBUTED_GRPC_SESSION_H_
#define GRAPHRT_DISTRIBUTED_GRPC_SESSION_H_

namespace graphrt {
namespace distributed {

// Makes "grpc://host:port" session targets available (NewSession). Loading
// libgraphrt_distributed does it too; a binding calls it so that the linker
// keeps the library even where it drops unreferenced ones (--as-needed).
void RegisterGrpcSessionFactory();

}  // namespace distributed
}  // namespace graphrt

#endif  // GRAPHRT_DISTRIBUTED_GRPC_SESSION_H_
