#include "models/memory_model.h"

#include <algorithm>
#include <cassert>
#include <cstdio>
#include <map>

#include "models/layer_ops.h"
#include "models/model_params.h"
#include "models/pipeline_schedule.h"

namespace cs::models {

namespace {

constexpr double kGiB = 1024.0 * 1024 * 1024;
constexpr double kFp32 = 4, kInt32 = 4, kInt64 = 8;
// Our H200 reported totalGlobalMem = 150,109,880,320 B against its datasheet's 141 GB read as
// 141 x 2^30 (calibrate/data/h200/fp8_gemm.json, "memory_bytes"): about 0.9915 of it is usable.
constexpr double kHbmReportedFraction = 150109880320.0 / (141.0 * 1073741824.0);

// Collects one micro-batch's saved tensors on one GPU.
struct Saver {
  Saver(const MemoryInputs& i, std::vector<SavedTensor>& o) : in(i), out(o) {}
  const MemoryInputs& in;
  std::vector<SavedTensor>& out;
  std::string prefix;
  double T = static_cast<double>(in.tokens());
  double tp = in.layout.tp;
  // Sequence parallelism splits the norm and residual tensors over the TP ranks.
  double sp = in.layout.tp_comm == TpComm::kReduceScatter ? in.layout.tp : 1;
  const PrecisionRecipe& p = in.precision;
  const ModelSpec& m = in.model;

