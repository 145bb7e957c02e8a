#pragma once

// The one text of robust hypercube quicksort, generic over the element type, the comparator and
// the communication layer (RbcLayer or MpiLayer: rank, size, isend, probe_count, recv, half,
// prefix). See hypercube.hpp for the algorithm and its guarantees.

#include <mpi.h>

#include <algorithm>
#include <climits>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "cost/charge.hpp"
#include "hypercube/options.hpp"
#include "inputs/rng.hpp"
#include "localsort/localsort.hpp"
#include "localsort/merge.hpp"

namespace hypercube::detail {

// Each phase has its own tag; the subcube communicators keep levels apart.
enum Tag : int { kFoldTag = 1, kShuffleTag = 2, kSampleTag = 3, kDataTag = 4 };

// A committed contiguous datatype of `bytes` bytes, freed on destruction: elements travel as
// raw bytes, and counts stay element counts.
class ByteType {
 public:
  explicit ByteType(std::size_t bytes) {
    if (MPI_Type_contiguous(static_cast<int>(bytes), MPI_BYTE, &type_) != MPI_SUCCESS) {
      throw std::runtime_error("hypercube: MPI_Type_contiguous failed");
    }
    if (MPI_Type_commit(&type_) != MPI_SUCCESS) {
      MPI_Type_free(&type_);
      throw std::runtime_error("hypercube: MPI_Type_commit failed");
    }
  }
  ByteType(const ByteType&) = delete;
  ByteType& operator=(const ByteType&) = delete;
  ~ByteType() { MPI_Type_free(&type_); }
  MPI_Datatype get() const { return type_; }

