// Parsing an Einsum equation ("bqhd,bkhd->bhqk", "...ij,...jk", "ii->i")
// into one label per dimension, shared by Einsum's shape function
// (einsum_ops.cc) and its CPU kernel (cpu/einsum_kernels.cc).
//
//   WEFT_ASSIGN_OR_RETURN(EinsumEquation eq,
//                         ParseEinsumEquation("ab,bc->ac", {2, 2}));
//   // eq.inputs == {{'a','b'}, {'b','c'}}, eq.output == {'a','c'}
//
// Letters are their own labels. An ellipsis stands for the dimensions the
// explicit labels leave over; those are right-aligned across operands, as
// NumPy broadcasting aligns them, and labelled kEllipsisLabel + j for the
// j-th of the widest ellipsis's dimensions (an operand with fewer gets the
// last ones). An ellipsis that the inputs have and the output lacks is
// summed over.
//
// Errors (INVALID_ARGUMENT, quoting the equation): no "->" (as TensorFlow's
// op, which leaves NumPy's implicit output to its Python wrapper), a
// character that is not a letter, a misplaced or repeated ellipsis, an
// operand count other than the ranks given, a rank that does not fit its
// subscripts, an output label repeated or absent from every input.
#ifndef WEFT_OPS_EINSUM_EQUATION_H_
#define WEFT_OPS_EINSUM_EQUATION_H_

#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"

namespace weft {

inline constexpr int kEllipsisLabel = 256;

struct EinsumEquation {
  std::vector<std::vector<int>> inputs;  // one label per input dimension
  std::vector<int> output;               // one label per output dimension
};

// `ranks` holds each operand's rank. An operand whose rank is unknown may
// be given as -1 when its subscripts have no ellipsis.
absl::StatusOr<EinsumEquation> ParseEinsumEquation(absl::string_view equation,
                                                   absl::Span<const int> ranks);

}  // namespace weft

#endif  // WEFT_OPS_EINSUM_EQUATION_H_
