#include "calibrate/comm_fit.h"

#include <algorithm>
#include <cmath>
#include <map>

#include "calibrate/levenberg_marquardt.h"

namespace cs::calibrate {

bool comm_fits_case(const AllToAllCase& c) { return c.impl == "ours"; }

std::vector<bool> comm_holdout(const std::vector<AllToAllCase>& cases, int every) {
  std::map<int, int> ks;
  std::map<double, int> sizes;
  for (const AllToAllCase& c : cases) {
    ks[c.ctas] = 0;
    sizes[c.size_bytes] = 0;
  }
  int i = 0;
  for (auto& [k, idx] : ks) idx = i++;
  i = 0;
  for (auto& [s, idx] : sizes) idx = i++;
  std::vector<bool> held(cases.size());
  for (size_t c = 0; c < cases.size(); ++c)
    held[c] = every > 0 && (ks[cases[c].ctas] + sizes[cases[c].size_bytes]) % every == every - 1;
  return held;
}

double predict_us(const hw::CommModel& m, const AllToAllCase& c, double link_lat_us) {
  const double n = c.gpus;
  const double copy_us = c.size_bytes / (c.ctas * m.sm_copy_GBps * 1e3);
  const double link_us = link_lat_us + c.size_bytes * (n - 1) / n / (m.nvlink_GBps * 1e3);
  return m.launch_us + std::max(copy_us, link_us);
}

CommFit fit_comm(const std::vector<AllToAllCase>& cases, const std::vector<bool>& use, const hw::CommModel& start,
                 double link_lat_us) {
  std::vector<const AllToAllCase*> fitted;
  for (size_t i = 0; i < cases.size(); ++i)
    if ((use.empty() || use[i]) && comm_fits_case(cases[i])) fitted.push_back(&cases[i]);
  const auto to_model = [](const Eigen::VectorXd& x) {
    return hw::CommModel{std::exp(x[0]), std::exp(x[1]), std::exp(x[2])};
  };
  const ResidualFn f = [&](const Eigen::VectorXd& x, Eigen::VectorXd& r) {
    const hw::CommModel m = to_model(x);
    for (size_t i = 0; i < fitted.size(); ++i)
      r[static_cast<Eigen::Index>(i)] = std::log(predict_us(m, *fitted[i], link_lat_us) / fitted[i]->time_us);
  };
  CommFit out;
  out.model = start;
  if (fitted.empty()) return out;
  Eigen::VectorXd x0(3);
  x0 << std::log(start.launch_us), std::log(start.sm_copy_GBps), std::log(start.nvlink_GBps);
  const LmResult lm = levenberg_marquardt(f, static_cast<int>(fitted.size()), x0);
  out.model = to_model(lm.x);
  out.iterations = lm.iterations;
  out.converged = lm.converged;
  std::vector<double> pred, meas;
  for (const AllToAllCase* c : fitted) {
    pred.push_back(predict_us(out.model, *c, link_lat_us));
    meas.push_back(c->time_us);
  }
  out.fit = fit_stats(pred, meas);
  return out;
}

}  // namespace cs::calibrate
