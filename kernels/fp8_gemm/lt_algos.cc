#include "fp8_gemm/lt_algos.h"

#include <array>
#include <cstdint>
#include <set>
#include <tuple>

namespace cs::kernels::fp8_gemm {

namespace {

struct TileEntry {
  int id, rows, cols;
};
// {id, rows, cols} of every CUBLASLT_MATMUL_TILE_<rows>x<cols> in the toolkit's cublasLt.h, written
// by the build (kernels/CMakeLists.txt, fp8_gemm/build_nvcc.sh).
constexpr TileEntry kTiles[] = {
#include "lt_tiles.inc"
};

using Key = std::tuple<int, int, int, int, int>;

Key key_of(const cublasLtMatmulAlgo_t& algo) {
  const LtAlgoConfig c = lt_algo_config(algo);
  return {c.algo_id, c.tile_id, c.stages_id, c.split_k, c.cluster_shape_id};
}

std::vector<std::uint32_t> cap_list(const cublasLtMatmulAlgo_t& algo, cublasLtMatmulAlgoCapAttributes_t attr) {
  std::size_t bytes = 0;
  if (cublasLtMatmulAlgoCapGetAttribute(&algo, attr, nullptr, 0, &bytes) != CUBLAS_STATUS_SUCCESS || bytes == 0)
    return {};
  std::vector<std::uint32_t> out(bytes / sizeof(std::uint32_t));
  if (cublasLtMatmulAlgoCapGetAttribute(&algo, attr, out.data(), bytes, &bytes) != CUBLAS_STATUS_SUCCESS) return {};
  return out;
}

}  // namespace

LtAlgoConfig lt_algo_config(const cublasLtMatmulAlgo_t& algo) {
  LtAlgoConfig out;
  const auto read = [&](cublasLtMatmulAlgoConfigAttributes_t attr, auto value, int& to) {
    std::size_t written = 0;
    if (cublasLtMatmulAlgoConfigGetAttribute(&algo, attr, &value, sizeof value, &written) == CUBLAS_STATUS_SUCCESS)
      to = static_cast<int>(value);
  };
  read(CUBLASLT_ALGO_CONFIG_ID, std::int32_t{}, out.algo_id);
  read(CUBLASLT_ALGO_CONFIG_TILE_ID, std::uint32_t{}, out.tile_id);
  read(CUBLASLT_ALGO_CONFIG_STAGES_ID, std::uint32_t{}, out.stages_id);
  read(CUBLASLT_ALGO_CONFIG_SPLITK_NUM, std::int32_t{}, out.split_k);
  read(CUBLASLT_ALGO_CONFIG_CLUSTER_SHAPE_ID, std::uint16_t{}, out.cluster_shape_id);
  return out;
}

LtTile lt_tile(int tile_id) {
  for (const TileEntry& t : kTiles) {
    if (t.id == tile_id) return {t.rows, t.cols};
  }
  return {};
}

std::string lt_tile_name(int tile_id) {
  const LtTile t = lt_tile(tile_id);
  if (t.rows == 0) return "id " + std::to_string(tile_id);
  return std::to_string(t.rows) + "x" + std::to_string(t.cols);
}

std::vector<cublasLtMatmulAlgo_t> lt_candidate_algos(cublasLtHandle_t handle, cublasLtMatmulDesc_t desc,
                                                     cublasLtMatrixLayout_t a, cublasLtMatrixLayout_t b,
                                                     cublasLtMatrixLayout_t d, std::size_t workspace_bytes,
                                                     int heuristic_count, LtSearchCounts* counts) {
  LtSearchCounts unused;
  LtSearchCounts& seen = counts != nullptr ? *counts : unused;
  seen = {};
  std::vector<cublasLtMatmulAlgo_t> out;
  std::set<Key> keys;
  auto add = [&](const cublasLtMatmulAlgo_t& algo) {
    if (keys.insert(key_of(algo)).second) out.push_back(algo);
  };

  cublasLtMatmulPreference_t pref = nullptr;
  if (cublasLtMatmulPreferenceCreate(&pref) == CUBLAS_STATUS_SUCCESS) {
    cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &workspace_bytes,
                                         sizeof workspace_bytes);
    std::vector<cublasLtMatmulHeuristicResult_t> results(static_cast<std::size_t>(heuristic_count));
    int returned = 0;
    if (heuristic_count > 0 && cublasLtMatmulAlgoGetHeuristic(handle, desc, a, b, d, d, pref, heuristic_count,
                                                              results.data(), &returned) == CUBLAS_STATUS_SUCCESS) {
      seen.heuristic = returned;
      for (int i = 0; i < returned; ++i) {
        if (results[static_cast<std::size_t>(i)].state == CUBLAS_STATUS_SUCCESS)
          add(results[static_cast<std::size_t>(i)].algo);
      }
    }
    cublasLtMatmulPreferenceDestroy(pref);
  }

  std::array<int, 256> ids{};
  int n_ids = 0;
  if (cublasLtMatmulAlgoGetIds(handle, CUBLAS_COMPUTE_32F, CUDA_R_32F, CUDA_R_8F_E4M3, CUDA_R_8F_E4M3, CUDA_R_16BF,
                               CUDA_R_16BF, static_cast<int>(ids.size()), ids.data(),
                               &n_ids) != CUBLAS_STATUS_SUCCESS) {
    return out;
  }
  seen.algo_ids = n_ids;
  for (int i = 0; i < n_ids; ++i) {
    cublasLtMatmulAlgo_t algo{};
    if (cublasLtMatmulAlgoInit(handle, CUBLAS_COMPUTE_32F, CUDA_R_32F, CUDA_R_8F_E4M3, CUDA_R_8F_E4M3, CUDA_R_16BF,
                               CUDA_R_16BF, ids[static_cast<std::size_t>(i)], &algo) != CUBLAS_STATUS_SUCCESS) {
      continue;
    }
    std::vector<std::uint32_t> stages = cap_list(algo, CUBLASLT_ALGO_CAP_STAGES_IDS);
    stages.insert(stages.begin(), CUBLASLT_MATMUL_STAGES_UNDEFINED);  // the library's own choice first
    const std::vector<std::uint32_t> tiles = cap_list(algo, CUBLASLT_ALGO_CAP_TILE_IDS);
    seen.tiles_listed += static_cast<int>(tiles.size());
    for (std::uint32_t tile : tiles) {
      ++seen.tiles_tried;
      for (std::uint32_t stage : stages) {
        cublasLtMatmulAlgo_t cand = algo;
        cublasLtMatmulAlgoConfigSetAttribute(&cand, CUBLASLT_ALGO_CONFIG_TILE_ID, &tile, sizeof tile);
        cublasLtMatmulAlgoConfigSetAttribute(&cand, CUBLASLT_ALGO_CONFIG_STAGES_ID, &stage, sizeof stage);
        cublasLtMatmulHeuristicResult_t r{};
        if (cublasLtMatmulAlgoCheck(handle, desc, a, b, d, d, &cand, &r) == CUBLAS_STATUS_SUCCESS &&
            r.state == CUBLAS_STATUS_SUCCESS && r.workspaceSize <= workspace_bytes) {
          add(cand);
          ++seen.accepted;
          break;  // one stage count per tile: the first the library accepts
        }
      }
    }
  }
  return out;
}

}  // namespace cs::kernels::fp8_gemm
