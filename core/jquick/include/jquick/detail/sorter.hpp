#pragma once

// Janus Quicksort, written once for both communication layers (layers.hpp).
//
// Global picture. After the first scan every PE knows n and hence the balanced target layout
// (layout.hpp): PE i owns global indices [start(i), end(i)). A task is an interval [gb, ge) of
// global indices; its group is the owners of that interval, a contiguous range of PEs. A PE
// belongs to at most two unfinished multi-PE tasks at a time (one reaching in from the left,
// one from the right); when it belongs to two it is a janus PE and runs both tasks' levels
// together: all their nonblocking operations sit in one pool, progressed by one blocking wait.
//
// One level of a task: (1) samples are drawn at global indices (binomial split of the count
// down a tree over the indices, local), sorted, and merged on every member by a merging
// allgather (the MPI layers: a merging gather and a broadcast); each takes the median
// (key, index). (2) Each PE partitions its segment: an element is
// small iff (key, index) <= pivot; with the pivot's index known, elements before it compare
// with <=, elements after it with <, so the tie-break costs no communication. (3) One
// scan-and-broadcast of (small, large) counts gives every PE the target indices of its small
// elements (in [gb, gb + s)) and large ones (in [gb + s, ge)), each target PE taking its share
// from the group's first and second half in proportion (stream_split.hpp), so about half of
// each PE's data stays where it is. Groups of at most 32 PEs allgather the counts instead, and
// every PE keeps what its own share holds (greedy_plan): fewer pieces per PE. Either carries a
// flag (comp(x, x) was true for a member's sample), after which the group gives up the task
// once (4) is done. (4) Data are sent with
// nonblocking sends to the owners of those indices; each PE receives with ANY_SOURCE until its share has
// arrived, then orders the received pieces by (kind, source), so the layout (and with it the
// next level's tie-break) is deterministic. (5) The children [gb, gb+s) and [gb+s, ge) get
// groups (RBC: local split; MPI: communicator creation in the configured schedule). Children
// on one or two PEs are base cases, solved after the distributed phase.
//
// The first level differs only in its source layout: each PE's input occupies the indices
// [prefix, prefix + m) of the input order, so arbitrary input sizes (and empty PEs) are
// rebalanced by the first exchange.

#include <mpi.h>

#include <algorithm>
#include <array>
#include <climits>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <functional>
#include <memory>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "cost/charge.hpp"
#include "jquick/config.hpp"
#include "jquick/detail/buffer.hpp"
#include "jquick/detail/layers.hpp"
#include "jquick/detail/layout.hpp"
#include "jquick/detail/random.hpp"
#include "jquick/detail/stream_split.hpp"
#include "localsort/guarded_less.hpp"
#include "localsort/localsort.hpp"
#include "localsort/merge.hpp"
#include "localsort/partition.hpp"
#include "merge/corank.hpp"

namespace jquick::detail {

enum Phase : int {
  kPivot = 0,
  kPartition,
  kCalculation,
  kExchange,
  kCreation,
  kBase,
  kLocalSort,
  kDone,
};

// Adds the time since the last switch to the phase that was running.
class PhaseClock {
 public:
  explicit PhaseClock(Stats& stats) : stats_(stats), last_(MPI_Wtime()) {}
  void to(int phase) {
    const double now = MPI_Wtime();
    if (double* slot = slot_of(current_)) *slot += now - last_;
    last_ = now;
    current_ = phase;
  }

 private:
  double* slot_of(int phase) {
    switch (phase) {
      case kPivot: return &stats_.pivot_selection;
      case kPartition: return &stats_.partition;
      case kCalculation: return &stats_.exchange_calculation;
      case kExchange: return &stats_.exchange;
      case kCreation: return &stats_.communicator_creation;
      case kBase: return &stats_.base_cases;
      case kLocalSort: return &stats_.local_sort;
      default: return nullptr;
    }
  }
  Stats& stats_;
  double last_;
  int current_ = kDone;
};

// Checks that `type` describes T exactly; the same on every PE, so all throw together.
void check_datatype(MPI_Datatype type, std::size_t element_size);

template <class T, class Less, class LayerT>
class Sorter {
  static_assert(std::is_trivially_copyable<T>::value,
                "jquick::sort needs trivially copyable elements (they travel as MPI data)");

 public:
  using Comm = typename LayerT::Comm;
  using Pool = typename LayerT::Pool;
  using Compare = localsort::SafeLess<Less, T>;

  Sorter(LayerT& layer, MPI_Datatype type, Less less, const Config& config, Stats& stats)
      : layer_(layer),
        type_(type),
        less_(localsort::make_safe_less<T>(std::move(less), &fault_)),
        config_(config),
        stats_(stats),
        clock_(stats),
        merged_(layer.scratch_home()) {
    rank_ = LayerT::rank(layer_.root());
    p_ = LayerT::size(layer_.root());
  }
  ~Sorter() {
    if (sample_type_ != MPI_DATATYPE_NULL) MPI_Type_free(&sample_type_);
  }
  Sorter(const Sorter&) = delete;
  Sorter& operator=(const Sorter&) = delete;

  void sort(std::vector<T>& data) {
    if (data.size() > static_cast<std::size_t>(INT64_MAX / 2)) throw Error("input too large");
    clock_.to(kCalculation);
    if (config_.verify) fingerprint_ = fingerprint(data.data(), data.size());
    // The first collective also carries a digest of the Config (d, d^2: all PEs agree iff
    // p * sum d^2 == (sum d)^2), so PEs passing different Configs all throw here.
    const long long digest = config_check_value(config_);
    // The sixth: the input held by the first half of the PEs, the lower part of a whole input
    // gathered to two roots (gather_cut), whose input need not be balanced.
    long long mine[6] = {static_cast<long long>(data.size()), count_nans(data),
                         reflexive_elements(data), digest, digest * digest,
                         rank_ < p_ / 2 ? static_cast<long long>(data.size()) : 0};
    long long prefix[6] = {}, total[6] = {};
    LayerT::scan_and_bcast_now(layer_.root(), mine, prefix, total, 6);
    if (!configs_agree(total[3], total[4], p_)) throw Error(config_mismatch_message(config_));
    if (total[1] > 0) {
      throw Error("the input holds " + std::to_string(total[1]) +
                  " NaN keys, which std::less does not order; remove them or pass "
                  "jquick::NanLastLess<T> to sort them last");
    }
    if (total[2] > 0) {
      throw Error("the comparator is not a strict weak order: comp(x, x) is true for " +
                  std::to_string(total[2]) + " checked input element(s); nothing was moved");
    }
    run(data, total[0], prefix[0] - mine[0], total[5]);
  }

 private:
  // The sort after the first agreement: n elements in all, `before` of them on the PEs before
  // this one, `lower_half` on PEs [0, p / 2).
  void run(std::vector<T>& data, std::int64_t n, std::int64_t before, std::int64_t lower_half) {
    lower_half_input_ = lower_half;
    layout_ = std::make_unique<Layout>(n, p_, config_.index_base);
    if (layout_->cap(0) > INT_MAX) {
      throw Error("a PE's share of " + std::to_string(layout_->cap(0)) +
                  " elements exceeds the MPI count limit INT_MAX");
    }
    my_start_ = layout_->start(rank_);
    my_end_ = layout_->end(rank_);
    // Two PEs whose input is already balanced merge their shares straight into `data`.
    const bool pair_in_place =
        p_ == 2 && static_cast<std::int64_t>(data.size()) == layout_->cap(rank_);
    if (!pair_in_place) work_.assign(static_cast<std::size_t>(layout_->cap(rank_)), T());
    input_ = &data;
    input_start_ = config_.index_base + before;

    if (n > 0) {
      auto root = std::make_unique<Task>();
      root->gb = config_.index_base;
      root->ge = config_.index_base + n;
      root->first = 0;
      root->last = p_ - 1;
      root->comm = layer_.root();
      root->first_level = true;
      if (p_ >= 3 && whole_is_small(n)) {
        // One gathered base case over all PEs; its root decides for everyone whether the
        // comparator is broken, so no final agreement is needed.
        whole_small_ = true;
        auto small = std::make_unique<Small>();
        small->gb = root->gb;
        small->ge = root->ge;
        small->comm = layer_.root();
        small->first_level = true;
        smalls_.push_back(std::move(small));
        solve_base_cases();
      } else if (p_ <= 2) {
        clock_.to(kBase);
        if (p_ == 1) {
          clock_.to(kLocalSort);
          localsort::sort(data.data(), data.data() + data.size(), less_);
          cost::charge(cost::Kernel::sort, data.size());
          work_.swap(data);  // swapped back below: no copy
        } else {
          solve_first_level_pair(data, n, pair_in_place);
        }
      } else if (sample_sorts(n)) {
        sample_sort_whole(n);
      } else if (node_splits(n)) {
        node_split_whole(n);
      } else {
        std::vector<std::unique_ptr<Task>> active;
        active.push_back(std::move(root));
        int level = 0;
        while (!active.empty()) active = run_level(active, level++);
        solve_base_cases();
      }
    }
    clock_.to(kDone);
    data.swap(work_);
    std::vector<T>().swap(work_);
    std::vector<T>().swap(scratch_);
    merged_.release();
    std::vector<Sample>().swap(merged_samples_);
    // p >= 3: a group that found the comparator broken must tell every PE, and so must a PE
    // whose comparator threw (a comparator that may throw costs this agreement where none would
    // be needed otherwise: p = 2, one gathered base case, or an exact order, which no group
    // finds broken and which never throws). With verify: check.
    if ((p_ >= 3 && !whole_small_ && !kExactOrder) || config_.verify || (p_ >= 2 && !localsort::kCannotThrow<Less, T>)) {
      agree_and_verify(data, n);
    } else if (fault_.thrown) {
      throw_thrown();
    } else if (!broken_.empty()) {
      throw_broken();
    }
  }

  struct Sample {
    T key;
    std::int64_t index;
  };

  // Samples travel as a datatype of their own, made on first use: a sort on two PEs sends
  // none, and making one costs about as much as a small message.
  MPI_Datatype sample_type() {
    if (sample_type_ == MPI_DATATYPE_NULL) {
      MPI_Datatype type = MPI_DATATYPE_NULL;
      check_mpi(MPI_Type_contiguous(static_cast<int>(sizeof(Sample)), MPI_BYTE, &type), "MPI_Type_contiguous");
      const int committed = MPI_Type_commit(&type);
      if (committed != MPI_SUCCESS) MPI_Type_free(&type);
      check_mpi(committed, "MPI_Type_commit");
      sample_type_ = type;
    }
    return sample_type_;
  }

  // Guards against comparators that are not strict weak orders (issue 18, class 6). A group
  // gives up a task (leaving its elements where they are) when its recursion depth or its
  // pivot retries pass these bounds; both counts are the same on every member, so the whole
  // group decides alike and no member waits for another. A strict weak order stays far below
  // them (the depth is about log2 p, a retry needs the pivot to be a group's maximum).
  static constexpr int kMaxRetries = 32;
  // std::less on numbers: sort() rejects NaN keys for it before anything moves.
  static constexpr bool kLessOnNumbers =
      std::is_arithmetic_v<T> && (std::is_same_v<Less, std::less<T>> || std::is_same_v<Less, std::less<>>);
  // A strict weak order that every PE evaluates alike: std::less on numbers (NaN rejected) and
  // std::greater on integers.
  static constexpr bool kExactOrder =
      kLessOnNumbers ||
      (std::is_integral_v<T> && (std::is_same_v<Less, std::greater<T>> || std::is_same_v<Less, std::greater<>>));
  int depth_limit() const { return 4 * static_cast<int>(std::ceil(std::log2(p_))) + 32; }
  static constexpr std::uint64_t kFingerprintMask = (std::uint64_t(1) << 40) - 1;

  // comp(x, x) on up to 16 input elements spread over the local data.
  long long reflexive_elements(const std::vector<T>& data) const {
    const std::size_t m = data.size();
    const std::size_t checks = std::min<std::size_t>(m, 16);
    long long bad = 0;
    for (std::size_t c = 0; c < checks; ++c) {
      const T& x = data[c * m / checks];
      if (less_(x, x)) ++bad;
    }
    return bad;
  }

  // Order-independent hash of the elements' bytes (a sum of per-element hashes mod 2^40).
  static std::uint64_t fingerprint(const T* first, std::size_t count) {
    std::uint64_t sum = 0;
    for (std::size_t i = 0; i < count; ++i) {
      const unsigned char* bytes = reinterpret_cast<const unsigned char*>(first + i);
      std::uint64_t h = 0x9e3779b97f4a7c15ULL;
      for (std::size_t b = 0; b < sizeof(T); ++b) {
        h ^= bytes[b];
        h *= 0x100000001b3ULL;
        h ^= h >> 29;
      }
      sum += h ^ (h >> 32);
    }
    return sum & kFingerprintMask;
  }

  void comparator_broken(const std::string& why) {
    if (broken_.empty()) broken_ = why;
  }

  [[noreturn]] void throw_thrown() const {
    throw Error(fault_.describe() +
                "; every PE ran the sort to its end comparing nothing after that, so the output is a "
                "permutation of the input, not sorted");
  }

  [[noreturn]] void throw_broken() const {
    throw Error(std::string("the comparator is not a strict weak order (") +
                (broken_.empty() ? "found on another PE" : broken_) +
                "); the output is a permutation of the input, not sorted");
  }

  // Whether a task of `elements` on >= 3 PEs is solved by one gather and one broadcast.
  bool is_small(std::int64_t elements) const {
    return config_.gather_elements > 0 && elements <= config_.gather_elements &&
           elements * static_cast<std::int64_t>(sizeof(T)) < INT_MAX / 2;
  }

