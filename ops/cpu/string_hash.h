// The string hashes of TensorFlow's hashing ops, written here from the
// algorithms' published descriptions (bit-exact with TensorFlow's):
//
//   Fingerprint64(s)       FarmHash's Fingerprint64 (farmhashna::Hash64):
//                          StringToHashBucketFast, Fingerprint("farmhash64").
//   LegacyHash64(s)        MurmurHash64A with TensorFlow's seed 0xDECAFCAFFE:
//                          StringToHashBucket.
//   SipHash24(k0, k1, s)   SipHash-2-4, 64-bit output: StringToHashBucketStrong.
//
// Bytes are read little-endian whatever the host, as the algorithms define.
#ifndef WEFT_OPS_CPU_STRING_HASH_H_
#define WEFT_OPS_CPU_STRING_HASH_H_

#include <cstdint>

#include "absl/strings/string_view.h"

namespace weft {

uint64_t Fingerprint64(absl::string_view s);
uint64_t LegacyHash64(absl::string_view s);
uint64_t SipHash24(uint64_t k0, uint64_t k1, absl::string_view s);

}  // namespace weft

#endif  // WEFT_OPS_CPU_STRING_HASH_H_
