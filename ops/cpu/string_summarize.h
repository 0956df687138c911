// A tensor's values as TensorFlow's printing ops write them (its
// Tensor::SummarizeValue): StringFormat and PrintV2 use the NumPy-like
// layout ("[[1 2 ... 9 10]\n [11 12 ... 19 20]]", the first and last
// `summarize` entries of every dim, strings quoted and C-escaped); Print
// (v1) the flat one ("[1 2 3...]"-style rows, strings bare). Numbers: the
// shortest of %.6g/%.9g (float) or %.15g/%.17g (double) that reads back,
// integers in decimal, bools as 1/0.
#ifndef WEFT_OPS_CPU_STRING_SUMMARIZE_H_
#define WEFT_OPS_CPU_STRING_SUMMARIZE_H_

#include <cstdint>
#include <string>

#include "runtime/core/tensor.h"

namespace weft {

// summarize < 0: every element.
std::string SummarizeTensor(const Tensor& t, int64_t summarize, bool print_v2);

// TensorFlow's StrCat of a float / double: "%.6g" ("%.15g") when it reads
// back exactly, else "%.9g" ("%.17g"); "nan" / "-nan".
std::string FloatText(float v);
std::string DoubleText(double v);

}  // namespace weft

#endif  // WEFT_OPS_CPU_STRING_SUMMARIZE_H_
