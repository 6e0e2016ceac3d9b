#include "hw/fabric/fabric_routing.h"

#include <boost/graph/breadth_first_search.hpp>
#include <cassert>
#include <string>

namespace cs::hw {

namespace {

// Built by appending: GCC 12 warns falsely (-Wrestrict) on "literal" + std::string at -O2.
// Three-layer aggs are spine vertices named "agg".
std::string vertex_name(const FabricVertex& v, bool three_layer) {
  std::string out;
  const bool in_node = v.kind == VertexKind::kGpu || v.kind == VertexKind::kNvSwitch || v.kind == VertexKind::kNic;
  out += in_node ? 'n' : 't';
  out += std::to_string(in_node ? v.node : v.plane);
  switch (v.kind) {
    case VertexKind::kGpu: out += ".gpu"; break;
    case VertexKind::kNvSwitch: return out += ".nvswitch";
    case VertexKind::kNic: out += ".nic"; break;
    case VertexKind::kLeaf: out += ".leaf"; break;
    case VertexKind::kSpine: out += three_layer ? ".agg" : ".spine"; break;
    case VertexKind::kCore: out += ".core"; break;
  }
  out += std::to_string(v.index);
  return out;
}

}  // namespace

FabricRouting::FabricRouting(sim::FlowNetwork& net, const BuiltFabric& f, PxnMode pxn)
    : f_(f),
      pxn_(pxn),
      G_(f.spec.gpus_per_node),
      three_(f.spec.kind == FabricKind::kThreeLayer),
      per_leaf_(f.spec.switch_radix / 2),
      U_(f.counts.aggs_per_pod),
      C_(f.counts.cores_per_group) {
  const FabricGraph& g = f.graph;
  const size_t gpus = f.gpu.size();
  for (size_t i = 0; i < gpus; ++i)
    hbm_.push_back(net.add_link(vertex_name(g[f.gpu[i]], three_).append(".hbm"),
                                sim::Bandwidth::gbytes_per_s(f.spec.hbm_GBps), sim::Time()));
  for (auto* v : {&gpu_up_, &gpu_down_, &pcie_up_, &pcie_down_, &nic_up_, &nic_down_}) v->resize(gpus);
  leaf_of_nic_.resize(gpus);
  const int trees = f.counts.trees, spines = f.counts.spines_per_tree;
  if (three_) {
    leaf_agg_up_.resize(static_cast<size_t>(f.counts.leaves_per_tree) * U_);
    agg_leaf_down_ = leaf_agg_up_;
    agg_core_up_.resize(static_cast<size_t>(f.counts.spines_per_tree) * C_);
    core_agg_down_ = agg_core_up_;
  } else {
    leaf_up_.assign(trees, std::vector<sim::LinkId>(static_cast<size_t>(f.counts.leaves_per_tree) * spines));
    spine_down_ = leaf_up_;
  }
  edge_link_.resize(boost::num_vertices(g));

  for (auto v : boost::make_iterator_range(boost::vertices(g))) {
    for (auto e : boost::make_iterator_range(boost::out_edges(v, g))) {
      const auto w = boost::target(e, g);
      const FabricVertex& a = g[v];
      const FabricVertex& b = g[w];
      const sim::LinkId id = net.add_link(vertex_name(a, three_).append("->").append(vertex_name(b, three_)),
                                          sim::Bandwidth::gbytes_per_s(g[e].bw_GBps),
                                          sim::Time::from_seconds_ceil(g[e].lat_ns * 1e-9));
      edge_link_[v].push_back(id);
      const int ga = a.node * G_ + a.index, gb = b.node * G_ + b.index;
      if (a.kind == VertexKind::kGpu && b.kind == VertexKind::kNvSwitch) gpu_up_[ga] = id;
      else if (a.kind == VertexKind::kNvSwitch && b.kind == VertexKind::kGpu) gpu_down_[gb] = id;
      else if (a.kind == VertexKind::kGpu && b.kind == VertexKind::kNic) pcie_up_[ga] = id;
      else if (a.kind == VertexKind::kNic && b.kind == VertexKind::kGpu) pcie_down_[gb] = id;
      else if (a.kind == VertexKind::kNic && b.kind == VertexKind::kLeaf) {
        nic_up_[ga] = id;
        leaf_of_nic_[ga] = b.index;
      } else if (a.kind == VertexKind::kLeaf && b.kind == VertexKind::kNic) nic_down_[gb] = id;
      else if (three_) {
        // Agg p x U + j; core j x C + c (see fabric_graph.h).
        auto at = [](int lower, int width, int upper) { return static_cast<size_t>(lower) * width + upper % width; };
        const bool leaf_a = a.kind == VertexKind::kLeaf, leaf_b = b.kind == VertexKind::kLeaf;
        const bool agg_a = a.kind == VertexKind::kSpine, agg_b = b.kind == VertexKind::kSpine;
        const bool core_a = a.kind == VertexKind::kCore, core_b = b.kind == VertexKind::kCore;
        if (leaf_a && agg_b) leaf_agg_up_[at(a.index, U_, b.index)] = id;
        else if (agg_a && leaf_b) agg_leaf_down_[at(b.index, U_, a.index)] = id;
        else if (agg_a && core_b) agg_core_up_[at(a.index, C_, b.index)] = id;
        else if (core_a && agg_b) core_agg_down_[at(b.index, C_, a.index)] = id;
      } else if (a.kind == VertexKind::kLeaf && b.kind == VertexKind::kSpine) leaf_up_[a.plane][a.index * spines + b.index] = id;
      else if (a.kind == VertexKind::kSpine && b.kind == VertexKind::kLeaf) spine_down_[a.plane][b.index * spines + a.index] = id;
    }
  }
}

sim::LinkId FabricRouting::link(FabricVertexId from, FabricVertexId to) const {
  size_t i = 0;
  for (auto e : boost::make_iterator_range(boost::out_edges(from, f_.graph))) {
    if (boost::target(e, f_.graph) == to) return edge_link_[from][i];
    ++i;
  }
  return sim::LinkId{};
}

void FabricRouting::nvlink(int s, int d, std::vector<sim::LinkId>& out) const {
  out.push_back(gpu_up_[s]);
  out.push_back(gpu_down_[d]);
}

void FabricRouting::ib_route(int s, int d, std::vector<sim::LinkId>& out) const {
  const int tree = f_.spec.kind == FabricKind::kMultiPlane ? s % G_ : 0;
  out.push_back(pcie_up_[s]);
  out.push_back(nic_up_[s]);
  const int ls = leaf_of_nic_[s], ld = leaf_of_nic_[d];
  // The destination's index within its tree in leaf order (leaf x R/2 + port on the leaf): the
  // NICs of one leaf are consecutive, so D-mod-k spreads them over all uplinks.
  const int64_t dst_index = static_cast<int64_t>(ld) * per_leaf_ + (d / G_) % per_leaf_;
  if (three_) {
    if (ls != ld) {
      const int j = static_cast<int>(dst_index % U_);  // the agg, in the source's pod and the destination's
      const int ps = ls / per_leaf_, pd = ld / per_leaf_;
      out.push_back(leaf_agg_up_[static_cast<size_t>(ls) * U_ + j]);
      if (ps != pd) {
        const int c = static_cast<int>(dst_index / U_ % C_);  // the core within core group j
        out.push_back(agg_core_up_[(static_cast<size_t>(ps) * U_ + j) * C_ + c]);
        out.push_back(core_agg_down_[(static_cast<size_t>(pd) * U_ + j) * C_ + c]);
      }
      out.push_back(agg_leaf_down_[static_cast<size_t>(ld) * U_ + j]);
    }
  } else if (ls != ld) {
    const int spines = f_.counts.spines_per_tree;
    const int sp = static_cast<int>(dst_index % spines);
    out.push_back(leaf_up_[tree][ls * spines + sp]);
    out.push_back(spine_down_[tree][ld * spines + sp]);
  }
  out.push_back(nic_down_[d]);
  out.push_back(pcie_down_[d]);
}

void FabricRouting::route(int s, int d, std::vector<sim::LinkId>& out) const {
  assert(s != d);
  const int ns = s / G_, nd = d / G_, is = s % G_, id = d % G_;
  if (ns == nd) {
    nvlink(s, d, out);
    return;
  }
  const bool cross = is != id;
  const bool rails_meet = f_.spec.kind != FabricKind::kMultiPlane;  // multi-rail and three-layer
  if (!cross || (rails_meet && pxn_ == PxnMode::kNone)) {
    ib_route(s, d, out);
    return;
  }
  if (pxn_ == PxnMode::kAtSource) {
    const int relay = ns * G_ + id;  // the sender's node-mate on the receiver's plane
    nvlink(s, relay, out);
    ib_route(relay, d, out);
  } else {
    // At the destination (also the default when planes never meet and no mode was asked for).
    const int relay = nd * G_ + is;  // the receiver's node-mate on the sender's plane
    ib_route(s, relay, out);
    nvlink(relay, d, out);
  }
}

std::vector<FabricVertexId> bfs_path(const FabricGraph& g, FabricVertexId src, FabricVertexId dst) {
  std::vector<FabricVertexId> pred(boost::num_vertices(g), boost::graph_traits<FabricGraph>::null_vertex());
  pred[src] = src;
  boost::breadth_first_search(
      g, src, boost::visitor(boost::make_bfs_visitor(boost::record_predecessors(pred.data(), boost::on_tree_edge()))));
  std::vector<FabricVertexId> path;
  if (pred[dst] == boost::graph_traits<FabricGraph>::null_vertex()) return path;
  for (FabricVertexId v = dst; v != src; v = pred[v]) path.push_back(v);
  path.push_back(src);
  return {path.rbegin(), path.rend()};
}

std::vector<sim::Routing::KindedLink> FabricRouting::gpu_links(int gpu) const {
  std::vector<KindedLink> out = {{"HBM", hbm_[gpu]}};
  const sim::LinkId none;
  for (const auto& [kind, link] : {std::pair{"NVLink out", gpu_up_[gpu]}, std::pair{"NVLink in", gpu_down_[gpu]},
                                   std::pair{"InfiniBand out", nic_up_[gpu]}, std::pair{"InfiniBand in", nic_down_[gpu]}})
    if (link != none) out.push_back({kind, link});
  return out;
}

std::vector<sim::Routing::KindedLink> FabricRouting::own_links(int gpu) const {
  std::vector<KindedLink> out = gpu_links(gpu);
  const sim::LinkId none;
  for (const auto& [kind, link] : {std::pair{"PCIe out", pcie_up_[gpu]}, std::pair{"PCIe in", pcie_down_[gpu]}})
    if (link != none) out.push_back({kind, link});
  return out;
}

}  // namespace cs::hw
