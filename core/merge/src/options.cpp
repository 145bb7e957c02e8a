#include "merge/options.hpp"

namespace merge {

std::string to_string(Variant variant) {
  switch (variant) {
    case Variant::fence_bound:
      return "fence_bound";
    case Variant::fence_allreduce:
      return "fence_allreduce";
    case Variant::lock_shared:
      return "lock_shared";
    case Variant::rget_lock_all:
      return "rget_lock_all";
  }
  return "unknown";
}

std::vector<Variant> all_variants() {
  return {Variant::fence_bound, Variant::fence_allreduce, Variant::lock_shared,
          Variant::rget_lock_all};
}

Variant parse_variant(const std::string& name) {
  for (Variant variant : all_variants()) {
    if (to_string(variant) == name) return variant;
  }
  throw Error("merge: unknown variant '" + name +
              "' (expected fence_bound, fence_allreduce, lock_shared or rget_lock_all)");
}

std::string to_string(WindowMemory windows) {
  return windows == WindowMemory::in_place ? "in_place" : "copy";
}

WindowMemory parse_window_memory(const std::string& name) {
  if (name == "in_place") return WindowMemory::in_place;
  if (name == "copy") return WindowMemory::copy;
  throw Error("merge: unknown window memory '" + name + "' (expected in_place or copy)");
}

}  // namespace merge
