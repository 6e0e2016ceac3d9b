#include "models/sweep_answers.h"

#include <algorithm>
#include <cstdlib>

namespace cs::models {

namespace {

std::optional<double> number(const std::string& text) {
  if (text.empty()) return std::nullopt;
  char* end = nullptr;
  const double v = std::strtod(text.c_str(), &end);
  if (end != text.c_str() + text.size()) return std::nullopt;
  return v;
}

}  // namespace

const char* objective_metric(SweepObjective o) {
  switch (o) {
    case SweepObjective::kStepTime: return "step_ms";
    case SweepObjective::kGpuHours: return "gpu_hours";
    case SweepObjective::kDays: return "days";
    case SweepObjective::kCost: return "cost_usd";
    case SweepObjective::kTokensPerGpu: return "tokens_per_s_per_gpu";
  }
  return "";
}

std::optional<double> objective_value(SweepObjective o, const SweepRecord& r) {
  if (r.status != "ok") return std::nullopt;
  const auto v = number(r.metric(objective_metric(o)));
  if (v && o == SweepObjective::kTokensPerGpu) return -*v;  // more is better
  return v;
}

SweepAnswers sweep_answers(const SweepSpec& spec, const std::vector<SweepRecord>& records) {
  SweepAnswers a;
  a.objective = spec.objective;
  // The first of equals wins, so the answer does not depend on the order points finished in.
  auto better = [&](int i, int j) {
    const auto vi = objective_value(a.objective, records[static_cast<size_t>(i)]);
    const auto vj = objective_value(a.objective, records[static_cast<size_t>(j)]);
    return vi && (!vj || *vi < *vj);
  };
  bool all_days = true;
  for (size_t i = 0; i < records.size(); ++i) {
    const SweepRecord& r = records[i];
    if (r.status == "ok") ++a.ok;
    else if (r.status == "skipped") ++a.skipped;
    else ++a.failed;
    if (r.status == "ok" && r.metric("days").empty()) all_days = false;
    if (objective_value(a.objective, r) && (!a.best || better(static_cast<int>(i), *a.best))) a.best = static_cast<int>(i);
  }
  if (!a.best)
    a.objective_note = a.ok == 0 ? "no point ran"
                                 : std::string("no point has ") + objective_name(a.objective) +
                                       (objective_needs_training(a.objective) ? " (the scenario has no training run)" : "");

  // Pareto front: fewer GPUs or less time, nothing better in both.
  a.pareto_time = all_days && a.ok > 0 ? "days" : "step_ms";
  std::vector<std::pair<std::pair<double, double>, int>> pts;
  for (size_t i = 0; i < records.size(); ++i) {
    const auto g = number(records[i].metric("gpus")), t = number(records[i].metric(a.pareto_time));
    if (records[i].status == "ok" && g && t) pts.push_back({{*g, *t}, static_cast<int>(i)});
  }
  std::sort(pts.begin(), pts.end());
  double best_time = 0;
  for (const auto& [gt, i] : pts) {
    if (!a.pareto.empty() && gt.second >= best_time) continue;
    a.pareto.push_back(i);
    best_time = gt.second;
  }

  // The best SM split of each setting of the other keys the sweep chose (derived keys follow them).
  const auto comm_col = std::find(spec.columns.begin(), spec.columns.end(), kCommSmsKey);
  if (comm_col == spec.columns.end()) return a;
  std::vector<size_t> chosen;
  for (size_t c = 0; c < spec.columns.size(); ++c) {
    const bool derived = std::any_of(spec.derive.begin(), spec.derive.end(),
                                     [&](const SweepDerive& d) { return d.key == spec.columns[c]; });
    if (spec.columns[c] != kCommSmsKey && !derived) chosen.push_back(c);
  }
  const auto comm_index = static_cast<size_t>(comm_col - spec.columns.begin());
  for (size_t i = 0; i < records.size(); ++i) {
    if (records[i].values[comm_index].empty()) continue;  // a listed point that keeps the base's split
    std::string setting;
    for (size_t c : chosen)
      if (!records[i].values[c].empty())
        setting += (setting.empty() ? "" : ", ") + spec.columns[c] + "=" + records[i].values[c];
    auto it = std::find_if(a.comm_optima.begin(), a.comm_optima.end(),
                           [&](const CommOptimum& o) { return o.setting == setting; });
    if (it == a.comm_optima.end()) {
      a.comm_optima.push_back({setting, static_cast<int>(i), 0});
      it = a.comm_optima.end() - 1;
    }
    if (!objective_value(a.objective, records[i])) continue;
    if (it->points == 0 || better(static_cast<int>(i), it->record)) it->record = static_cast<int>(i);
    ++it->points;
  }
  return a;
}

}  // namespace cs::models
