// A cudaLaunchKernelEx configuration for a 1-D grid in thread-block clusters along x (the probes'
// launches: cluster_probe.cu, placement_probe/launch.cuh).
#pragma once

#include <cuda_runtime.h>

#include <cstddef>

namespace cs::kernels {

// `attr` (one element) must outlive the launch: the configuration points at it.
inline cudaLaunchConfig_t cluster_launch_config(int ctas, int cluster, int threads, std::size_t smem_bytes,
                                                cudaStream_t stream, cudaLaunchAttribute* attr) {
  attr[0].id = cudaLaunchAttributeClusterDimension;
  attr[0].val.clusterDim.x = static_cast<unsigned>(cluster);
  attr[0].val.clusterDim.y = 1;
  attr[0].val.clusterDim.z = 1;
  cudaLaunchConfig_t cfg{};
  cfg.gridDim = dim3(static_cast<unsigned>(ctas));
  cfg.blockDim = dim3(static_cast<unsigned>(threads));
  cfg.dynamicSmemBytes = smem_bytes;
  cfg.stream = stream;
  cfg.attrs = attr;
  cfg.numAttrs = 1;
  return cfg;
}

}  // namespace cs::kernels
