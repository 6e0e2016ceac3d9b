// Sends by the copy engine (sim::Mover::kCopyEngine): no kernel, so no SMs held and no copy rate;
// the route, both HBMs and the cost model's copy-engine cap are all that limit them.
#include <catch2/catch.hpp>

#include "sim/op_graph.h"
#include "sim_fixture.h"

namespace CS_TEST_FILE {  // unique per file: the tests build in unity batches

using cs::sim::Bandwidth;
using cs::sim::DType;
using cs::sim::GemmShape;
using cs::sim::Mover;
using cs::sim::OpGraph;
using cs::sim::Time;
using cs::test::World;

namespace {
// 2048 x 2048 output: 256 tiles, more than the 132 SMs of a GPU, so it wants every SM it can get.
const GemmShape kWide{2048, 2048, 4096, DType::kBf16, 1};
const Time kWideOn132 = Time::from_seconds_ceil(2.0 * 2048 * 2048 * 4096 / (132 * 1e12));
const Time kWideOn66 = Time::from_seconds_ceil(2.0 * 2048 * 2048 * 4096 / (66 * 1e12));

// GEMM end and send end on GPU 0 when the send (1 GB to GPU 1) shares the GEMM's stream partition.
std::pair<Time, Time> gemm_beside_send(Mover mover) {
  World w(2, {{"compute", 132}}, Bandwidth::gbytes_per_s(100), Time::us(3));
  w.cost.copy_per_sm = 1e12;  // an SM kernel's copy rate is no limit either
  OpGraph g;
  auto gemm = g.add_gemm(g.add_stream(0, 0, "compute"), kWide, "gemm");
  auto send = g.add_send(g.add_stream(0, 0, "p2p"), 1, 1e9, "send", mover);
  const auto r = w.run(g);
  REQUIRE(r.stuck_ops.empty());
  return {r.ops[gemm.v].end, r.ops[send.v].end};
}
}  // namespace

TEST_CASE("a copy-engine send holds no SMs: a GEMM on the same partition keeps all of them") {
  const auto [gemm_ce, send_ce] = gemm_beside_send(Mover::kCopyEngine);
  CHECK(gemm_ce == kWideOn132);
  CHECK(send_ce == Time::ms(10) + Time::us(3));  // 1 GB over the 100 GB/s links, after the latency
  // The same send as a kernel takes half the partition while it runs (10 ms, longer than the
  // GEMM, 0.26 ms on 132 SMs): the GEMM runs on 66 SMs throughout, twice as long.
  const auto [gemm_sms, send_sms] = gemm_beside_send(Mover::kSms);
  CHECK(send_sms == send_ce);
  CHECK(gemm_sms == kWideOn66);
}

TEST_CASE("a copy-engine send needs no SMs, runs at its route's rate and ignores the SM copy rate") {
  // One communication SM at 10 GB/s: as a kernel the send takes 100 ms; by the copy engine the
  // 100 GB/s route gives 10 ms, on a partition of 0 SMs too, where a kernel would never start.
  World w(2, {{"compute", 131}, {"comm", 1}, {"none", 0}}, Bandwidth::gbytes_per_s(100), Time::us(3));
  OpGraph g;
  auto by_sms = g.add_send(g.add_stream(0, 1, "p2p sms"), 1, 1e9, "sms");
  auto by_ce = g.add_send(g.add_stream(1, 2, "p2p ce"), 0, 1e9, "ce", Mover::kCopyEngine);
  auto stuck = g.add_send(g.add_stream(1, 2, "p2p stuck"), 0, 1e9, "stuck");
  const auto r = w.run(g);
  CHECK(r.ops[by_sms.v].end == Time::ms(100) + Time::us(3));
  CHECK(r.ops[by_ce.v].end == Time::ms(10) + Time::us(3));
  CHECK(r.stuck_ops == std::vector<uint32_t>{stuck.v});
  CHECK(g.by_copy_engine(g.ops()[by_ce.v]));
  CHECK_FALSE(g.by_copy_engine(g.ops()[by_sms.v]));
}

TEST_CASE("a copy-engine send is capped by the cost model and crosses both HBMs") {
  SECTION("the cost model's copy-engine rate below the route's") {
    World w(2, {{"compute", 132}}, Bandwidth::gbytes_per_s(100), Time::us(3));
    w.cost.copy_engine_Bps = 40e9;
    OpGraph g;
    auto s = g.add_send(g.add_stream(0, 0, "p2p"), 1, 1e9, "ce", Mover::kCopyEngine);
    CHECK(w.run(g).ops[s.v].end == Time::from_seconds_ceil(1e9 / 40e9) + Time::us(3));
  }
  SECTION("an HBM slower than the route") {
    World w(2, {{"compute", 132}}, Bandwidth::gbytes_per_s(100), Time::us(3), Bandwidth::gbytes_per_s(50));
    OpGraph g;
    auto s = g.add_send(g.add_stream(0, 0, "p2p"), 1, 1e9, "ce", Mover::kCopyEngine);
    CHECK(w.run(g).ops[s.v].end == Time::ms(20) + Time::us(3));
  }
  SECTION("a memory-bound kernel on the destination shares its HBM") {
    // 50 GB/s HBMs: GPU 1's kernel (1 GB) and the send (1 GB) split GPU 1's HBM, 25 GB/s each,
    // and both end at 40 ms (the send after its latency).
    World w(2, {{"compute", 132}}, Bandwidth::gbytes_per_s(100), Time(), Bandwidth::gbytes_per_s(50));
    OpGraph g;
    auto s = g.add_send(g.add_stream(0, 0, "p2p"), 1, 1e9, "ce", Mover::kCopyEngine);
    auto k = g.add_compute(g.add_stream(1, 0, "compute"), cs::sim::GenericCompute{0, 1e9, DType::kBf16}, "copy");
    const auto r = w.run(g);
    CHECK(r.ops[s.v].end == Time::ms(40));
    CHECK(r.ops[k.v].end == Time::ms(40));
  }
}

TEST_CASE("copy-engine sends from one GPU share its route max-min fairly") {
  // Two sends of 1 GB from GPU 0, to GPUs 1 and 2, share GPU 0's 100 GB/s up-link: 20 ms each.
  World w(3, {{"compute", 132}}, Bandwidth::gbytes_per_s(100), Time::us(3));
  OpGraph g;
  auto a = g.add_send(g.add_stream(0, 0, "to 1"), 1, 1e9, "a", Mover::kCopyEngine);
  auto b = g.add_send(g.add_stream(0, 0, "to 2"), 2, 1e9, "b", Mover::kCopyEngine);
  const auto r = w.run(g);
  CHECK(r.ops[a.v].end == Time::ms(20) + Time::us(3));
  CHECK(r.ops[b.v].end == Time::ms(20) + Time::us(3));
}

}  // namespace CS_TEST_FILE
