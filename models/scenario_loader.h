// Loads a scenario file strictly: unknown or duplicate keys, missing keys, wrong types, values out
// of range and impossible configurations are hw::UserError at FILE:LINE:COL. Nothing is run.
#pragma once

#include <string>
#include <string_view>

#include "hw/yaml_reader.h"
#include "models/scenario.h"

namespace cs::models {

Scenario load_scenario_file(const std::string& path);
Scenario load_scenario_text(std::string_view text, const std::string& file);
// A document already parsed (a sweep point: the base scenario with some keys set).
Scenario load_scenario_node(const hw::YamlNode& root);

// Ops a workload may expand to (GPUs x ops x repeats); beyond it the scenario is refused.
inline constexpr int64_t kMaxExpandedOps = 10'000'000;
// Point-to-point transfers the collectives of a workload may make in all (an all-to-all over n
// GPUs makes n(n-1), a ring all-reduce 2n(n-1)); beyond it the scenario is refused.
inline constexpr int64_t kMaxTransfers = 10'000'000;

}  // namespace cs::models
