#include "models/model_params.h"

namespace cs::models {

namespace {

int64_t norm_params(const ModelSpec& m, int64_t width) { return m.norm == NormKind::kLayerNorm ? 2 * width : width; }

// A linear layer in -> out, with its bias when the model has them.
int64_t linear(const ModelSpec& m, int64_t in, int64_t out) { return in * out + (m.linear_bias ? out : 0); }

int64_t attention_params(const ModelSpec& m) {
  const AttentionSpec& a = m.attention;
  const int64_t h = m.hidden, heads = a.heads;
  if (a.kind == AttentionKind::kGqa) {
    const int64_t d = a.head_dim;
    return linear(m, h, heads * d) + 2 * linear(m, h, int64_t{a.kv_heads} * d) + linear(m, heads * d, h);
  }
  const int64_t qk = a.qk_head_dim();
  int64_t q = 0;
  if (a.q_lora_rank > 0)
    q = linear(m, h, a.q_lora_rank) + norm_params(m, a.q_lora_rank) + linear(m, a.q_lora_rank, heads * qk);
  else
    q = linear(m, h, heads * qk);
  const int64_t kv = linear(m, h, int64_t{a.kv_lora_rank} + a.qk_rope_head_dim) + norm_params(m, a.kv_lora_rank) +
                     linear(m, a.kv_lora_rank, heads * (int64_t{a.qk_nope_head_dim} + a.v_head_dim));
  return q + kv + linear(m, heads * a.v_head_dim, h);
}

int64_t ffn_params(const ModelSpec& m, int64_t width) {
  if (m.ffn.activation == FfnActivation::kSwiglu) return 2 * linear(m, m.hidden, width) + linear(m, width, m.hidden);
  return linear(m, m.hidden, width) + linear(m, width, m.hidden);
}

}  // namespace

LayerParams layer_params(const ModelSpec& m, int layer) {
  LayerParams p;
  p.attention = attention_params(m);
  p.norms = 2 * norm_params(m, m.hidden);
  if (!m.is_moe_layer(layer)) {
    p.dense_ffn = ffn_params(m, m.ffn.hidden);
    return p;
  }
  const MoeSpec& e = *m.moe;
  // Experts are SwiGLU in every MoE model of the zoo (DeepSeekMoE); the gate has no bias, except
  // the sigmoid gate's per-expert load-balancing correction (DeepSeek-V3, auxiliary-loss-free).
  p.expert = 3 * m.hidden * e.expert_hidden;
  p.routed_experts = p.expert * e.routed_experts;
  p.shared_experts = p.expert * e.shared_experts;
  p.gate = m.hidden * e.routed_experts + (e.gating == Gating::kSigmoid ? e.routed_experts : 0);
  return p;
}

int64_t mtp_module_params(const ModelSpec& m, bool activated_only) {
  // DeepSeek-V3 sec. 2.2: RMSNorm of the hidden state and of the next token's embedding, their
  // concatenation projected 2h -> h, one transformer block, and the final norm before the shared
  // head (config_671B's MTP layer holds enorm, hnorm, eh_proj and shared_head.norm).
  const LayerParams layer = layer_params(m, m.layers - 1);
  int64_t block = layer.total();
  if (activated_only && m.moe && m.is_moe_layer(m.layers - 1))
    block = layer.non_expert() + layer.expert * m.moe->top_k;
  return 3 * norm_params(m, m.hidden) + m.hidden * 2 * m.hidden + block;
}

ParamCounts param_counts(const ModelSpec& m) {
  ParamCounts c;
  c.tied = m.tied_embeddings;
  c.embedding = m.vocab * m.hidden;
  c.positions = m.learned_positions * m.hidden;
  c.head = m.tied_embeddings ? 0 : m.vocab * m.hidden;
  c.final_norm = norm_params(m, m.hidden);
  for (int l = 0; l < m.layers; ++l) {
    const LayerParams p = layer_params(m, l);
    c.layers_total += p.total();
    c.layers_activated += p.non_expert() + (m.is_moe_layer(l) ? p.expert * m.moe->top_k : 0);
  }
  c.mtp_total = m.mtp_depth * mtp_module_params(m, false);
  c.mtp_activated = m.mtp_depth * mtp_module_params(m, true);
  return c;
}

}  // namespace cs::models