 private:
  MPI_Datatype type_ = MPI_DATATYPE_NULL;
};

inline int message_count(std::size_t count) {
  if (count > static_cast<std::size_t>(INT_MAX)) {
    throw std::length_error("hypercube: a single message would hold " + std::to_string(count) +
                            " elements, more than MPI's int count allows");
  }
  return static_cast<int>(count);
}

// Sends [send, send + count) to `partner` and receives the partner's message of the same tag,
// whatever its length, into `received`. Blocks in probe / recv / wait, never polls.
template <class Layer, class T>
void exchange(const Layer& layer, const T* send, std::size_t count, MPI_Datatype type, int partner,
              int tag, std::vector<T>& received) {
  auto pending = layer.isend(send, message_count(count), type, partner, tag);
  const int incoming = layer.probe_count(partner, tag, type);
  received.resize(static_cast<std::size_t>(incoming));
  layer.recv(received.data(), incoming, type, partner, tag);
  pending.wait();
}

// The same for messages known to hold at most `capacity` elements: one receive into a buffer
// of that size, no probe.
template <class Layer, class T>
void exchange_bounded(const Layer& layer, const T* send, std::size_t count, std::size_t capacity,
                      MPI_Datatype type, int partner, int tag, std::vector<T>& received) {
  auto pending = layer.isend(send, message_count(count), type, partner, tag);
  received.resize(capacity);
  const int incoming =
      layer.recv_bounded(received.data(), message_count(capacity), type, partner, tag);
  received.resize(static_cast<std::size_t>(incoming));
  pending.wait();
}

// An element with its position: (key, rank in the subcube, local index) orders all elements
// of a level totally, so equal keys can be split anywhere. As a pivot sample it stands for
// `weight` elements around it.
template <class T>
struct Sample {
  T key;
  std::int64_t rank;
  std::int64_t index;
  std::int64_t weight;
};

template <class T, class Less>
struct SampleLess {
  Less less;
  bool operator()(const Sample<T>& a, const Sample<T>& b) const {
    if (less(a.key, b.key)) return true;
    if (less(b.key, a.key)) return false;
    if (a.rank != b.rank) return a.rank < b.rank;
    return a.index < b.index;
  }
};

// The sample whose weight interval holds position `target` of a sorted weighted list.
template <class T>
std::size_t covering(const std::vector<Sample<T>>& samples, std::int64_t target) {
  std::int64_t cumulative = 0;
  for (std::size_t k = 0; k < samples.size(); ++k) {
    cumulative += samples[k].weight;
    if (target < cumulative) return k;
  }
  return samples.size() - 1;
}

// Weighted median of medians over the subcube; empty if the whole subcube holds no element.
//
// Each PE cuts its sorted data into c = min(cap, m) equal slices and offers each slice's middle
// element, weighted by the slice size. A butterfly merges the lists pairwise; a merged list of
// more than cap samples is resampled to cap samples at the midpoints of cap equal slices of its
// total weight. The result depends only on the merged multiset, so both partners (and after
// the last round all PEs of the subcube) hold the same list. Weights make PEs count by their
// data, not by their sample count: without them, duplicate-heavy inputs (where the tie-break by
// rank decides) drift further from the median at every level.
template <class Layer, class T, class Less>
std::optional<Sample<T>> select_pivot(const Layer& layer, const std::vector<T>& data,
                                      const Options& options, const Less& less,
                                      MPI_Datatype sample_type) {
  const std::size_t cap = static_cast<std::size_t>(options.samples_per_pe);
  const std::size_t m = data.size();
  const std::size_t c = std::min(cap, m);
  std::vector<Sample<T>> samples, received, merged;
  samples.reserve(c);
  for (std::size_t t = 0; t < c; ++t) {
    const std::size_t begin = t * m / c, end = (t + 1) * m / c;
    const std::size_t index = (begin + end) / 2;
    samples.push_back({data[index], layer.rank(), static_cast<std::int64_t>(index),
                       static_cast<std::int64_t>(end - begin)});
  }
  const SampleLess<T, Less> sample_less{less};
  for (int bit = 1; bit < layer.size(); bit <<= 1) {
    exchange_bounded(layer, samples.data(), samples.size(), cap, sample_type, layer.rank() ^ bit,
                     kSampleTag, received);
    merged.resize(samples.size() + received.size());
    localsort::merge(samples.data(), samples.size(), received.data(), received.size(), merged.data(),
                     sample_less);
    cost::charge(cost::Kernel::merge, merged.size());
    if (merged.size() <= cap) {
      samples.swap(merged);
      continue;
    }
    std::int64_t total = 0;
    for (const auto& sample : merged) total += sample.weight;
    const auto n = static_cast<std::int64_t>(cap);
    samples.clear();
    // One pass: slice midpoints increase, so the covering sample only moves forward.
    std::size_t k = 0;
    std::int64_t covered = merged[0].weight;  // weight of merged[0..k]
    for (std::int64_t t = 0; t < n; ++t) {
      const std::int64_t begin = t * total / n, end = (t + 1) * total / n;
      if (end == begin) continue;  // fewer elements than samples: no empty slices
      const std::int64_t middle = (begin + end) / 2;
      while (covered <= middle && k + 1 < merged.size()) covered += merged[++k].weight;
      Sample<T> picked = merged[k];
      picked.weight = end - begin;
      samples.push_back(picked);
    }
  }
  if (samples.empty()) return std::nullopt;
  std::int64_t total = 0;
  for (const auto& sample : samples) total += sample.weight;
  return samples[covering(samples, total / 2)];
}

// Number of local elements (a prefix of the sorted data) that are <= pivot in the
// (key, rank, index) order.
template <class T, class Less>
std::size_t split_point(const std::vector<T>& data, const Sample<T>& pivot, int rank,
                        const Less& less) {
  if (rank < pivot.rank) {
    return static_cast<std::size_t>(
        std::upper_bound(data.begin(), data.end(), pivot.key, less) - data.begin());
  }
  if (rank > pivot.rank) {
    return static_cast<std::size_t>(
        std::lower_bound(data.begin(), data.end(), pivot.key, less) - data.begin());
  }
  return static_cast<std::size_t>(pivot.index) + 1;
}

class PhaseClock {
 public:
  explicit PhaseClock(double& sink) : sink_(sink), start_(MPI_Wtime()) {}
  ~PhaseClock() { sink_ += MPI_Wtime() - start_; }

