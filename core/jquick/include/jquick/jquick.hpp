#pragma once

// JQuick (Janus Quicksort): a distributed sort that keeps every PE at exactly its share.
//
//   std::vector<double> data = ...;                       // this PE's input, any size
//   jquick::Stats stats = jquick::sort(data, MPI_DOUBLE, MPI_COMM_WORLD);
//   // now PE i holds floor(n/p) + [i < n mod p] elements of the globally sorted sequence
//
// Contract:
// - Collective over the communicator: every PE calls it with the same T, type, comparator
//   and Config (seed included). PEs with different Configs all throw jquick::Error from the
//   first collective (a Config digest rides on it); PEs with different layers only in the
//   checked build //core/jquick:jquick_checked, which agrees on the Config before choosing a
//   layer (elsewhere they wait in different first collectives).
// - T is trivially copyable; `type` describes exactly one T: MPI_Type_size(type) ==
//   sizeof(T) and its extent is sizeof(T) (for a struct use e.g.
//   MPI_Type_contiguous(sizeof(T), MPI_BYTE)). Otherwise every PE throws jquick::Error before
//   communicating.
// - `less` is a strict weak order. Equal elements may end up in any order (the sort is not
//   stable) but the result is a deterministic function of the input and Config::seed: the same
//   on Open MPI and SMPI and with every Config::layer.
// - A comparator that is not a strict weak order (`<=`, always true, random answers) never
//   crashes, hangs or loses an element. comp(x, x) is tried on up to 16 input elements per PE
//   before anything moves (if true anywhere: every PE throws jquick::Error, data untouched)
//   and on every pivot sample; a group gives up a task past a recursion depth of
//   4 log2 p + 32 or 32 pivot retries; at p >= 3 one scan at the end tells every PE, and all
//   throw jquick::Error, each holding its share of a permutation of the input (not sorted).
//   Config::verify additionally checks the result's order and a multiset fingerprint.
// - A comparator that throws never leaves a PE waiting: the exception is caught inside the
//   sort, every later comparison on that PE answers false, all PEs run the sort to its end, and
//   every PE throws jquick::Error ("the comparator threw an exception on this PE (what) / on
//   another PE"), each holding its share of a permutation of the input. A comparator that may
//   throw (not noexcept; std::less and std::greater on numbers count as noexcept) costs one
//   agreement where none was needed otherwise (p = 2, or a whole input of at most
//   Config::gather_elements on p >= 3); declare it noexcept to avoid that.
// - Local sorting uses core/localsort: a radix sort for integers, float and double under
//   std::less / std::greater, a bounds-safe pattern-defeating quicksort otherwise.
// - NaN: with the default comparator (std::less) a floating-point input containing NaN is
//   rejected: every PE throws jquick::Error naming the NaN count (std::less is not a strict weak
//   order there). To sort NaNs (last), pass jquick::NanLastLess<T>().
// - Any p >= 1 and n >= 0, any local sizes (empty PEs included); counts and global indices are
//   64-bit. A PE's share must fit an int (MPI counts).

#include <mpi.h>

#include <functional>
#include <vector>

#include "jquick/config.hpp"
#include "jquick/detail/agree.hpp"
#include "jquick/detail/layers.hpp"
#include "jquick/detail/sorter.hpp"
#include "rbc/comm.hpp"

namespace jquick {

// Sorts over an MPI communicator with the layer chosen in `config`.
template <class T, class Less = std::less<T>>
Stats sort(std::vector<T>& data, MPI_Datatype type, MPI_Comm comm, Less less = Less(),
           const Config& config = Config()) {
  detail::check_datatype(type, sizeof(T));
#ifdef JQUICK_CHECK_CONFIG
  detail::agree_on_config(config, comm);  // the layers' first collectives differ (config.hpp)
#endif
  Stats stats;
  const double start = MPI_Wtime();
  if (config.layer == Layer::rbc) {
    const double before = MPI_Wtime();
    detail::RbcLayer layer(rbc::RangeComm::from_mpi(comm), config.wildcard == Wildcard::posted);
    stats.communicator_creation += MPI_Wtime() - before;
    detail::Sorter<T, Less, detail::RbcLayer>(layer, type, less, config, stats).sort(data);
  } else {
    const double before = MPI_Wtime();
    detail::MpiLayer layer(comm, config.layer == Layer::mpi_split);
    stats.communicator_creation += MPI_Wtime() - before;
    detail::Sorter<T, Less, detail::MpiLayer>(layer, type, less, config, stats).sort(data);
  }
  stats.total = MPI_Wtime() - start;
  return stats;
}

// Sorts over the members of an RBC communicator (for example a range of a larger one). Uses
// the RBC layer; throws jquick::Error if config.layer asks for another one.
template <class T, class Less = std::less<T>>
Stats sort(std::vector<T>& data, MPI_Datatype type, const rbc::RangeComm& comm,
           Less less = Less(), const Config& config = Config()) {
  detail::check_datatype(type, sizeof(T));
#ifdef JQUICK_CHECK_CONFIG
  if (comm.is_member()) detail::agree_on_config(config, comm);
#endif
  if (config.layer != Layer::rbc) {
    throw Error("sorting on an rbc::RangeComm needs Config::layer == Layer::rbc");
  }
  if (!comm.is_member()) throw Error("this PE is not a member of the communicator");
  Stats stats;
  const double start = MPI_Wtime();
  const double before = MPI_Wtime();
  detail::RbcLayer layer(comm, config.wildcard == Wildcard::posted);
  stats.communicator_creation += MPI_Wtime() - before;
  detail::Sorter<T, Less, detail::RbcLayer>(layer, type, less, config, stats).sort(data);
  stats.total = MPI_Wtime() - start;
  return stats;
}

}  // namespace jquick
