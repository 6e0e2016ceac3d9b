// The model zoo: built-in models (models/zoo/*.yaml, compiled in) and the user's own model files
// in the same schema (scenarios/README.md, "Models"). Reading is strict: unknown keys, wrong types,
// out-of-range sizes and inconsistent shapes are UserErrors at FILE:LINE:COL.
#pragma once

#include <string>
#include <vector>

#include "hw/yaml_reader.h"
#include "models/model_spec.h"

namespace cs::models {

// Parses one model description (the root of a model file, or a scenario's inline `model:` map).
ModelSpec parse_model(const hw::YamlNode& node);

const std::vector<ModelSpec>& zoo_models();  // sorted by name
const ModelSpec* find_zoo_model(const std::string& name);
std::vector<std::string> zoo_model_names();

// A zoo name, or a path to a model file (anything with a '/' or ending in .yaml/.yml).
// An unknown name is a UserError naming the nearest zoo model.
ModelSpec load_model(const std::string& name_or_path);

}  // namespace cs::models
