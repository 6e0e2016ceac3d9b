#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <vector>

#include <catch2/catch.hpp>

#include "sim/engine.h"
#include "sim/flow_network.h"
#include "sim/max_min_fair.h"

namespace CS_TEST_FILE {  // unique per file: the tests build in unity batches

using cs::sim::Bandwidth;
using cs::sim::Engine;
using cs::sim::FlowId;
using cs::sim::FlowNetwork;
using cs::sim::LinkId;
using cs::sim::MaxMinProblem;
using cs::sim::MaxMinSolver;
using cs::sim::Time;

// A random problem of `parts` groups of links, each flow's path within one group; capacities and
// caps are small integers, so that shares tie often.
MaxMinProblem random_parts(std::mt19937& rng, int parts, std::vector<int>& part_of_flow,
                           std::vector<int>& part_of_link) {
  MaxMinProblem p;
  part_of_flow.clear();
  part_of_link.clear();
  std::uniform_int_distribution<int> links_per(1, 4), flows_per(1, 6), cap(1, 8), small(0, 3);
  // Links and flows of the parts interleaved in index order, as a breadth-first search from several
  // seeds discovers them.
  std::vector<std::vector<uint32_t>> links(parts);
  std::vector<int> link_count(parts), flow_count(parts);
  for (int c = 0; c < parts; ++c) link_count[c] = links_per(rng), flow_count[c] = flows_per(rng);
  for (int round = 0; round < 4; ++round)
    for (int c = 0; c < parts; ++c) {
      if (round >= link_count[c]) continue;
      links[c].push_back(static_cast<uint32_t>(p.link_capacity.size()));
      p.link_capacity.push_back(cap(rng) * 10.0);
      part_of_link.push_back(c);
    }
  for (int round = 0; round < 6; ++round)
    for (int c = 0; c < parts; ++c) {
      if (round >= flow_count[c]) continue;
      std::vector<uint32_t> path;
      for (uint32_t l : links[c])
        if (path.empty() || small(rng) == 0) path.push_back(l);
      p.add_flow(path, small(rng) == 0 ? cap(rng) * 3.0 : std::numeric_limits<double>::infinity());
      part_of_flow.push_back(c);
    }
  return p;
}

TEST_CASE("max-min rates of parts that share no link are the rates of their union to the bit", "[sim][flow][parts]") {
  // The flow network solves each part of a reallocation alone, keeping the union's order of
  // links and flows within it; that is only sound if the union's solve gives the same bits.
  std::mt19937 rng(7);
  MaxMinSolver solver;
  int compared = 0;
  for (int trial = 0; trial < 300; ++trial) {
    std::vector<int> part_of_flow, part_of_link;
    const int parts = 1 + trial % 5;
    const MaxMinProblem whole = random_parts(rng, parts, part_of_flow, part_of_link);
    const std::vector<double> union_rates = solver.solve(whole);
    for (int c = 0; c < parts; ++c) {
      MaxMinProblem part;
      std::vector<uint32_t> local(whole.link_capacity.size(), UINT32_MAX);
      for (size_t l = 0; l < whole.link_capacity.size(); ++l)
        if (part_of_link[l] == c) {
          local[l] = static_cast<uint32_t>(part.link_capacity.size());
          part.link_capacity.push_back(whole.link_capacity[l]);
        }
      std::vector<size_t> flows;
      for (size_t f = 0; f < whole.flows(); ++f)
        if (part_of_flow[f] == c) {
          std::vector<uint32_t> path;
          for (uint32_t l : whole.path(f)) path.push_back(local[l]);
          part.add_flow(path, whole.flow_cap[f]);
          flows.push_back(f);
        }
      const std::vector<double>& rates = solver.solve(part);
      for (size_t i = 0; i < flows.size(); ++i) {
        CHECK(rates[i] == union_rates[flows[i]]);
        ++compared;
      }
    }
  }
  CHECK(compared > 1000);
}

TEST_CASE("a reallocation over parts, queues and kernels off any link gives each flow its part's rates",
          "[sim][flow][parts]") {
  // Three parts start at one instant: a queue (HBM) shared by a copy and a kernel, two flows on a
  // 100 GB/s link, and one on a 30 GB/s link; plus a kernel's countdown on no link. Split however
  // few its flows.
  Engine e;
  FlowNetwork net(e, 0);
  const LinkId copy = net.add_link("copy", Bandwidth::gbytes_per_s(50), Time());
  const LinkId hbm = net.add_link("hbm", Bandwidth::gbytes_per_s(100), Time());
  net.set_saturation(hbm, 4);
  const LinkId wide = net.add_link("wide", Bandwidth::gbytes_per_s(100), Time());
  const LinkId narrow = net.add_link("narrow", Bandwidth::gbytes_per_s(30), Time());
  const FlowId c = net.start_flow({copy, hbm}, 1e9, FlowNetwork::kUncapped, [] {});
  const FlowId k = net.start_flow({hbm}, 1e9, FlowNetwork::kUncapped, [] {});
  const FlowId w1 = net.start_flow({wide}, 1e9, Bandwidth::gbytes_per_s(20), [] {});
  const FlowId w2 = net.start_flow({wide}, 1e9, FlowNetwork::kUncapped, [] {});
  const FlowId n = net.start_flow({narrow}, 1e9, FlowNetwork::kUncapped, [] {});
  const FlowId countdown = net.start_flow({}, 1e9, Bandwidth::gbytes_per_s(7), [] {});
  std::vector<double> r;
  uint64_t reallocations = 0;
  e.at(Time::us(1), [&] {
    reallocations = net.reallocations();
    for (FlowId f : {c, k, w1, w2, n, countdown}) r.push_back(net.rate(f).bytes_per_s());
  });
  e.run();
  CHECK(reallocations == 1);                           // one instant, one reallocation over its four parts
  const double s = cs::sim::queue_share(150, 100, 4);  // the queue: offered 50 + its capacity
  CHECK(r[0] == Approx(50e9 * s));
  CHECK(r[1] == Approx(100e9 - 50e9 * s));
  CHECK(r[2] == 20e9);
  CHECK(r[3] == 80e9);
  CHECK(r[4] == 30e9);
  CHECK(r[5] == 7e9);
}

TEST_CASE("parts found in the order flows join links, one interleaved in the other, get their own rates",
          "[sim][flow][parts]") {
  // Started in this order, the flows meet the links as l3, l0, l1, l4, l2: the part of l0 and l3
  // and the part of l4 and l2 merge only with the fourth flow, and l1's part sits between them.
  Engine e;
  FlowNetwork net(e, 0);
  std::vector<LinkId> l;
  for (double gbps : {100.0, 60.0, 90.0, 30.0, 200.0})
    l.push_back(net.add_link("", Bandwidth::gbytes_per_s(gbps), Time()));
  const FlowId f1 = net.start_flow({l[3], l[0]}, 1e9, FlowNetwork::kUncapped, [] {});
  const FlowId f2 = net.start_flow({l[1]}, 1e9, FlowNetwork::kUncapped, [] {});
  const FlowId f3 = net.start_flow({l[4], l[2]}, 1e9, FlowNetwork::kUncapped, [] {});
  const FlowId f4 = net.start_flow({l[2], l[0]}, 1e9, FlowNetwork::kUncapped, [] {});
  const FlowId f5 = net.start_flow({l[1]}, 1e9, Bandwidth::gbytes_per_s(10), [] {});
  std::vector<double> r;
  e.at(Time::us(1), [&] {
    for (FlowId f : {f1, f2, f3, f4, f5}) r.push_back(net.rate(f).bytes_per_s());
  });
  e.run();
  // By hand: l3 (30) bounds f1 first; l2 then gives f3 and f4 45 each (l0 had 70 left for f4);
  // on l1, f5 takes its cap of 10 and f2 the remaining 50.
  CHECK(r == std::vector<double>{30e9, 50e9, 45e9, 45e9, 10e9});
}

TEST_CASE("parts alike to the bit are one remembered sharing problem", "[sim][flow][parts]") {
  // At 0 one part of 32 flows runs; at 1 ms two more exactly like it start on their own links (64
  // flows at once: a component large enough to be split). Solved as a whole, the two would be a
  // new problem; solved apart, both are the one the memo already holds.
  Engine e;
  FlowNetwork net(e);
  const auto part = [&] {
    const LinkId a = net.add_link("a", Bandwidth::gbytes_per_s(160), Time());
    const LinkId b = net.add_link("b", Bandwidth::gbytes_per_s(40), Time());
    std::vector<FlowId> f;
    for (int i = 0; i < 16; ++i) {
      f.push_back(net.start_flow({a}, 1e9, FlowNetwork::kUncapped, [] {}));
      f.push_back(net.start_flow({a, b}, 1e9, FlowNetwork::kUncapped, [] {}));
    }
    return f;
  };
  std::vector<std::vector<FlowId>> parts{part()};
  size_t first = 0, later = 0;
  std::vector<double> rates;
  e.at(Time::ms(1), [&] {
    first = net.remembered_problems();
    parts.push_back(part());
    parts.push_back(part());
  });
  e.at(Time::ms(2), [&] {
    later = net.remembered_problems();
    for (const auto& p : parts)
      for (FlowId f : p) rates.push_back(net.rate(f).bytes_per_s());
  });
  e.run();
  static_assert(FlowNetwork::kSplitFromFlows <= 64);
  CHECK(first == 1);
  CHECK(later == 1);
  REQUIRE(rates.size() == 96);
  for (size_t i = 0; i < rates.size(); i += 2) {
    CHECK(rates[i] == 7.5e9);      // 160 less the 16 x 2.5 that b leaves its flows, over 16
    CHECK(rates[i + 1] == 2.5e9);  // b: 40 over 16
  }
}

TEST_CASE("a part posed as the one before it takes its rates only where its queues are alike too",
          "[sim][flow][parts]") {
  // Three parts start at one instant, each a copy and a kernel on a 50 GB/s link and a 100 GB/s
  // one: the same problem to the bit, but the first one's 100 GB/s link is a queue (HBM). The
  // second must not take the first's rates; the third takes the second's.
  // The flows start after the queue's own reallocation, so that the three parts are found from
  // their flows alike, links in the same order.
  Engine e;
  FlowNetwork net(e, 0);
  std::vector<LinkId> copy, hbm;
  for (int part = 0; part < 3; ++part) {
    copy.push_back(net.add_link("copy", Bandwidth::gbytes_per_s(50), Time()));
    hbm.push_back(net.add_link("hbm", Bandwidth::gbytes_per_s(100), Time()));
  }
  net.set_saturation(hbm[0], 4);
  std::vector<FlowId> f;
  e.at(Time::us(1), [&] {
    for (int part = 0; part < 3; ++part) {
      f.push_back(net.start_flow({copy[part], hbm[part]}, 1e9, FlowNetwork::kUncapped, [] {}));
      f.push_back(net.start_flow({hbm[part]}, 1e9, FlowNetwork::kUncapped, [] {}));
    }
  });
  std::vector<double> r;
  e.at(Time::us(2), [&] {
    for (FlowId id : f) r.push_back(net.rate(id).bytes_per_s());
  });
  e.run();
  const double s = cs::sim::queue_share(150, 100, 4);
  REQUIRE(r.size() == 6);
  CHECK(r[0] == Approx(50e9 * s));
  CHECK(r[1] == Approx(100e9 - 50e9 * s));
  for (int i : {2, 4}) {
    CHECK(r[i] == 50e9);
    CHECK(r[i + 1] == 50e9);
  }
}

}  // namespace CS_TEST_FILE
