// Fits hw::GemmModel to FP8 GEMM measurements: Levenberg-Marquardt on log(predicted / measured),
// so every case weighs by its relative error, over the logarithms of the (positive) parameters.
#pragma once

#include <array>
#include <vector>

#include "calibrate/fit_stats.h"
#include "calibrate/measurements.h"
#include "hw/gemm_model.h"
#include "hw/gpu_profile.h"

namespace cs::calibrate {

// Whole shapes are held out (every SM count of a shape), so validation predicts shapes the fit
// never saw: the shapes in sorted key order, every `every`-th one from the `every`-th.
std::vector<bool> gemm_holdout(const std::vector<GemmCase>& cases, int every = 4);

struct GemmFit {
  hw::GemmModel model;
  FitStats fit;           // on the cases fitted
  int iterations = 0;
  bool converged = false;
  // Whether the measurements constrain each parameter: false where a 1% change of it moves no
  // prediction (its regime binds in no case fitted), so its value is only the start's.
  std::array<bool, hw::GemmModel::kParams> constrained{};
};

// Fits on the cases whose `use` flag is set (all when `use` is empty), from `start`. The model's
// times are at `reference_MHz` (the profile's gemm_fit_MHz; 0: none): a case with its own sampled
// clock is predicted at it, its tiles reference / clock as long (as validate simulates it).
GemmFit fit_gemm(const std::vector<GemmCase>& cases, const std::vector<bool>& use, const hw::GemmModel& start,
                 double reference_MHz = 0);
// BF16's own MMA rates (hw::GemmBf16Model) on top of an FP8 fit: the other parameters are the FP8
// fit's (one kernel family, the same tiles and epilogue), only the per-SM and chip rates are
// fitted, on the cases whose `use` flag is set, in the FP8 fit's clock frame (`reference_MHz`).
struct GemmBf16Fit {
  hw::GemmBf16Model model;
  FitStats fit;  // on the cases fitted
  bool converged = false;
};
GemmBf16Fit fit_gemm_bf16(const std::vector<GemmCase>& cases, const std::vector<bool>& use, const hw::GemmModel& fp8,
                          double reference_MHz = 0);
double predict_bf16_us(const hw::GemmModel& fp8, const hw::GemmBf16Model& bf16, const GemmCase& c,
                       double reference_MHz = 0);

// A start from the datasheet (FP8 peak, HBM bandwidth) and typical kernel overheads.
hw::GemmModel gemm_start(double fp8_tflops, int sms, double hbm_GBps);
double predict_us(const hw::GemmModel& m, const GemmCase& c, double reference_MHz = 0);

}  // namespace cs::calibrate
