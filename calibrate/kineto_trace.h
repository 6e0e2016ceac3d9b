// Measured runs for `clustersim compare`: a PyTorch profiler (Kineto) trace of a training step, or
// our overlap bench's output (cs_overlap), turned into GPU kernels with a class, a start and a
// duration, so that they can be lined up with the simulator's ops class by class.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "sim/op_graph.h"

namespace cs::calibrate {

// What a kernel does, as far as the comparison goes. Communication classes: dispatch and combine
// (MoE all-to-all halves, DeepEP's names), all_to_all (one not told apart), send_recv
// (point-to-point, NCCL's SendRecv kernels), collective (all-reduce, reduce-scatter, all-gather).
enum class KernelClass { kGemm, kAttention, kDispatch, kCombine, kAllToAll, kSendRecv, kCollective, kOther };
inline constexpr int kKernelClasses = 8;

const char* class_name(KernelClass c);  // "gemm", "attention", ..., "other"
bool is_communication(KernelClass c);   // dispatch, combine, all_to_all, send_recv, collective

// Classifies a GPU kernel by its (demangled) name, case-insensitively. First match wins:
// attention (flash, fmha, attention, sdpa, cuDNN's fusion helpers), NCCL kernels (sendrecv ->
// send_recv, alltoall -> all_to_all, other NCCL -> collective), dispatch, combine, GEMMs (gemm,
// cutlass, xmma, nvjet, cublas, matmul), else other.
KernelClass classify_kernel(std::string_view name);

// The memory-bound form of a kernel of class other, by the names PyTorch's ATen and Inductor give
// them (case-insensitive): norms (layer_norm, rms_norm; backward: grad, gammabeta), activations
// (silu, gelu), RoPE (Inductor's fused add_cat_mul_neg; backward its slice variant), SDPA's
// strided copies (direct_copy_kernel), concatenation (CatArrayBatchedCopy), residual adds
// (CUDAFunctor_add), the loss (softmax, nll_loss, cross_entropy), the embedding (its gather; backward its
// segment-sum kernels). kAny for the rest (sorts, fills, scans). Heuristics tuned to the names of
// kernels/torch/pipeline_model.py's kernels: another program's gathers (MoE token gathers), softmaxes
// (a router's) and dtype casts (direct copies) land in embedding, loss and layout copy, and an
// eager RoPE's torch.cat in concat.
sim::MemoryForm classify_memory_form(std::string_view name);

struct MeasuredKernel {
  std::string name;
  KernelClass cls = KernelClass::kOther;
  sim::MemoryForm form = sim::MemoryForm::kAny;  // class other only
  double start_us = 0;  // from the first kernel's start
  double dur_us = 0;
  int stream = 0;
};

struct MeasuredRun {
  std::string file;
  std::string format;  // "kineto" or "cs_overlap"
  std::string gpu;     // the GPU's name as the file gives it, e.g. "NVIDIA H200"; empty if absent
  std::string range;   // the longest GPU annotation ("train_step"), named only: every kernel is kept
  std::vector<MeasuredKernel> kernels;  // sorted by start
  int memsets = 0;                      // memset and memcpy activities seen (not compared)
  double memset_us = 0;
  std::vector<std::string> notes;  // how the run was read
};

// Reads a Kineto trace: a JSON object with `traceEvents`, whose GPU kernels are the events of
// category "kernel" ("ph": "X", ts and dur in microseconds): every kernel of the lowest-numbered device
// (profile one step; a GPU annotation cannot delimit it, since it covers only kernels launched
// from its own thread, and autograd runs the backward on another). Throws hw::UserError for an unreadable file, invalid JSON, a
// file that is neither a Kineto trace nor cs_overlap output, or a trace without GPU kernels.
// cs_overlap files are recognised here and refused: they are read by read_overlap_run.
MeasuredRun read_kineto_trace(const std::string& path);

// The kind of measured file at `path`: "kineto", "cs_overlap", or a UserError naming what it is.
std::string measured_format(const std::string& path);

}  // namespace cs::calibrate
