// Config agreement (issue 18): the digest every sort folds into its first collective, and the
// checked build's agreement before the layer (jquick/detail/agree.hpp).
#include <mpi.h>

#include <cstdint>
#include <cstring>
#include <string>

#include "jquick/config.hpp"
#include "jquick/detail/agree.hpp"
#include "jquick/detail/layers.hpp"
#include "rbc/collectives.hpp"

namespace jquick {

namespace {

std::uint64_t mix(std::uint64_t h, std::uint64_t v) {
  h ^= v + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2);
  h *= 0xff51afd7ed558ccdULL;
  return h ^ (h >> 33);
}

std::uint64_t bits(double x) {
  std::uint64_t b = 0;
  std::memcpy(&b, &x, sizeof b);
  return b;
}

}  // namespace

std::uint64_t config_digest(const Config& config) {
  std::uint64_t h = 0x6a7175696b;
  h = mix(h, config.seed);
  h = mix(h, static_cast<std::uint64_t>(config.layer));
  h = mix(h, static_cast<std::uint64_t>(config.schedule));
  h = mix(h, static_cast<std::uint64_t>(config.wildcard));
  h = mix(h, bits(config.k1));
  h = mix(h, bits(config.k2));
  h = mix(h, bits(config.k3));
  h = mix(h, static_cast<std::uint64_t>(config.index_base));
  h = mix(h, config.verify ? 1 : 0);
  return h;
}

std::string describe(const Config& config) {
  return std::string("layer=") + layer_name(config.layer) + " schedule=" + schedule_name(config.schedule) +
         " wildcard=" + (config.wildcard == Wildcard::posted ? "posted" : "probe") +
         " seed=" + std::to_string(config.seed) + " k1=" + std::to_string(config.k1) +
         " k2=" + std::to_string(config.k2) + " k3=" + std::to_string(config.k3) +
         " index_base=" + std::to_string(config.index_base) + " verify=" + (config.verify ? "1" : "0");
}

std::string config_mismatch_message(const Config& config) {
  return "the PEs passed different Configs (every PE of a sort must pass the same one); this PE has " +
         describe(config);
}

namespace detail {

namespace {
void judge(const Config& config, const long long extremes[2]) {
  if (extremes[0] != -extremes[1]) throw Error(config_mismatch_message(config));
}
}  // namespace

void agree_on_config(const Config& config, MPI_Comm comm) {
  const long long d = static_cast<long long>(config_digest(config) >> 1);
  long long extremes[2] = {d, -d};  // max of d and of -d: all equal iff max d == min d
  check_mpi(MPI_Allreduce(MPI_IN_PLACE, extremes, 2, MPI_LONG_LONG, MPI_MAX, comm), "MPI_Allreduce");
  judge(config, extremes);
}

void agree_on_config(const Config& config, const rbc::RangeComm& comm) {
  const long long d = static_cast<long long>(config_digest(config) >> 1);
  long long extremes[2] = {d, -d};
  rbc::allreduce(MPI_IN_PLACE, extremes, 2, MPI_LONG_LONG, MPI_MAX, comm);
  judge(config, extremes);
}

}  // namespace detail

}  // namespace jquick
