#include "reports/sweep_console.h"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

namespace cs::reports {

using models::SweepRecord;

namespace {

constexpr size_t kAllRowsUpTo = 50;  // larger sweeps show their best rows only
constexpr size_t kBestRows = 20;

// A column's header: the key's last segment, unless two keys share it.
std::vector<std::string> short_names(const std::vector<std::string>& keys) {
  std::vector<std::string> out;
  for (const auto& k : keys) out.push_back(k.substr(k.rfind('.') + 1));
  for (size_t i = 0; i < out.size(); ++i)
    if (std::count(out.begin(), out.end(), out[i]) > 1) out[i] = keys[i];
  return out;
}

std::string setting_of(const models::SweepSpec& spec, const SweepRecord& r) {
  std::string s;
  for (size_t c = 0; c < spec.columns.size(); ++c)
    if (!r.values[c].empty()) s += (s.empty() ? "" : ", ") + spec.columns[c] + "=" + r.values[c];
  return s.empty() ? "the base scenario" : s;
}

std::string figure(const SweepRecord& r, const std::string& metric, const std::string& unit) {
  const std::string v = r.metric(metric);
  return v.empty() ? "" : v + unit;
}

std::string summary_of(const SweepRecord& r) {
  std::string s = "step " + figure(r, "step_ms", " ms");
  if (!r.metric("gpu_hours").empty())
    s += ", " + figure(r, "gpu_hours", " GPU-hours") + ", " + figure(r, "days", " days") +
         (r.metric("cost_usd").empty() ? "" : ", $" + r.metric("cost_usd"));
  // An ok point's message says what limits its answer (an approximate step): it goes with its figures.
  return s + " on " + r.metric("gpus") + " GPUs" +
         (r.status == "ok" && !r.message.empty() ? " (" + r.message + ")" : "");
}

}  // namespace

std::vector<std::string> sweep_answer_lines(const models::SweepSpec& spec, const std::vector<SweepRecord>& records,
                                            const models::SweepAnswers& a) {
  std::vector<std::string> out;
  out.push_back(fmt::format("{} points: {} ran, {} skipped by constraints, {} failed", records.size(), a.ok, a.skipped,
                            a.failed));
  const char* obj = models::objective_name(a.objective);
  if (a.best) {
    const SweepRecord& b = records[static_cast<size_t>(*a.best)];
    out.push_back(fmt::format("best by {}: #{} ({}): {}", obj, b.index, setting_of(spec, b), summary_of(b)));
  } else {
    out.push_back(fmt::format("best by {}: none ({})", obj, a.objective_note));
  }
  if (!a.pareto.empty()) {
    std::string front;
    for (int i : a.pareto) {
      const SweepRecord& r = records[static_cast<size_t>(i)];
      front += fmt::format("{}{} GPUs {} {} (#{})", front.empty() ? "" : "; ", r.metric("gpus"), r.metric(a.pareto_time),
                           a.pareto_time == "days" ? "days" : "ms", r.index);
    }
    out.push_back("Pareto front of " + a.pareto_time + " against GPUs: " + front);
  }
  for (const auto& o : a.comm_optima) {
    const std::string where = o.setting.empty() ? "best SM split" : "best SM split for " + o.setting;
    if (o.points == 0) {
      out.push_back(where + ": none ran");
      continue;
    }
    const SweepRecord& r = records[static_cast<size_t>(o.record)];
    const auto col = std::find(spec.columns.begin(), spec.columns.end(), models::kCommSmsKey) - spec.columns.begin();
    const std::string sms = r.values[static_cast<size_t>(col)];
    out.push_back(fmt::format("{}: {} communication SMs{} (#{}, {}; {} points)", where, sms,
                              sms == "0" ? " (no reserved partition)" : "", r.index, summary_of(r), o.points));
  }
  return out;
}

std::string sweep_console(const models::SweepSpec& spec, const std::vector<SweepRecord>& records,
                          const models::SweepAnswers& a) {
  std::vector<size_t> rows(records.size());
  for (size_t i = 0; i < rows.size(); ++i) rows[i] = i;
  std::string out;
  if (records.size() > kAllRowsUpTo) {
    std::stable_sort(rows.begin(), rows.end(), [&](size_t x, size_t y) {
      const auto vx = models::objective_value(a.objective, records[x]), vy = models::objective_value(a.objective, records[y]);
      return vx && (!vy || *vx < *vy);
    });
    rows.resize(std::min<size_t>(kBestRows, static_cast<size_t>(a.ok)));
    out += fmt::format("the {} best of {} points by {} (every point is in the results file, -o)\n", rows.size(),
                       records.size(), models::objective_name(a.objective));
  }
  const auto names = short_names(spec.columns);
  std::vector<std::pair<std::string, std::string>> figs = {{"step_ms", "step_ms"}, {"tokens_per_s_per_gpu", "tok/s/gpu"},
                                                           {"gpu_hours", "gpu_hours"}, {"days", "days"},
                                                           {"memory_GiB", "mem_GiB"}};
  std::vector<size_t> width;
  for (const auto& n : names) width.push_back(std::max<size_t>(n.size(), 4));
  for (size_t r : rows)
    for (size_t c = 0; c < names.size(); ++c) width[c] = std::max(width[c], records[r].values[c].size());
  out += fmt::format("{:>5} {:<8}", "#", "status");
  for (size_t c = 0; c < names.size(); ++c) out += fmt::format(" {:>{}}", names[c], width[c]);
  for (const auto& f : figs) out += fmt::format(" {:>11}", f.second);
  out += "  note\n";
  for (size_t r : rows) {
    const SweepRecord& rec = records[r];
    out += fmt::format("{:>5} {:<8}", rec.index, rec.status);
    for (size_t c = 0; c < names.size(); ++c) out += fmt::format(" {:>{}}", rec.values[c], width[c]);
    for (const auto& f : figs) out += fmt::format(" {:>11}", rec.metric(f.first));
    std::string note = a.best && static_cast<size_t>(*a.best) == r
                           ? (rec.message.empty() ? "<- best" : "<- best; " + rec.message)
                           : rec.message;
    if (note.size() > 100) note = note.substr(0, 97) + "...";
    out += "  " + note + "\n";
  }
  out += "\n";
  for (const auto& line : sweep_answer_lines(spec, records, a)) out += line + "\n";
  return out;
}

nlohmann::json sweep_chart(const models::SweepSpec& spec, const std::vector<SweepRecord>& records,
                           const models::SweepAnswers& a) {
  const std::string y_metric = models::objective_metric(a.objective);
  nlohmann::json points = nlohmann::json::array();
  std::string title, x_label;
  const auto col = std::find(spec.columns.begin(), spec.columns.end(), models::kCommSmsKey) - spec.columns.begin();
  const bool by_sms = static_cast<size_t>(col) < spec.columns.size() && a.best &&
                      !records[static_cast<size_t>(*a.best)].values[static_cast<size_t>(col)].empty();
  for (const SweepRecord& r : records) {
    const std::string y = r.metric(y_metric);
    if (r.status != "ok" || y.empty()) continue;
    if (by_sms) {
      // The curve of the best point's setting: the same values of every other key.
      const SweepRecord& b = records[static_cast<size_t>(*a.best)];
      bool same = true;
      for (size_t c = 0; c < spec.columns.size(); ++c)
        same = same && (static_cast<ptrdiff_t>(c) == col || r.values[c] == b.values[c] ||
                        std::any_of(spec.derive.begin(), spec.derive.end(),
                                    [&](const models::SweepDerive& d) { return d.key == spec.columns[c]; }));
      if (!same || r.values[static_cast<size_t>(col)].empty()) continue;
      points.push_back({{"x", std::stod(r.values[static_cast<size_t>(col)])}, {"predicted", std::stod(y)}});
    } else {
      points.push_back({{"x", r.index}, {"predicted", std::stod(y)}});
    }
  }
  title = by_sms ? y_metric + " against the communication SMs (0: no reserved partition)" : y_metric + " of every point";
  x_label = by_sms ? "communication SMs" : "point";
  return {{"title", title}, {"x_label", x_label}, {"y_label", y_metric},
          {"points", points}, {"notes", sweep_answer_lines(spec, records, a)}};
}

}  // namespace cs::reports
