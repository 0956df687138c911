// Scalar arithmetic "in T" for the image kernels that TensorFlow computes
// with Eigen's scalar types (RGBToHSV, HSVToRGB, the suppressions' scores):
// Rounded<T> holds a float and rounds every +, -, *, / result to T, as
// Eigen::half and bfloat16 do (each operation in float, rounded once);
// for float and double it is the plain type. So one template body gives
// TensorFlow's bits for every dtype:
//
//   using R = RoundedT<Half>;
//   R v = R::Of(x[i]);  R h = (v - m) * R::Of(6.0f);  out[i] = h.To<Half>();
#ifndef WEFT_OPS_CPU_IMAGE_ROUNDED_H_
#define WEFT_OPS_CPU_IMAGE_ROUNDED_H_

#include <cmath>
#include <type_traits>

#include "ops/cpu/float_convert.h"
#include "runtime/core/types.h"

namespace weft {

template <typename T>
struct Rounded {
  float v = 0;

  static float Round(float x) { return ToFloat(FromFloat<T>(x)); }
  static Rounded Of(float x) { return Rounded{Round(x)}; }
  static Rounded Of(T x) { return Rounded{ToFloat(x)}; }
  template <typename U>
  U To() const {
    return FromFloat<U>(v);
  }
  friend Rounded operator+(Rounded a, Rounded b) { return {Round(a.v + b.v)}; }
  friend Rounded operator-(Rounded a, Rounded b) { return {Round(a.v - b.v)}; }
  friend Rounded operator*(Rounded a, Rounded b) { return {Round(a.v * b.v)}; }
  friend Rounded operator/(Rounded a, Rounded b) { return {Round(a.v / b.v)}; }
  Rounded operator-() const { return {-v}; }
  Rounded& operator*=(Rounded b) { return *this = *this * b; }
  friend bool operator<(Rounded a, Rounded b) { return a.v < b.v; }
  friend bool operator>(Rounded a, Rounded b) { return a.v > b.v; }
  friend bool operator<=(Rounded a, Rounded b) { return a.v <= b.v; }
  friend bool operator>=(Rounded a, Rounded b) { return a.v >= b.v; }
  friend bool operator==(Rounded a, Rounded b) { return a.v == b.v; }
  friend Rounded Abs(Rounded a) { return {std::fabs(a.v)}; }
  friend Rounded Exp(Rounded a) { return {Round(std::exp(a.v))}; }
};

// A float or double as itself, with Rounded's small interface.
template <typename T>
struct Plain {
  T v = 0;

  template <typename S>
  static Plain Of(S x) {
    return Plain{static_cast<T>(x)};
  }
  template <typename U>
  U To() const {
    return static_cast<U>(v);
  }
  friend Plain operator+(Plain a, Plain b) { return {a.v + b.v}; }
  friend Plain operator-(Plain a, Plain b) { return {a.v - b.v}; }
  friend Plain operator*(Plain a, Plain b) { return {a.v * b.v}; }
  friend Plain operator/(Plain a, Plain b) { return {a.v / b.v}; }
  Plain operator-() const { return {-v}; }
  Plain& operator*=(Plain b) { return *this = *this * b; }
  friend bool operator<(Plain a, Plain b) { return a.v < b.v; }
  friend bool operator>(Plain a, Plain b) { return a.v > b.v; }
  friend bool operator<=(Plain a, Plain b) { return a.v <= b.v; }
  friend bool operator>=(Plain a, Plain b) { return a.v >= b.v; }
  friend bool operator==(Plain a, Plain b) { return a.v == b.v; }
  friend Plain Abs(Plain a) { return {std::abs(a.v)}; }
  friend Plain Exp(Plain a) { return {std::exp(a.v)}; }
};

template <typename T>
using RoundedT = std::conditional_t<std::is_same_v<T, Half> ||
                                        std::is_same_v<T, BFloat16>,
                                    Rounded<T>, Plain<T>>;

}  // namespace weft

#endif  // WEFT_OPS_CPU_IMAGE_ROUNDED_H_
