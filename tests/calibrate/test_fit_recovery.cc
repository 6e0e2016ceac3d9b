// The fitting code on synthetic data made from known parameters: it must recover them.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>

#include "calibrate/comm_fit.h"
#include "calibrate/gemm_fit.h"
#include "calibrate/levenberg_marquardt.h"

namespace CS_TEST_FILE {  // unique per file: the tests build in unity batches

using namespace cs::calibrate;

TEST_CASE("Levenberg-Marquardt recovers an exponential decay's three parameters", "[calibrate][fit]") {
  // y = a exp(-b x) + c, with a = 3, b = 0.7, c = 0.25, from a start off by 2x in each.
  std::vector<double> xs, ys;
  for (int i = 0; i < 30; ++i) {
    xs.push_back(0.2 * i);
    ys.push_back(3.0 * std::exp(-0.7 * xs.back()) + 0.25);
  }
  const ResidualFn f = [&](const Eigen::VectorXd& p, Eigen::VectorXd& r) {
    for (size_t i = 0; i < xs.size(); ++i) r[static_cast<Eigen::Index>(i)] = p[0] * std::exp(-p[1] * xs[i]) + p[2] - ys[i];
  };
  Eigen::VectorXd x0(3);
  x0 << 6.0, 0.35, 0.5;
  const LmResult r = levenberg_marquardt(f, static_cast<int>(xs.size()), x0);
  CHECK(r.converged);
  CHECK(r.x[0] == Approx(3.0).epsilon(1e-5));
  CHECK(r.x[1] == Approx(0.7).epsilon(1e-5));
  CHECK(r.x[2] == Approx(0.25).epsilon(1e-5));
  CHECK(r.cost < 1e-12);
}

namespace {

// The synthetic sweep: every regime of the GEMM model present (small m with deep k: split-K and
// its reduction; large m on few and many SMs: per-SM rate, chip cap; grouped shapes; short k:
// tile overhead, launch; m = 64, k = 65536: compulsory bytes outlast the tiles, the HBM floor;
// shapes whose tiled and HBM times come close: the overlap exponent),
// on 8 SM counts, timed by `truth` at each case's clock (`clock_MHz(sms)`, 0: none) against
// `reference_MHz`.
template <typename ClockFn>
std::vector<GemmCase> synthetic_sweep(const cs::hw::GemmModel& truth, double reference_MHz, ClockFn clock_MHz) {
  std::vector<GemmCase> cases;
  const int64_t shapes[][4] = {{64, 2112, 7168, 1},   {64, 7168, 16384, 1},  {128, 24576, 1536, 1}, {128, 4096, 7168, 1},
                               {4096, 2112, 7168, 1}, {4096, 7168, 2048, 1}, {4096, 32768, 512, 1}, {4096, 7168, 16384, 1},
                               {8192, 4096, 7168, 4}, {4096, 7168, 2048, 8}, {24576, 1536, 4096, 1}, {64, 4096, 65536, 1}};
  for (const auto& s : shapes)
    for (int sms : {16, 32, 48, 64, 80, 96, 112, 132}) {
      GemmCase c;
      c.name = "synthetic";
      c.shape = cs::sim::GemmShape{s[0], s[1], s[2], cs::sim::DType::kFp8, static_cast<int>(s[3])};
      c.sms = sms;
      c.clock_MHz = clock_MHz(sms);
      c.time_us = predict_us(truth, c, reference_MHz);
      cases.push_back(c);
    }
  return cases;
}

}  // namespace

TEST_CASE("the GEMM fit recovers known parameters from synthetic timings", "[calibrate][fit]") {
  const cs::hw::GemmModel truth{6.0, 0.8, 12.5, 1350.0, 3000.0, 3.0, 2.5, 15.0};
  const std::vector<GemmCase> cases = synthetic_sweep(truth, 0, [](int) { return 0.0; });
  const GemmFit fit = fit_gemm(cases, {}, gemm_start(1979, 132, 4800));
  CHECK(fit.fit.worst_error < 1e-4);
  for (int i = 0; i < cs::hw::GemmModel::kParams; ++i) CHECK(fit.constrained[i]);
  const auto got = fit.model.to_array(), want = truth.to_array();
  for (int i = 0; i < cs::hw::GemmModel::kParams; ++i) {
    INFO(cs::hw::GemmModel::param_name(i));
    CHECK(got[i] == Approx(want[i]).epsilon(1e-3));
  }
}

TEST_CASE("the GEMM fit recovers known parameters from timings at their own clocks", "[calibrate][fit]") {
  // As under the power cap: the cases on many SMs run at a lower clock (cs_fp8_gemm
  // --sample-clocks records it). Fitted at their clocks, the truth comes back; taken all at the
  // reference clock, as before, it does not.
  const cs::hw::GemmModel truth{6.0, 0.8, 12.5, 1350.0, 3000.0, 3.0, 2.5, 15.0};
  constexpr double kReferenceMHz = 1980;
  const std::vector<GemmCase> cases = synthetic_sweep(truth, kReferenceMHz, [](int sms) {
    return sms <= 48 ? 1980.0 : 1980.0 - 3.0 * (sms - 48);  // 1728 MHz on 132 SMs
  });
  const GemmFit fit = fit_gemm(cases, {}, gemm_start(1979, 132, 4800), kReferenceMHz);
  CHECK(fit.fit.worst_error < 1e-4);
  const auto got = fit.model.to_array(), want = truth.to_array();
  for (int i = 0; i < cs::hw::GemmModel::kParams; ++i) {
    INFO(cs::hw::GemmModel::param_name(i));
    CHECK(got[i] == Approx(want[i]).epsilon(1e-3));
  }
  const GemmFit one_clock = fit_gemm(cases, {}, gemm_start(1979, 132, 4800));
  CHECK(one_clock.fit.worst_error > 0.02);
}

TEST_CASE("the BF16 fit recovers its two MMA rates on top of an FP8 model", "[calibrate][fit]") {
  const cs::hw::GemmModel fp8{6.0, 0.8, 12.5, 1350.0, 3000.0, 3.0, 2.5};
  const cs::hw::GemmBf16Model truth{7.1, 820.0};  // not the datasheet's half of the FP8 rates
  std::vector<GemmCase> cases = synthetic_sweep(fp8, 0, [](int) { return 0.0; });
  for (GemmCase& c : cases) {
    c.shape.dtype = cs::sim::DType::kBf16;
    c.time_us = predict_bf16_us(fp8, truth, c);
  }
  const GemmBf16Fit fit = fit_gemm_bf16(cases, {}, fp8);
  CHECK(fit.fit.worst_error < 1e-4);
  CHECK(fit.model.sm_tflops == Approx(truth.sm_tflops).epsilon(1e-3));
  CHECK(fit.model.chip_tflops == Approx(truth.chip_tflops).epsilon(1e-3));
  // The cases held out are left out of the fit: fitted on none, it leaves the model empty.
  const GemmBf16Fit none = fit_gemm_bf16(cases, std::vector<bool>(cases.size(), false), fp8);
  CHECK(none.fit.cases == 0);
  CHECK_FALSE(none.model.present());
}

TEST_CASE("the all-to-all fit recovers launch time, per-SM copy rate and NVLink bandwidth", "[calibrate][fit]") {
  const cs::hw::CommModel truth{7.0, 40.0, 300.0};
  std::vector<AllToAllCase> cases;
  for (int k : {2, 4, 8, 12, 16, 24, 32, 48})
    for (double mib : {1.0, 4.0, 16.0, 64.0, 256.0, 1024.0}) {
      AllToAllCase c;
      c.impl = "ours";
      c.gpus = 2;
      c.ctas = k;
      c.size_bytes = mib * (1 << 20);
      c.time_us = predict_us(truth, c, 3.33);
      cases.push_back(c);
    }
  const CommFit fit = fit_comm(cases, {}, cs::hw::CommModel{5, 20, 360}, 3.33);
  CHECK(fit.fit.worst_error < 1e-6);
  CHECK(fit.model.launch_us == Approx(7.0).epsilon(1e-4));
  CHECK(fit.model.sm_copy_GBps == Approx(40.0).epsilon(1e-4));
  CHECK(fit.model.nvlink_GBps == Approx(300.0).epsilon(1e-4));
}

TEST_CASE("held-out GEMM cases are whole shapes, every fourth in key order", "[calibrate][fit]") {
  std::vector<GemmCase> cases;
  for (int64_t n : {1024, 2048, 3072, 4096, 5120, 6144, 7168, 8192})
    for (int sms : {32, 132}) {
      GemmCase c;
      c.name = "s";
      c.shape = cs::sim::GemmShape{128, n, 1024, cs::sim::DType::kFp8, 1};
      c.sms = sms;
      cases.push_back(c);
    }
  const auto held = gemm_holdout(cases, 4);
  int count = 0;
  for (size_t i = 0; i < cases.size(); i += 2) {
    CHECK(held[i] == held[i + 1]);  // both SM counts of a shape go together
    count += held[i];
  }
  CHECK(count == 2);  // 8 shapes, every fourth
  const auto none = gemm_holdout(cases, 0);
  CHECK(std::none_of(none.begin(), none.end(), [](bool b) { return b; }));
}

}  // namespace CS_TEST_FILE
