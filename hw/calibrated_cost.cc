#include "hw/calibrated_cost.h"

#include <algorithm>
#include <array>
#include <atomic>
#include <cmath>
#include <cstdio>
#include <limits>
#include <map>
#include <mutex>
#include <stdexcept>
#include <tuple>
#include <unordered_map>

#include "sim/word_hash.h"

namespace cs::hw {

ClockLoad training_clock_load(const GpuProfile& p) {
  return p.power.present() && p.clocks.present() ? ClockLoad::kPowerCapped : ClockLoad::kSustained;
}

CalibratedCost::CalibratedCost(const GpuSpec& gpu, GpuProfile profile, ClockLoad load)
    : CalibratedCost(gpu, std::move(profile), 0.0) {
  if (load == ClockLoad::kPowerCapped && profile_.power.present() && profile_.clocks.present()) {
    power_capped_ = true;
    running_MHz_ = profile_.clocks.sustained_MHz;  // the copies'; GEMMs follow the power limit
    comm_slowdown_ = profile_.clocks.comm_fit_MHz / running_MHz_;
  } else if (load != ClockLoad::kFit && profile_.clocks.present()) {
    running_MHz_ = profile_.clocks.sustained_MHz;
    gemm_slowdown_ = profile_.clocks.gemm_fit_MHz / running_MHz_;
    comm_slowdown_ = profile_.clocks.comm_fit_MHz / running_MHz_;
  }
}

namespace {
std::atomic<uint64_t> next_gemm_time_id{0};
}  // namespace

CalibratedCost::CalibratedCost(const GpuSpec& gpu, GpuProfile profile, double running_MHz)
    : gpu_(gpu), profile_(std::move(profile)), roofline_(gpu, RooflineParams{}), gemm_time_id_(next_gemm_time_id++) {
  bf16_gemm_ = profile_.gemm_bf16.present() ? with_bf16_rates(profile_.gemm, profile_.gemm_bf16) : profile_.gemm;
  bf16_gemm_.tiling = GemmTiling::kCublasLt;  // BF16 GEMMs are cuBLASLt's (DeepGEMM's of 2025-02 were FP8 only)
  const ClockModel& c = profile_.clocks;
  if (running_MHz > 0 && c.present()) {
    running_MHz_ = running_MHz;
    gemm_slowdown_ = c.gemm_fit_MHz / running_MHz;
    comm_slowdown_ = c.comm_fit_MHz / running_MHz;
  }
  const MemoryModel& m = profile_.memory;
  // The catalog's L2 "MB" is NVIDIA's: MiB (the H100 reports 52428800 bytes).
  traffic_ = {static_cast<int>(m.gemm_swizzle_n_blocks), m.l2_reuse_share * gpu_.l2_mb * 1024 * 1024};
}

std::string CalibratedCost::describe() const {
  std::string clocks;
  if (power_capped_) {
    char buf[240];
    std::snprintf(buf, sizeof buf, "; SM clock under the %.0f W power limit, set from each GPU's draw over %.0f ms (GEMMs%s; copies at %.0f MHz)",
                  profile_.power.limit_W, profile_.power.window_ms,
                  profile_.kernel_clock.present() ? ", attention and memory-bound kernels by their measured shares" : "", running_MHz_);
    clocks = buf;
  } else if (gemm_slowdown_ != 1 || comm_slowdown_ != 1) {
    char buf[160];
    std::snprintf(buf, sizeof buf, "; sustained SM clock %.0f MHz (GEMM tiles x%.3f, copies x%.3f)", running_MHz_,
                  gemm_slowdown_, comm_slowdown_);
    clocks = buf;
  }
  return "calibrated profile " + profile_.gpu + " (" + profile_.file +
         (profile_.kernels.present()
              ? "): GEMMs, attention, memory-bound and communication kernels fitted, other kernels by the datasheet "
                "roofline"
              : "): GEMMs and communication kernels fitted, other kernels by the datasheet roofline") +
         (profile_.gemm.tiling == GemmTiling::kDeepGemm ? "; FP8 GEMMs in DeepGEMM's tiles" : "") +
         (profile_.deepep.present() ? "; internode all-to-alls at DeepEP's pace" : "") +
         (attention_ == AttentionKernel::kFa2 ? "; attention by FlashAttention-2, v padded to q/k's head dim" : "") +
         clocks;
}

const GemmModel& CalibratedCost::gemm_model(sim::DType t) const {
  return t == sim::DType::kBf16 ? bf16_gemm_ : profile_.gemm;
}

double CalibratedCost::mma_scale(sim::DType t) const {
  if (t == sim::DType::kBf16 && profile_.gemm_bf16.present()) return 1.0;
  return roofline_.peak_flops(t) / roofline_.peak_flops(sim::DType::kFp8);
}

double CalibratedCost::mma_scale(const sim::GemmShape& g) const {
  const bool tiles = g.dtype == sim::DType::kFp8 && g.scaling == sim::Fp8Scaling::kTiles && profile_.gemm_fp8_tiles.present();
  return mma_scale(g.dtype) / (tiles ? profile_.gemm_fp8_tiles.mma_slowdown : 1.0);
}

sim::ComputeCost CalibratedCost::gemm_cost(int gpu, const sim::GemmShape& g) const {
  const int sms = gemm_model_max_sms(gemm_model(g.dtype), g, gpu_.sms);
  return sim::ComputeCost{sms, gemm_hbm_bytes(gpu, g, sms, 0)};
}

double CalibratedCost::gemm_hbm_bytes(int gpu, const sim::GemmShape& g, int sms, double others_Bps) const {
  sms = std::clamp(sms, 1, gpu_.sms);
  const double shared_once = traffic_bytes(g, sms, 1.0, kNoSkewLoss);
  if (!traffic_.present()) return shared_once;
  // L2 is an LRU cache shared by every kernel's traffic: each holds a share in proportion to the
  // lines it brings in. The GEMM's own is its traffic over its time (with its whole share of L2 and
  // every shared panel read once: the rate it asks; a local copy's is twice its bytes, it reads
  // and writes through L2). A line then stays for the cache over the total rate, against the
  // spread of a wave's tile phases (hw/gemm_traffic.h); alone too.
  const double t = gemm_time(gpu, g, sms).to_seconds();
  const double others = others_Bps > 0 ? others_Bps : 0.0;  // not a number: none
  if (!(t > 0)) return shared_once;
  const double own = shared_once / t, total = own + others;
  double residency_over_skew = kNoSkewLoss;
  // Tiles longer than any the spread was measured on keep the longest one's spread.
  if (const MemoryModel& m = profile_.memory; m.l2_wave_skew > 0 && total > 0) {
    const double tile_us = std::min(gemm_model_tile_us(gemm_model(g.dtype), g, sms, mma_scale(g), gemm_slowdown_),
                                    m.l2_skew_max_tile_us);
    residency_over_skew = traffic_.l2_bytes / total / (m.l2_wave_skew * tile_us * 1e-6);
  }
  return traffic_bytes(g, sms, total > 0 ? own / total : 1.0, residency_over_skew);
}

double CalibratedCost::traffic_bytes(const sim::GemmShape& g, int sms, double l2_share, double residency_over_skew) const {
  constexpr int kSteps = 32;
  // Shares and residencies are rounded to the nearest 32th so that a step's GEMMs hit the cache
  // (a share to at least 1/32); a share that is not a number counts as the whole L2, a residency
  // of one spread or more as no loss.
  const double share = std::isnan(l2_share) ? 1.0 : std::clamp(l2_share, 0.0, 1.0);
  const int steps = std::max(1, static_cast<int>(std::lround(share * kSteps)));
  const int residency_steps = residency_over_skew >= 1 || std::isnan(residency_over_skew)
                                  ? kSteps
                                  : std::max(0, static_cast<int>(std::lround(residency_over_skew * kSteps)));
  GemmTrafficParams t = traffic_;
  const GemmTile tile = gemm_model_tile(gemm_model(g.dtype), g, sms);
  t.l2_bytes *= static_cast<double>(steps) / kSteps;
  if (residency_steps < kSteps) t.residency_over_skew = static_cast<double>(residency_steps) / kSteps;
  // One cache for the process: a step asks for the same few shapes many times, and every point
  // of a sweep asks for the same ones again. The bytes are a function of the key alone.
  using Key = std::tuple<int64_t, int64_t, int64_t, int, int, int, int, int, double, int, int64_t, int64_t>;
  static std::mutex mutex;
  static std::map<Key, double> cache;
  const Key key{g.m,
                g.n,
                g.k,
                g.groups,
                static_cast<int>(g.dtype),
                static_cast<int>(g.scaling),
                sms,
                t.swizzle_n_blocks,
                t.l2_bytes,
                residency_steps,
                tile.m,
                tile.n};
  {
    const std::lock_guard<std::mutex> lock(mutex);
    if (const auto it = cache.find(key); it != cache.end()) return it->second;
  }
  const double bytes = gemm_dram_bytes(g, sms, t, tile);
  const std::lock_guard<std::mutex> lock(mutex);
  return cache.emplace(key, bytes).first->second;
}

namespace {

// A GEMM time's arguments: the model object's id, the shape and the SMs.
using GemmTimeKey = std::array<uint64_t, 8>;
struct GemmTimeKeyHash {
  size_t operator()(const GemmTimeKey& k) const { return sim::hash_words(k); }
};

}  // namespace

sim::Time CalibratedCost::gemm_time(int, const sim::GemmShape& g, int sms) const {
  // Asked at every change of a GEMM's SM share, tens of millions of times in a run of every GPU,
  // for a few shapes; the tile-and-wave model with its powers costs far more than a lookup. Each
  // thread remembers its own (sweep points run on threads); the time is a function of the key,
  // since nothing it reads changes once the object is built.
  thread_local std::unordered_map<GemmTimeKey, int64_t, GemmTimeKeyHash> cache;
  const auto word = [](auto v) { return static_cast<uint64_t>(v); };
  const GemmTimeKey key{gemm_time_id_,  word(g.m),     word(g.n),       word(g.k),
                        word(g.groups), word(g.dtype), word(g.scaling), word(sms)};
  if (const auto it = cache.find(key); it != cache.end()) return sim::Time::ps(it->second);
  const sim::Time t =
      sim::Time::from_seconds_ceil(gemm_model_us(gemm_model(g.dtype), g, sms, mma_scale(g), gemm_slowdown_) * 1e-6);
  if (cache.size() >= (size_t{1} << 20)) cache.clear();  // bounded when shapes never repeat
  cache.emplace(key, t.ps_count());
  return t;
}

sim::PowerLoad CalibratedCost::gemm_power(int gpu, const sim::GemmShape& g, int sms) const {
  const PowerModel& p = profile_.power;
  const double t = gemm_time(gpu, g, sms).to_seconds();
  if (!(t > 0)) return {};
  const double flops = 2.0 * static_cast<double>(g.m) * g.n * g.k * g.groups;
  const double pJ = g.dtype == sim::DType::kFp8 ? p.fp8_pJ_per_flop : p.bf16_pJ_per_flop;
  return {flops * pJ * 1e-12 / t, 0.0, 0.0};
}

sim::PowerLoad CalibratedCost::compute_power(int gpu, const sim::GenericCompute& c, int sms) const {
  // Attention runs on the tensor cores in BF16: its draw at its time here, the reference clock's
  // (the power model lowers it as its time stretches, kernel_clock); every kernel's HBM bytes draw
  // through the executor's byte count.
  const bool mma = c.kind == sim::ComputeKind::kAttentionForward || c.kind == sim::ComputeKind::kAttentionBackward;
  const double t = compute_time(gpu, c, sms).to_seconds();
  if (!mma || !(t > 0)) return {};
  return {0.0, attention_flops_run(c) * profile_.power.bf16_pJ_per_flop * 1e-12 / t, 0.0};
}

void CalibratedCost::set_attention_kernel(AttentionKernel k) {
  if (k == AttentionKernel::kFa2 && !profile_.attention_fa2.present())
    throw std::invalid_argument("profile '" + profile_.file + "' has no attention_fa2 section");
  attention_ = k;
}

double CalibratedCost::attention_flops_run(const sim::GenericCompute& c) const {
  if (attention_ != AttentionKernel::kFa2 || c.head_dim_qk <= 0 || c.head_dim_v <= 0) return c.flops;
  // Forward QK^T and PV go with d_qk + d_v, backward with 3 d_qk + 2 d_v (models::attention_flops):
  // v padded to the one head dim d scales them to 2d and 5d.
  const double d = std::max(c.head_dim_qk, c.head_dim_v), qk = c.head_dim_qk, v = c.head_dim_v;
  return c.kind == sim::ComputeKind::kAttentionForward ? c.flops * 2 * d / (qk + v)
                                                       : c.flops * 5 * d / (3 * qk + 2 * v);
}

double CalibratedCost::attention_us(const sim::GenericCompute& c, double share) const {
  const bool fwd = c.kind == sim::ComputeKind::kAttentionForward;
  double us = 0, tflops = 0;
  if (attention_ == AttentionKernel::kFa2) {
    // The kernel of its head dim where measured, else the nearest measured.
    const AttentionFa2Model::Rates& r =
        profile_.attention_fa2.rates_for(AttentionFa2Model::run_head_dim(c.head_dim_qk, c.head_dim_v));
    us = fwd ? r.fwd_us : r.bwd_us, tflops = fwd ? r.fwd_tflops : r.bwd_tflops;
  } else {
    const KernelModel& k = profile_.kernels;
    us = fwd ? k.attn_fwd_us : k.attn_bwd_us, tflops = fwd ? k.attn_fwd_tflops : k.attn_bwd_tflops;
  }
  return us + attention_flops_run(c) / (tflops * 1e6 * share);
}

double CalibratedCost::hbm_J_per_byte(int) const { return power_capped_ ? profile_.power.hbm_pJ_per_byte * 1e-12 : 0.0; }

sim::Time CalibratedCost::power_window(int) const {
  return power_capped_ ? sim::Time::from_seconds_ceil(profile_.power.window_ms * 1e-3) : sim::Time();
}

double CalibratedCost::power_clock_MHz(int, const sim::PowerLoad& average) const {
  if (!power_capped_) return 0.0;
  // Attention's draw (mma_W) at its reference rate falls as its time stretches: one share for both
  // directions, their mean (0.84 and 0.88 in the bundled profiles).
  const KernelClockModel& k = profile_.kernel_clock;
  const MmaClock mma =
      k.present() ? MmaClock{(k.attention_fwd + k.attention_bwd) / 2, attention_reference_MHz()} : MmaClock{};
  return capped_clock_MHz(profile_.power, profile_.clocks.gemm_fit_MHz, average, mma);
}

double CalibratedCost::gemm_stretch(int, double MHz) const {
  return power_capped_ ? hw::clock_stretch(profile_.power, MHz, profile_.clocks.gemm_fit_MHz) : 1.0;
}

bool CalibratedCost::compute_follows_clock(int, const sim::GenericCompute& c) const {
  return power_capped_ && profile_.kernel_clock.present() && profile_.kernel_clock.share(c) > 0;
}

double CalibratedCost::compute_stretch(int, double MHz, const sim::GenericCompute& c) const {
  const KernelClockModel& k = profile_.kernel_clock;
  if (!power_capped_ || !k.present() || !(MHz > 0)) return 1.0;
  const double s = k.share(c);
  const bool attention =
      c.kind == sim::ComputeKind::kAttentionForward || c.kind == sim::ComputeKind::kAttentionBackward;
  return share_stretch(s, attention ? attention_reference_MHz() : k.reference_MHz(c), MHz);
}

double CalibratedCost::attention_reference_MHz() const {
  // FlashAttention-2's calls ran at a clock of their own (they draw less power than cuDNN's): its
  // times stand for that clock, where its section gives it.
  const double fa2 = profile_.attention_fa2.fit_MHz;
  return attention_ == AttentionKernel::kFa2 && fa2 > 0 ? fa2 : profile_.kernel_clock.attention_fit_MHz;
}

sim::ComputeCost CalibratedCost::compute_cost(int gpu, const sim::GenericCompute& c) const {
  return roofline_.compute_cost(gpu, c);
}

sim::Time CalibratedCost::compute_time(int gpu, const sim::GenericCompute& c, int sms) const {
  const hw::KernelModel& k = profile_.kernels;
  if (!k.present() || c.kind == sim::ComputeKind::kGeneric) return roofline_.compute_time(gpu, c, sms);
  const double share = static_cast<double>(std::max(1, sms)) / gpu_.sms;
  double us = 0;
  switch (c.kind) {
    case sim::ComputeKind::kAttentionForward:
    case sim::ComputeKind::kAttentionBackward:
      us = attention_us(c, share);
      break;
    case sim::ComputeKind::kMemoryBound: {
      const double GBps = std::min(k.memory_GBps(c.form), profile_.comm.sm_copy_GBps / comm_slowdown_ * std::max(1, sms));
      us = std::max(roofline_.compute_time(gpu, c, sms).to_seconds() * 1e6, c.bytes / (GBps * 1e3));
      break;
    }
    case sim::ComputeKind::kGeneric: break;
  }
  return sim::Time::from_seconds_ceil(us * 1e-6);
}

sim::Time CalibratedCost::compute_launch_gap(int, const sim::GenericCompute& c) const {
  // The GEMM and attention fits time whole calls, their launch included; memory-bound rates are
  // their kernels' own device time, which the gap between kernels follows.
  if (c.kind != sim::ComputeKind::kMemoryBound || !profile_.kernels.present()) return sim::Time();
  return sim::Time::from_seconds_ceil(profile_.kernels.launch_gap_us * 1e-6);
}

sim::Bandwidth CalibratedCost::comm_copy_rate(int, int sms, int gemm_sms) const {
  const double beside = 1 + profile_.memory.copy_slowdown_beside_gemms * std::clamp(gemm_sms, 0, gpu_.sms) / gpu_.sms;
  return sim::Bandwidth::gbytes_per_s(profile_.comm.sm_copy_GBps * sms / (comm_slowdown_ * beside));
}

sim::Bandwidth CalibratedCost::comm_kernel_pace(int gpu, int sms) const {
  if (!profile_.deepep.present()) return sim::CostModel::comm_kernel_pace(gpu, sms);
  // A channel's pace is its SMs' work per token (copies into the send buffers, the slot and flow
  // bookkeeping), not a wire's: it follows the SM clock as the copies do. It keeps its pace beside
  // GEMMs: copy_slowdown_beside_gemms was measured on our bulk copies, not on DeepEP's channels.
  return sim::Bandwidth::gbytes_per_s(profile_.deepep.internode_GBps(sms) / comm_slowdown_);
}

sim::Time CalibratedCost::comm_launch(int) const {
  return sim::Time::from_seconds_ceil(profile_.comm.launch_us * 1e-6);
}

// The repository's one measurement of copy-engine sends, calibrate/data/h100/pipeline_step.json
// (kernels/torch/pipeline_step.py, two H100s over NVLink, cudaMemcpyPeerAsync): a 32 MiB stage
// boundary took 0.092-0.096 ms (each case's median copy), 348-363 GB/s, where the H100 profile's
// NVLink figure (368 GB/s per direction) alone gives 0.091 ms. That leaves no rate of the engine's
// own to fit, on H100 or (unmeasured) elsewhere. Nor does the SM clock slow it (a DMA engine runs
// no SM code), unlike comm_copy_rate.
sim::Bandwidth CalibratedCost::copy_engine_rate(int) const {
  return sim::Bandwidth::bytes_per_s(std::numeric_limits<double>::infinity());
}

}  // namespace cs::hw
