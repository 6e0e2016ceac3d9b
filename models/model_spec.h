// A transformer decoder as the model zoo describes it (models/zoo/*.yaml, scenarios/README.md):
// attention (MLA or GQA/MHA), a dense FFN (SwiGLU or GELU), optional MoE layers with node-limited
// routing, and optional multi-token-prediction (MTP) modules. Sizes are element counts.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

namespace cs::models {

enum class AttentionKind : uint8_t { kMla, kGqa };  // MHA is GQA with kv_heads == heads

struct AttentionSpec {
  AttentionKind kind = AttentionKind::kGqa;
  int heads = 0;
  // GQA/MHA
  int kv_heads = 0;
  int head_dim = 0;
  // MLA (DeepSeek-V2/V3): q_lora_rank 0 means queries are projected directly from the hidden state.
  int q_lora_rank = 0;
  int kv_lora_rank = 0;
  int qk_nope_head_dim = 0;
  int qk_rope_head_dim = 0;
  int v_head_dim = 0;

  int qk_head_dim() const { return kind == AttentionKind::kMla ? qk_nope_head_dim + qk_rope_head_dim : head_dim; }
  int v_dim() const { return kind == AttentionKind::kMla ? v_head_dim : head_dim; }
};

enum class FfnActivation : uint8_t { kSwiglu, kGelu };

struct FfnSpec {
  FfnActivation activation = FfnActivation::kSwiglu;
  int64_t hidden = 0;  // intermediate size of the dense FFN
  // Matrices per FFN: SwiGLU gate, up and down (3); GELU up and down (2).
  int matrices() const { return activation == FfnActivation::kSwiglu ? 3 : 2; }
};

enum class Gating : uint8_t { kSoftmax, kSigmoid };

struct MoeSpec {
  int first_dense_layers = 0;  // the first layers keep the dense FFN
  int routed_experts = 0;
  int shared_experts = 0;
  int64_t expert_hidden = 0;  // intermediate size of one expert (SwiGLU)
  int top_k = 0;
  int groups = 1;             // expert groups; node-limited routing maps one group to one node
  int groups_per_token = 1;   // a token's experts come from at most this many groups
  Gating gating = Gating::kSoftmax;
};

enum class NormKind : uint8_t { kRmsNorm, kLayerNorm };

struct ModelSpec {
  std::string name;
  std::string description;
  std::string source;  // where the configuration comes from
  int layers = 0;
  int64_t hidden = 0;
  int64_t vocab = 0;
  NormKind norm = NormKind::kRmsNorm;
  bool tied_embeddings = false;
  bool linear_bias = false;     // GPT-3 style biases on every linear layer
  int64_t learned_positions = 0;  // size of a learned position table (0: rotary)
  AttentionSpec attention;
  FfnSpec ffn;
  std::optional<MoeSpec> moe;
  int mtp_depth = 0;  // multi-token-prediction modules after the last layer

  bool is_moe_layer(int layer) const { return moe && layer >= moe->first_dense_layers; }
};

}  // namespace cs::models
