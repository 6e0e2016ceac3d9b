// Kernel results as the fit reads them: the JSON that kernels/ writes (cs_fp8_gemm,
// cs_all_to_all, cs_overlap, the PyTorch scripts (pipeline steps among them), ncu_dram_bytes), recognised by provenance.program. Every case keeps the file and the
// index it came from, so a fitted parameter and a validation line can name their measurement.
#pragma once

#include <string>
#include <vector>

#include "calibrate/pipeline_cases.h"
#include "calibrate/power_fit.h"
#include "sim/op_graph.h"

namespace cs::calibrate {

struct Provenance {
  std::string file;      // as given on the command line
  std::string program;   // cs_fp8_gemm, ...
  std::string arguments;  // what followed the program's name in its provenance, e.g. "--long"; often empty
  std::string gpu;       // first GPU's name, e.g. "NVIDIA H200"
  std::string date_utc;
  std::string git_commit;
  double sm_clock_max_MHz = 0;  // the first GPU's maximum SM clock, where the kernels record it
};

// Whether the GPU the provenance names ("NVIDIA H200") is the catalog GPU `catalog_name` ("h200").
bool measured_on(const Provenance& p, const std::string& catalog_name);

// One FP8 GEMM on an SM partition (green context with cuBLASLt told the partition's size).
struct GemmCase {
  std::string name;   // e.g. deepgemm.dense, v3.mla.wq_a.fwd
  sim::GemmShape shape;
  int sms = 0;
  double time_us = 0;                 // median over the runs
  double p10_us = 0, p90_us = 0;
  // The median SM clock NVML sampled over the case's timed runs (cs_fp8_gemm --sample-clocks), 0
  // where not measured. Under the power cap it falls as the partition grows (large shapes on an
  // H100: 1980 MHz to 48 SMs, about 1800 at 112), so fit and validate take such a case at it.
  double clock_MHz = 0;
  int index = 0;                      // position in the file's "cases"
  int source = 0;                     // index into MeasurementSet::sources
  std::string key() const;            // name, m, n, k, groups: one shape
};

// One all-to-all of our kernel or NCCL on `ctas` CTAs (one per SM) per GPU.
struct AllToAllCase {
  std::string impl;   // "ours" or "nccl"
  std::string mode;   // dispatch_fp8 or combine_bf16
  int gpus = 0;
  int ctas = 0;
  double size_bytes = 0;  // per GPU, nccl-tests convention (its own chunk included)
  double time_us = 0;
  int index = 0;
  int source = 0;
};

// One GEMM stream beside one all-to-all stream on a GPU split into compute and comm SMs.
struct OverlapCase {
  std::string shape_name;
  sim::GemmShape shape;
  int ctas = 0, comm_sms = 0, compute_sms = 0;
  double a2a_bytes = 0;
  double gemm_alone_us = 0, gemm_together_us = 0;
  double a2a_alone_us = 0, a2a_together_us = 0;
  int gemm_count = 0, a2a_count = 0;  // ops of each stream in the measured window
  double makespan_us = 0;             // the window: both streams from the first start to the last end
  int gpus = 0;
  bool local_copy_only = false;
  int index = 0;
  int source = 0;
};

// One causal attention call (PyTorch SDPA, BF16) on the whole GPU, forward or backward.
struct AttentionCase {
  std::string name;     // e.g. mla_v3
  std::string backend;  // what SDPA was told: default (its own pick), flash, cudnn, efficient
  bool backward = false;
  int64_t batch = 0, heads = 0, seq = 0, d_qk = 0, d_v = 0;
  int64_t d_v_run = 0;  // v's head dim as the kernel ran it: d_v, or d_qk where v was padded to it
  double time_us = 0;
  int index = 0;
  int source = 0;
};

// One memory-bound kernel (or the kernels of one eager op) moving `bytes` through HBM.
struct MemoryBoundCase {
  std::string op;       // copy, rmsnorm_fwd_7168, swiglu_bwd_18432, ...
  std::string variant;  // eager (ATen's kernels) or compiled (Inductor's fused kernel)
  double bytes = 0;
  double time_us = 0;  // its kernels' device time per call where measured, else one call's CUDA-event time
  int index = 0;
  int source = 0;
};

// One memory-bound kernel form of kernels/torch/memory_bound_forms.py (the pipeline bench's own
// kernels), by its kernels' device time: `bytes` as the model counts them for that form.
struct MemoryFormCase {
  std::string op;  // rmsnorm_bwd_4096, layout_copy_32h, ...
  sim::MemoryForm form = sim::MemoryForm::kAny;
  double bytes = 0;
  double device_us = 0;  // its kernels' device time per call, launches excluded
  int index = 0;
  int source = 0;
};

// One FP8 GEMM's HBM traffic under Nsight Compute (calibrate/scripts/ncu_dram_bytes.py), per
// group, L2 flushed before it: the DRAM bytes it read and wrote.
struct GemmTrafficCase {
  std::string name;
  sim::GemmShape shape;  // groups as launched; the bytes are one group's
  int sms = 0;
  double read_bytes = 0, write_bytes = 0;
  int index = 0;
  int source = 0;
};

// The overlap bench's windows as Nsight Compute ranges (calibrate/scripts/ncu_overlap_ranges.py):
// one GEMM's DRAM bytes alone and beside the copy, one copy's alone, and their times. The times
// are the profiler's (clocks locked to base), and the bytes were moved at those rates.
struct OverlapTrafficCase {
  std::string shape;
  sim::GemmShape gemm;  // groups as launched; bytes and times are the whole kernel's
  int compute_sms = 0, copy_sms = 0;
  double gemm_alone_us = 0;
  double gemm_alone_bytes = 0, gemm_together_bytes = 0;
  double copy_bytes = 0;        // one copy's DRAM bytes alone (it reads and writes its payload)
  double copy_together_us = 0;  // one copy's time beside the GEMMs
  double copy_alone_us = 0;     // one copy's time alone (the same run, at the same locked clock)
  double copy_payload_bytes = 0;  // what one copy moves (its DRAM bytes are twice that: read, written)
  int index = 0;
  int source = 0;
};

// One kernel timed right after BF16 GEMMs (the clock held low by the power limit) and right after
// HBM copies (the clock near its maximum), kernels/torch/kernel_clock.py: median times and the
// median SM clock the kernel's own probes read.
struct KernelClockCase {
  std::string name;
  std::string kind;  // attention_fwd | attention_bwd | gemm_bf16 | memory (form says which)
  sim::MemoryForm form = sim::MemoryForm::kAny;  // memory only
  double flops = 0;                  // attention: its FLOPs (the causal half; backward 2.5x forward)
  double low_ms = 0, low_MHz = 0;    // after the GEMMs
  double high_ms = 0, high_MHz = 0;  // after the copies
  int index = 0;
  int source = 0;
};

struct MeasurementSet {
  std::vector<Provenance> sources;
  std::vector<GemmCase> gemms;       // FP8, DeepSeek's block scaling (cs_fp8_gemm)
  std::vector<GemmCase> bf16_gemms;  // BF16 (kernels/torch/bf16_gemm.py)
  // FP8 under both of DeepSeek's scalings, paired by name and SMs (kernels/torch/fp8_tile_scaling.py):
  // shape.scaling says which.
  std::vector<GemmCase> fp8_scaling_gemms;
  std::vector<AllToAllCase> all_to_alls;
  std::vector<OverlapCase> overlaps;
  std::vector<AttentionCase> attentions;
  std::vector<MemoryBoundCase> memory_bound;
  std::vector<MemoryFormCase> memory_forms;
  std::vector<double> launch_gaps_us;  // median device gaps between back-to-back kernels, per file
  std::vector<GemmTrafficCase> gemm_traffic;
  std::vector<OverlapTrafficCase> overlap_traffic;
  std::vector<PipelineCase> pipelines;  // kernels/torch/pipeline_step.py (calibrate/pipeline_cases.h)
  std::vector<PowerResponse> power;     // kernels/torch/power_response.py (calibrate/power_fit.h)
  std::vector<KernelClockCase> kernel_clock;  // kernels/torch/kernel_clock.py (calibrate/kernel_clock_fit.h)
  std::vector<std::string> notes;  // what was read and what was left out, and why
};

// Reads one kernel JSON file into `set`. Throws hw::UserError (file:line:col where the JSON parser
// gives one) for unreadable or unknown input.
void read_measurements(const std::string& path, MeasurementSet& set);

}  // namespace cs::calibrate
