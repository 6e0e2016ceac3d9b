#include "models/sweep_run.h"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <exception>
#include <mutex>
#include <numeric>
#include <system_error>
#include <thread>

#include <fmt/format.h>

#include "hw/user_error.h"
#include "models/scenario_runner.h"
#include "models/sweep_point.h"
#include "models/training_run.h"

namespace cs::models {

const std::vector<std::string> kSweepMetrics = {"gpus",      "fidelity",  "step_ms",  "tokens_per_s_per_gpu",
                                                "mfu_causal_pct", "memory_GiB", "hbm_GiB", "gpu_hours",
                                                "days",      "cost_usd"};

std::string sweep_metric_text(const std::string& name, double v) {
  if (!std::isfinite(v)) return fmt::format("{}", v);
  if (name == "gpus") return fmt::format("{:.0f}", v);
  if (name == "step_ms") return fmt::format("{:.3f}", v);
  if (name == "tokens_per_s_per_gpu") return fmt::format("{:.1f}", v);
  if (name == "mfu_causal_pct" || name == "memory_GiB" || name == "hbm_GiB") return fmt::format("{:.2f}", v);
  // Seven significant digits in plain decimals: 1987240 GPU-hours, and 0.00009468890 for a toy.
  const int magnitude = v == 0 ? 0 : static_cast<int>(std::floor(std::log10(std::fabs(v))));
  return fmt::format("{:.{}f}", v, std::clamp(6 - magnitude, 0, 12));
}

std::string SweepRecord::metric(const std::string& name) const {
  for (size_t i = 0; i < kSweepMetrics.size() && i < metrics.size(); ++i)
    if (kSweepMetrics[i] == name) return metrics[i];
  return "";
}

namespace {

// Results files hold one point per line.
std::string one_line(std::string s) {
  for (char& c : s)
    if (c == '\n' || c == '\r') c = ' ';
  return s;
}

std::vector<std::string> values_of(const SweepSpec& spec, const SweepPoint& p) {
  std::vector<std::string> out(spec.columns.size());
  for (const auto& [key, value] : p.set)
    for (size_t c = 0; c < spec.columns.size(); ++c)
      if (spec.columns[c] == key) out[c] = one_line(value.text());
  return out;
}

void set_metric(SweepRecord& r, const std::string& name, std::string text) {
  const auto it = std::find(kSweepMetrics.begin(), kSweepMetrics.end(), name);
  r.metrics[static_cast<size_t>(it - kSweepMetrics.begin())] = std::move(text);
}

void fill_metrics(SweepRecord& rec, const RunResult& r) {
  constexpr double kGiB = 1024.0 * 1024 * 1024;
  set_metric(rec, "gpus", sweep_metric_text("gpus", r.gpus));
  set_metric(rec, "step_ms", sweep_metric_text("step_ms", r.makespan.to_ms()));
  if (r.model) {
    set_metric(rec, "fidelity", r.model->fidelity);
    for (const FidelityWarning& w : r.model->fidelity_warnings)
      rec.message += (rec.message.empty() ? "" : "; ") + w.brief;
    double bytes = 0;
    for (const auto& [name, b] : r.model->memory_bytes) bytes += b;
    set_metric(rec, "memory_GiB", sweep_metric_text("memory_GiB", bytes / kGiB));
    set_metric(rec, "hbm_GiB", sweep_metric_text("hbm_GiB", r.model->memory_available_bytes / kGiB));
  }
  if (r.training && !r.training->phases.empty()) {
    const auto& t = *r.training;
    set_metric(rec, "tokens_per_s_per_gpu", sweep_metric_text("tokens_per_s_per_gpu", t.phases.front().tokens_per_s_per_gpu));
    set_metric(rec, "mfu_causal_pct", sweep_metric_text("mfu_causal_pct", 100 * t.phases.front().mfu_causal));
    set_metric(rec, "gpu_hours", sweep_metric_text("gpu_hours", t.gpu_hours));
    set_metric(rec, "days", sweep_metric_text("days", t.days));
    if (t.usd_per_gpu_hour > 0) set_metric(rec, "cost_usd", sweep_metric_text("cost_usd", t.cost_usd));
  }
}

}  // namespace

std::vector<std::string> sweep_values(const SweepSpec& spec, const SweepPoint& p) { return values_of(spec, p); }

SweepRecord skipped_record(const SweepSpec& spec, const SweepPoint& p) {
  SweepRecord r;
  r.index = p.index;
  r.status = "skipped";
  r.values = values_of(spec, p);
  r.metrics.assign(kSweepMetrics.size(), "");
  r.message = one_line(p.skip);
  return r;
}

SweepRecord run_sweep_point(const SweepSpec& spec, const SweepPoint& p) {
  SweepRecord rec = skipped_record(spec, p);
  if (!p.skip.empty()) return rec;
  rec.message.clear();
  try {
    const Scenario sc = sweep_point_scenario(spec, p);
    RunResult r = run_scenario(sc);
    if (spec.training && sc.training) r.training = predict_training(sc, r);
    fill_metrics(rec, r);
    rec.status = "ok";
  } catch (const hw::UserError& e) {
    rec.status = "failed";
    rec.message = one_line(e.what());
  } catch (const std::exception& e) {  // e.g. memory exhausted: this point fails, the sweep goes on
    rec.status = "failed";
    rec.message = one_line(std::string("internal error: ") + e.what());
  }
  return rec;
}

void run_sweep_points(const SweepSpec& spec, const std::vector<SweepPoint>& points, const std::vector<int>& todo,
                      int jobs, const std::function<void(SweepRecord)>& done) {
  std::mutex report;
  std::exception_ptr failed;  // from `done` (the output could not be written): the sweep stops
  std::atomic<size_t> next{0};
  auto work = [&] {
    for (size_t i = next++; i < todo.size(); i = next++) {
      SweepRecord r = run_sweep_point(spec, points.at(static_cast<size_t>(todo[i])));
      const std::lock_guard<std::mutex> lock(report);
      if (failed) return;
      try {
        done(std::move(r));
      } catch (...) {
        failed = std::current_exception();
        next = todo.size();
        return;
      }
    }
  };
  const int n = std::clamp(jobs, 1, static_cast<int>(std::max<size_t>(1, todo.size())));
  std::vector<std::thread> threads;
  for (int t = 1; t < n; ++t) {
    try {
      threads.emplace_back(work);
    } catch (const std::system_error&) {
      break;  // no more threads to be had: the ones running (and this one) take the rest
    }
  }
  work();
  for (std::thread& t : threads) t.join();
  if (failed) std::rethrow_exception(failed);
}

}  // namespace cs::models