  void add(const std::string& name, double elements, double bytes) { out.push_back({prefix + name, elements, bytes}); }
  // A norm's backward reads its input and per-row statistics (RMSNorm 1/rms; LayerNorm mean, 1/std).
  void norm_stats(const std::string& name, double rows) {
    add(name + " statistics", rows * (m.norm == NormKind::kLayerNorm ? 2 : 1), kFp32);
  }
  void norm(const std::string& name, double width) {
    add(name + " input", T / sp * width, p.act_bytes);
    norm_stats(name, T / sp);
  }
  bool keep_norm_out() const { return !in.recompute.rms_norm; }
};

void attention(Saver& s) {
  const AttentionSpec& a = s.m.attention;
  const double h = s.m.hidden, heads = a.heads / s.tp;
  s.norm("attention norm", h);
  if (s.keep_norm_out()) s.add("attention norm output (first projections' input)", s.T / s.sp * h, s.p.linear_input_bytes);
  // Context parallelism: attention reads the keys and values of the whole sequence, gathered
  // from the CP group (cp x the local tokens), and backward needs them again.
  const double cp = s.in.layout.cp, gathered = s.T * cp;
  if (a.kind == AttentionKind::kGqa) {
    const double kv = a.kv_heads >= s.tp ? a.kv_heads / s.tp : 1;  // KV heads replicate when tp > kv_heads
    s.add("Q", s.T * heads * a.head_dim, s.p.act_bytes);
    s.add(cp > 1 ? "K (gathered over the CP group)" : "K", gathered * kv * a.head_dim, s.p.act_bytes);
    s.add(cp > 1 ? "V (gathered over the CP group)" : "V", gathered * kv * a.head_dim, s.p.act_bytes);
  } else {
    // The down-projections run on every TP rank, so their latents are not split.
    if (a.q_lora_rank > 0) {
      s.add("q latent (q norm input)", s.T * a.q_lora_rank, s.p.act_bytes);
      s.norm_stats("q norm", s.T);
      if (s.keep_norm_out()) s.add("q norm output (q up-projection input)", s.T * a.q_lora_rank, s.p.linear_input_bytes);
    }
    s.add("kv latent and RoPE key (kv norm input)", s.T * (a.kv_lora_rank + a.qk_rope_head_dim), s.p.act_bytes);
    s.norm_stats("kv norm", s.T);
    if (cp > 1) {
      // The latent and RoPE key gathered from the CP group: the kv up-projection's input, kept so
      // backward neither gathers again nor recomputes the other ranks' norms. The whole sequence's
      // up-projected K and V are never held: attention takes the keys a chunk at a time (as ring
      // attention does), one chunk of K and V being working memory, which is not counted here.
      s.add("kv latent gathered over the CP group (kv up-projection input)", gathered * a.kv_lora_rank,
            s.p.linear_input_bytes);
      s.add("RoPE key gathered over the CP group", gathered * a.qk_rope_head_dim, s.p.act_bytes);
    } else if (s.keep_norm_out()) {
      s.add("kv norm output (kv up-projection input)", s.T * a.kv_lora_rank, s.p.linear_input_bytes);
    }
    if (!s.in.recompute.mla_up_proj) {
      s.add("Q (q up-projection output)", s.T * heads * a.qk_head_dim(), s.p.act_bytes);
      s.add("K (kv up-projection output + RoPE key)", gathered * heads * a.qk_head_dim(), s.p.act_bytes);
      s.add("V (kv up-projection output)", gathered * heads * a.v_head_dim, s.p.act_bytes);
    }
  }
  // FlashAttention keeps O and the log-sum-exp, never the T x T scores.
  s.add("attention output O (o_proj input)", s.T * heads * a.v_dim(), s.p.attn_out_bytes);
  s.add("attention log-sum-exp", s.T * heads, kFp32);
}

void dense_ffn(Saver& s) {
  const double h = s.m.hidden, f = s.m.ffn.hidden / s.tp;
  s.norm("FFN norm", h);
  if (s.keep_norm_out()) s.add("FFN norm output (up-projection input)", s.T / s.sp * h, s.p.linear_input_bytes);
  if (s.m.ffn.activation == FfnActivation::kSwiglu) {
    s.add("SwiGLU input", s.T * 2 * f, s.p.act_bytes);
    s.add("SwiGLU output (down-projection input)", s.T * f, s.p.linear_input_bytes);
  } else {
    s.add("GELU input", s.T * f, s.p.act_bytes);
    s.add("GELU output (down-projection input)", s.T * f, s.p.linear_input_bytes);
  }
}

// MoE layers run with tp = 1 (layout_problem); balanced routing gives each GPU top_k x T rows.
void moe_ffn(Saver& s) {
  const MoeSpec& e = *s.m.moe;
  const double h = s.m.hidden, rows = e.top_k * s.T, eh = e.expert_hidden;
  s.norm("FFN norm", h);
  if (s.keep_norm_out()) {
    s.add("FFN norm output (router input)", s.T * h, s.p.act_bytes);  // the router GEMM is not FP8
    if (e.shared_experts > 0 && s.p.linear_input_bytes != s.p.act_bytes)
      s.add("FFN norm output, FP8 (shared-expert input)", s.T * h, s.p.linear_input_bytes);
  }
  s.add("router scores", s.T * e.routed_experts, kFp32);
  s.add("top-k expert indices", s.T * e.top_k, kInt64);
  s.add("top-k weights", s.T * e.top_k, kFp32);
  s.add("dispatched rows (expert up-projection input)", rows * h, s.p.linear_input_bytes);
  s.add("expert SwiGLU input", rows * 2 * eh, s.p.moe_swiglu_input_bytes);
  // DeepEP's combine is an unweighted sum (deep_ep/buffer.py, combine), so each row's gate weight
  // scales its SwiGLU output before the down projection. That fused op's backward gets the gate
  // weight's gradient from the SwiGLU input and output, so no expert output is kept.
  if (!s.p.moe_swiglu_output_recomputed)
    s.add("expert SwiGLU output (down-projection input)", rows * eh, s.p.linear_input_bytes);
  s.add("row gate weights", rows, kFp32);
  s.add("row source indices", rows, kInt32);
  if (e.shared_experts > 0) {
    s.add("shared-expert SwiGLU input", s.T * 2 * e.shared_experts * eh, s.p.moe_swiglu_input_bytes);
    if (!s.p.moe_swiglu_output_recomputed)
      s.add("shared-expert SwiGLU output", s.T * e.shared_experts * eh, s.p.linear_input_bytes);
  }
}

void layer(Saver& s, int l) {
  attention(s);
  if (s.m.is_moe_layer(l))
    moe_ffn(s);
  else
    dense_ffn(s);
}

// The head runs in BF16 (DeepSeek-V3 sec. 3.3), so its input stays in the activation precision.
// The cross-entropy keeps the softmax of the T x vocab/tp logits: Megatron's vocab-parallel cross
// entropy casts the logits to FP32 and keeps exp(logits) for backward; a fused loss that keeps
// them in BF16 sets logits_bytes = 2. Both presets assume the FP32 copy.
void head(Saver& s) {
  s.norm("final norm", s.m.hidden);
  if (s.keep_norm_out()) s.add("final norm output (head input)", s.T / s.sp * s.m.hidden, s.p.act_bytes);
  s.add("logits", s.T * s.m.vocab / s.tp, s.p.logits_bytes);
}

// An MTP module (DeepSeek-V3 sec. 2.2): norms of the previous depth's hidden state (already kept as
// that depth's final norm input) and of the next tokens' embedding, their projection 2h -> h, one
// layer shaped like the last, and its own pass through the shared head.
void mtp_module(Saver& s) {
  const double h = s.m.hidden;
  s.add("embedding of the shifted tokens (embedding norm input)", s.T / s.sp * h, s.p.act_bytes);
  s.norm_stats("embedding norm", s.T / s.sp);
  s.norm_stats("hidden norm", s.T / s.sp);
  if (s.keep_norm_out()) s.add("normalised hidden and embedding (projection input)", s.T / s.sp * 2 * h, s.p.act_bytes);
  layer(s, s.m.layers - 1);
  head(s);
}

int model_stage_count(const MemoryInputs& in) { return in.model_stages > 0 ? in.model_stages : in.layout.pp; }

// Layers per model stage: the layout's split over model_stage_count() stages.
std::vector<int> model_split(const MemoryInputs& in) {
  ParallelLayout l = in.layout;
  l.pp = model_stage_count(in);
  return stage_layers(l, in.model, in.seq_len);
}

// The stages the rank holds (chunk counts aside).
HeldMoment rank_held(const MemoryInputs& in) {
  if (in.rank_moments.empty()) return held_stages(in.layout, in.schedule, in.pp_rank);
  assert(in.pp_rank < static_cast<int>(in.rank_moments.size()) && !in.rank_moments[in.pp_rank].empty());
  return in.rank_moments[in.pp_rank].front();
}

// One micro-batch's saved tensors of a model stage: its extras and its layers.
std::vector<SavedTensor> stage_chunk(const MemoryInputs& in, const std::vector<int>& split, int stage) {
  std::vector<SavedTensor> chunk = stage_extra_saved_tensors(in, stage);
  const int first = first_layer_of_stage(split, stage);
  for (int i = first; i < first + split[stage]; ++i) {
    const std::vector<SavedTensor> t = layer_saved_tensors(in, i);
    chunk.insert(chunk.end(), t.begin(), t.end());
  }
  return chunk;
}

// Parameters on one GPU, split by how ZeRO-1 shards their optimizer states.
struct ParamPart {
  std::string name;
  double dense = 0;   // sharded over dp
  double expert = 0;  // routed experts: sharded over the experts' dp/ep replicas
};

double mla_replicated_params(const ModelSpec& m) {
  const AttentionSpec& a = m.attention;
  if (a.kind != AttentionKind::kMla) return 0;
  const double norm = m.norm == NormKind::kLayerNorm ? 2 : 1, bias = m.linear_bias ? 1 : 0;
  double p = m.hidden * (a.kv_lora_rank + a.qk_rope_head_dim) + bias * (a.kv_lora_rank + a.qk_rope_head_dim) +
             norm * a.kv_lora_rank;
  if (a.q_lora_rank > 0) p += m.hidden * a.q_lora_rank + bias * a.q_lora_rank + norm * a.q_lora_rank;
  return p;
}

// TP splits attention heads, the dense FFN and the vocabulary; norms, MLA down-projections,
// experts and the router are whole on every TP rank.
ParamPart layer_part(const ModelSpec& m, const ParallelLayout& l, int layer) {
  const LayerParams p = layer_params(m, layer);
  const double rep = mla_replicated_params(m);
  ParamPart part;
  part.dense = (p.attention - rep) / l.tp + rep + p.norms + static_cast<double>(p.dense_ffn) / l.tp +
               p.shared_experts + p.gate;
  part.expert = static_cast<double>(p.routed_experts) / l.ep;
  return part;
}

std::vector<ParamPart> rank_params(const MemoryInputs& in) {
  const ModelSpec& m = in.model;
  const ParallelLayout& l = in.layout;
  const HeldMoment held = rank_held(in);
  const std::vector<int> split = model_split(in);
  const bool has_first = std::any_of(held.begin(), held.end(), [](const HeldStage& h) { return h.stage == 0; });
  const double table = static_cast<double>(m.vocab) * m.hidden / l.tp;
  std::vector<ParamPart> parts;
  for (const HeldStage& h : held) {
    const int first = first_layer_of_stage(split, h.stage), n = split[h.stage];
    ParamPart part{"stage " + std::to_string(h.stage) + " layers " + std::to_string(first) + "-" +
                   std::to_string(first + n - 1)};
    for (int i = first; i < first + n; ++i) {
      const ParamPart p = layer_part(m, l, i);
      part.dense += p.dense;
      part.expert += p.expert;
    }
    if (n > 0) parts.push_back(part);
    if (h.stage == 0) parts.push_back({"embedding", table + static_cast<double>(m.learned_positions) * m.hidden});
    if (h.stage != model_stage_count(in) - 1) continue;
    const ParamCounts c = param_counts(m);
    parts.push_back({"final norm", static_cast<double>(c.final_norm)});
    // A tied head, and the embedding MTP reads, are the stage-0 table: shared when this rank holds
    // stage 0 too (DualPipe's rank 0, DeepSeek-V3 sec. 2.2), else a copy kept in sync.
    if (!m.tied_embeddings) parts.push_back({"output head", table});
    if ((m.tied_embeddings || m.mtp_depth > 0) && !has_first) parts.push_back({"embedding copy on the last stage", table});
    if (m.mtp_depth > 0) {
      const ParamPart block = layer_part(m, l, m.layers - 1);
      const double own = mtp_module_params(m, false) - layer_params(m, m.layers - 1).total();
      parts.push_back({"MTP modules", m.mtp_depth * (own + block.dense), m.mtp_depth * block.expert});
    }
  }
  return parts;
}

std::string gib(double bytes) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.2f", bytes / kGiB);
  return buf;
}

}  // namespace

