#include "ops/einsum_equation.h"

#include <algorithm>
#include <map>
#include <string>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"

namespace weft {
namespace {

// One operand's (or the output's) subscripts: its letters, and where the
// ellipsis sits among them (-1: none).
struct Subscripts {
  std::vector<int> letters;
  int ellipsis_at = -1;
};

absl::StatusOr<Subscripts> ParseSubscripts(absl::string_view text,
                                           absl::string_view equation) {
  Subscripts s;
  for (size_t i = 0; i < text.size(); ++i) {
    const char ch = text[i];
    if (ch == ' ') continue;
    if (ch == '.') {
      if (text.substr(i, 3) != "..." || s.ellipsis_at >= 0) {
        return absl::InvalidArgumentError(absl::StrCat(
            "Einsum equation '", equation,
            "': an ellipsis must be exactly '...' and appear at most once per "
            "operand"));
      }
      s.ellipsis_at = static_cast<int>(s.letters.size());
      i += 2;
      continue;
    }
    if (!absl::ascii_isalpha(static_cast<unsigned char>(ch))) {
      return absl::InvalidArgumentError(absl::StrCat(
          "Einsum equation '", equation, "': invalid character '",
          std::string(1, ch), "' (subscripts are letters and '...')"));
    }
    s.letters.push_back(static_cast<unsigned char>(ch));
  }
  return s;
}

// The labels of `s` with its ellipsis as `ellipsis_dims` dimensions, the
// last of a block of `widest`.
std::vector<int> Expand(const Subscripts& s, int ellipsis_dims, int widest) {
  std::vector<int> out;
  for (int i = 0; i <= static_cast<int>(s.letters.size()); ++i) {
    if (i == s.ellipsis_at) {
      for (int j = widest - ellipsis_dims; j < widest; ++j) {
        out.push_back(kEllipsisLabel + j);
      }
    }
    if (i < static_cast<int>(s.letters.size())) out.push_back(s.letters[i]);
  }
  return out;
}

}  // namespace

absl::StatusOr<EinsumEquation> ParseEinsumEquation(absl::string_view equation,
                                                   absl::Span<const int> ranks) {
  const size_t arrow = equation.find("->");
  if (arrow == absl::string_view::npos ||
      equation.find("->", arrow + 2) != absl::string_view::npos) {
    return absl::InvalidArgumentError(absl::StrCat(
        "Expecting exactly one '->' in einsum equation: ", equation));
  }
  const absl::string_view lhs = equation.substr(0, arrow);
  std::vector<absl::string_view> parts = absl::StrSplit(lhs, ',');
  if (parts.size() != ranks.size()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "Einsum equation '", equation, "' has ", parts.size(),
        " operands but the op has ", ranks.size(), " inputs"));
  }
  std::vector<Subscripts> subs;
  std::vector<int> ellipsis_dims;
  int widest = 0;
  for (size_t i = 0; i < parts.size(); ++i) {
    absl::StatusOr<Subscripts> s = ParseSubscripts(parts[i], equation);
    if (!s.ok()) return s.status();
    const int letters = static_cast<int>(s->letters.size());
    int dims = 0;
    if (s->ellipsis_at >= 0) {
      if (ranks[i] < 0) {
        return absl::InvalidArgumentError(absl::StrCat(
            "Einsum equation '", equation, "': operand ", i,
            " has an ellipsis and an unknown rank"));
      }
      dims = ranks[i] - letters;
    }
    if (dims < 0 || (s->ellipsis_at < 0 && ranks[i] >= 0 && ranks[i] != letters)) {
      return absl::InvalidArgumentError(absl::StrCat(
          "Einsum equation '", equation, "': operand ", i, " has rank ",
          ranks[i], " but its subscripts '", parts[i], "' name ", letters,
          " dimensions", s->ellipsis_at >= 0 ? " besides the ellipsis" : ""));
    }
    widest = std::max(widest, dims);
    ellipsis_dims.push_back(dims);
    subs.push_back(*std::move(s));
  }
  EinsumEquation eq;
  std::map<int, int> uses;  // letter -> how many times the inputs name it
  for (size_t i = 0; i < subs.size(); ++i) {
    eq.inputs.push_back(Expand(subs[i], ellipsis_dims[i], widest));
    for (int l : subs[i].letters) ++uses[l];
  }
  absl::StatusOr<Subscripts> out = ParseSubscripts(equation.substr(arrow + 2), equation);
  if (!out.ok()) return out.status();
  eq.output = Expand(*out, out->ellipsis_at >= 0 ? widest : 0, widest);
  for (int l : out->letters) {
    if (std::count(out->letters.begin(), out->letters.end(), l) > 1 || uses[l] == 0) {
      return absl::InvalidArgumentError(absl::StrCat(
          "Einsum equation '", equation, "': output subscript '",
          std::string(1, static_cast<char>(l)),
          uses[l] == 0 ? "' appears in no input" : "' appears more than once"));
    }
  }
  return eq;
}

}  // namespace weft
