// TensorFlow's named type lists (its "numbertype", ...), spelled out as
// OpDefBuilder attr constraints, so that OpDefs match TensorFlow's.
#ifndef WEFT_OPS_TYPE_LISTS_H_
#define WEFT_OPS_TYPE_LISTS_H_

namespace weft {

// "numbertype": the real, complex and quantized numeric types.
inline constexpr char kNumberTypes[] =
    "{float, double, int32, uint8, int16, int8, complex64, int64, qint8, "
    "quint8, qint32, bfloat16, qint16, quint16, uint16, complex128, half, "
    "uint32, uint64}";

}  // namespace weft

#endif  // WEFT_OPS_TYPE_LISTS_H_
