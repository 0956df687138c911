// JSON text for the CLI's --format json output, in one place so that every
// command treats names the same way: graph names, ops and strings are bytes,
// not necessarily UTF-8, so invalid sequences print as U+FFFD instead of
// nlohmann::json throwing type_error (which would end the process).
#ifndef WEFT_TOOLS_JSON_TEXT_H_
#define WEFT_TOOLS_JSON_TEXT_H_

#include <string>

#include "nlohmann/json.hpp"

namespace weft {

// `indent` as nlohmann::json::dump: -1 for one line, else spaces per level.
inline std::string JsonText(const nlohmann::json& j, int indent = 2) {
  return j.dump(indent, ' ', /*ensure_ascii=*/false,
                nlohmann::json::error_handler_t::replace);
}

}  // namespace weft

#endif  // WEFT_TOOLS_JSON_TEXT_H_
