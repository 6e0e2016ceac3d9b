// Per-GPU memory of a training setup: weights, gradients, optimizer states, saved activations and
// communication buffers of one pipeline rank, with a line per part, against the GPU's usable HBM.
//
// Activations are listed tensor by tensor as autograd keeps them between a micro-batch's forward
// and backward, for T = micro_batch_seqs x seq_len tokens. Not counted: transient working memory
// of the op being run (recomputed tensors, gradients of activations, FP8 copies of weights made
// for a GEMM), allocator fragmentation, and the CUDA context and library workspaces, which the
// caller can set aside as runtime_reserve_bytes. All byte counts are doubles: sharding and 1x128
// scales make fractions of a byte per element.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "hw/gpu_catalog.h"
#include "models/model_spec.h"
#include "models/moe_routing.h"
#include "models/parallel_layout.h"

namespace cs::models {

// The memory shape of a pipeline schedule (REFERENCE.md, DualPipe table).
enum class ScheduleMemory : uint8_t {
  k1f1b,      // rank r holds stage r once and pp - r micro-batches in flight (1F1B, ZB1P)
  kDualPipe,  // rank r holds stages r and pp-1-r and pp + 1 micro-batch chunks in flight; pp even
};

// Bytes per parameter or per element of each kind of stored state.
struct PrecisionRecipe {
  std::string name;
  double weight_bytes = 2;          // working weights
  double grad_bytes = 4;            // gradients, accumulated over micro-batches
  double master_bytes = 4;          // optimizer's master weights
  double moment_bytes = 8;          // AdamW first plus second moment
  double act_bytes = 2;             // activations kept in the compute precision
  double linear_input_bytes = 2;    // cached inputs of the transformer blocks' linear GEMMs
  double attn_out_bytes = 2;        // attention output O (o_proj input, also read by attention backward)
  double moe_swiglu_input_bytes = 2;
  bool moe_swiglu_output_recomputed = false;  // MoE SwiGLU outputs regenerated in backward
  double logits_bytes = 4;          // what the cross-entropy backward keeps per logit

  static PrecisionRecipe deepseek_fp8();  // DeepSeek-V3 tech report sec. 3.3
  static PrecisionRecipe bf16_mixed();    // Megatron-LM's default mixed precision
};

struct Recompute {
  bool rms_norm = false;     // norm outputs regenerated from their saved inputs in backward
  bool mla_up_proj = false;  // MLA Q/K/V regenerated from the saved compressed latents
};

// Communication buffers per GPU; unset means the derived default.
struct CommBuffers {
  std::optional<double> deepep_bytes;  // default: deepep_buffer_bytes(hidden, ep, deepep_sms)
  std::optional<double> pp_p2p_bytes;  // default: pp_p2p_buffer_bytes()
  int deepep_sms = kDeepEpDefaultSms;  // DeepEP's default SM count (REFERENCE.md, DeepEP)
};

// A model stage held by a rank and how many of its micro-batch chunks are in flight (at peak, or
// at one moment of a generated schedule).
struct HeldStage {
  int stage = 0;
  int chunks = 0;
};
// Every stage a rank holds with its chunks in flight at one moment.
using HeldMoment = std::vector<HeldStage>;

struct MemoryInputs {
  ModelSpec model;
  ParallelLayout layout;
  int pp_rank = 0;
  int micro_batch_seqs = 1;
  int64_t seq_len = 4096;
  ScheduleMemory schedule = ScheduleMemory::k1f1b;  // kDualPipe for DualPipe's moments too (two copies)
  // From a generated schedule (activation_moments), per pipeline rank: the moments when its
  // activations can peak, each listing every stage the rank holds. Empty: `schedule`'s closed form.
  std::vector<std::vector<HeldMoment>> rank_moments;
  // Model stages the layers are split over: pp x v for interleaved 1F1B, 2 x pp for DualPipeV;
  // 0 means layout.pp. Data-parallel sharding always follows `layout`.
  int model_stages = 0;
  Recompute recompute;
  PrecisionRecipe precision = PrecisionRecipe::bf16_mixed();
  CommBuffers buffers;
  // CUDA context, cuBLAS and NCCL workspaces: not measured yet, so 0 unless the caller knows better.
  double runtime_reserve_bytes = 0;

