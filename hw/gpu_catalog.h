// The GPU catalog: datasheet figures from hw/gpus/*.yaml, compiled into the program so that it
// needs no data files at run time. Every figure keeps the source it was taken from.
#pragma once

#include <map>
#include <string>
#include <vector>

namespace cs::hw {

struct GpuSpec {
  std::string name;   // catalog key, e.g. "h800"
  std::string model;  // e.g. "NVIDIA H800 SXM5 80GB"
  int sms = 0;
  double fp8_dense_tflops = 0, bf16_dense_tflops = 0, fp16_dense_tflops = 0, tf32_dense_tflops = 0;
  double fp32_tflops = 0, fp64_tflops = 0;
  double hbm_gb = 0, hbm_bw_GBps = 0, l2_mb = 0;
  double nvlink_bw_GBps_per_direction = 0;
  double nvlink_lat_ns = 0;
  std::map<std::string, std::string> sources;  // figure name -> where it came from
};

// All catalog GPUs, sorted by name. Parsed once; a malformed catalog is an internal error.
const std::vector<GpuSpec>& gpu_catalog();
// nullptr when unknown.
const GpuSpec* find_gpu(const std::string& name);
std::vector<std::string> gpu_names();

}  // namespace cs::hw