  // Whether a child task of `elements` on `members` >= 3 PEs is a gathered base case. Where a
  // level's communicators cost nothing (RBC), only up to kGatherPerMember elements per member:
  // a gathered base case moves all but a member's share through its root (its part's root where
  // cut), while another level and pairs move each element about once more. At n/p = 2048 on 8,
  // 12 and 16 PEs, children of up to 4096 elements on 3 or more PEs took longer gathered
  // (simulated `supermuc` 4-9%, `node-16c` 4%; docs/benchmarks.md, "Fewer gathered base
  // cases"); on the MPI layer, where a level creates communicators, not so.
  static constexpr std::int64_t kGatherPerMember = 1024;
  bool child_is_small(std::int64_t elements, int members) const {
    if (!is_small(elements)) return false;
    return !LayerT::kMergingAllgather || elements <= kGatherPerMember * members;
  }

  // Whether the whole input of n elements on >= 3 PEs is one base case: at most
  // gather_elements, or, on two nodes for an exact order (two merging allgathers and a swap of
  // slices: start_two_nodes), up to twice that. On one node an exact order beyond
  // gather_elements is sorted by samples instead (sample_sorts), which replaced a merging
  // allgather of up to twice gather_elements there (docs/benchmarks.md, "The whole input
  // sorted by samples on one node").
  bool whole_is_small(std::int64_t n) const {
    if (is_small(n)) return true;
    return on_two_nodes() && is_small((n + 1) / 2);
  }

  // One point-to-point shift of boundary elements (verify only) and one scan-and-broadcast of
  // four flags over all PEs; every PE throws the same error.
  void agree_and_verify(const std::vector<T>& result, std::int64_t n) {
    long long mine[4] = {broken_.empty() ? 0 : 1, 0, 0, fault_.thrown ? 1 : 0};
    if (config_.verify) {
      if (!std::is_sorted(result.begin(), result.end(), less_)) mine[1] = 1;
      const std::int64_t next_cap = rank_ + 1 < p_ ? layout_->cap(rank_ + 1) : 0;
      T boundary = T();
      Pool pool;
      if (rank_ > 0 && !result.empty()) {
        layer_.isend(pool, layer_.root(), result.data(), 1, type_, rank_ - 1, kVerifyTag);
      }
      if (next_cap > 0 && !result.empty()) {
        layer_.irecv(pool, layer_.root(), &boundary, 1, type_, rank_ + 1, kVerifyTag,
                     [](int, int) {});
      }
      while (!pool.empty()) pool.progress();
      if (next_cap > 0 && !result.empty() && less_(boundary, result.back())) mine[1] = 1;
      const std::uint64_t out = fingerprint(result.data(), result.size());
      mine[2] = static_cast<long long>((fingerprint_ - out) & kFingerprintMask);
    }
    long long prefix[4] = {0, 0, 0, 0}, total[4] = {0, 0, 0, 0};
    LayerT::scan_and_bcast_now(layer_.root(), mine, prefix, total, 4);
    (void)n;
    if (total[3] > 0) throw_thrown();
    if (total[0] > 0) throw_broken();
    if (total[1] > 0) {
      throw Error("verify: the output is not globally sorted (is the comparator a strict weak "
                  "order?)");
    }
    if ((static_cast<std::uint64_t>(total[2]) & kFingerprintMask) != 0) {
      throw Error("verify: the output is not a permutation of the input (multiset fingerprint "
                  "differs)");
    }
  }

  // Data tags (1..8) carry the kind, the level's parity (a fast PE may already send the next
  // level's data while a slow one still receives this level's) and whether the receiver is the
  // group's last PE (which of a janus PE's two groups the data is for). Either is needed where
  // groups share a message channel: the RBC layer's posted receives, and RBC contexts, which
  // two communicators share with tiny probability.
  static constexpr int kTagBase = 9;
  static constexpr int kVerifyTag = kTagBase + 3;

  // A piece of a region that arrived from `source` (a group rank), at `offset` in the region.
  struct Piece {
    int source;
    std::int64_t offset;
    std::int64_t count;
  };
  // The global indices [begin, end) of this PE's target segment that receive small (kind 0)
  // or large (kind 1) elements.
  struct Region {
    std::int64_t begin = 0;
    std::int64_t end = 0;
    std::int64_t filled = 0;
    std::vector<Piece> pieces;
    std::int64_t remaining() const { return end - begin - filled; }
  };

  struct Task {
    std::int64_t gb = 0, ge = 0;  // global indices of the task
    int first = 0, last = 0;      // group, as ranks of the root communicator
    Comm comm;
    int attempt = 0;
    int depth = 0;
    bool first_level = false;
    int level = 0;

    // State of the current level.
    int phase = kPivot;
    T* src = nullptr;             // this PE's elements of the task ...
    std::int64_t g0 = 0, m = 0;   // ... at global indices [g0, g0 + m) of the source order
    T* dst = nullptr;             // where they go: global indices [t0, t1) of the target
    std::int64_t t0 = 0, t1 = 0;
    std::int64_t k = 0;
    std::vector<Sample> samples;
    std::vector<Sample> gathered;
    std::vector<Sample> inherited;  // the parent's samples that fell into this task, in order
    Sample pivot{};
    // (small, large, whether this PE's samples showed comp(x, x) true, and small and large
    // again from the PEs of stream 0 only); scanned over the group, or (small groups, see
    // gathers_counts) the first three gathered from every member into `gathered_counts`.
    long long counts[5] = {0, 0, 0, 0, 0};
    long long prefix[5] = {0, 0, 0, 0, 0};
    long long totals[5] = {0, 0, 0, 0, 0};
    std::vector<long long> gathered_counts;
    Region regions[2];
    bool degenerate = false;
    bool reflexive_sample = false;
    bool abandoned = false;  // a member's samples showed a broken comparator: no children

    std::int64_t size() const { return ge - gb; }
    int group_size() const { return last - first + 1; }
  };

  struct Child {
    std::int64_t gb, ge;
    int first, last;
  };

  bool sample_less(const Sample& a, const Sample& b) const {
    if (less_(a.key, b.key)) return true;
    if (less_(b.key, a.key)) return false;
    return a.index < b.index;
  }

  long long count_nans(const std::vector<T>& data) const {
    if constexpr (std::is_floating_point<T>::value && kLessOnNumbers) {
      long long nans = 0;
      for (const T& x : data) nans += std::isnan(x) ? 1 : 0;
      return nans;
    } else {
      (void)data;
      return 0;
    }
  }

  // ------------------------------------------------------------------------ distributed phase

  std::vector<std::unique_ptr<Task>> run_level(std::vector<std::unique_ptr<Task>>& active,
                                               int level) {
    // Tasks past the depth or retry bound are given up by their whole group (see above). An
    // exact order never passes them but by chance (a retry draws new samples): it recurses on,
    // so that its sorts need no final agreement.
    if constexpr (!kExactOrder) {
      for (auto& task : active) {
        const bool too_deep = task->depth > depth_limit();
        const bool too_many_retries = task->attempt > kMaxRetries;
        if (!too_deep && !too_many_retries) continue;
        comparator_broken(too_deep ? "the recursion passed its depth bound"
                                   : "a group's pivot retries passed their bound");
        if (!task->first_level) layer_.release(task->comm);
        task.reset();
      }
      active.erase(std::remove(active.begin(), active.end(), nullptr), active.end());
      if (active.empty()) return {};
    }
    ++stats_.levels;
    if (active.size() > 1) ++stats_.janus_levels;
    if (scratch_.empty() && !active.front()->first_level) scratch_.resize(work_.size());

    Pool pool;
    for (auto& task : active) start_task(pool, *task, level);
    while (!pool.empty()) {
      clock_.to(current_phase(active));
      pool.progress();
    }
    clock_.to(kExchange);
    for (auto& task : active) {
      if (!task->degenerate && !task->first_level && task->t1 > task->t0) copy_back(*task);
    }

    clock_.to(kCreation);
    std::vector<std::unique_ptr<Task>> next = make_children(active, level);
    clock_.to(kPivot);
    return next;
  }

  int current_phase(const std::vector<std::unique_ptr<Task>>& active) const {
    int phase = kDone;
    for (const auto& task : active) phase = std::min(phase, task->phase);
    return phase == kDone ? kExchange : phase;
  }

  static int data_tag(const Task& task, int kind, int receiver) {
    return 1 + kind + 2 * (task.level & 1) + 4 * (receiver == task.last ? 1 : 0);
  }

  void start_task(Pool& pool, Task& task, int level) {
    task.level = level;
    task.phase = kPivot;
    task.degenerate = false;
    task.reflexive_sample = false;
    task.abandoned = false;
    task.regions[0] = Region();
    task.regions[1] = Region();
    const Layout& layout = *layout_;
    task.t0 = std::max(task.gb, my_start_);
    task.t1 = std::max(task.t0, std::min(task.ge, my_end_));
    if (task.first_level) {
      task.src = input_->data();
      task.g0 = input_start_;
      task.m = static_cast<std::int64_t>(input_->size());
      task.dst = work_.data() + (task.t0 - my_start_);
    } else {
      task.src = work_.data() + (task.t0 - my_start_);
      task.g0 = task.t0;
      task.m = task.t1 - task.t0;
      task.dst = scratch_.data() + (task.t0 - my_start_);
    }
    (void)layout;

    // Pivot selection: k samples spread over the task's indices.
    const double group = task.group_size();
    const double by_p = config_.k1 * std::log2(group);
    const double by_n = config_.k2 * static_cast<double>(task.size()) / group;
    const auto samples = [&](double p_term) {
      const double k = std::max(std::max(p_term, by_n), config_.k3);
      return std::min(std::max(std::ceil(k), 1.0), static_cast<double>(INT_MAX / 8));
    };
    const std::int64_t needed = static_cast<std::int64_t>(samples(by_p));
    // The parent's samples on this side of its pivot are a uniform sample of this task's
    // elements, already in every member's hands; how many there are depends only on the
    // parent's count, so all members decide alike and the level needs no sampling round. Half
    // the log2 p' term is enough for them: a sampling round costs more than the wider spread of
    // the pivot's rank, where few elements per PE make rounds the cost. The n'/p' term stays
    // whole, since with many elements per PE an uneven split costs more (docs/benchmarks.md,
    // "Pivots from fewer inherited samples").
    if (static_cast<double>(task.inherited.size()) >= samples(by_p / 2)) {
      task.gathered = std::move(task.inherited);
      task.inherited.clear();
      task.k = static_cast<std::int64_t>(task.gathered.size());
      ++stats_.inherited_pivots;
      task.pivot = task.gathered[static_cast<std::size_t>((task.k - 1) / 2)];
      on_pivot(pool, task);
      return;
    }
    task.inherited.clear();
    // Twice the samples a pivot needs: each child inherits about as many as it needs.
    task.k = 2 * needed;
    const std::uint64_t seed = task_seed(task);
    std::vector<std::int64_t> positions;
    const std::int64_t offset = task.g0 - task.gb;
    sample_positions(seed, task.size(), task.k, offset, offset + task.m, positions);
    task.samples.clear();
    task.samples.reserve(positions.size());
    for (std::int64_t position : positions) {
      task.samples.push_back(Sample{task.src[position - offset], task.gb + position});
      if (less_(task.samples.back().key, task.samples.back().key)) {
        comparator_broken("comp(x, x) was true for a sample");
        task.reflexive_sample = true;
      }
    }
    localsort::sort(task.samples.begin(), task.samples.end(),
                    [this](const Sample& a, const Sample& b) { return sample_less(a, b); });
    cost::charge(cost::Kernel::sort, task.samples.size());
    // Every member gets all samples, in (key, index) order, and takes the same median: no
    // broadcast of the pivot. (A comparator that is not a strict weak order may give members
    // different pivots; each partitions its own elements, so the exchange stays a permutation.)
    task.gathered.assign(static_cast<std::size_t>(task.k), Sample{});
    Task* t = &task;
    layer_.allgather_merge(pool, task.comm, task.samples.data(),
                           static_cast<int>(task.samples.size()), task.gathered.data(),
                           static_cast<int>(task.k), sample_type(), sample_merger(),
                           [this, t, &pool] {
                             t->pivot = t->gathered[static_cast<std::size_t>((t->k - 1) / 2)];
                             on_pivot(pool, *t);
                           },
                           task.first_level);
  }

  // A merger of two adjacent sorted runs of E, the first one's elements before equivalent ones
  // of the second (localsort::merge is stable), through `buffer`, which the sorter keeps.
  // rbc::merger_for does the same with std::inplace_merge, which allocates a buffer per call and
  // is about four times slower on doubles (docs/benchmarks.md, "A gathered base case of keys
  // alone").
  template <class Buf, class ELess>
  static rbc::Merger buffered_merger(Buf& buffer, ELess less) {
    using E = std::remove_pointer_t<decltype(buffer.data())>;
    return [&buffer, less](void* first, void* middle, void* last) {
      E* a = static_cast<E*>(first);
      E* b = static_cast<E*>(middle);
      const std::size_t na = static_cast<std::size_t>(b - a);
      const std::size_t nb = static_cast<std::size_t>(static_cast<E*>(last) - b);
      if (na == 0 || nb == 0) return;  // already merged (and an empty run may be a null pointer)
      merge_through(buffer, a, na, b, nb, a, less);
    };
  }

  // Merges a[0, na) and b[0, nb) into `buffer` and copies the result to `out`, which may overlap
  // the runs; charged as a merge and a copy.
  template <class Buf, class E, class ELess>
  static void merge_through(Buf& buffer, const E* a, std::size_t na, const E* b, std::size_t nb, E* out,
                            ELess less) {
    const std::size_t count = na + nb;
    if (buffer.size() < count) buffer.resize(count);
    localsort::merge(a, na, b, nb, buffer.data(), less);
    std::memcpy(static_cast<void*>(out), buffer.data(), count * sizeof(E));
    cost::charge(cost::Kernel::merge, count);
    cost::charge(cost::Kernel::copy, count);
  }

