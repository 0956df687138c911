// Transfer ops: _Send and _Recv move one tensor between two devices (or
// between a client and a device) through the step's rendezvous. The
// partitioner inserts them in pairs on every edge that crosses devices; the
// _Host variants are the same transfer for host-memory tensors on an
// accelerator. Their OpDefs are TensorFlow's, so partition graphs written by
// Weft and by TensorFlow read the same.
//
// Attrs shared by both ends (they name the rendezvous key, see
// runtime/core/rendezvous.h): tensor_name, send_device, send_device_incarnation,
// recv_device, and client_terminated (true when the other end is the client
// feeding or fetching, not another partition).
#include <string>

#include "ops/framework/op_def_builder.h"
#include "ops/framework/shape_inference.h"
#include "ops/registration.h"

namespace weft {
namespace {

absl::Status NoOutputs(InferenceContext*) { return absl::OkStatus(); }

OpDefBuilder TransferAttrs(OpDefBuilder b) {
  return b.Attr("tensor_name: string")
      .Attr("send_device: string")
      .Attr("send_device_incarnation: int")
      .Attr("recv_device: string")
      .Attr("client_terminated: bool = false")
      .SetIsStateful();
}

}  // namespace

void RegisterSendRecvOps(OpRegistry* r) {
  for (const char* op : {"_Send", "_HostSend"}) {
    r->Register(
        TransferAttrs(OpDefBuilder(op).Input("tensor: T").Attr("T: type")),
        NoOutputs);
  }
  // The receiving end cannot know the shape statically.
  for (const char* op : {"_Recv", "_HostRecv"}) {
    r->Register(TransferAttrs(OpDefBuilder(op)
                                  .Output("tensor: tensor_type")
                                  .Attr("tensor_type: type"))
                    .SetIsDistributedCommunication(),
                UnknownShape);
  }
}

}  // namespace weft
