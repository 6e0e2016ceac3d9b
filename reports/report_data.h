// The `report` object of a result document: what the HTML report needs beyond the result itself
// (the cluster in figures, the cost profile with the origin of every parameter, the capture of one
// step, the scenario text and the command line), so that `clustersim report RESULT.json` rebuilds
// the page `clustersim run --report` wrote, byte for byte.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "models/scenario.h"
#include "models/scenario_runner.h"

namespace cs::reports {

struct ReportContext {
  std::vector<std::string> argv;  // the command line as given; argv[0] is reduced to its file name
  std::string scenario_text;      // the scenario file, echoed in the footer
};

// `capture` is capture_step's output for the run (reports/step_capture.h). Optional parts a caller
// may add afterwards: `validation` (reports/html_report.h says the form) and `sweep`.
nlohmann::json report_json(const models::Scenario& sc, const models::RunResult& r, nlohmann::json capture,
                           const ReportContext& ctx);

}  // namespace cs::reports
