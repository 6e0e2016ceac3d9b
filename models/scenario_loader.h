// Loads a scenario file strictly: unknown or duplicate keys, missing keys, wrong types, values out
// of range and impossible configurations are hw::UserError at FILE:LINE:COL. Nothing is run.
#pragma once

#include <string>
#include <string_view>

#include "hw/yaml_reader.h"
#include "models/scenario.h"

namespace cs::models {

Scenario load_scenario_file(const std::string& path, const GraphLimits& limits = {});
Scenario load_scenario_text(std::string_view text, const std::string& file, const GraphLimits& limits = {});
// A document already parsed (a sweep point: the base scenario with some keys set).
Scenario load_scenario_node(const hw::YamlNode& root, const GraphLimits& limits = {});

}  // namespace cs::models
