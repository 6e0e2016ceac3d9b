#include "cli/run_document.h"

#include <fstream>
#include <iostream>
#include <sstream>

#include "cli/commands.h"
#include "cli/report_validation.h"
#include "models/training_run.h"
#include "reports/report_data.h"
#include "reports/run_report.h"
#include "reports/step_capture.h"

namespace cs::cli {

namespace {

std::string read_text(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

}  // namespace

RunDocument run_document(const models::Scenario& sc, const models::OpWorkload& work, const std::string& file,
                         const std::vector<std::string>& argv, bool capture, std::ostream* trace) {
  models::RunOptions options;
  options.trace = trace;
  nlohmann::json step;
  if (capture)
    options.inspect = [&](const models::OpWorkload& w, const sim::ExecResult& ex) { step = reports::capture_step(w, ex); };
  RunDocument d;
  d.result = models::run_scenario(sc, work, options);
  models::RunResult& r = d.result;
  if (sc.training) {
    std::cerr << "clustersim: simulating the other representative steps of the training run\n";
    r.training = models::predict_training(sc, r);
  }
  if (!r.calibrated) std::cerr << "clustersim: warning: costs are uncalibrated (" << r.cost_model << ")\n";
  for (const std::string& w : r.cost_warnings) std::cerr << "clustersim: warning: " << w << "\n";
  if (r.model)
    for (const auto& w : r.model->fidelity_warnings) std::cerr << "clustersim: warning: " << w.text << "\n";
  if (!capture) return d;
  nlohmann::json extra = reports::report_json(sc, r, std::move(step), {argv, read_text(file)});
  if (sc.cost.profile) {
    nlohmann::json v = profile_validation(*sc.cost.profile, file);
    if (!v.is_null()) extra["validation"] = std::move(v);
  }
  d.document = reports::result_json(r, version(), std::move(extra));
  return d;
}

}  // namespace cs::cli
