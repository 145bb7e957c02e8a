#pragma once

#include <mpi.h>

#include <cstdint>

#include <functional>
#include <string>

#include "rbc/comm.hpp"
#include "rbc/request.hpp"

namespace rbc {

// Collectives on a RangeComm, each blocking and nonblocking, in MPI's argument order. All
// members call them in the same order (as in MPI); nonblocking ones may overlap each other, also
// on different communicators that share ranks. Any root, any communicator size (1 included),
// derived datatypes and user-defined MPI_Ops (non-commutative ones are combined in rank order).
// The algorithm depends on the collective, the vector's size and p (rbc::algorithm names it):
// binomial trees for the rooted ones; recursive doubling for short vectors and, on up to 16
// ranks, for scans and mid-size allreduces; recursive halving + doubling for long allreduces;
// a recursive-doubling barrier. A blocking call on a rank with no other RBC operation in flight on
// the MPI communicator runs without a request (the same messages, fewer allocations and no
// wait loop). Send and receive buffers must not overlap (MPI_IN_PLACE works in place): buffers
// that do are refused with rbc::Error (MPI_ERR_BUFFER) before anything is sent, by the root
// where only the root's receive buffer matters.

void bcast(void* buf, int count, MPI_Datatype type, int root, const RangeComm& comm);
Request ibcast(void* buf, int count, MPI_Datatype type, int root, const RangeComm& comm);

void reduce(const void* sendbuf, void* recvbuf, int count, MPI_Datatype type, MPI_Op op, int root,
            const RangeComm& comm);
Request ireduce(const void* sendbuf, void* recvbuf, int count, MPI_Datatype type, MPI_Op op,
                int root, const RangeComm& comm);

void allreduce(const void* sendbuf, void* recvbuf, int count, MPI_Datatype type, MPI_Op op,
               const RangeComm& comm);
Request iallreduce(const void* sendbuf, void* recvbuf, int count, MPI_Datatype type, MPI_Op op,
                   const RangeComm& comm);

// Inclusive prefix: rank i gets x_0 op ... op x_i.
void scan(const void* sendbuf, void* recvbuf, int count, MPI_Datatype type, MPI_Op op,
          const RangeComm& comm);
Request iscan(const void* sendbuf, void* recvbuf, int count, MPI_Datatype type, MPI_Op op,
              const RangeComm& comm);

// Exclusive prefix: rank i gets x_0 op ... op x_{i-1}; recvbuf of rank 0 is left untouched.
void exscan(const void* sendbuf, void* recvbuf, int count, MPI_Datatype type, MPI_Op op,
            const RangeComm& comm);
Request iexscan(const void* sendbuf, void* recvbuf, int count, MPI_Datatype type, MPI_Op op,
                const RangeComm& comm);

// Inclusive prefix into recvbuf and, on every rank, the total x_0 op ... op x_{p-1} into
// totalbuf, without a separate broadcast: one up-and-down tree sweep, or for short vectors (and
// on two ranks) log2 q + 2 butterfly exchanges (q the largest power of two <= p; log2 p when p is
// one).
void scan_and_bcast(const void* sendbuf, void* recvbuf, void* totalbuf, int count,
                    MPI_Datatype type, MPI_Op op, const RangeComm& comm);
Request iscan_and_bcast(const void* sendbuf, void* recvbuf, void* totalbuf, int count,
                        MPI_Datatype type, MPI_Op op, const RangeComm& comm);

// recvbuf/recvcount/displs matter only at the root (recvcount is per rank, as in MPI).
void gather(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
            int recvcount, MPI_Datatype recvtype, int root, const RangeComm& comm);
Request igather(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                int recvcount, MPI_Datatype recvtype, int root, const RangeComm& comm);

void gatherv(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
             const int* recvcounts, const int* displs, MPI_Datatype recvtype, int root,
             const RangeComm& comm);
Request igatherv(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                 const int* recvcounts, const int* displs, MPI_Datatype recvtype, int root,
                 const RangeComm& comm);

void allgather(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
               int recvcount, MPI_Datatype recvtype, const RangeComm& comm);
Request iallgather(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                   int recvcount, MPI_Datatype recvtype, const RangeComm& comm);

void allgatherv(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                const int* recvcounts, const int* displs, MPI_Datatype recvtype,
                const RangeComm& comm);
Request iallgatherv(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                    const int* recvcounts, const int* displs, MPI_Datatype recvtype,
                    const RangeComm& comm);

void barrier(const RangeComm& comm);
Request ibarrier(const RangeComm& comm);

// Merges two adjacent sorted runs [first, middle) and [middle, last) of packed elements in place.
using Merger = std::function<void(void* first, void* middle, void* last)>;

// Merging gather: every rank contributes a sorted sequence of `sendcount` elements; the root
// receives all of them as one sorted sequence of `recvcount` elements (the total, which the
// root must know). Merging happens inside the tree, so the root does O(log p) merges of
// already-merged runs. `type` must have no gaps (its size equals its extent).
void gatherm(const void* sendbuf, int sendcount, void* recvbuf, int recvcount, MPI_Datatype type,
             int root, const Merger& merge, const RangeComm& comm);
Request igatherm(const void* sendbuf, int sendcount, void* recvbuf, int recvcount,
                 MPI_Datatype type, int root, Merger merge, const RangeComm& comm);

// How allgatherm pairs its ranks (every member must pass the same).
//   halves: the ranks split into halves (the lower one larger for p odd) that allgather first,
//     then partners swap runs: ceil(log2 p) rounds on the first rank, floor(log2 p) on the last.
//   fold: recursive doubling with MPICH's fold for p not a power of two: log2 q rounds among q,
//     the largest power of two <= p, plus two; the even ranks below 2 (p - q), the first one
//     included, only hand their run over at the start and take the result at the end. For a
//     nonblocking allgatherm whose first rank may be busy elsewhere meanwhile (a rank working in
//     two groups at once): under halves every round of the lower half waits for it.
enum class AllgathermSchedule { halves, fold };

// Merging allgather: as gatherm, but every rank receives the sorted sequence of all `recvcount`
// elements (the total, which every rank must know; a different sum is an error on every rank).
// Equal elements keep rank order. One message each way per round (AllgathermSchedule), the
// same rounds under both schedules when p is a power of two. `merge` is called once per round
// (a run may be empty); the call numbered allgatherm_partial_call(p, rank, recvcount times the
// type's size, schedule), where that is not 0, is the last, and its result is only copied into
// recvbuf, never sent: a caller that needs part of the result may merge just that part in that
// call. An earlier call may already hold all `recvcount` elements (ranks that contribute none
// still take part in later rounds), and its result is sent on whole.
void allgatherm(const void* sendbuf, int sendcount, void* recvbuf, int recvcount, MPI_Datatype type,
                const Merger& merge, const RangeComm& comm,
                AllgathermSchedule schedule = AllgathermSchedule::halves);
Request iallgatherm(const void* sendbuf, int sendcount, void* recvbuf, int recvcount, MPI_Datatype type,
                    Merger merge, const RangeComm& comm, AllgathermSchedule schedule = AllgathermSchedule::halves);
// Which call of allgatherm's merge function on `rank` of p ranks, for `total_bytes` in all, is
// the last and only copied into recvbuf (1-based), or 0 where every call's result is sent on.
// halves: this rank's rounds (0 for p = 1). fold: log2 q; on the ranks that fold (the odd ones
// below 2 (p - q)) one more above 8 KiB in all, where each hands its even neighbour the last
// round's two runs to merge (call 1 there), and 0 below, where it sends that neighbour its last
// merge (the neighbour merges nothing: 0).
int allgatherm_partial_call(int p, int rank, std::int64_t total_bytes,
                            AllgathermSchedule schedule = AllgathermSchedule::halves);

// The algorithm RBC runs for `collective` ("bcast", "allreduce", "scan", ...: the function's
// name) with `count` elements of `type` per rank on a communicator of p ranks, for reports;
// `one_node`: whether its members share one node (RangeComm::on_one_node), which the
// allgathers' choice depends on. Throws rbc::Error for an unknown name.
std::string algorithm(const std::string& collective, int count, MPI_Datatype type, int p, bool one_node = false);

}  // namespace rbc
