// One FP8 GEMM shape through cuBLASLt: E4M3 inputs, FP32 accumulation, BF16 output, with
// DeepSeek's fine-grained scaling (1x128 tiles of X, 128x128 blocks of W) or one scale per tensor.
// Grouped shapes are run as one cublasLtMatmul call per group, back to back in one stream: this
// cuBLASLt (13.x on CUDA 13.0) has no grouped matmul API (CUBLASLT_BATCH_MODE_GROUPED came later).
#pragma once

#include <cublasLt.h>
#include <cuda_runtime_api.h>

#include <string>
#include <vector>

#include "fp8_gemm/lt_algos.h"
#include "fp8_gemm/operands.h"

namespace cs::kernels::fp8_gemm {

enum class Scaling {
  kBlock,      // A/B scale modes VEC128_32F (X) and BLK128x128_32F (W)
  kPerTensor,  // SCALAR_32F for both
};
const char* scaling_name(Scaling s);   // JSON: "block_1x128_128x128" or "per_tensor"
const char* scaling_label(Scaling s);  // console: "blk128" or "tensor"

// Which tensor takes cuBLASLt's A slot. cuBLASLt is column-major; both operands are passed with
// k innermost (TRANSA=T, TRANSB=N, the only FP8 layout on Hopper). With W as A, D comes out
// column-major n x m, which is DeepGEMM's row-major m x n.
enum class Orientation { kWeightsAsA, kActivationsAsA };
const char* orientation_name(Orientation o);

// The configuration that runs (the heuristic's choice, or one given); -1 where not read.
struct AlgoInfo : LtAlgoConfig {
  float waves = 0;      // the heuristic's waves count (1.0: one full wave on its SM count)
  bool forced = false;  // a configuration given to LtGemm, not the heuristic's first
};

class LtGemm {
 public:
  // Describes the GEMM of `ops` and asks the heuristic for an algorithm. sm_count_target > 0 sets
  // CUBLASLT_MATMUL_DESC_SM_COUNT_TARGET. Does not throw for an unsupported combination:
  // supported() is then false and why_not() says why. `ops` must outlive this object. With `algo`,
  // that configuration (one of candidate_algos()) runs instead of the heuristic's, if
  // cublasLtMatmulAlgoCheck accepts it.
  LtGemm(cublasLtHandle_t handle, const Operands& ops, Scaling scaling, Orientation orientation, int sm_count_target,
         void* workspace, std::size_t workspace_bytes, const cublasLtMatmulAlgo_t* algo = nullptr);
  ~LtGemm();
  LtGemm(const LtGemm&) = delete;
  LtGemm& operator=(const LtGemm&) = delete;

  bool supported() const { return why_not_.empty(); }
  const std::string& why_not() const { return why_not_; }
  const AlgoInfo& algo_info() const { return info_; }
  Scaling scaling() const { return scaling_; }
  Orientation orientation() const { return orientation_; }
  OutputLayout output_layout() const;

  // Every configuration that can run this GEMM (fp8_gemm/lt_algos.h); empty unless supported().
  std::vector<cublasLtMatmulAlgo_t> candidate_algos(int heuristic_count, LtSearchCounts* counts = nullptr) const;

  // Enqueues every group's GEMM on `stream`; returns the first status that is not success.
  cublasStatus_t enqueue(cudaStream_t stream) const;

 private:
  void read_algo_info();  // info_ from algo_'s configuration
  bool set(cublasLtMatmulDesc_t desc, cublasLtMatmulDescAttributes_t attr, const void* value, std::size_t size,
           const char* what);

  cublasLtHandle_t handle_;
  const Operands& ops_;
  Scaling scaling_;
  Orientation orientation_;
  void* workspace_;
  std::size_t workspace_bytes_;
  std::vector<cublasLtMatmulDesc_t> descs_;  // one per group (the scale pointers differ)
  cublasLtMatrixLayout_t a_layout_ = nullptr, b_layout_ = nullptr, d_layout_ = nullptr;
  cublasLtMatmulAlgo_t algo_{};
  AlgoInfo info_;
  std::string why_not_;
  float alpha_ = 1.0f;
  float beta_ = 0.0f;
};

std::string cublas_status_name(cublasStatus_t s);
// The loaded cuBLASLt's version, "13.1.0" for cublasLtGetVersion() == 130100.
std::string cublaslt_version_string();

}  // namespace cs::kernels::fp8_gemm
