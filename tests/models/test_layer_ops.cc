// Layer decomposition: each op type's FLOPs and shapes against formulas derived by hand on small
// shapes, recomputation, tensor-parallel communication and MoE expert GEMMs.
#include <catch2/catch.hpp>

#include <algorithm>
#include <string>

#include "models/layer_ops.h"
#include "models/model_zoo.h"

namespace CS_TEST_FILE {  // unique per file: the tests build in unity batches

using namespace cs::models;

namespace {

ModelSpec tiny_mla() {
  ModelSpec m;
  m.name = "tiny-mla";
  m.layers = 2;
  m.hidden = 64;
  m.vocab = 100;
  m.attention.kind = AttentionKind::kMla;
  m.attention.heads = 4;
  m.attention.q_lora_rank = 32;
  m.attention.kv_lora_rank = 16;
  m.attention.qk_nope_head_dim = 8;
  m.attention.qk_rope_head_dim = 4;
  m.attention.v_head_dim = 8;
  m.ffn.hidden = 96;
  MoeSpec e;
  e.first_dense_layers = 1;
  e.routed_experts = 8;
  e.shared_experts = 1;
  e.expert_hidden = 24;
  e.top_k = 2;
  m.moe = e;
  return m;
}

ModelSpec tiny_gqa() {
  ModelSpec m;
  m.name = "tiny-gqa";
  m.layers = 1;
  m.hidden = 64;
  m.vocab = 100;
  m.attention.heads = 8;
  m.attention.kv_heads = 2;
  m.attention.head_dim = 16;
  m.ffn.hidden = 128;
  return m;
}

LayerContext ctx(int64_t tokens, int64_t seq) {
  LayerContext c;
  c.tokens = tokens;
  c.seq_len = seq;
  return c;
}

const LayerOp& find(const std::vector<LayerOp>& ops, const std::string& name) {
  const auto it = std::find_if(ops.begin(), ops.end(), [&](const LayerOp& o) { return o.name == name; });
  REQUIRE(it != ops.end());
  return *it;
}

bool has(const std::vector<LayerOp>& ops, const std::string& name) {
  return std::any_of(ops.begin(), ops.end(), [&](const LayerOp& o) { return o.name == name; });
}

int count_comm(const std::vector<LayerOp>& ops, Pass p, CommOp c) {
  return static_cast<int>(std::count_if(ops.begin(), ops.end(), [&](const LayerOp& o) { return o.pass == p && o.comm == c; }));
}

}  // namespace

TEST_CASE("layer ops: a linear's forward, dgrad and wgrad are m x n x k, m x k x n and k x n x m", "[layer_ops]") {
  const std::vector<LayerOp> ops = layer_ops(tiny_mla(), 0, ctx(16, 8));
  const LayerOp& f = find(ops, "attn.q_down");
  CHECK(f.pass == Pass::kForward);
  CHECK((f.gemm.m == 16 && f.gemm.n == 32 && f.gemm.k == 64));
  CHECK(f.gemm.dtype == cs::sim::DType::kFp8);
  CHECK(f.flops == 2.0 * 16 * 32 * 64);
  CHECK(f.model_flops == f.flops);
  // A FP8 GEMM reads 1-byte inputs and writes BF16.
  CHECK(f.hbm_bytes == 16 * 64 + 64 * 32 + 16 * 32 * 2);
  const LayerOp& b = find(ops, "attn.q_down.dgrad");
  CHECK(b.pass == Pass::kBackwardInput);
  CHECK((b.gemm.m == 16 && b.gemm.n == 64 && b.gemm.k == 32));
  const LayerOp& w = find(ops, "attn.q_down.wgrad");
  CHECK(w.pass == Pass::kBackwardWeight);
  CHECK((w.gemm.m == 64 && w.gemm.n == 32 && w.gemm.k == 16));
  CHECK(b.flops == f.flops);
  CHECK(w.flops == f.flops);
  // FP8 dgrad quantises its output gradient first; the ordering in the list says so.
  const auto pos = [&](const std::string& n) {
    return std::find_if(ops.begin(), ops.end(), [&](const LayerOp& o) { return o.name == n; }) - ops.begin();
  };
  CHECK(pos("attn.q_down.dy_cast") + 1 == pos("attn.q_down.dgrad"));
  // Weight gradients come after every input gradient of the layer (ZB1P can defer them).
  CHECK(pos("attn.q_down.dgrad") < pos("attn.o_proj.wgrad"));
}

TEST_CASE("layer ops: MLA attention counts s(s+1)/2 causal pairs per head, backward executes 3 dqk + 2 dv", "[layer_ops]") {
  // 16 tokens = 2 sequences of 8; 4 heads; d_qk = 8 + 4, d_v = 8.
  const std::vector<LayerOp> ops = layer_ops(tiny_mla(), 0, ctx(16, 8));
  const double pairs = 2 * 4 * (8 * 9 / 2.0);
  const LayerOp& f = find(ops, "attn.core");
  CHECK(f.flops == 2 * pairs * (12 + 8));
  const LayerOp& b = find(ops, "attn.core.bwd");
  CHECK(b.flops == 2 * pairs * (3 * 12 + 2 * 8));
  CHECK(b.model_flops == 2 * f.model_flops);
  // The head dims go with the op, for a kernel of one head dim (FlashAttention-2) to pad v.
  CHECK(f.head_dim_qk == 12);
  CHECK(f.head_dim_v == 8);
  CHECK(b.head_dim_qk == 12);
  CHECK(b.head_dim_v == 8);
  LayerContext full = ctx(16, 8);
  full.causal = false;
  CHECK(find(layer_ops(tiny_mla(), 0, full), "attn.core").flops == 2 * (2 * 4 * 64.0) * 20);
  // The up-projections split the heads: q_up 32 -> 4 x 12, kv_up 16 -> 4 x (8 + 8).
  CHECK(find(ops, "attn.q_up").gemm.n == 48);
  CHECK(find(ops, "attn.kv_up").gemm.n == 64);
  CHECK(find(ops, "attn.kv_down").gemm.n == 16 + 4);
  CHECK(find(ops, "attn.o_proj").gemm.k == 32);
}

TEST_CASE("layer ops: GQA projects q, k and v in one GEMM and attends with d = head_dim", "[layer_ops]") {
  const std::vector<LayerOp> ops = layer_ops(tiny_gqa(), 0, ctx(32, 16));
  const LayerOp& qkv = find(ops, "attn.qkv");
  CHECK(qkv.gemm.n == (8 + 2 * 2) * 16);
  CHECK(find(ops, "attn.core").flops == 2 * (2 * 8 * (16 * 17 / 2.0)) * 32);
  CHECK(find(ops, "attn.core").head_dim_qk == 16);  // one head dim already
  CHECK(find(ops, "attn.core").head_dim_v == 16);
  CHECK(find(ops, "ffn.up").gemm.n == 2 * 128);  // SwiGLU: gate and up in one GEMM
  CHECK(find(ops, "ffn.down").gemm.k == 128);
  // The model FLOPs of a layer are 6 x its matmul parameters per token plus attention.
  double model = 0;
  for (const LayerOp& o : ops) model += o.model_flops;
  const double params = 64 * 128 + 2 * 64 * 32 + 128 * 64 + 3 * 64 * 128;
  CHECK(model == Approx(6 * params * 32 + 3 * 2 * (2 * 8 * (16 * 17 / 2.0)) * 32).epsilon(1e-12));
}

TEST_CASE("layer ops: MoE expert GEMMs are grouped per local expert with top_k x tokens rows", "[layer_ops]") {
  LayerContext c = ctx(16, 8);
  c.ep = 2;  // 8 experts over 2 ranks: 4 local experts, 2 x 16 = 32 rows -> 8 per expert
  const std::vector<LayerOp> ops = layer_ops(tiny_mla(), 1, c);
  const LayerOp& up = find(ops, "moe.expert_up");
  CHECK((up.gemm.groups == 4 && up.gemm.m == 8 && up.gemm.n == 48 && up.gemm.k == 64));
  CHECK(find(ops, "moe.expert_down").gemm.k == 24);
  CHECK(find(ops, "moe.gate").gemm.dtype == cs::sim::DType::kBf16);
  CHECK(find(ops, "moe.shared_up").gemm.m == 16);
  // Dispatch sends FP8 with 1x128 scales; its backward returns BF16 gradients; combine mirrors.
  CHECK(find(ops, "moe.dispatch").comm == CommOp::kDispatch);
  CHECK(find(ops, "moe.dispatch").comm_bytes == 64 * (1 + 4.0 / 128));
  CHECK(find(ops, "moe.dispatch.bwd").comm == CommOp::kCombine);
  CHECK(find(ops, "moe.combine").comm_bytes == 64 * 2);
  CHECK(find(ops, "moe.combine.bwd").comm == CommOp::kDispatch);
  // Skewed routing hands a GPU more rows.
  c.expert_rows = 48;
  CHECK(find(layer_ops(tiny_mla(), 1, c), "moe.expert_up").gemm.m == 12);
}

TEST_CASE("layer ops: recomputation re-runs RMSNorm and the MLA up-projections, counted as executed only", "[layer_ops]") {
  const std::vector<LayerOp> ops = layer_ops(tiny_mla(), 0, ctx(16, 8));
  for (const char* n : {"attn_norm.recompute", "attn.q_norm.recompute", "attn.kv_norm.recompute", "ffn_norm.recompute",
                        "attn.q_up.recompute", "attn.kv_up.recompute"}) {
    const LayerOp& o = find(ops, n);
    CHECK(o.recompute);
    CHECK(o.pass == Pass::kBackwardInput);
    CHECK(o.model_flops == 0);
  }
  CHECK(find(ops, "attn.q_up.recompute").flops == find(ops, "attn.q_up").flops);
  CHECK_FALSE(has(ops, "attn.q_down.recompute"));
  LayerContext none = ctx(16, 8);
  none.recompute_norm = none.recompute_mla_up = false;
  for (const LayerOp& o : layer_ops(tiny_mla(), 0, none)) CHECK_FALSE(o.recompute);
}

TEST_CASE("layer ops: tensor parallelism all-reduces twice per layer each way, or gathers and scatters", "[layer_ops]") {
  LayerContext c = ctx(32, 16);
  c.tp = 2;
  const std::vector<LayerOp> ar = layer_ops(tiny_gqa(), 0, c);
  CHECK(count_comm(ar, Pass::kForward, CommOp::kTpAllReduce) == 2);
  CHECK(count_comm(ar, Pass::kBackwardInput, CommOp::kTpAllReduce) == 2);
  CHECK(find(ar, "attn.qkv").gemm.n == (4 + 2 * 1) * 16);  // heads and KV heads split in two
  CHECK(find(ar, "attn.tp_reduce").comm_bytes == 32 * 64 * 2);
  c.tp_comm = TpComm::kReduceScatter;
  const std::vector<LayerOp> sp = layer_ops(tiny_gqa(), 0, c);
  CHECK(count_comm(sp, Pass::kForward, CommOp::kTpAllGather) == 2);
  CHECK(count_comm(sp, Pass::kForward, CommOp::kTpReduceScatter) == 2);
  CHECK(count_comm(sp, Pass::kBackwardInput, CommOp::kTpAllGather) == 2);
  CHECK(count_comm(sp, Pass::kBackwardInput, CommOp::kTpReduceScatter) == 2);
  CHECK(count_comm(sp, Pass::kForward, CommOp::kTpAllReduce) == 0);
  // Sequence parallelism normalises a tp-th of the tokens.
  CHECK(find(sp, "attn_norm").flops == find(ar, "attn_norm").flops / 2);
}

TEST_CASE("layer ops: head and MTP", "[layer_ops]") {
  const ModelSpec& v3 = *find_zoo_model("deepseek-v3");
  const std::vector<LayerOp> head = head_ops(v3, ctx(4096, 4096));
  const LayerOp& proj = find(head, "head.proj");
  CHECK((proj.gemm.m == 4096 && proj.gemm.n == 129280 && proj.gemm.k == 7168));
  CHECK(proj.gemm.dtype == cs::sim::DType::kBf16);
  const std::vector<LayerOp> mtp = mtp_ops(v3, ctx(4096, 4096));
  CHECK(find(mtp, "mtp.proj").gemm.k == 2 * 7168);
  CHECK(has(mtp, "mtp.moe.expert_up"));
  CHECK(has(mtp, "mtp.head.proj.wgrad"));
  // Forward first, then every backward op.
  const auto first_bwd = std::find_if(mtp.begin(), mtp.end(), [](const LayerOp& o) { return o.pass != Pass::kForward; });
  CHECK(std::all_of(first_bwd, mtp.end(), [](const LayerOp& o) { return o.pass != Pass::kForward; }));
}

TEST_CASE("layer ops: elementwise ops count their elements, FLOPs and bytes", "[layer_ops]") {
  // 16 tokens, hidden 64, q_lora 32, 4 heads with RoPE dim 4, dense FFN 96 (SwiGLU).
  const std::vector<LayerOp> ops = layer_ops(tiny_mla(), 0, ctx(16, 8));
  const LayerOp& norm = find(ops, "attn_norm");
  CHECK(norm.flops == 4.0 * 16 * 64);        // x^2, sum, 1/rms scale, gamma
  CHECK(norm.hbm_bytes == 2.0 * 2 * 16 * 64);  // read and write BF16
  CHECK(find(ops, "attn_norm.bwd").hbm_bytes == 3.0 * 2 * 16 * 64);
  const LayerOp& cast = find(ops, "attn.q_norm.cast");
  CHECK(cast.hbm_bytes == 16 * 32 * (2 + 1 + 4.0 / 128));  // BF16 in, FP8 + 1x128 FP32 scales out
  // RoPE on each head's rope part and the shared rope key: 3 FLOPs per element.
  CHECK(find(ops, "attn.rope").flops == 3.0 * 16 * (4 * 4 + 4));
  const LayerOp& act = find(ops, "ffn.act");
  CHECK(act.flops == 6.0 * 16 * 96);
  CHECK(act.hbm_bytes == 3.0 * 2 * 16 * 96);  // gate and up in, product out
  CHECK(find(ops, "ffn.act.bwd").hbm_bytes == 5.0 * 2 * 16 * 96);
  for (const LayerOp& o : ops)
    if (o.kind == LayerOpKind::kElementwise) CHECK(o.model_flops == 0);
  // Without FP8 there are no casts.
  LayerContext bf16 = ctx(16, 8);
  bf16.fp8 = false;
  for (const LayerOp& o : layer_ops(tiny_mla(), 0, bf16)) CHECK(o.name.find("cast") == std::string::npos);
}

TEST_CASE("layer ops: an FP8 wgrad first re-quantises its cached input transposed, once per input", "[layer_ops]") {
  const std::vector<LayerOp> ops = layer_ops(tiny_mla(), 1, ctx(16, 8));
  const auto pos = [&](const std::string& n) {
    return std::find_if(ops.begin(), ops.end(), [&](const LayerOp& o) { return o.name == n; }) - ops.begin();
  };
  // q_up: x is 16 tokens x 32 (the q latent), read and written as FP8 with its scales.
  const LayerOp& t = find(ops, "attn.q_up.x_transpose_cast");
  CHECK(t.pass == Pass::kBackwardWeight);
  CHECK(t.kind == LayerOpKind::kElementwise);
  CHECK(t.hbm_bytes == Approx(16 * 32 * 2 * kFp8TileBytes));
  CHECK(t.model_flops == 0);
  CHECK(pos("attn.q_up.x_transpose_cast") + 1 == pos("attn.q_up.wgrad"));
  // The routed experts' inputs: top_k x tokens rows of the hidden size over the local experts.
  CHECK(find(ops, "moe.expert_up.x_transpose_cast").hbm_bytes == Approx(2 * 16 * 64 * 2 * kFp8TileBytes));
  // q_down and kv_down read the same normalised input: one transposed copy serves both.
  CHECK(has(ops, "attn.q_down.x_transpose_cast"));
  CHECK_FALSE(has(ops, "attn.kv_down.x_transpose_cast"));
  // BF16 linears (the gate) and BF16 runs have none.
  CHECK_FALSE(has(ops, "moe.gate.x_transpose_cast"));
  LayerContext bf16 = ctx(16, 8);
  bf16.fp8 = false;
  for (const LayerOp& o : layer_ops(tiny_mla(), 1, bf16)) CHECK(o.name.find("x_transpose_cast") == std::string::npos);
}

TEST_CASE("layer ops: each memory-bound op names its kernel form, backward ones the backward form", "[layer_ops]") {
  const std::vector<LayerOp> ops = layer_ops(tiny_gqa(), 0, ctx(32, 16));
  CHECK(find(ops, "attn_norm").form == cs::sim::MemoryForm::kNorm);
  CHECK(find(ops, "attn_norm.bwd").form == cs::sim::MemoryForm::kNormBackward);
  CHECK(find(ops, "ffn.act").form == cs::sim::MemoryForm::kActivation);
  CHECK(find(ops, "ffn.act.bwd").form == cs::sim::MemoryForm::kActivationBackward);
  CHECK(find(ops, "attn.rope.bwd").form == cs::sim::MemoryForm::kRopeBackward);
  CHECK(find(ops, "ffn.residual").form == cs::sim::MemoryForm::kResidualAdd);
  CHECK(find(ops, "ffn.residual.bwd").form == cs::sim::MemoryForm::kResidualAdd);
  const std::vector<LayerOp> head = head_ops(tiny_gqa(), ctx(32, 16));
  CHECK(find(head, "head.loss").form == cs::sim::MemoryForm::kLoss);
  CHECK(find(head, "head.loss.bwd").form == cs::sim::MemoryForm::kLossBackward);
  CHECK(find(embedding_ops(tiny_gqa(), ctx(32, 16)), "embed.lookup.bwd").form == cs::sim::MemoryForm::kEmbeddingBackward);
  // GEMMs and attention have none.
  CHECK(find(ops, "attn.qkv").form == cs::sim::MemoryForm::kAny);
  CHECK(!has(ops, "attn.layout_copy"));
  CHECK(!has(ops, "attn.qkv_concat"));
}

TEST_CASE("layer ops: SDPA's layout copies move heads and KV heads each way, and qkv's split backward concatenates", "[layer_ops]") {
  LayerContext c = ctx(32, 16);
  c.attention_layout_copies = true;
  const std::vector<LayerOp> ops = layer_ops(tiny_gqa(), 0, c);
  // 8 heads and 2 KV heads of 16: (8 + 2) x 16 elements a token copied, read and written in BF16.
  const LayerOp& fwd = find(ops, "attn.layout_copy");
  CHECK(fwd.pass == Pass::kForward);
  CHECK(fwd.form == cs::sim::MemoryForm::kLayoutCopy);
  CHECK(fwd.hbm_bytes == 32.0 * (8 + 2) * 16 * 4);
  const LayerOp& bwd = find(ops, "attn.layout_copy.bwd");
  CHECK(bwd.pass == Pass::kBackwardInput);
  CHECK(bwd.hbm_bytes == fwd.hbm_bytes);
  const LayerOp& cat = find(ops, "attn.qkv_concat");
  CHECK(cat.pass == Pass::kBackwardInput);
  CHECK(cat.form == cs::sim::MemoryForm::kConcat);
  CHECK(cat.hbm_bytes == 32.0 * (8 + 2 * 2) * 16 * 4);
  CHECK(cat.flops == 0);
  // In backward order: after RoPE's backward, before qkv's dgrad; the copy before attention's backward.
  const auto at = [&](const std::string& n) {
    return std::find_if(ops.begin(), ops.end(), [&](const LayerOp& o) { return o.name == n; }) - ops.begin();
  };
  CHECK(at("attn.rope.bwd") < at("attn.qkv_concat"));
  CHECK(at("attn.qkv_concat") < at("attn.qkv.dgrad"));
  CHECK(at("attn.layout_copy.bwd") < at("attn.core.bwd"));
  // One op more forward (the copy), two more backward (its mirror and the concatenation).
  const std::vector<LayerOp> plain = layer_ops(tiny_gqa(), 0, ctx(32, 16));
  const auto forward = [](const std::vector<LayerOp>& v) {
    return std::count_if(v.begin(), v.end(), [](const LayerOp& o) { return o.pass == Pass::kForward; });
  };
  CHECK(forward(ops) == forward(plain) + 1);
  CHECK(ops.size() == plain.size() + 3);
}

}  // namespace CS_TEST_FILE