  // key_merger for a merging allgather: rbc::allgatherm only copies the result of its merge call
  // number `partial` into the receive buffer (rbc::allgatherm_partial_call; 0: none), so that
  // call merges just the keys at [w0, w1) of the result, the share this PE keeps, after
  // co-ranking both ends. Other calls merge whole: their runs are sent on, even where they
  // already hold all `total` keys (PEs without keys contribute empty runs to later rounds).
  rbc::Merger window_merger(std::int64_t total, std::int64_t w0, std::int64_t w1, int partial) {
    return [this, total, w0, w1, partial, made = 0](void* first, void* middle, void* last) mutable {
      ++made;
      T* a = static_cast<T*>(first);
      T* b = static_cast<T*>(middle);
      const std::uint64_t na = static_cast<std::uint64_t>(b - a);
      const std::uint64_t nb = static_cast<std::uint64_t>(static_cast<T*>(last) - b);
      if (na == 0 || nb == 0) return;
      if (made != partial || static_cast<std::int64_t>(na + nb) != total) {
        merge_through(merged_, a, na, b, nb, a, less_);
        return;
      }
      if (w1 <= w0) return;
      const auto [ja, jb] = merge::corank(static_cast<std::uint64_t>(w0), a, na, b, nb, less_);
      const auto [ka, kb] = merge::corank(static_cast<std::uint64_t>(w1), a, na, b, nb, less_);
      merge_through(merged_, a + ja, ka - ja, b + jb, kb - jb, a + w0, less_);
    };
  }

  // Samples in (key, index) order.
  rbc::Merger sample_merger() {
    return buffered_merger(merged_samples_, [this](const Sample& a, const Sample& b) { return sample_less(a, b); });
  }

  std::uint64_t task_seed(const Task& task) const {
    return hash(config_.seed, static_cast<std::uint64_t>(task.gb - config_.index_base),
                static_cast<std::uint64_t>(task.ge - config_.index_base),
                static_cast<std::uint64_t>(task.attempt));
  }

  void on_pivot(Pool& pool, Task& task) {
    clock_.to(kPartition);
    const std::int64_t small = partition(task);
    task.counts[0] = small;
    task.counts[1] = task.m - small;
    task.counts[2] = task.reflexive_sample ? 1 : 0;
    task.phase = kCalculation;
    clock_.to(kCalculation);
    Task* t = &task;
    if (gathers_counts(task)) {
      task.gathered_counts.assign(static_cast<std::size_t>(kGatheredCounts * task.group_size()), 0);
      layer_.allgather(pool, task.comm, task.counts, task.gathered_counts.data(), kGatheredCounts,
                       [this, t, &pool] {
                         for (int i = 0; i < kGatheredCounts; ++i) t->totals[i] = 0;
                         for (int j = 0; j < t->group_size(); ++j) {
                           for (int i = 0; i < kGatheredCounts; ++i) {
                             t->totals[i] += t->gathered_counts[static_cast<std::size_t>(kGatheredCounts * j + i)];
                           }
                         }
                         on_counts(pool, *t);
                       },
                       task.first_level);
      return;
    }
    const bool first_stream = stream_of(task) == 0;
    task.counts[3] = first_stream ? task.counts[0] : 0;
    task.counts[4] = first_stream ? task.counts[1] : 0;
    layer_.scan_and_bcast(pool, task.comm, task.counts, task.prefix, task.totals, 5,
                          [this, t, &pool] { on_counts(pool, *t); }, task.first_level);
  }

  // Groups of at most this many PEs gather every member's counts instead of scanning them: as
  // many rounds (recursive doubling, log2 q + 2 with the fold), messages of at most 32 x 24 bytes
  // (the fold's last one; the exchange rounds' at most 16 x 24), and with every member's counts
  // known the exchange can keep each PE's own elements where they are (greedy_plan) instead of
  // taking the streams in proportion. Larger groups scan: gathering p' counts costs O(p') per PE.
  static constexpr int kGatherCountsUpTo = 32;
  static constexpr int kGatheredCounts = 3;  // small, large, comp(x, x) flag
  static bool gathers_counts(const Task& task) { return task.group_size() <= kGatherCountsUpTo; }

  // The StreamSplit source stream of this PE's elements of `task`: 0 for the PEs before the
  // owner of the task's middle index, 1 for the others.
  int stream_of(const Task& task) const {
    return rank_ < layout_->owner(task.gb + task.size() / 2) ? 0 : 1;
  }

  // Small iff (key, index) <= pivot: before the pivot's index that is key <= pivot key, after
  // it key < pivot key. Returns the number of small elements, which end up in front.
  std::int64_t partition(Task& task) {
    const T pivot = task.pivot.key;
    const Compare& less = less_;
    T* begin = task.src;
    T* end = task.src + task.m;
    const std::int64_t before = std::min(std::max<std::int64_t>(task.pivot.index - task.g0 + 1, 0),
                                         task.m);
    T* cut = begin + before;
    T* small_end_1 = localsort::partition(begin, cut, [&](const T& x) { return !less(pivot, x); });
    T* small_end_2 = localsort::partition(cut, end, [&](const T& x) { return less(x, pivot); });
    std::rotate(small_end_1, cut, small_end_2);
    cost::charge(cost::Kernel::partition, static_cast<std::size_t>(task.m));
    return (small_end_1 - begin) + (small_end_2 - cut);
  }

  void on_counts(Pool& pool, Task& task) {
    const std::int64_t s = task.totals[0];
    if (task.totals[0] + task.totals[1] != task.size()) {
      throw Error("internal: counts of a group do not add up");
    }
    // Every member learns from the same totals that some member's samples showed comp(x, x)
    // true: the group still moves its data (a permutation) but gives up the task after that,
    // instead of recursing with a comparator known to be broken.
    task.abandoned = task.totals[2] > 0;
    if (task.abandoned) comparator_broken("comp(x, x) was true for a sample of another PE");
    if (!task.first_level && !task.abandoned && (s == 0 || s == task.size())) {
      // The pivot was the group's largest element: nothing to split, draw again.
      task.degenerate = true;
      task.phase = kDone;
      return;
    }
    task.phase = kExchange;
    clock_.to(kExchange);
    task.regions[0].begin = task.t0;
    task.regions[0].end = std::max(task.t0, std::min(task.t1, task.gb + s));
    task.regions[1].begin = std::min(task.t1, std::max(task.t0, task.gb + s));
    task.regions[1].end = task.t1;

    const std::int64_t bounds[3] = {task.gb, task.gb + s, task.ge};
    std::int64_t offset = 0;
    std::vector<Target> targets;
    for (int kind = 0; kind < 2; ++kind) {
      if (gathers_counts(task)) {
        greedy_plan(task, kind, bounds[kind], bounds[kind + 1], targets);
      } else {
        stream_plan(task, kind, bounds[kind], bounds[kind + 1], targets);
      }
      for (const Target& target : targets) {
        const std::int64_t piece = target.count;
        if (target.owner == rank_) {
          Region& region = task.regions[kind];
          std::copy(task.src + offset, task.src + offset + piece,
                    task.dst + (region.begin - task.t0) + region.filled);
          stats_.bytes_copied += static_cast<long long>(piece * sizeof(T));
          cost::charge(cost::Kernel::copy, static_cast<std::size_t>(piece));
          region.pieces.push_back(Piece{rank_ - task.first, region.filled, piece});
          region.filled += piece;
        } else {
          layer_.isend(pool, task.comm, task.src + offset, static_cast<int>(piece), type_,
                       target.owner - task.first, data_tag(task, kind, target.owner));
          ++stats_.messages_sent;
        }
        offset += piece;
      }
    }
    for (int kind = 0; kind < 2; ++kind) {
      if (task.regions[kind].remaining() > 0) {
        post_receive(pool, task, kind);
      } else {
        order_pieces(task, kind);
      }
    }
    update_done(task);
  }

  // Where this PE's next `count` elements of one kind go (owner: a rank of the root).
  struct Target {
    int owner;
    std::int64_t count;
  };

  // The targets of this PE's elements of `kind`, which fill the global indices [lo, hi), when
  // each owner takes both streams in proportion (stream_split.hpp). Stream 0's PEs come first in
  // the group, so a PE's position in its stream is its prefix, less stream 0's total for stream 1.
  void stream_plan(const Task& task, int kind, std::int64_t lo, std::int64_t hi,
                   std::vector<Target>& targets) const {
    targets.clear();
    const int stream = stream_of(task);
    const StreamSplit split(*layout_, lo, hi - lo, task.totals[3 + kind]);
    std::int64_t left = task.counts[kind];
    std::int64_t y = task.prefix[kind] - left - (stream == 0 ? 0 : task.totals[3 + kind]);
    int owner = left > 0 ? split.owner_of(stream, y) : split.last();
    while (left > 0) {
      if (owner > split.last()) throw Error("internal: exchange targets past the group");
      const std::int64_t piece = std::min(left, split.hi(stream, owner) - y);
      if (piece > 0) targets.push_back(Target{owner, piece});
      y += piece;
      left -= piece;
      ++owner;
    }
  }

  // The same from every member's counts (gathers_counts): each PE keeps as many of its own
  // elements as its share of [lo, hi) holds, and the surplus of the members in group order fills
  // the owners' remaining room in group order. Every member computes the same plan, so the
  // result stays exactly balanced and deterministic; a PE sends one or two pieces of a kind
  // where taking the streams in proportion sends two or three (one of them a spill to its
  // neighbour), and receives as many.
  void greedy_plan(const Task& task, int kind, std::int64_t lo, std::int64_t hi,
                   std::vector<Target>& targets) const {
    targets.clear();
    const Layout& layout = *layout_;
    auto room = [&](int t) {
      return std::max<std::int64_t>(0, std::min(layout.end(t), hi) - std::max(layout.start(t), lo));
    };
    auto count = [&](int t) {
      return static_cast<std::int64_t>(
          task.gathered_counts[static_cast<std::size_t>(kGatheredCounts * (t - task.first) + kind)]);
    };
    // Room the owners before `owner` have left, walked by the members before this PE.
    int owner = task.first;
    std::int64_t open = room(owner) - std::min(count(owner), room(owner));
    auto take = [&](std::int64_t amount, bool mine) {
      while (amount > 0) {
        while (open == 0) {
          if (++owner > task.last) throw Error("internal: exchange targets past the group");
          open = room(owner) - std::min(count(owner), room(owner));
        }
        const std::int64_t piece = std::min(amount, open);
        if (mine) targets.push_back(Target{owner, piece});
        open -= piece;
        amount -= piece;
      }
    };
    for (int j = task.first; j < rank_; ++j) take(count(j) - std::min(count(j), room(j)), false);
    const std::int64_t kept = std::min(count(rank_), room(rank_));
    if (kept > 0) targets.push_back(Target{rank_, kept});
    take(count(rank_) - kept, true);
  }

  void post_receive(Pool& pool, Task& task, int kind) {
    Region& region = task.regions[kind];
    Task* t = &task;
    layer_.receive_any(pool, task.comm, task.dst + (region.begin - task.t0) + region.filled,
                       static_cast<int>(region.remaining()), type_, data_tag(task, kind, rank_),
                       [this, t, kind, &pool](int source, int count) {
                   Region& r = t->regions[kind];
                   if (count <= 0) throw Error("internal: empty data message");
                   r.pieces.push_back(Piece{source, r.filled, count});
                   r.filled += count;
                   ++stats_.messages_received;
                   if (r.remaining() > 0) {
                     post_receive(pool, *t, kind);
                   } else {
                     order_pieces(*t, kind);
                     update_done(*t);
                   }
                 });
  }

  // Pieces arrive in any order; their indices follow source order. After the first level the
  // level's copy back into the source buffer (copy_back) puts them in that order; the first
  // level's target is the working buffer itself, so its pieces are ordered here.
  void order_pieces(Task& task, int kind) {
    Region& region = task.regions[kind];
    std::vector<Piece>& pieces = region.pieces;
    std::sort(pieces.begin(), pieces.end(),
              [](const Piece& a, const Piece& b) { return a.source < b.source; });
    if (!task.first_level || in_order(region)) return;
    T* base = task.dst + (region.begin - task.t0);
    std::vector<T> ordered;
    ordered.reserve(static_cast<std::size_t>(region.filled));
    for (const Piece& piece : pieces) {
      ordered.insert(ordered.end(), base + piece.offset, base + piece.offset + piece.count);
    }
    std::copy(ordered.begin(), ordered.end(), base);
    stats_.bytes_copied += static_cast<long long>(2 * ordered.size() * sizeof(T));
    cost::charge(cost::Kernel::copy, 2 * ordered.size());
  }

  static bool in_order(const Region& region) {
    for (std::size_t i = 1; i < region.pieces.size(); ++i) {
      if (region.pieces[i].offset < region.pieces[i - 1].offset) return false;
    }
    return true;
  }

  // Copies a later level's received data from its target (dst) back into the working buffer
  // (src), each region's pieces in source order: one copy, whatever order they arrived in.
  void copy_back(const Task& task) {
    for (const Region& region : task.regions) {
      const T* from = task.dst + (region.begin - task.t0);
      T* to = task.src + (region.begin - task.t0);
      for (const Piece& piece : region.pieces) {
        to = std::copy(from + piece.offset, from + piece.offset + piece.count, to);
      }
    }
    stats_.bytes_copied += static_cast<long long>((task.t1 - task.t0) * sizeof(T));
    cost::charge(cost::Kernel::copy, static_cast<std::size_t>(task.t1 - task.t0));
  }

