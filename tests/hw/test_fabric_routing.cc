#include <catch2/catch.hpp>

#include <boost/graph/push_relabel_max_flow.hpp>
#include <map>
#include <numeric>
#include <random>
#include <string>

#include "fabric_fixture.h"
#include "hw/fabric/fabric_routing.h"
#include "sim/engine.h"

namespace CS_TEST_FILE {  // unique per file: the tests build in unity batches

using namespace cs::hw;
using cs::sim::LinkId;

namespace {

using cs::test::fabric_spec;

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

// "n<node>.gpu<i>", built by appending (GCC 12 warns falsely on "literal" + std::string at -O2).
std::string gpu_name(int gpu, int G) {
  std::string s = "n";
  s += std::to_string(gpu / G);
  s += ".gpu";
  s += std::to_string(gpu % G);
  return s;
}

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
      const auto f = build_fabric(fabric_spec(kind, plane ? 8 : 16, plane ? 8 : 16, over));
      INFO(fabric_kind_name(kind) << " oversubscription " << over);
      CHECK(max_flow_bisection(f) == Approx(f.counts.bisection_GBps));
    }
}

TEST_CASE("every GPU pair has a connected route as short as a breadth-first search finds", "[fabric]") {
  for (auto kind : {FabricKind::kMultiPlane, FabricKind::kMultiRail})
    for (auto pxn : {PxnMode::kAtDestination, PxnMode::kAtSource}) {
      Routed r(fabric_spec(kind, 8, kind == FabricKind::kMultiPlane ? 8 : 16), pxn);
      const int n = static_cast<int>(r.fabric.gpu.size());
      for (int a = 0; a < n; ++a)
        for (int b = 0; b < n; ++b) {
          if (a == b) continue;
          const auto path = r.route(a, b);
          REQUIRE(connected(r.net, path));
          const auto bfs = bfs_path(r.fabric.graph, r.fabric.gpu[a], r.fabric.gpu[b]);
          REQUIRE(bfs.size() == path.size() + 1);  // vertices = links + 1
          CHECK(r.net.name(path.front()).rfind(gpu_name(a, 8) + "->", 0) == 0);
        }
    }
}

