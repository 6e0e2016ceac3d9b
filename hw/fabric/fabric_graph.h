// A cluster fabric as a Boost.Graph: HGX nodes (GPUs on an NVSwitch, one NIC per GPU over PCIe)
// joined by two-layer fat-trees of InfiniBand switches, either one tree per plane (DeepSeek's
// multi-plane fabric: NIC i of every node on plane i, planes never meet) or one tree whose leaves
// are rail-aligned (multi-rail: NIC i of consecutive nodes on a leaf of rail i, spines shared).
//
// Sizes (radix R, oversubscription o at the leaves): a leaf serves R/2 NICs and has R/(2o) uplinks;
// a tree of E endpoints has ceil(E / (R/2)) leaves and leaves x R/(2o) / R spines (rounded up), and
// holds at most R x R/2 endpoints. Parallel links between one leaf and one spine are one edge of
// their summed bandwidth (ECMP over them is fluid in the flow model).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <boost/graph/adjacency_list.hpp>

namespace cs::hw {

enum class FabricKind : uint8_t { kMultiPlane, kMultiRail };
const char* fabric_kind_name(FabricKind k);

struct FabricSpec {
  FabricKind kind = FabricKind::kMultiPlane;
  int nodes = 1;
  int gpus_per_node = 8;
  int switch_radix = 64;
  int oversubscription = 1;      // leaf downlinks : uplinks, 1 (none), 2 or 4
  double nvlink_GBps = 0;        // per GPU and direction, to the node's NVSwitch
  double pcie_GBps = 0;          // GPU <-> NIC, per direction
  double nic_GBps = 0;           // NIC <-> leaf and every switch-to-switch port, per direction
  double hbm_GBps = 0;
  double nvlink_lat_ns = 0;      // GPU to GPU through the NVSwitch
  // InfiniBand latency as base + hops x hop: NIC to NIC through one leaf is base + hop, through a
  // spine base + 3 hops. ISCA'25 Table 5 gives 2.8 us (same leaf) and 3.7 us (cross leaf) for
  // 64 B, hence hop = 0.45 us and base = 2.35 us (derived).
  double ib_base_lat_ns = 0;
  double ib_hop_lat_ns = 0;
};

enum class VertexKind : uint8_t { kGpu, kNvSwitch, kNic, kLeaf, kSpine };

struct FabricVertex {
  VertexKind kind = VertexKind::kGpu;
  int node = -1;   // GPUs, NVSwitches, NICs
  int index = 0;   // GPU/NIC: local index in the node; switches: index within their plane/rail set
  int plane = 0;   // leaves and spines: their plane (multi-plane) or rail (leaves of multi-rail)
};

struct FabricEdge {
  double bw_GBps = 0;
  double lat_ns = 0;
};

using FabricGraph = boost::adjacency_list<boost::vecS, boost::vecS, boost::bidirectionalS, FabricVertex, FabricEdge>;
using FabricVertexId = FabricGraph::vertex_descriptor;

// Counts that follow from the spec in closed form (tests compare them with the built graph).
struct FabricCounts {
  int gpus = 0, nics = 0, nvswitches = 0;
  int trees = 0;             // separate switch networks: planes (multi-plane) or 1 (multi-rail)
  int leaves_per_tree = 0;
  int spines_per_tree = 0;
  int64_t switch_links = 0;  // physical leaf-spine cables (both directions count once)
  // One direction, between the first and the second half of the nodes (all of one NVSwitch node
  // when there is one). Exact when each half sits on its own leaves (node counts a multiple of two
  // leaves' worth, as real sizes are); otherwise leaf-local traffic makes the true cut larger.
  double bisection_GBps = 0;
};

// Validates the spec (sizes that fit the radix) and returns its counts; throws std::invalid_argument.
FabricCounts fabric_counts(const FabricSpec& spec);

// The built graph with the vertex ids the routers need.
struct BuiltFabric {
  FabricSpec spec;
  FabricCounts counts;
  FabricGraph graph;
  std::vector<FabricVertexId> gpu, nic;               // by global GPU index (node * G + local)
  std::vector<FabricVertexId> nvswitch;               // by node
  std::vector<std::vector<FabricVertexId>> leaf, spine;  // [tree][i]
};

BuiltFabric build_fabric(const FabricSpec& spec);

}  // namespace cs::hw
