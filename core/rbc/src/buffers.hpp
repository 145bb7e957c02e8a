#pragma once

#include <mpi.h>

#include <cstdint>
#include <cstring>
#include <utility>
#include <vector>

#include "bytes.hpp"
#include "mpi_error.hpp"

namespace rbc::detail {

// Size of a predefined datatype of a C type, whose layout the standard fixes (contiguous, extent
// = size = sizeof the C type), or 0 for any other datatype. Point-to-point and collectives ask
// for a datatype's layout on every message; these need no MPI call (three to four otherwise).
inline int predefined_size(MPI_Datatype t) {
  // The commonest first: each comparison costs a load of a library symbol's address.
  if (t == MPI_BYTE || t == MPI_DOUBLE) return t == MPI_BYTE ? 1 : 8;
  if (t == MPI_INT) return 4;
  if (t == MPI_INT64_T || t == MPI_UINT64_T || t == MPI_LONG_LONG || t == MPI_UNSIGNED_LONG_LONG) return 8;
  if (t == MPI_CHAR || t == MPI_SIGNED_CHAR || t == MPI_UNSIGNED_CHAR || t == MPI_INT8_T || t == MPI_UINT8_T) return 1;
  if (t == MPI_UNSIGNED || t == MPI_FLOAT || t == MPI_INT32_T || t == MPI_UINT32_T) return 4;
  if (t == MPI_LONG || t == MPI_UNSIGNED_LONG) return static_cast<int>(sizeof(long));
  if (t == MPI_SHORT || t == MPI_UNSIGNED_SHORT || t == MPI_INT16_T || t == MPI_UINT16_T) return 2;
  return 0;
}

// Layout facts of a datatype.
struct TypeInfo {
  explicit TypeInfo(MPI_Datatype t) : type(t) {
    if (const int named = predefined_size(t)) {
      extent = true_extent = size = named;
      return;
    }
    query();
  }
  // Bytes spanned by `count` elements laid out as in a user buffer.
  std::size_t span(int count) const {
    return count > 0 ? static_cast<std::size_t>(true_extent + (count - 1) * extent) : 0;
  }
  bool contiguous() const { return true_lb == 0 && extent == size && true_extent == size; }

  MPI_Datatype type;
  MPI_Aint extent = 0;
  MPI_Aint true_lb = 0;
  MPI_Aint true_extent = 0;
  int size = 0;

 private:
  // A derived datatype's layout, from MPI; out of line, so the predefined case above inlines.
  __attribute__((noinline)) void query() {
    MPI_Aint lb_ignored = 0;
    check_mpi(MPI_Type_get_extent(type, &lb_ignored, &extent), "MPI_Type_get_extent");
    check_mpi(MPI_Type_get_true_extent(type, &true_lb, &true_extent), "MPI_Type_get_true_extent");
    check_mpi(MPI_Type_size(type, &size), "MPI_Type_size");
  }
};

// Storage for `count` elements of a datatype, addressable like a user buffer (for receives and
// MPI_Reduce_local with derived types); taken from, and given back to, a scratch pool.
class TypedBuffer {
 public:
  TypedBuffer() = default;
  TypedBuffer(ScratchPool& pool, const TypeInfo& info, int count)
      : pool_(&pool), bytes_(pool.take(info.span(count))), true_lb_(info.true_lb) {}
  TypedBuffer(TypedBuffer&& other) noexcept
      : pool_(std::exchange(other.pool_, nullptr)), bytes_(std::move(other.bytes_)), true_lb_(other.true_lb_) {}
  TypedBuffer& operator=(TypedBuffer&& other) noexcept {
    if (this != &other) {
      release();
      pool_ = std::exchange(other.pool_, nullptr);
      bytes_ = std::move(other.bytes_);
      true_lb_ = other.true_lb_;
    }
    return *this;
  }
  TypedBuffer(const TypedBuffer&) = delete;
  TypedBuffer& operator=(const TypedBuffer&) = delete;
  ~TypedBuffer() { release(); }

  void* get() { return bytes_.data() - true_lb_; }

 private:
  void release() {
    if (pool_ != nullptr) pool_->give(std::move(bytes_));
    pool_ = nullptr;
  }

  ScratchPool* pool_ = nullptr;
  Bytes bytes_;
  MPI_Aint true_lb_ = 0;
};

// Copies count elements between buffers of the same datatype, touching only the bytes the
// datatype covers (gaps in the destination are left alone).
inline void copy_elements(const void* src, void* dst, int count, const TypeInfo& info) {
  if (count == 0 || src == dst) return;
  if (info.contiguous()) {
    std::memcpy(dst, src, static_cast<std::size_t>(info.size) * static_cast<std::size_t>(count));
    return;
  }
  int bytes = 0;
  check_mpi(MPI_Pack_size(count, info.type, MPI_COMM_SELF, &bytes), "MPI_Pack_size");
  std::vector<char> packed(static_cast<std::size_t>(bytes));
  int position = 0;
  check_mpi(MPI_Pack(src, count, info.type, packed.data(), bytes, &position, MPI_COMM_SELF), "MPI_Pack");
  const int packed_bytes = position;
  position = 0;
  check_mpi(MPI_Unpack(packed.data(), packed_bytes, &position, dst, count, info.type, MPI_COMM_SELF), "MPI_Unpack");
}

// Packs count elements at out (which must have info.size * count bytes free).
inline void pack_elements(const void* src, int count, const TypeInfo& info, char* out) {
  if (count == 0) return;
  const int bytes = info.size * count;
  if (info.contiguous()) {
    std::memcpy(out, src, static_cast<std::size_t>(bytes));
    return;
  }
  int position = 0;
  check_mpi(MPI_Pack(src, count, info.type, out, bytes, &position, MPI_COMM_SELF), "MPI_Pack");
}

inline void unpack_elements(const char* in, int count, const TypeInfo& info, void* dst) {
  if (count == 0) return;
  const int bytes = info.size * count;
  if (info.contiguous()) {
    std::memcpy(dst, in, static_cast<std::size_t>(bytes));
    return;
  }
  int position = 0;
  check_mpi(MPI_Unpack(in, bytes, &position, dst, count, info.type, MPI_COMM_SELF), "MPI_Unpack");
}

}  // namespace rbc::detail
