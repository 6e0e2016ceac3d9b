#include "models/schedule_uniform_sim.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <memory>
#include <stdexcept>

#include "sim/engine.h"
#include "sim/executor.h"
#include "sim/flow_network.h"
#include "sim/op_graph.h"
#include "sim/sm_pool.h"
#include "sim/trace_writer.h"

namespace cs::models {
namespace {

// Each op's GenericCompute carries its duration in picoseconds in place of FLOPs, and takes
// exactly that long on any number of SMs: the engine then adds nothing of its own to the times,
// so bubbles come out as exact integers.
class FixedTimeCost : public sim::CostModel {
 public:
  std::string describe() const override { return "uniform chunk times"; }
  bool calibrated() const override { return false; }
  sim::ComputeCost gemm_cost(int, const sim::GemmShape&) const override { return {1, 0}; }
  sim::Time gemm_time(int, const sim::GemmShape&, int) const override { return sim::Time(); }
  sim::ComputeCost compute_cost(int, const sim::GenericCompute&) const override { return {1, 0}; }
  sim::Time compute_time(int, const sim::GenericCompute& c, int) const override {
    return sim::Time::ps(std::llround(c.flops));
  }
  sim::Bandwidth comm_copy_rate(int, int, int) const override { return sim::Bandwidth(); }
  // Nothing is sent; uncapped, as in the other cost models (a cap of 0 would never finish a send).
  sim::Bandwidth copy_engine_rate(int) const override {
    return sim::Bandwidth::bytes_per_s(std::numeric_limits<double>::infinity());
  }
};

// Ranks without a network: each has an HBM link (the executor and trace writer ask for one) that
// no op uses.
class NoNetwork : public sim::Routing {
 public:
  NoNetwork(sim::FlowNetwork& net, int ranks) {
    for (int r = 0; r < ranks; ++r)
      hbm_.push_back(net.add_link("rank" + std::to_string(r) + ".hbm", sim::Bandwidth::gbytes_per_s(1), sim::Time()));
  }
  int gpu_count() const override { return static_cast<int>(hbm_.size()); }
  sim::LinkId hbm(int g) const override { return hbm_[g]; }
  void route(int, int, std::vector<sim::LinkId>&) const override {}

