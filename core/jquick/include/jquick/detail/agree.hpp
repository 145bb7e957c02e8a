#pragma once

// The checked build's Config agreement (JQUICK_CHECK_CONFIG, //core/jquick:jquick_checked): one
// MPI_Allreduce of the Config digest before any layer is set up, so that PEs passing different
// layers throw jquick::Error together instead of hanging in different first collectives.

#include <mpi.h>

#include "jquick/config.hpp"
#include "rbc/comm.hpp"

namespace jquick::detail {

// Collective over `comm` / the members of `comm`; throws jquick::Error on every PE if any two
// PEs' Configs differ.
void agree_on_config(const Config& config, MPI_Comm comm);
void agree_on_config(const Config& config, const rbc::RangeComm& comm);

}  // namespace jquick::detail
