#include "models/scenario_runner.h"

#include <algorithm>
#include <cstdio>
#include <map>
#include <memory>
#include <stdexcept>

#include "hw/fabric/fabric_routing.h"
#include "hw/switch_fabric.h"
#include "hw/user_error.h"
#include "models/cluster.h"
#include "models/cost_config.h"
#include "models/model_workload.h"
#include "models/op_workload.h"
#include "sim/engine.h"
#include "sim/executor.h"
#include "sim/flow_network.h"
#include "sim/stand_in_routing.h"
#include "sim/trace_writer.h"

namespace cs::models {

namespace {

// 200 -> "200", 163.543 -> "163.5"
std::string short_number(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.4g", v);
  return buf;
}

}  // namespace

RunResult run_scenario(const Scenario& sc, const RunOptions& options) {
  return run_scenario(sc, build_op_workload(sc), options);
}

RunResult run_scenario(const Scenario& sc, const OpWorkload& work, const RunOptions& options) {
  const ClusterConfig& cl = sc.cluster;

  sim::Engine engine;
  sim::FlowNetwork net(engine);
  // One switch, or HGX nodes on a fat-tree; either way the executor only sees sim::Routing.
  std::unique_ptr<hw::SwitchFabric> one_switch;
  std::unique_ptr<hw::BuiltFabric> tree;
  std::unique_ptr<hw::FabricRouting> tree_routing;
  const sim::Routing* routing = nullptr;
  if (cl.fabric.kind == "switch") {
    one_switch = std::make_unique<hw::SwitchFabric>(
        net, hw::SwitchFabricSpec{cl.gpus, sim::Bandwidth::gbytes_per_s(cl.fabric.link_bw_GBps),
                                  sim::Time::from_seconds_ceil(cl.fabric.link_lat_ns * 1e-9),
                                  sim::Bandwidth::gbytes_per_s(cl.figures.hbm_bw_GBps)});
    routing = one_switch.get();
  } else {
    tree = std::make_unique<hw::BuiltFabric>(hw::build_fabric(fabric_spec(cl)));
    const hw::PxnMode pxn = cl.fabric.pxn == "none"     ? hw::PxnMode::kNone
                            : cl.fabric.pxn == "source" ? hw::PxnMode::kAtSource
                                                        : hw::PxnMode::kAtDestination;
    tree_routing = std::make_unique<hw::FabricRouting>(net, *tree, pxn);
    routing = tree_routing.get();
  }
  // Folded and mirrored runs: the simulated GPUs' links stand in for their peers'.
  std::unique_ptr<sim::StandInRouting> stand_in;
  if (!work.stand_in.empty()) {
    stand_in = std::make_unique<sim::StandInRouting>(*routing, net, work.stand_in);
    routing = stand_in.get();
  }
  const sim::Routing& fabric = *routing;
  const std::unique_ptr<sim::CostModel> cost_model = make_cost_model(sc.cost, cl.gpu);
  const sim::CostModel& cost = *cost_model;
  std::vector<sim::SmPool> pools;
  for (int g = 0; g < cl.gpus; ++g) pools.emplace_back(cl.gpu.sms, cl.partitions);

  sim::Executor exec(engine, net, fabric, cost, pools, work.graph);
  std::unique_ptr<sim::TraceWriter> trace;
  if (options.trace) {
    trace = std::make_unique<sim::TraceWriter>(*options.trace, work.graph, net, fabric);
    exec.set_observer(trace.get());
    net.set_observer(trace.get());
  }
  sim::ExecResult ex;
  try {
    ex = exec.run();
  } catch (const std::overflow_error& e) {
    throw hw::UserError(sc.file, 0, 0, std::string(e.what()) + ": check the bandwidths and sizes of the scenario");
  }
  if (!ex.stuck_ops.empty()) {
    const uint32_t op = ex.stuck_ops.front();
    const auto& o = work.graph.ops()[op];
    const auto& st = work.graph.streams()[o.stream];
    const SourcePos pos = work.op_pos[op];
    throw hw::UserError(sc.file, pos.line, pos.col,
                        "deadlock: " + std::to_string(ex.stuck_ops.size()) + " ops never ran; op '" +
                            work.graph.label(o) + "' of stream '" + st.name + "' on GPU " + std::to_string(st.gpu) +
                            " waits for SMs or peers held by collectives that wait for other GPUs. Issue "
                            "collectives in the same order on every GPU, or give partition '" +
                            cl.partitions[st.partition].name + "' more SMs");
  }
  if (trace) trace->finish(ex.makespan);
  if (options.inspect) options.inspect(work, ex);

  RunResult r;
  r.scenario = sc.name;
  r.file = sc.file;
  r.gpu_model = cl.gpu.model;
  r.gpus = cl.gpus;
  if (cl.fabric.kind == "switch") {
    r.fabric = "one switch, " + short_number(cl.fabric.link_bw_GBps) + " GB/s per GPU and direction";
  } else {
    r.fabric = (cl.preset.empty() ? "" : cl.preset + ": ") + cl.fabric.kind + ", " + std::to_string(cl.nodes) + " x " +
               cl.node.name + ", 1:" + std::to_string(cl.fabric.oversubscription) + ", PXN " + cl.fabric.pxn +
               "; InfiniBand " + short_number(cl.figures.nic_bw_GBps) + " GB/s per NIC and direction";
  }
  if (sc.cost.profile && !cl.nvlink_bw_overridden)
    r.fabric += cl.fabric.kind == "switch"
                    ? " (NVLink as measured, profile " + sc.cost.profile->gpu + ")"
                    : "; NVLink " + short_number(cl.figures.nvlink_bw_GBps) + " GB/s per direction as measured (profile " +
                          sc.cost.profile->gpu + ")";
  r.partitions = cl.partitions;
  r.cost_model = cost.describe();
  r.calibrated = cost.calibrated();
  r.cost_warnings = profile_range_warnings(sc.cost, work.graph, cl.partitions);
  r.gemm_mean_MHz = ex.gemm_mean_MHz;
  r.makespan = ex.makespan;
  r.ops = static_cast<int64_t>(work.graph.ops().size());
  r.events = engine.events_processed();
  r.reallocations = net.reallocations();
  r.flows_reallocated = net.flows_reallocated();
  r.flow_rate_changes = net.rate_changes();
  if (sc.model) r.model = summarize_model_workload(*sc.model, cl);
  if (work.pipeline) r.step = step_breakdown(*work.pipeline, work.graph, ex.ops, ex.makespan);
  // A workload stream may hold several engine streams per GPU (pipeline sends: one per peer and
  // direction); its figures are per GPU, its engine streams' op durations summed.
  for (size_t s = 0; s < work.engine_streams.size(); ++s) {
    StreamResult sr;
    sr.name = work.stream_names[s];
    sr.partition = work.stream_partitions[s];
    bool any_op = false, all_copy_engine = true;
    std::map<int, sim::Time> busy_of_gpu;
    for (uint32_t es : work.engine_streams[s]) {
      const sim::Stream& st = work.graph.streams()[es];
      sr.ops_per_gpu += static_cast<int64_t>(st.ops.size());  // summed here, averaged below
      sim::Time& busy = busy_of_gpu[st.gpu];
      for (uint32_t o : st.ops) {
        any_op = true;
        all_copy_engine = all_copy_engine && work.graph.by_copy_engine(work.graph.ops()[o]);
        busy += ex.ops[o].end - ex.ops[o].start;
        sr.end_max = std::max(sr.end_max, ex.ops[o].end);
      }
    }
    if (any_op && all_copy_engine) sr.mover = sim::Mover::kCopyEngine;
    sr.gpus = static_cast<int>(busy_of_gpu.size());
    int64_t sum_ps = 0;
    for (const auto& [gpu, busy] : busy_of_gpu) {
      sr.busy_max = std::max(sr.busy_max, busy);
      sum_ps += busy.ps_count();
    }
    sr.busy_mean = sim::Time::ps(sum_ps / std::max(1, sr.gpus));
    sr.ops_per_gpu /= std::max(1, sr.gpus);
    r.streams.push_back(sr);
  }
  r.resources = resource_busy(work.graph, ex.ops, net, fabric, cl.partitions, ex.makespan);
  for (uint32_t l = 0; l < net.link_slots(); ++l) {
    const sim::LinkId id{l};
    if (!net.link_alive(id) || net.name(id).empty()) continue;
    const sim::LinkStats st = net.stats(id);
    if (st.bytes <= 0) continue;
    r.links.push_back(LinkResult{net.name(id), net.capacity(id).gbytes_per_s(), st.bytes, st.busy});
  }
  return r;
}

}  // namespace cs::models
