// A flow-level network: directed links with capacity and latency, flows along paths, rates by
// max-min fairness with per-flow caps. A saturating link (a GPU's HBM) is a queue rather than a
// pipe: offered D bytes/s in all, it carries X = (D^-p + C^-p)^(-1/p) (p its exponent, C its
// capacity), below both, and shares X in proportion to what its flows ask. What a flow asks is its
// rate with every saturating link unbounded; each flow is then capped at that rate times the
// smallest X / D of its saturating links, and the rates solved again. A flow bounded by nothing
// but queues asks everything: it counts as C in D, is not capped, and takes what the capacity
// leaves in the second solve. Changes made at one instant (flows starting, ending, caps
// or capacities changing) are batched and the allocation is recomputed once, only over the
// connected components (links and flows reachable through shared links) that the changes touch,
// each solved on its own so that components alike to the bit are one remembered problem.
#pragma once

#include <algorithm>
#include <cstdint>
#include <functional>
#include <limits>
#include <span>
#include <string>
#include <vector>

#include "sim/engine.h"
#include "sim/max_min_memo.h"
#include "sim/time.h"

namespace cs::sim {

struct LinkId {
  uint32_t v = UINT32_MAX;
  auto operator<=>(const LinkId&) const = default;
};
struct FlowId {
  uint32_t v = UINT32_MAX;
  auto operator<=>(const FlowId&) const = default;
};

// Told whenever a link's carried rate changes (for traces and utilisation counters).
class LinkObserver {
 public:
  virtual ~LinkObserver() = default;
  virtual void on_link_load(LinkId link, Time now, Bandwidth load) = 0;
};

struct LinkStats {
  double bytes = 0;  // bytes carried so far
  Time busy;         // time with a non-zero load
};

// X / D of a queue of `capacity` and `exponent` offered `offered` bytes/s: (1 + (D/C)^p)^(-1/p),
// computed without overflow; 1 when nothing is offered, 0 for a queue of no capacity.
double queue_share(double offered, double capacity, double exponent);

class FlowNetwork {
 public:
  static constexpr Bandwidth kUncapped = Bandwidth::bytes_per_s(std::numeric_limits<double>::infinity());
  static constexpr size_t kSplitFromFlows = 64;  // see solve_parts (sim/flow_parts.cc)

  // Components of `split_from_flows` flows or more are solved part by part (a speed choice: the
  // rates are the same either way; tests lower it to split small networks).
  explicit FlowNetwork(Engine& engine, size_t split_from_flows = kSplitFromFlows)
      : engine_(engine), split_from_flows_(split_from_flows) {}

  LinkId add_link(std::string name, Bandwidth capacity, Time latency);
  // A link may be removed once no flow uses it (per-kernel virtual links are).
  void remove_link(LinkId link);
  void set_capacity(LinkId link, Bandwidth capacity);
  // Makes `link` saturating with exponent p > 0 (0: an ordinary link again).
  void set_saturation(LinkId link, double exponent);

  // Starts a flow of `bytes` along `path`. It waits the summed latency of the path, then moves at
  // its fair rate, never above `cap`. A flow with an empty path needs a finite cap: it is then a
  // countdown at that rate (how compute kernels that touch no link progress). Only the path's first
  // `timed_links` links add to its latency: the others are links a stand-in's flow loads for the
  // transfers it stands for (sim::Routing::image_links), not hops it makes.
  FlowId start_flow(const std::vector<LinkId>& path, double bytes, Bandwidth cap, std::function<void()> on_done,
                    size_t timed_links = SIZE_MAX);
  void set_cap(FlowId flow, Bandwidth cap);

  Bandwidth rate(FlowId flow) const { return Bandwidth::bytes_per_s(flows_[flow.v].rate); }
  double remaining_bytes(FlowId flow) const;
  Bandwidth load(LinkId link) const { return Bandwidth::bytes_per_s(links_[link.v].load); }
  // The load less the flows that ended at this instant, before the reallocation that follows them
  // (the others' rates are still the last reallocation's).
  Bandwidth load_now(LinkId link) const {
    const Link& l = links_[link.v];
    return Bandwidth::bytes_per_s(l.flows.empty() ? 0.0 : std::max(0.0, l.load - l.departed));
  }
  Bandwidth capacity(LinkId link) const { return Bandwidth::bytes_per_s(links_[link.v].capacity); }
  Time latency(LinkId link) const { return link_info_[link.v].latency; }
  const std::string& name(LinkId link) const { return link_info_[link.v].name; }
  size_t link_slots() const { return links_.size(); }
  bool link_alive(LinkId link) const { return links_[link.v].alive; }
  size_t active_flows() const { return active_flow_count_; }
  // Statistics up to now (settled on each call).
  LinkStats stats(LinkId link);
  uint64_t reallocations() const { return reallocations_; }
  // Over every reallocation: the flows it gathered (its components' flows), and those of them
  // whose rate changed (each then moves its completion event). Their ratio to reallocations() is
  // what a reallocation costs: in a run of every GPU each gathers every replica acting at its
  // instant, where one GPU standing in for its replicas gathers its own.
  uint64_t flows_reallocated() const { return flows_reallocated_; }
  uint64_t rate_changes() const { return rate_changes_; }
  // Distinct sharing problems remembered now (parts alike to the bit are one).
  size_t remembered_problems() const { return solver_.size(); }

