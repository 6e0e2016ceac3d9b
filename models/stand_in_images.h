// The images of a stand-in's transfers (sim::OpGraph::add_images). Where a folded or mirrored run
// lets one GPU stand in for others (stand_in_gpus), each of those makes the same transfer in the
// same role, to its own peer: a pipeline send to the same replica of the next stage, an MoE row to
// the same offset in its EP group, a ring step to its own successor. Those transfers cross switch
// links that the stand-in's own route does not, and the executor loads them with its flow
// (sim::Routing::image_links): an uplink between leaves carries the flows of every GPU it would
// carry when every GPU runs, not only the simulated ones'.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <tuple>
#include <vector>

#include "models/model_workload.h"
#include "sim/op_graph.h"

namespace cs::models {

class StandInImages {
 public:
  // Roles whose peer the coordinates give, as `dst` is to `src`: the same replica of dst's stage
  // (a pipeline send, DualPipe's copies' sum), the same offset in the EP group or the CP group.
  enum class Role : uint8_t { kSameReplica, kEpOffset, kCpOffset };

  StandInImages(const ModelWorkload& mw, const ClusterConfig& c);
  // Some GPU stands in for others (not at full fidelity).
  bool active() const { return simulated_ < mw_.layout.replicas(); }
  // The GPUs `gpu` (simulated) stands in for, itself first.
  std::vector<int> stood_for(int gpu) const;
  // The image set of src's transfer to dst in `role`: for each GPU src stands in for, its transfer
  // to its own peer in that role. sim::OpGraph::kNoImages when none is needed (full fidelity).
  // Remembered per (role, src, dst): an MoE row's sets recur at every micro-batch.
  uint32_t of(sim::OpGraph& g, Role role, int src, int dst);
  // For a role the coordinates do not give: `peer` maps each GPU src stands in for to its destination.
  uint32_t of(sim::OpGraph& g, int src, const std::function<int(int)>& peer) const;
  // Marks a collective among simulated GPUs as standing for the same collective among the GPUs
  // they stand in for (sim::OpGraph::set_image_relabelings): the k-th relabeling lists the k-th GPU
  // each member stands in for. It is one of its collectives where the replicas a member stands in
  // for are its own moved by whole groups (folded: the next EP or CP group; mirrored: the other
  // data-parallel ranks of a tensor-parallel group). Nothing at full fidelity.
  void relabel(sim::OpGraph& g, sim::OpId op, const std::vector<int>& gpus);

 private:
  const ModelWorkload& mw_;
  int gpn_;
  int simulated_;
  // In a group of `group` ranks: the peer of `rank` that is to it as `dst_rank` is to `src_rank`.
  int peer_rank(int rank, int src_rank, int dst_rank, int group) const;
  std::map<std::tuple<Role, int, int>, uint32_t> known_;
  std::map<std::vector<int>, std::vector<std::vector<int>>> relabelings_;  // by the collective's GPUs
};

}  // namespace cs::models