  void update_done(Task& task) {
    if (task.regions[0].remaining() == 0 && task.regions[1].remaining() == 0) task.phase = kDone;
  }

  std::vector<Child> children_of(const Task& task) const {
    std::vector<Child> children;
    const std::int64_t s = task.totals[0];
    const std::int64_t bounds[3] = {task.gb, task.gb + s, task.ge};
    for (int i = 0; i < 2; ++i) {
      if (bounds[i] == bounds[i + 1]) continue;
      children.push_back(Child{bounds[i], bounds[i + 1], layout_->owner(bounds[i]),
                               layout_->owner(bounds[i + 1] - 1)});
    }
    return children;
  }

  // Children on >= 3 PEs become next level's tasks (with new communicators); those on 1 or 2
  // PEs are remembered as base cases.
  std::vector<std::unique_ptr<Task>> make_children(std::vector<std::unique_ptr<Task>>& active,
                                                   int level) {
    struct Creation {
      Task* parent;
      Child child;
      bool member;
      int which;
    };
    std::vector<std::vector<Creation>> by_parent;
    std::vector<std::unique_ptr<Task>> next;
    const bool all_members = layer_.creation_needs_all_parent_members();
    for (auto& task : active) {
      by_parent.emplace_back();
      if (task->degenerate || task->abandoned) continue;
      const std::vector<Child> children = children_of(*task);
      for (std::size_t i = 0; i < children.size(); ++i) {
        const Child& c = children[i];
        const bool member = c.first <= rank_ && rank_ <= c.last;
        const int size = c.last - c.first + 1;
        if (size >= 3) {
          if (member || all_members) {
            by_parent.back().push_back(Creation{task.get(), c, member, static_cast<int>(i)});
          }
        } else if (member) {
          base_cases_.push_back(c);
        }
      }
    }
    std::vector<Creation> order;
    const bool reverse = config_.schedule == Schedule::alternating && (rank_ + level) % 2 == 1;
    // With MPI_Comm_split every parent member must call the splits of one parent in the same
    // order, so only the order of the parents may change; otherwise a PE's own creations
    // (at most two) may come in any order.
    if (reverse && all_members) std::reverse(by_parent.begin(), by_parent.end());
    for (auto& list : by_parent) order.insert(order.end(), list.begin(), list.end());
    if (reverse && !all_members) std::reverse(order.begin(), order.end());

    std::vector<std::unique_ptr<Task>> created;
    for (const Creation& creation : order) {
      const Child& c = creation.child;
      Comm comm = layer_.create_child(creation.parent->comm, c.first - creation.parent->first,
                                      c.last - creation.parent->first, creation.member,
                                      creation.which);
      if (!creation.member) continue;
      if (child_is_small(c.ge - c.gb, c.last - c.first + 1)) {
        auto small = std::make_unique<Small>();
        small->gb = c.gb;
        small->ge = c.ge;
        small->comm = std::move(comm);
        smalls_.push_back(std::move(small));
        continue;
      }
      auto child = std::make_unique<Task>();
      child->gb = c.gb;
      child->ge = c.ge;
      child->first = c.first;
      child->last = c.last;
      child->depth = creation.parent->depth + 1;
      child->comm = std::move(comm);
      inherit_samples(*creation.parent, *child);
      created.push_back(std::move(child));
    }
    for (auto& task : active) {
      if (task->degenerate) {
        ++task->attempt;
        ++stats_.retries;
        next.push_back(std::move(task));
      } else {
        if (!task->first_level) layer_.release(task->comm);
        for (auto& child : created) {
          if (child && child->gb >= task->gb && child->ge <= task->ge) {
            next.push_back(std::move(child));
          }
        }
      }
    }
    std::sort(next.begin(), next.end(), [](const std::unique_ptr<Task>& a,
                                           const std::unique_ptr<Task>& b) { return a->gb < b->gb; });
    return next;
  }

  // The parent's samples at or below its pivot go to its small child, the others to its large
  // one (by position in the sorted samples, so the counts are the same on every member).
  void inherit_samples(const Task& parent, Task& child) const {
    const std::vector<Sample>& all = parent.gathered;
    const std::size_t cut = static_cast<std::size_t>((parent.k - 1) / 2) + 1;
    if (all.size() != static_cast<std::size_t>(parent.k) || cut > all.size()) return;
    const bool small_child = child.gb == parent.gb && parent.totals[0] > 0;
    if (small_child) {
      child.inherited.assign(all.begin(), all.begin() + static_cast<std::ptrdiff_t>(cut));
    } else {
      child.inherited.assign(all.begin() + static_cast<std::ptrdiff_t>(cut), all.end());
    }
  }

  // ------------------------------------------------------------------------------ base cases

  // A base case on two PEs moves only the elements that cross (item 2 of issue 17). The left
  // PE holds A, the right PE B; the left PE keeps the first L elements of the pair in merged
  // order (ties: A first), that is A[0, i) and B[0, L - i) for the co-rank i. Both PEs sort
  // their elements; then three steps, in each of which both PEs send at once:
  //   1. each sends its keys around K candidate splits spread over the range where i can lie
  //      (both know it: max(0, L - |B|) .. min(|A|, L)): A[i-1], A[i] from the left, B[j-1],
  //      B[j] (j = L - i) from the right. Both PEs now hold the same keys and narrow the range
  //      alike to [lo, hi], at most range / K wide (a range shorter than kDirectRange skips this
  //      step: it is the window);
  //   2. the left PE sends A[lo, |A|), the right PE B[0, L - lo): what crosses plus the window
  //      whose side is not decided yet. Each count tells the receiver the sender's lo;
  //   3. each PE finds i in the window by binary search and sends it; both use the left PE's
  //      (under an exact order, std::less on numbers, neither sends: both find the same i).
  // The two large messages travel at the same time. Each PE then merges what it keeps with what
  // it received. Both PEs hold the data for any i at or above both lo's, so a comparator that
  // is not a strict weak order can make the PEs disagree on i (which both then see and report)
  // but never lose or duplicate an element.
  static constexpr int kKeysTag = kTagBase + 1;
  static constexpr int kSplitTag = kTagBase + 2;
  // Below this range width step 1 costs more than it saves: the whole range is the window.
  static constexpr std::int64_t kDirectRange = 64;

  struct Pair {
    T* src = nullptr;             // this PE's elements (sorted in place first)
    std::int64_t mine = 0;        // how many
    std::int64_t theirs = 0;      // how many the partner holds
    bool left = false;            // this PE is the pair's left PE (holds A; the partner B)
    std::int64_t left_share = 0;  // L: how many elements of the pair the left PE keeps
    T* dst = nullptr;             // where this PE's share goes (may equal src)
    int partner = 0;
    std::int64_t lo = 0, hi = 0;  // the range of i; step 1 narrows lo
    std::int64_t partner_lo = 0;  // the partner's lo, read from the count of its run
    std::int64_t split[1] = {-1};          // the i this PE found (step 3's message)
    std::int64_t partner_split[1] = {-1};  // the i the partner found
    std::int64_t i = -1;                   // the co-rank both use
    std::vector<T> my_keys, their_keys;    // step 1
    // The partner's run: A[lo, |A|) on the right, B[0, L - lo) on the left (uninitialised
    // storage: MPI writes it).
    std::unique_ptr<T[]> incoming;
    std::int64_t incoming_count = 0;
  };

  std::int64_t size_a(const Pair& pair) const { return pair.left ? pair.mine : pair.theirs; }
  std::int64_t size_b(const Pair& pair) const { return pair.left ? pair.theirs : pair.mine; }

  // Step 1's candidate splits, computed alike on both PEs: about sqrt(range) of them, so the
  // keys and the undecided window cost about the same.
  static std::int64_t candidate_count(std::int64_t lo, std::int64_t hi) {
    const std::int64_t range = hi - lo;
    std::int64_t k = 16;
    while (k < 512 && k * k < range) k *= 2;
    return std::min(k, range + 1);
  }
  static std::int64_t candidate(std::int64_t lo, std::int64_t hi, std::int64_t t) {
    const std::int64_t m = candidate_count(lo, hi);
    return m == 1 ? lo : lo + (t * (hi - lo)) / (m - 1);
  }

  void solve_pairs(std::vector<Pair>& pairs) {
    Pool pool;
    start_pairs(pool, pairs);
    while (!pool.empty()) pool.progress();
    for (Pair& pair : pairs) merge_pair(pair);
  }

  // Sorts each pair's elements and starts its exchange in `pool`; merge_pair finishes it.
  void start_pairs(Pool& pool, std::vector<Pair>& pairs) {
    clock_.to(kLocalSort);
    for (Pair& pair : pairs) {
      localsort::sort(pair.src, pair.src + pair.mine, less_);
      cost::charge(cost::Kernel::sort, static_cast<std::size_t>(pair.mine));
    }
    clock_.to(kBase);
    for (Pair& pair : pairs) {
      pair.lo = std::max<std::int64_t>(0, pair.left_share - size_b(pair));
      pair.hi = std::min(size_a(pair), pair.left_share);
      if (pair.hi - pair.lo >= kDirectRange) {
        exchange_keys(pool, pair);
      } else {  // a short range travels whole (i = lo when it is empty: nothing to agree on)
        exchange_runs(pool, pair, pair.lo < pair.hi);
      }
    }
  }

  // Whether the left PE keeps fewer than i elements of A (B[j-1] is not before A[i]);
  // `a(k)` and `b(k)` read A[k] and B[k] wherever this PE holds them.
  template <class ReadA, class ReadB>
  bool too_few(const Pair& pair, std::int64_t i, ReadA a, ReadB b) const {
    const std::int64_t j = pair.left_share - i;
    return j > 0 && i < size_a(pair) && !less_(b(j - 1), a(i));
  }

  // Step 1.
  void exchange_keys(Pool& pool, Pair& pair) {
    const std::int64_t m = candidate_count(pair.lo, pair.hi);
    pair.my_keys.assign(static_cast<std::size_t>(2 * m), T());
    for (std::int64_t t = 0; t < m; ++t) {
      const std::int64_t i = candidate(pair.lo, pair.hi, t);
      const std::int64_t k = pair.left ? i : pair.left_share - i;  // A's i or B's j
      if (k > 0) pair.my_keys[static_cast<std::size_t>(2 * t)] = pair.src[k - 1];
      if (k < pair.mine) pair.my_keys[static_cast<std::size_t>(2 * t + 1)] = pair.src[k];
    }
    layer_.isend(pool, layer_.root(), pair.my_keys.data(), static_cast<int>(2 * m), type_,
                 pair.partner, kKeysTag);
    pair.their_keys.resize(static_cast<std::size_t>(2 * m));
    Pair* p = &pair;
    layer_.irecv(pool, layer_.root(), pair.their_keys.data(), static_cast<int>(2 * m), type_,
                 pair.partner, kKeysTag, [this, p, m, &pool](int, int count) {
                   if (count != 2 * m) throw Error("internal: co-ranking key count");
                   narrow(*p, m);
                   exchange_runs(pool, *p, true);
                 });
  }

  // i is right iff A[i-1] is not after B[j] and B[j-1] is before A[i]; every candidate that
  // fails one test moves an end of [lo, hi]. The same keys on both PEs give the same range.
  void narrow(Pair& pair, std::int64_t m) {
    const std::vector<T>& a_keys = pair.left ? pair.my_keys : pair.their_keys;
    const std::vector<T>& b_keys = pair.left ? pair.their_keys : pair.my_keys;
    const std::int64_t lo = pair.lo, hi = pair.hi;
    std::int64_t new_lo = lo, new_hi = hi;
    for (std::int64_t t = 0; t < m; ++t) {
      const std::int64_t i = candidate(lo, hi, t);
      const std::int64_t j = pair.left_share - i;
      const std::size_t below = static_cast<std::size_t>(2 * t), at = below + 1;
      const bool too_many = i > 0 && j < size_b(pair) && less_(b_keys[at], a_keys[below]);
      const bool few = j > 0 && i < size_a(pair) && !less_(b_keys[below], a_keys[at]);
      if (!too_many && !few) {
        new_lo = new_hi = i;
        break;
      }
      if (few) new_lo = std::max(new_lo, i + 1);
      if (too_many) new_hi = std::min(new_hi, i - 1);
    }
    // A comparator that is not a strict weak order can empty the interval.
    pair.lo = std::min(new_lo, hi);
    pair.hi = std::max(new_hi, pair.lo);
  }

  // Step 2: send this PE's part from lo on, receive the partner's; with `search`, find i in the
  // window and agree on it (step 3), else i = lo.
  void exchange_runs(Pool& pool, Pair& pair, bool search) {
    const std::int64_t first_lo = std::max<std::int64_t>(0, pair.left_share - size_b(pair));
    if (pair.left) {
      layer_.isend(pool, layer_.root(), pair.src + pair.lo,
                   static_cast<int>(pair.mine - pair.lo), type_, pair.partner, kTagBase);
    } else {
      layer_.isend(pool, layer_.root(), pair.src, static_cast<int>(pair.left_share - pair.lo),
                   type_, pair.partner, kTagBase);
    }
    ++stats_.messages_sent;
    // The partner's lo is at least the range's first value. Where the share goes back over
    // the input, merge_pair first moves what this PE keeps behind the received run.
    const std::int64_t capacity =
        pair.left ? pair.left_share - first_lo : size_a(pair) - first_lo;
    const std::int64_t last_i = std::min(size_a(pair), pair.left_share);
    const std::int64_t most_kept = pair.left ? last_i : pair.mine - pair.left_share + last_i;
    const std::int64_t room = pair.dst == pair.src ? most_kept : 0;
    pair.incoming.reset(new T[static_cast<std::size_t>(capacity + room)]);
    Pair* p = &pair;
    layer_.irecv(pool, layer_.root(), pair.incoming.get(), static_cast<int>(capacity), type_,
                 pair.partner, kTagBase,
                 [this, p, first_lo, search, &pool](int, int count) {
                   ++stats_.messages_received;
                   const std::int64_t partner_lo =
                       p->left ? p->left_share - count : size_a(*p) - count;
                   if (count < 0 || partner_lo < first_lo ||
                       partner_lo > std::min(size_a(*p), p->left_share)) {
                     throw Error("internal: base case message size");
                   }
                   p->partner_lo = partner_lo;
                   p->incoming_count = count;
                   if (!search) {
                     p->i = p->lo;
                     return;
                   }
                   find_split(*p);
                   exchange_splits(pool, *p);
                 });
  }

