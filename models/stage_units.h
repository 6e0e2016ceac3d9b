// The ops of one model stage for one micro-batch on one GPU, unit by unit (the embedding on
// stage 0, each layer, the head and MTP modules on the last stage), each unit's forward apart
// from its backward (input and weight gradients in the order layer_ops gives them).
#pragma once

#include <string>
#include <vector>

#include "models/layer_ops.h"

namespace cs::models {

struct UnitOps {
  std::string prefix;  // label prefix, e.g. "L3."
  std::vector<LayerOp> fwd, bwd;
};

// `split`: layers per model stage (stage_layers); the last entry is the last stage.
std::vector<UnitOps> stage_units(const ModelSpec& m, const std::vector<int>& split, int stage, const LayerContext& c);

}  // namespace cs::models
