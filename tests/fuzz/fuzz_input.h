// FuzzInput: reads structured choices (integers in a range, picks from a
// list, byte strings) out of a fuzzer's input bytes, so that a target can
// build a graph rather than hope random bytes parse as one.
//
//   FuzzInput in(data, size);
//   const int rank = in.IntInRange(0, 4);
//   const DataType dtype = in.Pick(kDtypes);
//
// Once the bytes run out every read returns its smallest choice, so any input
// (the empty one too) decodes to a well-defined structure, and libFuzzer's
// mutations of a byte change one choice. This is the reading half of clang's
// FuzzedDataProvider, written here because that header ships only with
// clang's runtime, and the targets also build with GCC (the regular build
// replays their corpora in the test suite). Not thread-safe; cheap to copy.
#ifndef WEFT_TESTS_FUZZ_FUZZ_INPUT_H_
#define WEFT_TESTS_FUZZ_FUZZ_INPUT_H_

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

namespace weft::fuzz {

class FuzzInput {
 public:
  FuzzInput(const uint8_t* data, size_t size) : data_(data), size_(size) {}

  size_t remaining() const { return size_; }

  // Uniform-ish in [lo, hi] (lo <= hi), from as few bytes as the range needs.
  int64_t IntInRange(int64_t lo, int64_t hi) {
    const uint64_t span = static_cast<uint64_t>(hi) - static_cast<uint64_t>(lo);
    uint64_t value = 0;
    for (uint64_t seen = 0; seen < span && size_ > 0; seen = (seen << 8) | 0xff) {
      value = (value << 8) | data_[0];
      ++data_;
      --size_;
    }
    if (span != UINT64_MAX) value %= span + 1;
    return static_cast<int64_t>(static_cast<uint64_t>(lo) + value);
  }

  bool Bool() { return IntInRange(0, 1) == 1; }

  template <typename T>
  const T& Pick(const std::vector<T>& choices) {
    return choices[static_cast<size_t>(
        IntInRange(0, static_cast<int64_t>(choices.size()) - 1))];
  }

  // Up to `max_len` bytes, length chosen first.
  std::string Bytes(size_t max_len) {
    size_t len = static_cast<size_t>(IntInRange(0, static_cast<int64_t>(max_len)));
    if (len > size_) len = size_;
    std::string out(reinterpret_cast<const char*>(data_), len);
    data_ += len;
    size_ -= len;
    return out;
  }

  // A value of trivially copyable T from raw bytes (zero once exhausted).
  template <typename T>
  T Raw() {
    T value{};
    const size_t n = sizeof(T) < size_ ? sizeof(T) : size_;
    std::memcpy(&value, data_, n);
    data_ += n;
    size_ -= n;
    return value;
  }

 private:
  const uint8_t* data_;
  size_t size_;
};

}  // namespace weft::fuzz

#endif  // WEFT_TESTS_FUZZ_FUZZ_INPUT_H_
