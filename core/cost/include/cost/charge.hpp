#pragma once

// Deterministic cost of local computation (and of RBC's own software work) in simulation.
//
// Under SMPI the project runs with smpi/simulate-computation:no, so local work costs no
// simulated time unless it is charged. The local kernels of the sorts call
// cost::charge(kernel, n) once per call; under SMPI that advances the calling rank's simulated
// clock by the calibrated cost c0 + c1 * f(n), under real MPI it does nothing.
//
// The calibrated coefficients come from the environment (set by sim/runner from a calibration
// profile), one variable per kernel holding "C0,C1" (or segments, below) in seconds, read at
// each call (no global state: SMPI runs every simulated rank in one process). An unset variable
// charges nothing.

#include <cstddef>

namespace cost {

enum class Kernel {
  sort,       // comparison sort of n elements: f(n) = n log2 n
  partition,  // partition of n elements around a pivot: f(n) = n
  select,     // selection (nth_element) among n elements: f(n) = n
  merge,      // merge producing n elements: f(n) = n
  copy,       // copy of n elements: f(n) = n
  shuffle,    // n random swaps (a random sample or half moved out): f(n) = n
  // RBC's own software work, beyond what the MPI library underneath costs (which the profile's
  // per-message overheads already model):
  message,       // one RBC message copying n payload bytes (envelope, bookkeeping): f(n) = n
  // one RBC message sent by a blocking call with no operation in flight (a plain MPI_Send, no
  // operation object or request bookkeeping), copying n payload bytes: f(n) = n
  immediate_message,
  // one message of an RBC collective run at once that exchanges (allreduce, scan, allgather,
  // barrier): an MPI_Isend waited for at the end of its step, copying n payload bytes: f(n) = n
  collective_message,
  communicator,  // one RBC communicator created locally (split): f(n) = n, charged with n = 1
  collective,    // one RBC collective call's bookkeeping, messages apart: f(n) = n, n = 1
  reduce,        // a reduction operator applied to n bytes (MPI_Reduce_local in RBC): f(n) = n
  // JQuick's own: one operation completed through a sort's pool (its continuation, the
  // bookkeeping around it), beyond what RBC charges for the message: f(n) = n, n = 1
  continuation,
};

// JANUS_COST_SORT, JANUS_COST_PARTITION, ...
const char* env_name(Kernel kernel);

// The size term f(n) of the kernel's model.
double size_term(Kernel kernel, std::size_t n);

// c0 + c1 * f(n) for spec "C0,C1"; 0 for a null or empty spec. A piecewise spec
// "0:C0,C1;N1:C0,C1;..." (segments starting at 0, increasing) takes the last segment starting at
// or below n and charges C0 + C1 * (f(n) - f(N)): each segment runs from its own start's cost, so
// measured points can be joined without negative coefficients. A malformed spec throws
// std::invalid_argument.
double modelled_seconds(Kernel kernel, std::size_t n, const char* spec);

// Charges one call of `kernel` on n elements (see above). No-op under real MPI.
void charge(Kernel kernel, std::size_t n);

}  // namespace cost
