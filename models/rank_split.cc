#include "models/rank_split.h"

#include <algorithm>
#include <functional>

namespace cs::models {

namespace {

// The loads sorted from the largest.
std::vector<double> sorted_loads(const std::vector<int>& split, const std::vector<std::vector<int>>& stages_of_rank,
                                 const LayerCosts& costs) {
  std::vector<double> l = rank_loads(split, stages_of_rank, costs);
  std::sort(l.begin(), l.end(), std::greater<>());
  return l;
}

// a < b, element by element from the largest; loads within `tol` are equal (sums of the same
// FLOPs in another order must not count as a gain, or the search could cycle).
bool lighter(const std::vector<double>& a, const std::vector<double>& b, double tol) {
  for (size_t i = 0; i < a.size(); ++i) {
    if (a[i] < b[i] - tol) return true;
    if (a[i] > b[i] + tol) return false;
  }
  return false;
}

}  // namespace

std::vector<double> rank_loads(const std::vector<int>& split, const std::vector<std::vector<int>>& stages_of_rank,
                               const LayerCosts& costs) {
  const std::vector<double> stage = stage_loads(split, costs);
  std::vector<double> out;
  out.reserve(stages_of_rank.size());
  for (const std::vector<int>& held : stages_of_rank) {
    double sum = 0;
    for (int s : held) sum += stage[s];
    out.push_back(sum);
  }
  return out;
}

std::vector<int> balance_rank_loads(std::vector<int> split, const std::vector<std::vector<int>>& stages_of_rank,
                                    const LayerCosts& costs,
                                    const std::function<bool(const std::vector<int>&)>& allowed) {
  double total = costs.tail;
  for (double c : costs.layer) total += c;
  const double tol = 1e-9 * total;
  std::vector<double> now = sorted_loads(split, stages_of_rank, costs);
  struct Move {
    std::vector<int> split;
    std::vector<double> loads;
  };
  for (;;) {
    std::vector<Move> better;
    for (size_t from = 0; from < split.size(); ++from) {
      if (split[from] <= 1) continue;
      for (size_t to = 0; to < split.size(); ++to) {
        // The stages between keep their counts and shift by a layer, so their loads move only
        // where dense and MoE layers meet: a layer crosses several boundaries in one move, where
        // one boundary at a time would have to pass through stages made heavier on its way.
        if (to == from) continue;
        Move m{split, {}};
        --m.split[from];
        ++m.split[to];
        m.loads = sorted_loads(m.split, stages_of_rank, costs);
        if (lighter(m.loads, now, tol)) better.push_back(std::move(m));
      }
    }
    // The lightest first, the earliest among equals; a move `allowed` refuses drops out. (Picked,
    // not sorted: equality within a tolerance is no strict weak order.)
    std::vector<Move>::iterator taken;
    for (;;) {
      taken = better.begin();
      for (auto it = better.begin(); it != better.end(); ++it)
        if (lighter(it->loads, taken->loads, tol)) taken = it;
      if (taken == better.end() || allowed(taken->split)) break;
      better.erase(taken);
    }
    if (taken == better.end()) return split;
    split = std::move(taken->split);
    now = std::move(taken->loads);
  }
}

}  // namespace cs::models