 private:
  double& sink_;
  double start_;
};

template <class T, class Less, class Layer>
void sort(std::vector<T>& data, Layer top, const Options& options, Less less,
          PhaseTimes* times_out) {
  static_assert(std::is_trivially_copyable<T>::value,
                "hypercube::sort moves elements as bytes: T must be trivially copyable");
  static_assert(std::is_default_constructible<T>::value,
                "hypercube::sort needs a default constructible T for receive buffers");
  if (options.samples_per_pe < 1) {
    throw std::invalid_argument("hypercube: samples_per_pe must be at least 1, got " +
                                std::to_string(options.samples_per_pe));
  }
  PhaseTimes times;
  const double start = MPI_Wtime();
  const ByteType element(sizeof(T));
  const ByteType sample_type(sizeof(Sample<T>));
  const int p = top.size();
  const int rank = top.rank();
  int q = 1;
  while (q <= p / 2) q *= 2;
  std::vector<T> received;

  std::optional<Layer> cube;
  if (q != p) {
    {
      PhaseClock clock(times.fold);
      if (rank >= q) {
        top.isend(data.data(), message_count(data.size()), element.get(), rank - q, kFoldTag)
            .wait();
        std::vector<T>().swap(data);
      } else if (rank + q < p) {
        const int incoming = top.probe_count(rank + q, kFoldTag, element.get());
        received.resize(static_cast<std::size_t>(incoming));
        top.recv(received.data(), incoming, element.get(), rank + q, kFoldTag);
        data.insert(data.end(), received.begin(), received.end());
      }
    }
    {
      PhaseClock clock(times.comm_creation);
      cube = top.prefix(q);
    }
  } else {
    cube.emplace(std::move(top));
  }

  if (cube) {
    if (options.reshuffle) {
      PhaseClock clock(times.reshuffle);
      inputs::Rng rng(options.seed, static_cast<std::uint64_t>(rank));
      for (int bit = 1; bit < q; bit <<= 1) {
        // A random half (the odd element goes either way) moves to the neighbour.
        const std::size_t m = data.size();
        const std::size_t k = m / 2 + ((m & 1) ? static_cast<std::size_t>(rng.below(2)) : 0);
        for (std::size_t j = 0; j < k; ++j) {
          std::swap(data[static_cast<std::size_t>(rng.below(m - j))], data[m - 1 - j]);
        }
        exchange(*cube, data.data() + (m - k), k, element.get(), rank ^ bit, kShuffleTag,
                 received);
        data.resize(m - k);
        data.insert(data.end(), received.begin(), received.end());
        cost::charge(cost::Kernel::shuffle, k);
        cost::charge(cost::Kernel::copy, m);
      }
    }
    {
      PhaseClock clock(times.local_sort);
      localsort::sort(data.data(), data.data() + data.size(), less);
      cost::charge(cost::Kernel::sort, data.size());
    }

    std::vector<T> merged;
    while (cube->size() > 1) {
      const int s = cube->size();
      const int r = cube->rank();
      std::optional<Sample<T>> pivot;
      {
        PhaseClock clock(times.pivot_selection);
        pivot = select_pivot(*cube, data, options, less, sample_type.get());
      }
      if (pivot) {  // an empty subcube has nothing to exchange (all its PEs agree on that)
        std::size_t split = 0;
        {
          PhaseClock clock(times.partition);
          split = split_point(data, *pivot, r, less);
        }
        const bool lower = r < s / 2;
        const int partner = lower ? r + s / 2 : r - s / 2;
        const T* send = lower ? data.data() + split : data.data();
        const std::size_t send_count = lower ? data.size() - split : split;
        {
          PhaseClock clock(times.exchange);
          exchange(*cube, send, send_count, element.get(), partner, kDataTag, received);
        }
        {
          PhaseClock clock(times.merge);
          const T* keep = lower ? data.data() : data.data() + split;
          const std::size_t kept = lower ? split : data.size() - split;
          merged.resize(kept + received.size());
          localsort::merge(keep, kept, received.data(), received.size(), merged.data(), less);
          data.swap(merged);
          cost::charge(cost::Kernel::merge, data.size());
        }
      }
      {
        PhaseClock clock(times.comm_creation);
        Layer next = cube->half();
        cube = std::move(next);
      }
      ++times.levels;
    }
  }
  times.total = MPI_Wtime() - start;
  if (times_out != nullptr) *times_out = times;
}

}  // namespace hypercube::detail
