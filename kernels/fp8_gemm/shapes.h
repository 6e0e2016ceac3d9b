// The GEMM shapes cs_fp8_gemm measures, each with where it comes from (shared/REFERENCE.md:
// "DeepGEMM on H800" and the DeepSeek-V3 model and training setup).
//
// Every shape computes, for each group g < groups, in DeepGEMM's convention:
//   D[g] (m x n, row-major BF16) = X[g] (m x k, row-major E4M3) * W[g]^T (W: n x k, row-major E4M3)
// X is the activation (scaled per 1x128 tile), W the weight (scaled per 128x128 block). Grouped
// shapes use DeepGEMM's contiguous layout: the groups' X are stacked into one (groups*m) x k
// matrix, their W into groups x n x k, their D into (groups*m) x n.
#pragma once

#include <string>
#include <vector>

namespace cs::kernels::fp8_gemm {

struct GemmShape {
  std::string name;    // short id, "deepgemm.dense", "v3.mla.wq_a.fwd"
  std::string origin;  // where the shape comes from, for the JSON
  int m = 0;           // rows of X and D per group (tokens)
  int n = 0;           // rows of W, columns of D (output features)
  int k = 0;           // reduction length (input features), a multiple of 128 here
  int groups = 1;

  // 2 m n k per group: what DeepGEMM's TFLOPS count.
  double flops() const { return 2.0 * groups * m * static_cast<double>(n) * k; }
  // Bytes DeepGEMM's GB/s count: X and W read once (1 byte each), D written once (BF16); the FP32
  // scale factors (under 1% of that) are left out, as DeepGEMM does.
  double bytes() const {
    return static_cast<double>(groups) *
           (static_cast<double>(m) * k + static_cast<double>(n) * k + 2.0 * m * static_cast<double>(n));
  }
};

namespace detail {

// The six (n, k) pairs of DeepGEMM's dense table and the DeepSeek-V3 weight each one is.
struct NkPair {
  int n;
  int k;
  const char* weight;
};
inline const std::vector<NkPair>& deepgemm_nk() {
  static const std::vector<NkPair> pairs = {
      {2112, 7168, "MLA q_a and kv_a down-projections fused: 7168 -> 1536 + 512 + 64"},
      {24576, 1536, "MLA q_b up-projection: 1536 -> 128 heads x (128 + 64)"},
      {32768, 512, "MLA kv_b up-projection: 512 -> 128 heads x (128 + 128)"},
      {7168, 16384, "MLA output projection: 128 heads x 128 -> 7168"},
      {4096, 7168, "MoE expert gate and up fused: 7168 -> 2 x 2048"},
      {7168, 2048, "MoE expert down: 2048 -> 7168"},
  };
  return pairs;
}

}  // namespace detail

// DeepGEMM's dense table: m in {64, 128, 4096} x the six (n, k) pairs.
inline std::vector<GemmShape> deepgemm_dense_shapes() {
  std::vector<GemmShape> out;
  for (int m : {64, 128, 4096}) {
    for (const auto& p : detail::deepgemm_nk()) {
      out.push_back({"deepgemm.dense", std::string("DeepGEMM dense table (H800); ") + p.weight, m, p.n, p.k, 1});
    }
  }
  return out;
}

// DeepGEMM's grouped contiguous-layout cases. 4 x 8192 is also DeepSeek-V3's training case: 64-way
// EP puts 4 routed experts on a GPU, and 4096 tokens x 64 ranks x top-8 / 256 experts = 8192 tokens
// per expert (derived).
inline std::vector<GemmShape> deepgemm_grouped_shapes() {
  std::vector<GemmShape> out;
  for (const auto& [groups, m] : {std::pair{4, 8192}, std::pair{8, 4096}}) {
    out.push_back({"deepgemm.grouped",
                   "DeepGEMM grouped contiguous table (H800); MoE expert gate and up fused: 7168 -> 2 x 2048", m,
                   4096, 7168, groups});
    out.push_back({"deepgemm.grouped", "DeepGEMM grouped contiguous table (H800); MoE expert down: 2048 -> 7168",
                   m, 7168, 2048, groups});
  }
  return out;
}

// GEMMs of a DeepSeek-V3 layer in training at 4096 tokens (one sequence) that DeepGEMM's table
// does not already hold; dims from REFERENCE.md's model table (hidden 7168, 128 heads of 128, q
// compression 1536, dense FFN 18432, expert FFN 2048). dgrad: dX = dY W; wgrad: dW = dY^T X, so
// the token count becomes k.
inline std::vector<GemmShape> v3_training_shapes() {
  return {
      {"v3.mla.wq_a.fwd", "DeepSeek-V3 MLA q_a forward alone (7168 -> 1536), 4096 tokens", 4096, 1536, 7168, 1},
      {"v3.mla.wo.dgrad", "DeepSeek-V3 MLA output projection input gradient: dY (4096 x 7168) x Wo (7168 x 16384)",
       4096, 16384, 7168, 1},
      {"v3.dense_ffn.up.fwd",
       "DeepSeek-V3 dense FFN (first 3 layers) gate and up fused forward: 7168 -> 2 x 18432, 4096 tokens", 4096,
       36864, 7168, 1},
      {"v3.dense_ffn.down.fwd", "DeepSeek-V3 dense FFN down forward: 18432 -> 7168, 4096 tokens", 4096, 7168, 18432, 1},
      {"v3.moe.expert.up.wgrad",
       "DeepSeek-V3 expert gate and up weight gradient: dW (4096 x 7168) over 8192 tokens per expert", 4096, 7168,
       8192, 1},
      {"v3.mla.wq_b.wgrad", "DeepSeek-V3 MLA q_b weight gradient: dW (24576 x 1536) over 4096 tokens", 24576, 1536,
       4096, 1},
  };
}

// A few shapes that exercise every path (small m, n not a multiple of 128, grouped) for a first run.
inline std::vector<GemmShape> quick_shapes() {
  std::vector<GemmShape> out;
  const auto dense = deepgemm_dense_shapes();
  out.push_back(dense[0]);   // m=64 n=2112 k=7168
  out.push_back(dense[17]);  // m=4096 n=7168 k=2048
  out.push_back(deepgemm_grouped_shapes()[1]);  // 4 x m=8192 n=7168 k=2048
  return out;
}

// "all", "quick", "deepgemm", "grouped", "v3"; empty for an unknown name.
inline std::vector<GemmShape> shape_set(const std::string& set) {
  std::vector<GemmShape> out;
  auto append = [&out](const std::vector<GemmShape>& v) { out.insert(out.end(), v.begin(), v.end()); };
  if (set == "quick") return quick_shapes();
  if (set == "deepgemm" || set == "all") {
    append(deepgemm_dense_shapes());
    append(deepgemm_grouped_shapes());
  }
  if (set == "grouped") append(deepgemm_grouped_shapes());
  if (set == "v3" || set == "all") append(v3_training_shapes());
  return out;
}

}  // namespace cs::kernels::fp8_gemm
