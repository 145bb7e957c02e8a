#pragma once

// Most-significant-digit radix sort of arithmetic keys in their natural order. Keys are
// mapped to unsigned integers whose order is the keys' order (integers: flip the sign bit;
// IEEE floating point: flip all bits of negatives, the sign bit of the rest; descending:
// complement) and distributed by digits from the top (8 bits, fewer in small buckets), out of
// place between two buffers; a digit on which all keys of a bucket agree costs one counting
// pass and no move, and buckets of at most 24 keys finish by insertion sort. Uniform keys need
// about log_256(n / 8) scatter passes (two at n = 2^16), against eight for a
// least-significant-digit sort of 64-bit keys.

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <limits>
#include <memory>
#include <type_traits>
#include <vector>

namespace localsort::detail {

template <std::size_t Bytes>
struct UnsignedOf;
template <>
struct UnsignedOf<1> {
  using type = std::uint8_t;
};
template <>
struct UnsignedOf<2> {
  using type = std::uint16_t;
};
template <>
struct UnsignedOf<4> {
  using type = std::uint32_t;
};
template <>
struct UnsignedOf<8> {
  using type = std::uint64_t;
};

// Whether T has an order-preserving map to an unsigned integer of its size.
template <class T>
constexpr bool radix_key_type() {
  if constexpr (std::is_same<T, bool>::value) {
    return false;
  } else if constexpr (std::is_integral<T>::value) {
    return sizeof(T) == 1 || sizeof(T) == 2 || sizeof(T) == 4 || sizeof(T) == 8;
  } else if constexpr (std::is_floating_point<T>::value) {
    return std::numeric_limits<T>::is_iec559 && (sizeof(T) == 4 || sizeof(T) == 8);
  } else {
    return false;
  }
}

template <class T, bool Descending>
struct KeyMap {
  using U = typename UnsignedOf<sizeof(T)>::type;
  static constexpr U kSign = static_cast<U>(U(1) << (8 * sizeof(T) - 1));

  static U to_key(T value) {
    U bits;
    std::memcpy(&bits, &value, sizeof(T));
    U key;
    if constexpr (std::is_floating_point<T>::value) {
      key = (bits & kSign) ? static_cast<U>(~bits) : static_cast<U>(bits | kSign);
    } else if constexpr (std::is_signed<T>::value) {
      key = static_cast<U>(bits ^ kSign);
    } else {
      key = bits;
    }
    return Descending ? static_cast<U>(~key) : key;
  }

