// An SM-partition sweep (models/sm_sweep.h) as a console table or a versioned JSON document.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "models/sm_sweep.h"

namespace cs::reports {

inline constexpr int kSweepSchemaVersion = 1;

nlohmann::json sweep_json(const models::Scenario& sc, const models::SmSweep& s, const std::string& clustersim_version);
std::string sweep_console(const models::Scenario& sc, const models::SmSweep& s);
// The sweep as the HTML report's `report.sweep` chart (reports/html_report.h): step time against
// communication SMs.
nlohmann::json sweep_chart(const models::SmSweep& s);

}  // namespace cs::reports
