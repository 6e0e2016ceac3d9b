// all-to-all-v: uneven per-pair volumes and relays, checked in closed form on the star switch of
// sim_fixture.h (per GPU an up-link carrying the latency and a down-link, both of one bandwidth).
#include <catch2/catch.hpp>

#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>

#include "sim/collective_plan.h"
#include "sim/op_graph.h"
#include "sim_fixture.h"

namespace Catch {
template <>
struct StringMaker<cs::sim::Transfer> {
  static std::string convert(const cs::sim::Transfer& t) {
    return std::to_string(t.src) + "->" + std::to_string(t.dst) + ":" + std::to_string(t.bytes);
  }
};
}  // namespace Catch

namespace CS_TEST_FILE {  // unique per file: the tests build in unity batches

using cs::sim::Bandwidth;
using cs::sim::CollectiveKind;
using cs::sim::OpGraph;
using cs::sim::OpId;
using cs::sim::StreamId;
using cs::sim::Time;
using cs::sim::Transfer;
using cs::test::World;

namespace {
const std::vector<cs::sim::PartitionSpec> kSplit = {{"compute", 112}, {"comm", 20}};

std::vector<StreamId> comm_streams(OpGraph& g, int n) {
  std::vector<StreamId> s;
  for (int i = 0; i < n; ++i) s.push_back(g.add_stream(i, 1, "comm"));
  return s;
}

// Every op of the collective ends at `t` (they finish together when the last transfer lands).
void check_all_end_at(const cs::sim::ExecResult& r, const std::vector<OpId>& ops, Time t) {
  REQUIRE(r.stuck_ops.empty());
  for (OpId op : ops) CHECK(r.ops[op.v].end.ps_count() == t.ps_count());
}
}  // namespace

TEST_CASE("a hot destination bounds an all-to-all-v: its received bytes over its down-link") {
  // 4 GPUs, 120 GB/s links, 1 us on the up-link, copy rate far above the links.
  World w(4, kSplit, Bandwidth::gbytes_per_s(120), Time::us(1));
  w.cost.copy_per_sm = 1e12;
  OpGraph g;
  const auto streams = comm_streams(g, 4);
  // Ranks 1..3 each send 3e8 to rank 0 (9e8 received: 7.5 ms at 120 GB/s); the other pairs are
  // light, so no up-link carries more than 4e8 (3.33 ms) and no other down-link more than 2e8.
  const std::vector<Transfer> t = {{1, 0, 3e8}, {2, 0, 3e8}, {3, 0, 3e8}, {0, 1, 1e8},
                                   {0, 2, 1e8}, {1, 2, 1e8}, {2, 3, 1e8}, {3, 1, 1e8}};
  const auto ops = g.add_all_to_all_v(streams, t, "dispatch");
  const auto& col = g.collectives()[0];
  CHECK(col.kind == CollectiveKind::kAllToAllV);
  CHECK(col.bytes == 4e8);  // the busiest sender's total: ranks 1, 2 and 3 send 4e8 each
  CHECK(g.transfers(col).size() == t.size());

  const auto r = w.run(g);
  check_all_end_at(r, ops, Time::us(7500) + Time::us(1));
  // The hot down-link carried exactly what rank 0 receives, busy the whole time.
  const auto hot = w.net.stats(w.routing.down_[0]);
  CHECK(hot.bytes == Approx(9e8).epsilon(1e-12));
  CHECK(hot.busy == Time::us(7500));
  // An even all-to-all of the same per-rank size would take only 4e8 * 3/4 / 120 GB/s = 2.5 ms.
  CHECK(r.makespan > Time::ms(3));
}

TEST_CASE("a relay's forward runs concurrently and is sent by the relay GPU's kernel") {
  // SM-bound: 20 comm SMs at 2 GB/s copy 40 GB/s, below the 100 GB/s links, so each GPU's time is
  // the bytes its own kernel sends / 40 GB/s. Nodes {0, 1} and {2, 3}: GPU 0 dispatches over
  // "InfiniBand" to its same-index GPU 2, which forwards over "NVLink" to GPU 3 of its node.
  World w(4, kSplit, Bandwidth::gbytes_per_s(100), Time::us(1));
  w.cost.copy_per_sm = 2e9;
  SECTION("pure relay: s -> r and r -> d overlap") {
    OpGraph g;
    const auto ops = g.add_all_to_all_v(comm_streams(g, 4), {{0, 2, 2e8}, {2, 3, 2e8}}, "dispatch");
    const auto r = w.run(g);
    // Concurrent: max(2e8, 2e8) / 40 GB/s = 5 ms. Forwarding only after arrival would take 10 ms,
    // and charging the forward to GPU 0's kernel would put 4e8 on its copy link (10 ms as well).
    check_all_end_at(r, ops, Time::ms(5) + Time::us(1));
    CHECK(w.net.stats(w.routing.up_[2]).bytes == Approx(2e8).epsilon(1e-12));
    CHECK(w.net.stats(w.routing.down_[3]).bytes == Approx(2e8).epsilon(1e-12));
    CHECK(w.net.stats(w.routing.up_[0]).bytes == Approx(2e8).epsilon(1e-12));
  }
  SECTION("the relay's own traffic and its forwards share its kernel's copy rate") {
    OpGraph g;
    // GPU 2 forwards 2e8 to GPU 3 and sends 1e8 of its own to GPU 1: 3e8 through its copy link.
    const auto ops =
        g.add_all_to_all_v(comm_streams(g, 4), {{0, 2, 2e8}, {2, 3, 2e8}, {2, 1, 1e8}}, "dispatch");
    CHECK(g.collectives()[0].bytes == 3e8);  // the relay is the busiest sender
    const auto r = w.run(g);
    check_all_end_at(r, ops, Time::us(7500) + Time::us(1));
    CHECK(w.net.stats(w.routing.up_[2]).bytes == Approx(3e8).epsilon(1e-12));
  }
}

TEST_CASE("an all-to-all-v of a uniform matrix runs exactly like all_to_all of the same bytes") {
  const int n = 4;
  const double S = 4e8;  // all_to_all: each rank sends S/n to each rank, itself included
  auto run = [&](double copy_per_sm, bool uneven_api) {
    World w(n, kSplit, Bandwidth::gbytes_per_s(100), Time::us(1));
    w.cost.copy_per_sm = copy_per_sm;
    OpGraph g;
    const auto streams = comm_streams(g, n);
    // Two back to back, so a second collective's start also has to agree.
    for (int k = 0; k < 2; ++k) {
      if (uneven_api) {
        std::vector<Transfer> t;  // row-major, not all_to_all's rotated order: it is canonicalised
        for (uint32_t s = 0; s < n; ++s)
          for (uint32_t d = 0; d < n; ++d) t.push_back({s, d, S / n});  // s == d: the local copy
        g.add_all_to_all_v(streams, t, "a2a");
      } else {
        g.add_collective(CollectiveKind::kAllToAll, S, streams, "a2a");
      }
    }
    std::vector<int64_t> ends;
    for (const auto& o : w.run(g).ops) ends.push_back(o.end.ps_count());
    for (auto l : w.routing.up_) ends.push_back(w.net.stats(l).busy.ps_count());
    return ends;
  };
  for (double copy : {1e12, 2e9}) {  // link-bound, then SM-bound
    const auto a2a = run(copy, false);
    CHECK(run(copy, true) == a2a);
    CHECK(a2a[0] > 0);
  }
  CHECK(run(1e12, false)[0] == (Time::ms(3) + Time::us(1)).ps_count());

  // Same busbw: V's bytes leave out the rank's own share, which all_to_all's (n-1)/n removes.
  OpGraph g;
  std::vector<Transfer> t;
  for (uint32_t s = 0; s < n; ++s)
    for (uint32_t d = 0; d < n; ++d)
      if (s != d) t.push_back({s, d, S / n});
  g.add_all_to_all_v(comm_streams(g, n), t, "a2a");
  const double v_bytes = g.collectives()[0].bytes;
  CHECK(v_bytes == Approx(S * (n - 1) / n));
  CHECK(v_bytes * cs::sim::busbw_factor(CollectiveKind::kAllToAllV, n) ==
        Approx(S * cs::sim::busbw_factor(CollectiveKind::kAllToAll, n)));
}

TEST_CASE("all-to-all-v input is canonicalised: zeros dropped, repeated pairs summed, rotated order") {
  OpGraph g;
  const auto streams = comm_streams(g, 3);
  g.add_all_to_all_v(streams, {{2, 0, 1.0}, {0, 2, 5.0}, {1, 2, 0.0}, {0, 1, 2.0}, {0, 2, 3.0}}, "x");
  const auto t = g.transfers(g.collectives()[0]);
  const std::vector<Transfer> expect = {{0, 1, 2.0}, {0, 2, 8.0}, {2, 0, 1.0}};
  CHECK(std::vector<Transfer>(t.begin(), t.end()) == expect);
  CHECK(g.collectives()[0].bytes == 10.0);
  CHECK(cs::sim::collective_transfers(g, g.collectives()[0]) == 3);
  CHECK(cs::sim::collective_transfers(CollectiveKind::kAllToAllV, 3) == 6);  // an upper bound
  const auto plan = cs::sim::plan_collective(g, g.collectives()[0]);
  CHECK(plan.phases == 1);
  CHECK(plan.phase == expect);
  CHECK(cs::sim::collective_name(CollectiveKind::kAllToAllV) == std::string("all_to_all_v"));
}

TEST_CASE("equal transfer sets are stored once, whatever GPUs they run on") {
  OpGraph g;
  const auto a = comm_streams(g, 4);
  std::vector<StreamId> b;
  for (int i = 4; i < 8; ++i) b.push_back(g.add_stream(i, 1, "comm"));
  const std::vector<Transfer> dispatch = {{0, 1, 3e6}, {1, 3, 1e6}, {2, 0, 2e6}};
  const std::vector<Transfer> combine = {{1, 0, 3e6}, {3, 1, 1e6}, {0, 2, 2e6}};
  g.add_all_to_all_v(a, dispatch, "dispatch");
  g.add_all_to_all_v(a, combine, "combine");
  g.add_all_to_all_v(b, dispatch, "dispatch");  // another group: same rank-indexed matrix
  g.add_all_to_all_v(a, {{1, 3, 1e6}, {2, 0, 2e6}, {0, 1, 3e6}}, "dispatch");  // reordered
  const auto& c = g.collectives();
  CHECK(g.transfers(c[0]).data() == g.transfers(c[2]).data());
  CHECK(g.transfers(c[0]).data() == g.transfers(c[3]).data());
  CHECK(g.transfers(c[0]).data() != g.transfers(c[1]).data());
  CHECK(g.transfer_pool().sets() == 2);
  CHECK(g.transfer_pool().stored() == 6);
  CHECK(c[2].gpus == std::vector<int>{4, 5, 6, 7});
}

TEST_CASE("an all-to-all-v that moves nothing finishes when its last participant launches") {
  World w(3, kSplit, Bandwidth::gbytes_per_s(100), Time::us(1));
  OpGraph g;
  const auto ops = g.add_all_to_all_v(comm_streams(g, 3), {{0, 1, 0.0}}, "empty");
  CHECK(g.collectives()[0].bytes == 0);
  const auto r = w.run(g);
  check_all_end_at(r, ops, Time());
}

TEST_CASE("a transfer to itself is a local copy: on the kernel's SMs and its own HBM, no link") {
  World w(2, kSplit, Bandwidth::gbytes_per_s(100), Time::us(1));
  w.cost.copy_per_sm = 1e9;  // 20 SMs: 20 GB/s, below the links and the HBM
  OpGraph g;
  const auto ops = g.add_all_to_all_v(comm_streams(g, 2), {{0, 0, 2e8}, {1, 1, 1e8}}, "local");
  CHECK(g.collectives()[0].bytes == 0);  // no traffic between GPUs
  const auto r = w.run(g);
  // Both end together when the slower local copy does (10 ms), without the link latency.
  check_all_end_at(r, ops, Time::ms(10));
  for (auto l : w.routing.up_) CHECK(w.net.stats(l).busy == Time());
  CHECK(w.net.stats(w.routing.hbm(0)).busy == Time::ms(10));
}

TEST_CASE("invalid all-to-all-v input is rejected and leaves the graph unchanged") {
  OpGraph g;
  const auto streams = comm_streams(g, 3);
  const double inf = std::numeric_limits<double>::infinity();
  const std::vector<std::vector<Transfer>> bad = {
      {{0, 3, 1.0}},                                         // destination out of range
      {{7, 0, 1.0}},                                         // source out of range
      {{0, 1, -1.0}},                                        // negative
      {{0, 1, std::nan("")}},                                // NaN
      {{0, 1, inf}},                                         // infinite
  };
  for (const auto& t : bad) CHECK_THROWS_AS(g.add_all_to_all_v(streams, t, "bad"), std::invalid_argument);
  // Two participants on one GPU: a transfer between them would need a route from a GPU to itself.
  const auto same_gpu = g.add_stream(0, 0, "other");
  CHECK_THROWS_AS(g.add_all_to_all_v({streams[0], same_gpu}, {{0, 1, 1.0}}, "bad"), std::invalid_argument);
  CHECK_THROWS_AS(g.add_all_to_all_v({streams[0], StreamId{99}}, {}, "bad"), std::invalid_argument);
  // The kind needs its transfers, so the uniform entry point refuses it.
  CHECK_THROWS_AS(g.add_collective(CollectiveKind::kAllToAllV, 1.0, streams, "bad"), std::invalid_argument);
  CHECK(g.ops().empty());
  CHECK(g.collectives().empty());
  CHECK(g.transfer_pool().sets() == 0);
  for (const auto& s : g.streams()) CHECK(s.ops.empty());
}

}  // namespace CS_TEST_FILE
