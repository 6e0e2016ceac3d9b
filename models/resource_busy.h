// How busy each kind of resource was over a run, per GPU that ran ops: the SMs of each partition
// (the union of its streams' op intervals, so overlapping streams count once) and each kind of
// link the fabric gives a GPU (HBM, NVLink out and in, InfiniBand out and in), as shares of the
// makespan, averaged over those GPUs and at the busiest one. A link is busy while it carries any
// flow, however little of its bandwidth; how much it carried is its bytes over capacity x makespan.
#pragma once

#include <string>
#include <vector>

#include "sim/executor.h"
#include "sim/flow_network.h"
#include "sim/op_graph.h"
#include "sim/routing.h"
#include "sim/sm_pool.h"

namespace cs::models {

struct ResourceBusy {
  std::string resource;  // "compute SMs", "comm SMs" (the partition's name), "HBM", "NVLink out", ...
  int gpus = 0;          // GPUs counted: those that ran ops (and have the resource)
  double mean_share = 0, max_share = 0;  // busy time over the makespan
  double mean_used = -1;  // links: bytes over capacity x makespan, averaged; -1 for SMs
};

// Partitions first, in the cluster's order, then link kinds in the order the fabric names them.
std::vector<ResourceBusy> resource_busy(const sim::OpGraph& graph, const std::vector<sim::OpTiming>& ops,
                                        sim::FlowNetwork& net, const sim::Routing& routing,
                                        const std::vector<sim::PartitionSpec>& partitions, sim::Time makespan);

}  // namespace cs::models
