#include "cost/charge.hpp"

#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <stdexcept>
#include <string>

#if JANUS_SMPI
#include <simgrid/actor.h>
#endif

namespace cost {

const char* env_name(Kernel kernel) {
  switch (kernel) {
    case Kernel::sort: return "JANUS_COST_SORT";
    case Kernel::partition: return "JANUS_COST_PARTITION";
    case Kernel::select: return "JANUS_COST_SELECT";
    case Kernel::merge: return "JANUS_COST_MERGE";
    case Kernel::copy: return "JANUS_COST_COPY";
    case Kernel::shuffle: return "JANUS_COST_SHUFFLE";
    case Kernel::message: return "JANUS_COST_MESSAGE";
    case Kernel::immediate_message: return "JANUS_COST_IMMEDIATE_MESSAGE";
    case Kernel::collective_message: return "JANUS_COST_COLLECTIVE_MESSAGE";
    case Kernel::communicator: return "JANUS_COST_COMMUNICATOR";
    case Kernel::collective: return "JANUS_COST_COLLECTIVE";
    case Kernel::reduce: return "JANUS_COST_REDUCE";
    case Kernel::continuation: return "JANUS_COST_CONTINUATION";
  }
  throw std::invalid_argument("cost: unknown kernel");
}

double size_term(Kernel kernel, std::size_t n) {
  const double x = static_cast<double>(n);
  if (kernel == Kernel::sort) return n > 1 ? x * std::log2(x) : 0.0;
  return x;
}

namespace {

[[noreturn]] void malformed(const char* spec, const char* why) {
  throw std::invalid_argument(std::string("cost: malformed cost spec '") + spec + "' (" + why +
                              "; want \"C0,C1\" or \"N:C0,C1;N:C0,C1;...\", non-negative)");
}

double parse_number(const char*& cursor, const char* spec) {
  errno = 0;
  char* end = nullptr;
  const double value = std::strtod(cursor, &end);
  if (end == cursor || errno != 0 || !std::isfinite(value) || value < 0) {
    malformed(spec, "not a non-negative number");
  }
  cursor = end;
  return value;
}

}  // namespace

double modelled_seconds(Kernel kernel, std::size_t n, const char* spec) {
  if (spec == nullptr || *spec == '\0') return 0.0;
  const double x = static_cast<double>(n);
  const double fn = size_term(kernel, n);
  const char* cursor = spec;
  double seconds = 0.0;
  double last_start = -1.0;
  while (true) {
    double start = 0.0;
    double c0 = parse_number(cursor, spec);
    if (*cursor == ':') {
      ++cursor;
      start = c0;
      c0 = parse_number(cursor, spec);
    }
    if (*cursor != ',') malformed(spec, "a segment needs C0,C1");
    ++cursor;
    const double c1 = parse_number(cursor, spec);
    if (last_start < 0 ? start != 0.0 : start <= last_start) {
      malformed(spec, "segments start at 0 and increase");
    }
    last_start = start;
    if (start <= x) seconds = c0 + c1 * (fn - size_term(kernel, static_cast<std::size_t>(start)));
    if (*cursor == '\0') break;
    if (*cursor != ';') malformed(spec, "trailing text");
    ++cursor;
  }
  return seconds;
}

void charge(Kernel kernel, std::size_t n) {
#if JANUS_SMPI
  const double seconds = modelled_seconds(kernel, n, std::getenv(env_name(kernel)));
  // A sleep, as SMPI models its own per-message overheads: the rank is busy for `seconds`
  // whatever else its host runs. An execution would cost the simulator a CPU-sharing variable
  // per charge (12% of a 4096-rank sort's wall time went to RBC's message charges alone).
  if (seconds > 0) sg_actor_sleep_for(seconds);
#else
  (void)kernel;
  (void)n;
#endif
}

}  // namespace cost
