#include "hw/gpu_catalog.h"

#include <algorithm>
#include <stdexcept>

#include "hw/embedded_catalog.h"
#include "hw/yaml_reader.h"

namespace cs::hw {

namespace {

const std::vector<std::string> kFigures = {
    "sms", "fp8_dense_tflops", "bf16_dense_tflops", "fp16_dense_tflops", "tf32_dense_tflops",
    "fp32_tflops", "fp64_tflops", "hbm_gb", "hbm_bw_GBps", "l2_mb",
    "nvlink_bw_GBps_per_direction", "nvlink_lat_ns"};

double figure(const YamlMap& m, const std::string& key, GpuSpec& spec) {
  const YamlMap f(m.required(key), {"value", "source"});
  const std::string source = f.required("source").as_string();
  if (source.empty()) f.required("source").fail("a figure's source cannot be empty");
  spec.sources[key] = source;
  return f.required("value").as_double(0, 1e9, true);
}

GpuSpec parse_gpu(const EmbeddedFile& file) {
  const YamlNode root = parse_yaml(file.text, std::string(file.path));
  std::vector<std::string> allowed = {"name", "model"};
  allowed.insert(allowed.end(), kFigures.begin(), kFigures.end());
  const YamlMap m(root, allowed);
  GpuSpec g;
  g.name = m.required("name").as_string();
  g.model = m.required("model").as_string();
  g.sms = static_cast<int>(figure(m, "sms", g));
  g.fp8_dense_tflops = figure(m, "fp8_dense_tflops", g);
  g.bf16_dense_tflops = figure(m, "bf16_dense_tflops", g);
  g.fp16_dense_tflops = figure(m, "fp16_dense_tflops", g);
  g.tf32_dense_tflops = figure(m, "tf32_dense_tflops", g);
  g.fp32_tflops = figure(m, "fp32_tflops", g);
  g.fp64_tflops = figure(m, "fp64_tflops", g);
  g.hbm_gb = figure(m, "hbm_gb", g);
  g.hbm_bw_GBps = figure(m, "hbm_bw_GBps", g);
  g.l2_mb = figure(m, "l2_mb", g);
  g.nvlink_bw_GBps_per_direction = figure(m, "nvlink_bw_GBps_per_direction", g);
  g.nvlink_lat_ns = figure(m, "nvlink_lat_ns", g);
  return g;
}

}  // namespace

const std::vector<GpuSpec>& gpu_catalog() {
  static const std::vector<GpuSpec> catalog = [] {
    std::vector<GpuSpec> out;
    try {
      for (const EmbeddedFile& f : embedded_gpu_files()) out.push_back(parse_gpu(f));
    } catch (const UserError& e) {
      throw std::logic_error(std::string("built-in GPU catalog is malformed: ") + e.what());
    }
    std::sort(out.begin(), out.end(), [](const auto& a, const auto& b) { return a.name < b.name; });
    return out;
  }();
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