  // Tokens of one micro-batch on one GPU: context parallelism splits each sequence cp ways.
  int64_t tokens() const { return micro_batch_seqs * seq_len / layout.cp; }
};

// One tensor saved for backward, for one micro-batch.
struct SavedTensor {
  std::string name;
  double elements = 0;
  double bytes_per_element = 0;
  double bytes() const { return elements * bytes_per_element; }
};

enum class MemoryCategory : uint8_t { kWeights, kGradients, kOptimizer, kActivations, kBuffers };

struct MemoryLine {
  MemoryCategory category;
  std::string name;
  double count = 1;       // e.g. layers x micro-batches for an activation
  double bytes_each = 0;
  double bytes() const { return count * bytes_each; }
};

struct MemoryBreakdown {
  int pp_rank = 0;
  std::vector<MemoryLine> lines;
  double available_bytes = 0;  // usable HBM less the runtime reserve
  double runtime_reserve_bytes = 0;

  double category_bytes(MemoryCategory c) const;
  double total_bytes() const;
  bool fits() const { return total_bytes() <= available_bytes; }
};

// Usable HBM of a GPU: hbm_gb x 2^30 (HBM stacks are binary-sized) x what the device reports of it.
double usable_hbm_bytes(const hw::GpuSpec& gpu);

struct PipelineSchedule;  // models/pipeline_schedule.h
// Sets rank_moments (activation_moments of every rank), model_stages and, for DualPipe, schedule
// from a generated schedule whose ranks are the layout's pp.
void use_schedule_memory(MemoryInputs& in, const PipelineSchedule& s);

// The closed form of `s` (REFERENCE.md's table): the stages rank `pp_rank` holds, each at its peak.
std::vector<HeldStage> held_stages(const ParallelLayout& l, ScheduleMemory s, int pp_rank);
// The stages the rank of `in` holds at the moment its activations take the most bytes: the
// heaviest of its rank_moments, else held_stages(). Stages with no chunk in flight keep count 0.
HeldMoment activation_moment(const MemoryInputs& in);

// Saved tensors of one transformer layer / of a stage's extras (embedding; head, loss and MTP).
std::vector<SavedTensor> layer_saved_tensors(const MemoryInputs& in, int layer);
std::vector<SavedTensor> stage_extra_saved_tensors(const MemoryInputs& in, int stage);

// DeepEP's high-throughput buffers as its README sizes them (Config::get_nvl/rdma_buffer_size_hint
// with the recommended dispatch/combine config for the EP size) plus its 32 MiB workspace.
double deepep_buffer_bytes(int64_t hidden, int ep, int sms);
// One send and one receive buffer of a stage-boundary tensor for each boundary between a stage the
// rank holds and a neighbouring stage on another rank (per neighbour and direction for DualPipe).
double pp_p2p_buffer_bytes(const MemoryInputs& in);

MemoryBreakdown memory_breakdown(const MemoryInputs& in, const hw::GpuSpec& gpu);
// The pipeline rank with the largest total (stage 0 holds the embedding, the last stage the head).
MemoryBreakdown worst_rank_memory(MemoryInputs in, const hw::GpuSpec& gpu);

// The parameters one GPU of the pipeline rank holds, whose gradients it reduces and whose
// optimizer states it updates: `dense` replicated over dp, `expert` (routed experts) over the
// experts' dp/ep replicas (ParallelLayout::expert_dp).
struct RankParamCounts {
  double dense = 0, expert = 0;
};
RankParamCounts rank_param_counts(const MemoryInputs& in);

// "needs X GiB, Y GiB available: weights a, gradients b, ..." (GiB, 2 decimals)
std::string memory_summary(const MemoryBreakdown& b);
// Empty when it fits; else "pipeline rank R does not fit: " + memory_summary().
std::string does_not_fit_message(const MemoryBreakdown& b);

}  // namespace cs::models
