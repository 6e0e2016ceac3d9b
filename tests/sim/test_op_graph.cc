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

}  // namespace CS_TEST_FILE
