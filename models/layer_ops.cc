#include "models/layer_ops.h"

#include <algorithm>

#include "models/layer_builder.h"

namespace cs::models {

namespace {

struct Shape {
  double t;       // tokens of the micro-batch
  double rows_n;  // tokens each TP rank normalises (t / tp with sequence parallelism)
  int64_t h;
};

Shape shape_of(const ModelSpec& m, const LayerContext& c) {
  const double t = static_cast<double>(c.tokens);
  const bool sp = c.tp > 1 && c.tp_comm == TpComm::kReduceScatter;
  return Shape{t, sp ? t / c.tp : t, m.hidden};
}

// Megatron's f/g pair: entering a TP region gathers the sequence-parallel shards (its backward
// reduce-scatters, or all-reduces without sequence parallelism); leaving it reduces.
void tp_enter(LayerBuilder& b, const std::string& part, Block blk, const Shape& s) {
  const LayerContext& c = b.context();
  if (c.tp == 1) return;
  const double bytes = s.t * s.h * 2;
  if (c.tp_comm == TpComm::kReduceScatter)
    b.comm(part + ".tp_gather", blk, CommOp::kTpAllGather, bytes, CommOp::kTpReduceScatter, bytes);
  else
    b.comm(part + ".tp_enter", blk, CommOp::kNone, 0, CommOp::kTpAllReduce, bytes);
}
void tp_exit(LayerBuilder& b, const std::string& part, Block blk, const Shape& s) {
  const LayerContext& c = b.context();
  if (c.tp == 1) return;
  const double bytes = s.t * s.h * 2;
  if (c.tp_comm == TpComm::kReduceScatter)
    b.comm(part + ".tp_scatter", blk, CommOp::kTpReduceScatter, bytes, CommOp::kTpAllGather, bytes);
  else
    b.comm(part + ".tp_reduce", blk, CommOp::kTpAllReduce, bytes, CommOp::kNone, 0);
}

void mla(LayerBuilder& b, const ModelSpec& m, const Shape& s) {
  const LayerContext& c = b.context();
  const AttentionSpec& a = m.attention;
  const int heads = a.heads / c.tp;
  const Block blk = Block::kAttention;
  b.norm("attn_norm", blk, s.rows_n, s.h, c.recompute_norm);
  tp_enter(b, "attn", blk, s);
  b.cast("attn_norm.cast", blk, s.t, s.h);
  // The down-projections are small and replicated over TP ranks; the up-projections split heads.
  if (a.q_lora_rank > 0) {
    b.linear("attn.q_down", blk, s.t, a.q_lora_rank, s.h, 1, false, false);
    b.norm("attn.q_norm", blk, s.t, a.q_lora_rank, c.recompute_norm);
    b.cast("attn.q_norm.cast", blk, s.t, a.q_lora_rank);
    b.linear("attn.q_up", blk, s.t, int64_t{heads} * a.qk_head_dim(), a.q_lora_rank, 1, false, c.recompute_mla_up);
  } else {
    b.linear("attn.q_proj", blk, s.t, int64_t{heads} * a.qk_head_dim(), s.h, 1, false, false);
  }
  b.linear("attn.kv_down", blk, s.t, int64_t{a.kv_lora_rank} + a.qk_rope_head_dim, s.h, 1, false, false, 1,
           true);  // the query's projection reads the same normalised input
  b.norm("attn.kv_norm", blk, s.t, a.kv_lora_rank, c.recompute_norm);
  b.cast("attn.kv_norm.cast", blk, s.t, a.kv_lora_rank);
  // Context parallelism gathers the latent (FP8 when the up-projection runs in FP8) and the
  // RoPE key, 1.1 KB a token instead of K and V's 80 KB, and every rank up-projects the whole
  // sequence; backward reduce-scatters their gradients in BF16. The up-projection and attention
  // run here as one GEMM and one kernel over all keys; a real implementation takes the keys a
  // chunk at a time (as ring attention does) to bound its working memory, with the same FLOPs.
  const double keys = s.t * c.cp;
  if (c.cp > 1)
    b.comm("attn.cp_gather", blk, CommOp::kCpAllGather,
           keys * (a.kv_lora_rank * (c.fp8 ? kFp8TileBytes : 2.0) + a.qk_rope_head_dim * 2.0), CommOp::kCpReduceScatter,
           keys * (a.kv_lora_rank + a.qk_rope_head_dim) * 2.0);
  b.linear("attn.kv_up", blk, keys, int64_t{heads} * (a.qk_nope_head_dim + a.v_head_dim), a.kv_lora_rank, 1, false,
           c.recompute_mla_up, 1.0 / c.cp);
  // RoPE rotates the query's rope part per head and the shared rope key: 3 FLOPs per element.
  b.elementwise("attn.rope", blk, s.t * (double(heads) * a.qk_rope_head_dim + a.qk_rope_head_dim), 3, 4, 3, 4, false,
                sim::MemoryForm::kRope);
  b.attention("attn.core", heads, a.qk_head_dim(), a.v_head_dim, heads);
  b.cast("attn.o.cast", blk, s.t, double(heads) * a.v_head_dim);
  b.linear("attn.o_proj", blk, s.t, s.h, int64_t{heads} * a.v_head_dim, 1, false, false);
  tp_exit(b, "attn", blk, s);
  b.residual("attn.residual", blk, s.rows_n, s.h);
}

void gqa(LayerBuilder& b, const ModelSpec& m, const Shape& s) {
  const LayerContext& c = b.context();
  const AttentionSpec& a = m.attention;
  const int heads = a.heads / c.tp;
  const int kv = std::max(1, a.kv_heads / c.tp);  // fewer KV heads than TP ranks: replicated
  const Block blk = Block::kAttention;
  b.norm("attn_norm", blk, s.rows_n, s.h, c.recompute_norm);
  tp_enter(b, "attn", blk, s);
  b.cast("attn_norm.cast", blk, s.t, s.h);
  b.linear("attn.qkv", blk, s.t, int64_t{heads + 2 * kv} * a.head_dim, s.h, 1, false, false);
  // The split of qkv into q, k and v is free forward; its backward concatenates their gradients
  // (after RoPE's backward, before qkv's dgrad) where SDPA's gradients come in its own layout.
  if (c.attention_layout_copies)
    b.backward_elementwise("attn.qkv_concat", blk, s.t * double(heads + 2 * kv) * a.head_dim, 2 * 2.0,
                           sim::MemoryForm::kConcat);
  b.elementwise("attn.rope", blk, s.t * double(heads + kv) * a.head_dim, 3, 4, 3, 4, false, sim::MemoryForm::kRope);
  // Context parallelism: K and V of the whole sequence from the CP group (BF16 both ways).
  if (c.cp > 1) {
    const double kv_bytes = s.t * c.cp * double(kv) * 2 * a.head_dim * 2.0;
    b.comm("attn.cp_gather", blk, CommOp::kCpAllGather, kv_bytes, CommOp::kCpReduceScatter, kv_bytes);
  }
  b.attention("attn.core", heads, a.head_dim, a.head_dim, kv);
  // Strided copies into or out of SDPA's [b, h, s, d] layout, one of heads x head_dim and one of
  // kv x head_dim a token, forward and again backward (the bench's trace: a 32-head and an 8-head
  // copy per layer and pass, where its compiled RoPE keeps the transposed views' strides).
  if (c.attention_layout_copies)
    b.elementwise("attn.layout_copy", blk, s.t * double(heads + kv) * a.head_dim, 0, 2 * 2.0, 0, 2 * 2.0, false,
                  sim::MemoryForm::kLayoutCopy);
  b.cast("attn.o.cast", blk, s.t, double(heads) * a.head_dim);
  b.linear("attn.o_proj", blk, s.t, s.h, int64_t{heads} * a.head_dim, 1, false, false);
  tp_exit(b, "attn", blk, s);
  b.residual("attn.residual", blk, s.rows_n, s.h);
}

void dense_ffn(LayerBuilder& b, const ModelSpec& m, const Shape& s) {
  const LayerContext& c = b.context();
  const int64_t f = m.ffn.hidden / c.tp;
  const int64_t up = m.ffn.activation == FfnActivation::kSwiglu ? 2 * f : f;
  const Block blk = Block::kMlp;
  b.norm("ffn_norm", blk, s.rows_n, s.h, c.recompute_norm);
  tp_enter(b, "ffn", blk, s);
  b.cast("ffn_norm.cast", blk, s.t, s.h);
  b.linear("ffn.up", blk, s.t, up, s.h, 1, false, false);
  b.activation("ffn.act", blk, s.t, f, m.ffn.activation);
  b.cast("ffn.act.cast", blk, s.t, f);
  b.linear("ffn.down", blk, s.t, s.h, f, 1, false, false);
  tp_exit(b, "ffn", blk, s);
  b.residual("ffn.residual", blk, s.rows_n, s.h);
}

void moe_ffn(LayerBuilder& b, const ModelSpec& m, const Shape& s) {
  const LayerContext& c = b.context();
  const MoeSpec& e = *m.moe;
  const double rows = c.expert_rows > 0 ? c.expert_rows : double(e.top_k) * s.t;
  const int local = e.routed_experts / c.ep;
  // Gating, in BF16/FP32 as DeepSeek keeps it, belongs with the compute before the dispatch.
  b.norm("ffn_norm", Block::kAttention, s.t, s.h, c.recompute_norm);
  b.linear("moe.gate", Block::kAttention, s.t, e.routed_experts, s.h, 1, true, false);
  // Sigmoid or softmax, group scores, top-k: about 4 operations per logit; FP32 logits in, k
  // (weight, index) pairs out; backward reads the logits and their gradient and writes one.
  b.elementwise("moe.topk", Block::kAttention, s.t * e.routed_experts, 4, 4 + 16.0 * e.top_k / e.routed_experts, 4,
                12);
  b.cast("moe.dispatch_cast", Block::kDispatch, s.t, s.h);
  // Dispatch carries FP8 tokens with their scales; its backward (the gradient of the expert
  // inputs going home) is a combine in BF16. Combine is BF16 both ways in bytes, but its
  // backward sends the output gradients to the experts quantised to FP8 (DeepSeek-V3 sec. 3.3.3).
  b.comm("moe.dispatch", Block::kDispatch, CommOp::kDispatch, s.h * kFp8TileBytes, CommOp::kCombine, s.h * 2.0);
  if (e.shared_experts > 0) {
    const int64_t fs = e.expert_hidden * e.shared_experts;
    b.linear("moe.shared_up", Block::kMlp, s.t, 2 * fs, s.h, 1, false, false);
    b.activation("moe.shared_act", Block::kMlp, s.t, fs, FfnActivation::kSwiglu);
    b.cast("moe.shared_act.cast", Block::kMlp, s.t, fs);
    b.linear("moe.shared_down", Block::kMlp, s.t, s.h, fs, 1, false, false);
  }
  b.linear("moe.expert_up", Block::kMlp, rows / local, 2 * e.expert_hidden, s.h, local, false, false);
  b.activation("moe.expert_act", Block::kMlp, rows, e.expert_hidden, FfnActivation::kSwiglu);
  b.cast("moe.expert_act.cast", Block::kMlp, rows, e.expert_hidden);
  b.linear("moe.expert_down", Block::kMlp, rows / local, s.h, e.expert_hidden, local, false, false);
  b.comm("moe.combine", Block::kCombine, CommOp::kCombine, s.h * 2.0, CommOp::kDispatch, s.h * kFp8TileBytes);
  b.residual("ffn.residual", Block::kCombine, s.t, s.h);
}

}  // namespace

const char* pass_name(Pass p) {
  switch (p) {
    case Pass::kForward: return "F";
    case Pass::kBackwardInput: return "B";
    case Pass::kBackwardWeight: return "W";
  }
  return "?";
}

const char* block_name(Block b) {
  switch (b) {
    case Block::kEmbedding: return "embedding";
    case Block::kAttention: return "attention";
    case Block::kDispatch: return "dispatch";
    case Block::kMlp: return "mlp";
    case Block::kCombine: return "combine";
    case Block::kHead: return "head";
  }
  return "?";
}

const char* comm_op_name(CommOp c) {
  switch (c) {
    case CommOp::kNone: return "none";
    case CommOp::kDispatch: return "dispatch";
    case CommOp::kCombine: return "combine";
    case CommOp::kTpAllReduce: return "all_reduce";
    case CommOp::kTpReduceScatter: return "reduce_scatter";
    case CommOp::kTpAllGather: return "all_gather";
    case CommOp::kCpAllGather: return "cp_all_gather";
    case CommOp::kCpReduceScatter: return "cp_reduce_scatter";
  }
  return "?";
}

std::vector<LayerOp> layer_ops(const ModelSpec& m, int layer, const LayerContext& c) {
  LayerBuilder b(m, c, "");
  const Shape s = shape_of(m, c);
  if (m.attention.kind == AttentionKind::kMla)
    mla(b, m, s);
  else
    gqa(b, m, s);
  if (m.is_moe_layer(layer))
    moe_ffn(b, m, s);
  else
    dense_ffn(b, m, s);
  return b.finish();
}

std::vector<LayerOp> embedding_ops(const ModelSpec& m, const LayerContext& c) {
  LayerBuilder b(m, c, "");
  const Shape s = shape_of(m, c);
  // A row lookup (read the row, write the activation); its gradient scatters rows back into the
  // table's gradient (read dy, read-modify-write FP32 rows).
  b.elementwise("embed.lookup", Block::kEmbedding, s.t * s.h, 0, 4, 1, 2 + 8, false, sim::MemoryForm::kEmbedding);
  if (m.learned_positions > 0) b.elementwise("embed.positions", Block::kEmbedding, s.t * s.h, 1, 6, 1, 2 + 8);
  // Vocabulary-parallel embedding: each TP rank holds a slice of the table, summed over ranks.
  if (c.tp > 1) b.comm("embed.tp_reduce", Block::kEmbedding, CommOp::kTpAllReduce, s.t * s.h * 2, CommOp::kNone, 0);
  return b.finish();
}

std::vector<LayerOp> head_ops(const ModelSpec& m, const LayerContext& c) {
  LayerBuilder b(m, c, "");
  const Shape s = shape_of(m, c);
  const int64_t v = (m.vocab + c.tp - 1) / c.tp;
  b.norm("head.final_norm", Block::kHead, s.rows_n, s.h, c.recompute_norm);
  tp_enter(b, "head", Block::kHead, s);
  // The head stays in BF16 (DeepSeek-V3 sec. 3.3.1 keeps the output head in higher precision).
  b.linear("head.proj", Block::kHead, s.t, v, s.h, 1, true, false);
  // Fused softmax cross-entropy over the vocabulary slice: max, exp, sum, log (about 5 per
  // logit); reads the BF16 logits, and in backward writes their gradient.
  b.elementwise("head.loss", Block::kHead, s.t * double(v), 5, 2, 3, 4, false, sim::MemoryForm::kLoss);
  // Vocabulary-parallel loss: per token, the max and the sum of exponentials are all-reduced.
  if (c.tp > 1) b.comm("head.loss_reduce", Block::kHead, CommOp::kTpAllReduce, s.t * 8, CommOp::kNone, 0);
  return b.finish();
}

std::vector<LayerOp> mtp_ops(const ModelSpec& m, const LayerContext& c) {
  std::vector<LayerOp> out;
  const auto append = [&](std::vector<LayerOp> ops, bool forward) {
    for (LayerOp& o : ops)
      if ((o.pass == Pass::kForward) == forward) {
        o.name = "mtp." + o.name;
        out.push_back(std::move(o));
      }
  };
  LayerBuilder pre(m, c, "");
  const Shape s = shape_of(m, c);
  pre.elementwise("embed.lookup", Block::kEmbedding, s.t * s.h, 0, 4, 1, 2 + 8, false, sim::MemoryForm::kEmbedding);
  pre.norm("enorm", Block::kEmbedding, s.t, s.h, c.recompute_norm);
  pre.norm("hnorm", Block::kEmbedding, s.t, s.h, c.recompute_norm);
  // [h_norm ; e_norm] (2h) -> h; DeepSeek does not list this matrix among its FP8 GEMMs, so BF16.
  pre.linear("proj", Block::kEmbedding, s.t, s.h, 2 * s.h, 1, true, false);
  const std::vector<LayerOp> a = pre.finish(), l = layer_ops(m, m.layers - 1, c), h = head_ops(m, c);
  // Forward through the module, then backward in reverse.
  append(a, true);
  append(l, true);
  append(h, true);
  append(h, false);
  append(l, false);
  append(a, false);
  return out;
}

double attention_flops(double sequences, int64_t heads, int64_t seq, int64_t d_qk, int64_t d_v, bool causal,
                       bool backward) {
  const double s = static_cast<double>(seq);
  const double pairs = sequences * static_cast<double>(heads) * (causal ? s * (s + 1) / 2 : s * s);
  return backward ? 2 * pairs * (3.0 * d_qk + 2.0 * d_v) : 2 * pairs * static_cast<double>(d_qk + d_v);
}

sim::ComputeKind compute_kind(const LayerOp& op) {
  switch (op.kind) {
    case LayerOpKind::kAttention:
      return op.pass == Pass::kForward ? sim::ComputeKind::kAttentionForward : sim::ComputeKind::kAttentionBackward;
    case LayerOpKind::kElementwise: return sim::ComputeKind::kMemoryBound;
    default: return sim::ComputeKind::kGeneric;
  }
}

}  // namespace cs::models