  static T from_key(U key) {
    if (Descending) key = static_cast<U>(~key);
    U bits;
    if constexpr (std::is_floating_point<T>::value) {
      bits = (key & kSign) ? static_cast<U>(key & ~kSign) : static_cast<U>(~key);
    } else if constexpr (std::is_signed<T>::value) {
      bits = static_cast<U>(key ^ kSign);
    } else {
      bits = key;
    }
    T value;
    std::memcpy(&value, &bits, sizeof(T));
    return value;
  }
};

constexpr int kDigitBits = 8;
constexpr std::size_t kBuckets = std::size_t(1) << kDigitBits;
// Buckets this small are finished by insertion sort on the mapped keys.
constexpr std::size_t kLeafSize = 24;

template <class U>
void insertion_sort_keys(U* a, std::size_t n) {
  for (std::size_t i = 1; i < n; ++i) {
    const U key = a[i];
    std::size_t j = i;
    while (j > 0 && a[j - 1] > key) {
      a[j] = a[j - 1];
      --j;
    }
    a[j] = key;
  }
}

// The digit width for a bucket of n keys: 8 bits while buckets stay large, fewer for small
// buckets, whose 256 counters would cost more than the keys (a bucket of 128 keys split 256 ways
// pays for 256 counters and ends in 128 tiny leaves; split 16 ways, in leaves of about 8, which
// insertion sort finishes cheaply). Measured (bench/localsort): uniform doubles at 2^20 and
// 64-bit integers at 2^22 went from 28 and 25 to 23 and 18 ns per element.
inline int digit_bits(std::size_t n) {
  int width = 0;
  while ((std::size_t(1) << width) < n) ++width;  // ceil(log2 n)
  return std::max(2, std::min(kDigitBits, width - 3));
}

// Sorts the keys a[0, n), which agree above their lowest `bits` bits, and writes them, mapped
// back, to out[0, n). b[0, n) is scratch.
template <class T, class Map, class U>
void msd_sort(U* a, U* b, std::size_t n, int bits, T* out) {
  while (true) {
    if (n <= kLeafSize) {
      insertion_sort_keys(a, n);
      for (std::size_t i = 0; i < n; ++i) out[i] = Map::from_key(a[i]);
      return;
    }
    // A bucket of equal keys (few distinct values) would otherwise cost one counting pass per
    // remaining digit; on distinct keys this stops at the second element.
    std::size_t differ = 1;
    while (differ < n && a[differ] == a[0]) ++differ;
    if (differ == n || bits == 0) {
      for (std::size_t i = 0; i < n; ++i) out[i] = Map::from_key(a[i]);
      return;
    }
    const int width = std::min(bits, digit_bits(n));
    const int shift = bits - width;
    const std::size_t buckets = std::size_t(1) << width;
    const U mask = static_cast<U>(buckets - 1);
    std::size_t counts[kBuckets];
    std::fill(counts, counts + buckets, std::size_t(0));
    for (std::size_t i = 0; i < n; ++i) ++counts[(a[i] >> shift) & mask];
    bool single = false;
    for (std::size_t d = 0; d < buckets; ++d) {
      if (counts[d] == n) single = true;
      if (counts[d] != 0) break;
    }
    if (single) {  // all keys share this digit
      bits = shift;
      continue;
    }
    std::size_t offsets[kBuckets];
    std::size_t sum = 0;
    for (std::size_t d = 0; d < buckets; ++d) {
      offsets[d] = sum;
      sum += counts[d];
    }
    for (std::size_t i = 0; i < n; ++i) {
      const U key = a[i];
      b[offsets[(key >> shift) & mask]++] = key;
    }
    std::size_t begin = 0;
    for (std::size_t d = 0; d < buckets; ++d) {
      const std::size_t count = counts[d];
      if (count == 0) continue;
      if (shift == 0) {  // the last digit: the bucket's keys are equal
        for (std::size_t i = begin; i < begin + count; ++i) out[i] = Map::from_key(b[i]);
      } else {
        msd_sort<T, Map, U>(b + begin, a + begin, count, shift, out + begin);
      }
      begin += count;
    }
    return;
  }
}

// Sorts [first, first + n) ascending by Map's keys (Descending folds into the map). The first
// distribution reads the caller's elements and writes mapped keys into one n-sized buffer;
// the buckets then recurse with a scratch buffer as large as the largest bucket (about n / 256
// for spread keys), so the sort allocates about n + n / 256 keys, not 2n.
template <class T, bool Descending>
void radix_sort_keys(T* first, std::size_t n) {
  using Map = KeyMap<T, Descending>;
  using U = typename Map::U;
  int shift = static_cast<int>(8 * sizeof(U)) - kDigitBits;
  std::size_t counts[kBuckets];
  while (true) {
    std::fill(counts, counts + kBuckets, std::size_t(0));
    for (std::size_t i = 0; i < n; ++i) {
      ++counts[(Map::to_key(first[i]) >> shift) & (kBuckets - 1)];
    }
    bool single = false;
    for (std::size_t d = 0; d < kBuckets; ++d) {
      if (counts[d] == n) single = true;
      if (counts[d] != 0) break;
    }
    if (!single) break;
    if (shift == 0) return;  // all keys equal bit for bit
    shift -= kDigitBits;
  }
  std::size_t offsets[kBuckets];
  std::size_t sum = 0, largest = 0;
  for (std::size_t d = 0; d < kBuckets; ++d) {
    offsets[d] = sum;
    sum += counts[d];
    largest = std::max(largest, counts[d]);
  }
  // Uninitialised buffers: every slot is written before it is read.
  std::unique_ptr<U[]> keys(new U[n]);
  for (std::size_t i = 0; i < n; ++i) {
    const U key = Map::to_key(first[i]);
    keys[offsets[(key >> shift) & (kBuckets - 1)]++] = key;
  }
  std::unique_ptr<U[]> scratch(new U[largest]);
  std::size_t begin = 0;
  for (std::size_t d = 0; d < kBuckets; ++d) {
    const std::size_t count = counts[d];
    if (count == 0) continue;
    if (shift == 0) {
      for (std::size_t i = begin; i < begin + count; ++i) first[i] = Map::from_key(keys[i]);
    } else {
      msd_sort<T, Map, U>(keys.get() + begin, scratch.get(), count, shift,
                          first + begin);
    }
    begin += count;
  }
}

}  // namespace localsort::detail
