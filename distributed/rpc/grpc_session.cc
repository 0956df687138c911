#include "distributed/rpc/grpc_session.h"

#include <utility>

#include "distributed/client_session.h"
#include "distributed/rpc/grpc_master_client.h"

namespace weft {

std::unique_ptr<Session> NewGrpcSession(
    const std::string& address, const SessionOptions& options,
    std::shared_ptr<const Security> security, GrpcSessionWaits waits) {
  auto master =
      std::make_shared<GrpcMasterClient>(address, 1 << 30, std::move(security));
  if (waits.log) master->ReportWaits(waits.report_every, std::move(waits.log));
  ClientSessionOptions client;
  client.call_timeout = waits.call_timeout;
  return NewClientSession(std::move(master), options, client);
}

}  // namespace weft
