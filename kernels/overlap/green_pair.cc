#include "overlap/green_pair.h"

#include <cudaTypedefs.h>

#include <stdexcept>
#include <string>

#include "common/check.h"

namespace cs::kernels::overlap {
namespace {

// Driver entry points, taken through the runtime (no link against libcuda: without a driver the
// program must still exit 2), in the ABI of CUDA 12.5 as fp8_gemm/sm_partition.cc does.
struct Driver {
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

template <typename F>
void load(F& fn, const char* symbol) {
  void* p = nullptr;
  cudaDriverEntryPointQueryResult found = cudaDriverEntryPointSymbolNotFound;
  CS_CUDA_CHECK(cudaGetDriverEntryPointByVersion(symbol, &p, 12050, cudaEnableDefault, &found));
  if (found != cudaDriverEntryPointSuccess || p == nullptr) {
    throw std::runtime_error(std::string("the driver has no ") + symbol + " (green contexts need CUDA 12.5+)");
  }
  fn = reinterpret_cast<F>(p);
}

const Driver& driver() {
  static const Driver d = [] {
    Driver r;
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

void cu_check(CUresult r, const char* what) {
  if (r != CUDA_SUCCESS) throw std::runtime_error(std::string(what) + " failed: CUresult " + std::to_string(r));
}

void make_green(int device, CUdevResource& res, Partition& p) {
  const Driver& d = driver();
  CUdevResourceDesc desc = nullptr;
  cu_check(d.generate_desc(&desc, &res, 1), "cuDevResourceGenerateDesc");
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

}  // namespace

void make_current(const Partition& p) { cu_check(driver().ctx_set_current(p.ctx), "cuCtxSetCurrent"); }

GreenPair::GreenPair(int device, int comm_sms) {
  const Driver& d = driver();
  CUdevResource whole{};
  cu_check(d.device_get_resource(device, &whole, CU_DEV_RESOURCE_TYPE_SM), "cuDeviceGetDevResource");
  CUdevResource group{}, rest{};
  unsigned groups = 1;
  cu_check(d.split_by_count(&group, &groups, &whole, &rest, 0, static_cast<unsigned>(comm_sms)),
           "cuDevSmResourceSplitByCount");
  if (groups != 1) throw std::runtime_error("cuDevSmResourceSplitByCount made no group");
  comm_.sm_limit = comm_sms;
  compute_.sm_limit = static_cast<int>(whole.sm.smCount) - comm_sms;
  make_green(device, group, comm_);
  make_green(device, rest, compute_);
}

GreenPair::~GreenPair() {
  const Driver& d = driver();
  for (Partition* p : {&comm_, &compute_}) {
    if (p->ctx == nullptr) continue;
    if (d.ctx_set_current(p->ctx) == CUDA_SUCCESS && p->stream != nullptr) cudaStreamDestroy(p->stream);
  }
  for (Partition* p : {&comm_, &compute_}) {
    if (p->green_ctx != nullptr) d.green_destroy(p->green_ctx);
  }
}

}  // namespace cs::kernels::overlap
