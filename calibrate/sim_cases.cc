#include "calibrate/sim_cases.h"

#include <string>
#include <vector>

#include "hw/calibrated_cost.h"
#include "hw/switch_fabric.h"
#include "sim/engine.h"
#include "sim/executor.h"
#include "sim/flow_network.h"

namespace cs::calibrate {

namespace {

// `gpus` GPUs of one node (NVLink at the profile's rate, the datasheet latency), the SMs split
// into the partition the case used and the rest; runs `graph` and returns its makespan.
struct Node {
  Node(const hw::GpuProfile& p, const hw::GpuSpec& gpu, int gpus, int partition_sms)
      : net(engine),
        fabric(net, hw::SwitchFabricSpec{gpus, sim::Bandwidth::gbytes_per_s(p.comm.nvlink_GBps),
                                         sim::Time::from_seconds_ceil(gpu.nvlink_lat_ns * 1e-9),
                                         sim::Bandwidth::gbytes_per_s(gpu.hbm_bw_GBps)}),
        cost(gpu, p) {
    std::vector<sim::PartitionSpec> parts{{"used", partition_sms}};
    if (partition_sms < gpu.sms) parts.push_back({"rest", gpu.sms - partition_sms});
    for (int g = 0; g < gpus; ++g) pools.emplace_back(gpu.sms, parts);
  }
  sim::Time run(const sim::OpGraph& graph) {
    sim::Executor exec(engine, net, fabric, cost, pools, graph);
    return exec.run().makespan;
  }
  sim::Engine engine;
  sim::FlowNetwork net;
  hw::SwitchFabric fabric;
  hw::CalibratedCost cost;
  std::vector<sim::SmPool> pools;
};

}  // namespace

sim::Time simulate_gemm(const hw::GpuProfile& p, const hw::GpuSpec& gpu, const GemmCase& c) {
  Node node(p, gpu, 1, c.sms);
  sim::OpGraph g;
  g.add_gemm(g.add_stream(0, 0, "gemm"), c.shape, "gemm");
  return node.run(g);
}

sim::Time simulate_all_to_all(const hw::GpuProfile& p, const hw::GpuSpec& gpu, const AllToAllCase& c) {
  Node node(p, gpu, c.gpus, c.ctas);
  sim::OpGraph g;
  std::vector<sim::StreamId> streams;
  for (int i = 0; i < c.gpus; ++i) streams.push_back(g.add_stream(i, 0, "comm"));
  g.add_collective(sim::CollectiveKind::kAllToAll, c.size_bytes, streams, "all_to_all");
  return node.run(g);
}

}  // namespace cs::calibrate
