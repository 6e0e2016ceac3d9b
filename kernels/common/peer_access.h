// Peer access from GPU `d` to every other of the first `n` GPUs (NVLink loads and stores), for the
// programs that drive all GPUs from one process. Makes `d` current. Throws CudaError on a CUDA
// failure and std::runtime_error when a pair cannot reach each other.
#pragma once

#include <cuda_runtime.h>

#include <stdexcept>
#include <string>

#include "common/check.h"

namespace cs::kernels {

inline void enable_peer_access(int d, int n) {
  CS_CUDA_CHECK(cudaSetDevice(d));
  for (int p = 0; p < n; ++p) {
    if (p == d) continue;
    int can = 0;
    CS_CUDA_CHECK(cudaDeviceCanAccessPeer(&can, d, p));
    if (!can) throw std::runtime_error("GPU " + std::to_string(d) + " cannot access GPU " + std::to_string(p));
    const cudaError_t e = cudaDeviceEnablePeerAccess(p, 0);
    if (e == cudaErrorPeerAccessAlreadyEnabled)
      (void)cudaGetLastError();  // clears the sticky "already enabled"
    else
      CS_CUDA_CHECK(e);
  }
}

}  // namespace cs::kernels
