#include <catch2/catch.hpp>

#include <boost/graph/push_relabel_max_flow.hpp>
#include <map>
#include <numeric>
#include <random>
#include <string>

#include "hw/fabric/fabric_routing.h"
#include "sim/engine.h"

using namespace cs::hw;
using cs::sim::LinkId;

namespace {

FabricSpec spec(FabricKind kind, int nodes, int radix, int over = 1) {
  FabricSpec s;
  s.kind = kind;
  s.nodes = nodes;
  s.switch_radix = radix;
  s.oversubscription = over;
  s.nvlink_GBps = 160;
  s.pcie_GBps = 64;
  s.nic_GBps = 50;
  s.hbm_GBps = 3350;
  return s;
}

struct Routed {
  explicit Routed(const FabricSpec& s, PxnMode pxn) : fabric(build_fabric(s)), net(engine), routing(net, fabric, pxn) {}
  std::vector<LinkId> route(int a, int b) const {
    std::vector<LinkId> out;
    routing.route(a, b, out);
    return out;
  }
  BuiltFabric fabric;
  cs::sim::Engine engine;
  cs::sim::FlowNetwork net;
  FabricRouting routing;
};

// "a->b" link names: each hop must start where the previous one ended.
bool connected(const cs::sim::FlowNetwork& net, const std::vector<LinkId>& path) {
  for (size_t i = 1; i < path.size(); ++i) {
    const std::string& prev = net.name(path[i - 1]);
    const std::string& next = net.name(path[i]);
    if (prev.substr(prev.find("->") + 2) != next.substr(0, next.find("->"))) return false;
  }
  return true;
}

// Max flow from the GPUs of the first half of the nodes to those of the second half.
double max_flow_bisection(const BuiltFabric& f) {
  using Traits = boost::adjacency_list_traits<boost::vecS, boost::vecS, boost::directedS>;
  using G = boost::adjacency_list<
      boost::vecS, boost::vecS, boost::directedS, boost::no_property,
      boost::property<boost::edge_capacity_t, double,
                      boost::property<boost::edge_residual_capacity_t, double,
                                      boost::property<boost::edge_reverse_t, Traits::edge_descriptor>>>>;
  const auto n = boost::num_vertices(f.graph);
  G g(n + 2);
  auto cap = boost::get(boost::edge_capacity, g);
  auto rev = boost::get(boost::edge_reverse, g);
  auto add = [&](size_t a, size_t b, double c) {
    auto e = boost::add_edge(a, b, g).first;
    auto r = boost::add_edge(b, a, g).first;
    cap[e] = c;
    cap[r] = 0;
    rev[e] = r;
    rev[r] = e;
  };
  for (auto e : boost::make_iterator_range(boost::edges(f.graph)))
    add(boost::source(e, f.graph), boost::target(e, f.graph), f.graph[e].bw_GBps);
  const size_t src = n, sink = n + 1;
  const int G_ = f.spec.gpus_per_node, half = f.spec.nodes / 2;
  for (int gpu = 0; gpu < static_cast<int>(f.gpu.size()); ++gpu) {
    if (gpu / G_ < half) add(src, f.gpu[gpu], 1e12);
    else add(f.gpu[gpu], sink, 1e12);
  }
  return boost::push_relabel_max_flow(g, src, sink);
}

}  // namespace

TEST_CASE("bisection bandwidth in closed form equals the max flow between node halves", "[fabric]") {
  // Multi-plane on radix 8 (4 NICs per leaf): 8 nodes make 2 leaves per plane. Multi-rail on radix
  // 16 (8 per leaf): 16 nodes make 2 leaves per rail. Either way each half of the nodes sits on its
  // own leaves, so crossing traffic must climb to the spines.
  for (auto kind : {FabricKind::kMultiPlane, FabricKind::kMultiRail})
    for (int over : {1, 2, 4}) {
      const bool plane = kind == FabricKind::kMultiPlane;
      const auto f = build_fabric(spec(kind, plane ? 8 : 16, plane ? 8 : 16, over));
      INFO(fabric_kind_name(kind) << " oversubscription " << over);
      CHECK(max_flow_bisection(f) == Approx(f.counts.bisection_GBps));
    }
}

