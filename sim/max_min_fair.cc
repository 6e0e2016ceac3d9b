#include "sim/max_min_fair.h"

#include <algorithm>
#include <cassert>
#include <cmath>
#include <cstring>
#include <limits>

namespace cs::sim {

void MaxMinProblem::clear() {
  link_capacity.clear();
  path_begin.assign(1, 0);
  path_link.clear();
  flow_cap.clear();
}

void MaxMinProblem::add_flow(std::span<const uint32_t> path, double cap) {
  path_link.insert(path_link.end(), path.begin(), path.end());
  path_begin.push_back(static_cast<uint32_t>(path_link.size()));
  flow_cap.push_back(cap);
}

namespace {
template <typename T>
bool same_bits(const std::vector<T>& a, const std::vector<T>& b) {
  return a.size() == b.size() && (a.empty() || std::memcmp(a.data(), b.data(), a.size() * sizeof(T)) == 0);
}
}  // namespace

bool MaxMinProblem::same_bits(const MaxMinProblem& o) const {
  return cs::sim::same_bits(link_capacity, o.link_capacity) && cs::sim::same_bits(flow_cap, o.flow_cap) &&
         cs::sim::same_bits(path_begin, o.path_begin) && cs::sim::same_bits(path_link, o.path_link);
}

const std::vector<double>& MaxMinSolver::solve(const MaxMinProblem& p) {
  const size_t nl = p.link_capacity.size();
  const size_t nf = p.flows();
  assert(p.path_begin.size() == nf + 1);
  rate_.assign(nf, 0.0);
  frozen_.assign(nf, 0);
  remaining_.assign(p.link_capacity.begin(), p.link_capacity.end());
  unfrozen_count_.assign(nl, 0);
  version_.assign(nl, 0);
  link_touched_.assign(nl, 0);
  touched_.clear();
  for (uint32_t l : p.path_link) ++unfrozen_count_[l];
  link_begin_.resize(nl + 1);
  link_begin_[0] = 0;
  for (size_t l = 0; l < nl; ++l) link_begin_[l + 1] = link_begin_[l] + unfrozen_count_[l];
  link_flows_.resize(p.path_link.size());
  // Filled in flow order, so each link lists its flows by increasing index.
  cursor_.assign(link_begin_.begin(), link_begin_.end() - 1);
  for (uint32_t f = 0; f < nf; ++f)
    for (uint32_t l : p.path(f)) link_flows_[cursor_[l]++] = f;

  // Capped flows by cap, ties by index (what a stable sort of the index order gives).
  by_cap_.clear();
  for (uint32_t f = 0; f < nf; ++f)
    if (std::isfinite(p.flow_cap[f])) by_cap_.push_back(f);
  std::sort(by_cap_.begin(), by_cap_.end(), [&](uint32_t a, uint32_t b) {
    return p.flow_cap[a] < p.flow_cap[b] || (p.flow_cap[a] == p.flow_cap[b] && a < b);
  });
  size_t next_cap = 0;

  // A min-heap of link shares, smallest share then lowest link index on top. An entry is stale
  // once its link's version moved on; each link with unfrozen flows has one current entry.
  const auto later = [](const HeapEntry& a, const HeapEntry& b) {
    return a.share > b.share || (a.share == b.share && a.link > b.link);
  };
  heap_.clear();
  for (uint32_t l = 0; l < nl; ++l)
    if (unfrozen_count_[l] > 0) heap_.push_back({remaining_[l] / unfrozen_count_[l], l, 0});
  std::make_heap(heap_.begin(), heap_.end(), later);

  size_t left = nf;
  // Freezing updates the links' remaining capacity at once but their heap entries only before
  // the next choice: a bottleneck freezes many flows through the same links, and the share that
  // matters is the one after the last of them (the value an entry per freeze would end with).
  auto freeze = [&](uint32_t f, double r) {
    frozen_[f] = 1;
    rate_[f] = r;
    --left;
    for (uint32_t l : p.path(f)) {
      remaining_[l] = std::max(0.0, remaining_[l] - r);
      --unfrozen_count_[l];
      if (!link_touched_[l]) {
        link_touched_[l] = 1;
        touched_.push_back(l);
      }
    }
  };
  auto refresh_heap = [&] {
    for (uint32_t l : touched_) {
      link_touched_[l] = 0;
      ++version_[l];
      if (unfrozen_count_[l] > 0) {
        heap_.push_back({remaining_[l] / unfrozen_count_[l], l, version_[l]});
        std::push_heap(heap_.begin(), heap_.end(), later);
      }
    }
    touched_.clear();
  };

  while (left > 0) {
    refresh_heap();
    while (!heap_.empty() && heap_.front().version != version_[heap_.front().link]) {
      std::pop_heap(heap_.begin(), heap_.end(), later);
      heap_.pop_back();
    }
    while (next_cap < by_cap_.size() && frozen_[by_cap_[next_cap]]) ++next_cap;
    const double link_share =
        heap_.empty() ? std::numeric_limits<double>::infinity() : heap_.front().share;
    const bool have_cap = next_cap < by_cap_.size();
    if (have_cap && p.flow_cap[by_cap_[next_cap]] <= link_share) {
      const uint32_t f = by_cap_[next_cap++];
      freeze(f, p.flow_cap[f]);
      continue;
    }
    assert(!heap_.empty() && "a flow with neither a path nor a cap has no defined rate");
    const uint32_t l = heap_.front().link;
    std::pop_heap(heap_.begin(), heap_.end(), later);
    heap_.pop_back();
    // Every unfrozen flow through the bottleneck link gets its fair share.
    for (uint32_t i = link_begin_[l]; i < link_begin_[l + 1]; ++i)
      if (!frozen_[link_flows_[i]]) freeze(link_flows_[i], link_share);
  }
  return rate_;
}

}  // namespace cs::sim