PrecisionRecipe PrecisionRecipe::deepseek_fp8() {
  PrecisionRecipe p;
  p.name = "deepseek_fp8";
  p.weight_bytes = 2;   // BF16 working weights
  p.grad_bytes = 4;     // FP32 gradients for accumulation (sec. 3.3.3)
  p.master_bytes = 4;   // FP32 master weights
  p.moment_bytes = 4;   // AdamW moments in BF16, 2 + 2 (sec. 3.3.3)
  p.act_bytes = 2;
  p.linear_input_bytes = kFp8TileBytes;  // Linear inputs cached in FP8 (sec. 3.3.3)
  // E5M6 is 12 bits; like the FP8 caches it carries 1x128 scales, turned 128x1 in backward.
  p.attn_out_bytes = 1.5 + (kFp8TileBytes - 1);
  p.moe_swiglu_input_bytes = kFp8TileBytes;  // cached in FP8, output recomputed (sec. 3.3.3)
  p.moe_swiglu_output_recomputed = true;
  p.logits_bytes = 4;
  return p;
}

PrecisionRecipe PrecisionRecipe::bf16_mixed() {
  PrecisionRecipe p;  // the struct's defaults: BF16 weights and activations, FP32 grads/master/moments
  p.name = "bf16_mixed";
  return p;
}

