#include "jquick/run.hpp"

#include <algorithm>
#include <cstdio>
#include <functional>

#include "jquick/jquick.hpp"

namespace jquick {

Stats sort_doubles(std::vector<double>& data, MPI_Comm comm, const Config& config) {
  return sort(data, MPI_DOUBLE, comm, std::less<double>(), config);
}

Stats max_stats(const Stats& local, MPI_Comm comm) {
  double times[8] = {local.total,    local.pivot_selection,       local.partition,
                     local.exchange_calculation, local.exchange, local.communicator_creation,
                     local.base_cases, local.local_sort};
  long long counts[8] = {local.levels,        local.janus_levels,      local.retries,
                         local.messages_sent, local.messages_received, local.bytes_copied,
                         local.inherited_pivots, local.split_gathers};
  double max_times[8];
  long long max_counts[8];
  detail::check_mpi(MPI_Allreduce(times, max_times, 8, MPI_DOUBLE, MPI_MAX, comm), "MPI_Allreduce");
  detail::check_mpi(MPI_Allreduce(counts, max_counts, 8, MPI_LONG_LONG, MPI_MAX, comm), "MPI_Allreduce");
  Stats result;
  result.total = max_times[0];
  result.pivot_selection = max_times[1];
  result.partition = max_times[2];
  result.exchange_calculation = max_times[3];
  result.exchange = max_times[4];
  result.communicator_creation = max_times[5];
  result.base_cases = max_times[6];
  result.local_sort = max_times[7];
  result.levels = static_cast<int>(max_counts[0]);
  result.janus_levels = static_cast<int>(max_counts[1]);
  result.retries = static_cast<int>(max_counts[2]);
  result.messages_sent = max_counts[3];
  result.messages_received = max_counts[4];
  result.bytes_copied = max_counts[5];
  result.inherited_pivots = static_cast<int>(max_counts[6]);
  result.split_gathers = static_cast<int>(max_counts[7]);
  return result;
}

bool sorted_and_balanced(const std::vector<double>& data, long long n, MPI_Comm comm) {
  int rank = 0, p = 1;
  detail::check_mpi(MPI_Comm_rank(comm, &rank), "MPI_Comm_rank");
  detail::check_mpi(MPI_Comm_size(comm, &p), "MPI_Comm_size");
  const long long share = n / p + (rank < n % p ? 1 : 0);
  int ok = static_cast<long long>(data.size()) == share &&
           std::is_sorted(data.begin(), data.end());
  // Non-empty PEs form a prefix of the ranks (shares never increase with the rank), so the
  // neighbour of a non-empty PE is non-empty or the end.
  double first = data.empty() ? 0.0 : data.front();
  double from_right = 0.0;
  const int right = rank + 1 < p ? rank + 1 : MPI_PROC_NULL;
  const int left = rank > 0 ? rank - 1 : MPI_PROC_NULL;
  detail::check_mpi(MPI_Sendrecv(&first, 1, MPI_DOUBLE, left, 0, &from_right, 1, MPI_DOUBLE, right, 0,
                                 comm, MPI_STATUS_IGNORE),
                    "MPI_Sendrecv");
  const bool right_has_data = rank + 1 < p && n / p + (rank + 1 < n % p ? 1 : 0) > 0;
  if (right_has_data && !data.empty() && from_right < data.back()) ok = 0;
  int all = 0;
  detail::check_mpi(MPI_Allreduce(&ok, &all, 1, MPI_INT, MPI_LAND, comm), "MPI_Allreduce");
  return all != 0;
}

std::string describe(const Stats& s) {
  char line[512];
  std::snprintf(line, sizeof line,
                "total %.6f s | pivot %.6f | partition %.6f | exchange calc %.6f | exchange %.6f "
                "| comm creation %.6f | base cases %.6f | local sort %.6f | levels %d (janus %d, "
                "retries %d, inherited pivots %d, split gathers %d) | messages %lld sent %lld received | %lld bytes copied",
                s.total, s.pivot_selection, s.partition, s.exchange_calculation, s.exchange,
                s.communicator_creation, s.base_cases, s.local_sort, s.levels, s.janus_levels,
                s.retries, s.inherited_pivots, s.split_gathers, s.messages_sent, s.messages_received, s.bytes_copied);
  return line;
}

}  // namespace jquick
