#include "calibrate/deepgemm_fit.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "calibrate/fit_stats.h"
#include "calibrate/levenberg_marquardt.h"
#include "hw/gemm_model.h"
#include "hw/user_error.h"

namespace cs::calibrate {

namespace {

constexpr int kTableSms = 132;  // the H800's, on which DeepGEMM's table was taken

// The profile in DeepGEMM's tiles with its FP8 tile time and MMA rates moved by (added tile us,
// rate scale).
hw::GpuProfile with_deepgemm(const hw::GpuProfile& p, double tile_us_added, double mma_scale) {
  hw::GpuProfile q = p;
  q.gemm.tiling = hw::GemmTiling::kDeepGemm;
  q.gemm_tiles_source =
      "DeepGEMM's get_best_configs of 2025-02 (repo deepseek-ai/DeepGEMM, deep_gemm/jit_kernels/gemm.py): 64 rows for "
      "m <= 64, else 128; 16 to 128 columns, the fewest waves, then the fullest last wave; no split-K";
  q.gemm.tile_us = p.gemm.tile_us + tile_us_added;
  q.gemm.sm_tflops = p.gemm.sm_tflops * mma_scale;
  q.gemm.chip_tflops = p.gemm.chip_tflops * mma_scale;
  return q;
}

std::string stats(const std::vector<PublishedCheck>& rows) {
  const FitStats s = published_stats(rows);
  return fmt::format("median error {:.1f}%, worst {:.1f}%", 100 * s.median_error, 100 * s.worst_error);
}

}  // namespace

DeepGemmFit fit_deepgemm(const hw::GpuProfile& p, const hw::GpuSpec& gpu, std::span<const DeepGemmRow> dense,
                         std::span<const DeepGemmRow> grouped) {
  if (p.gemm.chip_tflops <= 0) throw hw::UserError(p.file, 0, 0, "the profile has no GEMM model to refit");
  if (gpu.sms != kTableSms)
    throw hw::UserError(
        p.file, 0, 0,
        fmt::format("DeepGEMM's table was taken on {} SMs; the profile's GPU has {}", kTableSms, gpu.sms));
  std::vector<DeepGemmRow> fit_rows, held_rows, other_rows;
  const auto model_tiles = [&](const DeepGemmRow& r, bool contiguous) {
    return hw::deepgemm_tile(r.m, r.n, static_cast<int>(r.groups), gpu.sms, contiguous) == hw::GemmTile{};
  };
  for (const DeepGemmRow& r : dense) (model_tiles(r, false) ? fit_rows : other_rows).push_back(r);
  for (const DeepGemmRow& r : grouped) (model_tiles(r, true) ? held_rows : other_rows).push_back(r);
  if (fit_rows.size() < 2)
    throw hw::UserError(p.file, 0, 0,
                        "fewer than two dense rows run in DeepGEMM's 128 x 128 tiles: nothing to fit two figures on");
  // Residuals in log TFLOPS: each row weighs the same whatever its size.
  const auto residuals = [&](const Eigen::VectorXd& x, Eigen::VectorXd& r) {
    const hw::GpuProfile q = with_deepgemm(p, x[0], x[1]);
    for (size_t i = 0; i < fit_rows.size(); ++i) {
      const PublishedCheck c = deepgemm_check(q, gpu, fit_rows[i]);
      r[static_cast<int>(i)] = std::log(std::max(c.predicted, 1e-9) / c.published);
    }
  };
  Eigen::VectorXd x0(2);
  x0 << 0.0, 1.0;
  const LmResult lm = levenberg_marquardt(residuals, static_cast<int>(fit_rows.size()), x0);
  DeepGemmFit out;
  out.tile_us_added = lm.x[0];
  out.mma_scale = lm.x[1];
  out.profile = with_deepgemm(p, out.tile_us_added, out.mma_scale);
  for (const DeepGemmRow& r : fit_rows) out.fitted.push_back(deepgemm_check(out.profile, gpu, r));
  for (const DeepGemmRow& r : held_rows) out.held_out.push_back(deepgemm_check(out.profile, gpu, r));
  for (const DeepGemmRow& r : other_rows) out.other_tiles.push_back(deepgemm_check(out.profile, gpu, r));

  const std::string from = fmt::format(
      "fit of DeepGEMM's published H800 table (README of 2025-02-25, FP8 with 1x128 / 128x128 scaling on 132 SMs): "
      "its {} dense rows in 128 x 128 tiles, {}; its {} grouped rows held out, {}",
      out.fitted.size(), stats(out.fitted), out.held_out.size(), stats(out.held_out));
  // The input profile's figures are cuBLASLt's (the bundled h800 profile's are).
  const auto set = [&](const char* name, double value, double before, const std::string& how) {
    out.profile.gemm_params[name] = {value, "published",
                                     fmt::format("{}; {}; {:.6g} in {}", how, from, before, p.file)};
  };
  const std::string scaled = fmt::format("the input profile's x {:.4f}", out.mma_scale);
  set("tile_us", out.profile.gemm.tile_us, p.gemm.tile_us,
      fmt::format("the input profile's + {:.3f} us", out.tile_us_added));
  set("sm_tflops", out.profile.gemm.sm_tflops, p.gemm.sm_tflops, scaled);
  set("chip_tflops", out.profile.gemm.chip_tflops, p.gemm.chip_tflops, scaled);
  const std::string table =
      "DeepGEMM's README of 2025-02-25 (repo deepseek-ai/DeepGEMM): its FP8 table on H800, as "
      "../shared/REFERENCE.md gives it";
  auto& from_list = out.profile.fitted_from;
  if (std::find(from_list.begin(), from_list.end(), table) == from_list.end()) from_list.push_back(table);
  out.profile.file.clear();
  out.profile.note =
      "The " + p.gpu +
      " profile with its FP8 GEMMs refitted to DeepGEMM's published table by `clustersim "
      "calibrate deepgemm`: the GEMM kernels DeepSeek published for its training, in place of cuBLASLt's. "
      "Every other figure is the " +
      p.gpu + " profile's. " + p.note;
  return out;
}

}  // namespace cs::calibrate
