#pragma once

#include <mpi.h>

#include <algorithm>
#include <cstdint>
#include <functional>

#include "rbc/collectives.hpp"

namespace rbc {

// The predefined MPI datatype of a C++ arithmetic type.
template <class T>
MPI_Datatype mpi_type();
template <> inline MPI_Datatype mpi_type<char>() { return MPI_CHAR; }
template <> inline MPI_Datatype mpi_type<signed char>() { return MPI_SIGNED_CHAR; }
template <> inline MPI_Datatype mpi_type<unsigned char>() { return MPI_UNSIGNED_CHAR; }
template <> inline MPI_Datatype mpi_type<short>() { return MPI_SHORT; }
template <> inline MPI_Datatype mpi_type<unsigned short>() { return MPI_UNSIGNED_SHORT; }
template <> inline MPI_Datatype mpi_type<int>() { return MPI_INT; }
template <> inline MPI_Datatype mpi_type<unsigned>() { return MPI_UNSIGNED; }
template <> inline MPI_Datatype mpi_type<long>() { return MPI_LONG; }
template <> inline MPI_Datatype mpi_type<unsigned long>() { return MPI_UNSIGNED_LONG; }
template <> inline MPI_Datatype mpi_type<long long>() { return MPI_LONG_LONG; }
template <> inline MPI_Datatype mpi_type<unsigned long long>() { return MPI_UNSIGNED_LONG_LONG; }
template <> inline MPI_Datatype mpi_type<float>() { return MPI_FLOAT; }
template <> inline MPI_Datatype mpi_type<double>() { return MPI_DOUBLE; }

// A Merger for elements of type T ordered by `less`, for gatherm/igatherm.
template <class T, class Less = std::less<T>>
Merger merger_for(Less less = Less()) {
  return [less](void* first, void* middle, void* last) {
    std::inplace_merge(static_cast<T*>(first), static_cast<T*>(middle), static_cast<T*>(last),
                       less);
  };
}

}  // namespace rbc
