// A run result as text: a console table, or a versioned JSON document.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "models/scenario_runner.h"

namespace cs::reports {

inline constexpr int kResultSchemaVersion = 1;

nlohmann::json result_json(const models::RunResult& r, const std::string& clustersim_version);
std::string result_console(const models::RunResult& r);

}  // namespace cs::reports
