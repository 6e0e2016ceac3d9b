// Routes over a built fabric, in closed form (index arithmetic, no search):
//   same node      GPU -> NVSwitch -> GPU.
//   other node     over InfiniBand on a common plane or rail. Multi-plane trees never meet, so a
//                  GPU reaches another local index by an NVLink forward (PXN): at the destination
//                  node (DeepEP: IB to the GPU with the sender's local index, then NVLink) or at
//                  the source node (NCCL's PXN: NVLink to the GPU on the receiver's plane, then
//                  IB). Multi-rail and three-layer trees join their rails: cross-rail traffic
//                  climbs as far as it must (a spine; in three-layer an agg within a pod, a core
//                  across pods) unless PXN is asked for.
//   three-layer    same leaf: leaf only; same pod: leaf, agg j, leaf; other pod: leaf, agg j of the
//                  source pod, core c of core group j, agg j of the destination pod, leaf.
//   ECMP choice    by destination (D-mod-k, as InfiniBand's fat-tree routing does). D is the
//                  destination NIC's index in its tree in leaf order: leaf x R/2 + the node's slot
//                  on the leaf (node mod R/2); on a multi-plane tree that is the node index. The
//                  spine is D mod spines; in three-layer the agg is j = D mod U and the core within
//                  group j is c = (D / U) mod C. Deterministic; the R/2 NICs of one leaf spread evenly
//                  over the uplinks (when the spine, agg or core count divides R/2, as at the real
//                  sizes), so a permutation between whole leaves (a shift, say) loads them equally.
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
  // HBM; NVLink out and in (GPU to NVSwitch and back); InfiniBand out and in (its NIC's port to
  // the leaf and back), where the GPU has them.
  std::vector<KindedLink> gpu_links(int gpu) const override;
  // gpu_links and the PCIe links between the GPU and its NIC.
  std::vector<KindedLink> own_links(int gpu) const override;
  // The link a graph edge became, by (from, to) vertex.
  sim::LinkId link(FabricVertexId from, FabricVertexId to) const;

 private:
  void ib_route(int src_gpu, int dst_gpu, std::vector<sim::LinkId>& out) const;  // same local index or rail path
  void nvlink(int src_gpu, int dst_gpu, std::vector<sim::LinkId>& out) const;

  const BuiltFabric& f_;
  PxnMode pxn_;
  int G_;
  std::vector<sim::LinkId> hbm_, gpu_up_, gpu_down_, pcie_up_, pcie_down_, nic_up_, nic_down_;
  bool three_;      // three-layer fabric
  int per_leaf_;    // R/2
  int U_, C_;       // three-layer: aggs per pod, cores per core group
  std::vector<int> leaf_of_nic_;  // leaf index within its tree
  // Two-layer: [tree][leaf * spines + spine]
  std::vector<std::vector<sim::LinkId>> leaf_up_, spine_down_;
  // Three-layer: [leaf * U + j] (agg j of the leaf's pod), [agg * C + c] (core c of the agg's group)
  std::vector<sim::LinkId> leaf_agg_up_, agg_leaf_down_, agg_core_up_, core_agg_down_;
  std::vector<std::vector<sim::LinkId>> edge_link_;  // [from vertex] parallel to out_edges order
};

// Shortest path by hop count between two GPUs, searched with Boost.Graph (breadth-first search);
// for generic graphs and to cross-check the closed forms. Returns the vertices from src to dst.
std::vector<FabricVertexId> bfs_path(const FabricGraph& g, FabricVertexId src, FabricVertexId dst);

}  // namespace cs::hw
