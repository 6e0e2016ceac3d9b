// Training FLOPs per token (forward + both backward passes), summed from the ops of every layer,
// the head and optionally the MTP modules, in the model-FLOPs convention (no recomputation;
// attention backward counted as twice its forward). With causal attention at sequence 4096 this
// is ISCA'25 Table 2's 250 GFLOP per token for DeepSeek-V3; "full" counts every query-key pair,
// the convention of ISCA'25 Table 4's 432 TFLOPS column.
#pragma once

#include <cstdint>

#include "models/model_spec.h"

namespace cs::models {

struct FlopsPerToken {
  double linear = 0;     // GEMMs: 6 x activated matmul parameters
  double attention = 0;  // query-key and probability-value products
  double mtp = 0;        // the MTP modules (included in total() only when asked for)
  double total() const { return linear + attention; }
};

FlopsPerToken model_flops_per_token(const ModelSpec& m, int64_t seq_len, bool causal);

}  // namespace cs::models
