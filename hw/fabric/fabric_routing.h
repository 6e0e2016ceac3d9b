// Routes over a built fabric, in closed form (index arithmetic, no search):
//   same node      GPU -> NVSwitch -> GPU.
//   other node     over InfiniBand on a common plane or rail. Multi-plane trees never meet, so a
//                  GPU reaches another local index by an NVLink forward (PXN): at the destination
//                  node (DeepEP: IB to the GPU with the sender's local index, then NVLink) or at
//                  the source node (NCCL's PXN: NVLink to the GPU on the receiver's plane, then
//                  IB). Multi-rail trees share their spines: cross-rail traffic goes up to a spine
//                  unless PXN is asked for.
//   spine choice   by destination (D-mod-k, as InfiniBand's fat-tree routing does): the spine is
//                  the destination's index in its tree modulo the spine count. Deterministic, and
//                  any permutation loads every spine equally.
// HBM is a shared link per GPU. Links are sim links created from the graph's directed edges.
#pragma once

#include <string>
#include <vector>

#include "hw/fabric/fabric_graph.h"
#include "sim/flow_network.h"
#include "sim/routing.h"

namespace cs::hw {

enum class PxnMode : uint8_t { kNone, kAtSource, kAtDestination };

class FabricRouting : public sim::Routing {
 public:
  FabricRouting(sim::FlowNetwork& net, const BuiltFabric& fabric, PxnMode pxn);
  int gpu_count() const override { return static_cast<int>(hbm_.size()); }
  sim::LinkId hbm(int gpu) const override { return hbm_[gpu]; }
  void route(int src, int dst, std::vector<sim::LinkId>& out) const override;
  // The link a graph edge became, by (from, to) vertex.
  sim::LinkId link(FabricVertexId from, FabricVertexId to) const;

 private:
  void ib_route(int src_gpu, int dst_gpu, std::vector<sim::LinkId>& out) const;  // same local index or rail path
  void nvlink(int src_gpu, int dst_gpu, std::vector<sim::LinkId>& out) const;

  const BuiltFabric& f_;
  PxnMode pxn_;
  int G_;
  std::vector<sim::LinkId> hbm_, gpu_up_, gpu_down_, pcie_up_, pcie_down_, nic_up_, nic_down_;
  std::vector<int> leaf_of_nic_;  // leaf index within its tree
  // [tree][leaf * spines + spine]
  std::vector<std::vector<sim::LinkId>> leaf_up_, spine_down_;
  std::vector<std::vector<sim::LinkId>> edge_link_;  // [from vertex] parallel to out_edges order
};

// Shortest path by hop count between two GPUs, searched with Boost.Graph (breadth-first search);
// for generic graphs and to cross-check the closed forms. Returns the vertices from src to dst.
std::vector<FabricVertexId> bfs_path(const FabricGraph& g, FabricVertexId src, FabricVertexId dst);

}  // namespace cs::hw
