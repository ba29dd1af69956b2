// Small jobs run together; see entry_packs.h.
#include "planner/entry_packs.h"

#include <algorithm>

namespace backendbench::planner {

size_t pack_limit(size_t total_cases, int cases_per_entry, int at_once, bool on_gpus) {
  const size_t split = cases_per_entry > 0 ? static_cast<size_t>(cases_per_entry) : 200;
  const size_t share = (total_cases + std::max(1, at_once) - 1) / std::max(1, at_once);
  return std::max<size_t>(1, std::min(on_gpus ? 8 * split : split, share));
}

std::vector<std::vector<size_t>> pack_units(const std::vector<PackUnit>& units, size_t limit) {
  std::vector<std::vector<size_t>> packs;
  size_t open = 0, filled = 0;  // the pack small units of the current suite go into, and its size
  bool any_open = false;
  for (size_t unit = 0; unit < units.size(); ++unit) {
    if (units[unit].alone) {  // alone, and the open pack stays open: the next small unit may still join it
      packs.push_back({unit});
      continue;
    }
    if (!any_open || units[packs[open].front()].suite != units[unit].suite || filled + units[unit].size > limit) {
      packs.emplace_back();
      open = packs.size() - 1, filled = 0, any_open = true;
    }
    packs[open].push_back(unit);
    filled += units[unit].size;
  }
  return packs;
}

}  // namespace backendbench::planner