  // The first i in [max(lo, partner_lo), min(|A|, L)] that is not too few: both PEs hold
  // A[i] and B[j-1] for every i there.
  void find_split(Pair& pair) {
    const std::int64_t from = std::max(pair.lo, pair.partner_lo);
    const T* mine = pair.src;
    const T* window = pair.incoming.get();  // B[0, ...) on the left, A[partner_lo, ...) on the right
    const std::int64_t offset = pair.partner_lo;
    const auto local = [mine](std::int64_t k) -> const T& { return mine[k]; };
    const auto shifted = [window, offset](std::int64_t k) -> const T& {
      return window[k - offset];
    };
    const auto received = [window](std::int64_t k) -> const T& { return window[k]; };
    std::int64_t first = from, last = std::min(size_a(pair), pair.left_share);
    while (first < last) {
      const std::int64_t i = first + (last - first) / 2;
      const bool few = pair.left ? too_few(pair, i, local, received)
                                 : too_few(pair, i, shifted, local);
      if (few) {
        first = i + 1;
      } else {
        last = i;
      }
    }
    pair.split[0] = first;
  }

  // Step 3: both PEs use the left PE's i.
  void exchange_splits(Pool& pool, Pair& pair) {
    if constexpr (kExactOrder) {
      pair.i = pair.split[0];
      return;
    }
    layer_.isend(pool, layer_.root(), pair.split, 1, MPI_INT64_T, pair.partner, kSplitTag);
    Pair* p = &pair;
    layer_.irecv(pool, layer_.root(), pair.partner_split, 1, MPI_INT64_T, pair.partner,
                 kSplitTag, [this, p](int, int count) {
                   const std::int64_t i = p->left ? p->split[0] : p->partner_split[0];
                   const std::int64_t from = std::max(p->lo, p->partner_lo);
                   if (count != 1 || i < from || i > std::min(size_a(*p), p->left_share)) {
                     throw Error("internal: base case split out of range");
                   }
                   if (p->split[0] != p->partner_split[0]) {
                     comparator_broken("the two PEs of a base case found different splits");
                   }
                   p->i = i;
                 });
  }

  // After every message has arrived: merge what this PE keeps with what it received. Where the
  // share goes back over the input, the kept part moves behind the received run first (half
  // the elements, not a copy of the whole merged share).
  void merge_pair(Pair& pair) {
    const std::int64_t i = pair.i;
    const std::int64_t j = pair.left_share - i;
    const T* kept = pair.left ? pair.src : pair.src + j;  // A[0, i) or B[j, |B|)
    const std::size_t kept_count = static_cast<std::size_t>(pair.left ? i : pair.mine - j);
    T* received = pair.incoming.get();
    if (pair.dst == pair.src && kept_count > 0) {  // an empty PE may hold no storage at all
      T* moved = received + pair.incoming_count;
      std::memcpy(static_cast<void*>(moved), kept, kept_count * sizeof(T));
      stats_.bytes_copied += static_cast<long long>(kept_count * sizeof(T));
      kept = moved;
    }
    const T *a, *b;
    std::size_t na, nb;
    if (pair.left) {  // A[0, i) and B[0, j)
      a = kept;
      na = kept_count;
      b = received;
      nb = static_cast<std::size_t>(j);
    } else {  // A[i, |A|) and B[j, |B|)
      a = received + (i - pair.partner_lo);
      na = static_cast<std::size_t>(pair.theirs - i);
      b = kept;
      nb = kept_count;
    }
    localsort::merge(a, na, b, nb, pair.dst, less_);
    stats_.bytes_copied += static_cast<long long>((na + nb) * sizeof(T));
    cost::charge(cost::Kernel::merge, na + nb);
    pair.incoming.reset();
    std::vector<T>().swap(pair.my_keys);
    std::vector<T>().swap(pair.their_keys);
  }

  void solve_first_level_pair(std::vector<T>& data, std::int64_t n, bool in_place) {
    std::vector<Pair> pairs(1);
    Pair& pair = pairs[0];
    pair.src = data.data();
    pair.mine = static_cast<std::int64_t>(data.size());
    pair.theirs = n - pair.mine;
    pair.left = rank_ == 0;
    pair.left_share = layout_->cap(0);
    pair.dst = in_place ? data.data() : work_.data();
    pair.partner = 1 - rank_;
    solve_pairs(pairs);
    if (in_place) work_.swap(data);  // sort() hands work_ back
  }

  void solve_base_cases() {
    // Single-PE base cases first: a partner that sorted them only after its pairs would make
    // the other PE of a pair wait for that sort too (at n/p = 65536 on 16 simulated PEs the
    // slowest PE paid two local sorts in a row, 26 ms instead of 14).
    clock_.to(kLocalSort);
    for (const Child& c : base_cases_) {
      if (c.first != c.last) continue;
      localsort::sort(work_.data() + (c.gb - my_start_), work_.data() + (c.ge - my_start_), less_);
      cost::charge(cost::Kernel::sort, static_cast<std::size_t>(c.ge - c.gb));
    }
    clock_.to(kBase);
    std::vector<Pair> pairs;
    pairs.reserve(base_cases_.size());
    for (const Child& c : base_cases_) {
      if (c.first == c.last) continue;
      pairs.emplace_back();
      Pair& pair = pairs.back();
      const std::int64_t lo = std::max(c.gb, my_start_);
      const std::int64_t hi = std::min(c.ge, my_end_);
      pair.src = work_.data() + (lo - my_start_);
      pair.dst = work_.data() + (lo - my_start_);
      pair.mine = hi - lo;
      pair.theirs = (c.ge - c.gb) - pair.mine;
      pair.left = rank_ == c.first;
      pair.partner = pair.left ? c.last : c.first;
      pair.left_share = std::min(c.ge, layout_->end(c.first)) - c.gb;
    }
    // Pairs and gathered base cases progress in one pool (a PE may be in one of each, and its
    // partners may wait on either).
    Pool pool;
    start_pairs(pool, pairs);
    for (auto& small : smalls_) start_small(pool, *small);
    while (!pool.empty()) pool.progress();
    for (Pair& pair : pairs) merge_pair(pair);
    for (auto& small : smalls_) {
      if (small->split()) layer_.release(small->part);
      if (!small->first_level) layer_.release(small->comm);
    }
    smalls_.clear();
  }

  // ----------------------------------------------------------------- gathered base cases

  // A task of at most Config::gather_elements elements on >= 3 PEs. Every member sorts its
  // elements (the local sort, as a recursion's base case would); a merging gather (RBC: merged
  // inside the tree) gives the group's first PE all of them in order, runs merged stably in
  // rank order; it scatters them down a binomial tree, each member receiving those of its
  // subtree in one message (the first round carries half of what a broadcast would, later ones
  // less), and each member keeps its share. Only keys travel, no indices: the local sort and
  // the merges are deterministic, and that is all the same seed's same output needs. The flag
  // (comp(x, x) true for some element: the root checks every one) travels as one more byte
  // where it is set. One PE decides the order, so even a comparator that is not a strict weak
  // order yields a permutation, and all members learn the same flag. An exact order may take a
  // merging allgather instead (allgathers), or gather to two roots (gather_cut).
  static constexpr int kScatterTag = kTagBase + 4;

  struct Small {
    std::int64_t gb = 0, ge = 0;
    Comm comm;
    bool first_level = false;  // the whole input: input layout, the root communicator
    std::int64_t t0 = 0, t1 = 0;
    std::vector<T> keys;      // this member's, sorted
    // The root: everyone's (the allgather: every member's; two nodes: the other node's run).
    Buffer<T> gathered;
    int first = 0;  // the root rank of group rank 0
    int size = 0;   // of the group
    int rank = 0;   // in the group
    int span = 0;   // this member's subtree: group ranks [rank, rank + span)
    // The part of the group whose tree this member is in: group ranks [part_begin, part_end),
    // the whole group unless the gather is cut between two roots (gather_cut); on two nodes,
    // this member's node (start_two_nodes).
    int part_begin = 0, part_end = 0;
    Comm part;  // a split gather's part, or this member's node
    std::vector<unsigned char> bytes;  // the subtree's keys, then room for the flag
    unsigned char flag = 0;
    std::vector<std::vector<unsigned char>> staged;  // outgoing blocks with the flag appended
    std::vector<T> other;  // a split gather's root: the other part's keys, then the flag's byte;
                           // two nodes: this member's slice of the other node's run
    std::vector<T> window;  // a split gather's root: its part's keys, merged from both parts;
                            // two nodes: this node's run

    bool part_root() const { return rank == part_begin; }
    bool split() const { return part_end - part_begin < size; }
    // The subtree's keys: a part root's own, what the parent sent elsewhere.
    const unsigned char* block() const {
      if (!part_root()) return bytes.data();
      return reinterpret_cast<const unsigned char*>(split() ? window.data() : gathered.data());
    }
  };

  // Where group member a's part of `small` begins (a = size: where the last one's ends); the
  // members [a, b) hold [member_start(a), member_start(b)).
  std::int64_t member_start(const Small& small, int a) const {
    return std::min(small.ge, std::max(small.gb, layout_->start(small.first + a)));
  }

  void start_small(Pool& pool, Small& small) {
    small.t0 = std::max(small.gb, my_start_);
    small.t1 = std::max(small.t0, std::min(small.ge, my_end_));
    const T* src;
    std::int64_t m;
    if (small.first_level) {
      src = input_->data();
      m = static_cast<std::int64_t>(input_->size());
    } else {
      src = work_.data() + (small.t0 - my_start_);
      m = small.t1 - small.t0;
    }
    clock_.to(kLocalSort);
    small.keys.assign(src, src + m);
    localsort::sort(small.keys.begin(), small.keys.end(), less_);
    cost::charge(cost::Kernel::sort, small.keys.size());
    clock_.to(kBase);
    const std::int64_t total = small.ge - small.gb;
    small.rank = LayerT::rank(small.comm);
    small.size = LayerT::size(small.comm);
    small.first = rank_ - small.rank;
    small.part_begin = 0;
    small.part_end = small.size;
    small.gathered = Buffer<T>(layer_.scratch_home());
    if (allgathers(small, total)) {
      small.gathered.resize(static_cast<std::size_t>(total));
      Small* s = &small;
      // The last merge may stop at this PE's share.
      layer_.allgather_merge(pool, small.comm, small.keys.data(), static_cast<int>(m),
                             small.gathered.data(), static_cast<int>(total), type_,
                             window_merger(total, small.t0 - small.gb, small.t1 - small.gb,
                                           layer_.allgather_partial_call(
                                               small.comm, total * static_cast<std::int64_t>(sizeof(T)),
                                               small.first_level)),
                             [this, s] {
                               copy_share(*s, s->gathered.data() + (s->t0 - s->gb));
                               s->gathered.release();
                             },
                             small.first_level);
      return;
    }
    if (small.first_level && on_two_nodes()) {
      start_two_nodes(pool, small);
      return;
    }
    const int cut = gather_cut(small);
    const bool split = cut > 0;
    if (split) {
      const bool upper = small.rank >= cut;
      small.part_begin = upper ? cut : 0;
      small.part_end = upper ? small.size : cut;
      small.part = layer_.create_child(small.comm, small.part_begin, small.part_end - 1, true, upper ? 1 : 0);
      ++stats_.split_gathers;
    }
    int top = 1;
    while (top < small.part_end - small.part_begin) top *= 2;
    const int local = small.rank - small.part_begin;
    small.span = local == 0 ? top : (local & -local);
    const std::int64_t keys = member_start(small, std::min(small.rank + small.span, small.part_end)) -
                              member_start(small, small.rank);
    const bool root = small.part_root();
    // What the part's root gathers: its members' elements of the task, which on the first level
    // are their inputs, not yet their shares.
    std::int64_t part_total = member_start(small, small.part_end) - member_start(small, small.part_begin);
    if (split && small.first_level) {
      part_total = small.part_begin == 0 ? lower_half_input_ : total - lower_half_input_;
    }
    if (!root) small.bytes.resize(static_cast<std::size_t>(keys) * sizeof(T) + 1);
    small.gathered.resize(root ? static_cast<std::size_t>(part_total) : 0);
    Small* s = &small;
    layer_.gather_merge(pool, split ? small.part : small.comm, small.keys.data(), static_cast<int>(m),
                        small.gathered.data(), static_cast<int>(part_total), type_, key_merger(),
                        [this, s, root, split, &pool] {
                          // Every member starts the scatter only now: the MPI layer's gather
                          // is two collectives, and all members must call them in one order.
                          if (!root) {
                            receive_small(pool, *s);
                            return;
                          }
                          for (const T& x : s->gathered) {
                            if (less_(x, x)) s->flag = 1;
                          }
                          cost::charge(cost::Kernel::copy, s->gathered.size());  // as fast as a copy
                          if (split) {
                            exchange_parts(pool, *s);
                          } else {
                            forward_small(pool, *s);
                          }
                        },
                        small.first_level);
  }

