// Per-GPU memory: hand-computed totals on tiny models, ZeRO-1 sharding, recomputation, DualPipe's
// 2x parameters and pp+1 chunks, and DeepSeek-V3 on H800 in DeepSeek's layout (fits) and in a
// pp 4 layout (does not).
#include <string>

#include <catch2/catch.hpp>

#include "hw/gpu_catalog.h"
#include "models/memory_model.h"
#include "models/model_zoo.h"
#include "models/pipeline_schedule.h"

namespace CS_TEST_FILE {  // unique per file: the tests build in unity batches

using namespace cs::models;

namespace {

Approx exact(double x) { return Approx(x).epsilon(1e-12); }

const cs::hw::GpuSpec& h800() {
  const cs::hw::GpuSpec* g = cs::hw::find_gpu("h800");
  REQUIRE(g != nullptr);
  return *g;
}

// 2 layers, hidden 64, vocab 128, 4 heads of 16 with 2 KV heads, SwiGLU FFN 128.
ModelSpec tiny_gqa(int layers = 2) {
  ModelSpec m;
  m.name = "tiny-gqa";
  m.layers = layers;
  m.hidden = 64;
  m.vocab = 128;
  m.attention.kind = AttentionKind::kGqa;
  m.attention.heads = 4;
  m.attention.kv_heads = 2;
  m.attention.head_dim = 16;
  m.ffn.hidden = 128;
  return m;
}

// Layer 0 dense (FFN 128), layer 1 MoE: 4 routed + 1 shared experts of 32, top-2, sigmoid gate.
// MLA: 2 heads, q latent 32, kv latent 16, qk 16 + RoPE 8, v 16.
ModelSpec tiny_mla_moe() {
  ModelSpec m;
  m.name = "tiny-mla-moe";
  m.layers = 2;
  m.hidden = 64;
  m.vocab = 128;
  m.attention = {AttentionKind::kMla, 2, 0, 0, 32, 16, 16, 8, 16};
  m.ffn.hidden = 128;
  MoeSpec e;
  e.first_dense_layers = 1;
  e.routed_experts = 4;
  e.shared_experts = 1;
  e.expert_hidden = 32;
  e.top_k = 2;
  e.gating = Gating::kSigmoid;
  m.moe = e;
  return m;
}

double by_category(const MemoryBreakdown& b, MemoryCategory c) { return b.category_bytes(c); }

void print(const std::string& what, const MemoryBreakdown& b) {
  WARN(what << ", worst pipeline rank " << b.pp_rank << ": " << memory_summary(b));
}

}  // namespace

TEST_CASE("memory: tiny dense GQA model, bf16_mixed, one GPU, by hand") {
  MemoryInputs in;
  in.model = tiny_gqa();
  in.micro_batch_seqs = 2;
  in.seq_len = 8;  // T = 16 tokens
  const MemoryBreakdown b = memory_breakdown(in, h800());

  // Parameters: attention q 64x64 + k,v 2 x 64x32 + o 64x64 = 12288; two RMSNorms 128;
  // SwiGLU 3 x 64x128 = 24576; a layer 36992, two 73984; embedding and head 128x64 each; final norm 64.
  const double params = 2 * (12288 + 128 + 24576) + 2 * 8192 + 64;
  CHECK(params == 90432);
  CHECK(by_category(b, MemoryCategory::kWeights) == exact(2 * params));
  CHECK(by_category(b, MemoryCategory::kGradients) == exact(4 * params));
  CHECK(by_category(b, MemoryCategory::kOptimizer) == exact((4 + 4 + 4) * params));  // dp 1

  // One layer, T = 16, BF16 unless noted: attention norm input 16x64x2 = 2048 and its 1/rms 16x4;
  // norm output 2048; Q 16x4x16x2 = 2048; K and V 16x2x16x2 = 1024 each; O 2048; LSE 16x4x4 = 256;
  // FFN norm input 2048 + 64; its output 2048; SwiGLU input 16x256x2 = 8192; output 16x128x2 = 4096.
  const double layer = 2048 + 64 + 2048 + 2048 + 1024 + 1024 + 2048 + 256 + 2048 + 64 + 2048 + 8192 + 4096;
  CHECK(layer == 27008);
  // Token ids 16x8; final norm input 2048 + 64, output 2048; FP32 logits 16x128x4 = 8192.
  const double activations = 2 * layer + 128 + (2048 + 64 + 2048 + 8192);
  CHECK(by_category(b, MemoryCategory::kActivations) == exact(activations));
  CHECK(by_category(b, MemoryCategory::kBuffers) == 0);  // no pipeline neighbours, no experts
  CHECK(b.total_bytes() == exact(2 * params + 4 * params + 12 * params + activations));
  CHECK(b.total_bytes() == exact(1694272));
  CHECK(b.fits());
  CHECK(does_not_fit_message(b).empty());
}

TEST_CASE("memory: tiny MLA+MoE model, deepseek_fp8, both recomputations, by hand") {
  MemoryInputs in;
  in.model = tiny_mla_moe();
  in.layout.dp = 4;
  in.layout.ep = 2;
  in.seq_len = 16;  // T = 16 tokens
  in.precision = PrecisionRecipe::deepseek_fp8();
  in.recompute = {true, true};
  in.buffers.deepep_bytes = 1000;
  const MemoryBreakdown b = memory_breakdown(in, h800());

  // MLA: q_a 64x32 + q norm 32 + q_b 32x(2x24) + kv_a 64x24 + kv norm 16 + kv_b 16x(2x32) + o 32x64.
  const double attention = 2048 + 32 + 1536 + 1536 + 16 + 1024 + 2048;
  CHECK(attention == 8240);
  const double dense_layer = attention + 128 + 3 * 64 * 128;
  const double expert = 3 * 64 * 32;
  const double moe_non_expert = attention + 128 + expert /* shared */ + 64 * 4 + 4 /* gate and bias */;
  const double dense_params = dense_layer + moe_non_expert + 8192 + 8192 + 64;
  const double routed_local = 4 * expert / 2;  // ep 2
  CHECK(dense_params == 64164);
  CHECK(routed_local == 12288);
  CHECK(by_category(b, MemoryCategory::kWeights) == exact(2 * (dense_params + routed_local)));
  CHECK(by_category(b, MemoryCategory::kGradients) == exact(4 * (dense_params + routed_local)));
  // FP32 master + BF16 moments = 8 B; dense over dp 4, experts over dp/ep = 2 replicas.
  CHECK(by_category(b, MemoryCategory::kOptimizer) == exact(8 * dense_params / 4 + 8 * routed_local / 2));

  const double fp8 = 1 + 4.0 / 128, e5m6 = 1.5 + 4.0 / 128;
  // Attention: norm input 16x64x2 + 16x4; q latent 16x32x2 + 16x4; kv latent + RoPE key 16x24x2
  // + 16x4; O 16x2x16 in E5M6; LSE 16x2x4. Norm outputs and Q/K/V are recomputed.
  const double attn_acts = 2048 + 64 + 1024 + 64 + 768 + 64 + 16 * 2 * 16 * e5m6 + 128;
  CHECK(attn_acts == exact(4944));
  // Dense FFN: norm input 2048 + 64; SwiGLU input BF16 16x256x2; SwiGLU output FP8 16x128.
  const double dense_acts = attn_acts + 2048 + 64 + 8192 + 16 * 128 * fp8;
  // MoE: norm input 2048 + 64; router scores 16x4x4; top-k ids 16x2x8, weights 16x2x4; 32 rows:
  // dispatched 32x64 FP8, SwiGLU input 32x64 FP8, row weights and source indices 32x4 each;
  // shared SwiGLU input 16x64 FP8.
  const double moe_acts =
      attn_acts + 2048 + 64 + 256 + 256 + 128 + 32 * 64 * fp8 + 32 * 64 * fp8 + 128 + 128 + 16 * 64 * fp8;
  // Token ids 16x8; final norm input 2048 + 64; FP32 logits 16x128x4.
  const double activations = dense_acts + moe_acts + 128 + 2048 + 64 + 8192;
  CHECK(activations == exact(41024));
  CHECK(by_category(b, MemoryCategory::kActivations) == exact(activations));
  CHECK(by_category(b, MemoryCategory::kBuffers) == exact(1000));
  CHECK(b.total_bytes() == exact(678216));
}

TEST_CASE("memory: ZeRO-1 divides optimizer states by dp for dense and by dp/ep for experts") {
  MemoryInputs in;
  in.model = tiny_mla_moe();
  in.layout.dp = 8;
  in.layout.ep = 2;
  in.precision = PrecisionRecipe::bf16_mixed();
  const double dense_params = 64164, routed_local = 12288;  // as in the hand-computed case above
  in.layout.zero_stage = 0;
  const double unsharded = memory_breakdown(in, h800()).category_bytes(MemoryCategory::kOptimizer);
  CHECK(unsharded == exact(12 * (dense_params + routed_local)));
  in.layout.zero_stage = 1;
  const MemoryBreakdown b = memory_breakdown(in, h800());
  CHECK(b.category_bytes(MemoryCategory::kOptimizer) == exact(12 * dense_params / 8 + 12 * routed_local / 4));
  // Weights and gradients are not sharded by ZeRO-1.
  CHECK(b.category_bytes(MemoryCategory::kGradients) == exact(4 * (dense_params + routed_local)));
}

TEST_CASE("memory: recomputation removes exactly the regenerated tensors") {
  MemoryInputs in;
  in.model = tiny_mla_moe();
  in.seq_len = 16;
  in.precision = PrecisionRecipe::deepseek_fp8();
  const auto acts = [&](bool norm, bool up) {
    in.recompute = {norm, up};
    return memory_breakdown(in, h800()).category_bytes(MemoryCategory::kActivations);
  };
  const double fp8 = 1 + 4.0 / 128, T = 16;
  // Norm outputs: attention norm (FP8 linear input) 16x64, q norm 16x32, kv norm 16x16 per layer;
  // dense FFN norm 16x64 FP8; MoE FFN norm 16x64 BF16 for the router + FP8 for the shared expert;
  // final norm 16x64 BF16 (head input).
  const double norm_outputs = 2 * T * (64 + 32 + 16) * fp8 + T * 64 * fp8 + T * 64 * (2 + fp8) + T * 64 * 2;
  CHECK(norm_outputs == exact(9904));
  // MLA up-projections per layer: Q and K 16x2x24 BF16, V 16x2x16 BF16.
  const double up_outputs = 2 * (2 * T * 2 * 24 * 2 + T * 2 * 16 * 2);
  CHECK(up_outputs == exact(8192));
  const double none = acts(false, false);
  CHECK(none - acts(true, false) == exact(norm_outputs));
  CHECK(none - acts(false, true) == exact(up_outputs));
  CHECK(none - acts(true, true) == exact(norm_outputs + up_outputs));
}

TEST_CASE("memory: DualPipe holds two stages' parameters and pp+1 chunks") {
  MemoryInputs in;
  in.model = tiny_gqa(8);
  in.layout.pp = 4;  // 2 layers per stage
  in.micro_batch_seqs = 2;
  in.seq_len = 8;
  in.buffers.pp_p2p_bytes = 0;
  in.pp_rank = 1;  // a middle rank: no embedding or head
  const double layer_params = 36992, layer_acts = 27008;  // from the tiny GQA case above

  const MemoryBreakdown one = memory_breakdown(in, h800());
  CHECK(one.category_bytes(MemoryCategory::kWeights) == exact(2 * 2 * layer_params));
  CHECK(one.category_bytes(MemoryCategory::kActivations) == exact((4 - 1) * 2 * layer_acts));  // pp - r

  in.schedule = ScheduleMemory::kDualPipe;
  const MemoryBreakdown dual = memory_breakdown(in, h800());
  CHECK(dual.category_bytes(MemoryCategory::kWeights) == exact(2 * one.category_bytes(MemoryCategory::kWeights)));
  CHECK(dual.category_bytes(MemoryCategory::kGradients) == exact(2 * one.category_bytes(MemoryCategory::kGradients)));
  CHECK(dual.category_bytes(MemoryCategory::kActivations) == exact((4 + 1) * 2 * layer_acts));

  // Every rank keeps pp + 1 chunks: stage h = min(r, pp-1-r) pp-h of them, stage pp-1-h h+1.
  for (int r = 0; r < 4; ++r) {
    const auto held = held_stages(in.layout, ScheduleMemory::kDualPipe, r);
    REQUIRE(held.size() == 2);
    CHECK(held[0].stage == r);
    CHECK(held[1].stage == 3 - r);
    CHECK(held[0].chunks + held[1].chunks == 5);
  }
  CHECK(held_stages(in.layout, ScheduleMemory::kDualPipe, 0)[0].chunks == 4);
  CHECK(held_stages(in.layout, ScheduleMemory::kDualPipe, 3)[0].chunks == 1);

  // Default pipeline buffers: a send and a receive per neighbour and direction, 16x64 BF16 each.
  in.buffers.pp_p2p_bytes.reset();
  CHECK(pp_p2p_buffer_bytes(in) == exact(2 * 2 * 2 * 16 * 64 * 2));
  in.schedule = ScheduleMemory::k1f1b;
  in.pp_rank = 0;
  CHECK(pp_p2p_buffer_bytes(in) == exact(2 * 1 * 1 * 16 * 64 * 2));
}

namespace {

MemoryInputs with_schedule(MemoryInputs in, ScheduleKind kind, int stages, int micro_batches, int v = 1) {
  ScheduleParams p;
  p.kind = kind;
  p.stages = stages;
  p.micro_batches = micro_batches;
  p.virtual_stages = v;
  use_schedule_memory(in, make_schedule(p));
  return in;
}

}  // namespace

// The closed forms (REFERENCE.md's table) and the generated schedules agree: the heaviest moment
// of a 1F1B or DualPipe rank holds every stage at its own peak, so the bytes are the same.
TEST_CASE("memory: moments of generated 1F1B and DualPipe schedules give the closed forms' bytes") {
  MemoryInputs in;
  in.model = tiny_gqa(16);  // stage 0 keeps the token ids, the last stage the logits: stages differ
  in.micro_batch_seqs = 2;
  in.seq_len = 8;
  for (int pp = 2; pp <= 16; ++pp)
    for (int mult : {2, 3})
      for (const ScheduleKind kind : {ScheduleKind::k1f1b, ScheduleKind::kDualPipe}) {
        if (kind == ScheduleKind::kDualPipe && pp % 2 != 0) continue;
        in.layout.pp = pp;
        in.schedule = kind == ScheduleKind::kDualPipe ? ScheduleMemory::kDualPipe : ScheduleMemory::k1f1b;
        MemoryInputs gen = with_schedule(in, kind, pp, mult * pp);
        for (int r = 0; r < pp; ++r) {
          INFO(schedule_kind_name(kind) << " pp " << pp << " micro-batches " << mult * pp << " rank " << r);
          in.pp_rank = gen.pp_rank = r;
          const HeldMoment m = activation_moment(gen);
          const std::vector<HeldStage> closed = held_stages(in.layout, in.schedule, r);
          REQUIRE(m.size() == closed.size());
          for (size_t k = 0; k < m.size(); ++k) {
            CHECK(m[k].stage == closed[k].stage);
            CHECK(m[k].chunks == closed[k].chunks);
          }
          const MemoryBreakdown a = memory_breakdown(in, h800()), b = memory_breakdown(gen, h800());
          for (const MemoryCategory c : {MemoryCategory::kWeights, MemoryCategory::kGradients, MemoryCategory::kOptimizer,
                                         MemoryCategory::kActivations, MemoryCategory::kBuffers})
            CHECK(b.category_bytes(c) == exact(a.category_bytes(c)));
        }
      }
}

TEST_CASE("memory: interleaved 1F1B and DualPipeV ranks hold their model stages and send both ways") {
  MemoryInputs in;
  in.model = tiny_gqa(8);
  in.layout.pp = 4;  // ranks; 8 model stages of one layer each
  in.micro_batch_seqs = 2;
  in.seq_len = 8;
  const double layer_params = 36992, boundary = 16 * 64 * 2;  // from the tiny GQA case; T x h BF16
  const MemoryInputs il = with_schedule(in, ScheduleKind::kInterleaved1f1b, 4, 8, 2);
  const MemoryInputs dv = with_schedule(in, ScheduleKind::kDualPipeV, 8, 8);
  CHECK(il.model_stages == 8);
  CHECK(dv.model_stages == 8);
  // Boundaries with stages on other ranks. Interleaved rank 0 (stages 0, 4): 0-1, 4-3, 4-5; rank 1
  // (1, 5) all four. DualPipeV rank 0 (0, 7): 0-1, 7-6; rank 3 (3, 4) hands 3 to 4 itself.
  const int il_boundaries[] = {3, 4, 4, 3}, dv_boundaries[] = {2, 4, 4, 2};
  for (int r = 0; r < 4; ++r) {
    INFO("rank " << r);
    MemoryInputs a = il, b = dv;
    a.pp_rank = b.pp_rank = r;
    CHECK(pp_p2p_buffer_bytes(a) == exact(2 * il_boundaries[r] * boundary));
    CHECK(pp_p2p_buffer_bytes(b) == exact(2 * dv_boundaries[r] * boundary));
    const HeldMoment ma = activation_moment(a), mb = activation_moment(b);
    REQUIRE(ma.size() == 2);
    REQUIRE(mb.size() == 2);
    CHECK(ma[0].stage == r);
    CHECK(ma[1].stage == 4 + r);
    CHECK(mb[0].stage == r);
    CHECK(mb[1].stage == 7 - r);
    // Middle ranks hold two one-layer stages: two layers' weights, as a 1F1B rank of 2 layers.
    if (r == 1 || r == 2) {
      CHECK(memory_breakdown(a, h800()).category_bytes(MemoryCategory::kWeights) == exact(2 * 2 * layer_params));
      CHECK(memory_breakdown(b, h800()).category_bytes(MemoryCategory::kWeights) == exact(2 * 2 * layer_params));
    }
  }
  // The last model stage (7, not pp-1 = 3) keeps the logits: on rank 3 interleaved, rank 0 DualPipeV.
  const auto has_logits = [](const MemoryInputs& x, int stage) {
    for (const SavedTensor& t : stage_extra_saved_tensors(x, stage))
      if (t.name == "logits") return true;
    return false;
  };
  CHECK(has_logits(il, 7));
  CHECK_FALSE(has_logits(il, 3));
  // DualPipeV's rank 0 holds the embedding and the head (tiny_gqa is untied): one table each, no copy.
  MemoryInputs v0 = dv;
  v0.pp_rank = 0;
  const double table = 128 * 64, final_norm = 64;
  CHECK(memory_breakdown(v0, h800()).category_bytes(MemoryCategory::kWeights) ==
        exact(2 * (2 * layer_params + 2 * table + final_norm)));
}

TEST_CASE("memory: usable HBM and the does-not-fit message") {
  CHECK(usable_hbm_bytes(h800()) / (1 << 30) == Approx(79.32).margin(0.005));
  const cs::hw::GpuSpec* h200 = cs::hw::find_gpu("h200");
  REQUIRE(h200 != nullptr);
  CHECK(usable_hbm_bytes(*h200) == Approx(150109880320.0));  // what our H200 reported

  MemoryBreakdown b;
  b.pp_rank = 3;
  b.available_bytes = 10.0 * (1 << 30);
  b.lines = {{MemoryCategory::kWeights, "w", 1, 4.0 * (1 << 30)},
             {MemoryCategory::kGradients, "g", 2, 3.0 * (1 << 30)},
             {MemoryCategory::kActivations, "a", 1, 0.25 * (1 << 30)}};
  CHECK(!b.fits());
  CHECK(does_not_fit_message(b) ==
        "pipeline rank 3 does not fit: needs 10.25 GiB, 10.00 GiB available: weights 4.00, gradients 6.00, "
        "optimizer 0.00, activations 0.25, buffers 0.00");
}

TEST_CASE("memory: DeepEP buffer size hint for EP 64 on 20 SMs") {
  // csrc/config.hpp: 10 channels x 8 NVLink peers x 288 tokens x (14336 + 8 + 1024 + 512 + 512) B
  // + 10x8x19 ints; 10 channels x 8 RDMA peers x 128 tokens x 2 x (14336 + 8 + 1024 + 512 + 512 + 16)
  // + 10x8x18x2 ints + 1 MiB; plus the 32 MiB workspace.
  const double nvl = 10.0 * 8 * 288 * 16392 + 10 * 8 * 19 * 4;
  const double rdma = 10.0 * 8 * 128 * 2 * 16408 + 10 * 8 * 18 * 2 * 4 + 1048576;
  CHECK(deepep_buffer_bytes(7168, 64, 20) == exact(nvl + rdma + 32 * 1048576));
  CHECK(deepep_buffer_bytes(7168, 1, 20) == 0);
}

namespace {

// DeepSeek's layout (REFERENCE.md, training setup): 2048 H800, tp 1, ep 64, ZeRO-1, DualPipe,
// sequence 4096, one sequence per micro-batch, FP8 recipe, RMSNorm and MLA up-projections recomputed.
MemoryInputs deepseek_v3(int pp) {
  const ModelSpec* v3 = find_zoo_model("deepseek-v3");
  REQUIRE(v3 != nullptr);
  MemoryInputs in;
  in.model = *v3;
  in.layout.tp = 1;
  in.layout.pp = pp;
  in.layout.dp = 2048 / pp;
  in.layout.ep = 64;
  in.layout.zero_stage = 1;
  in.seq_len = 4096;
  in.micro_batch_seqs = 1;
  in.schedule = ScheduleMemory::kDualPipe;
  in.precision = PrecisionRecipe::deepseek_fp8();
  in.recompute = {true, true};
  REQUIRE(layout_problem(in.layout, in.model, 2048, 8).empty());
  return in;
}

}  // namespace

TEST_CASE("memory: ACCEPTANCE DeepSeek-V3 on H800, pp 16 dp 128 ep 64 DualPipe, fits on every rank") {
  MemoryInputs in = deepseek_v3(16);
  for (int r = 0; r < in.layout.pp; ++r) {
    in.pp_rank = r;
    const MemoryBreakdown b = memory_breakdown(in, h800());
    INFO("pp 16 rank " << r << ": " << memory_summary(b));
    CHECK(b.fits());
  }
  const MemoryBreakdown worst = worst_rank_memory(in, h800());
  print("DeepSeek-V3 pp 16 dp 128 ep 64 DualPipe", worst);
  CHECK(worst.fits());
}

TEST_CASE("memory: ACCEPTANCE DeepSeek-V3 on H800, pp 4 dp 512 ep 64 DualPipe, does not fit") {
  const MemoryBreakdown worst = worst_rank_memory(deepseek_v3(4), h800());
  print("DeepSeek-V3 pp 4 dp 512 ep 64 DualPipe", worst);
  CHECK_FALSE(worst.fits());
  const std::string msg = does_not_fit_message(worst);
  for (const char* word : {"weights", "gradients", "optimizer", "activations", "buffers", "GiB available"})
    CHECK(msg.find(word) != std::string::npos);
}

}  // namespace CS_TEST_FILE
