#include "sim/max_min_fair.h"

#include <algorithm>
#include <cassert>
#include <cmath>
#include <limits>
#include <queue>

namespace cs::sim {

namespace {
struct HeapEntry {
  double share;
  uint32_t link;
  uint32_t version;
  // std::priority_queue is a max-heap: invert so the smallest share (then lowest index) is on top.
  bool operator<(const HeapEntry& o) const {
    return share > o.share || (share == o.share && link > o.link);
  }
};
}  // namespace

const std::vector<double>& MaxMinSolver::solve(const MaxMinProblem& p) {
  const size_t nl = p.link_capacity.size();
  const size_t nf = p.paths.size();
  assert(p.flow_cap.size() == nf);
  rate_.assign(nf, 0.0);
  frozen_.assign(nf, 0);
  remaining_.assign(p.link_capacity.begin(), p.link_capacity.end());
  unfrozen_count_.assign(nl, 0);
  version_.assign(nl, 0);
  if (link_flows_.size() < nl) link_flows_.resize(nl);
  for (size_t l = 0; l < nl; ++l) link_flows_[l].clear();
  for (uint32_t f = 0; f < nf; ++f)
    for (uint32_t l : p.paths[f]) {
      link_flows_[l].push_back(f);
      ++unfrozen_count_[l];
    }

  by_cap_.clear();
  for (uint32_t f = 0; f < nf; ++f)
    if (std::isfinite(p.flow_cap[f])) by_cap_.push_back(f);
  std::stable_sort(by_cap_.begin(), by_cap_.end(),
                   [&](uint32_t a, uint32_t b) { return p.flow_cap[a] < p.flow_cap[b]; });
  size_t next_cap = 0;

  std::priority_queue<HeapEntry> heap;
  for (uint32_t l = 0; l < nl; ++l)
    if (unfrozen_count_[l] > 0) heap.push({remaining_[l] / unfrozen_count_[l], l, 0});

  size_t left = nf;
  auto freeze = [&](uint32_t f, double r) {
    frozen_[f] = 1;
    rate_[f] = r;
    --left;
    for (uint32_t l : p.paths[f]) {
      remaining_[l] = std::max(0.0, remaining_[l] - r);
      --unfrozen_count_[l];
      ++version_[l];
      if (unfrozen_count_[l] > 0)
        heap.push({remaining_[l] / unfrozen_count_[l], l, version_[l]});
    }
  };

  while (left > 0) {
    while (!heap.empty() && heap.top().version != version_[heap.top().link]) heap.pop();
    while (next_cap < by_cap_.size() && frozen_[by_cap_[next_cap]]) ++next_cap;
    const double link_share =
        heap.empty() ? std::numeric_limits<double>::infinity() : heap.top().share;
    const bool have_cap = next_cap < by_cap_.size();
    if (have_cap && p.flow_cap[by_cap_[next_cap]] <= link_share) {
      const uint32_t f = by_cap_[next_cap++];
      freeze(f, p.flow_cap[f]);
      continue;
    }
    assert(!heap.empty() && "a flow with neither a path nor a cap has no defined rate");
    const uint32_t l = heap.top().link;
    heap.pop();
    // Every unfrozen flow through the bottleneck link gets its fair share.
    for (uint32_t f : link_flows_[l])
      if (!frozen_[f]) freeze(f, link_share);
  }
  return rate_;
}

}  // namespace cs::sim