  // Whether the root spans exactly two full nodes, for an exact order on RBC: then the whole
  // input as one base case is merged per node and swapped in slices (start_two_nodes).
  bool on_two_nodes() const {
    if constexpr (!kExactOrder || !LayerT::kMergingAllgather) {
      return false;
    } else {
      const int members = layer_.root().node_members();
      return members >= 2 && p_ == 2 * members && !layer_.within_node(layer_.root());
    }
  }

  // The whole input on two nodes: each node allgathers and merges its own run (by halves, on
  // the node), partners across the boundary (ranks i and i + p/2) swap the i-th slice of their
  // nodes' runs, each node allgathers the other node's slices in rank order (which is that run),
  // and every PE merges its share of the two runs. About the whole input crosses the boundary
  // once, where a merging allgather over both nodes sends every rank's half-block across it.
  static constexpr int kSlicesTag = kTagBase + 6;
  void start_two_nodes(Pool& pool, Small& small) {
    const int half = p_ / 2;
    const bool upper = rank_ >= half;
    small.part_begin = upper ? half : 0;
    small.part_end = upper ? p_ : half;
    small.part = layer_.create_child(small.comm, small.part_begin, small.part_end - 1, true, upper ? 1 : 0);
    ++stats_.two_node_merges;
    const std::int64_t total = small.ge - small.gb;
    const std::int64_t own = upper ? total - lower_half_input_ : lower_half_input_;
    small.window.resize(static_cast<std::size_t>(own));
    layer_.allgather_merge(pool, small.part, small.keys.data(), static_cast<int>(small.keys.size()),
                           small.window.data(), static_cast<int>(own), type_, key_merger(), [] {}, true);
    std::vector<T>().swap(small.keys);
    const int j = rank_ - small.part_begin;
    const int partner = upper ? rank_ - half : rank_ + half;
    const std::int64_t theirs = total - own;
    const auto cut = [half](std::int64_t length, int i) { return length * i / half; };
    small.other.resize(static_cast<std::size_t>(cut(theirs, j + 1) - cut(theirs, j)));
    Small* s = &small;
    layer_.irecv(pool, small.comm, small.other.data(), static_cast<int>(small.other.size()), type_, partner,
                 kSlicesTag, [this, s, theirs, upper, &pool](int, int count) {
                   if (count != static_cast<int>(s->other.size())) {
                     throw Error("internal: a slice of the other node's run has the wrong size");
                   }
                   s->gathered.resize(static_cast<std::size_t>(theirs));
                   const rbc::Merger keep = [](void*, void*, void*) {};
                   layer_.allgather_merge(pool, s->part, s->other.data(), count, s->gathered.data(),
                                          static_cast<int>(theirs), type_, keep,
                                          [this, s, upper] { merge_two_nodes(*s, upper); });
                 });
    layer_.isend(pool, small.comm, small.window.data() + cut(own, j), static_cast<int>(cut(own, j + 1) - cut(own, j)),
                 type_, partner, kSlicesTag);
  }

  // This PE's share of the lower node's run merged with the upper node's, lower first.
  void merge_two_nodes(Small& small, bool upper) {
    const T* a = upper ? small.gathered.data() : small.window.data();
    const T* b = upper ? small.window.data() : small.gathered.data();
    const std::uint64_t na = upper ? small.gathered.size() : small.window.size();
    const std::uint64_t nb = upper ? small.window.size() : small.gathered.size();
    const std::uint64_t w0 = static_cast<std::uint64_t>(small.t0 - small.gb);
    const std::uint64_t w1 = static_cast<std::uint64_t>(small.t1 - small.gb);
    const auto [ja, jb] = merge::corank(w0, a, na, b, nb, less_);
    const auto [ka, kb] = merge::corank(w1, a, na, b, nb, less_);
    if (w1 > w0) localsort::merge(a + ja, ka - ja, b + jb, kb - jb, work_.data() + (small.t0 - my_start_), less_);
    cost::charge(cost::Kernel::merge, static_cast<std::size_t>(w1 - w0));
    small.gathered.release();
    std::vector<T>().swap(small.window);
    std::vector<T>().swap(small.other);
  }

  // Where a gathered base case of `small` (>= 3 PEs) is cut between two roots (0: it is not):
  // group ranks [0, cut) gather to rank 0, the others to rank cut. The two roots swap their runs
  // in one exchange and each merges the share of its own part, where one root would receive the
  // upper part's run, merge everything and send the upper part's share back: one transfer of
  // half the keys each way at once instead of two in a row, and two merges of half the keys in
  // parallel instead of one of all. Both roots must cut the merged order at the same place, so
  // only for an exact order (every PE compares alike), and only where a part is a cheap
  // communicator (RBC).
  int gather_cut(const Small& small) const {
    if constexpr (!kExactOrder || !LayerT::kMergingAllgather) {
      (void)small;
      return 0;
    } else {
      return small.size / 2;
    }
  }

  // A split gather's roots swap their parts' runs (the flag of comp(x, x) as one more byte where
  // set), each merges its part's share of both and scatters it down its part's tree. The merges
  // cut the merged order at the lower part's share, found by co-ranking: the same cut on both
  // roots. (On the first level a part's run is its members' input, which may be more or fewer
  // elements than their shares.)
  static constexpr int kPartsTag = kTagBase + 5;
  void exchange_parts(Pool& pool, Small& small) {
    const bool lower = small.part_begin == 0;
    const int partner = lower ? small.part_end : 0;
    const std::int64_t total = small.ge - small.gb;
    const std::int64_t own = static_cast<std::int64_t>(small.gathered.size());
    const std::int64_t theirs = total - own;
    const std::int64_t lower_share = member_start(small, lower ? small.part_end : small.part_begin) - small.gb;
    const std::size_t own_bytes = static_cast<std::size_t>(own) * sizeof(T);
    small.other.resize(static_cast<std::size_t>(theirs) + 1);
    const int capacity = static_cast<int>(static_cast<std::size_t>(theirs) * sizeof(T) + 1);
    Small* s = &small;
    layer_.irecv(pool, small.comm, small.other.data(), capacity, MPI_BYTE, partner, kPartsTag,
                 [this, s, lower, own, theirs, lower_share, total, capacity, &pool](int, int count) {
                   if (count == capacity) {
                     s->flag |= reinterpret_cast<const unsigned char*>(s->other.data())[capacity - 1];
                   } else if (count != capacity - 1) {
                     throw Error("internal: a split gather's run has the wrong size");
                   }
                   const T* a = lower ? s->gathered.data() : s->other.data();
                   const T* b = lower ? s->other.data() : s->gathered.data();
                   const std::uint64_t na = static_cast<std::uint64_t>(lower ? own : theirs);
                   const std::uint64_t nb = static_cast<std::uint64_t>(lower ? theirs : own);
                   const auto [ia, ib] = merge::corank(static_cast<std::uint64_t>(lower_share), a, na, b, nb, less_);
                   s->window.resize(static_cast<std::size_t>(lower ? lower_share : total - lower_share));
                   if (lower) {
                     localsort::merge(a, ia, b, ib, s->window.data(), less_);
                   } else {
                     localsort::merge(a + ia, na - ia, b + ib, nb - ib, s->window.data(), less_);
                   }
                   cost::charge(cost::Kernel::merge, s->window.size());
                   forward_small(pool, *s);
                 });
    send_flagged(pool, small, reinterpret_cast<const unsigned char*>(small.gathered.data()), own_bytes, partner,
                 kPartsTag);
  }

  // Sends `length` bytes of keys to group rank `dest`, with small.flag as one more byte where it
  // is set (copied into small.staged, which outlives the send).
  void send_flagged(Pool& pool, Small& small, const unsigned char* block, std::size_t length, int dest, int tag) {
    if (small.flag == 0) {
      layer_.isend(pool, small.comm, block, static_cast<int>(length), MPI_BYTE, dest, tag);
      return;
    }
    small.staged.emplace_back(block, block + length);
    small.staged.back().push_back(small.flag);
    layer_.isend(pool, small.comm, small.staged.back().data(), static_cast<int>(length + 1), MPI_BYTE, dest, tag);
  }

  // Whether `small` (of `total` elements) is solved by a merging allgather instead: every member
  // merges all runs and keeps its share, in ceil(log2 p') rounds instead of the gather's and the
  // scatter's 2 log2 p'. Only for an exact order, where every member's merge gives the same bytes
  // (stable, in rank order), and only where the layer's allgather is one exchange per round and
  // the traffic, p' times the keys, is cheap: the whole input on one node or of at most 64 KiB
  // times p'; deeper in the recursion, groups of 4 or 8 PEs on one node (a janus PE, in two
  // groups, would hold up every round of a larger one). In simulation (supermuc, juqueen, node-16c)
  // this took 0.4-0.9x the time of gathering where it applies and never more than 1.01x;
  // docs/benchmarks.md.
  bool allgathers(const Small& small, std::int64_t total) const {
    if constexpr (!kExactOrder || !LayerT::kMergingAllgather) {
      return false;
    } else {
      const bool node = layer_.within_node(small.comm);
      if (small.first_level) {
        const std::int64_t traffic = small.size * total * static_cast<std::int64_t>(sizeof(T));
        return node || traffic <= (std::int64_t(64) << 10);
      }
      return node && small.size <= 8 && power_of_two(small.size);
    }
  }

  static bool power_of_two(int n) { return n > 0 && (n & (n - 1)) == 0; }

  rbc::Merger key_merger() { return buffered_merger(merged_, less_); }

  // The subtree's keys come from the parent in one message, one byte longer when the flag is set.
  void receive_small(Pool& pool, Small& small) {
    const int capacity = static_cast<int>(small.bytes.size());
    Small* s = &small;
    layer_.irecv(pool, small.comm, small.bytes.data(), capacity, MPI_BYTE,
                 small.rank - small.span, kScatterTag, [this, s, capacity, &pool](int, int count) {
                   if (count == capacity) {
                     s->flag = s->bytes.back();
                   } else if (count != capacity - 1) {
                     throw Error("internal: a gathered base case's block has the wrong size");
                   }
                   forward_small(pool, *s);
                 });
  }

  // Sends each child its subtree's keys, the largest subtree first, and keeps this PE's share.
  void forward_small(Pool& pool, Small& small) {
    const std::int64_t base = member_start(small, small.rank);
    for (int half = small.span / 2; half >= 1; half /= 2) {
      const int child = small.rank + half;
      if (child >= small.part_end) continue;
      const std::int64_t begin = member_start(small, child);
      const std::int64_t end = member_start(small, std::min(child + half, small.part_end));
      const unsigned char* block = small.block() + (begin - base) * static_cast<std::int64_t>(sizeof(T));
      const std::size_t length = static_cast<std::size_t>(end - begin) * sizeof(T);
      send_flagged(pool, small, block, length, child, kScatterTag);
    }
    keep_share(small);
  }

  void keep_share(Small& small) {
    if (small.flag != 0) comparator_broken("comp(x, x) was true for a gathered element");
    copy_share(small, small.block());  // this PE's share opens its subtree's block
  }

  // ------------------------------------------------------- the whole input sorted by samples

  // Whether the whole input is sorted by regular samples on one node (sample_sort_whole): an
  // exact order on RBC, p >= 3 PEs all on one node, more than gather_elements (called after
  // whole_is_small), at most kSampleSortPerPe elements per PE and n <= INT_MAX (every count of
  // a bucket or a share then fits an MPI count). Two allgathers and two rounds of messages
  // instead of ceil(log2 p) levels of four collectives each; in simulation 0.63-0.93x the
  // recursion's time at p = 8, 12, 16 and n/p = 512-8192 and, since its merges go back and
  // forth between two buffers with up to 64 samples per PE (78f5d4c), 0.83-0.99x from 16384 to
  // 262144 on 4 to 16 PEs, the largest measured (docs/benchmarks.md, "The whole input sorted
  // by samples on one node" and "The sort by samples at every size").
  static constexpr std::int64_t kSampleSortPerPe = std::int64_t{1} << 18;
  static constexpr int kBucketTag = kTagBase + 7;
  static constexpr int kShareTag = kTagBase + 8;
  bool sample_sorts(std::int64_t n) const {
    if constexpr (!kExactOrder || !LayerT::kMergingAllgather) {
      return false;
    } else {
      if (p_ < 3 || !layer_.within_node(layer_.root())) return false;
      return n <= kSampleSortPerPe * static_cast<std::int64_t>(p_) && n <= INT_MAX;
    }
  }

