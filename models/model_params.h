// Parameter counts of a model, exact to the element, by component.
//
// "Activated" counts the parameters a token's computation multiplies with: every layer's
// attention and norms, the dense FFN or the top_k routed plus the shared experts and the gate,
// and the output head. Table lookups (input embedding, learned positions) read one row per
// token, so they are not counted as activated. DeepSeek's published activated counts (V2 21B,
// V3 37B) follow this convention to their rounding; counting the whole embedding table instead
// gives 21.4B and 37.6B. MTP modules are counted apart (DeepSeek's 671B excludes them).
#pragma once

#include <cstdint>

#include "models/model_spec.h"

namespace cs::models {

struct LayerParams {
  int64_t attention = 0;       // projections (+ biases) and the attention-internal norms
  int64_t norms = 0;           // the two pre-norms of the layer
  int64_t dense_ffn = 0;       // dense layers only
  int64_t expert = 0;          // one routed or shared expert (MoE layers only)
  int64_t routed_experts = 0;  // all routed experts of the layer
  int64_t shared_experts = 0;
  int64_t gate = 0;            // router weights (+ the sigmoid gate's bias)

  int64_t total() const { return attention + norms + dense_ffn + routed_experts + shared_experts + gate; }
  // Without the routed experts: what every rank of an expert-parallel group holds a copy of.
  int64_t non_expert() const { return total() - routed_experts; }
};

struct ParamCounts {
  int64_t embedding = 0;   // input token table
  int64_t positions = 0;   // learned position table
  int64_t head = 0;        // output projection (0 when tied to the embedding)
  int64_t final_norm = 0;
  int64_t layers_total = 0;
  int64_t layers_activated = 0;
  int64_t mtp_total = 0;       // MTP modules' own parameters (they share embedding and head)
  int64_t mtp_activated = 0;
  bool tied = false;

  int64_t total() const { return embedding + positions + head + final_norm + layers_total; }
  int64_t activated() const { return layers_activated + (tied ? embedding : head) + final_norm; }
  int64_t total_with_mtp() const { return total() + mtp_total; }
};

LayerParams layer_params(const ModelSpec& m, int layer);
// One MTP module: its projection and norms plus one transformer layer shaped like the last one.
int64_t mtp_module_params(const ModelSpec& m, bool activated_only);
ParamCounts param_counts(const ModelSpec& m);

}  // namespace cs::models
