// Predicted against measured for the HTML report's calibration section: the measurements a
// calibrated profile was fitted on, run through the simulator under the profile (calibrate/validate.h).
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "hw/gpu_profile.h"

namespace cs::cli {

// The report's `validation` object (reports/html_report.h), or null where the measurement files the
// profile names (`fitted_from`, paths from the repository root) are not found from the scenario
// file's folder or one above it (a scenario under scenarios/ finds them), or name no catalog GPU
// with a bundled profile. A
// profile carried over to another GPU is shown through the profile of the GPU that was measured,
// which its carried parameters come from.
nlohmann::json profile_validation(const hw::GpuProfile& profile, const std::string& scenario_file);

}  // namespace cs::cli
