#include "hw/gpu_catalog.h"

#include <algorithm>
#include <stdexcept>

#include "hw/catalog_parse.h"
#include "hw/yaml_reader.h"

namespace cs::hw {

namespace {

const std::vector<std::string> kFigures = {
    "sms", "fp8_dense_tflops", "bf16_dense_tflops", "fp16_dense_tflops", "tf32_dense_tflops",
    "fp32_tflops", "fp64_tflops", "hbm_gb", "hbm_bw_GBps", "l2_mb",
    "nvlink_bw_GBps_per_direction", "nvlink_lat_ns"};

GpuSpec parse_gpu(const YamlNode& root) {
  std::vector<std::string> allowed = {"name", "model"};
  allowed.insert(allowed.end(), kFigures.begin(), kFigures.end());
  const YamlMap m(root, allowed);
  GpuSpec g;
  g.name = m.required("name").as_string();
  g.model = m.required("model").as_string();
  g.sms = static_cast<int>(catalog_figure(m, "sms", g.sources));
  g.fp8_dense_tflops = catalog_figure(m, "fp8_dense_tflops", g.sources);
  g.bf16_dense_tflops = catalog_figure(m, "bf16_dense_tflops", g.sources);
  g.fp16_dense_tflops = catalog_figure(m, "fp16_dense_tflops", g.sources);
  g.tf32_dense_tflops = catalog_figure(m, "tf32_dense_tflops", g.sources);
  g.fp32_tflops = catalog_figure(m, "fp32_tflops", g.sources);
  g.fp64_tflops = catalog_figure(m, "fp64_tflops", g.sources);
  g.hbm_gb = catalog_figure(m, "hbm_gb", g.sources);
  g.hbm_bw_GBps = catalog_figure(m, "hbm_bw_GBps", g.sources);
  g.l2_mb = catalog_figure(m, "l2_mb", g.sources);
  g.nvlink_bw_GBps_per_direction = catalog_figure(m, "nvlink_bw_GBps_per_direction", g.sources);
  g.nvlink_lat_ns = catalog_figure(m, "nvlink_lat_ns", g.sources);
  return g;
}

}  // namespace

const std::vector<GpuSpec>& gpu_catalog() {
  static const auto catalog = load_catalog_folder<GpuSpec>("hw/gpus/", parse_gpu);
  return catalog;
}

const GpuSpec* find_gpu(const std::string& name) {
  for (const GpuSpec& g : gpu_catalog())
    if (g.name == name) return &g;
  return nullptr;
}

std::vector<std::string> gpu_names() {
  std::vector<std::string> out;
  for (const GpuSpec& g : gpu_catalog()) out.push_back(g.name);
  return out;
}

}  // namespace cs::hw
