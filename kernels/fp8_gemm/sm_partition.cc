#include "fp8_gemm/sm_partition.h"

#include <cudaTypedefs.h>

#include <stdexcept>
#include <string>

#include "common/check.h"

namespace cs::kernels::fp8_gemm {
namespace {

// The driver entry points green contexts need, in the ABI of CUDA 12.5 (the first with
// cuGreenCtxStreamCreate).
struct Driver {
  PFN_cuGetErrorName_v6000 error_name = nullptr;
  PFN_cuCtxGetCurrent_v4000 ctx_get_current = nullptr;
  PFN_cuCtxSetCurrent_v4000 ctx_set_current = nullptr;
  PFN_cuDeviceGetDevResource_v12040 device_get_resource = nullptr;
  PFN_cuDevSmResourceSplitByCount_v12040 split_by_count = nullptr;
  PFN_cuDevResourceGenerateDesc_v12040 generate_desc = nullptr;
  PFN_cuGreenCtxCreate_v12040 green_create = nullptr;
  PFN_cuGreenCtxDestroy_v12040 green_destroy = nullptr;
  PFN_cuCtxFromGreenCtx_v12040 ctx_from_green = nullptr;
  PFN_cuGreenCtxGetDevResource_v12040 green_get_resource = nullptr;
  PFN_cuGreenCtxStreamCreate_v12050 green_stream_create = nullptr;
};

constexpr unsigned kDriverAbi = 12050;

template <typename F>
void load(F& fn, const char* symbol) {
  void* p = nullptr;
  cudaDriverEntryPointQueryResult found = cudaDriverEntryPointSymbolNotFound;
  CS_CUDA_CHECK(cudaGetDriverEntryPointByVersion(symbol, &p, kDriverAbi, cudaEnableDefault, &found));
  if (found != cudaDriverEntryPointSuccess || p == nullptr) {
    throw std::runtime_error(std::string("the driver has no ") + symbol +
                             " (green contexts need a driver of CUDA 12.5 or newer)");
  }
  fn = reinterpret_cast<F>(p);
}

const Driver& driver() {
  static const Driver d = [] {
    Driver r;
    load(r.error_name, "cuGetErrorName");
    load(r.ctx_get_current, "cuCtxGetCurrent");
    load(r.ctx_set_current, "cuCtxSetCurrent");
    load(r.device_get_resource, "cuDeviceGetDevResource");
    load(r.split_by_count, "cuDevSmResourceSplitByCount");
    load(r.generate_desc, "cuDevResourceGenerateDesc");
    load(r.green_create, "cuGreenCtxCreate");
    load(r.green_destroy, "cuGreenCtxDestroy");
    load(r.ctx_from_green, "cuCtxFromGreenCtx");
    load(r.green_get_resource, "cuGreenCtxGetDevResource");
    load(r.green_stream_create, "cuGreenCtxStreamCreate");
    return r;
  }();
  return d;
}

std::string describe(CUresult r) {
  const char* name = nullptr;
  if (driver().error_name(r, &name) == CUDA_SUCCESS && name != nullptr) return name;
  return "CUresult " + std::to_string(static_cast<int>(r));
}

void cu_check(CUresult r, const char* what) {
  if (r != CUDA_SUCCESS) throw std::runtime_error(std::string(what) + " failed: " + describe(r));
}

}  // namespace

SmPartitions::SmPartitions(int device, const std::vector<int>& green_limits, int events) : device_(device) {
  const Driver& d = driver();
  CUdevResource whole{};
  cu_check(d.device_get_resource(device_, &whole, CU_DEV_RESOURCE_TYPE_SM), "cuDeviceGetDevResource");
  info_.sm_count = static_cast<int>(whole.sm.smCount);
  info_.min_partition_size = static_cast<int>(whole.sm.minSmPartitionSize);
  info_.coscheduled_alignment = static_cast<int>(whole.sm.smCoscheduledAlignment);

  primary_ = std::make_unique<Partition>();
  primary_->sm_limit = info_.sm_count;
  primary_->sm_obtained = info_.sm_count;
  cu_check(d.ctx_get_current(&primary_->ctx), "cuCtxGetCurrent");
  if (primary_->ctx == nullptr) throw std::runtime_error("no current CUDA context (call cudaFree(0) first)");
  make_stream_and_events(*primary_, events);

  for (int limit : green_limits) {
    auto p = std::make_unique<Partition>();
    p->sm_limit = limit;
    p->green = true;
    try {
      make_green(*p);
      make_stream_and_events(*p, events);
    } catch (const std::exception& e) {
      p->error = e.what();
    }
    make_current(*primary_);
    greens_.push_back(std::move(p));
  }
}

// A green context of at least p.sm_limit SMs: the whole device resource when the limit is the
// device's SM count (a split cannot take every SM), else one group split off by count; the driver
// rounds the count up to its granularity, so the SMs obtained are read back from the context.
void SmPartitions::make_green(Partition& p) {
  CUdevResource whole = device_sm_resource(device_);
  if (p.sm_limit <= 0 || p.sm_limit > static_cast<int>(whole.sm.smCount)) {
    throw std::runtime_error("asked for " + std::to_string(p.sm_limit) + " SMs of " +
                             std::to_string(whole.sm.smCount));
  }
  CUdevResource part{}, remaining{};
  if (p.sm_limit == static_cast<int>(whole.sm.smCount))
    part = whole;
  else
    split_sm_resource(whole, p.sm_limit, part, remaining);
  make_green_context(device_, part, p);
}

// Events belong to the context current when they are made, so they are made inside p's context.
void SmPartitions::make_stream_and_events(Partition& p, int events) {
  make_current(p);
  if (p.stream == nullptr) CS_CUDA_CHECK(cudaStreamCreateWithFlags(&p.stream, cudaStreamNonBlocking));
  p.start_events.resize(static_cast<std::size_t>(events));
  p.stop_events.resize(static_cast<std::size_t>(events));
  for (int i = 0; i < events; ++i) {
    CS_CUDA_CHECK(cudaEventCreate(&p.start_events[static_cast<std::size_t>(i)]));
    CS_CUDA_CHECK(cudaEventCreate(&p.stop_events[static_cast<std::size_t>(i)]));
  }
}

Partition* SmPartitions::green(int sm_limit) {
  for (auto& p : greens_) {
    if (p->sm_limit == sm_limit) return p.get();
  }
  return nullptr;
}

void SmPartitions::make_current(const Partition& p) const { fp8_gemm::make_current(p); }

SmPartitions::~SmPartitions() {
  // Best effort: nothing here may throw. The green contexts go last, with the primary current.
  const CUcontext primary = primary_ ? primary_->ctx : nullptr;
  if (primary_) release_partition(*primary_, nullptr);
  for (auto& p : greens_) release_partition(*p, primary);
}

CUdevResource device_sm_resource(int device) {
  CUdevResource whole{};
  cu_check(driver().device_get_resource(device, &whole, CU_DEV_RESOURCE_TYPE_SM), "cuDeviceGetDevResource");
  return whole;
}

void split_sm_resource(CUdevResource& whole, int sms, CUdevResource& group, CUdevResource& rest) {
  unsigned groups = 1;
  cu_check(driver().split_by_count(&group, &groups, &whole, &rest, 0, static_cast<unsigned>(sms)),
           "cuDevSmResourceSplitByCount");
  if (groups < 1) throw std::runtime_error("cuDevSmResourceSplitByCount made no group");
}

void make_green_context(int device, CUdevResource& part, Partition& p) {
  const Driver& d = driver();
  CUdevResourceDesc desc = nullptr;
  cu_check(d.generate_desc(&desc, &part, 1), "cuDevResourceGenerateDesc");
  cu_check(d.green_create(&p.green_ctx, desc, device, CU_GREEN_CTX_DEFAULT_STREAM), "cuGreenCtxCreate");
  p.green = true;
  cu_check(d.ctx_from_green(&p.ctx, p.green_ctx), "cuCtxFromGreenCtx");
  CUdevResource got{};
  cu_check(d.green_get_resource(p.green_ctx, &got, CU_DEV_RESOURCE_TYPE_SM), "cuGreenCtxGetDevResource");
  p.sm_obtained = static_cast<int>(got.sm.smCount);
  CUstream s = nullptr;
  cu_check(d.green_stream_create(&s, p.green_ctx, CU_STREAM_NON_BLOCKING, 0), "cuGreenCtxStreamCreate");
  p.stream = reinterpret_cast<cudaStream_t>(s);
}

void make_current(const Partition& p) { cu_check(driver().ctx_set_current(p.ctx), "cuCtxSetCurrent"); }

void release_partition(Partition& p, CUcontext after) {
  const Driver& d = driver();
  if (p.ctx != nullptr && d.ctx_set_current(p.ctx) == CUDA_SUCCESS) {
    for (cudaEvent_t e : p.start_events) cudaEventDestroy(e);
    for (cudaEvent_t e : p.stop_events) cudaEventDestroy(e);
    if (p.stream != nullptr) cudaStreamDestroy(p.stream);
  }
  if (after != nullptr) d.ctx_set_current(after);
  if (p.green_ctx != nullptr) d.green_destroy(p.green_ctx);
}

}  // namespace cs::kernels::fp8_gemm
