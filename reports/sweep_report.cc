#include "reports/sweep_report.h"

#include <algorithm>

#include <fmt/format.h>

namespace cs::reports {

namespace {

double ms(const models::SmSweepPoint& p) { return p.result.makespan.to_ms(); }

}  // namespace

nlohmann::json sweep_json(const models::Scenario& sc, const models::SmSweep& s, const std::string& version) {
  nlohmann::json points = nlohmann::json::array();
  for (const auto& p : s.points) {
    nlohmann::json j = {{"comm_sms", p.comm_sms},
                        {"compute_sms", p.compute_sms},
                        {"comm_shares_compute_sms", p.shared},
                        {"makespan_ms", ms(p)},
                        {"vs_best", ms(p) / ms(s.points[s.best]) - 1}};
    if (p.result.training) {
      const auto& t = *p.result.training;
      j["training"] = {{"gpu_hours", t.gpu_hours}, {"days", t.days}, {"cost_usd", t.cost_usd}};
      if (!t.phases.empty()) j["training"]["tokens_per_s_per_gpu"] = t.phases.front().tokens_per_s_per_gpu;
    }
    points.push_back(std::move(j));
  }
  const auto& first = s.points.front().result;
  return {{"schema_version", kSweepSchemaVersion},
          {"clustersim_version", version},
          {"kind", "sm_partition_sweep"},
          {"scenario", sc.name},
          {"file", sc.file},
          {"gpu", first.gpu_model},
          {"gpus", first.gpus},
          {"cost_model", first.cost_model},
          {"calibrated", first.calibrated},
          {"comm_partition", s.comm_partition},
          {"compute_partition", s.compute_partition},
          {"total_sms", s.total_sms},
          {"points", points},
          {"best", {{"comm_sms", s.points[s.best].comm_sms}, {"makespan_ms", ms(s.points[s.best])}}}};
}

nlohmann::json sweep_chart(const models::SmSweep& s) {
  nlohmann::json points = nlohmann::json::array();
  for (const auto& p : s.points) points.push_back({{"x", p.comm_sms}, {"predicted", ms(p)}});
  return {{"title", "Step time against the SMs of '" + s.comm_partition + "' (taken from '" + s.compute_partition +
                        "'; 0: no reserved partition); best " + std::to_string(s.points[s.best].comm_sms)},
          {"x_label", "communication SMs"},
          {"y_label", "makespan (ms)"},
          {"points", points}};
}

std::string sweep_console(const models::Scenario& sc, const models::SmSweep& s) {
  const auto& first = s.points.front().result;
  const bool training = first.training.has_value();
  std::string out = fmt::format("scenario   {}\ncluster    {} x {}\ncosts      {}{}\nsweep      SMs of '{}' "
                                "(taken from '{}', {} SMs between them)\n\n",
                                sc.name, first.gpus, first.gpu_model, first.cost_model,
                                first.calibrated ? "" : "  [UNCALIBRATED]", s.comm_partition, s.compute_partition,
                                s.total_sms);
  out += fmt::format("{:>9} {:>12} {:>14} {:>8}", "comm_sms", "compute_sms", "makespan_ms", "vs_best");
  if (training) out += fmt::format(" {:>12} {:>8} {:>10}", "gpu_hours", "days", "tok/s/gpu");
  out += "\n";
  for (size_t i = 0; i < s.points.size(); ++i) {
    const auto& p = s.points[i];
    out += fmt::format("{:>9} {:>12} {:>14.3f} {:>7.1f}%", p.shared ? "0 shared" : std::to_string(p.comm_sms),
                       p.compute_sms, ms(p), 100 * (ms(p) / ms(s.points[s.best]) - 1));
    if (training && p.result.training) {
      const auto& t = *p.result.training;
      out += fmt::format(" {:>12.0f} {:>8.2f} {:>10.0f}", t.gpu_hours, t.days,
                         t.phases.empty() ? 0.0 : t.phases.front().tokens_per_s_per_gpu);
    }
    out += static_cast<int>(i) == s.best ? "  <- best\n" : "\n";
  }
  if (std::any_of(s.points.begin(), s.points.end(), [](const auto& p) { return p.shared; }))
    out += "\n0 shared: no partition is reserved; communication kernels take SMs from the compute partition as they run.\n";
  return out;
}

}  // namespace cs::reports
