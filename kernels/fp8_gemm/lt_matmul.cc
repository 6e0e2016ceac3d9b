#include "fp8_gemm/lt_matmul.h"

#include <cstdint>
#include <string>

#include "fp8_gemm/lt_algos.h"

namespace cs::kernels::fp8_gemm {

const char* scaling_name(Scaling s) { return s == Scaling::kBlock ? "block_1x128_128x128" : "per_tensor"; }
const char* scaling_label(Scaling s) { return s == Scaling::kBlock ? "blk128" : "tensor"; }
const char* orientation_name(Orientation o) {
  return o == Orientation::kWeightsAsA ? "weights_as_a" : "activations_as_a";
}

std::string cublaslt_version_string() {
  const std::size_t v = cublasLtGetVersion();
  return std::to_string(v / 10000) + "." + std::to_string(v / 100 % 100) + "." + std::to_string(v % 100);
}

std::string cublas_status_name(cublasStatus_t s) {
  const char* name = cublasLtGetStatusName(s);
  return name != nullptr ? name : "cublasStatus " + std::to_string(static_cast<int>(s));
}

bool LtGemm::set(cublasLtMatmulDesc_t desc, cublasLtMatmulDescAttributes_t attr, const void* value,
                 std::size_t size, const char* what) {
  const cublasStatus_t st = cublasLtMatmulDescSetAttribute(desc, attr, value, size);
  if (st != CUBLAS_STATUS_SUCCESS && why_not_.empty()) {
    why_not_ = std::string("cublasLtMatmulDescSetAttribute(") + what + "): " + cublas_status_name(st);
  }
  return st == CUBLAS_STATUS_SUCCESS;
}

LtGemm::LtGemm(cublasLtHandle_t handle, const Operands& ops, Scaling scaling, Orientation orientation,
               int sm_count_target, void* workspace, std::size_t workspace_bytes, const cublasLtMatmulAlgo_t* algo)
    : handle_(handle),
      ops_(ops),
      scaling_(scaling),
      orientation_(orientation),
      workspace_(workspace),
      workspace_bytes_(workspace_bytes) {
  const GemmShape& s = ops.shape();
  const bool w_is_a = orientation == Orientation::kWeightsAsA;
  const std::uint64_t a_cols = static_cast<std::uint64_t>(w_is_a ? s.n : s.m);
  const std::uint64_t b_cols = static_cast<std::uint64_t>(w_is_a ? s.m : s.n);
  const auto k = static_cast<std::uint64_t>(s.k);

  cublasStatus_t st = cublasLtMatrixLayoutCreate(&a_layout_, CUDA_R_8F_E4M3, k, a_cols, static_cast<std::int64_t>(k));
  if (st == CUBLAS_STATUS_SUCCESS)
    st = cublasLtMatrixLayoutCreate(&b_layout_, CUDA_R_8F_E4M3, k, b_cols, static_cast<std::int64_t>(k));
  if (st == CUBLAS_STATUS_SUCCESS)
    st = cublasLtMatrixLayoutCreate(&d_layout_, CUDA_R_16BF, a_cols, b_cols, static_cast<std::int64_t>(a_cols));
  if (st != CUBLAS_STATUS_SUCCESS) {
    why_not_ = "cublasLtMatrixLayoutCreate: " + cublas_status_name(st);
    return;
  }

  const std::int32_t x_mode = scaling == Scaling::kBlock ? CUBLASLT_MATMUL_MATRIX_SCALE_VEC128_32F
                                                         : CUBLASLT_MATMUL_MATRIX_SCALE_SCALAR_32F;
  const std::int32_t w_mode = scaling == Scaling::kBlock ? CUBLASLT_MATMUL_MATRIX_SCALE_BLK128x128_32F
                                                         : CUBLASLT_MATMUL_MATRIX_SCALE_SCALAR_32F;
  const std::int32_t a_mode = w_is_a ? w_mode : x_mode;
  const std::int32_t b_mode = w_is_a ? x_mode : w_mode;
  const cublasOperation_t trans_a = CUBLAS_OP_T;
  const cublasOperation_t trans_b = CUBLAS_OP_N;
  const std::int32_t sm_target = sm_count_target;

  for (int g = 0; g < s.groups; ++g) {
    cublasLtMatmulDesc_t desc = nullptr;
    st = cublasLtMatmulDescCreate(&desc, CUBLAS_COMPUTE_32F, CUDA_R_32F);
    if (st != CUBLAS_STATUS_SUCCESS) {
      why_not_ = "cublasLtMatmulDescCreate: " + cublas_status_name(st);
      return;
    }
    descs_.push_back(desc);
    // With per-tensor scaling every scale of a tensor is equal (Operands::fill), and the first is it.
    const void* a_scale = w_is_a ? static_cast<const void*>(ops.sw(g)) : static_cast<const void*>(ops.sx(g));
    const void* b_scale = w_is_a ? static_cast<const void*>(ops.sx(g)) : static_cast<const void*>(ops.sw(g));
    bool ok = set(desc, CUBLASLT_MATMUL_DESC_TRANSA, &trans_a, sizeof trans_a, "TRANSA") &&
              set(desc, CUBLASLT_MATMUL_DESC_TRANSB, &trans_b, sizeof trans_b, "TRANSB") &&
              set(desc, CUBLASLT_MATMUL_DESC_A_SCALE_MODE, &a_mode, sizeof a_mode, "A_SCALE_MODE") &&
              set(desc, CUBLASLT_MATMUL_DESC_B_SCALE_MODE, &b_mode, sizeof b_mode, "B_SCALE_MODE") &&
              set(desc, CUBLASLT_MATMUL_DESC_A_SCALE_POINTER, &a_scale, sizeof a_scale, "A_SCALE_POINTER") &&
              set(desc, CUBLASLT_MATMUL_DESC_B_SCALE_POINTER, &b_scale, sizeof b_scale, "B_SCALE_POINTER");
    if (ok && sm_target > 0) {
      ok = set(desc, CUBLASLT_MATMUL_DESC_SM_COUNT_TARGET, &sm_target, sizeof sm_target, "SM_COUNT_TARGET");
    }
    if (!ok) return;
  }

  if (algo != nullptr) {
    cublasLtMatmulHeuristicResult_t checked{};
    st = cublasLtMatmulAlgoCheck(handle_, descs_[0], a_layout_, b_layout_, d_layout_, d_layout_, algo, &checked);
    if (st != CUBLAS_STATUS_SUCCESS || checked.state != CUBLAS_STATUS_SUCCESS) {
      why_not_ = "cublasLtMatmulAlgoCheck: " + cublas_status_name(st != CUBLAS_STATUS_SUCCESS ? st : checked.state);
      return;
    }
    algo_ = *algo;
    info_.waves = checked.wavesCount;
    info_.forced = true;
    read_algo_info();
    return;
  }
  cublasLtMatmulPreference_t pref = nullptr;
  st = cublasLtMatmulPreferenceCreate(&pref);
  if (st == CUBLAS_STATUS_SUCCESS) {
    st = cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &workspace_bytes_,
                                              sizeof workspace_bytes_);
  }
  cublasLtMatmulHeuristicResult_t result{};
  int returned = 0;
  if (st == CUBLAS_STATUS_SUCCESS) {
    st = cublasLtMatmulAlgoGetHeuristic(handle_, descs_[0], a_layout_, b_layout_, d_layout_, d_layout_, pref, 1,
                                        &result, &returned);
  }
  if (pref != nullptr) cublasLtMatmulPreferenceDestroy(pref);
  if (st != CUBLAS_STATUS_SUCCESS) {
    why_not_ = "cublasLtMatmulAlgoGetHeuristic: " + cublas_status_name(st);
    return;
  }
  if (returned < 1 || result.state != CUBLAS_STATUS_SUCCESS) {
    why_not_ = "cublasLtMatmulAlgoGetHeuristic found no algorithm";
    return;
  }
  algo_ = result.algo;
  info_.waves = result.wavesCount;
  read_algo_info();
}