  void set_observer(LinkObserver* observer) { observer_ = observer; }

 private:
  enum class State : uint8_t { kFree, kWaiting, kActive };
  // What the reallocation reads and writes of a link, one cache line (it visits a thousand links
  // of an EP group's all-to-all at every instant in the run of every GPU); the rest in LinkInfo.
  struct alignas(64) Link {
    std::vector<uint32_t> flows;  // active flows through this link
    double capacity = 0;
    double load = 0;
    double departed = 0;    // rate of the flows that ended since the last reallocation
    double saturation = 0;  // exponent p; 0: an ordinary link
    bool alive = false;
  };
  static_assert(sizeof(Link) == 64);
  struct LinkInfo {
    std::string name;
    Time latency;
    Time stats_since;
    LinkStats stats;
  };
  // One link of a flow's path and the flow's position in that link's list of flows.
  struct PathEntry {
    uint32_t link;
    uint32_t slot;
  };
  // Where a flow's path lies in path_arena_ (`len` entries from `at`, in a block of `room`), and
  // the flow's component-search epoch: the search reads both of every flow it passes, one line.
  struct PathSpan {
    uint32_t at = 0, len = 0, room = 0, mark = 0;
  };
  // What a reallocation reads and writes of a flow (48 bytes); its completion callback, read once,
  // lies in flow_done_.
  struct Flow {
    double remaining = 0;
    double cap = 0;
    double rate = 0;
    Time last_update;
    EventId done_event;
    State state = State::kFree;
  };
  std::span<PathEntry> path(uint32_t f) { return {path_arena_.data() + path_[f].at, path_[f].len}; }
  std::span<const PathEntry> path(uint32_t f) const { return {path_arena_.data() + path_[f].at, path_[f].len}; }

  void activate(uint32_t f);
  void complete(uint32_t f);
  void detach(uint32_t f);
  void mark_dirty_link(uint32_t l);
  void mark_dirty_flow(uint32_t f);
  void reallocate();
  // Rates of problem_ (the components gathered) into rates_; from split_from_flows_ flows on, each
  // part that shares no link with the others solved on its own.
  void solve_parts();
  // Rates of `problem`, whose local link i is links[i], with its queues' shares applied (changes
  // the problem's capacities and caps on the way; valid until the next solve).
  const std::vector<double>& solve_with_queues(MaxMinProblem& problem, std::span<const uint32_t> links);
  void collect_component();
  void settle_link(uint32_t l);
  void set_load(uint32_t l, double load);
  void reschedule(uint32_t f);

  Engine& engine_;
  size_t split_from_flows_;
  LinkObserver* observer_ = nullptr;
  std::vector<Link> links_;
  std::vector<LinkInfo> link_info_;  // per link, beside links_
  std::vector<uint32_t> free_links_;
  std::vector<Flow> flows_;
  std::vector<std::function<void()>> flow_done_;  // per flow, its on_done
  std::vector<uint32_t> free_flows_;
  // What the component search and the reallocation read of every link and flow they pass, kept
  // apart from the structs: one dense array each, where a field of the flow or link struct and a
  // path behind its own allocation cost a cache miss each in the run of every GPU.
  std::vector<uint32_t> link_mark_;    // component-search epoch, then the local index in a reallocation
  std::vector<PathSpan> path_;         // per flow: its path's place and its search mark
  std::vector<PathEntry> path_arena_;  // every flow's path; a freed flow's block serves its slot's next flow
  size_t active_flow_count_ = 0;

  // Batched reallocation state.
  std::vector<uint32_t> dirty_links_, dirty_flows_;
  bool realloc_pending_ = false;
  uint32_t epoch_ = 0;
  std::vector<uint32_t> comp_links_, comp_flows_;
  MaxMinProblem problem_;
  std::vector<double> load_;  // per local link of the component being reallocated
  std::vector<double> asked_, scale_;  // with saturating links: per flow what it asks, per local link its share
  std::vector<double> rates_;          // per flow of the component, its rate
  // Splitting a component into parts (solve_parts): per local link its union-find parent, part
  // and index within the part; parts' link and flow ranges in the sorted lists.
  std::vector<uint32_t> part_, part_of_link_, local_in_part_, part_links_, part_flows_, sorted_links_, sorted_flows_,
      cursor_, part_global_links_;
  MaxMinProblem part_problem_;
  std::vector<double> part_saturation_;  // per link of the part being solved, its exponent
  // The last part solved in this reallocation, as it was posed, with its links' exponents and rates.
  MaxMinProblem last_part_;
  std::vector<double> last_saturation_, last_rates_;
  MaxMinMemo solver_;  // reallocations repeat the same few problems
  // The queues' shares, remembered by their arguments: a pure function of them, asked 21 M times
  // in DeepSeek-V3's run (two powers each), mostly with loads asked before.
  struct ShareMemo {
    double offered = std::numeric_limits<double>::quiet_NaN(), capacity = 0, exponent = 0, share = 0;
  };
  static constexpr int kShareMemoBits = 12;
  std::vector<ShareMemo> share_memo_ = std::vector<ShareMemo>(size_t{1} << kShareMemoBits);
  double remembered_queue_share(double offered, double capacity, double exponent);
  uint64_t reallocations_ = 0, flows_reallocated_ = 0, rate_changes_ = 0;
};

}  // namespace cs::sim
