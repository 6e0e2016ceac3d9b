#include "calibrate/validate.h"

#include "calibrate/comm_fit.h"
#include "calibrate/gemm_fit.h"
#include "calibrate/sim_cases.h"

namespace cs::calibrate {

namespace {
bool in(const std::map<std::string, hw::ProfileRange>& r, const char* key, double v) {
  const auto it = r.find(key);
  return it == r.end() || it->second.contains(v);
}

FitStats stats(const std::vector<CaseCheck>& cases, const char* kind, bool held_only) {
  std::vector<double> pred, meas;
  for (const CaseCheck& c : cases)
    if (c.kind == kind && (!held_only || c.held_out)) {
      pred.push_back(c.predicted_us);
      meas.push_back(c.measured_us);
    }
  return fit_stats(pred, meas);
}
}  // namespace

Validation validate_profile(const hw::GpuProfile& p, const hw::GpuSpec& gpu, const MeasurementSet& set,
                            int holdout_every) {
  Validation v;
  const std::vector<bool> gemm_held = gemm_holdout(set.gemms, holdout_every);
  for (size_t i = 0; i < set.gemms.size(); ++i) {
    const GemmCase& c = set.gemms[i];
    CaseCheck k;
    k.kind = "gemm";
    k.label = c.key() + " on " + std::to_string(c.sms) + " SMs";
    k.measured_us = c.time_us;
    k.predicted_us = simulate_gemm(p, gpu, c).to_seconds() * 1e6;
    k.held_out = gemm_held[i];
    k.beyond_range = !(in(p.gemm_range, "sms", c.sms) && in(p.gemm_range, "m", double(c.shape.m)) &&
                       in(p.gemm_range, "n", double(c.shape.n)) && in(p.gemm_range, "k", double(c.shape.k)));
    v.cases.push_back(k);
  }
  std::vector<AllToAllCase> a2a;
  for (const AllToAllCase& c : set.all_to_alls)
    if (comm_fits_case(c)) a2a.push_back(c);
  const std::vector<bool> comm_held = comm_holdout(a2a, holdout_every);
  for (size_t i = 0; i < a2a.size(); ++i) {
    const AllToAllCase& c = a2a[i];
    CaseCheck k;
    k.kind = "all_to_all";
    k.label = c.mode + " " + std::to_string(static_cast<int64_t>(c.size_bytes)) + " B on " + std::to_string(c.gpus) +
              " GPUs, " + std::to_string(c.ctas) + " SMs";
    k.measured_us = c.time_us;
    k.predicted_us = simulate_all_to_all(p, gpu, c).to_seconds() * 1e6;
    k.held_out = comm_held[i];
    k.beyond_range = !(in(p.comm_range, "ctas", c.ctas) && in(p.comm_range, "size_bytes", c.size_bytes));
    v.cases.push_back(k);
  }
  v.gemm_held = stats(v.cases, "gemm", true);
  v.gemm_all = stats(v.cases, "gemm", false);
  v.comm_held = stats(v.cases, "all_to_all", true);
  v.comm_all = stats(v.cases, "all_to_all", false);
  return v;
}

}  // namespace cs::calibrate
