#include "models/layer_builder.h"

#include <cmath>

namespace cs::models {

namespace {

constexpr double kAct = 2;  // BF16 activation bytes

double gemm_bytes(const sim::GemmShape& g) {
  const double in = sim::dtype_bytes(g.dtype);
  const double out = g.dtype == sim::DType::kFp32 ? 4 : 2;
  return g.groups * ((static_cast<double>(g.m) * g.k + static_cast<double>(g.k) * g.n) * in +
                     static_cast<double>(g.m) * g.n * out);
}

double gemm_flops(const sim::GemmShape& g) {
  return 2.0 * g.groups * static_cast<double>(g.m) * static_cast<double>(g.n) * static_cast<double>(g.k);
}

// The form of a forward form's backward kernel (forms without a backward of their own keep it).
sim::MemoryForm backward_form(sim::MemoryForm f) {
  using F = sim::MemoryForm;
  switch (f) {
    case F::kNorm: return F::kNormBackward;
    case F::kActivation: return F::kActivationBackward;
    case F::kRope: return F::kRopeBackward;
    case F::kEmbedding: return F::kEmbeddingBackward;
    case F::kLoss: return F::kLossBackward;
    default: return f;
  }
}

}  // namespace

LayerBuilder::LayerBuilder(const ModelSpec& m, const LayerContext& c, std::string prefix)
    : m_(m), c_(c), prefix_(std::move(prefix)) {}

LayerOp LayerBuilder::op(const std::string& name, Pass p, LayerOpKind k, Block b) const {
  LayerOp o;
  o.name = prefix_ + name;
  o.pass = p;
  o.kind = k;
  o.block = b;
  return o;
}

LayerBuilder::Unit& LayerBuilder::unit(bool recompute) {
  units_.emplace_back();
  units_.back().recompute = recompute;
  return units_.back();
}

void LayerBuilder::norm(const std::string& name, Block b, double rows, double width, bool recompute) {
  // RMSNorm: x^2, sum, scale by 1/rms, scale by gamma (4 per element); LayerNorm adds the mean
  // and the bias (7). Backward about twice the forward, reading x and dy and writing dx.
  const double f = m_.norm == NormKind::kLayerNorm ? 7 : 4;
  elementwise(name, b, rows * width, f, 2 * kAct, 2 * f, 3 * kAct, recompute, sim::MemoryForm::kNorm);
}

void LayerBuilder::cast(const std::string& name, Block b, double rows, double width) {
  if (!c_.fp8) return;
  Unit& u = unit(false);
  LayerOp o = op(name, Pass::kForward, LayerOpKind::kElementwise, b);
  // abs-max per 128, scale and convert: 3 operations per element; read BF16, write FP8 + scales.
  o.flops = 3 * rows * width;
  o.hbm_bytes = rows * width * (kAct + kFp8TileBytes);
  u.fwd.push_back(o);
}

void LayerBuilder::linear(const std::string& name, Block b, double m, int64_t n, int64_t k, int groups, bool bf16,
                          bool recompute, double model_share, bool input_shared) {
  const bool fp8 = c_.fp8 && !bf16;
  const sim::DType dt = fp8 ? sim::DType::kFp8 : sim::DType::kBf16;
  const int64_t mi = std::llround(m);
  Unit& u = unit(recompute);
  const auto gemm = [&](Pass p, const std::string& suffix, int64_t gm, int64_t gn, int64_t gk) {
    LayerOp o = op(name + suffix, p, LayerOpKind::kGemm, b);
    o.gemm = sim::GemmShape{gm, gn, gk, dt, groups};
    o.flops = gemm_flops(o.gemm);
    o.model_flops = o.flops * model_share;
    o.hbm_bytes = gemm_bytes(o.gemm);
    return o;
  };
  u.fwd.push_back(gemm(Pass::kForward, "", mi, n, k));
  // Dgrad: dx[m x k] = dy[m x n] W^T; in FP8 the output gradient is quantised first.
  if (fp8) {
    LayerOp q = op(name + ".dy_cast", Pass::kBackwardInput, LayerOpKind::kElementwise, b);
    q.flops = 3 * m * n * groups;
    // Both the row-wise (dgrad) and column-wise (wgrad) quantisations are written.
    q.hbm_bytes = m * n * groups * (kAct + 2 * kFp8TileBytes);
    u.bwd.push_back(q);
  }
  u.bwd.push_back(gemm(Pass::kBackwardInput, ".dgrad", mi, k, n));
  // Wgrad: dW[k x n] = x^T[k x m] dy[m x n]. In FP8 it needs x in 128x1 tiles along the tokens,
  // but forward cached x in 1x128 tiles: it is read, dequantised, transposed, re-quantised and
  // stored again (DeepSeek-V3 sec. 3.5.2, "Support for Transposed GEMM Operations").
  if (fp8 && !input_shared) {
    LayerOp t = op(name + ".x_transpose_cast", Pass::kBackwardWeight, LayerOpKind::kElementwise, b);
    t.flops = 4 * m * k * groups;  // dequantise, abs-max per 128, scale, convert
    t.hbm_bytes = m * k * groups * 2 * kFp8TileBytes;
    u.wgt.push_back(t);
  }
  LayerOp w = gemm(Pass::kBackwardWeight, ".wgrad", k, n, mi);
  if (fp8) w.gemm.scaling = sim::Fp8Scaling::kTiles;  // x^T and dy, both activations in 1x128 tiles
  u.wgt.push_back(w);
}

void LayerBuilder::elementwise(const std::string& name, Block b, double elements, double fwd_flops_per,
                               double fwd_bytes_per, double bwd_flops_per, double bwd_bytes_per, bool recompute,
                               sim::MemoryForm form) {
  Unit& u = unit(recompute);
  LayerOp f = op(name, Pass::kForward, LayerOpKind::kElementwise, b);
  f.flops = elements * fwd_flops_per;
  f.hbm_bytes = elements * fwd_bytes_per;
  f.form = form;
  u.fwd.push_back(f);
  if (bwd_flops_per > 0 || bwd_bytes_per > 0) {
    LayerOp g = op(name + ".bwd", Pass::kBackwardInput, LayerOpKind::kElementwise, b);
    g.flops = elements * bwd_flops_per;
    g.hbm_bytes = elements * bwd_bytes_per;
    g.form = backward_form(form);
    u.bwd.push_back(g);
  }
}

void LayerBuilder::backward_elementwise(const std::string& name, Block b, double elements, double bytes_per,
                                        sim::MemoryForm form) {
  LayerOp g = op(name, Pass::kBackwardInput, LayerOpKind::kElementwise, b);
  g.hbm_bytes = elements * bytes_per;
  g.form = form;
  unit(false).bwd.push_back(g);
}

void LayerBuilder::attention(const std::string& name, int heads, int d_qk, int d_v, int kv_heads) {
  // Context parallelism: this GPU's t tokens are 1/cp of `seqs` sequences; with the causal-balanced
  // split it scores 1/cp of their query-key pairs, against keys and values of all cp x t tokens.
  const double s = static_cast<double>(c_.seq_len), cp = c_.cp;
  const double t = static_cast<double>(c_.tokens), seqs = t * cp / s;
  Unit& u = unit(false);
  LayerOp f = op(name, Pass::kForward, LayerOpKind::kAttention, Block::kAttention);
  f.flops = f.model_flops = attention_flops(seqs, heads, c_.seq_len, d_qk, d_v, c_.causal, false) / cp;
  f.head_dim_qk = d_qk, f.head_dim_v = d_v;
  const double q = t * heads * d_qk * kAct, k = t * cp * kv_heads * d_qk * kAct, v = t * cp * kv_heads * d_v * kAct;
  const double o = t * heads * d_v * kAct, lse = t * heads * 4.0;
  f.hbm_bytes = q + k + v + o + lse;
  u.fwd.push_back(f);
  LayerOp g = op(name + ".bwd", Pass::kBackwardInput, LayerOpKind::kAttention, Block::kAttention);
  g.flops = attention_flops(seqs, heads, c_.seq_len, d_qk, d_v, c_.causal, true) / cp;
  g.head_dim_qk = d_qk, g.head_dim_v = d_v;
  g.model_flops = 2 * f.model_flops;
  // Reads q, k, v, o, do and lse; writes dq, dk, dv.
  g.hbm_bytes = 2 * (q + k + v) + 2 * o + lse;
  u.bwd.push_back(g);
}

void LayerBuilder::comm(const std::string& name, Block b, CommOp fwd, double fwd_bytes, CommOp bwd, double bwd_bytes) {
  Unit& u = unit(false);
  if (fwd != CommOp::kNone) {
    LayerOp f = op(name, Pass::kForward, LayerOpKind::kComm, b);
    f.comm = fwd;
    f.comm_bytes = fwd_bytes;
    u.fwd.push_back(f);
  }
  if (bwd != CommOp::kNone) {
    LayerOp g = op(name + ".bwd", Pass::kBackwardInput, LayerOpKind::kComm, b);
    g.comm = bwd;
    g.comm_bytes = bwd_bytes;
    u.bwd.push_back(g);
  }
}

void LayerBuilder::activation(const std::string& name, Block b, double rows, double width, FfnActivation act) {
  if (act == FfnActivation::kSwiglu)  // silu(g) * u: reads 2 inputs, writes 1; backward writes 2 gradients
    elementwise(name, b, rows * width, 6, 3 * kAct, 10, 5 * kAct, false, sim::MemoryForm::kActivation);
  else  // tanh-approximated GELU
    elementwise(name, b, rows * width, 8, 2 * kAct, 12, 3 * kAct, false, sim::MemoryForm::kActivation);
}

void LayerBuilder::residual(const std::string& name, Block b, double rows, double width) {
  // Backward: the branch's gradient summed into the residual stream's, the same add.
  elementwise(name, b, rows * width, 1, 3 * kAct, 1, 3 * kAct, false, sim::MemoryForm::kResidualAdd);
}

std::vector<LayerOp> LayerBuilder::finish() {
  std::vector<LayerOp> out;
  for (const Unit& u : units_) out.insert(out.end(), u.fwd.begin(), u.fwd.end());
  for (const Unit& u : units_) {
    if (!u.recompute) continue;
    for (LayerOp o : u.fwd) {
      o.pass = Pass::kBackwardInput;
      o.recompute = true;
      o.model_flops = 0;
      o.name += ".recompute";
      out.push_back(o);
    }
  }
  for (auto it = units_.rbegin(); it != units_.rend(); ++it) out.insert(out.end(), it->bwd.begin(), it->bwd.end());
  for (auto it = units_.rbegin(); it != units_.rend(); ++it) out.insert(out.end(), it->wgt.begin(), it->wgt.end());
  return out;
}

}  // namespace cs::models
