#include "calibrate/copy_slowdown_fit.h"

#include <algorithm>
#include <cmath>

#include "calibrate/fit_stats.h"
#include "calibrate/sim_cases.h"

namespace cs::calibrate {

namespace {

// Copies per simulated run: the ratio of their mean times is steady well before the bench's 16 to
// 150 (the first copy starts with the first GEMM, so its time is the others').
constexpr int kCopies = 8;

// The case as the bench ran it, with `gemms` GEMMs (0: the copies alone).
OverlapCase bench_case(const OverlapTrafficCase& c, int gemms) {
  OverlapCase o;
  o.shape_name = c.shape;
  o.shape = c.gemm;
  o.ctas = o.comm_sms = c.copy_sms;
  o.compute_sms = c.compute_sms;
  o.a2a_bytes = c.copy_payload_bytes;
  o.gpus = 1;
  o.local_copy_only = true;
  o.a2a_count = kCopies;
  o.gemm_count = gemms;
  return o;
}

double copies_alone_us(const OverlapTrafficCase& c, const hw::GpuProfile& p, const hw::GpuSpec& gpu) {
  return simulate_overlap(p, gpu, bench_case(c, 0)).a2a_end.to_us();
}

// The copies' time beside GEMMs that outlast them (more GEMMs until they do).
double copies_together_us(const OverlapTrafficCase& c, const hw::GpuProfile& p, const hw::GpuSpec& gpu) {
  int gemms = 1 + static_cast<int>(std::ceil(2.0 * kCopies * c.copy_alone_us / c.gemm_alone_us));
  for (;; gemms *= 2) {
    const OverlapRun r = simulate_overlap(p, gpu, bench_case(c, gemms));
    if (r.gemm_end >= r.a2a_end) return r.a2a_end.to_us();
  }
}

}  // namespace

double simulated_copy_ratio(const OverlapTrafficCase& c, const hw::GpuProfile& p, const hw::GpuSpec& gpu) {
  return copies_together_us(c, p, gpu) / copies_alone_us(c, p, gpu);
}

CopySlowdownFit fit_copy_slowdown_beside_gemms(const std::vector<OverlapTrafficCase>& cases, const hw::GpuProfile& p,
                                               const hw::GpuSpec& gpu) {
  CopySlowdownFit out;
  if (cases.empty()) return out;
  hw::GpuProfile q = p;
  std::vector<double> alone_us;  // the copies alone do not depend on g
  for (const OverlapTrafficCase& c : cases) alone_us.push_back(copies_alone_us(c, p, gpu));
  const auto ratio_at = [&](size_t i, double g) {
    q.memory.copy_slowdown_beside_gemms = g;
    return copies_together_us(cases[i], q, gpu) / alone_us[i];
  };
  std::vector<double> per_case, without;  // without: each case's error at g = 0
  for (size_t i = 0; i < cases.size(); ++i) {
    const OverlapTrafficCase& c = cases[i];
    const double measured = c.copy_together_us / c.copy_alone_us;
    const double at_zero = ratio_at(i, 0);
    without.push_back(std::abs(at_zero / measured - 1));
    double lo = 0, hi = 2;  // the ratio grows with g
    if (at_zero >= measured) hi = lo;
    else if (ratio_at(i, hi) <= measured) lo = hi;
    for (int step = 0; step < 40 && hi - lo > 1e-5; ++step) {
      const double mid = 0.5 * (lo + hi);
      (ratio_at(i, mid) < measured ? lo : hi) = mid;
    }
    per_case.push_back(0.5 * (lo + hi));
  }
  out.slowdown = median(per_case);
  out.cases = static_cast<int>(cases.size());
  std::vector<double> err;
  for (size_t i = 0; i < cases.size(); ++i)
    err.push_back(std::abs(ratio_at(i, out.slowdown) / (cases[i].copy_together_us / cases[i].copy_alone_us) - 1));
  out.median_error = median(err);
  out.worst_error = *std::max_element(err.begin(), err.end());
  out.error_without = median(without);
  return out;
}

}  // namespace cs::calibrate