std::vector<cublasLtMatmulAlgo_t> LtGemm::candidate_algos(int heuristic_count, LtSearchCounts* counts) const {
  if (!supported()) return {};
  return lt_candidate_algos(handle_, descs_[0], a_layout_, b_layout_, d_layout_, workspace_bytes_, heuristic_count,
                            counts);
}

void LtGemm::read_algo_info() { static_cast<LtAlgoConfig&>(info_) = lt_algo_config(algo_); }

LtGemm::~LtGemm() {
  for (cublasLtMatmulDesc_t d : descs_) cublasLtMatmulDescDestroy(d);
  if (d_layout_ != nullptr) cublasLtMatrixLayoutDestroy(d_layout_);
  if (b_layout_ != nullptr) cublasLtMatrixLayoutDestroy(b_layout_);
  if (a_layout_ != nullptr) cublasLtMatrixLayoutDestroy(a_layout_);
}

OutputLayout LtGemm::output_layout() const {
  const GemmShape& s = ops_.shape();
  if (orientation_ == Orientation::kWeightsAsA) return OutputLayout{s.n, 1};
  return OutputLayout{1, s.m};
}

cublasStatus_t LtGemm::enqueue(cudaStream_t stream) const {
  const bool w_is_a = orientation_ == Orientation::kWeightsAsA;
  for (int g = 0; g < ops_.shape().groups; ++g) {
    const void* a = w_is_a ? static_cast<const void*>(ops_.w(g)) : static_cast<const void*>(ops_.x(g));
    const void* b = w_is_a ? static_cast<const void*>(ops_.x(g)) : static_cast<const void*>(ops_.w(g));
    void* d = ops_.d(g);
    const cublasStatus_t st =
        cublasLtMatmul(handle_, descs_[static_cast<std::size_t>(g)], &alpha_, a, a_layout_, b, b_layout_, &beta_, d,
                       d_layout_, d, d_layout_, &algo_, workspace_, workspace_bytes_, stream);
    if (st != CUBLAS_STATUS_SUCCESS) return st;
  }
  return CUBLAS_STATUS_SUCCESS;
}

}  // namespace cs::kernels::fp8_gemm
