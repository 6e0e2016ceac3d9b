// The model zoo as text and JSON: `clustersim model list` and `clustersim model show NAME`.
#pragma once

#include <cstdint>
#include <string>

#include "models/layer_ops.h"
#include "models/model_spec.h"

namespace cs::reports {

struct ModelShowOptions {
  int64_t seq_len = 4096;
  int64_t micro_batch = 1;  // sequences per micro-batch: the op tables' token count
  int tp = 1;
  int ep = 1;
  bool fp8 = true;
  bool json = false;
};

std::string model_list();
// Parameters (total, activated, by component), training FLOPs per token (causal and full
// attention), and the op tables of the first dense layer, the first MoE layer, the head and an
// MTP module for one micro-batch on one GPU.
std::string model_show(const models::ModelSpec& m, const ModelShowOptions& o);

}  // namespace cs::reports
