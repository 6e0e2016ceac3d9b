#include <catch2/catch.hpp>

#include "sim/op_graph.h"
#include "sim_fixture.h"

namespace CS_TEST_FILE {  // unique per file: the tests build in unity batches

using cs::sim::Bandwidth;
using cs::sim::CollectiveKind;
using cs::sim::DType;
using cs::sim::GemmShape;
using cs::sim::GenericCompute;
using cs::sim::OpGraph;
using cs::sim::Time;
using cs::test::World;

namespace {
const std::vector<cs::sim::PartitionSpec> kSplit = {{"compute", 112}, {"comm", 20}};
// 1024^3 GEMM: 64 tiles, so it uses 64 SMs: 2 * 2^30 / (64 * 1e12) s.
const GemmShape kGemm{1024, 1024, 1024, DType::kBf16, 1};
const Time kGemmTime = Time::from_seconds_ceil(2.0 * 1024 * 1024 * 1024 / (64 * 1e12));
}  // namespace

TEST_CASE("ops in a stream run back to back, a dependency across GPUs orders them") {
  World w(2, kSplit, Bandwidth::gbytes_per_s(100), Time());
  OpGraph g;
  auto s0 = g.add_stream(0, 0, "a");
  auto s1 = g.add_stream(1, 0, "b");
  auto x1 = g.add_gemm(s0, kGemm, "x1");
  auto x2 = g.add_gemm(s0, kGemm, "x2");
  auto y = g.add_gemm(s1, kGemm, "y");
  g.add_dep(y, x2);  // y on GPU 1 waits for x2 on GPU 0
  const auto r = w.run(g);
  REQUIRE(r.stuck_ops.empty());
  CHECK(r.ops[x1.v].start == Time());
  CHECK(r.ops[x1.v].end == kGemmTime);
  CHECK(r.ops[x2.v].start == kGemmTime);
  CHECK(r.ops[y.v].start == kGemmTime * 2);
  CHECK(r.makespan == kGemmTime * 3);
}

TEST_CASE("a dependency across streams of one GPU orders them") {
  World w(1, kSplit, Bandwidth::gbytes_per_s(100), Time());
  OpGraph g;
  auto a = g.add_stream(0, 0, "a");
  auto b = g.add_stream(0, 1, "b");
  auto first = g.add_compute(b, GenericCompute{2e9, 0, DType::kBf16}, "first");  // 2e9 / (20e12) = 100 us
  auto second = g.add_gemm(a, kGemm, "second");
  g.add_dep(second, first);
  const auto r = w.run(g);
  CHECK(r.ops[first.v].end == Time::us(100));
  CHECK(r.ops[second.v].start == Time::us(100));
}

TEST_CASE("a kernel's launch gap delays it after its stream's previous op and holds no SM meanwhile") {
  World w(1, kSplit, Bandwidth::gbytes_per_s(100), Time());
  w.cost.launch_gap_s = 100e-6;
  const Time gap = Time::from_seconds_ceil(100e-6);
  OpGraph g;
  auto a = g.add_stream(0, 0, "a");
  auto b = g.add_stream(0, 0, "b");
  const GenericCompute k{112e6, 0, DType::kBf16};  // 112e6 / (112 x 1e12) = 1 us on the partition
  auto c1 = g.add_compute(a, k, "c1");
  auto c2 = g.add_compute(a, k, "c2");
  auto x = g.add_gemm(b, kGemm, "x");  // no gap: GEMM times count their launch
  const auto r = w.run(g);
  REQUIRE(r.stuck_ops.empty());
  const Time t = w.cost.compute_time(0, k, 112);
  CHECK(r.ops[c1.v].start == gap);
  CHECK(r.ops[c1.v].end == gap + t);
  CHECK(r.ops[c2.v].start == gap + t + gap);
  CHECK(r.makespan == (gap + t) * 2);
  // The GEMM ends inside c1's gap, at its time alone: the gap held none of the partition's SMs.
  CHECK(r.ops[x.v].end == kGemmTime);
}

TEST_CASE("two kernels on one partition share its SMs and both take twice as long") {
  World w(1, kSplit, Bandwidth::gbytes_per_s(100), Time());
  OpGraph g;
  auto a = g.add_stream(0, 0, "a");
  auto b = g.add_stream(0, 0, "b");
  // 112x... shape with 112+ tiles: 1536 x 1280 -> 12 x 10 = 120 tiles, demand capped at 112.
  const GemmShape big{1536, 1280, 4096, DType::kBf16, 1};
  auto x = g.add_gemm(a, big, "x");
  auto y = g.add_gemm(b, big, "y");
  const auto r = w.run(g);
  const Time alone = w.cost.gemm_time(0, big, 112);
  const Time shared = w.cost.gemm_time(0, big, 56);
  CHECK(r.ops[x.v].end == shared);
  CHECK(r.ops[y.v].end == shared);
  CHECK(shared > alone);
}

TEST_CASE("kernels on separate partitions do not slow each other") {
  World w(1, kSplit, Bandwidth::gbytes_per_s(100), Time());
  OpGraph g;
  auto a = g.add_stream(0, 0, "a");
  auto b = g.add_stream(0, 1, "b");
  auto x = g.add_gemm(a, kGemm, "x");
  auto y = g.add_gemm(b, kGemm, "y");  // 64 tiles on 20 SMs: 2 * 2^30 / (20e12)
  const auto r = w.run(g);
  CHECK(r.ops[x.v].end == kGemmTime);
  CHECK(r.ops[y.v].end == Time::from_seconds_ceil(2.0 * 1024 * 1024 * 1024 / (20 * 1e12)));
}

TEST_CASE("a GEMM's HBM bytes are asked for waves as wide as the SMs it gets, beside the HBM load then") {
  World w(1, kSplit, Bandwidth::gbytes_per_s(100), Time(), Bandwidth::gbytes_per_s(100));
  w.cost.gemm_bytes = 1e6;
  OpGraph g;
  auto a = g.add_stream(0, 0, "a");
  auto b = g.add_stream(0, 1, "b");
  // A 1 GB memory stream on the comm partition first, then GEMMs on both partitions.
  auto copy = g.add_compute(b, GenericCompute{1.0, 1e9, DType::kBf16}, "copy");
  auto wide = g.add_gemm(a, kGemm, "wide");                                  // 64 tiles on 112 SMs
  auto narrow = g.add_gemm(b, kGemm, "narrow");                              // 64 tiles on 20 SMs, after the copy
  auto small = g.add_gemm(a, GemmShape{256, 256, 1024, DType::kFp8}, "small");  // 4 tiles
  (void)copy, (void)wide, (void)narrow, (void)small;
  w.run(g);
  REQUIRE(w.cost.hbm_asked.size() == 3);
  CHECK(w.cost.hbm_asked[0].first == 64);  // its tiles, fewer than the partition's 112 SMs
  CHECK(w.cost.hbm_asked[0].second == 0);  // the copy starts at the same instant: not yet in the load
  CHECK(w.cost.hbm_asked[1].first == 4);
  CHECK(w.cost.hbm_asked[1].second > 0);  // beside the copy
  CHECK(w.cost.hbm_asked[2].first == 20);  // the comm partition's 20 SMs
  // It launches at the instant the copy ends, before the network reallocates: the copy, its own
  // stream's predecessor, is no longer other traffic.
  CHECK(w.cost.hbm_asked[2].second == 0);
}

TEST_CASE("memory-bound kernels on one GPU contend for HBM") {
  World w(1, kSplit, Bandwidth::gbytes_per_s(100), Time(), Bandwidth::gbytes_per_s(100));
  OpGraph g;
  auto a = g.add_stream(0, 0, "a");
  auto b = g.add_stream(0, 1, "b");
  // 1 GB each and negligible FLOPs: alone 10 ms, together 20 ms.
  auto x = g.add_compute(a, GenericCompute{1.0, 1e9, DType::kBf16}, "x");
  auto y = g.add_compute(b, GenericCompute{1.0, 1e9, DType::kBf16}, "y");
  const auto r = w.run(g);
  CHECK(r.ops[x.v].end == Time::ms(20));
  CHECK(r.ops[y.v].end == Time::ms(20));
}

TEST_CASE("a compute-bound kernel is not slowed by a concurrent memory stream it does not saturate") {
  World w(1, kSplit, Bandwidth::gbytes_per_s(100), Time(), Bandwidth::gbytes_per_s(100));
  w.cost.gemm_bytes = 1e8;  // the GEMM needs 1e8 B over its compute time
  OpGraph g;
  auto a = g.add_stream(0, 0, "a");
  auto b = g.add_stream(0, 1, "b");
  auto x = g.add_gemm(a, kGemm, "x");
  auto y = g.add_compute(b, GenericCompute{1.0, 1e9, DType::kBf16}, "y");
  const auto r = w.run(g);
  // The GEMM wants 1e8 B / 33.6 us = 2980 GB/s > half of HBM: it gets 50 GB/s and is HBM-bound.
  CHECK(r.ops[x.v].end == Time::ms(2));
  // y gets 50 GB/s for 2 ms (0.1 GB), then 100 GB/s for the remaining 0.9 GB: 9 ms more.
  CHECK(r.ops[y.v].end == Time::ms(11));
}

TEST_CASE("ring all-reduce takes 2(n-1)/n S/B plus 2(n-1) latencies") {
  const int n = 4;
  World w(n, kSplit, Bandwidth::gbytes_per_s(100), Time::us(1));
  w.cost.copy_per_sm = 1e12;  // copy rate far above the links
  OpGraph g;
  std::vector<cs::sim::StreamId> streams;
  for (int i = 0; i < n; ++i) streams.push_back(g.add_stream(i, 1, "comm"));
  const double S = 4e8;
  auto ops = g.add_collective(CollectiveKind::kAllReduce, S, streams, "ar");
  const auto r = w.run(g);
  const Time expect = Time::from_seconds_ceil(2.0 * (n - 1) / n * S / 100e9) + Time::us(1) * (2 * (n - 1));
  for (auto op : ops) CHECK(r.ops[op.v].end == expect);
}

TEST_CASE("reduce-scatter and all-gather take (n-1)/n S/B plus (n-1) latencies") {
  for (auto kind : {CollectiveKind::kReduceScatter, CollectiveKind::kAllGather}) {
    const int n = 8;
    World w(n, kSplit, Bandwidth::gbytes_per_s(50), Time::us(2));
    w.cost.copy_per_sm = 1e12;
    OpGraph g;
    std::vector<cs::sim::StreamId> streams;
    for (int i = 0; i < n; ++i) streams.push_back(g.add_stream(i, 1, "comm"));
    auto ops = g.add_collective(kind, 8e8, streams, "c");
    const auto r = w.run(g);
    CHECK(r.ops[ops[0].v].end == Time::ms(2) * 7 + Time::us(2) * 7);  // 1e8 B at 50 GB/s per phase
  }
}

TEST_CASE("an all-to-all's time is its bottleneck link's: the up-link, or the SM copy rate") {
  const int n = 4;
  const double S = 4e8;  // each GPU sends 3 x 1e8 B
  SECTION("link-bound") {
    World w(n, kSplit, Bandwidth::gbytes_per_s(100), Time::us(1));
    w.cost.copy_per_sm = 1e12;
    OpGraph g;
    std::vector<cs::sim::StreamId> streams;
    for (int i = 0; i < n; ++i) streams.push_back(g.add_stream(i, 1, "comm"));
    auto ops = g.add_collective(CollectiveKind::kAllToAll, S, streams, "a2a");
    const auto r = w.run(g);
    CHECK(r.ops[ops[0].v].end == Time::ms(3) + Time::us(1));
  }
  SECTION("SM-bound: 20 SMs at 2 GB/s each copy 40 GB/s, below the 100 GB/s link") {
    World w(n, kSplit, Bandwidth::gbytes_per_s(100), Time::us(1));
    w.cost.copy_per_sm = 2e9;
    OpGraph g;
    std::vector<cs::sim::StreamId> streams;
    for (int i = 0; i < n; ++i) streams.push_back(g.add_stream(i, 1, "comm"));
    auto ops = g.add_collective(CollectiveKind::kAllToAll, S, streams, "a2a");
    const auto r = w.run(g);
    // The kernel copies all S bytes, its own quarter included: 4e8 B / 40 GB/s. Its local copy
    // moves during the link latency, so the copy rate is busy from the start: no latency term.
    CHECK(r.ops[ops[0].v].end == Time::ms(10));
  }
}

TEST_CASE("a communication kernel copies slower while GEMMs hold SMs of its GPU, and at its rate once they end") {
  const double S = 4e8;  // 2 GPUs: each kernel copies S at 20 SMs x 2 GB/s = 40 GB/s alone
  World w(2, kSplit, Bandwidth::gbytes_per_s(100), Time());
  w.cost.copy_per_sm = 2e9;
  w.cost.copy_beside_gemms = 132.0 / 64;  // a GEMM on 64 SMs halves the copy rate
  OpGraph g;
  const GemmShape long_gemm{1024, 1024, 1024 * 150, DType::kBf16, 1};  // 64 tiles: 64 SMs, about 5 ms
  auto gemm = g.add_gemm(g.add_stream(0, 0, "compute"), long_gemm, "gemm");
  auto ops = g.add_collective(CollectiveKind::kAllToAll, S, {g.add_stream(0, 1, "comm"), g.add_stream(1, 1, "comm")}, "a2a");
  const auto r = w.run(g);
  const double tg = r.ops[gemm.v].end.to_seconds();
  REQUIRE(tg > 0.004);
  REQUIRE(tg < 0.006);
  // GPU 0 copies at 20 GB/s while the GEMM runs, then at 40: its kernel ends at tg + (S - 20e9 tg) / 40e9.
  CHECK(r.ops[ops[0].v].end.to_seconds() == Approx(tg + (S - 20e9 * tg) / 40e9).epsilon(1e-6));
  // Without GEMMs it is 10 ms, as the SM-bound all-to-all above.
  World alone(2, kSplit, Bandwidth::gbytes_per_s(100), Time());
  alone.cost.copy_per_sm = 2e9;
  alone.cost.copy_beside_gemms = 132.0 / 64;
  OpGraph g2;
  auto ops2 = g2.add_collective(CollectiveKind::kAllToAll, S, {g2.add_stream(0, 1, "comm"), g2.add_stream(1, 1, "comm")}, "a2a");
  CHECK(alone.run(g2).ops[ops2[0].v].end == Time::ms(10));
}

TEST_CASE("a collective starts only when every participant has launched") {
  World w(2, kSplit, Bandwidth::gbytes_per_s(100), Time());
  w.cost.copy_per_sm = 1e12;
  OpGraph g;
  auto c0 = g.add_stream(0, 1, "comm");
  auto c1 = g.add_stream(1, 1, "comm");
  auto pre = g.add_gemm(c1, kGemm, "pre");  // GPU 1 is late by one GEMM on 20 SMs
  auto ops = g.add_collective(CollectiveKind::kAllToAll, 2e8, {c0, c1}, "a2a");
  const auto r = w.run(g);
  const Time late = r.ops[pre.v].end;
  CHECK(r.ops[ops[0].v].start == Time());  // GPU 0's kernel launched and waited
  CHECK(r.ops[ops[0].v].end == late + Time::ms(1));
  CHECK(r.ops[ops[1].v].end == late + Time::ms(1));
}

TEST_CASE("a send is a one-sided put of L + S/B") {
  World w(2, kSplit, Bandwidth::gbytes_per_s(100), Time::us(3));
  w.cost.copy_per_sm = 1e12;
  OpGraph g;
  auto s = g.add_stream(0, 1, "p2p");
  auto op = g.add_send(s, 1, 1e9, "send");
  const auto r = w.run(g);
  CHECK(r.ops[op.v].end == Time::ms(10) + Time::us(3));
}

TEST_CASE("a put to several GPUs sends to all at once, sharing the source's copy rate") {
  World w(4, kSplit, Bandwidth::gbytes_per_s(100), Time::us(3));
  w.cost.copy_per_sm = 1e12;
  OpGraph g;
  auto s = g.add_stream(0, 1, "p2p");
  // 1 GB to GPU 1 and 0.5 + 0.5 GB to GPU 2 (summed): two flows on the source's up-link, 50 GB/s
  // each while both run; then the rest of neither (both carry 1 GB), so 20 ms in all.
  auto op = g.add_put(s, {1, 2, 2}, {1e9, 0.5e9, 0.5e9}, "put");
  const auto r = w.run(g);
  CHECK(r.ops[op.v].end == Time::ms(20) + Time::us(3));
  REQUIRE(g.collectives().back().ops.size() == 1);  // only the source runs a kernel
  CHECK(g.collectives().back().gpus == std::vector<int>{0, 1, 2});
  CHECK_THROWS_AS(g.add_put(s, {0}, {1.0}, "self"), std::invalid_argument);
  CHECK_THROWS_AS(g.add_put(s, {1}, {1.0, 2.0}, "sizes"), std::invalid_argument);
  CHECK(g.collectives().size() == 1);  // a refused put leaves the graph as it was
}

TEST_CASE("ops caught in a dependency cycle are reported as stuck, not run") {
  World w(1, kSplit, Bandwidth::gbytes_per_s(100), Time());
  OpGraph g;
  auto a = g.add_stream(0, 0, "a");
  auto b = g.add_stream(0, 1, "b");
  auto x = g.add_gemm(a, kGemm, "x");
  auto y = g.add_gemm(b, kGemm, "y");
  g.add_dep(x, y);
  g.add_dep(y, x);
  auto free_op = g.add_gemm(g.add_stream(0, 0, "c"), kGemm, "free");
  const auto r = w.run(g);
  CHECK(r.stuck_ops == std::vector<uint32_t>{x.v, y.v});
  CHECK(r.ops[free_op.v].done());
}

TEST_CASE("the same graph run twice gives identical timings") {
  auto once = [] {
    World w(8, kSplit, Bandwidth::gbytes_per_s(100), Time::us(1));
    OpGraph g;
    std::vector<cs::sim::StreamId> comm;
    for (int i = 0; i < 8; ++i) {
      auto s = g.add_stream(i, 0, "gemm");
      for (int k = 0; k < 5; ++k) g.add_gemm(s, kGemm, "g");
      comm.push_back(g.add_stream(i, 1, "comm"));
    }
    for (int k = 0; k < 3; ++k) g.add_collective(CollectiveKind::kAllToAll, 3e8 + k, comm, "a2a");
    std::vector<int64_t> out;
    for (const auto& t : w.run(g).ops) out.push_back(t.end.ps_count());
    return out;
  };
  CHECK(once() == once());
}

}  // namespace CS_TEST_FILE
