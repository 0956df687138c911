// What Weft does to the sockets gRPC makes, through one socket mutator
// (gRPC's hook for the descriptors of its channels and servers):
//
//  - Unix sockets (the local sockets of local_socket.h) get a send buffer
//    of kLocalSocketSendBuffer (the kernel doubles it: 4 MiB, what TCP's
//    grow to), where the kernel's default is 208 KiB. A 256 MiB tensor
//    then crosses in tens of writes instead of about a thousand, each of
//    which woke both tasks: 92-95 ms a step against 105-126 ms (2-core
//    Xeon). The kernel caps it at net.core.wmem_max. TCP sockets are left
//    to the kernel's own tuning.
//  - A server's accepted connections are capped: one whose descriptor
//    number reaches ServerConnectionFdCap(), or one from an address that
//    holds kMaxServerConnectionsPerPeer open already, is shut down at once
//    (gRPC then closes it), and a line on stderr says so, at most every
//    10 s. At the process's open-file limit gRPC's listener stops accepting
//    for good (accept4 fails EMFILE and gRPC 1.51 gives the port up), so a
//    flood of connections would leave the task deaf; with the caps it
//    refuses the flood and serves on, other addresses included.
//    Descriptors are handed out lowest first, so a number past the cap
//    means at least that many are open. (A task's peers hold one or two
//    connections each.)
//
// The mutator's layout is gRPC 1.51's (an internal header); with another
// version neither applies.
#ifndef WEFT_DISTRIBUTED_RPC_SOCKET_OPTIONS_H_
#define WEFT_DISTRIBUTED_RPC_SOCKET_OPTIONS_H_

#include <memory>

#include "grpcpp/impl/server_builder_option.h"
#include "grpcpp/support/channel_arguments.h"

namespace weft {

inline constexpr int kLocalSocketSendBuffer = 2 << 20;
inline constexpr int kMaxServerConnectionsPerPeer = 128;

// For a channel's arguments, and for ServerBuilder::SetOption.
void AddSocketOptions(grpc::ChannelArguments* args);
std::unique_ptr<grpc::ServerBuilderOption> ServerSocketOptions();

// The descriptor number from which a server's new connections are refused:
// the open-file limit less an eighth (at least 256 kept for files and the
// process's own calls), and at most 16,384. Read once, at first use (weft
// raises the limit first thing).
int ServerConnectionFdCap();

}  // namespace weft

#endif  // WEFT_DISTRIBUTED_RPC_SOCKET_OPTIONS_H_
