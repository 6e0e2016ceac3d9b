#include "reports/step_capture.h"

#include <algorithm>
#include <array>
#include <map>
#include <set>
#include <string>
#include <tuple>
#include <vector>

namespace cs::reports {

namespace {

using Interval = std::pair<int64_t, int64_t>;  // [start, end) in ps
constexpr int kKinds = 6;                     // sim::CollectiveKind values
constexpr size_t kMaxRoles = 16, kGanttRoles = 4, kMaxCollectiveRows = 24;
constexpr int64_t kGanttColumns = 1500;  // bars closer than end / kGanttColumns merge

int64_t ns(int64_t ps) { return (ps + 500) / 1000; }

const char* kind_label(int k) {
  static const char* const kNames[kKinds] = {"all-to-all", "all-reduce", "reduce-scatter",
                                             "all-gather", "send",       "all-to-all-v"};
  return kNames[k];
}

// Sorted, disjoint union of intervals.
std::vector<Interval> merged(std::vector<Interval> v) {
  std::sort(v.begin(), v.end());
  std::vector<Interval> out;
  for (const auto& iv : v) {
    if (iv.second <= iv.first) continue;
    if (!out.empty() && iv.first <= out.back().second) out.back().second = std::max(out.back().second, iv.second);
    else out.push_back(iv);
  }
  return out;
}

// How much of [s, e) the sorted disjoint `cover` covers.
int64_t covered(const std::vector<Interval>& cover, int64_t s, int64_t e) {
  auto it = std::upper_bound(cover.begin(), cover.end(), Interval{s, INT64_MAX});
  if (it != cover.begin()) --it;
  int64_t sum = 0;
  for (; it != cover.end() && it->first < e; ++it) sum += std::max<int64_t>(0, std::min(e, it->second) - std::max(s, it->first));
  return sum;
}

struct GpuOps {
  std::vector<uint32_t> compute, comm;
};

// A GPU's finished ops, compute and communication apart, in stream order.
GpuOps ops_of_gpu(const sim::OpGraph& g, const std::vector<uint32_t>& streams, const sim::ExecResult& ex) {
  GpuOps out;
  for (uint32_t s : streams)
    for (uint32_t o : g.streams()[s].ops) {
      if (!ex.ops[o].done()) continue;
      (g.ops()[o].kind == sim::OpKind::kComm ? out.comm : out.compute).push_back(o);
    }
  return out;
}

// Gantt categories: compute by the pipeline task it belongs to, then communication by kind.
enum ComputeCat { kFwd, kBwd, kBwdInput, kBwdWeight, kFwdBwd, kOptimizer, kOtherCompute, kComputeCats };
const char* const kComputeNames[kComputeCats] = {"forward",           "backward",  "backward (input)",
                                                 "backward (weight)", "forward & backward (overlapped)",
                                                 "optimizer",         "compute"};

}  // namespace

nlohmann::json capture_step(const models::OpWorkload& work, const sim::ExecResult& ex) {
  using nlohmann::json;
  const sim::OpGraph& g = work.graph;
  const auto& ops = g.ops();
  const int64_t step = ex.makespan.ps_count();

  // Per GPU its streams: the figures below read one GPU's ops at a time, never every op at once
  // (a step at full fidelity runs 80 M of them).
  std::map<int, std::vector<uint32_t>> streams_of_gpu;
  for (uint32_t s = 0; s < g.streams().size(); ++s) streams_of_gpu[g.streams()[s].gpu].push_back(s);
  const auto iv = [&](uint32_t o) { return Interval{ex.ops[o].start.ps_count(), ex.ops[o].end.ps_count()}; };
  const auto kind_of = [&](uint32_t o) { return static_cast<int>(g.collectives()[ops[o].payload].kind); };
  // Its computing time, for what it hides of its communication.
  const auto compute_cover = [&](const GpuOps& o) {
    std::vector<Interval> v;
    for (uint32_t op : o.compute) v.push_back(iv(op));
    return merged(std::move(v));
  };

  // Pipeline runs: which ops are the optimizer's, and which task each op ran in.
  std::vector<std::pair<std::string, int>> roles;  // label, gpu
  const models::PipelineRecord* rec = work.pipeline ? &*work.pipeline : nullptr;
  std::vector<int> stream_rank(g.streams().size(), -1);
  std::vector<uint32_t> optimizer_ops;
  if (rec) {
    for (int r = 0; r < rec->ranks; ++r) {
      for (uint32_t s : rec->streams[r]) stream_rank[s] = r;
      if (!rec->streams[r].empty()) roles.emplace_back("rank " + std::to_string(r), g.streams()[rec->streams[r][0]].gpu);
    }
    for (const auto& opt : rec->optimizer) optimizer_ops.insert(optimizer_ops.end(), opt.begin(), opt.end());
    std::sort(optimizer_ops.begin(), optimizer_ops.end());
  } else {
    std::vector<int> gpus;  // those that ran an op
    for (const auto& [gpu, streams] : streams_of_gpu)
      if (std::any_of(streams.begin(), streams.end(), [&](uint32_t s) {
            const auto& l = g.streams()[s].ops;
            return std::any_of(l.begin(), l.end(), [&](uint32_t o) { return ex.ops[o].done(); });
          }))
        gpus.push_back(gpu);
    const size_t n = std::min(gpus.size(), kMaxRoles);
    for (size_t i = 0; i < n; ++i) {
      const int gpu = gpus[n > 1 ? i * (gpus.size() - 1) / (n - 1) : 0];
      roles.emplace_back("GPU " + std::to_string(gpu), gpu);
    }
  }
  // An op's category: the optimizer's, else the kind of the task of its rank whose ops it lies among
  // (the record's spans are disjoint and ascending), else other compute.
  const auto cat_of = [&](uint32_t o) -> int {
    if (!rec) return kOtherCompute;
    if (std::binary_search(optimizer_ops.begin(), optimizer_ops.end(), o)) return kOptimizer;
    const auto& spans = rec->spans;
    const auto it = std::upper_bound(spans.begin(), spans.end(), o,
                                     [](uint32_t op, const models::ChunkSpan& sp) { return op < sp.first_op; });
    if (it == spans.begin()) return kOtherCompute;
    const models::ChunkSpan& sp = *std::prev(it);
    return o < sp.end_op && stream_rank[ops[o].stream] == sp.rank ? static_cast<int>(sp.kind) : kOtherCompute;
  };

  json roles_json = json::array();
  for (const auto& [label, gpu] : roles) {
    const GpuOps o = ops_of_gpu(g, streams_of_gpu[gpu], ex);
    const std::vector<Interval> cover = compute_cover(o);
    // Layers, highest first: optimizer, compute, then communication by kind.
    std::vector<std::vector<Interval>> layer(2 + kKinds);
    int64_t last_pipeline_end = 0;
    for (uint32_t op : o.compute) {
      const bool optimizer = cat_of(op) == kOptimizer;
      layer[optimizer ? 0 : 1].push_back(iv(op));
      if (!optimizer) last_pipeline_end = std::max(last_pipeline_end, iv(op).second);
    }
    for (uint32_t op : o.comm) {
      // The optimizer's gradient synchronisation counts as the optimizer step, as in DeepSeek's breakdown.
      const bool optimizer = cat_of(op) == kOptimizer;
      layer[optimizer ? 0 : 2 + kind_of(op)].push_back(iv(op));
      if (!optimizer) last_pipeline_end = std::max(last_pipeline_end, iv(op).second);
    }
    std::vector<int64_t> own(layer.size(), 0), overlapped(kKinds, 0);
    std::vector<Interval> above;  // union of the layers already counted
    for (size_t l = 0; l < layer.size(); ++l) {
      const std::vector<Interval> u = merged(layer[l]);
      for (const auto& [s, e] : u) own[l] += (e - s) - covered(above, s, e);
      if (l >= 2)
        for (const auto& [s, e] : u) overlapped[l - 2] += covered(cover, s, e);
      above.insert(above.end(), u.begin(), u.end());
      above = merged(std::move(above));
    }
    const int64_t busy_before = covered(above, 0, last_pipeline_end);
    const int64_t busy_after = covered(above, last_pipeline_end, std::max(step, last_pipeline_end));
    json exposed = json::object(), hidden = json::object();
    for (int k = 0; k < kKinds; ++k)
      if (own[2 + k] > 0 || overlapped[k] > 0) {
        exposed[kind_label(k)] = ns(own[2 + k]);
        hidden[kind_label(k)] = ns(overlapped[k]);
      }
    roles_json.push_back({{"label", label},
                          {"gpu", gpu},
                          {"optimizer_ns", ns(own[0])},
                          {"compute_ns", ns(own[1])},
                          {"exposed_ns", exposed},
                          {"overlapped_ns", hidden},
                          {"bubble_ns", ns(last_pipeline_end - busy_before)},
                          {"idle_ns", ns(std::max<int64_t>(0, step - last_pipeline_end) - busy_after)}});
  }

  // The timeline of a few ranks: first, second, middle, last.
  std::vector<size_t> picks;
  for (size_t i : {size_t{0}, size_t{1}, roles.size() / 2, roles.size() - 1})
    if (i < roles.size() && std::find(picks.begin(), picks.end(), i) == picks.end()) picks.push_back(i);
  std::sort(picks.begin(), picks.end());
  if (picks.size() > kGanttRoles) picks.resize(kGanttRoles);
  const int64_t merge_gap = std::max<int64_t>(1, step / kGanttColumns);
  json rows = json::array();
  for (size_t p : picks) {
    const auto& [label, gpu] = roles[p];
    const GpuOps o = ops_of_gpu(g, streams_of_gpu[gpu], ex);
    for (int track = 0; track < 2; ++track) {
      std::vector<std::tuple<int64_t, int64_t, int>> bars;
      for (uint32_t op : track == 0 ? o.compute : o.comm)
        bars.emplace_back(iv(op).first, iv(op).second, track == 0 ? cat_of(op) : kComputeCats + kind_of(op));
      std::sort(bars.begin(), bars.end());
      json out = json::array();
      // Merge runs of one category closer than a pixel: thousands of kernels become a few hundred bars.
      std::map<int, std::array<int64_t, 3>> open;  // category -> start, end, ops
      const auto flush = [&](int c, const std::array<int64_t, 3>& b) {
        out.push_back({ns(b[0]), ns(b[1]), c, b[2]});
      };
      for (const auto& [s, e, c] : bars) {
        auto it = open.find(c);
        if (it != open.end() && s <= it->second[1] + merge_gap) {
          it->second[1] = std::max(it->second[1], e);
          ++it->second[2];
          continue;
        }
        if (it != open.end()) flush(c, it->second);
        open[c] = {s, e, 1};
      }
      for (const auto& [c, b] : open) flush(c, b);
      std::sort(out.begin(), out.end());
      rows.push_back({{"label", label + (track == 0 ? " compute" : " comm")}, {"bars", out}});
    }
  }
  json categories = json::array();
  for (const char* n : kComputeNames) categories.push_back(n);
  for (int k = 0; k < kKinds; ++k) categories.push_back(kind_label(k));

  // Collectives grouped as nccl-tests reports them: kind, ranks, size.
  struct Row {
    int64_t count = 0, kernels = 0, time = 0, exposed = 0, overlapped = 0;
    std::set<int> gpus;  // that ran its kernels (with mirrored fidelity, fewer than its ranks)
  };
  std::map<std::tuple<int, size_t, double>, Row> groups;
  std::vector<Row*> row_of(g.collectives().size());  // per collective
  for (size_t c = 0; c < g.collectives().size(); ++c) {
    const sim::Collective& col = g.collectives()[c];
    row_of[c] = &groups[{static_cast<int>(col.kind), col.gpus.size(), col.bytes}];
    ++row_of[c]->count;
  }
  // GPU by GPU, each kernel against its own GPU's computing (sums of integers: the order is free).
  for (const auto& [gpu, streams] : streams_of_gpu) {
    const GpuOps o = ops_of_gpu(g, streams, ex);
    if (o.comm.empty()) continue;
    const std::vector<Interval> cover = compute_cover(o);
    for (uint32_t op : o.comm) {
      Row& row = *row_of[ops[op].payload];
      const auto [s, e] = iv(op);
      const int64_t hidden = covered(cover, s, e);
      row.gpus.insert(gpu);
      ++row.kernels;
      row.time += e - s;
      row.overlapped += hidden;
      row.exposed += (e - s) - hidden;
    }
  }
  std::vector<std::pair<std::tuple<int, size_t, double>, Row>> sorted(groups.begin(), groups.end());
  std::stable_sort(sorted.begin(), sorted.end(), [](const auto& a, const auto& b) { return a.second.time > b.second.time; });
  json coll = json::array();
  for (size_t i = 0; i < sorted.size() && i < kMaxCollectiveRows; ++i) {
    const auto& [key, row] = sorted[i];
    const int64_t k = std::max<int64_t>(1, row.kernels);
    const auto gpus = static_cast<int64_t>(std::max<size_t>(1, row.gpus.size()));
    const auto per = [&](int64_t total) { return ns(total / gpus); };
    coll.push_back({{"kind", kind_label(std::get<0>(key))},
                    {"ranks", std::get<1>(key)},
                    {"bytes", std::get<2>(key)},
                    {"count", row.count},
                    {"time_ns", ns(row.time / k)},
                    {"exposed_ns", per(row.exposed)},
                    {"overlapped_ns", per(row.overlapped)}});
  }
  return {{"role_kind", rec ? "pipeline rank" : "GPU"},
          {"step_ns", ns(step)},
          {"roles", roles_json},
          {"timeline", {{"end_ns", ns(step)}, {"categories", categories}, {"rows", rows}}},
          {"collectives", coll},
          {"collectives_omitted", sorted.size() > kMaxCollectiveRows ? sorted.size() - kMaxCollectiveRows : 0}};
}

}  // namespace cs::reports
