#include "runtime/core/dcheck.h"

#include <cstdio>
#include <cstdlib>

namespace weft::dcheck_internal {

void Fail(const char* file, int line, const char* condition) {
  std::fprintf(stderr, "%s:%d: WEFT_DCHECK failed: %s\n", file, line, condition);
  std::fflush(stderr);
  std::abort();  // a bug in Weft (see dcheck.h), never a user's input error
}

}  // namespace weft::dcheck_internal
