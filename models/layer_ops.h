// One transformer layer (and the embedding, head and MTP modules) as the ops a GPU runs for one
// micro-batch: forward, input-backward (B) and weight-backward (W), with exact FLOPs and bytes.
//
// FLOPs: a GEMM of m x n x k costs 2mnk (per group). Attention (FlashAttention-style) scores
// s(s+1)/2 query-key pairs per head and sequence with causal masking (s^2 without): forward
// 2 x pairs x (d_qk + d_v); its backward recomputes the scores, so it executes
// 2 x pairs x (3 d_qk + 2 d_v) while the model-FLOPs convention counts twice the forward.
// `model_flops` is what MFU counts (matrix products of the model, no recomputation); `flops` is
// what the GPU executes. Elementwise ops (norms, RoPE, SwiGLU, casts, residual adds) have
// executed FLOPs and HBM bytes but no model FLOPs.
//
// Recomputation (DeepSeek recomputes RMSNorm and the MLA up-projections) re-runs the forward of
// those ops at the start of the layer's backward, marked `recompute`.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "models/model_spec.h"
#include "models/parallel_layout.h"
#include "sim/op_graph.h"

namespace cs::models {

// Bytes per FP8 element with its share of one FP32 scale per 1x128 tile (DeepSeek-V3 sec. 3.3.2).
inline constexpr double kFp8TileBytes = 1 + 4.0 / 128;

enum class Pass : uint8_t { kForward, kBackwardInput, kBackwardWeight };
const char* pass_name(Pass p);  // "F", "B", "W"

enum class LayerOpKind : uint8_t { kGemm, kAttention, kElementwise, kComm };

// DualPipe splits a chunk into attention, dispatch, MLP and combine (DeepSeek-V3 sec. 3.2.1).
enum class Block : uint8_t { kEmbedding, kAttention, kDispatch, kMlp, kCombine, kHead };
const char* block_name(Block b);

enum class CommOp : uint8_t {
  kNone,
  kDispatch,  // token -> expert direction (MoE dispatch; backward of combine)
  kCombine,   // expert -> token direction (MoE combine; backward of dispatch)
  kTpAllReduce,
  kTpReduceScatter,
  kTpAllGather,
  kCpAllGather,      // context parallelism: the keys' source (MLA latent, or K and V) from the CP group
  kCpReduceScatter,  // its backward: their gradients summed back to the ranks that own the tokens
};
const char* comm_op_name(CommOp c);
// The MoE all-to-alls (over the EP group) and the context-parallel collectives (over the CP group).
inline bool is_moe_comm(CommOp c) { return c == CommOp::kDispatch || c == CommOp::kCombine; }
inline bool is_cp_comm(CommOp c) { return c == CommOp::kCpAllGather || c == CommOp::kCpReduceScatter; }

struct LayerOp {
  std::string name;  // e.g. "attn.q_down"
  Pass pass = Pass::kForward;
  LayerOpKind kind = LayerOpKind::kElementwise;
  Block block = Block::kAttention;
  sim::GemmShape gemm;   // kGemm
  double flops = 0;       // executed
  double model_flops = 0; // counted for MFU
  int head_dim_qk = 0, head_dim_v = 0;  // attention: its head dims (sim::GenericCompute's)
  double hbm_bytes = 0;   // read + written
  sim::MemoryForm form = sim::MemoryForm::kAny;  // kElementwise: the kernel's form, for its rate
  CommOp comm = CommOp::kNone;
  double comm_bytes = 0;  // MoE: bytes per token and destination; TP, CP: the per-GPU buffer (nccl-tests size)
  bool recompute = false;
};

struct LayerContext {
  int64_t tokens = 0;   // tokens of one micro-batch on this GPU (micro-batch sequences x seq_len / cp)
  int64_t seq_len = 0;  // the whole sequence
  // Context parallelism: each sequence split over cp ranks, two chunks of 2 x cp each (one from
  // each end, so every rank gets the same share of the causal mask's work). Attention queries
  // its local tokens against the keys of the whole sequence, which come from an all-gather of
  // their source (MLA: the latent and RoPE key, up-projected on every rank; else K and V).
  int cp = 1;
  bool causal = true;
  int tp = 1;
  TpComm tp_comm = TpComm::kAllReduce;
  int ep = 1;
  bool fp8 = true;            // FP8 linears with 1x128 / 128x128 scaling (DeepSeek-V3 sec. 3.3)
  bool recompute_norm = true;
  bool recompute_mla_up = true;
  // GQA attention as PyTorch's SDPA takes it from a fused qkv projection and a compiled RoPE: a
  // heads- and a kv_heads-wide copy into or out of its [b, h, s, d] layout each way, and the
  // split's backward a concatenation.
  bool attention_layout_copies = false;
  // Expert rows each GPU computes per micro-batch; 0 means balanced routing (top_k x tokens).
  double expert_rows = 0;
};

// Layer `layer` (0-based) of the model.
std::vector<LayerOp> layer_ops(const ModelSpec& m, int layer, const LayerContext& c);
// Token (and learned position) embedding lookup.
std::vector<LayerOp> embedding_ops(const ModelSpec& m, const LayerContext& c);
// Final norm, output head and cross-entropy loss.
std::vector<LayerOp> head_ops(const ModelSpec& m, const LayerContext& c);
// One MTP module (DeepSeek-V3 sec. 2.2): embedding of the shifted tokens, two norms, the 2h -> h
// projection, one transformer layer shaped like the last, its final norm, the shared head and loss.
std::vector<LayerOp> mtp_ops(const ModelSpec& m, const LayerContext& c);

// FLOPs of FlashAttention-style attention over `sequences` sequences of `seq` tokens: QK^T and PV
// over the causal (or full) score matrix forward; backward recomputes QK^T and forms dV, dP, dQ, dK.
double attention_flops(double sequences, int64_t heads, int64_t seq, int64_t d_qk, int64_t d_v, bool causal,
                       bool backward);

// How a cost model should time the op's kernel when it is not a GEMM.
sim::ComputeKind compute_kind(const LayerOp& op);

}  // namespace cs::models
