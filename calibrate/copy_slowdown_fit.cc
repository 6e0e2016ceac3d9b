#include "calibrate/copy_slowdown_fit.h"

#include <algorithm>
#include <cmath>

#include "calibrate/fit_stats.h"
#include "calibrate/sim_cases.h"

namespace cs::calibrate {

double simulated_copy_ratio(const OverlapTrafficCase& c, const hw::GpuProfile& p, const hw::GpuSpec& gpu) {
  OverlapCase o;
  o.shape_name = c.shape;
  o.shape = c.gemm;
  o.ctas = o.comm_sms = c.copy_sms;
  o.compute_sms = c.compute_sms;
  o.a2a_bytes = c.copy_payload_bytes;
  o.gpus = 1;
  o.local_copy_only = true;
  o.a2a_count = 8;
  // Enough GEMMs to outlast the copies, so that every copy runs beside them.
  o.gemm_count = 1 + static_cast<int>(std::ceil(2.0 * o.a2a_count * c.copy_alone_us / c.gemm_alone_us));
  const double together = simulate_overlap(p, gpu, o).a2a_end.to_us();
  o.gemm_count = 0;
  const double alone = simulate_overlap(p, gpu, o).a2a_end.to_us();
  return together / alone;
}

CopySlowdownFit fit_copy_slowdown_beside_gemms(const std::vector<OverlapTrafficCase>& cases, const hw::GpuProfile& p,
                                               const hw::GpuSpec& gpu) {
  CopySlowdownFit out;
  if (cases.empty()) return out;
  hw::GpuProfile q = p;
  const auto ratio_at = [&](const OverlapTrafficCase& c, double g) {
    q.memory.copy_slowdown_beside_gemms = g;
    return simulated_copy_ratio(c, q, gpu);
  };
  std::vector<double> per_case;
  for (const OverlapTrafficCase& c : cases) {
    const double measured = c.copy_together_us / c.copy_alone_us;
    double lo = 0, hi = 2;  // the ratio grows with g
    if (ratio_at(c, lo) >= measured) hi = lo;
    else if (ratio_at(c, hi) <= measured) lo = hi;
    for (int i = 0; i < 40 && hi - lo > 1e-5; ++i) {
      const double mid = 0.5 * (lo + hi);
      (ratio_at(c, mid) < measured ? lo : hi) = mid;
    }
    per_case.push_back(0.5 * (lo + hi));
  }
  out.slowdown = median(per_case);
  out.cases = static_cast<int>(cases.size());
  std::vector<double> err, without;
  for (const OverlapTrafficCase& c : cases) {
    const double measured = c.copy_together_us / c.copy_alone_us;
    err.push_back(std::abs(ratio_at(c, out.slowdown) / measured - 1));
    without.push_back(std::abs(ratio_at(c, 0) / measured - 1));
  }
  out.median_error = median(err);
  out.worst_error = *std::max_element(err.begin(), err.end());
  out.error_without = median(without);
  return out;
}

}  // namespace cs::calibrate
