#pragma once

// RapidCheck generators of scenarios. Every generator draws the rank count first and fits
// everything else to it, so each generated (and each shrunk) scenario is valid.

#include <rapidcheck.h>

#include <cstdint>
#include <vector>

#include "driver/driver.hpp"
#include "scenario/scenario.hpp"
#include "scenario/sort_scenario.hpp"

namespace props {

// Rank count in 1..max_np, skewed towards small counts (primes included), shrinking towards 1.
rc::Gen<int> gen_np(int max_np);

// A communicator of a world of `np` ranks: a chain of up to three splits (strided or not) and
// janus halves (possibly overlapping).
rc::Gen<CommSpec> gen_comm(int np);

// The world followed by up to `extra` distinct communicators. With `overlapping`, communicators
// are built to share ranks: both halves of overlapping janus splits, and the same member set
// reached through different parents.
rc::Gen<std::vector<CommSpec>> gen_comms(int np, int extra, bool overlapping);

std::vector<int> comm_sizes(const std::vector<CommSpec>& comms, int np);

// One collective on one of the communicators, in one of `rounds` rounds.
rc::Gen<CollOp> gen_coll(const std::vector<int>& sizes, int rounds, bool large_counts);
// One message; tags are drawn from 0..tags-1 (and occasionally max_user_tag).
rc::Gen<Message> gen_message(const std::vector<int>& sizes, int rounds, int tags, bool large_counts);
rc::Gen<BadCall> gen_bad(const std::vector<CommSpec>& comms, int np);

// Scenario shapes of the properties.
rc::Gen<Scenario> gen_collectives_scenario(Backend backend, const Budget& budget);
rc::Gen<Scenario> gen_p2p_scenario(Backend backend, const Budget& budget);
rc::Gen<Scenario> gen_interference_scenario(Backend backend, const Budget& budget);
rc::Gen<Scenario> gen_bad_input_scenario(Backend backend, const Budget& budget);
rc::Gen<Scenario> gen_mixed_scenario(Backend backend, const Budget& budget);
// Messages on overlapping communicators where same-tag messages to one process on different
// communicators always come from non-members of each other's communicator.
rc::Gen<Scenario> gen_wildcard_isolation_scenario(Backend backend, const Budget& budget);
// Few, small operations at large p (SMPI: 128..budget.large_np).
rc::Gen<Scenario> gen_large_scenario(Backend backend, const Budget& budget);

// JQuick's Config::gather_elements for an input of `n` elements: half the time -1 (the library's
// default), else off (0), tiny (1..64: a gathered base case of a few keys deep in the recursion)
// or up to twice the input (the gathered and allgathered merges, their windows and folds, on
// every size and p).
rc::Gen<std::int64_t> gen_gather_elements(std::int64_t n);

// One sort: algorithm, layer, distribution (all of core/inputs, uneven and one-PE included),
// n/p, element type, and the range of ranks it runs on (p prime or not a power of two included).
rc::Gen<SortScenario> gen_sort_scenario(const std::string& algorithm, Backend backend, const Budget& budget);

}  // namespace props
