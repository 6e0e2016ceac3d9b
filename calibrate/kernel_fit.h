// The attention and memory-bound kernel parameters of a profile (hw::KernelModel) from PyTorch
// measurements on the whole GPU (kernels/torch/attention_bench.py, memory_bound.py).
#pragma once

#include <vector>

#include "calibrate/fit_stats.h"
#include "calibrate/measurements.h"
#include "hw/gpu_profile.h"

namespace cs::calibrate {

struct KernelFit {
  hw::KernelModel model;
  FitStats attn_fwd, attn_bwd, elementwise;
  int attn_fwd_cases = 0, attn_bwd_cases = 0, elementwise_cases = 0;
  // FlashAttention-2 (PyTorch's flash backend): each of its kernels (hw::AttentionFa2Model's head
  // dims) of which at least two calls per pass were timed; absent otherwise.
  hw::AttentionFa2Model fa2;
  struct Fa2Kernel {
    int head_dim = 0;
    int fwd_cases = 0, bwd_cases = 0;
    FitStats fwd, bwd;
  };
  std::vector<Fa2Kernel> fa2_kernels;  // the kernels fitted, by head dim
  FitStats fa2_fwd, fa2_bwd;           // every flash call timed, each by its kernel's fit
};

// Attention: per pass, time = a + FLOPs / rate by least squares (relative; a negative fixed time is
// then taken as 0) over the calls SDPA ran with the
// backend it picks itself (what a training framework gets), FLOPs as the model counts them
// (models/layer_ops.h attention_flops); FlashAttention-2 the same way over the flash backend's
// calls, FLOPs as it ran them (v at the head dim it was padded to). Memory-bound: the median bytes / time of the fused
// (compiled) kernels, as a training step runs fused norms and activations. UserError when either
// kind of measurement is missing.
KernelFit fit_kernels(const MeasurementSet& set);

// The calls the fit uses: attention as SDPA picks its backend, v unpadded; memory-bound kernels
// fused (compiled).
bool fitted_case(const AttentionCase& c);
// The calls the FlashAttention-2 fit uses: the flash backend's, padded or not.
bool fa2_case(const AttentionCase& c);
bool fitted_case(const MemoryBoundCase& c);
// A measured attention call's FLOPs as the model counts them (causal).
double attention_case_flops(const AttentionCase& c);

// Its FLOPs as the kernel ran them: v at the head dim it ran at.
double attention_case_flops_as_run(const AttentionCase& c);
// The one head dim a FlashAttention-2 call ran at: q/k's or v's as run, the larger.
int fa2_head_dim(const AttentionCase& c);

// The model's time for one measured attention call or memory-bound kernel on the whole GPU.
double kernel_model_us(const hw::KernelModel& k, const AttentionCase& c);
double kernel_model_us(const hw::AttentionFa2Model& k, const AttentionCase& c);
double kernel_model_us(const hw::KernelModel& k, const MemoryBoundCase& c);

}  // namespace cs::calibrate
