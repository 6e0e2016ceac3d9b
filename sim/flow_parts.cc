// FlowNetwork's reallocation, once the changed components are gathered: the parts that share no
// link solved apart, each with its queues' shares (sim/flow_network.h).
#include <algorithm>
#include <cmath>
#include <limits>

#include "sim/flow_network.h"

namespace cs::sim {

// The changes of one instant touch every part of the network that acts at it: in a run of every
// GPU, each data-parallel replica's links and flows, which share no link with one another. Each
// such part is solved alone (the same rates: progressive filling never lets one part's flows
// change another's), so that parts alike to the bit (the replicas') are one problem the memo has
// seen, where the union of all of them would be a new problem at nearly every instant.
void FlowNetwork::solve_parts() {
  const MaxMinProblem& p = problem_;
  const size_t nl = p.link_capacity.size(), nf = p.flows();
  rates_.assign(nf, 0.0);
  // A small component is looked up whole: it recurs as it is (the mirrored DeepSeek-V3 step's
  // average 18.7 flows in 3.3 parts, none of 64 flows or more), where splitting it cost a lookup
  // per part and made that step 10% slower. Only the run of every GPU gathers many parts alike
  // (a 512-GPU cut of it: 926 flows in 250 parts on average). Either way the rates are the same.
  const auto solve_whole = [&] {
    const std::vector<double>& r = solve_with_queues(problem_, comp_links_);
    std::copy(r.begin(), r.end(), rates_.begin());
  };
  if (nf < split_from_flows_) return solve_whole();
  // Union-find over the local links; a flow joins the links of its path.
  part_.resize(nl);
  for (uint32_t l = 0; l < nl; ++l) part_[l] = l;
  const auto root = [&](uint32_t l) {
    while (part_[l] != l) l = part_[l] = part_[part_[l]];
    return l;
  };
  size_t pathless = 0;
  for (size_t f = 0; f < nf; ++f) {
    const auto path = p.path(f);
    pathless += path.empty();
    for (size_t i = 1; i < path.size(); ++i) {
      const uint32_t a = root(path[0]), b = root(path[i]);
      if (a != b) part_[std::max(a, b)] = std::min(a, b);  // the root is a part's first link
    }
  }
  // Parts numbered by their first link; each keeps the links' and flows' order of the whole, so
  // its solve breaks ties as the whole's would.
  part_links_.assign(1, 0);
  part_of_link_.resize(nl);
  for (uint32_t l = 0; l < nl; ++l) {
    const uint32_t r = root(l);
    if (r == l) {
      part_of_link_[l] = static_cast<uint32_t>(part_links_.size() - 1);
      part_links_.push_back(0);
    } else {
      part_of_link_[l] = part_of_link_[r];
    }
  }
  const size_t parts = part_links_.size() - 1;
  if (parts <= 1 && pathless == 0) return solve_whole();  // one part: the problem as it stands
  // A flow on no link (a kernel's countdown) runs at its cap, as the solver would give it.
  for (size_t f = 0; f < nf; ++f)
    if (p.path(f).empty()) rates_[f] = p.flow_cap[f];
  if (parts == 0) return;
  // Counting sort of links and flows by part, stable.
  for (uint32_t l = 0; l < nl; ++l) ++part_links_[part_of_link_[l] + 1];
  for (size_t c = 0; c < parts; ++c) part_links_[c + 1] += part_links_[c];
  part_flows_.assign(parts + 1, 0);
  for (size_t f = 0; f < nf; ++f)
    if (!p.path(f).empty()) ++part_flows_[part_of_link_[p.path(f)[0]] + 1];
  for (size_t c = 0; c < parts; ++c) part_flows_[c + 1] += part_flows_[c];
  sorted_links_.resize(nl);
  local_in_part_.resize(nl);
  cursor_.assign(part_links_.begin(), part_links_.end() - 1);
  for (uint32_t l = 0; l < nl; ++l) {
    const uint32_t c = part_of_link_[l];
    local_in_part_[l] = cursor_[c] - part_links_[c];
    sorted_links_[cursor_[c]++] = l;
  }
  sorted_flows_.resize(part_flows_[parts]);
  cursor_.assign(part_flows_.begin(), part_flows_.end() - 1);
  for (uint32_t f = 0; f < nf; ++f)
    if (!p.path(f).empty()) sorted_flows_[cursor_[part_of_link_[p.path(f)[0]]]++] = f;
  // The replicas' parts come one after another (they act alike at the same instant), so a part is
  // first compared with the one before it: equal to the bit, with its links' queues alike, it
  // has its rates (solve_with_queues is a function of exactly these) for one comparison, where the
  // memo would copy, hash and compare its key, twice over on a queue.
  bool have_last = false;
  for (size_t c = 0; c < parts; ++c) {
    if (part_flows_[c] == part_flows_[c + 1]) continue;  // links whose last flows just left
    MaxMinProblem& q = part_problem_;
    q.clear();
    part_global_links_.clear();
    part_saturation_.clear();
    for (uint32_t i = part_links_[c]; i < part_links_[c + 1]; ++i) {
      q.link_capacity.push_back(p.link_capacity[sorted_links_[i]]);
      part_global_links_.push_back(comp_links_[sorted_links_[i]]);
      part_saturation_.push_back(links_[comp_links_[sorted_links_[i]]].saturation);
    }
    for (uint32_t i = part_flows_[c]; i < part_flows_[c + 1]; ++i) {
      const uint32_t f = sorted_flows_[i];
      for (uint32_t l : p.path(f)) q.path_link.push_back(local_in_part_[l]);
      q.path_begin.push_back(static_cast<uint32_t>(q.path_link.size()));
      q.flow_cap.push_back(p.flow_cap[f]);
    }
    // The exponents are >= 0 and only compared with 0 and raised to, so == is equality enough.
    if (!(have_last && q.same_bits(last_part_) && part_saturation_ == last_saturation_)) {
      last_part_ = q;  // as posed: the solve changes its capacities and caps
      last_saturation_ = part_saturation_;
      last_rates_ = solve_with_queues(q, part_global_links_);
      have_last = true;
    }
    for (uint32_t i = part_flows_[c]; i < part_flows_[c + 1]; ++i)
      rates_[sorted_flows_[i]] = last_rates_[i - part_flows_[c]];
  }
}

const std::vector<double>& FlowNetwork::solve_with_queues(MaxMinProblem& problem, std::span<const uint32_t> links) {
  const size_t nl = problem.link_capacity.size(), nf = problem.flows();
  bool saturating = false;
  for (size_t i = 0; i < nl; ++i)
    if (links_[links[i]].saturation > 0) {
      saturating = true;
      problem.link_capacity[i] = std::numeric_limits<double>::infinity();
    }
  const std::vector<double>* solved = &solver_.solve(problem);
  if (!saturating) return *solved;
  // What each flow asks with the queues unbounded. A flow that nothing but queues bounds (no
  // cap, every other link of its path a queue too) asks everything: it counts as each queue's
  // capacity and is not capped (the capacity bounds it in the second solve).
  asked_.assign(solved->begin(), solved->end());
  for (size_t f = 0; f < nf; ++f) {
    bool greedy = !std::isfinite(problem.flow_cap[f]);
    for (uint32_t local : problem.path(f))
      if (links_[links[local]].saturation <= 0) greedy = greedy && !std::isfinite(links_[links[local]].capacity);
    if (greedy) asked_[f] = std::numeric_limits<double>::infinity();
  }
  // Per queue, the load offered to it, then the share X / D of it that it carries.
  std::vector<double>& share = scale_;
  share.assign(nl, 0.0);
  for (size_t f = 0; f < nf; ++f)
    for (uint32_t local : problem.path(f)) {
      const double c = links_[links[local]].capacity;
      share[local] += std::isfinite(asked_[f]) ? asked_[f] : c;
    }
  for (size_t i = 0; i < nl; ++i) {
    const Link& link = links_[links[i]];
    problem.link_capacity[i] = link.capacity;
    share[i] = link.saturation > 0 ? remembered_queue_share(share[i], link.capacity, link.saturation) : 1.0;
  }
  for (size_t f = 0; f < nf; ++f) {
    if (!std::isfinite(asked_[f])) continue;
    double s = 1;
    for (uint32_t local : problem.path(f)) s = std::min(s, share[local]);
    if (s < 1) problem.flow_cap[f] = std::min(problem.flow_cap[f], asked_[f] * s);
  }
  return solver_.solve(problem);
}

}  // namespace cs::sim