double MemoryBreakdown::category_bytes(MemoryCategory c) const {
  double sum = 0;
  for (const MemoryLine& l : lines)
    if (l.category == c) sum += l.bytes();
  return sum;
}

double MemoryBreakdown::total_bytes() const {
  double sum = 0;
  for (const MemoryLine& l : lines) sum += l.bytes();
  return sum;
}

double usable_hbm_bytes(const hw::GpuSpec& gpu) { return gpu.hbm_gb * kGiB * kHbmReportedFraction; }

std::vector<HeldStage> held_stages(const ParallelLayout& l, ScheduleMemory s, int r) {
  assert(r >= 0 && r < l.pp);
  if (s == ScheduleMemory::k1f1b) return {{r, l.pp - r}};
  // DualPipe (deepseek-ai/DualPipe, dualpipe.py): with h = min(r, pp-1-r), warm-up runs
  // 2(pp/2-h-1) + h+1 forwards of the nearer stage h and h+1 of stage pp-1-h; the first
  // overlapped forward of the main step adds one more: pp-h and h+1 chunks, pp+1 in all.
  assert(l.pp % 2 == 0);
  const int h = std::min(r, l.pp - 1 - r);
  const auto chunks = [&](int stage) { return stage == h ? l.pp - h : h + 1; };
  return {{r, chunks(r)}, {l.pp - 1 - r, chunks(l.pp - 1 - r)}};
}

void use_schedule_memory(MemoryInputs& in, const PipelineSchedule& s) {
  assert(s.ranks == in.layout.pp);
  in.model_stages = s.model_stages;
  if (s.params.kind == ScheduleKind::kDualPipe) in.schedule = ScheduleMemory::kDualPipe;
  in.rank_moments.assign(s.ranks, {});
  for (int r = 0; r < s.ranks; ++r) {
    const std::vector<StageRef> held = s.rank_stages(r);
    for (const std::vector<int>& live : activation_moments(s, r)) {
      HeldMoment m;
      for (size_t k = 0; k < held.size(); ++k) m.push_back({held[k].stage, live[k]});
      in.rank_moments[r].push_back(std::move(m));
    }
  }
}

