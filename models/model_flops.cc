#include "models/model_flops.h"

#include "models/layer_ops.h"

namespace cs::models {

FlopsPerToken model_flops_per_token(const ModelSpec& m, int64_t seq_len, bool causal) {
  LayerContext c;
  c.tokens = seq_len;  // one sequence; FLOPs per token do not depend on the batch
  c.seq_len = seq_len;
  c.causal = causal;
  FlopsPerToken f;
  const auto add = [&](const std::vector<LayerOp>& ops, bool mtp) {
    for (const LayerOp& o : ops) {
      const double per_token = o.model_flops / static_cast<double>(seq_len);
      if (mtp)
        f.mtp += per_token;
      else if (o.kind == LayerOpKind::kAttention)
        f.attention += per_token;
      else
        f.linear += per_token;
    }
  };
  for (int l = 0; l < m.layers; ++l) add(layer_ops(m, l, c), false);
  add(head_ops(m, c), false);
  for (int d = 0; d < m.mtp_depth; ++d) add(mtp_ops(m, c), true);
  return f;
}

}  // namespace cs::models
