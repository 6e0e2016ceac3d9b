// Paced collectives (Collective::paced_bytes): a kernel that works through its own bytes at its own
// pace, as DeepEP's internode kernels do, checked in closed form on sim_fixture.h's star switch.
#include <catch2/catch.hpp>
#include <stdexcept>

#include "sim/op_graph.h"
#include "sim_fixture.h"

namespace CS_TEST_FILE {  // unique per file: the tests build in unity batches

using cs::sim::Bandwidth;
using cs::sim::OpGraph;
using cs::sim::OpId;
using cs::sim::StreamId;
using cs::sim::Time;
using cs::test::World;

namespace {
const std::vector<cs::sim::PartitionSpec> kSplit = {{"compute", 112}, {"comm", 20}};
constexpr double kLinkBps = 100e9;  // every up- and down-link
}  // namespace

TEST_CASE("a paced put lasts its paced bytes over its pace, every destination's share in step") {
  // GPU 0 puts 3e8 bytes to GPU 1 and 1e8 to GPU 2 while its kernel works through 2e8 paced bytes.
  // At 20 SMs x 1.25e9 = 2.5e10 B/s that is 8 ms; its up-link (100 GB/s) alone would take 4 ms.
  // GPU 1's share needs 3.75e10 B/s: with GPU 1's down-link at exactly that, still 8 ms. (Had the
  // pace been one cap that both flows share max-min, GPU 2's flow would finish first and leave
  // GPU 1's alone on that link at the end: 9.33 ms.) At 20 x 1e10 B/s the up-link binds: 4 ms.
  struct Case {
    double per_sm, down1_Bps, expected_s;
  };
  for (const Case& c : {Case{1.25e9, kLinkBps, 8e-3}, Case{1.25e9, 3.75e10, 8e-3}, Case{1e10, kLinkBps, 4e-3}}) {
    World w(3, kSplit, Bandwidth::bytes_per_s(kLinkBps), Time());
    w.net.set_capacity(w.routing.down_[1], Bandwidth::bytes_per_s(c.down1_Bps));
    w.cost.copy_per_sm = 1e12;
    w.cost.pace_per_sm = c.per_sm;
    OpGraph g;
    const StreamId s = g.add_stream(0, 1, "comm");
    const OpId put = g.add_put(s, {1, 2}, {3e8, 1e8}, "dispatch", 2e8);
    const auto r = w.run(g);
    REQUIRE(r.stuck_ops.empty());
    CHECK(r.ops[put.v].end.to_seconds() == Approx(c.expected_s).epsilon(1e-9));
  }
}

TEST_CASE("a paced all-to-all-v: the slower of the pace and the links, and no pace when paced bytes are 0") {
  // 4 GPUs each send 1e8 to each other GPU (3e8 out, 3 ms on its up-link). Paced bytes of 4e8 at
  // 20 SMs x 5e9 = 1e11 B/s: 4 ms. With paced bytes 0 the links alone bound it: 3 ms.
  for (const double paced : {4e8, 0.0}) {
    World w(4, kSplit, Bandwidth::bytes_per_s(kLinkBps), Time());
    w.cost.copy_per_sm = 1e12;
    w.cost.pace_per_sm = 5e9;
    OpGraph g;
    std::vector<StreamId> streams;
    for (int i = 0; i < 4; ++i) streams.push_back(g.add_stream(i, 1, "comm"));
    std::vector<cs::sim::Transfer> t;
    for (uint32_t a = 0; a < 4; ++a)
      for (uint32_t b = 0; b < 4; ++b)
        if (a != b) t.push_back({a, b, 1e8});
    const auto ops = g.add_all_to_all_v(streams, t, "dispatch", paced);
    const auto r = w.run(g);
    REQUIRE(r.stuck_ops.empty());
    for (OpId op : ops) CHECK(r.ops[op.v].end.to_seconds() == Approx(paced > 0 ? 4e-3 : 3e-3).epsilon(1e-9));
  }
}

TEST_CASE("a paced kernel's pace follows its SMs when another kernel comes to share them") {
  // Two puts from GPU 0 on one 20-SM partition, 2e8 paced bytes each at 1e9 B/s per SM, links far
  // faster. The first alone holds 20 SMs; from when the second starts, 5 ms later, they hold 10 each.
  // First: 1e8 paced bytes in the first 5 ms (2e10 B/s), the other 1e8 at 1e10 B/s: 15 ms. The
  // second: 1e8 by 15 ms at 1e10 B/s, then alone at 2e10 B/s for the rest: 20 ms.
  World w(2, kSplit, Bandwidth::bytes_per_s(1e15), Time());
  w.cost.copy_per_sm = 1e12;
  w.cost.pace_per_sm = 1e9;
  OpGraph g;
  const StreamId a = g.add_stream(0, 1, "comm_a");
  const StreamId b = g.add_stream(0, 1, "comm_b");
  const StreamId c = g.add_stream(0, 0, "compute");
  const OpId first = g.add_put(a, {1}, {1e8}, "first", 2e8);
  // A 5 ms compute kernel on 112 SMs at 1 TFLOP/s each holds the second back.
  const OpId wait = g.add_compute(c, cs::sim::GenericCompute{5e-3 * 112e12, 0}, "wait");
  const OpId second = g.add_put(b, {1}, {1e8}, "second", 2e8);
  g.add_dep(second, wait);
  const auto r = w.run(g);
  REQUIRE(r.stuck_ops.empty());
  CHECK(r.ops[first.v].end.to_seconds() == Approx(15e-3).epsilon(1e-6));
  CHECK(r.ops[second.v].end.to_seconds() == Approx(20e-3).epsilon(1e-6));
}

TEST_CASE("a kernel's grid bounds its SMs, and so its pace, on a partition it shares") {
  // A put paced at 1e9 B/s per SM with a grid of 8 on the 112-SM compute partition: 8 SMs, so its
  // 8e7 paced bytes take 10 ms; with no grid it takes the whole partition: 8e7 / 112e9.
  for (const int grid : {8, 0}) {
    World w(2, kSplit, Bandwidth::bytes_per_s(1e15), Time());
    w.cost.copy_per_sm = 1e12;
    w.cost.pace_per_sm = 1e9;
    OpGraph g;
    const OpId put = g.add_put(g.add_stream(0, 0, "comm"), {1}, {1e6}, "put", 8e7);
    g.set_grid_sms(put, grid);
    CHECK(g.collectives().back().grid_sms == grid);
    const auto r = w.run(g);
    REQUIRE(r.stuck_ops.empty());
    CHECK(r.ops[put.v].end.to_seconds() == Approx(8e7 / ((grid > 0 ? grid : 112) * 1e9)).epsilon(1e-9));
  }
  OpGraph g;
  const OpId compute = g.add_compute(g.add_stream(0, 0, "compute"), cs::sim::GenericCompute{1e9, 0}, "c");
  CHECK_THROWS_AS(g.set_grid_sms(compute, 8), std::invalid_argument);
}

TEST_CASE("paced bytes must be finite and non-negative") {
  OpGraph g;
  const StreamId s = g.add_stream(0, 1, "comm");
  CHECK_THROWS_AS(g.add_put(s, {1}, {1e6}, "put", -1), std::invalid_argument);
  CHECK_THROWS_AS(g.add_all_to_all_v({s}, {}, "a2a", std::numeric_limits<double>::infinity()), std::invalid_argument);
  CHECK(g.collectives().empty());
}

}  // namespace CS_TEST_FILE