HeldMoment activation_moment(const MemoryInputs& in) {
  if (in.rank_moments.empty()) return held_stages(in.layout, in.schedule, in.pp_rank);
  const HeldMoment held = rank_held(in);
  const std::vector<int> split = model_split(in);
  std::map<int, double> chunk_bytes;
  for (const HeldStage& h : held)
    for (const SavedTensor& t : stage_chunk(in, split, h.stage)) chunk_bytes[h.stage] += t.bytes();
  const HeldMoment* best = nullptr;
  double best_bytes = -1;
  for (const HeldMoment& m : in.rank_moments[in.pp_rank]) {
    double bytes = 0;
    for (const HeldStage& h : m) bytes += h.chunks * chunk_bytes.at(h.stage);
    if (bytes > best_bytes) {
      best = &m;
      best_bytes = bytes;
    }
  }
  return *best;
}

std::vector<SavedTensor> layer_saved_tensors(const MemoryInputs& in, int l) {
  std::vector<SavedTensor> out;
  Saver s(in, out);
  layer(s, l);
  return out;
}

std::vector<SavedTensor> stage_extra_saved_tensors(const MemoryInputs& in, int stage) {
  std::vector<SavedTensor> out;
  Saver s(in, out);
  // The embedding's output is layer 0's input, counted there; its backward needs only the ids.
  if (stage == 0) s.add("token ids (embedding backward)", s.T, kInt64);
  if (stage == model_stage_count(in) - 1) {
    head(s);
    for (int d = 0; d < in.model.mtp_depth; ++d) {
      s.prefix = "MTP " + std::to_string(d + 1) + ": ";
      mtp_module(s);
    }
  }
  return out;
}

double deepep_buffer_bytes(int64_t hidden, int ep, int sms) {
  if (ep <= 1) return 0;
  // deep_ep/buffer.py get_dispatch_config/get_combine_config: NVLink receive-queue tokens by EP
  // size (RDMA queues: 128); csrc/config.hpp size hints with NUM_MAX_NVL_PEERS = 8, top-k and
  // scale slots for 128 each, 8-byte SourceMeta, BF16 hidden (get_hidden_bytes).
  const double nvl_tokens = ep <= 8 ? 256 : ep <= 64 ? 288 : ep <= 128 ? 560 : 720, rdma_tokens = 128;
  const double channels = sms / 2, nvl_ranks = std::min(ep, 8), rdma_ranks = std::max(ep / 8, 1);
  const double hidden_bytes = 2.0 * hidden, meta = 8, topk = 128 * (kInt64 + kFp32), scales = 128 * kFp32;
  double nvl = channels * nvl_ranks * (2 * rdma_ranks + 3) * kInt32 +
               channels * nvl_ranks * nvl_tokens * (hidden_bytes + meta + topk + scales);
  double rdma = 0;
  if (ep > 8)
    rdma = channels * rdma_ranks * (8 * 2 + 2) * 2 * kInt32 +
           channels * rdma_ranks * rdma_tokens * 2 * (hidden_bytes + meta + topk + scales + 16) + 1048576;
  const double workspace = 32.0 * 1024 * 1024;  // NUM_WORKSPACE_BYTES
  return nvl + rdma + workspace;
}

double pp_p2p_buffer_bytes(const MemoryInputs& in) {
  const ParallelLayout& l = in.layout;
  const HeldMoment held = rank_held(in);
  const int stages = model_stage_count(in);
  // A neighbouring stage on the same rank is a local hand-over (DualPipeV's last rank holds the
  // V's two middle stages). DualPipe's two stages belong to different model copies, so each
  // borders only stages of its own copy, all on other ranks.
  const auto local = [&](int stage) {
    if (in.schedule == ScheduleMemory::kDualPipe) return false;
    return std::any_of(held.begin(), held.end(), [&](const HeldStage& h) { return h.stage == stage; });
  };
  int boundaries = 0;
  for (const HeldStage& h : held)
    for (const int n : {h.stage - 1, h.stage + 1})
      if (n >= 0 && n < stages && !local(n)) ++boundaries;
  const double sp = l.tp_comm == TpComm::kReduceScatter ? l.tp : 1;
  const double boundary = static_cast<double>(in.tokens()) * in.model.hidden / sp * in.precision.act_bytes;
  return 2.0 * boundaries * boundary;
}

