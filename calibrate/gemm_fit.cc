#include "calibrate/gemm_fit.h"

#include <cmath>
#include <map>

#include "calibrate/levenberg_marquardt.h"

namespace cs::calibrate {

std::vector<bool> gemm_holdout(const std::vector<GemmCase>& cases, int every) {
  std::map<std::string, int> shape_index;
  for (const GemmCase& c : cases) shape_index[c.key()] = 0;
  int i = 0;
  for (auto& [key, idx] : shape_index) idx = i++;
  std::vector<bool> held(cases.size());
  for (size_t c = 0; c < cases.size(); ++c) held[c] = every > 0 && shape_index[cases[c].key()] % every == every - 1;
  return held;
}

namespace {
// The parameters are fitted as logarithms (all positive); the overlap exponent as the logarithm of
// its excess over 1, so that it stays above 1 (the tiled and HBM times at most add up).
constexpr int kExponent = hw::GemmModel::kOverlapExponent;
constexpr double kStartExponent = 4.0;
// A start for the reduction's rate where the given start has none (a profile from before it): of
// the order of an H200 SM's share of its HBM (4800 x 0.7 / 132 = 25 GB/s), as gemm_start gives.
constexpr double kStartReduceGBpsPerSm = 20.0;
double to_fit_space(int i, double v) { return i == kExponent ? std::log(v - 1.0) : std::log(v); }
double from_fit_space(int i, double x) { return i == kExponent ? 1.0 + std::exp(x) : std::exp(x); }
}  // namespace

hw::GemmModel gemm_start(double fp8_tflops, int sms, double hbm_GBps) {
  // The reduction's per-SM rate from the HBM's share of one SM, as the chip-wide rates start.
  return hw::GemmModel{5.0, 1.0, fp8_tflops / sms, 0.7 * fp8_tflops, 0.7 * hbm_GBps, 2.0, kStartExponent, 0.7 * hbm_GBps / sms};
}

double predict_us(const hw::GemmModel& m, const GemmCase& c, double reference_MHz) {
  const double slowdown = reference_MHz > 0 && c.clock_MHz > 0 ? reference_MHz / c.clock_MHz : 1.0;
  return hw::gemm_model_us(m, c.shape, c.sms, 1.0, slowdown);
}

double predict_bf16_us(const hw::GemmModel& fp8, const hw::GemmBf16Model& bf16, const GemmCase& c,
                       double reference_MHz) {
  return predict_us(hw::with_bf16_rates(fp8, bf16), c, reference_MHz);
}

GemmBf16Fit fit_gemm_bf16(const std::vector<GemmCase>& cases, const std::vector<bool>& use, const hw::GemmModel& fp8,
                          double reference_MHz) {
  std::vector<const GemmCase*> fitted;
  for (size_t i = 0; i < cases.size(); ++i)
    if (use.empty() || use[i]) fitted.push_back(&cases[i]);
  GemmBf16Fit out;
  if (fitted.empty()) return out;
  const auto to_model = [](const Eigen::VectorXd& x) { return hw::GemmBf16Model{std::exp(x[0]), std::exp(x[1])}; };
  const ResidualFn f = [&](const Eigen::VectorXd& x, Eigen::VectorXd& r) {
    const hw::GemmBf16Model m = to_model(x);
    for (size_t i = 0; i < fitted.size(); ++i)
      r[static_cast<Eigen::Index>(i)] = std::log(predict_bf16_us(fp8, m, *fitted[i], reference_MHz) / fitted[i]->time_us);
  };
  // From the datasheet's half of the FP8 rates, and from either rate's regime binding alone (the
  // min switches regimes; a rate whose regime binds nowhere has no gradient). Deterministic.
  LmResult lm;
  for (double sm_scale : {1.0, 0.6})
    for (double chip_scale : {1.0, 1.5, 0.7}) {
      Eigen::VectorXd x(2);
      x[0] = std::log(0.5 * fp8.sm_tflops * sm_scale);
      x[1] = std::log(0.5 * fp8.chip_tflops * chip_scale);
      LmResult r = levenberg_marquardt(f, static_cast<int>(fitted.size()), x);
      if (lm.x.size() == 0 || r.cost < lm.cost) lm = std::move(r);
    }
  out.model = to_model(lm.x);
  out.converged = lm.converged;
  std::vector<double> pred, meas;
  for (const GemmCase* c : fitted) {
    pred.push_back(predict_bf16_us(fp8, out.model, *c, reference_MHz));
    meas.push_back(c->time_us);
  }
  out.fit = fit_stats(pred, meas);
  return out;
}

GemmFit fit_gemm(const std::vector<GemmCase>& cases, const std::vector<bool>& use, const hw::GemmModel& start,
                 double reference_MHz) {
  std::vector<const GemmCase*> fitted;
  for (size_t i = 0; i < cases.size(); ++i)
    if (use.empty() || use[i]) fitted.push_back(&cases[i]);
  const auto to_model = [](const Eigen::VectorXd& x) {
    std::array<double, hw::GemmModel::kParams> a{};
    for (int i = 0; i < hw::GemmModel::kParams; ++i) a[i] = from_fit_space(i, x[i]);
    return hw::GemmModel::from_array(a);
  };
  const ResidualFn f = [&](const Eigen::VectorXd& x, Eigen::VectorXd& r) {
    const hw::GemmModel m = to_model(x);
    for (size_t i = 0; i < fitted.size(); ++i) r[static_cast<Eigen::Index>(i)] = std::log(predict_us(m, *fitted[i], reference_MHz) / fitted[i]->time_us);
  };
  Eigen::VectorXd x0(hw::GemmModel::kParams);
  const auto a = start.to_array();
  // The fit space has no exponent of 1 or less (log of its excess over 1) and no reduction rate of
  // 0: a start there (a profile's plain max, or no reduction rate) starts from the usual guess.
  for (int i = 0; i < hw::GemmModel::kParams; ++i) {
    double v = a[i];
    if (i == kExponent && !(v > 1)) v = kStartExponent;
    if (i == hw::GemmModel::kSplitKReduce && !(v > 0)) v = kStartReduceGBpsPerSm;
    x0[i] = to_fit_space(i, v);
  }
  GemmFit out;
  if (fitted.empty()) {
    out.model = start;
    return out;
  }
  // The model's min/max switch regimes, and a parameter whose regime binds nowhere at the start
  // has no gradient: start from several corners (the per-SM rate at or below the datasheet's, a
  // loose or a tight chip cap, the HBM floor loose or tight) and keep the best. Deterministic: the
  // same starts in the same order.
  LmResult lm;
  for (double sm_scale : {1.0, 0.8})
    for (double chip_scale : {1.0, 0.7, 1.3}) {
      Eigen::VectorXd x = x0;
      x[2] += std::log(sm_scale);
      x[3] += std::log(chip_scale);
      LmResult r = levenberg_marquardt(f, static_cast<int>(fitted.size()), x);
      if (lm.x.size() == 0 || r.cost < lm.cost) lm = std::move(r);
    }
  out.model = to_model(lm.x);
  Eigen::VectorXd r0(static_cast<Eigen::Index>(fitted.size())), r1(r0.size());
  f(lm.x, r0);
  for (int i = 0; i < hw::GemmModel::kParams; ++i) {
    Eigen::VectorXd x = lm.x;
    x[i] += std::log(1.01);
    f(x, r1);
    out.constrained[i] = (r1 - r0).cwiseAbs().maxCoeff() > 1e-9;
  }
  out.iterations = lm.iterations;
  out.converged = lm.converged;
  std::vector<double> pred, meas;
  for (const GemmCase* c : fitted) {
    pred.push_back(predict_us(out.model, *c, reference_MHz));
    meas.push_back(c->time_us);
  }
  out.fit = fit_stats(pred, meas);
  return out;
}

}  // namespace cs::calibrate
