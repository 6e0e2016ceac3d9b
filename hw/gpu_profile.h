// A calibrated GPU profile (hw/profiles/<gpu>.yaml, or a file `clustersim calibrate fit` wrote):
// the parameters of the GEMM and communication models, each with its value, its origin
// (measured, carried over from another GPU's measurement, published, datasheet) and its source,
// and the range of the measurements it was fitted on, so a use beyond them can be flagged.
#pragma once

#include <algorithm>
#include <array>
#include <map>
#include <string>
#include <vector>

#include "hw/gemm_model.h"
#include "hw/power_model.h"
#include "hw/yaml_reader.h"

namespace cs::hw {

struct ProfileParam {
  double value = 0;
  std::string origin;  // measured | carried | published | datasheet | unconstrained (no case depends on it)
  std::string source;  // the file(s), GPU and date it came from, or the table
};

// BF16 GEMMs: their own MMA rates, measured, where the profile has them (optional section). The
// FP8 rates of GemmModel come from GEMMs with DeepSeek's block scaling, whose main loop also scales
// and sums partial products on the CUDA cores every 128 of k; BF16 has no such step, so it runs at
// more than the datasheet's half of those (the README gives the measured ratio). Launch, tile
// overhead, HBM and split-K stay GemmModel's. Absent: BF16 at GemmModel's rates x 1/2.
struct GemmBf16Model {
  double sm_tflops = 0;    // one SM while few SMs are busy
  double chip_tflops = 0;  // the whole chip at its loaded clock
  static constexpr int kParams = 2;
  static const char* param_name(int i);
  bool present() const { return sm_tflops > 0; }
};

// FP8 GEMMs with 1x128 scales on both operands (sim::Fp8Scaling::kTiles: the weight gradients of
// DeepSeek's recipe), where the profile has them (optional section): GemmModel's MMA rates divided
// by mma_slowdown; launch, tile overhead, HBM and split-K unchanged. cuBLASLt's kernels for them
// scale each accumulator element by a row and a column scale every 128 of k where the
// 128x128-block ones take one scale per tile column block. Absent: GemmModel's rates.
struct GemmFp8TilesModel {
  double mma_slowdown = 0;
  static constexpr int kParams = 1;
  static const char* param_name(int i);
  bool present() const { return mma_slowdown > 0; }
};

// The communication kernel: it copies at sm_copy_GBps per SM it holds, after launch_us of launch
// and synchronisation; between GPUs of a node NVLink carries at most nvlink_GBps per direction.
struct CommModel {
  double launch_us = 0;
  double sm_copy_GBps = 0;
  double nvlink_GBps = 0;
  static constexpr int kParams = 3;
  static const char* param_name(int i);
};

// DeepEP's internode kernels, which run an EP group spanning nodes (optional section). A token
// crosses InfiniBand once per node it reaches and is forwarded over NVLink there; each kernel runs
// one channel per two of its SMs (DeepEP: num_sms / 2), and each channel works through
// internode_channel_GBps of those node-token bytes (a token once per node it reaches, its own node
// included) whatever the wire would carry. Absent: the links alone bound the internode all-to-all.
struct DeepEpModel {
  double internode_channel_GBps = 0;
  static constexpr int kParams = 1;
  static const char* param_name(int i);
  bool present() const { return internode_channel_GBps > 0; }
  // The node-token bytes per second of a kernel on `sms` SMs, at the clock the rate was measured at.
  double internode_GBps(int sms) const { return internode_channel_GBps * std::max(1, sms / 2); }
};

// The other kernels of the compute partition. Causal attention (FlashAttention-style, BF16) takes
// attn_*_us per call plus its FLOPs at attn_*_tflops on the whole GPU, in proportion on fewer SMs,
// forward and backward apart; memory-bound kernels (norms, activations, casts, residuals) move
// their bytes at their form's measured rate (<form>_GBps, sim::memory_form_name), elementwise_GBps
// for a form not measured, or at the profile's per-SM copy rate on SMs too few to reach it, and
// each is preceded by launch_gap_us of idle device (the front end starting it after its stream's
// previous op; the GEMM and attention fits time whole calls, their launch included).
struct KernelModel {
  double attn_fwd_us = 0, attn_fwd_tflops = 0, attn_bwd_us = 0, attn_bwd_tflops = 0, elementwise_GBps = 0;
  double launch_gap_us = 0;                           // optional: 0 where not measured
  std::array<double, sim::kMemoryForms> form_GBps{};  // by sim::MemoryForm; 0: elementwise_GBps
  static constexpr int kRequiredParams = 5;
  static constexpr int kLaunchGap = 5;  // launch_gap_us's index; the forms' rates follow it
  static constexpr int kParams = kLaunchGap + sim::kMemoryForms;  // kAny's slot is the launch gap's
  static const char* param_name(int i);
  // The parameter index of a form's rate (f != kAny).
  static int form_param(sim::MemoryForm f) { return kLaunchGap + static_cast<int>(f); }
  double memory_GBps(sim::MemoryForm f) const {
    const double r = form_GBps[static_cast<size_t>(f)];
    return r > 0 ? r : elementwise_GBps;
  }
  bool present() const { return attn_fwd_tflops > 0; }  // profiles fitted before these kernels were measured
};

// FlashAttention-2 as PyTorch's flash backend runs it (optional section `attention_fa2`). It
// takes one head dim for q, k and v (a v narrower than q/k runs padded to it), and compiles a
// kernel per head dim (kHeadDims: a call runs the smallest at or above its own); each measured
// kernel has the form of KernelModel's attention, <dim>_*_us per call plus its FLOPs as run at
// <dim>_*_tflops. The kernel a scenario's `cost_model: {attention_kernel: fa2}` runs in place of
// SDPA's own pick.
struct AttentionFa2Model {
  static constexpr std::array<int, 8> kHeadDims = {32, 64, 96, 128, 160, 192, 224, 256};
  struct Rates {
    double fwd_us = 0, fwd_tflops = 0, bwd_us = 0, bwd_tflops = 0;
    bool present() const { return fwd_tflops > 0; }
  };
  std::array<Rates, kHeadDims.size()> kernels;  // by kHeadDims' index; absent where not measured
  // The SM clock its calls ran at (optional; 0: the kernel_clock section's attention reference). A
  // power-capped run stretches its time from there by the kernel_clock section's attention share.
  double fit_MHz = 0;
  static constexpr int kFitMHz = 4 * static_cast<int>(kHeadDims.size());  // fit_MHz's parameter index
  static constexpr int kParams = kFitMHz + 1;
  static const char* param_name(int i);  // d128_fwd_us, d128_fwd_tflops, d128_bwd_us, d128_bwd_tflops, ..., fit_MHz
  bool present() const;                  // any kernel measured
  // The index in kHeadDims of the kernel a call of head dim d runs (the last for d above 256).
  static int kernel_of(int head_dim);
  // The one head dim a call with q/k head dim `qk` and v head dim `v` runs at: the larger (the
  // other padded to it); neither given (0): the largest kernel FlashAttention-2 compiles.
  static int run_head_dim(int qk, int v);
  // The index in kHeadDims of the measured kernel that times head dim d: its own, else the
  // measured one nearest it (the larger on a tie). Needs present().
  int measured_kernel_for(int head_dim) const;
  const Rates& rates_for(int head_dim) const { return kernels[measured_kernel_for(head_dim)]; }
};

// Which kernel runs attention: the one SDPA picks itself (KernelModel; cuDNN's on Hopper), or
// FlashAttention-2 (AttentionFa2Model), on the FLOPs it runs with v padded.
enum class AttentionKernel : uint8_t { kSdpa, kFa2 };

// SM clocks: the clock each fit's measurements ran at, and the mean clock the GPU holds under
// sustained load (back-to-back GEMMs beside a copy kernel, pinned at the power limit). A run under
// sustained load scales SM-clock-bound time (GEMM tiles, the copy kernel's per-SM rate) by their
// ratio; HBM-bound time keeps its rate (the memory clock does not move). Optional: absent, every
// kernel runs at its fit's clock.
struct ClockModel {
  double gemm_fit_MHz = 0;   // mean SM clock while the GEMM sweep ran
  double comm_fit_MHz = 0;   // SM clock of the all-to-all measurements
  double sustained_MHz = 0;  // mean SM clock under sustained load
  static constexpr int kParams = 3;
  static const char* param_name(int i);
  bool present() const { return sustained_MHz > 0; }
};

// HBM as a shared resource. hbm_GBps: what it carries at most, reads plus writes, summed over
// every kernel of the GPU (a local copy counts its bytes twice). saturation_exponent p: HBM is a
// queue, not a pipe: offered D bytes/s it carries X = (D^-p + C^-p)^(-1/p), less than both, and
// its kernels share X in proportion to what each asks (sim/flow_network.h: saturating links);
// 0: a hard ceiling shared max-min. l2_reuse_share and gemm_swizzle_n_blocks: a GEMM's real HBM
// traffic (hw/gemm_traffic.h) with that share of the datasheet L2 and that raster; 0: compulsory
// bytes. l2_wave_skew: the spread of a wave's tile phases in tile times, held at its spread on
// l2_skew_max_tile_us for longer tiles (no measurement reaches them); absent: a wave's shared
// panels are read once. copy_slowdown_beside_gemms g: a communication kernel's copy rate divided by
// 1 + g x (SMs GEMMs hold now / the chip's SMs): its loads, few in flight per SM, queue behind the
// GEMMs' operand traffic in L2 (measured at a locked clock, with DRAM far from full); absent: 0.
// Optional section; only hbm_GBps is required in it (profiles of earlier versions).
struct MemoryModel {
  double hbm_GBps = 0;
  double saturation_exponent = 0;
  double l2_reuse_share = 0;
  double gemm_swizzle_n_blocks = 0;
  double l2_wave_skew = 0;
  double l2_skew_max_tile_us = 0;  // the longest tile the spread was measured on; longer ones keep its spread
  double copy_slowdown_beside_gemms = 0;
  static constexpr int kParams = 7;
  static const char* param_name(int i);
  bool present() const { return hbm_GBps > 0; }
};

// How much of a non-GEMM kernel's time follows the SM clock under a power limit (optional section;
// kernels/torch/kernel_clock.py): at clock f a kernel takes t x ((1 - s) + s x f_ref / f), t its
// time by the kernels section, s the share of it that follows the clock, by kind (attention
// forward, backward) and by memory-bound form (sim::memory_form_name; a form not measured takes
// "any", a plain copy's), and f_ref the clock t stands for: memory_fit_MHz for the memory-bound
// kernels (their benches ran under light load, near the maximum clock), attention_fit_MHz for
// attention (its bench ran calls back to back, heavy enough for the power limit to act; the
// clock at which the section's attention times match those measured at a known clock).
// Attention runs on the tensor cores and follows the clock almost wholly; most memory-bound
// kernels wait on HBM and barely do, but a SwiGLU backward computes enough per byte to follow it.
// Absent: only GEMMs follow the clock (PowerModel::clock_stretch).
struct KernelClockModel {
  double memory_fit_MHz = 0, attention_fit_MHz = 0;
  double attention_fwd = 0, attention_bwd = 0;
  std::array<double, sim::kMemoryForms> form{};  // by sim::MemoryForm; -1: not measured (takes kAny's)
  static constexpr int kMemoryFitMHz = 0, kAttentionFitMHz = 1, kAttentionFwd = 2, kAttentionBwd = 3, kForms = 4;
  static constexpr int kParams = kForms + sim::kMemoryForms;
  static constexpr int kRequiredParams = kForms + 1;  // both clocks, both attention shares and "any"
  static const char* param_name(int i);  // memory_fit_MHz, attention_fit_MHz, attention_fwd, attention_bwd, any, norm_fwd, ...
  static int form_param(sim::MemoryForm f) { return kForms + static_cast<int>(f); }
  bool present() const { return memory_fit_MHz > 0; }
  // The share of `c`'s time that follows the clock (0 for kinds it does not cover), and the clock
  // its time in the kernels section stands for.
  double share(const sim::GenericCompute& c) const;
  double reference_MHz(const sim::GenericCompute& c) const;
};

// [lo, hi] of one measured quantity.
struct ProfileRange {
  double lo = 0, hi = 0;
  bool contains(double v) const { return v >= lo && v <= hi; }
};

struct GpuProfile {
  std::string gpu;   // catalog name, e.g. "h200"
  std::string file;  // where it was read from (for messages)
  std::string note;  // how it was made, one paragraph
  GemmModel gemm;
  std::string gemm_tiles_source;  // where gemm.tiling came from (gemm_tiles: section; empty: cuBLASLt's default)
  GemmBf16Model gemm_bf16;  // optional
  GemmFp8TilesModel gemm_fp8_tiles;  // optional
  CommModel comm;
  DeepEpModel deepep;   // optional
  KernelModel kernels;  // optional: absent, those kernels run on the datasheet roofline
  AttentionFa2Model attention_fa2;  // optional; needs the kernels section
  ClockModel clocks;    // optional
  MemoryModel memory;   // optional
  PowerModel power;     // optional (hw/power_model.h); needs the clocks section
  KernelClockModel kernel_clock;  // optional; needs the power section
  std::map<std::string, ProfileParam> gemm_params, gemm_bf16_params, gemm_fp8_tiles_params, comm_params, deepep_params,
      kernel_params, attention_fa2_params, clock_params, memory_params, power_params,
      kernel_clock_params;                                       // by parameter name
  std::map<std::string, ProfileRange> gemm_range, comm_range;    // sms, m, n, k / ctas, size_bytes
  std::vector<std::string> fitted_from;                          // measurement files with provenance
};

GpuProfile parse_profile(const YamlNode& root);
// `fp8` with BF16's own MMA rates in place of its FP8 ones (launch, tile time, HBM, split-K kept)
// and cuBLASLt's tiles, whose kernels the BF16 rates were measured on.
GemmModel with_bf16_rates(const GemmModel& fp8, const GemmBf16Model& bf16);
// A bundled profile by name, hw/profiles/<name>.yaml, or nullptr when there is none. A GPU's own
// profile is named for it ("h800"); variants add to the name ("h800-deepgemm").
const GpuProfile* find_profile(const std::string& name);
// The bundled profiles' names, comma-separated in order ("h100, h200, h800, h800-deepgemm"), for messages.
std::string bundled_profile_names();
// Whether `name_or_path` names a file (contains '/' or ends in .yaml) rather than a bundled profile.
bool is_profile_path(const std::string& name_or_path);
// A file path (is_profile_path), else a bundled profile's name. UserError if neither.
GpuProfile load_profile(const std::string& name_or_path, const YamlNode* where = nullptr);

}  // namespace cs::hw