TEST_CASE("every GPU pair has a connected route as short as a breadth-first search finds", "[fabric]") {
  for (auto kind : {FabricKind::kMultiPlane, FabricKind::kMultiRail})
    for (auto pxn : {PxnMode::kAtDestination, PxnMode::kAtSource}) {
      Routed r(spec(kind, 8, kind == FabricKind::kMultiPlane ? 8 : 16), pxn);
      const int n = static_cast<int>(r.fabric.gpu.size());
      for (int a = 0; a < n; ++a)
        for (int b = 0; b < n; ++b) {
          if (a == b) continue;
          const auto path = r.route(a, b);
          REQUIRE(connected(r.net, path));
          const auto bfs = bfs_path(r.fabric.graph, r.fabric.gpu[a], r.fabric.gpu[b]);
          REQUIRE(bfs.size() == path.size() + 1);  // vertices = links + 1
          CHECK(r.net.name(path.front()).rfind("n" + std::to_string(a / 8) + ".gpu" + std::to_string(a % 8) + "->", 0) == 0);
        }
    }
}

TEST_CASE("a cross-plane transfer is forwarded over NVLink at the chosen end", "[fabric]") {
  // n0.gpu0 -> n1.gpu3 on a multi-plane fabric: plane 0 and plane 3 never meet.
  Routed dst(spec(FabricKind::kMultiPlane, 4, 64), PxnMode::kAtDestination);
  const auto p = dst.route(0, 8 + 3);
  CHECK(dst.net.name(p.front()) == "n0.gpu0->n0.nic0");
  CHECK(dst.net.name(p[p.size() - 2]) == "n1.gpu0->n1.nvswitch");
  CHECK(dst.net.name(p.back()) == "n1.nvswitch->n1.gpu3");
  Routed src(spec(FabricKind::kMultiPlane, 4, 64), PxnMode::kAtSource);
  const auto q = src.route(0, 8 + 3);
  CHECK(src.net.name(q[0]) == "n0.gpu0->n0.nvswitch");
  CHECK(src.net.name(q[1]) == "n0.nvswitch->n0.gpu3");
  CHECK(src.net.name(q.back()) == "n1.nic3->n1.gpu3");
  // Multi-rail without PXN climbs to a spine instead.
  Routed rail(spec(FabricKind::kMultiRail, 16, 16), PxnMode::kNone);
  const auto r = rail.route(0, 8 * 15 + 3);  // node 15 is on the other leaf of rail 3
  bool spine = false, nvlink = false;
  for (auto l : r) {
    spine |= rail.net.name(l).find("spine") != std::string::npos;
    nvlink |= rail.net.name(l).find("nvswitch") != std::string::npos;
  }
  CHECK(spine);
  CHECK_FALSE(nvlink);
}

TEST_CASE("ECMP spreads a permutation evenly over the spines", "[fabric]") {
  // 64 nodes on radix 16 (8 NICs per leaf): 8 leaves per plane, 4 spines.
  Routed r(spec(FabricKind::kMultiPlane, 64, 16), PxnMode::kAtDestination);
  const int gpus = static_cast<int>(r.fabric.gpu.size());
  auto spine_loads = [&](const std::vector<int>& perm) {
    std::map<std::string, int> load;  // flows per leaf->spine link
    for (int a = 0; a < gpus; ++a) {
      if (perm[a] == a) continue;
      for (auto l : r.route(a, perm[a]))
        if (r.net.name(l).find("->t") != std::string::npos && r.net.name(l).find("spine") != std::string::npos &&
            r.net.name(l).find(".leaf") < r.net.name(l).find("spine"))
          ++load[r.net.name(l)];
    }
    return load;
  };
  SECTION("a shift by half the nodes crosses every leaf and loads each uplink equally") {
    std::vector<int> perm(gpus);
    for (int a = 0; a < gpus; ++a) perm[a] = (a + gpus / 2) % gpus;
    const auto load = spine_loads(perm);
    REQUIRE(load.size() == 8u * 8 * 4);  // every uplink of every plane carries traffic
    for (const auto& [name, n] : load) CHECK(n == 2);  // 8 NICs per leaf over 4 spines
  }
  SECTION("a random permutation loads the spines of a plane within one flow of each other per leaf") {
    std::vector<int> perm(gpus);
    std::iota(perm.begin(), perm.end(), 0);
    // Keep planes: permute nodes, not local indices, so every flow stays on its plane.
    std::vector<int> nodes(64);
    std::iota(nodes.begin(), nodes.end(), 0);
    std::shuffle(nodes.begin(), nodes.end(), std::mt19937(7));
    for (int a = 0; a < gpus; ++a) perm[a] = nodes[a / 8] * 8 + a % 8;
    std::map<int, int> per_spine;  // all planes: flows into each spine index
    for (const auto& [name, n] : spine_loads(perm)) per_spine[name.back() - '0'] += n;
    int lo = 1 << 30, hi = 0;
    for (auto [s, n] : per_spine) lo = std::min(lo, n), hi = std::max(hi, n);
    CHECK(hi - lo <= 8 * 8);  // D-mod-k: destinations spread by index; imbalance only from leaf-local flows
  }
}