 private:
  std::vector<sim::LinkId> hbm_;
};

}  // namespace

sim::Time ChunkTimes::of(const ChunkTask& t) const {
  switch (t.kind) {
    case ChunkTask::kForward: return forward;
    case ChunkTask::kBackward: return backward;
    case ChunkTask::kBackwardInput: return backward_input();
    case ChunkTask::kBackwardWeight: return weight;
    case ChunkTask::kForwardBackward: return forward_backward;
  }
  return sim::Time();
}

sim::Time ScheduleRun::max_bubble() const {
  sim::Time m;
  for (sim::Time b : bubble) m = std::max(m, b);
  return m;
}

PublishedBubble published_bubble(const PipelineSchedule& s, const ChunkTimes& t) {
  const int pp = s.params.stages;
  PublishedBubble b;
  b.applies_to = "every rank";
  switch (s.params.kind) {
    case ScheduleKind::k1f1b:
      b.formula = "(PP-1)(F+B)";
      b.value = (t.forward + t.backward) * (pp - 1);
      break;
    case ScheduleKind::kInterleaved1f1b:
      b.formula = "(PP-1)(F+B)/v = (PP-1)(f+b), f and b of one virtual-stage chunk";
      b.value = (t.forward + t.backward) * (pp - 1);
      break;
    case ScheduleKind::kZb1p:
      b.formula = "(PP-1)(F+B-2W)";
      b.value = (t.forward + t.backward - t.weight * 2) * (pp - 1);
      b.conditions = "W <= F and W <= B-W";
      b.conditions_hold = t.weight <= t.forward && t.weight <= t.backward_input();
      break;
    case ScheduleKind::kDualPipe:
    case ScheduleKind::kDualPipeV:
      b.formula = "(PP/2-1)(F&B+B-3W)";
      b.value = (t.forward_backward + t.backward - t.weight * 3) * (pp / 2 - 1);
      b.applies_to = s.params.kind == ScheduleKind::kDualPipe ? "the largest (middle ranks)" : "the largest (last device)";
      b.conditions = "F = B-W, W <= F and B <= F&B <= F+B";
      b.conditions_hold = t.forward == t.backward_input() && t.weight <= t.forward &&
                          t.backward <= t.forward_backward && t.forward_backward <= t.forward + t.backward;
      break;
  }
  return b;
}

ScheduleRun simulate_uniform(const PipelineSchedule& s, const ChunkTimes& t, std::ostream* trace) {
  const sim::Time zero;
  if (t.forward < zero || t.backward < zero || t.weight < zero || t.forward_backward < zero)
    throw std::invalid_argument("chunk times must not be negative");
  if (t.weight > t.backward)
    throw std::invalid_argument("the weight backward W must not exceed the full backward B");
  const auto deps = task_dependencies(s);

  sim::OpGraph graph;
  std::vector<std::vector<uint32_t>> op(s.per_rank.size());
  for (int r = 0; r < static_cast<int>(s.per_rank.size()); ++r) {
    const sim::StreamId stream = graph.add_stream(r, 0, "rank " + std::to_string(r));
    for (const ChunkTask& task : s.per_rank[r]) {
      const double ps = static_cast<double>(t.of(task).ps_count());
      op[r].push_back(graph.add_compute(stream, sim::GenericCompute{ps, 0, sim::DType::kBf16}, task_token(s, task)).v);
    }
  }
  for (size_t r = 0; r < deps.size(); ++r)
    for (size_t i = 0; i < deps[r].size(); ++i)
      for (const TaskRef& d : deps[r][i])
        if (d.rank != static_cast<int>(r) || d.index >= static_cast<int>(i))  // the stream orders the rest
          graph.add_dep(sim::OpId{op[r][i]}, sim::OpId{op[d.rank][d.index]});

  sim::Engine engine;
  sim::FlowNetwork net(engine);
  NoNetwork routing(net, s.ranks);
  FixedTimeCost cost;
  std::vector<sim::SmPool> pools;
  for (int r = 0; r < s.ranks; ++r) pools.emplace_back(1, std::vector<sim::PartitionSpec>{{"compute", 1}});
  sim::Executor exec(engine, net, routing, cost, pools, graph);
  std::unique_ptr<sim::TraceWriter> writer;
  if (trace) {
    writer = std::make_unique<sim::TraceWriter>(*trace, graph, net, routing);
    exec.set_observer(writer.get());
    net.set_observer(writer.get());
  }
  const sim::ExecResult ex = exec.run();
  if (writer) writer->finish(ex.makespan);

  ScheduleRun out;
  out.makespan = ex.makespan;
  out.stuck_tasks = ex.stuck_ops.size();
  out.timing.resize(s.per_rank.size());
  for (size_t r = 0; r < s.per_rank.size(); ++r) {
    sim::Time busy;
    for (size_t i = 0; i < s.per_rank[r].size(); ++i) {
      const sim::OpTiming& ot = ex.ops[op[r][i]];
      out.timing[r].push_back({ot.start, ot.end});
      busy += t.of(s.per_rank[r][i]);
    }
    out.busy.push_back(busy);
    out.bubble.push_back(ex.makespan - busy);
  }
  PipelineRecord rec;
  rec.schedule = schedule_kind_name(s.params.kind);
  rec.ranks = s.ranks;
  for (int r = 0; r < s.ranks; ++r) {
    rec.streams.push_back({static_cast<uint32_t>(r)});
    for (size_t i = 0; i < s.per_rank[r].size(); ++i)
      rec.spans.push_back(ChunkSpan{r, s.per_rank[r][i].kind, op[r][i], op[r][i] + 1});
  }
  out.breakdown = step_breakdown(rec, graph, ex.ops, ex.makespan);
  return out;
}

}  // namespace cs::models
