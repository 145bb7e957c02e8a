#pragma once

// RBC: range-based communicators with point-to-point and (non)blocking collectives.
#include "rbc/collectives.hpp"
#include "rbc/comm.hpp"
#include "rbc/create_group.hpp"
#include "rbc/error.hpp"
#include "rbc/point_to_point.hpp"
#include "rbc/range.hpp"
#include "rbc/request.hpp"
#include "rbc/scratch.hpp"
#include "rbc/status.hpp"
#include "rbc/typed.hpp"