TEST_CASE("a cross-plane transfer is forwarded over NVLink at the chosen end", "[fabric]") {
  // n0.gpu0 -> n1.gpu3 on a multi-plane fabric: plane 0 and plane 3 never meet.
  Routed dst(fabric_spec(FabricKind::kMultiPlane, 4, 64), PxnMode::kAtDestination);
  const auto p = dst.route(0, 8 + 3);
  CHECK(dst.net.name(p.front()) == "n0.gpu0->n0.nic0");
  CHECK(dst.net.name(p[p.size() - 2]) == "n1.gpu0->n1.nvswitch");
  CHECK(dst.net.name(p.back()) == "n1.nvswitch->n1.gpu3");
  Routed src(fabric_spec(FabricKind::kMultiPlane, 4, 64), PxnMode::kAtSource);
  const auto q = src.route(0, 8 + 3);
  CHECK(src.net.name(q[0]) == "n0.gpu0->n0.nvswitch");
  CHECK(src.net.name(q[1]) == "n0.nvswitch->n0.gpu3");
  CHECK(src.net.name(q.back()) == "n1.nic3->n1.gpu3");
  // Multi-rail without PXN climbs to a spine instead.
  Routed rail(fabric_spec(FabricKind::kMultiRail, 16, 16), PxnMode::kNone);
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
  Routed r(fabric_spec(FabricKind::kMultiPlane, 64, 16), PxnMode::kAtDestination);
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

namespace {

FabricSpec three(int nodes, int radix, int over = 1, int gpus_per_node = 8) {
  FabricSpec s = fabric_spec(FabricKind::kThreeLayer, nodes, radix, over);
  s.gpus_per_node = gpus_per_node;
  return s;
}

bool has(const cs::sim::FlowNetwork& net, const std::vector<LinkId>& path, const std::string& what) {
  for (auto l : path)
    if (net.name(l).find(what) != std::string::npos) return true;
  return false;
}

}  // namespace

TEST_CASE("three-layer bisection in closed form equals the max flow between pod-aligned node halves", "[fabric]") {
  struct Case {
    int nodes, radix, gpus_per_node;
    const char* what;
  };
  // Radix 8, 8 GPUs: 4 nodes per leaf, pods of 4 leaves (half the rails of a node group), 8 pods,
  // so each half of the nodes holds 4 whole pods and crossing traffic must climb to the cores.
  // Radix 16, 4 GPUs: a pod is two node groups (8 leaves), two pods. Radix 16, 4 GPUs, 16 nodes:
  // one pod, leaf-aligned halves.
  for (const Case& k : {Case{16, 8, 8, "8 pods"}, Case{32, 16, 4, "2 pods"}, Case{16, 16, 4, "1 pod"}})
    for (int over : {1, 2, 4}) {
      const auto f = build_fabric(three(k.nodes, k.radix, over, k.gpus_per_node));
      INFO(k.what << ", oversubscription " << over);
      CHECK(max_flow_bisection(f) == Approx(f.counts.bisection_GBps));
    }
}

TEST_CASE("three-layer: every GPU pair has a connected route as short as a breadth-first search finds", "[fabric]") {
  // Radix 16: 8 NICs per leaf, pods of 8 leaves. With 8 GPUs a pod is one node group (all 8 rails
  // of 8 nodes), 24 nodes make 3 pods; with 4 GPUs a pod is two node groups, 20 nodes make 12
  // leaves in a full and a half pod, the last leaves half filled.
  struct Case {
    int nodes, gpus_per_node;
  };
  for (const Case& k : {Case{24, 8}, Case{20, 4}})
    for (auto pxn : {PxnMode::kNone, PxnMode::kAtDestination, PxnMode::kAtSource}) {
      Routed r(three(k.nodes, 16, 1, k.gpus_per_node), pxn);
      const int G = k.gpus_per_node, n = static_cast<int>(r.fabric.gpu.size());
      INFO(k.nodes << " nodes of " << G << " GPUs, PXN mode " << static_cast<int>(pxn));
      int via_core = 0, via_agg_only = 0;
      for (int a = 0; a < n; ++a)
        for (int b = 0; b < n; ++b) {
          if (a == b) continue;
          const auto path = r.route(a, b);
          REQUIRE(connected(r.net, path));
          const std::string& first = r.net.name(path.front());
          const std::string& last = r.net.name(path.back());
          REQUIRE(first.substr(0, first.find("->")) == gpu_name(a, G));
          REQUIRE(last.substr(last.find("->") + 2) == gpu_name(b, G));
          // Without PXN the route is a shortest one. With PXN a cross-rail pair takes the shortest
          // route to the relay on its rail, plus the NVLink hop in and out of the NVSwitch.
          const bool forwarded = pxn != PxnMode::kNone && a / G != b / G && a % G != b % G;
          const int relay = pxn == PxnMode::kAtSource ? (a / G) * G + b % G : (b / G) * G + a % G;
          const auto bfs = forwarded ? bfs_path(r.fabric.graph, r.fabric.gpu[pxn == PxnMode::kAtSource ? relay : a],
                                                r.fabric.gpu[pxn == PxnMode::kAtSource ? b : relay])
                                     : bfs_path(r.fabric.graph, r.fabric.gpu[a], r.fabric.gpu[b]);
          REQUIRE(bfs.size() + (forwarded ? 2 : 0) == path.size() + 1);  // vertices = links + 1
          via_core += has(r.net, path, "core");
          via_agg_only += has(r.net, path, "agg") && !has(r.net, path, "core");
        }
      CHECK(via_core > 0);
      // With 8 GPUs a pod has one leaf per rail, so a same-rail route never stops at an agg.
      if (pxn == PxnMode::kNone || G == 4) CHECK(via_agg_only > 0);
    }
}

TEST_CASE("three-layer routes climb only as far as they must", "[fabric]") {
  // Radix 16, 8 GPUs: pod 0 is nodes 0-7, pod 1 nodes 8-15.
  Routed r(three(24, 16), PxnMode::kNone);
  auto names = [&](int a, int b) {
    std::vector<std::string> out;
    for (auto l : r.route(a, b)) out.push_back(r.net.name(l));
    return out;
  };
  const auto leaf = names(0 * 8 + 2, 5 * 8 + 2);  // same rail, same node group: one leaf
  REQUIRE(leaf.size() == 4u);                     // PCIe, NIC up, leaf down, PCIe
  CHECK(leaf[1] == "n0.nic2->t2.leaf2");
  CHECK(leaf[2] == "t2.leaf2->n5.nic2");
  const auto agg = names(0 * 8 + 2, 5 * 8 + 6);  // cross-rail in one pod: leaf, agg, leaf
  REQUIRE(agg.size() == 6u);
  CHECK(agg[2] == "t2.leaf2->t0.agg5");           // D = leaf 6 x 8 + slot 5 = 53, 53 mod 8 = 5
  CHECK(agg[3] == "t0.agg5->t6.leaf6");
  const auto core = names(0 * 8 + 2, 9 * 8 + 2);  // same rail, other pod: through a core
  REQUIRE(core.size() == 8u);
  // D-mod-k: node 9 sits on slot 1 of leaf 10 (D = 10 x 8 + 1 = 81): agg j = 81 mod 8 = 1 in both
  // pods, core c = (81 / 8) mod 2 = 0 of group 1 (core 1 x 2 + 0).
  CHECK(core[2] == "t2.leaf2->t0.agg1");
  CHECK(core[3] == "t0.agg1->t0.core2");
  CHECK(core[4] == "t0.core2->t0.agg9");
  CHECK(core[5] == "t0.agg9->t2.leaf10");
  // PXN at the destination keeps rail 2 to node 9, then forwards over NVLink.
  Routed p(three(24, 16), PxnMode::kAtDestination);
  const auto q = p.route(0 * 8 + 2, 9 * 8 + 5);
  CHECK(p.net.name(q[q.size() - 2]) == "n9.gpu2->n9.nvswitch");
  CHECK(p.net.name(q.back()) == "n9.nvswitch->n9.gpu5");
}

TEST_CASE("three-layer ECMP spreads a shift permutation evenly over aggs and cores", "[fabric]") {
  // Radix 16, 8 GPUs, 64 nodes: 64 leaves in 8 pods (one node group each), 8 aggs per pod, core
  // groups of 4 cores with 2 cables to each agg. A shift by half the GPUs sends every NIC to the
  // same rail 4 pods away, so every flow crosses the cores.
  for (int over : {1, 2}) {
    Routed r(three(64, 16, over), PxnMode::kAtDestination);
    const auto& c = r.fabric.counts;
    const int gpus = static_cast<int>(r.fabric.gpu.size());
    std::map<std::string, int> leaf_up, agg_up, core_down, agg_down;
    for (int a = 0; a < gpus; ++a)
      for (auto l : r.route(a, (a + gpus / 2) % gpus)) {
        const std::string& name = r.net.name(l);
        const auto arrow = name.find("->");
        const std::string from = name.substr(0, arrow), to = name.substr(arrow + 2);
        auto is = [](const std::string& v, const char* kind) { return v.find(kind) != std::string::npos; };
        if (is(from, ".leaf") && is(to, ".agg")) ++leaf_up[name];
        else if (is(from, ".agg") && is(to, ".core")) ++agg_up[name];
        else if (is(from, ".core") && is(to, ".agg")) ++core_down[name];
        else if (is(from, ".agg") && is(to, ".leaf")) ++agg_down[name];
      }
    INFO("oversubscription " << over);
    // Each leaf's 8 NICs over its U uplinks: `over` flows each.
    REQUIRE(leaf_up.size() == static_cast<size_t>(c.leaves_per_tree) * c.aggs_per_pod);
    for (const auto& [name, n] : leaf_up) CHECK(n == over);
    REQUIRE(agg_down.size() == leaf_up.size());
    for (const auto& [name, n] : agg_down) CHECK(n == over);
    // Each agg takes 8 leaves x `over` flows and spreads them over its core group's 4 cores.
    REQUIRE(agg_up.size() == static_cast<size_t>(c.spines_per_tree) * c.cores_per_group);
    for (const auto& [name, n] : agg_up) CHECK(n == 8 * over / c.cores_per_group);
    REQUIRE(core_down.size() == agg_up.size());
    for (const auto& [name, n] : core_down) CHECK(n == 8 * over / c.cores_per_group);
  }
}

TEST_CASE("multi-rail ECMP spreads a rail's leaf over all its spines", "[fabric]") {
  // Radix 16, 16 nodes: 2 leaves per rail, 16 leaves, 8 spines with one cable to each leaf. A shift
  // by half the nodes sends each leaf's 8 NICs to the other leaf of their rail: one flow per uplink.
  Routed r(fabric_spec(FabricKind::kMultiRail, 16, 16), PxnMode::kNone);
  const int gpus = static_cast<int>(r.fabric.gpu.size());
  std::map<std::string, int> load;
  for (int a = 0; a < gpus; ++a)
    for (auto l : r.route(a, (a + gpus / 2) % gpus)) {
      const std::string& name = r.net.name(l);
      if (name.find(".leaf") < name.find("->") && name.find(".spine") != std::string::npos) ++load[name];
    }
  REQUIRE(load.size() == 16u * 8);
  for (const auto& [name, n] : load) CHECK(n == 1);
}

}  // namespace CS_TEST_FILE
