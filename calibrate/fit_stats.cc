#include "calibrate/fit_stats.h"

#include <algorithm>
#include <cmath>

namespace cs::calibrate {

FitStats fit_stats(const std::vector<double>& predicted, const std::vector<double>& measured) {
  FitStats s;
  s.cases = static_cast<int>(measured.size());
  if (measured.empty()) return s;
  std::vector<double> err;
  double mean_log = 0;
  for (size_t i = 0; i < measured.size(); ++i) {
    err.push_back(std::abs(predicted[i] / measured[i] - 1));
    mean_log += std::log(measured[i]);
  }
  mean_log /= static_cast<double>(measured.size());
  std::sort(err.begin(), err.end());
  const size_t n = err.size();
  s.median_error = n % 2 ? err[n / 2] : (err[n / 2 - 1] + err[n / 2]) / 2;
  s.worst_error = err.back();
  double ss_res = 0, ss_tot = 0;
  for (size_t i = 0; i < measured.size(); ++i) {
    const double d = std::log(predicted[i]) - std::log(measured[i]);
    ss_res += d * d;
    const double t = std::log(measured[i]) - mean_log;
    ss_tot += t * t;
  }
  s.r2_log = ss_tot > 0 ? 1 - ss_res / ss_tot : 1;
  return s;
}

double median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

}  // namespace cs::calibrate