  // Each PE sorts its input and contributes regular samples in proportion to it; one merging
  // allgather gives every PE all of them in (key, rank) order and so the same p - 1 splitters,
  // and PE j receives bucket j of every run, merges the runs in rank order and sends each PE
  // the part of the bucket that falls into its share. Buckets need not be balanced: the shares
  // are exact whatever the splitters, since every PE learns every bucket's size from one
  // allgather of counts. Ties go by (key, rank), so equal keys spread over buckets by the PE
  // that holds them. An exact order only: every PE compares alike, and nothing can find the
  // order broken.
  void sample_sort_whole(std::int64_t n) {
    ++stats_.sample_sorts;
    const std::int64_t m = static_cast<std::int64_t>(input_->size());
    clock_.to(kLocalSort);
    Buffer<T> run(layer_.scratch_home());
    run.resize(static_cast<std::size_t>(m));
    if (m > 0) std::memcpy(static_cast<void*>(run.data()), input_->data(), static_cast<std::size_t>(m) * sizeof(T));
    if (!presorted_) {
      localsort::sort(run.data(), run.data() + m, less_);
      cost::charge(cost::Kernel::sort, static_cast<std::size_t>(m));
    }
    clock_.to(kBase);

    // PE r draws its part of s * p regular samples, in proportion to its input (the counts
    // telescope from the input prefix sums, so they add up without communication); every sample
    // stands for about n / (s * p) elements. Index r breaks ties. s = n / (128 p), at least 16
    // and at most 64: more samples cost rounds' bytes and merges, fewer an uneven largest bucket.
    const std::int64_t per_pe = std::min<std::int64_t>(64, std::max<std::int64_t>(16, n / (128 * static_cast<std::int64_t>(p_))));
    const std::int64_t total = per_pe * p_;
    const std::int64_t before = input_start_ - config_.index_base;
    // (total * n stays far below 2^63: n is at most INT_MAX, total at most 64 p.)
    const auto drawn = [&](std::int64_t elements) { return total * elements / n; };
    const std::int64_t own = drawn(before + m) - drawn(before);
    std::vector<Sample> picked(static_cast<std::size_t>(own));
    for (std::int64_t t = 0; t < own; ++t) {
      picked[static_cast<std::size_t>(t)] = Sample{run.data()[(2 * t + 1) * m / (2 * own)], rank_};
    }
    std::vector<Sample> samples(static_cast<std::size_t>(total));
    drain([&](Pool& pool) {
      layer_.allgather_merge(pool, layer_.root(), picked.data(), static_cast<int>(own), samples.data(),
                             static_cast<int>(total), sample_type(), sample_merger(), [] {}, true);
    });

    // Bucket j of this run: its elements x with (splitter j) <= (x, rank) < (splitter j + 1),
    // splitter j the sample at j / p of the way.
    std::vector<std::int64_t> bound(static_cast<std::size_t>(p_) + 1, m);
    bound[0] = 0;
    T* const end = run.data() + m;
    for (int j = 1; j < p_; ++j) {
      const Sample& s = samples[static_cast<std::size_t>(total * j / p_)];
      bound[static_cast<std::size_t>(j)] =
          (rank_ < s.index ? std::upper_bound(run.data(), end, s.key, less_)
                           : std::lower_bound(run.data(), end, s.key, less_)) - run.data();
    }

    // Every PE's count per bucket: row r, column j is PE r's part of bucket j.
    std::vector<long long> counts(static_cast<std::size_t>(p_));
    for (int j = 0; j < p_; ++j) counts[static_cast<std::size_t>(j)] = bound[static_cast<std::size_t>(j) + 1] - bound[static_cast<std::size_t>(j)];
    std::vector<long long> matrix(static_cast<std::size_t>(p_) * p_);
    drain([&](Pool& pool) { layer_.allgather(pool, layer_.root(), counts.data(), matrix.data(), p_, [] {}, true); });
    const auto part = [&](int r, int j) { return matrix[static_cast<std::size_t>(r) * p_ + j]; };
    std::vector<std::int64_t> bucket_start(static_cast<std::size_t>(p_) + 1, config_.index_base);
    for (int j = 0; j < p_; ++j) {
      std::int64_t size = 0;
      for (int r = 0; r < p_; ++r) size += part(r, j);
      bucket_start[static_cast<std::size_t>(j) + 1] = bucket_start[static_cast<std::size_t>(j)] + size;
    }
    if (bucket_start[static_cast<std::size_t>(p_)] != config_.index_base + n) {
      throw Error("internal: the buckets of a sort by samples do not add up to the input");
    }

    // Bucket rank_ from every run, in rank order.
    const std::int64_t mine = bucket_start[static_cast<std::size_t>(rank_) + 1] - bucket_start[static_cast<std::size_t>(rank_)];
    Buffer<T> bucket(layer_.scratch_home());
    bucket.resize(static_cast<std::size_t>(mine));
    std::vector<std::int64_t> run_start(static_cast<std::size_t>(p_) + 1, 0);
    for (int r = 0; r < p_; ++r) run_start[static_cast<std::size_t>(r) + 1] = run_start[static_cast<std::size_t>(r)] + part(r, rank_);
    drain([&](Pool& pool) {
      for (int i = 0; i < p_; ++i) {
        const int j = (rank_ + i) % p_;  // staggered: not every PE to PE 0 first
        const std::int64_t count = part(rank_, j);
        if (count == 0) continue;
        const T* from = run.data() + bound[static_cast<std::size_t>(j)];
        if (j == rank_) {
          copy_counted(bucket.data() + run_start[static_cast<std::size_t>(rank_)], from, count);
          continue;
        }
        layer_.isend(pool, layer_.root(), from, static_cast<int>(count), type_, j, kBucketTag);
        ++stats_.messages_sent;
      }
      for (int r = 0; r < p_; ++r) {
        const std::int64_t count = part(r, rank_);
        if (count == 0 || r == rank_) continue;
        layer_.irecv(pool, layer_.root(), bucket.data() + run_start[static_cast<std::size_t>(r)], static_cast<int>(count),
                     type_, r, kBucketTag, counted(count, "internal: a bucket's part has the wrong size"));
      }
    });
    run.release();

    // Runs merged in rank order, so equal keys stay in rank order.
    Buffer<T> spare(layer_.scratch_home());
    spare.resize(static_cast<std::size_t>(mine));
    const T* merged = merge_runs(bucket.data(), spare.data(), run_start);

    // Each PE's share, from the buckets that overlap it.
    deliver_shares(
        [&](int r) { return std::make_pair(bucket_start[static_cast<std::size_t>(r)], bucket_start[static_cast<std::size_t>(r) + 1]); },
        merged, kShareTag, "internal: a share's part has the wrong size");
  }

  // Merges the sorted runs [starts[i], starts[i + 1]) of `a` pairwise, neighbours first (equal
  // keys keep the runs' order), back and forth between `a` and `b` with no copy back after each
  // merge; returns whichever holds the result.
  T* merge_runs(T* a, T* b, std::vector<std::int64_t> starts) {
    T* from = a;
    T* to = b;
    while (starts.size() > 2) {
      std::vector<std::int64_t> next;
      for (std::size_t i = 0; i + 1 < starts.size(); i += 2) {
        next.push_back(starts[i]);
        const std::size_t na = static_cast<std::size_t>(starts[i + 1] - starts[i]);
        const std::size_t nb = i + 2 < starts.size() ? static_cast<std::size_t>(starts[i + 2] - starts[i + 1]) : 0;
        if (na > 0 && nb > 0) {
          localsort::merge(from + starts[i], na, from + starts[i + 1], nb, to + starts[i], less_);
          cost::charge(cost::Kernel::merge, na + nb);
        } else if (na + nb > 0) {
          std::memcpy(static_cast<void*>(to + starts[i]), from + starts[i], (na + nb) * sizeof(T));
          cost::charge(cost::Kernel::copy, na + nb);
        }
      }
      next.push_back(starts.back());
      starts.swap(next);
      std::swap(from, to);
    }
    return from;
  }

  // ------------------------------------------------ the whole input split between nodes first

  // Whether the whole input of n elements is first split between the nodes (node_split_whole):
  // an exact order on RBC, p >= 3 PEs on 3 to kNodeSplitMaxNodes nodes of node_members() >= 2
  // ranks each, or on two nodes with at least 3 PEs on the second and, where both are the same
  // size, at most kNodeSplitTwoNodesPerPe elements per PE; more than the base cases take (called
  // after whole_is_small). The recursion's first median leaves groups that straddle a node
  // boundary, so later levels cross it again (data, and rounds of collectives); split at the
  // node boundaries, every node sorts its own part alone. In simulation (supermuc, juqueen,
  // p = 24-128) 0.57-0.93x the recursion's time at n/p = 256-2048 and on three to eight nodes up
  // to 65536. Two equal nodes are cut at their boundary by the recursion's first level, and
  // there the split cost 0.87-1.09x from 4096 per PE; two unequal ones (p = 20, 24, 28) took
  // 0.85-1.01x from 3072 to 65536 with each node sorting by samples, a few points 1.04-1.09x
  // (juqueen p = 24 at 4096, p = 28 at 6144 and 8192). With 1 or
  // 2 PEs on the second node (p = 17, 18) 1.01-1.12x; on 16 nodes (p = 256) 1.31x at 256, where
  // the part sizes' allgather (p x nodes counts) costs more than it saves (docs/benchmarks.md,
  // "The whole input split between nodes first" and "The sort by samples at every size").
  static constexpr int kNodeSplitMaxNodes = 8;
  static constexpr std::int64_t kNodeSplitTwoNodesPerPe = 2048;
  static constexpr int kNodePartTag = kTagBase + 9;
  // The chunks sorted while the parts travel, the messages the parts travel in, and how many of
  // them a PE that sorts as they arrive has posted at a time. In simulation (supermuc, p = 24
  // and 128 at 32768 and 65536 per PE) 4096, 4096 and 2 did about as well as any of chunks of
  // 2048-16384, messages of 2048-8192 and windows of 1-8 (docs/benchmarks.md, "The parts'
  // transfer overlapped with the local sort").
  static constexpr std::int64_t kPresortChunk = 4096;
  static constexpr std::int64_t kPieceMessage = 4096;
  static constexpr int kReceiveWindow = 2;
  static constexpr int kNodeShiftTag = kTagBase + 10;
  static constexpr std::uint64_t kNodeSplitSalt = 0x6e6f646573ULL;  // "nodes"
  // The root's nodes: runs of node_members() ranks, the last one possibly shorter.
  int node_count() const {
    const int members = layer_.root().node_members();
    return (p_ + members - 1) / members;
  }
  bool node_splits(std::int64_t n) const {
    if constexpr (!kExactOrder || !LayerT::kParts) {
      (void)n;
      return false;
    } else {
      if (p_ < 3 || layer_.within_node(layer_.root())) return false;
      const int members = layer_.root().node_members();
      if (members < 2) return false;
      const int nodes = node_count();
      if (nodes > kNodeSplitMaxNodes) return false;
      // Two nodes of equal size: the recursion's first level already cuts at their boundary.
      const bool even = p_ == 2 * members;
      if (nodes == 2 && (p_ - members < 3 || (even && n > kNodeSplitTwoNodesPerPe * static_cast<std::int64_t>(p_)))) {
        return false;
      }
      // Whatever the splitters, a node's shares fit an MPI count (its smallest node could get
      // all n), so every PE takes the same path and no node's sort throws alone.
      const int fewest = std::min(members, p_ - (nodes - 1) * members);
      return n / fewest < INT_MAX;
    }
  }

