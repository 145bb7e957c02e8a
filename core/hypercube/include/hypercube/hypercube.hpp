#pragma once

// Robust hypercube quicksort (RQuick after Axtmann and Sanders, "Robust massively parallel
// sorting", and the thesis' section 3.1.3): the baseline JQuick is compared against.
//
// On q = 2^k PEs:
//  1. Reshuffle: in each of the k dimensions every PE sends a uniformly random half of its
//     elements to its neighbour, so the input's arrangement no longer matters and uneven local
//     counts even out (to within about one element per dimension).
//  2. Sort locally.
//  3. For each dimension from the highest down, within the current subcube of size s:
//     select a pivot, partition the local data, exchange with the partner s/2 ranks away
//     (the lower half keeps the small elements), merge the two sorted runs, and continue in
//     the half (a communicator split per level).
// Pivot: a weighted median of medians. Every PE offers up to `samples_per_pe` evenly spaced
// elements of its sorted data, each weighted by the number of elements it stands for; a
// butterfly over the subcube merges the lists pairwise and resamples any list longer than
// `samples_per_pe` at equal weight steps, so all PEs of the subcube end with the same list; its
// weighted median is the pivot. Ties: elements are ordered by (key, rank in the subcube, local
// position) and the pivot is such a triple, so runs of equal keys are split where the median
// falls instead of landing on one side (Zero and duplicate-heavy inputs stay balanced).
//
// p not a power of two: q is the largest power of two <= p. PE q + j (j < p - q) first hands
// all its elements to PE j and then takes no further part; it ends empty. The other q PEs sort
// as above. The output is globally sorted in rank order (ranks q..p-1 empty) and a permutation
// of the input; the load per PE is only approximately n/q (that is the point of the comparison
// with JQuick's exact balance).
//
// The algorithm exists once (detail/algorithm.hpp) over a small communication layer: RBC
// range communicators (an O(1) split per level) or native MPI communicators (each level
// creates the halves with MPI_Comm_split or MPI_Comm_create_group). With the same seed both
// do identical work and give identical output.
//
// Elements are moved as raw bytes: T must be trivially copyable and default constructible.
// Less must be a strict weak order on all elements (with std::less<double>, NaN keys violate
// this and the output order is unspecified). No busy polling: all waiting blocks in MPI_Probe /
// MPI_Recv / MPI_Wait (or RBC's blocking calls), so simulated time advances under SMPI.
// Point-to-point messages on the caller's communicator use tags 1..4 (folding, reshuffle,
// samples, data); the caller must not have messages with those tags pending on it. Levels below
// the top run on communicators of their own.

#include <mpi.h>

#include <cstdint>
#include <functional>
#include <vector>

#include "hypercube/detail/algorithm.hpp"
#include "hypercube/detail/mpi_layer.hpp"
#include "hypercube/detail/rbc_layer.hpp"
#include "hypercube/options.hpp"
#include "rbc/comm.hpp"

namespace hypercube {

// Sorts `data` across the members of `comm`. Every member calls it. On return `data` holds this
// PE's part of the globally sorted sequence. Throws std::invalid_argument for bad options or a
// non-member communicator. `times`, if given, receives the phase times of this PE.
template <class T, class Less = std::less<T>>
void sort_rbc(std::vector<T>& data, const rbc::RangeComm& comm, const Options& options = {},
              Less less = Less(), PhaseTimes* times = nullptr) {
  detail::sort(data, detail::RbcLayer(comm), options, less, times);
}

// The same on a native MPI communicator; every level creates its halves as `creation` says
// (and, for p not a power of two, the power-of-two prefix first). Created communicators are
// freed before returning; `comm` itself is left alone.
template <class T, class Less = std::less<T>>
void sort_mpi(std::vector<T>& data, MPI_Comm comm, MpiCommCreation creation,
              const Options& options = {}, Less less = Less(), PhaseTimes* times = nullptr) {
  detail::sort(data, detail::MpiLayer::borrow(comm, creation), options, less, times);
}

}  // namespace hypercube