MemoryBreakdown memory_breakdown(const MemoryInputs& in, const hw::GpuSpec& gpu) {
  MemoryBreakdown b;
  b.pp_rank = in.pp_rank;
  b.runtime_reserve_bytes = in.runtime_reserve_bytes;
  b.available_bytes = usable_hbm_bytes(gpu) - in.runtime_reserve_bytes;
  const PrecisionRecipe& p = in.precision;
  const ParallelLayout& l = in.layout;
  const double opt = p.master_bytes + p.moment_bytes;
  const double dense_shards = l.zero_stage >= 1 ? l.replicas() : 1, expert_shards = l.zero_stage >= 1 ? l.expert_dp() : 1;
  for (const ParamPart& part : rank_params(in)) {
    const double n = part.dense + part.expert;
    b.lines.push_back({MemoryCategory::kWeights, part.name, n, p.weight_bytes});
    b.lines.push_back({MemoryCategory::kGradients, part.name, n, p.grad_bytes});
    b.lines.push_back({MemoryCategory::kOptimizer, part.name + ": non-expert / " + std::to_string(int(dense_shards)),
                       part.dense, opt / dense_shards});
    if (part.expert > 0)
      b.lines.push_back({MemoryCategory::kOptimizer,
                         part.name + ": routed experts / " + std::to_string(int(expert_shards)), part.expert,
                         opt / expert_shards});
  }
  const std::vector<int> split = model_split(in);
  for (const HeldStage& h : activation_moment(in)) {
    if (h.chunks == 0) continue;
    // One line per tensor kind and size: count = its layers x the chunks in flight.
    std::map<std::pair<std::string, double>, int> seen;
    for (const SavedTensor& t : stage_chunk(in, split, h.stage)) ++seen[{t.name, t.bytes()}];
    const std::string stage = "stage " + std::to_string(h.stage) + " x" + std::to_string(h.chunks) + ": ";
    for (const auto& [key, n] : seen)
      b.lines.push_back({MemoryCategory::kActivations, stage + key.first, double(n) * h.chunks, key.second});
  }
  if (in.model.moe) {
    const double deepep = in.buffers.deepep_bytes.value_or(deepep_buffer_bytes(in.model.hidden, l.ep, in.buffers.deepep_sms));
    b.lines.push_back({MemoryCategory::kBuffers, "DeepEP dispatch/combine buffers", 1, deepep});
  }
  b.lines.push_back({MemoryCategory::kBuffers, "pipeline send/receive buffers", 1,
                     in.buffers.pp_p2p_bytes.value_or(pp_p2p_buffer_bytes(in))});
  return b;
}

MemoryBreakdown worst_rank_memory(MemoryInputs in, const hw::GpuSpec& gpu) {
  MemoryBreakdown worst;
  for (int r = 0; r < in.layout.pp; ++r) {
    in.pp_rank = r;
    MemoryBreakdown b = memory_breakdown(in, gpu);
    if (r == 0 || b.total_bytes() > worst.total_bytes()) worst = std::move(b);
  }
  return worst;
}

RankParamCounts rank_param_counts(const MemoryInputs& in) {
  RankParamCounts n;
  for (const ParamPart& part : rank_params(in)) {
    n.dense += part.dense;
    n.expert += part.expert;
  }
  return n;
}

std::string memory_summary(const MemoryBreakdown& b) {
  using C = MemoryCategory;
  const std::string reserve =
      b.runtime_reserve_bytes > 0 ? " (after a runtime reserve of " + gib(b.runtime_reserve_bytes) + ")" : "";
  return "needs " + gib(b.total_bytes()) + " GiB, " + gib(b.available_bytes) + " GiB available" + reserve + ": weights " +
         gib(b.category_bytes(C::kWeights)) + ", gradients " + gib(b.category_bytes(C::kGradients)) + ", optimizer " +
         gib(b.category_bytes(C::kOptimizer)) + ", activations " + gib(b.category_bytes(C::kActivations)) +
         ", buffers " + gib(b.category_bytes(C::kBuffers));
}

std::string does_not_fit_message(const MemoryBreakdown& b) {
  if (b.fits()) return "";
  return "pipeline rank " + std::to_string(b.pp_rank) + " does not fit: " + memory_summary(b);
}

}  // namespace cs::models
