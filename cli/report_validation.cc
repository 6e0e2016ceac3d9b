#include "cli/report_validation.h"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <utility>
#include <vector>

#include "calibrate/measurements.h"
#include "calibrate/memory_fit.h"
#include "calibrate/validate.h"
#include "hw/gpu_catalog.h"
#include "hw/user_error.h"

namespace cs::cli {

namespace {

constexpr int kHoldoutEvery = calibrate::kBundledHoldoutEvery;
constexpr size_t kWorstCases = 8;

// `path` from the scenario's folder or one of the three above it (not from the current folder: the
// page would then depend on where the command ran).
std::string locate(const std::string& path, const std::string& scenario_file) {
  namespace fs = std::filesystem;
  std::error_code ec;
  fs::path dir = fs::absolute(scenario_file, ec).parent_path();
  for (int up = 0; up < 4 && !dir.empty(); ++up, dir = dir.parent_path()) {
    const fs::path p = dir / path;
    if (fs::is_regular_file(p, ec)) return p.string();
    if (dir == dir.parent_path()) break;
  }
  return "";
}

nlohmann::json summary(const char* what, const calibrate::FitStats& s) {
  return {{"what", what}, {"cases", s.cases}, {"median", s.median_error}, {"worst", s.worst_error}};
}

}  // namespace

nlohmann::json profile_validation(const hw::GpuProfile& profile, const std::string& scenario_file) {
  // Each file read alone first, for its provenance.
  std::vector<std::pair<std::string, calibrate::Provenance>> files;  // (path found, its source)
  std::vector<std::string> named;
  for (const std::string& entry : profile.fitted_from) {
    const std::string path = entry.substr(0, entry.find(": "));
    const std::string found = locate(path, scenario_file);
    if (found.empty()) return nullptr;
    calibrate::MeasurementSet one;
    try {
      calibrate::read_measurements(found, one);
    } catch (const hw::UserError&) {
      return nullptr;
    }
    if (one.sources.empty()) return nullptr;
    files.emplace_back(found, one.sources.front());
    named.push_back(path);
  }
  if (files.empty()) return nullptr;
  const hw::GpuSpec* gpu = nullptr;
  for (const hw::GpuSpec& g : hw::gpu_catalog())
    if (calibrate::measured_on(files.front().second, g.name)) gpu = &g;
  if (!gpu) return nullptr;
  // DRAM bytes and BF16 rates may come from another GPU of the same SMs and L2, as calibrate fit takes them;
  // the kernels' clock shares and memory-bound forms from one of the same chip and HBM as the profile's own
  // GPU (calibrate carry --measured: the H100's for the H800). Those are the own GPU's, not `gpu`'s: they
  // are left out of the cases checked here.
  const hw::GpuSpec* own = hw::find_gpu(profile.gpu);
  calibrate::MeasurementSet set;
  for (const auto& [found, src] : files) {
    const bool memory_system = src.program == "kernels/torch/kernel_clock.py" ||
                               src.program == "kernels/torch/memory_bound_forms.py";
    if (memory_system && !calibrate::memory_system_gpu(src, *gpu)) {
      if (own && calibrate::memory_system_gpu(src, *own)) continue;
      return nullptr;
    }
    if (!memory_system && (calibrate::chip_level_measurement(src) ? !calibrate::traffic_gpu(src, *gpu)
                                                                  : !calibrate::measured_on(src, gpu->name)))
      return nullptr;
    calibrate::read_measurements(found, set);
  }
  const hw::GpuProfile* checked = &profile;
  std::string note = "Every case of the measurements the profile names, simulated under the profile; every " +
                     std::to_string(kHoldoutEvery) + "th shape and grid cell was held out of the fit.";
  if (gpu->name != profile.gpu) {
    checked = hw::find_profile(gpu->name);
    if (!checked) return nullptr;
    note += " The " + profile.gpu + " profile is carried over from these " + gpu->name +
            " measurements, so the bundled " + gpu->name + " profile it was carried from is the one checked here.";
  }
  const calibrate::Validation v = calibrate::validate_profile(*checked, *gpu, set, kHoldoutEvery);
  std::vector<const calibrate::CaseCheck*> worst;
  for (const auto& c : v.cases) worst.push_back(&c);
  std::stable_sort(worst.begin(), worst.end(),
                   [](auto* a, auto* b) { return std::abs(a->error()) > std::abs(b->error()); });
  if (worst.size() > kWorstCases) worst.resize(kWorstCases);
  nlohmann::json cases = nlohmann::json::array();
  for (const auto* c : worst)
    cases.push_back({{"kind", c->kind}, {"label", c->label}, {"measured_us", c->measured_us},
                     {"predicted_us", c->predicted_us}, {"held_out", c->held_out}});
  return {{"profile", checked->gpu},
          {"data", named},
          {"holdout_every", kHoldoutEvery},
          {"summary",
           {summary("FP8 GEMM, held out", v.gemm_held), summary("FP8 GEMM, all", v.gemm_all),
            summary("all-to-all, held out", v.comm_held), summary("all-to-all, all", v.comm_all),
            summary("BF16 GEMM, held out", v.gemm_bf16_held), summary("BF16 GEMM, all", v.gemm_bf16_all),
            summary("FP8 GEMM, both scalings", v.gemm_scalings), summary("FP8 GEMM, 1x128 x 1x128", v.gemm_tiles),
            summary("attention, fitted", v.attention), summary("FlashAttention-2, fitted", v.attention_fa2),
            summary("memory-bound, fitted", v.memory_bound), summary("memory-bound forms, fitted", v.memory_forms)}},
          {"cases", cases},
          {"note", note}};
}

}  // namespace cs::cli
