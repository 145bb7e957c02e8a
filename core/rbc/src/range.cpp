#include "rbc/range.hpp"

#include <string>

#include "rbc/error.hpp"

namespace rbc {

namespace {
std::string describe(int first, int last, int stride) {
  return "[" + std::to_string(first) + ".." + std::to_string(last) + " stride " +
         std::to_string(stride) + "]";
}
}  // namespace

void Range::invalid(int first, int last, int stride) {
  if (stride < 1) throw Error("invalid range " + describe(first, last, stride) + ": stride must be >= 1");
  if (first < 0) throw Error("invalid range " + describe(first, last, stride) + ": first must be >= 0");
  throw Error("invalid range " + describe(first, last, stride) + ": last must be >= first");
}

bool Range::contains(int parent_rank) const { return rank_of(parent_rank) >= 0; }

int Range::rank_of(int parent_rank) const {
  const long long offset = static_cast<long long>(parent_rank) - first_;
  if (offset < 0 || offset % stride_ != 0) return -1;
  const long long rank = offset / stride_;
  return rank < size_ ? static_cast<int>(rank) : -1;
}

void Range::outside(int rank, int size) {
  throw Error("rank " + std::to_string(rank) + " is outside the communicator of size " + std::to_string(size));
}

Range Range::sub(int first, int last, int stride) const {
  const Range local(first, last, stride);
  if (local.last() >= size_) {
    throw Error("sub-range " + describe(first, last, stride) +
                " does not fit a communicator of size " + std::to_string(size_));
  }
  const long long parent_stride = static_cast<long long>(stride_) * stride;
  return Range(at(local.first()), at(local.last()), static_cast<int>(parent_stride));
}

}  // namespace rbc
