// A run result as text: a console table, or a versioned JSON document.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "models/scenario_runner.h"

namespace cs::reports {

// 2: the `report` object (reports/report_data.h), present when the caller captured the run.
// 3: each stream's `mover`: "sms" (kernels on its partition's SMs) or "copy_engine" (copy-engine
//    sends, holding none of them).
inline constexpr int kResultSchemaVersion = 3;

// `report`, when given (not null), is added as the document's `report` object.
nlohmann::json result_json(const models::RunResult& r, const std::string& clustersim_version,
                           nlohmann::json report = nullptr);
std::string result_console(const models::RunResult& r);

}  // namespace cs::reports
