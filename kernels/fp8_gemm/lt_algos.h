// Every cuBLASLt algorithm configuration that can run one GEMM, not only the heuristic's first: the
// heuristic's ranked list, then each algorithm id with each output tile it lists
// (CUBLASLT_ALGO_CAP_TILE_IDS) at its first accepted stage count, checked by
// cublasLtMatmulAlgoCheck.
// cs_fp8_gemm --algos all times them all, so that a tile the heuristic never picks (64-row and
// narrow tiles for small m, say) is measured on the library's own kernels.
#pragma once

#include <cublasLt.h>

#include <string>
#include <vector>

namespace cs::kernels::fp8_gemm {

// The output tile of a cublasLtMatmulTile_t as cuBLASLt names it (rows x columns of its D, which is
// n x m of ours when the weights take the A slot); {0, 0} where the id is not in the table made
// from this toolkit's cublasLt.h at build time.
struct LtTile {
  int rows = 0;
  int cols = 0;
};
LtTile lt_tile(int tile_id);
std::string lt_tile_name(int tile_id);  // "64x16", or "id 634" when unknown

// An algorithm's configuration as cublasLtMatmulAlgoConfigGetAttribute reads it; -1 (split_k: 1)
// where it cannot be read.
struct LtAlgoConfig {
  int algo_id = -1;
  int tile_id = -1;    // cublasLtMatmulTile_t
  int stages_id = -1;  // cublasLtMatmulStages_t
  int split_k = 1;
  int cluster_shape_id = -1;  // cublasLtClusterShape_t
};
LtAlgoConfig lt_algo_config(const cublasLtMatmulAlgo_t& algo);

// The matmul that `desc` and the layouts describe (FP8 E4M3 A and B, BF16 C and D, FP32 compute).
// heuristic_count: how many of the heuristic's ranked results to take first. Duplicates (same id,
// tile, stages, split-K and cluster shape) are dropped; order: heuristic rank, then id and tile.
// What the search saw, for the program's log.
struct LtSearchCounts {
  int heuristic = 0;     // configurations the heuristic returned
  int algo_ids = 0;      // algorithm ids for these types
  int tiles_listed = 0;  // tiles the ids listed, summed
  int tiles_tried = 0;   // (id, tile) pairs checked
  int accepted = 0;      // of those, pairs some stage count ran
};
std::vector<cublasLtMatmulAlgo_t> lt_candidate_algos(cublasLtHandle_t handle, cublasLtMatmulDesc_t desc,
                                                     cublasLtMatrixLayout_t a, cublasLtMatrixLayout_t b,
                                                     cublasLtMatrixLayout_t d, std::size_t workspace_bytes,
                                                     int heuristic_count, LtSearchCounts* counts = nullptr);

}  // namespace cs::kernels::fp8_gemm
