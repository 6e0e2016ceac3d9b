#include "calibrate/kineto_trace.h"

#include <algorithm>
#include <cctype>
#include <map>
#include <nlohmann/json.hpp>

#include "calibrate/json_file.h"
#include "hw/user_error.h"

namespace cs::calibrate {

using json = nlohmann::json;

const char* class_name(KernelClass c) {
  switch (c) {
    case KernelClass::kGemm: return "gemm";
    case KernelClass::kAttention: return "attention";
    case KernelClass::kDispatch: return "dispatch";
    case KernelClass::kCombine: return "combine";
    case KernelClass::kAllToAll: return "all_to_all";
    case KernelClass::kSendRecv: return "send_recv";
    case KernelClass::kCollective: return "collective";
    case KernelClass::kOther: return "other";
  }
  return "?";
}

bool is_communication(KernelClass c) {
  return c == KernelClass::kDispatch || c == KernelClass::kCombine || c == KernelClass::kAllToAll ||
         c == KernelClass::kSendRecv || c == KernelClass::kCollective;
}

KernelClass classify_kernel(std::string_view name) {
  std::string n(name);
  for (char& ch : n) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
  const auto has = [&](const char* s) { return n.find(s) != std::string::npos; };
  // cuDNN's SDPA launches helper kernels (dO.O dot products, dQ conversion) under cudnn::fusion.
  if (has("flash") || has("fmha") || has("attention") || has("sdpa") || has("cudnn::fusion"))
    return KernelClass::kAttention;
  if (has("nccl")) {
    if (has("sendrecv") || has("send_recv")) return KernelClass::kSendRecv;
    if (has("alltoall") || has("all_to_all")) return KernelClass::kAllToAll;
    return KernelClass::kCollective;
  }
  if (has("dispatch")) return KernelClass::kDispatch;
  if (has("combine")) return KernelClass::kCombine;
  if (has("all_to_all") || has("alltoall")) return KernelClass::kAllToAll;
  if (has("gemm") || has("cutlass") || has("xmma") || has("nvjet") || has("cublas") || has("matmul"))
    return KernelClass::kGemm;
  return KernelClass::kOther;
}

sim::MemoryForm classify_memory_form(std::string_view name) {
  using F = sim::MemoryForm;
  std::string n(name);
  for (char& ch : n) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
  const auto has = [&](const char* s) { return n.find(s) != std::string::npos; };
  const bool backward = has("backward") || has("grad");
  // (attention's softmax is inside its kernels, classed attention before this is asked)
  if (has("nll_loss") || has("softmax") || has("cross_entropy")) return backward ? F::kLossBackward : F::kLoss;
  if (has("layer_norm") || has("rms_norm") || has("rmsnorm") || has("gammabeta"))
    return backward || has("gammabeta") ? F::kNormBackward : F::kNorm;
  if (has("silu") || has("gelu") || has("swiglu")) return backward ? F::kActivationBackward : F::kActivation;
  if (has("add_cat_mul_neg") || has("rope") || has("rotary"))
    return backward || has("slice") ? F::kRopeBackward : F::kRope;
  if (has("sum_and_scatter") || has("compute_grad_weight") || has("partial_segment") || has("partials_per_segment") ||
      has("embedding_backward"))
    return F::kEmbeddingBackward;
  if (has("gather_kernel") || has("index_select") || has("embedding")) return F::kEmbedding;
  if (has("catarraybatchedcopy")) return F::kConcat;
  if (has("direct_copy_kernel")) return F::kLayoutCopy;
  if (has("cudafunctor_add")) return F::kResidualAdd;
  return F::kAny;
}

namespace {

std::string format_of(const json& d, const std::string& path) {
  if (d.is_object() && d.contains("traceEvents")) return "kineto";
  if (d.is_object() && d.contains("provenance") && d["provenance"].is_object() &&
      d["provenance"].value("program", "") == "cs_overlap")
    return "cs_overlap";
  if (d.is_object() && d.contains("provenance") && d["provenance"].is_object() &&
      d["provenance"].value("program", "") == "kernels/torch/pipeline_step.py")
    return "pipeline_step";
  if (d.is_array())
    throw hw::UserError(path, 0, 0, "a bare JSON array: compare reads Kineto traces ({\"traceEvents\": [...]}, "
                                    "as torch.profiler's export_chrome_trace writes them), cs_overlap and pipeline_step.py output");
  std::string what = "neither a Kineto trace (no 'traceEvents') nor cs_overlap or pipeline_step.py output";
  if (d.is_object() && d.contains("provenance") && d["provenance"].is_object())
    what += " (it is " + d["provenance"].value("program", std::string("unknown")) + " output)";
  throw hw::UserError(path, 0, 0, what);
}

double number(const json& e, const char* key, const std::string& path, size_t index) {
  const auto it = e.find(key);
  if (it == e.end() || !it->is_number())
    throw hw::UserError(path, 0, 0, "traceEvents[" + std::to_string(index) + "] ('" + e.value("name", "") +
                                        "') has no numeric '" + key + "'");
  return it->get<double>();
}

}  // namespace

std::string measured_format(const std::string& path) { return format_of(read_json_file(path), path); }

MeasuredRun read_kineto_trace(const std::string& path) {
  const json d = read_json_file(path);
  const std::string format = format_of(d, path);
  if (format != "kineto") throw hw::UserError(path, 0, 0, "not a Kineto trace (" + format + ")");
  const json& events = d["traceEvents"];
  if (!events.is_array()) throw hw::UserError(path, 0, 0, "'traceEvents' must be an array");

  MeasuredRun run;
  run.file = path;
  run.format = "kineto";
  if (d.contains("deviceProperties") && d["deviceProperties"].is_array() && !d["deviceProperties"].empty() &&
      d["deviceProperties"][0].is_object())
    run.gpu = d["deviceProperties"][0].value("name", "");

  struct Raw {
    std::string name;
    double ts, dur;
    int pid, stream;
  };
  std::vector<Raw> kernels;
  std::vector<Raw> ranges, memsets;
  for (size_t i = 0; i < events.size(); ++i) {
    const json& e = events[i];
    if (!e.is_object() || e.value("ph", "") != "X") continue;
    const std::string cat = e.value("cat", "");
    if (cat != "kernel" && cat != "gpu_user_annotation" && cat != "gpu_memset" && cat != "gpu_memcpy") continue;
    Raw r{e.value("name", ""), number(e, "ts", path, i), number(e, "dur", path, i), 0, 0};
    if (e.contains("pid") && e["pid"].is_number_integer()) r.pid = e["pid"].get<int>();
    if (e.contains("args") && e["args"].is_object()) {
      const json& a = e["args"];
      if (a.contains("device") && a["device"].is_number_integer()) r.pid = a["device"].get<int>();
      if (a.contains("stream") && a["stream"].is_number_integer()) r.stream = a["stream"].get<int>();
    }
    if (r.dur < 0) throw hw::UserError(path, 0, 0, "traceEvents[" + std::to_string(i) + "] has a negative duration");
    if (cat == "kernel") kernels.push_back(std::move(r));
    else if (cat == "gpu_user_annotation") ranges.push_back(std::move(r));
    else memsets.push_back(std::move(r));
  }
  if (kernels.empty())
    throw hw::UserError(path, 0, 0, "no GPU kernel events (category 'kernel'): was the profiler run with "
                                    "ProfilerActivity.CUDA?");
  // One device: the lowest-numbered.
  const int device = std::min_element(kernels.begin(), kernels.end(), [](const Raw& a, const Raw& b) {
                       return a.pid < b.pid;
                     })->pid;
  const auto other_device = [&](const Raw& r) { return r.pid != device; };
  const size_t before = kernels.size();
  std::erase_if(kernels, other_device);
  std::erase_if(ranges, other_device);
  std::erase_if(memsets, other_device);
  if (kernels.size() != before)
    run.notes.push_back("kernels of device " + std::to_string(device) + " only (" +
                        std::to_string(before - kernels.size()) + " on other devices left out)");

  // GPU annotations (record_function ranges) are not used to select kernels: a range covers only
  // the kernels launched from its own thread, and autograd launches the backward from another.
  if (!ranges.empty()) {
    const Raw& step = *std::max_element(ranges.begin(), ranges.end(), [](const Raw& a, const Raw& b) { return a.dur < b.dur; });
    run.range = step.name;
    run.notes.push_back("every kernel of the trace is compared; its GPU annotation '" + step.name +
                        "' covers only the kernels launched from its own thread (autograd's backward is not)");
  }
  std::sort(kernels.begin(), kernels.end(), [](const Raw& a, const Raw& b) { return a.ts < b.ts; });
  const double t0 = kernels.front().ts;
  for (const Raw& r : kernels) {
    const KernelClass c = classify_kernel(r.name);
    run.kernels.push_back(MeasuredKernel{r.name, c, c == KernelClass::kOther ? classify_memory_form(r.name) : sim::MemoryForm::kAny,
                                         r.ts - t0, r.dur, r.stream});
  }
  for (const Raw& r : memsets) {
    ++run.memsets;
    run.memset_us += r.dur;
  }
  return run;
}

}  // namespace cs::calibrate