  // Random samples (as a level's) give every PE the same splitters at the global ranks where the
  // nodes' shares begin; each PE cuts its input at them ((key, index) order, as a level's
  // partition) and sends node j's part to node j, where its members keep what they can of their
  // own part and the rest fills their room, so that they hold balanced inputs. Each node sorts
  // its elements on its own (a sort on a range of the root, its messages on the root's channel);
  // splitters off by d elements leave the nodes' results d elements off their shares, and one
  // round of messages moves them there.
  void node_split_whole(std::int64_t n) {
    if constexpr (kExactOrder && LayerT::kParts) {
      ++stats_.node_splits;
      clock_.to(kPivot);
      const int members = layer_.root().node_members();
      const int nodes = node_count();
      const auto first_of = [&](int j) { return std::min(p_, j * members); };
      const int my_node = rank_ / members;
      const std::int64_t m = static_cast<std::int64_t>(input_->size());
      const T* const in = input_->data();
      const std::int64_t offset = input_start_ - config_.index_base;

      // 2 to 32 samples per PE on average (n / (2048 p)): fewer make the allgather across nodes
      // cheaper, more make the last round move less (at p = 48 and 32 per PE the splitters are
      // off by about half a share).
      const std::int64_t per_pe = std::min<std::int64_t>(32, std::max<std::int64_t>(2, n / (2048 * static_cast<std::int64_t>(p_))));
      const std::int64_t total = per_pe * p_;
      std::vector<std::int64_t> positions;
      sample_positions(hash(config_.seed, static_cast<std::uint64_t>(n), kNodeSplitSalt), n, total, offset, offset + m,
                       positions);
      std::vector<Sample> picked;
      picked.reserve(positions.size());
      for (std::int64_t position : positions) {
        picked.push_back(Sample{in[position - offset], config_.index_base + position});
      }
      localsort::sort(picked.begin(), picked.end(), [this](const Sample& a, const Sample& b) { return sample_less(a, b); });
      cost::charge(cost::Kernel::sort, picked.size());
      std::vector<Sample> samples(static_cast<std::size_t>(total));
      drain([&](Pool& pool) {
        layer_.allgather_merge(pool, layer_.root(), picked.data(), static_cast<int>(picked.size()), samples.data(),
                               static_cast<int>(total), sample_type(), sample_merger(), [] {}, true);
      });
      // Splitter j - 1 closes node j - 1's part: about as many samples at or below it as node j's
      // share begins after.
      std::vector<Sample> splitters;
      for (int j = 1; j < nodes; ++j) {
        const double begins = static_cast<double>(layout_->start(first_of(j)) - config_.index_base) / static_cast<double>(n);
        const std::int64_t at = std::llround(begins * static_cast<double>(total)) - 1;
        splitters.push_back(samples[static_cast<std::size_t>(std::min(total - 1, std::max<std::int64_t>(0, at)))]);
      }

      // Node of each element: the first splitter it is at or below ((key, index) order).
      clock_.to(kPartition);
      std::vector<unsigned char> node_of(static_cast<std::size_t>(m));
      std::vector<long long> counts(static_cast<std::size_t>(nodes), 0);
      for (std::int64_t i = 0; i < m; ++i) {
        const T& x = in[i];
        const std::int64_t index = input_start_ + i;
        int lo = 0, hi = nodes - 1;
        while (lo < hi) {
          const int mid = (lo + hi) / 2;
          if (!sample_less(splitters[static_cast<std::size_t>(mid)], Sample{x, index})) {
            hi = mid;
          } else {
            lo = mid + 1;
          }
        }
        node_of[static_cast<std::size_t>(i)] = static_cast<unsigned char>(lo);
        ++counts[static_cast<std::size_t>(lo)];
      }
      std::vector<std::int64_t> part_start(static_cast<std::size_t>(nodes) + 1, 0);
      for (int j = 0; j < nodes; ++j) part_start[static_cast<std::size_t>(j) + 1] = part_start[static_cast<std::size_t>(j)] + counts[static_cast<std::size_t>(j)];
      Buffer<T> parts(layer_.scratch_home());
      parts.resize(static_cast<std::size_t>(m));
      {
        std::vector<std::int64_t> fill(part_start.begin(), part_start.end() - 1);
        for (std::int64_t i = 0; i < m; ++i) parts.data()[fill[node_of[static_cast<std::size_t>(i)]]++] = in[i];
      }
      std::vector<unsigned char>().swap(node_of);
      // Charged as one partition pass per level of the search (ceil(log2 nodes)) and a copy.
      for (int depth = 0; (1 << depth) < nodes; ++depth) cost::charge(cost::Kernel::partition, static_cast<std::size_t>(m));
      cost::charge(cost::Kernel::copy, static_cast<std::size_t>(m));

      // Every PE's part per node: row r, column j is PE r's part for node j.
      clock_.to(kCalculation);
      std::vector<long long> matrix(static_cast<std::size_t>(p_) * nodes);
      drain([&](Pool& pool) { layer_.allgather(pool, layer_.root(), counts.data(), matrix.data(), nodes, [] {}, true); });
      const auto part = [&](int r, int j) { return static_cast<std::int64_t>(matrix[static_cast<std::size_t>(r) * nodes + j]); };
      std::vector<std::int64_t> node_total(static_cast<std::size_t>(nodes), 0), node_start(static_cast<std::size_t>(nodes) + 1, 0);
      for (int j = 0; j < nodes; ++j) {
        for (int r = 0; r < p_; ++r) node_total[static_cast<std::size_t>(j)] += part(r, j);
        node_start[static_cast<std::size_t>(j) + 1] = node_start[static_cast<std::size_t>(j)] + node_total[static_cast<std::size_t>(j)];
      }
      if (node_start[static_cast<std::size_t>(nodes)] != n) throw Error("internal: the nodes' parts do not add up to the input");
      // Node j's balanced inputs (and results): Layout(node_total[j], its members) from offset 0.
      const auto node_layout = [&](int j) { return Layout(node_total[static_cast<std::size_t>(j)], first_of(j + 1) - first_of(j), 0); };

      // Node j's plan: member r keeps min(its part, its room); the others' parts in rank order fill
      // the members' remaining room in rank order. Calls `piece(source, target, count, at)`, `at`
      // the place in the target's input, for every piece that travels, in source then target order.
      const auto kept = [&](int j, int r) {
        const int f = first_of(j);
        return r >= f && r < first_of(j + 1) ? std::min(part(r, j), node_layout(j).cap(r - f)) : std::int64_t(0);
      };
      const auto plan = [&](int j, auto piece) {
        const int f = first_of(j);
        const Layout inner = node_layout(j);
        int target = f;
        std::int64_t used = 0;  // of the target's room
        for (int r = 0; r < p_; ++r) {
          std::int64_t left = part(r, j) - kept(j, r);
          while (left > 0) {
            const std::int64_t room = inner.cap(target - f) - kept(j, target) - used;
            if (room == 0) {
              ++target;
              used = 0;
              continue;
            }
            const std::int64_t count = std::min(left, room);
            piece(r, target, count, kept(j, target) + used);
            used += count;
            left -= count;
          }
        }
      };

      clock_.to(kExchange);
      const int f = first_of(my_node);
      const int q = first_of(my_node + 1) - f;
      const Layout inner = node_layout(my_node);
      // This node's sort, on a range of the root whose messages travel on the root's channel. Its
      // inputs are balanced (what node_layout gives), the input checked: no agreement.
      LayerT node(layer_, layer_.root().split(f, first_of(my_node + 1) - 1));
      Config alone = config_;
      alone.verify = false;  // the whole result is verified below, if asked
      Sorter child(node, type_, Less(), alone, stats_);
      const bool by_samples = inner.n() > 0 && !child.whole_is_small(inner.n()) && child.sample_sorts(inner.n());
      bool presort = false;  // decided once the pieces to receive are known
      std::vector<T> local(static_cast<std::size_t>(inner.cap(rank_ - f)));
      const std::int64_t keep = kept(my_node, rank_);
      copy_counted(local.data(), parts.data() + part_start[static_cast<std::size_t>(my_node)], keep);
      std::vector<std::pair<std::int64_t, std::int64_t>> chunks;  // to sort, in arrival order
      const auto arrived = [&](std::int64_t at, std::int64_t count) {
        for (std::int64_t c = at; c < at + count; c += kPresortChunk) chunks.emplace_back(c, std::min(at + count, c + kPresortChunk));
      };
      {
        // Pieces travel as messages of at most kPieceMessage elements. A PE that sorts what
        // arrives receives them in turn from each piece, kReceiveWindow at a time: concurrent
        // flows share a link fairly, so with every message posted at once all would arrive
        // together at the end, with nothing sorted meanwhile.
        struct Incoming {  // a piece to receive, or one message of it
          int source;
          std::int64_t at, count;
        };
        std::vector<Incoming> incoming;
        std::function<void()> receive_next;  // outlives the pool, whose continuations call it
        Pool pool;
        for (int i = 1; i <= nodes; ++i) {
          const int j = (my_node + i) % nodes;  // the other nodes first, this node last
          const T* next = parts.data() + part_start[static_cast<std::size_t>(j)] + kept(j, rank_);
          plan(j, [&](int source, int target, std::int64_t count, std::int64_t at) {
            if (source == rank_) {
              for (std::int64_t sent = 0; sent < count; sent += kPieceMessage) {
                const std::int64_t c = std::min(kPieceMessage, count - sent);
                layer_.isend(pool, layer_.root(), next + sent, static_cast<int>(c), type_, target, kNodePartTag);
                ++stats_.messages_sent;
              }
              next += count;
            } else if (target == rank_) {
              incoming.push_back(Incoming{source, at, count});
            }
          });
        }
        // Where the node sorts by samples, which starts from a sorted input, and the pieces are
        // large enough (4096 per piece on average), this PE sorts its input here in chunks
        // while the parts travel: what it keeps first, each received message once it is in,
        // the pool's progress between chunks (a payload's receive is posted when its envelope
        // is taken in, so without it the transfer would wait for the sort). Smaller pieces make
        // more runs to merge than the overlap saves (supermuc, p = 24 to 128 at 2048 to 8192
        // per PE: 1.04-1.07x the time with every piece sorted on its own).
        std::int64_t receiving = 0, longest = 0;
        for (const Incoming& piece : incoming) {
          receiving += piece.count;
          longest = std::max(longest, piece.count);
        }
        presort = by_samples && !incoming.empty() &&
                  receiving >= kPresortChunk * static_cast<std::int64_t>(incoming.size());
        if (presort) arrived(0, keep);
        // The pieces' messages in turn: every piece's first, then every piece's second, ...
        std::vector<Incoming> messages;
        for (std::int64_t offset = 0; offset < longest; offset += kPieceMessage) {
          for (const Incoming& piece : incoming) {
            if (offset < piece.count) {
              messages.push_back(Incoming{piece.source, piece.at + offset, std::min(kPieceMessage, piece.count - offset)});
            }
          }
        }
        std::size_t next_message = 0;
        receive_next = [&]() {
          if (next_message == messages.size()) return;
          const Incoming message = messages[next_message++];
          RecvDone check = counted(message.count, "internal: a node's part has the wrong size");
          layer_.irecv(pool, layer_.root(), local.data() + message.at, static_cast<int>(message.count), type_,
                       message.source, kNodePartTag, [&, message, check](int from, int got) {
                         check(from, got);
                         if (presort) {
                           arrived(message.at, message.count);
                           receive_next();
                         }
                       });
        };
        const std::size_t window = presort ? static_cast<std::size_t>(kReceiveWindow) : messages.size();
        while (next_message < std::min(window, messages.size())) receive_next();
        std::size_t sorted = 0;
        while (!pool.empty() || sorted < chunks.size()) {
          if (sorted == chunks.size()) {
            pool.progress();
          } else {
            pool.poll();
            const auto [b, e] = chunks[sorted++];
            localsort::sort(local.data() + b, local.data() + e, less_);
            cost::charge(cost::Kernel::sort, static_cast<std::size_t>(e - b));
          }
        }
      }
      parts.release();
      if (presort) {
        clock_.to(kLocalSort);
        std::vector<std::int64_t> starts{static_cast<std::int64_t>(local.size())};
        std::int64_t covered = 0;
        for (const auto& [b, e] : chunks) {
          starts.push_back(b);
          covered += e - b;
        }
        if (covered != static_cast<std::int64_t>(local.size())) throw Error("internal: a node's parts do not fill its input");
        std::sort(starts.begin(), starts.end());
        std::vector<T> spare(local.size());
        if (merge_runs(local.data(), spare.data(), starts) != local.data()) local.swap(spare);
        child.presorted_ = true;
      }

      clock_.to(kDone);
      child.run(local, inner.n(), inner.start(rank_ - f), inner.start(q / 2));

      // Node j's result holds the global indices from node_start[j] on in its own layout's
      // shares: what lies in another PE's share moves there.
      clock_.to(kExchange);
      deliver_shares(
          [&](int r) {
            const int j = r / members;
            const Layout l = node_layout(j);
            const std::int64_t lo = config_.index_base + node_start[static_cast<std::size_t>(j)] + l.start(r - first_of(j));
            return std::make_pair(lo, lo + l.cap(r - first_of(j)));
          },
          local.data(), kNodeShiftTag, "internal: a shifted share has the wrong size");
    } else {
      (void)n;
    }
  }

  // Runs what `start` adds to a pool of its own to completion.
  template <class Start>
  void drain(Start start) {
    Pool pool;
    start(pool);
    while (!pool.empty()) pool.progress();
  }

  // A receive's continuation that expects exactly `count` elements (else throws `wrong_size`).
  RecvDone counted(std::int64_t count, const char* wrong_size) {
    return [this, count, wrong_size](int, int got) {
      if (got != count) throw Error(wrong_size);
      ++stats_.messages_received;
    };
  }

  // Moves what every PE r holds, the global indices [held(r).first, held(r).second) (this PE's
  // at `mine`), into the layout's exact shares in work_: one message per overlap, with `tag`.
  template <class Held>
  void deliver_shares(Held held, const T* mine, int tag, const char* wrong_size) {
    const auto [h0, h1] = held(rank_);
    drain([&](Pool& pool) {
      for (int t = 0; t < p_; ++t) {
        const std::int64_t lo = std::max(h0, layout_->start(t));
        const std::int64_t hi = std::min(h1, layout_->end(t));
        if (hi <= lo) continue;
        if (t == rank_) {
          copy_counted(work_.data() + (lo - my_start_), mine + (lo - h0), hi - lo);
          continue;
        }
        layer_.isend(pool, layer_.root(), mine + (lo - h0), static_cast<int>(hi - lo), type_, t, tag);
        ++stats_.messages_sent;
      }
      for (int r = 0; r < p_; ++r) {
        if (r == rank_) continue;
        const auto [r0, r1] = held(r);
        const std::int64_t lo = std::max(r0, my_start_), hi = std::min(r1, my_end_);
        if (hi <= lo) continue;
        layer_.irecv(pool, layer_.root(), work_.data() + (lo - my_start_), static_cast<int>(hi - lo), type_, r, tag,
                     counted(hi - lo, wrong_size));
      }
    });
  }

  // Stores this PE's share of `small` from `from` and drops the local run (the sends to children
  // may still read the block).
  void copy_share(Small& small, const void* from) {
    copy_counted(work_.data() + (small.t0 - my_start_), from, small.t1 - small.t0);
    std::vector<T>().swap(small.keys);
  }

  // Copies `count` elements between this PE's own buffers, counted in Stats::bytes_copied and
  // charged as a copy.
  void copy_counted(T* to, const void* from, std::int64_t count) {
    if (count > 0) {  // a PE without elements may have no storage at all
      std::memcpy(static_cast<void*>(to), from, static_cast<std::size_t>(count) * sizeof(T));
    }
    stats_.bytes_copied += static_cast<long long>(count * static_cast<std::int64_t>(sizeof(T)));
    cost::charge(cost::Kernel::copy, static_cast<std::size_t>(count));
  }

  LayerT& layer_;
  MPI_Datatype type_;
  localsort::ComparatorFault fault_;  // before less_, which points at it
  Compare less_;
  const Config& config_;
  Stats& stats_;
  PhaseClock clock_;
  MPI_Datatype sample_type_ = MPI_DATATYPE_NULL;
  int rank_ = 0;
  int p_ = 1;
  std::unique_ptr<Layout> layout_;
  std::int64_t my_start_ = 0, my_end_ = 0;
  std::vector<T>* input_ = nullptr;
  std::int64_t input_start_ = 0;
  std::int64_t lower_half_input_ = 0;  // input elements on PEs [0, p / 2)
  std::vector<T> work_;
  std::vector<T> scratch_;
  Buffer<T> merged_;                    // key_merger's output
  std::vector<Sample> merged_samples_;  // sample_merger's output
  std::vector<Child> base_cases_;
  std::vector<std::unique_ptr<Small>> smalls_;
  bool whole_small_ = false;  // the whole input was one gathered base case
  bool presorted_ = false;    // run's input is sorted (node_split_whole sorted it for sample_sort_whole)
  std::string broken_;  // why the comparator is known not to be a strict weak order
  std::uint64_t fingerprint_ = 0;  // of the input (verify)
};

}  // namespace jquick::detail
