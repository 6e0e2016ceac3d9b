#include "overlap/green_pair.h"

namespace cs::kernels::overlap {

GreenPair::GreenPair(int device, int comm_sms) {
  CUdevResource whole = fp8_gemm::device_sm_resource(device);
  CUdevResource group{}, rest{};
  fp8_gemm::split_sm_resource(whole, comm_sms, group, rest);
  comm_.sm_limit = comm_sms;
  compute_.sm_limit = static_cast<int>(whole.sm.smCount) - comm_sms;
  fp8_gemm::make_green_context(device, group, comm_);
  fp8_gemm::make_green_context(device, rest, compute_);
}

GreenPair::~GreenPair() {
  fp8_gemm::release_partition(comm_, nullptr);
  fp8_gemm::release_partition(compute_, nullptr);
}

}  // namespace cs::kernels::overlap
