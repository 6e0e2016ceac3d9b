// Builds the op list of one layer-like unit sequence: each call adds the forward ops of one step
// and remembers its backward; finish() lays out forward in order, then the recomputed forwards,
// then input-backward and weight-backward in reverse order. Byte counts assume BF16 activations
// (2 B) except where a cast writes FP8 (1 B plus one FP32 scale per 128 elements).
#pragma once

#include <string>
#include <vector>

#include "models/layer_ops.h"

namespace cs::models {

class LayerBuilder {
 public:
  LayerBuilder(const ModelSpec& m, const LayerContext& c, std::string prefix);

  // RMSNorm/LayerNorm over rows x width; `recompute`: re-run in backward instead of stored.
  void norm(const std::string& name, Block b, double rows, double width, bool recompute);
  // FP8 quantisation with 1x128 scales (no-op unless the context uses FP8 linears).
  void cast(const std::string& name, Block b, double rows, double width);
  // y[m x n] = x[m x k] W[k x n], `groups` times; FP8 context linears run in FP8 unless `bf16`.
  // `model_share`: the part of its FLOPs MFU counts (below 1 where ranks repeat one another's work).
  // `input_shared`: an earlier linear reads the same input, whose transposed FP8 copy serves both.
  void linear(const std::string& name, Block b, double m, int64_t n, int64_t k, int groups, bool bf16,
              bool recompute, double model_share = 1, bool input_shared = false);
  // Elementwise op with forward and backward FLOPs and bytes per element; `form` names the
  // forward kernel's form (its backward's the matching backward form, or the same).
  void elementwise(const std::string& name, Block b, double elements, double fwd_flops_per, double fwd_bytes_per,
                   double bwd_flops_per, double bwd_bytes_per, bool recompute = false,
                   sim::MemoryForm form = sim::MemoryForm::kAny);
  // A memory-bound op of the input backward only, placed in reverse order like the others.
  void backward_elementwise(const std::string& name, Block b, double elements, double bytes_per, sim::MemoryForm form);
  // FlashAttention core over `heads` heads of this GPU.
  void attention(const std::string& name, int heads, int d_qk, int d_v, int kv_heads);
  // A communication op in forward and its mirror in backward (kNone: nothing in that pass).
  void comm(const std::string& name, Block b, CommOp fwd, double fwd_bytes, CommOp bwd, double bwd_bytes);
  // SwiGLU or GELU on rows x width outputs.
  void activation(const std::string& name, Block b, double rows, double width, FfnActivation act);
  void residual(const std::string& name, Block b, double rows, double width);

  std::vector<LayerOp> finish();

  const LayerContext& context() const { return c_; }

 private:
  struct Unit {
    std::vector<LayerOp> fwd, bwd, wgt;
    bool recompute = false;
  };
  LayerOp op(const std::string& name, Pass p, LayerOpKind k, Block b) const;
  Unit& unit(bool recompute);

  const ModelSpec& m_;
  const LayerContext& c_;
  std::string prefix_;
  std::vector<Unit> units_;
};

}  // namespace cs::models
