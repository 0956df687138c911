// GIF decoding (DecodeGif, and GIF data given to DecodeImage): not in this
// build yet; refused with UNIMPLEMENTED naming the node.
#include "absl/strings/str_cat.h"
#include "ops/cpu/image_codec.h"
#include "runtime/core/status.h"

namespace weft {

void DecodeGifImage(OpKernelContext* c, absl::string_view,
                    const DecodeRequest& r) {
  c->SetStatus(absl::UnimplementedError(absl::StrCat(
      "GIF images are not supported by Weft yet (", r.op, " node '", r.node,
      "')")));
}

}  // namespace weft
