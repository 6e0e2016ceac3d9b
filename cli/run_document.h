// A scenario run with what its HTML report needs captured: the result document that
// `clustersim run --format json` writes and `clustersim report` renders.
#pragma once

#include <ostream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "models/op_workload.h"
#include "models/scenario.h"
#include "models/scenario_runner.h"

namespace cs::cli {

struct RunDocument {
  models::RunResult result;
  nlohmann::json document;  // null unless captured
};

// Runs `sc` (and its training run), printing the run's warnings. With `capture` the document holds
// the result JSON with its `report` object (`argv` and the scenario file echoed, the profile's
// validation where its data is found); `trace`, when set, receives the Perfetto trace.
RunDocument run_document(const models::Scenario& sc, const models::OpWorkload& work, const std::string& file,
                         const std::vector<std::string>& argv, bool capture, std::ostream* trace = nullptr);

}  // namespace cs::cli
