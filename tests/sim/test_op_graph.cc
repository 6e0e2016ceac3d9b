#include <algorithm>
#include <span>
#include <vector>

#include <catch2/catch.hpp>

#include "sim/op_graph.h"

namespace CS_TEST_FILE {  // unique per file: the tests build in unity batches

using cs::sim::ComputeKind;
using cs::sim::DType;
using cs::sim::Fp8Scaling;
using cs::sim::GemmShape;
using cs::sim::GenericCompute;
using cs::sim::OpGraph;

TEST_CASE("equal GEMM shapes and kernels are stored once and ops keep their own") {
  OpGraph g;
  const auto s0 = g.add_stream(0, 0, "a");
  const auto s1 = g.add_stream(1, 0, "a");
  const GemmShape fp8{4096, 7168, 2048, DType::kFp8, 1};
  GemmShape tiles = fp8;
  tiles.scaling = Fp8Scaling::kTiles;
  const auto a = g.add_gemm(s0, fp8, "up");
  const auto b = g.add_gemm(s1, fp8, "up");
  const auto c = g.add_gemm(s1, tiles, "wgrad");
  CHECK(g.gemms().size() == 2);
  CHECK(g.ops()[a.v].payload == g.ops()[b.v].payload);
  CHECK(g.ops()[c.v].payload != g.ops()[a.v].payload);
  CHECK(g.gemms()[g.ops()[c.v].payload].scaling == Fp8Scaling::kTiles);

  const GenericCompute norm{1e6, 4e6, DType::kBf16};
  GenericCompute attention = norm;
  attention.kind = ComputeKind::kAttentionForward;
  GenericCompute zero{0, 0, DType::kBf16}, negative_zero{-0.0, 0, DType::kBf16};
  const auto n0 = g.add_compute(s0, norm, "norm");
  const auto n1 = g.add_compute(s1, norm, "norm");
  const auto at = g.add_compute(s0, attention, "attn");
  const auto z = g.add_compute(s0, zero, "z");
  const auto nz = g.add_compute(s0, negative_zero, "nz");
  CHECK(g.computes().size() == 4);  // norm, attention, and 0.0 apart from -0.0 (bit for bit)
  CHECK(g.ops()[n0.v].payload == g.ops()[n1.v].payload);
  CHECK(g.ops()[at.v].payload != g.ops()[n0.v].payload);
  CHECK(g.ops()[z.v].payload != g.ops()[nz.v].payload);
  CHECK(g.computes()[g.ops()[at.v].payload].kind == ComputeKind::kAttentionForward);
  CHECK(g.ops().size() == 8);
  CHECK(g.streams()[s1.v].ops.size() == 3);
}

TEST_CASE("dependencies listed per op keep the order added and dependents come out ascending") {
  OpGraph g;
  const auto s = g.add_stream(0, 0, "a");
  std::vector<uint32_t> op;
  for (int i = 0; i < 5; ++i) op.push_back(g.add_compute(s, GenericCompute{1e6, 0, DType::kBf16}, "k").v);
  const auto dep = [&](int later, int earlier) { g.add_dep({op[later]}, {op[earlier]}); };
  dep(4, 1);
  dep(2, 0);
  dep(4, 0);
  dep(3, 0);
  dep(4, 1);  // twice on the same op: listed twice, waited for twice
  REQUIRE(g.deps().size() == 5);
  CHECK(g.deps()[0].later == op[4]);
  CHECK(g.deps()[0].earlier == op[1]);
  const cs::sim::OpLists deps = g.deps_of_each(), dependents = g.dependents_of_each();
  const auto list = [](std::span<const uint32_t> v) { return std::vector<uint32_t>(v.begin(), v.end()); };
  CHECK(list(deps.of(op[4])) == std::vector<uint32_t>{op[1], op[0], op[1]});
  CHECK(list(deps.of(op[2])) == std::vector<uint32_t>{op[0]});
  CHECK(deps.of(op[0]).empty());
  CHECK(deps.of(op[1]).empty());
  CHECK(list(dependents.of(op[0])) == std::vector<uint32_t>{op[2], op[3], op[4]});
  CHECK(list(dependents.of(op[1])) == std::vector<uint32_t>{op[4], op[4]});
  CHECK(dependents.of(op[4]).empty());
  CHECK(dependents.ops() == g.ops().size());
  CHECK(dependents.listed_ops() == 2);  // op[0] and op[1]
  CHECK(deps.listed_ops() == 3);        // op[2], op[3] and op[4]
  CHECK(OpGraph{}.dependents_of_each().ops() == 0);
}

TEST_CASE("lists of ops across many 64-op words are found by rank") {
  OpGraph g;
  const auto s = g.add_stream(0, 0, "a");
  constexpr uint32_t kOps = 300;
  for (uint32_t i = 0; i < kOps; ++i) g.add_compute(s, GenericCompute{1e6, 0, DType::kBf16}, "k");
  // Op i waits for every op j < i with i % (j + 2) == 0 and j % 7 == 3: lists of several lengths,
  // words with none, and ops at both ends of a word (63, 64, 127, 128, 299).
  std::vector<std::vector<uint32_t>> want_deps(kOps), want_dependents(kOps);
  for (uint32_t i = 0; i < kOps; ++i)
    for (uint32_t j = 0; j < i; ++j)
      if (i % (j + 2) == 0 && j % 7 == 3 && (i < 190 || i > 250)) {
        g.add_dep({i}, {j});
        want_deps[i].push_back(j);
        want_dependents[j].push_back(i);
      }
  for (const uint32_t edge : {63u, 64u, 127u, 128u, 299u}) {
    g.add_dep({edge}, {0});
    want_deps[edge].push_back(0);
    want_dependents[0].push_back(edge);
  }
  std::sort(want_dependents[0].begin(), want_dependents[0].end());
  const cs::sim::OpLists deps = g.deps_of_each(), dependents = g.dependents_of_each();
  size_t listed = 0;
  for (uint32_t i = 0; i < kOps; ++i) {
    const auto d = deps.of(i), t = dependents.of(i);
    CHECK(std::vector<uint32_t>(d.begin(), d.end()) == want_deps[i]);
    CHECK(std::vector<uint32_t>(t.begin(), t.end()) == want_dependents[i]);
    listed += !want_deps[i].empty();
  }
  CHECK(deps.listed_ops() == listed);
  CHECK(deps.ops() == kOps);
}

}  // namespace CS_TEST_FILE
