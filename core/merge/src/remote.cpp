#include "merge/detail/remote.hpp"

#include <algorithm>
#include <cstring>
#include <limits>
#include <string>

namespace merge::detail {

namespace {

// Largest element count of one MPI_Get (counts are int).
constexpr std::uint64_t kMaxChunk = std::uint64_t{1} << 30;

std::uint64_t balanced_offset(std::uint64_t total, int p, int rank) {
  const std::uint64_t q = total / static_cast<std::uint64_t>(p);
  const std::uint64_t rem = total % static_cast<std::uint64_t>(p);
  const auto r = static_cast<std::uint64_t>(rank);
  return r * q + std::min(r, rem);
}

Layout layout_of(std::uint64_t local, std::uint64_t total, bool balanced, MPI_Comm comm, int p) {
  if (balanced) return Layout::balanced(total, p);
  std::vector<std::uint64_t> counts(static_cast<std::size_t>(p));
  check_mpi(MPI_Allgather(&local, 1, MPI_UINT64_T, counts.data(), 1, MPI_UINT64_T, comm),
            "MPI_Allgather of block sizes");
  std::vector<std::uint64_t> offsets(counts.size() + 1, 0);
  for (std::size_t r = 0; r < counts.size(); ++r) offsets[r + 1] = offsets[r] + counts[r];
  return Layout::from_offsets(std::move(offsets));
}

}  // namespace

void check_mpi(int code, const char* what) {
  if (code == MPI_SUCCESS) return;
  char text[MPI_MAX_ERROR_STRING];
  int length = 0;
  MPI_Error_string(code, text, &length);
  throw Error(std::string("merge: ") + what + " failed: " + std::string(text, length));
}

void check_datatype(MPI_Datatype type, std::size_t element_size) {
  if (type == MPI_DATATYPE_NULL) throw Error("merge: the MPI datatype is MPI_DATATYPE_NULL");
  int size = 0;
  check_mpi(MPI_Type_size(type, &size), "MPI_Type_size");
  MPI_Aint lower = 0, extent = 0;
  check_mpi(MPI_Type_get_extent(type, &lower, &extent), "MPI_Type_get_extent");
  if (static_cast<std::size_t>(size) != element_size ||
      static_cast<std::size_t>(extent) != element_size) {
    throw Error("merge: the MPI datatype has size " + std::to_string(size) + " and extent " +
                std::to_string(extent) + " but the element type has " +
                std::to_string(element_size) + " bytes");
  }
}

Layout Layout::balanced(std::uint64_t total, int p) {
  Layout layout;
  layout.total_ = total;
  layout.p_ = p;
  return layout;
}

Layout Layout::from_offsets(std::vector<std::uint64_t> offsets) {
  Layout layout;
  layout.p_ = static_cast<int>(offsets.size()) - 1;
  layout.total_ = offsets.back();
  layout.offsets_ = std::move(offsets);
  return layout;
}

std::uint64_t Layout::offset(int rank) const {
  if (!offsets_.empty()) return offsets_[static_cast<std::size_t>(rank)];
  return balanced_offset(total_, p_, rank);
}

std::pair<int, std::uint64_t> Layout::locate(std::uint64_t index) const {
  if (!offsets_.empty()) {
    // The last PE whose block starts at or before index; empty blocks before it share its
    // offset, so this is the one that holds the element.
    const auto it = std::upper_bound(offsets_.begin(), offsets_.end(), index);
    const int rank = static_cast<int>(it - offsets_.begin()) - 1;
    return {rank, index - offsets_[static_cast<std::size_t>(rank)]};
  }
  const std::uint64_t q = total_ / static_cast<std::uint64_t>(p_);
  const std::uint64_t rem = total_ % static_cast<std::uint64_t>(p_);
  const std::uint64_t big = rem * (q + 1);  // elements on the PEs with q + 1 elements
  if (index < big) return {static_cast<int>(index / (q + 1)), index % (q + 1)};
  return {static_cast<int>(rem + (index - big) / q), (index - big) % q};
}

Distribution describe(std::uint64_t m_local, std::uint64_t n_local, std::int64_t output_count,
                      MPI_Comm comm) {
  if (comm == MPI_COMM_NULL) throw Error("merge: the communicator is MPI_COMM_NULL");
  Distribution dist;
  check_mpi(MPI_Comm_rank(comm, &dist.rank), "MPI_Comm_rank");
  check_mpi(MPI_Comm_size(comm, &dist.size), "MPI_Comm_size");
  const int p = dist.size;

  // Totals, plus how many PEs gave an output count and how many gave a bad one: every PE
  // learns about a bad argument anywhere and all throw together.
  const bool given = output_count >= 0;
  const bool bad = output_count < -1;
  const std::uint64_t out_local = given ? static_cast<std::uint64_t>(output_count) : 0;
  std::uint64_t local[5] = {m_local, n_local, out_local, given ? 1u : 0u, bad ? 1u : 0u};
  std::uint64_t total[5];
  check_mpi(MPI_Allreduce(local, total, 5, MPI_UINT64_T, MPI_SUM, comm), "MPI_Allreduce of sizes");
  if (total[4] != 0) {
    throw Error("merge: output_count must be -1 (exact balance) or a count >= 0; " +
                std::to_string(total[4]) + " PE(s) gave a negative count");
  }
  if (total[3] != 0 && total[3] != static_cast<std::uint64_t>(p)) {
    throw Error("merge: output_count was given on " + std::to_string(total[3]) + " of " +
                std::to_string(p) + " PEs; give it on all or on none");
  }
  const std::uint64_t merged = total[0] + total[1];
  if (merged < total[0]) throw Error("merge: m + n overflows 64 bits");
  if (total[3] != 0 && total[2] != merged) {
    throw Error("merge: the output counts sum to " + std::to_string(total[2]) + " but m + n = " +
                std::to_string(merged));
  }

  std::uint64_t offsets[3] = {0, 0, 0};
  check_mpi(MPI_Exscan(local, offsets, 3, MPI_UINT64_T, MPI_SUM, comm), "MPI_Exscan of sizes");
  if (dist.rank == 0) offsets[0] = offsets[1] = offsets[2] = 0;

  // Recognise exactly balanced inputs, the common case, so that no PE needs a table of p
  // offsets (which would cost O(p) memory per PE at large p).
  int balanced[2] = {
      offsets[0] == balanced_offset(total[0], p, dist.rank) &&
          offsets[0] + m_local == balanced_offset(total[0], p, dist.rank + 1),
      offsets[1] == balanced_offset(total[1], p, dist.rank) &&
          offsets[1] + n_local == balanced_offset(total[1], p, dist.rank + 1)};
  check_mpi(MPI_Allreduce(MPI_IN_PLACE, balanced, 2, MPI_INT, MPI_MIN, comm),
            "MPI_Allreduce of layout flags");
  dist.a = layout_of(m_local, total[0], balanced[0] != 0, comm, p);
  dist.b = layout_of(n_local, total[1], balanced[1] != 0, comm, p);

  if (given) {
    dist.out_begin = offsets[2];
    dist.out_end = offsets[2] + out_local;
  } else {
    dist.out_begin = balanced_offset(merged, p, dist.rank);
    dist.out_end = balanced_offset(merged, p, dist.rank + 1);
  }
  return dist;
}

RemoteInputs::RemoteInputs(const void* a, const void* b, std::size_t element_size,
                           MPI_Datatype type, const Distribution& dist, MPI_Comm comm,
                           const Options& options)
    : dist_(dist),
      comm_(comm),
      variant_(options.variant),
      element_size_(element_size),
      type_(type),
      local_{static_cast<const char*>(a), static_cast<const char*>(b)} {
  if (element_size > static_cast<std::size_t>(std::numeric_limits<int>::max())) {
    throw Error("merge: the element type is too large for a window displacement unit");
  }
  const bool fences = variant_ == Variant::fence_bound || variant_ == Variant::fence_allreduce;
  MPI_Info info = MPI_INFO_NULL;
  if (fences) {
    check_mpi(MPI_Info_create(&info), "MPI_Info_create");
    MPI_Info_set(info, "no_locks", "true");
  }
  const std::uint64_t counts[2] = {dist.a.count(dist.rank), dist.b.count(dist.rank)};
  for (int s = 0; s < 2; ++s) {
    const auto bytes = static_cast<MPI_Aint>(counts[s] * element_size);
    const int unit = static_cast<int>(element_size);
    if (options.windows == WindowMemory::in_place) {
      check_mpi(MPI_Win_create(const_cast<char*>(local_[s]), bytes, unit, info, comm,
                               &windows_[s]),
                "MPI_Win_create");
    } else {
      char* memory = nullptr;
      check_mpi(MPI_Win_allocate(bytes, unit, info, comm, &memory, &windows_[s]),
                "MPI_Win_allocate");
      if (bytes > 0) std::memcpy(memory, local_[s], static_cast<std::size_t>(bytes));
      local_[s] = memory;
    }
  }
  if (info != MPI_INFO_NULL) MPI_Info_free(&info);
  if (options.windows == WindowMemory::copy) {
    // Every PE must have copied its block before anyone reads it.
    check_mpi(MPI_Barrier(comm), "MPI_Barrier after filling the windows");
  }
  if (variant_ == Variant::rget_lock_all) {
    for (MPI_Win win : windows_) check_mpi(MPI_Win_lock_all(MPI_MODE_NOCHECK, win), "MPI_Win_lock_all");
    lock_all_open_ = true;
  }
}

RemoteInputs::~RemoteInputs() {
  if (!pending_.empty()) {
    MPI_Waitall(static_cast<int>(pending_.size()), pending_.data(), MPI_STATUSES_IGNORE);
  }
  if (lock_all_open_) {
    for (MPI_Win win : windows_) MPI_Win_unlock_all(win);
  }
  for (MPI_Win& win : windows_) {
    if (win != MPI_WIN_NULL) MPI_Win_free(&win);
  }
}

void RemoteInputs::open_epoch() {
  if (variant_ != Variant::fence_bound && variant_ != Variant::fence_allreduce) return;
  for (MPI_Win win : windows_) {
    check_mpi(MPI_Win_fence(MPI_MODE_NOPRECEDE | MPI_MODE_NOPUT, win), "MPI_Win_fence (open)");
  }
}

void RemoteInputs::close_epoch() {
  if (variant_ != Variant::fence_bound && variant_ != Variant::fence_allreduce) return;
  for (MPI_Win win : windows_) {
    check_mpi(MPI_Win_fence(MPI_MODE_NOSTORE | MPI_MODE_NOSUCCEED, win), "MPI_Win_fence (close)");
  }
}

void RemoteInputs::get(Sequence seq, std::uint64_t index, std::uint64_t count, void* out) {
  const Layout& layout = seq == seq_a ? dist_.a : dist_.b;
  char* target = static_cast<char*>(out);
  while (count > 0) {
    const auto [owner, local] = layout.locate(index);
    const std::uint64_t take = std::min(count, layout.count(owner) - local);
    get_from_owner(seq, owner, local, take, target);
    index += take;
    count -= take;
    target += take * element_size_;
  }
}

void RemoteInputs::get_from_owner(Sequence seq, int owner, std::uint64_t local,
                                  std::uint64_t count, char* out) {
  if (owner == dist_.rank) {
    std::memcpy(out, local_[seq] + local * element_size_, count * element_size_);
    return;
  }
  MPI_Win win = windows_[seq];
  while (count > 0) {
    const std::uint64_t chunk = std::min(count, kMaxChunk);
    const int c = static_cast<int>(chunk);
    const auto disp = static_cast<MPI_Aint>(local);
    switch (variant_) {
      case Variant::fence_bound:
      case Variant::fence_allreduce:
        check_mpi(MPI_Get(out, c, type_, owner, disp, c, type_, win), "MPI_Get");
        break;
      case Variant::lock_shared:
        check_mpi(MPI_Win_lock(MPI_LOCK_SHARED, owner, MPI_MODE_NOCHECK, win), "MPI_Win_lock");
        check_mpi(MPI_Get(out, c, type_, owner, disp, c, type_, win), "MPI_Get");
        check_mpi(MPI_Win_unlock(owner, win), "MPI_Win_unlock");
        break;
      case Variant::rget_lock_all: {
        MPI_Request request = MPI_REQUEST_NULL;
        check_mpi(MPI_Rget(out, c, type_, owner, disp, c, type_, win, &request), "MPI_Rget");
        pending_.push_back(request);
        break;
      }
    }
    local += chunk;
    count -= chunk;
    out += chunk * element_size_;
  }
}

void RemoteInputs::complete() {
  if (pending_.empty()) return;
  check_mpi(MPI_Waitall(static_cast<int>(pending_.size()), pending_.data(), MPI_STATUSES_IGNORE),
            "MPI_Waitall of MPI_Rget requests");
  pending_.clear();
}

}  // namespace merge::detail
