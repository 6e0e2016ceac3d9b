#include "models/resource_busy.h"

#include <algorithm>
#include <map>
#include <utility>

namespace cs::models {

namespace {

// Time covered by the intervals (sorted in place).
sim::Time union_length(std::vector<std::pair<sim::Time, sim::Time>>& iv) {
  std::sort(iv.begin(), iv.end());
  sim::Time total, end;
  bool open = false;
  sim::Time start;
  for (const auto& [s, e] : iv) {
    if (!open || s > end) {
      if (open) total = total + (end - start);
      start = s;
      end = e;
      open = true;
    } else {
      end = std::max(end, e);
    }
  }
  if (open) total = total + (end - start);
  return total;
}

struct Tally {
  int gpus = 0;
  double sum = 0, max = 0, used = 0;
  void add(double share, double used_share = 0) {
    ++gpus;
    sum += share;
    max = std::max(max, share);
    used += used_share;
  }
};

}  // namespace

std::vector<ResourceBusy> resource_busy(const sim::OpGraph& graph, const std::vector<sim::OpTiming>& ops,
                                        sim::FlowNetwork& net, const sim::Routing& routing,
                                        const std::vector<sim::PartitionSpec>& partitions, sim::Time makespan) {
  std::vector<ResourceBusy> out;
  if (makespan <= sim::Time()) return out;
  const double span = makespan.to_seconds();
  // (gpu, partition) -> its streams; their ops' intervals are gathered one partition at a time, so
  // that a step of 80 M ops never holds them all at once.
  std::map<std::pair<int, int>, std::vector<uint32_t>> streams_of;
  for (uint32_t s = 0; s < graph.streams().size(); ++s)
    streams_of[{graph.streams()[s].gpu, graph.streams()[s].partition}].push_back(s);
  std::vector<int> gpus;
  for (const auto& [key, streams] : streams_of)
    if (gpus.empty() || gpus.back() != key.first) gpus.push_back(key.first);
  std::vector<Tally> sm(partitions.size());
  std::vector<std::pair<sim::Time, sim::Time>> iv;
  for (const auto& [key, streams] : streams_of) {
    if (key.second < 0 || key.second >= static_cast<int>(sm.size())) continue;
    iv.clear();
    for (uint32_t s : streams)
      for (uint32_t o : graph.streams()[s].ops)
        if (ops[o].done() && ops[o].end > ops[o].start && !graph.by_copy_engine(graph.ops()[o]))
          iv.emplace_back(ops[o].start, ops[o].end);
    sm[key.second].add(union_length(iv).to_seconds() / span);
  }
  for (size_t p = 0; p < partitions.size(); ++p)
    if (sm[p].gpus > 0) out.push_back({partitions[p].name + " SMs", sm[p].gpus, sm[p].sum / sm[p].gpus, sm[p].max});
  std::vector<std::pair<std::string, Tally>> links;  // in the fabric's order
  for (int g : gpus) {
    for (const sim::Routing::KindedLink& k : routing.gpu_links(g)) {
      auto it = std::find_if(links.begin(), links.end(), [&](const auto& l) { return l.first == k.kind; });
      if (it == links.end()) it = links.insert(links.end(), {k.kind, Tally{}});
      const sim::LinkStats st = net.stats(k.link);
      const double cap = net.capacity(k.link).bytes_per_s();
      it->second.add(std::min(1.0, st.busy.to_seconds() / span), cap > 0 ? std::min(1.0, st.bytes / (cap * span)) : 0.0);
    }
  }
  for (const auto& [kind, t] : links) out.push_back({kind, t.gpus, t.sum / t.gpus, t.max, t.used / t.gpus});
  return out;
}

}  // namespace cs::models
