#include "calibrate/sim_cases.h"

#include <algorithm>
#include <string>
#include <vector>

#include "hw/calibrated_cost.h"
#include "hw/switch_fabric.h"
#include "sim/engine.h"
#include "sim/executor.h"
#include "sim/flow_network.h"

namespace cs::calibrate {

namespace {

// `gpus` GPUs of one node (NVLink at the profile's rate, the datasheet latency; HBM at the
// profile's ceiling where it has one), the SMs split into the partition the case used and the
// rest; runs `graph` and returns its makespan. The kernels run at an SM clock of `running_MHz`:
// 0 for a sweep's single kernels (their fit's clock), the clock sampled with a case where it has
// one, the sustained one for the overlap bench's streams.
struct Node {
  Node(const hw::GpuProfile& p, const hw::GpuSpec& gpu, int gpus, int partition_sms, double running_MHz = 0)
      : Node(p, gpu, gpus, std::vector<sim::PartitionSpec>{{"used", partition_sms}}, running_MHz) {}
  // Partitions as given; the SMs they leave form one more, idle.
  Node(const hw::GpuProfile& p, const hw::GpuSpec& gpu, int gpus, std::vector<sim::PartitionSpec> parts,
       double running_MHz)
      : net(engine),
        fabric(net, hw::SwitchFabricSpec{gpus, sim::Bandwidth::gbytes_per_s(p.comm.nvlink_GBps),
                                         sim::Time::from_seconds_ceil(gpu.nvlink_lat_ns * 1e-9),
                                         sim::Bandwidth::gbytes_per_s(p.memory.present() ? p.memory.hbm_GBps
                                                                                         : gpu.hbm_bw_GBps)}),
        cost(gpu, p, running_MHz) {
    int used = 0;
    for (const auto& part : parts) used += part.sms;
    if (used < gpu.sms) parts.push_back({"rest", gpu.sms - used});
    for (int g = 0; g < gpus; ++g) pools.emplace_back(gpu.sms, parts);
  }
  sim::ExecResult run(const sim::OpGraph& graph) {
    sim::Executor exec(engine, net, fabric, cost, pools, graph);
    return exec.run();
  }
  sim::Engine engine;
  sim::FlowNetwork net;
  hw::SwitchFabric fabric;
  hw::CalibratedCost cost;
  std::vector<sim::SmPool> pools;
};

}  // namespace

sim::Time simulate_gemm(const hw::GpuProfile& p, const hw::GpuSpec& gpu, const GemmCase& c) {
  sim::OpGraph g;
  g.add_gemm(g.add_stream(0, 0, "gemm"), c.shape, "gemm");
  return Node(p, gpu, 1, c.sms, c.clock_MHz).run(g).makespan;
}

sim::Time simulate_kernel(const hw::GpuProfile& p, const hw::GpuSpec& gpu, const sim::GenericCompute& k,
                          hw::AttentionKernel attention) {
  Node node(p, gpu, 1, gpu.sms);
  node.cost.set_attention_kernel(attention);
  sim::OpGraph g;
  g.add_compute(g.add_stream(0, 0, "kernel"), k, "kernel");
  return node.run(g).makespan;
}

sim::Time simulate_all_to_all(const hw::GpuProfile& p, const hw::GpuSpec& gpu, const AllToAllCase& c) {
  Node node(p, gpu, c.gpus, c.ctas);
  sim::OpGraph g;
  std::vector<sim::StreamId> streams;
  for (int i = 0; i < c.gpus; ++i) streams.push_back(g.add_stream(i, 0, "comm"));
  g.add_collective(sim::CollectiveKind::kAllToAll, c.size_bytes, streams, "all_to_all");
  return node.run(g).makespan;
}

OverlapRun simulate_overlap(const hw::GpuProfile& p, const hw::GpuSpec& gpu, const OverlapCase& c) {
  // The bench's all-to-all runs `ctas` CTAs, one per SM, on a green context of comm_sms >= ctas
  // SMs (whole granules): the copy has `ctas` SMs, the GEMM its own partition.
  Node node(p, gpu, c.gpus, {{"comm", c.ctas}, {"gemm", c.compute_sms}}, p.clocks.sustained_MHz);
  sim::OpGraph g;
  std::vector<sim::StreamId> comm;
  for (int i = 0; i < c.gpus; ++i) comm.push_back(g.add_stream(i, 0, "all_to_all"));
  std::vector<sim::OpId> gemm_ops, a2a_ops;
  for (int i = 0; i < c.gpus; ++i) {
    const sim::StreamId s = g.add_stream(i, 1, "gemm");
    for (int k = 0; k < c.gemm_count; ++k) gemm_ops.push_back(g.add_gemm(s, c.shape, "gemm"));
  }
  for (int k = 0; k < c.a2a_count; ++k)
    for (sim::OpId op : g.add_collective(sim::CollectiveKind::kAllToAll, c.a2a_bytes, comm, "all_to_all"))
      a2a_ops.push_back(op);
  const sim::ExecResult r = node.run(g);
  OverlapRun out;
  out.makespan = r.makespan;
  for (sim::OpId op : gemm_ops) out.gemm_end = std::max(out.gemm_end, r.ops[op.v].end);
  for (sim::OpId op : a2a_ops) out.a2a_end = std::max(out.a2a_end, r.ops[op.v].end);
  return out;
}

}  // namespace cs::calibrate
