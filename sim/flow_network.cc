#include "sim/flow_network.h"

#include <algorithm>
#include <cassert>
#include <cmath>
#include <cstring>
#include <limits>
#include <utility>

namespace cs::sim {

LinkId FlowNetwork::add_link(std::string name, Bandwidth capacity, Time latency) {
  assert(capacity.bytes_per_s() >= 0);
  uint32_t l;
  if (!free_links_.empty()) {
    l = free_links_.back();
    free_links_.pop_back();
  } else {
    l = static_cast<uint32_t>(links_.size());
    links_.emplace_back();
    link_info_.emplace_back();
    link_mark_.push_back(0);
  }
  Link& link = links_[l];
  link = Link{};
  link.capacity = capacity.bytes_per_s();
  link.alive = true;
  LinkInfo& info = link_info_[l];
  info = LinkInfo{};
  info.name = std::move(name);
  info.latency = latency;
  info.stats_since = engine_.now();
  link_mark_[l] = 0;
  return LinkId{l};
}

void FlowNetwork::remove_link(LinkId id) {
  Link& link = links_[id.v];
  assert(link.alive && link.flows.empty() && "remove a link only once its flows are gone");
  set_load(id.v, 0);
  link.alive = false;
  free_links_.push_back(id.v);
}

void FlowNetwork::set_capacity(LinkId id, Bandwidth capacity) {
  Link& link = links_[id.v];
  if (link.capacity == capacity.bytes_per_s()) return;
  link.capacity = capacity.bytes_per_s();
  mark_dirty_link(id.v);
}

double queue_share(double offered, double capacity, double exponent) {
  if (!(offered > 0) || !std::isfinite(offered)) return 1;  // nothing asked, or nothing to scale
  if (!(capacity > 0)) return 0;
  // (1 + x^p)^(-1/p) with x = D / C, in the form whose power never overflows: for x > 1 it is
  // (1 / x) (1 + x^-p)^(-1/p).
  const double x = offered / capacity;
  return x > 1 ? std::pow(1 + std::pow(x, -exponent), -1 / exponent) / x
               : std::pow(1 + std::pow(x, exponent), -1 / exponent);
}

double FlowNetwork::remembered_queue_share(double offered, double capacity, double exponent) {
  uint64_t a, b, c;
  std::memcpy(&a, &offered, 8);
  std::memcpy(&b, &capacity, 8);
  std::memcpy(&c, &exponent, 8);
  const uint64_t h = (a ^ (b * 0xbf58476d1ce4e5b9ull) ^ (c * 0x94d049bb133111ebull)) * 0x9e3779b97f4a7c15ull;
  ShareMemo& m = share_memo_[h >> (64 - kShareMemoBits)];
  // Equal values give equal shares (the only equal doubles of other bits, 0 and -0, both give the
  // edge case); a NaN never matches and is recomputed.
  if (m.offered == offered && m.capacity == capacity && m.exponent == exponent) return m.share;
  m = {offered, capacity, exponent, queue_share(offered, capacity, exponent)};
  return m.share;
}

void FlowNetwork::set_saturation(LinkId id, double exponent) {
  assert(exponent >= 0);
  Link& link = links_[id.v];
  if (link.saturation == exponent) return;
  link.saturation = exponent;
  mark_dirty_link(id.v);
}

FlowId FlowNetwork::start_flow(const std::vector<LinkId>& path, double bytes, Bandwidth cap,
                               std::function<void()> on_done, size_t timed_links) {
  assert(bytes >= 0);
  assert((!path.empty() || std::isfinite(cap.bytes_per_s())) && "a path-less flow needs a cap");
  uint32_t f;
  if (!free_flows_.empty()) {
    f = free_flows_.back();
    free_flows_.pop_back();
  } else {
    f = static_cast<uint32_t>(flows_.size());
    flows_.emplace_back();
    flow_done_.emplace_back();
    path_.emplace_back();
  }
  Flow& flow = flows_[f];
  PathSpan& span = path_[f];
  if (path.size() > span.room) {  // a new block; the old one is left (slots only ever grow theirs)
    span.at = static_cast<uint32_t>(path_arena_.size());
    span.room = static_cast<uint32_t>(path.size());
    path_arena_.resize(path_arena_.size() + path.size());
  }
  span.len = static_cast<uint32_t>(path.size());
  Time latency;
  PathEntry* entry = path_arena_.data() + span.at;
  for (size_t i = 0; i < path.size(); ++i) {
    const LinkId l = path[i];
    assert(links_[l.v].alive);
    *entry++ = {l.v, 0};
    if (i < timed_links) latency += link_info_[l.v].latency;
  }
  flow.remaining = bytes;
  flow.cap = cap.bytes_per_s();
  flow.rate = 0;
  flow_done_[f] = std::move(on_done);
  flow.state = State::kWaiting;
  flow.done_event = EventId{};
  if (latency > Time()) {
    engine_.after(latency, [this, f] { activate(f); });
  } else {
    activate(f);
  }
  return FlowId{f};
}

void FlowNetwork::activate(uint32_t f) {
  Flow& flow = flows_[f];
  flow.last_update = engine_.now();
  if (flow.remaining <= 0) {
    // Nothing to move: done once the latency has passed. Deferred to an event so that callers
    // never see on_done run inside start_flow. It joins no link, so it has nothing to detach.
    path_[f].len = 0;
    flow.state = State::kActive;
    ++active_flow_count_;
    flow.done_event = engine_.after(Time(), [this, f] { complete(f); });
    return;
  }
  flow.state = State::kActive;
  ++active_flow_count_;
  for (PathEntry& e : path(f)) {
    Link& link = links_[e.link];
    e.slot = static_cast<uint32_t>(link.flows.size());
    link.flows.push_back(f);
  }
  mark_dirty_flow(f);
}

void FlowNetwork::set_cap(FlowId id, Bandwidth cap) {
  Flow& flow = flows_[id.v];
  assert(flow.state != State::kFree);
  assert((path_[id.v].len > 0 || std::isfinite(cap.bytes_per_s())));
  if (flow.cap == cap.bytes_per_s()) return;
  flow.cap = cap.bytes_per_s();
  if (flow.state == State::kActive) mark_dirty_flow(id.v);
}

double FlowNetwork::remaining_bytes(FlowId id) const {
  const Flow& flow = flows_[id.v];
  if (flow.state != State::kActive) return flow.remaining;
  const double dt = (engine_.now() - flow.last_update).to_seconds();
  return std::max(0.0, flow.remaining - flow.rate * dt);
}

void FlowNetwork::detach(uint32_t f) {
  const double rate = flows_[f].rate;
  for (PathEntry& e : path(f)) {
    const uint32_t l = e.link;
    Link& link = links_[l];
    const uint32_t slot = e.slot;
    const auto last = static_cast<uint32_t>(link.flows.size() - 1);
    const uint32_t moved = link.flows[last];
    link.flows[slot] = moved;
    link.flows.pop_back();
    e.slot = UINT32_MAX;  // detached: no later search may take it for a live entry
    if (slot != last) {
      // Point the moved entry at its new position in this link's list. It may be this flow's own
      // other crossing of the link (a path that crosses a link twice: a local copy's HBM, a
      // stand-in's link), which is then detached from its new slot.
      for (PathEntry& m : path(moved))
        if (m.link == l && m.slot == last) {
          m.slot = slot;
          break;
        }
    }
    link.departed += rate;
    mark_dirty_link(l);
  }
}

void FlowNetwork::complete(uint32_t f) {
  Flow& flow = flows_[f];
  assert(flow.state == State::kActive);
  detach(f);
  flow.state = State::kFree;
  flow.remaining = 0;
  flow.rate = 0;
  --active_flow_count_;
  auto done = std::move(flow_done_[f]);
  flow_done_[f] = nullptr;
  free_flows_.push_back(f);
  if (done) done();
}

void FlowNetwork::mark_dirty_link(uint32_t l) {
  dirty_links_.push_back(l);
  if (!realloc_pending_) {
    realloc_pending_ = true;
    engine_.after(Time(), [this] { reallocate(); });
  }
}

void FlowNetwork::mark_dirty_flow(uint32_t f) {
  dirty_flows_.push_back(f);
  if (!realloc_pending_) {
    realloc_pending_ = true;
    engine_.after(Time(), [this] { reallocate(); });
  }
}

void FlowNetwork::collect_component() {
  ++epoch_;
  comp_links_.clear();
  comp_flows_.clear();
  std::vector<uint32_t>& stack = comp_links_;  // links are appended and scanned in order
  // Every flow on a link's list is active; a dirty flow may have ended since it was marked.
  auto visit_flow = [&](uint32_t f) {
    if (path_[f].mark == epoch_) return;
    path_[f].mark = epoch_;
    comp_flows_.push_back(f);
    for (const PathEntry& e : path(f))
      if (link_mark_[e.link] != epoch_) {
        link_mark_[e.link] = epoch_;
        stack.push_back(e.link);
      }
  };
  for (uint32_t l : dirty_links_)
    if (links_[l].alive && link_mark_[l] != epoch_) {
      link_mark_[l] = epoch_;
      stack.push_back(l);
    }
  for (uint32_t f : dirty_flows_)
    if (flows_[f].state == State::kActive) visit_flow(f);
  for (size_t i = 0; i < comp_links_.size(); ++i)
    for (uint32_t f : links_[comp_links_[i]].flows) visit_flow(f);
  dirty_links_.clear();
  dirty_flows_.clear();
}

void FlowNetwork::reallocate() {
  realloc_pending_ = false;
  collect_component();
  ++reallocations_;
  flows_reallocated_ += comp_flows_.size();
  // Local indices for the solver; links are visited in discovery order (deterministic).
  problem_.clear();
  problem_.link_capacity.resize(comp_links_.size());
  for (size_t i = 0; i < comp_links_.size(); ++i) {
    problem_.link_capacity[i] = links_[comp_links_[i]].capacity;
    link_mark_[comp_links_[i]] = static_cast<uint32_t>(i);  // reuse mark as local index
  }
  for (uint32_t f : comp_flows_) {
    for (const PathEntry& e : path(f)) problem_.path_link.push_back(link_mark_[e.link]);
    problem_.path_begin.push_back(static_cast<uint32_t>(problem_.path_link.size()));
    problem_.flow_cap.push_back(flows_[f].cap);
  }
  solve_parts();
  const std::vector<double>& rates = rates_;
  ++epoch_;  // local indices in `mark` are now stale; never equal to a future epoch's value
  for (uint32_t l : comp_links_) link_mark_[l] = 0;

  std::vector<double>& load = load_;
  load.assign(comp_links_.size(), 0.0);
  for (size_t i = 0; i < comp_flows_.size(); ++i) {
    const uint32_t f = comp_flows_[i];
    for (uint32_t local : problem_.path(i)) load[local] += rates[i];
    Flow& flow = flows_[f];
    if (rates[i] != flow.rate || !flow.done_event.valid()) {
      const double dt = (engine_.now() - flow.last_update).to_seconds();
      flow.remaining = std::max(0.0, flow.remaining - flow.rate * dt);
      flow.last_update = engine_.now();
      rate_changes_ += rates[i] != flow.rate;
      flow.rate = rates[i];
      reschedule(f);
    }
  }
  // Most links of a component keep their load; only changes need settling and reporting.
  for (size_t i = 0; i < comp_links_.size(); ++i) {
    if (links_[comp_links_[i]].load != load[i]) set_load(comp_links_[i], load[i]);
    links_[comp_links_[i]].departed = 0;
  }
}

void FlowNetwork::reschedule(uint32_t f) {
  Flow& flow = flows_[f];
  if (flow.rate <= 0) {  // stalled until a capacity or cap changes
    engine_.cancel(flow.done_event);
    flow.done_event = EventId{};
    return;
  }
  const Time dt = Time::from_seconds_ceil(flow.remaining / flow.rate);
  if (!engine_.reschedule(flow.done_event, engine_.now() + dt))
    flow.done_event = engine_.after(dt, [this, f] { complete(f); });
}

void FlowNetwork::settle_link(uint32_t l) {
  const Time now = engine_.now();
  const double load = links_[l].load;
  LinkInfo& info = link_info_[l];
  const Time dt = now - info.stats_since;
  info.stats.bytes += load * dt.to_seconds();
  if (load > 0) info.stats.busy += dt;
  info.stats_since = now;
}

void FlowNetwork::set_load(uint32_t l, double load) {
  Link& link = links_[l];
  if (link.load == load) return;
  settle_link(l);
  link.load = load;
  if (observer_) observer_->on_link_load(LinkId{l}, engine_.now(), Bandwidth::bytes_per_s(load));
}

LinkStats FlowNetwork::stats(LinkId id) {
  settle_link(id.v);
  return link_info_[id.v].stats;
}

}  // namespace cs::sim
