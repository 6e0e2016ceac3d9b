// Memory-bound kernel forms and the launch gap: the fit recovers known rates, the calibrated cost
// times each form at its own rate (elementwise_GBps where not measured) after the gap, profiles
// write and read them, calibrate fit and carry --measured take them, and the H100's measured forms
// read, fit and predict as the bundled H100 profile records.
#include <catch2/catch.hpp>

#include <algorithm>
#include <fstream>
#include <string>
#include <nlohmann/json.hpp>
#include <vector>

#include "calibrate/kernel_fit.h"
#include "calibrate/measurements.h"
#include "calibrate/memory_form_fit.h"
#include "calibrate/profile_build.h"
#include "calibrate/sim_cases.h"
#include "calibrate/validate.h"
#include "hw/calibrated_cost.h"
#include "hw/gpu_catalog.h"
#include "hw/gpu_profile.h"
#include "hw/user_error.h"
#include "test_support.h"

namespace CS_TEST_FILE {  // unique per file: the tests build in unity batches

using namespace cs;
using F = sim::MemoryForm;
using nlohmann::json;

namespace {

calibrate::MemoryFormCase form_case(F f, double bytes, double GBps) {
  calibrate::MemoryFormCase c;
  c.op = sim::memory_form_name(f);
  c.form = f;
  c.bytes = bytes;
  c.device_us = bytes / (GBps * 1e3);
  return c;
}

std::string h100_data(const std::string& file) { return test::source_dir() + "/calibrate/data/h100/" + file; }

// The bundled H200 profile without its measured forms: every form at elementwise_GBps.
hw::GpuProfile h200_without_forms() {
  hw::GpuProfile p = *hw::find_profile("h200");
  p.kernels.form_GBps.fill(0);
  for (int i = 1; i < sim::kMemoryForms; ++i)
    p.kernel_params.erase(hw::KernelModel::param_name(hw::KernelModel::form_param(static_cast<F>(i))));
  return p;
}

}  // namespace

TEST_CASE("memory forms: the fit takes each form's bytes over its time, and the median launch gap", "[calibrate][fit]") {
  calibrate::MeasurementSet set;
  set.memory_forms.push_back(form_case(F::kNormBackward, 1e8, 1000));
  set.memory_forms.push_back(form_case(F::kNormBackward, 3e8, 3000));  // 4e8 bytes in 200 us: 2000 GB/s
  set.memory_forms.push_back(form_case(F::kLayoutCopy, 1e8, 1500));
  set.launch_gaps_us = {1.2, 0.9, 1.0};
  const calibrate::MemoryFormFit f = calibrate::fit_memory_forms(set);
  CHECK(f.GBps[static_cast<size_t>(F::kNormBackward)] == Approx(2000));
  CHECK(f.cases[static_cast<size_t>(F::kNormBackward)] == 2);
  CHECK(f.GBps[static_cast<size_t>(F::kLayoutCopy)] == Approx(1500));
  CHECK(f.GBps[static_cast<size_t>(F::kActivation)] == 0);
  CHECK(f.launch_gap_us == Approx(1.0));
  CHECK(!f.empty());
  CHECK(calibrate::fit_memory_forms({}).empty());
}

TEST_CASE("memory forms: a profile times each form at its own rate, the rest at elementwise_GBps, each after the gap", "[calibrate][cost]") {
  hw::GpuProfile p = h200_without_forms();
  REQUIRE(p.kernels.present());
  p.kernels.form_GBps[static_cast<size_t>(F::kLayoutCopy)] = 1500;
  p.kernels.launch_gap_us = 2;
  const hw::CalibratedCost cost(*hw::find_gpu("h200"), p);
  const auto kernel = [](F f) { return sim::GenericCompute{0, 1.5e9, sim::DType::kBf16, sim::ComputeKind::kMemoryBound, f}; };
  const auto us = [&](F f) { return cost.compute_time(0, kernel(f), 132).to_seconds() * 1e6; };
  CHECK(us(F::kLayoutCopy) == Approx(1000).epsilon(1e-9));
  CHECK(us(F::kNorm) == Approx(1.5e9 / (p.kernels.elementwise_GBps * 1e3)).epsilon(1e-8));  // whole ps
  CHECK(us(F::kAny) == us(F::kNorm));
  // The gap is idle device before each memory-bound kernel, apart from its time; the GEMM and
  // attention fits count their launch in their calls' time.
  CHECK(cost.compute_launch_gap(0, kernel(F::kNorm)).to_seconds() * 1e6 == Approx(2));
  const sim::GenericCompute attention{1e9, 1e6, sim::DType::kBf16, sim::ComputeKind::kAttentionForward};
  CHECK(cost.compute_launch_gap(0, attention) == sim::Time());
}

TEST_CASE("memory forms: a memory-bound kernel alone in the engine takes its time after the launch gap", "[calibrate][cost]") {
  // (tests/sim/test_executor.cc: the gap holds no SM and delays each kernel after the one before.)
  hw::GpuProfile p = *hw::find_profile("h200");
  p.kernels.launch_gap_us = 50;
  const hw::CalibratedCost cost(*hw::find_gpu("h200"), p);
  const double kernel_us = cost.compute_time(0, {0, 1e8, sim::DType::kBf16, sim::ComputeKind::kMemoryBound, F::kNorm}, 132)
                               .to_seconds() * 1e6;
  const double alone_us =
      calibrate::simulate_kernel(p, *hw::find_gpu("h200"), {0, 1e8, sim::DType::kBf16, sim::ComputeKind::kMemoryBound, F::kNorm})
          .to_seconds() * 1e6;
  CHECK(alone_us == Approx(kernel_us + 50).epsilon(1e-6));
}

TEST_CASE("memory forms: a profile writes its forms and gap and reads them back, and a rate of 0 is refused at its value", "[calibrate][profile]") {
  hw::GpuProfile p = h200_without_forms();
  calibrate::MeasurementSet set;
  set.memory_forms.push_back(form_case(F::kConcat, 1e8, 2500));
  set.launch_gaps_us = {1.5};
  calibrate::apply_memory_forms(calibrate::fit_memory_forms(set), "synthetic (test)", p);
  test::TempDir tmp;
  const std::string yaml = calibrate::profile_yaml(p);
  test::write_file(tmp.file("p.yaml"), yaml);
  const hw::GpuProfile q = hw::load_profile(tmp.file("p.yaml"));
  CHECK(q.kernels.form_GBps[static_cast<size_t>(F::kConcat)] == Approx(2500));
  CHECK(q.kernels.memory_GBps(F::kConcat) == Approx(2500));
  CHECK(q.kernels.memory_GBps(F::kLoss) == Approx(p.kernels.elementwise_GBps));
  CHECK(q.kernels.launch_gap_us == Approx(1.5));
  CHECK(q.kernel_params.at("concat_GBps").origin == "measured");
  // The value's own line and column.
  const size_t at = yaml.find("  concat_GBps: {value: ");
  REQUIRE(at != std::string::npos);
  const size_t end = yaml.find(',', at);
  std::string bad = yaml;
  bad.replace(at, end - at, "  concat_GBps: {value: 0");
  test::write_file(tmp.file("bad.yaml"), bad);
  int line = 1;
  for (size_t i = 0; i < at; ++i) line += yaml[i] == '\n';
  try {
    hw::load_profile(tmp.file("bad.yaml"));
    FAIL("a rate of 0 was accepted");
  } catch (const hw::UserError& e) {
    CHECK_THAT(std::string(e.what()), Catch::Matchers::StartsWith(tmp.file("bad.yaml") + ":" + std::to_string(line) + ":24:"));
  }
}

TEST_CASE("memory forms: the H100's measured forms read by prefix, predict within a few percent and stay the H100's", "[calibrate][data]") {
  calibrate::MeasurementSet set;
  calibrate::read_measurements(h100_data("memory_bound_forms.json"), set);
  // 18 cases with a time, less the embedding backward (PyTorch's dense BF16 table gradient, not the
  // model's FP32 rows): 17 forms; and one launch-gap measurement of about a microsecond.
  CHECK(set.memory_forms.size() == 17);
  for (const auto& c : set.memory_forms) CHECK(c.op.rfind("embedding_bwd", 0) == std::string::npos);
  REQUIRE(set.launch_gaps_us.size() == 1);
  CHECK(set.launch_gaps_us[0] > 0.5);
  CHECK(set.launch_gaps_us[0] < 2.0);
  // The bundled H100 profile carries them (calibrate carry ... --measured, README).
  const hw::GpuProfile& h100 = *hw::find_profile("h100");
  const calibrate::MemoryFormFit f = calibrate::fit_memory_forms(set);
  for (int i = 1; i < sim::kMemoryForms; ++i) {
    if (f.cases[i] == 0) continue;
    INFO(sim::memory_form_name(static_cast<F>(i)));
    CHECK(h100.kernels.form_GBps[i] == Approx(f.GBps[i]).epsilon(1e-9));
  }
  CHECK(h100.kernels.launch_gap_us == Approx(f.launch_gap_us));
  // SDPA's strided layout copy moves its bytes at about half the contiguous kernels' rate.
  CHECK(h100.kernels.memory_GBps(F::kLayoutCopy) < 0.6 * h100.kernels.memory_GBps(F::kResidualAdd));
  const calibrate::Validation v = calibrate::validate_profile(h100, *hw::find_gpu("h100"), set, 4);
  CHECK(v.memory_forms.cases == 17);
  CHECK(v.memory_forms.median_error < 0.05);  // 0.4% (its own fit): the 8-head RoPE's 5-8 us kernels miss most
  // Another GPU's profile refuses them.
  hw::GpuProfile h200 = *hw::find_profile("h200");
  CHECK_THROWS_AS(calibrate::apply_measured_memory_forms(set, *hw::find_gpu("h200"), h200), hw::UserError);
}

TEST_CASE("memory-bound kernels are read by their device time where measured: CUDA events around one call count its launch", "[calibrate][data]") {
  calibrate::MeasurementSet dev, events;
  calibrate::read_measurements(h100_data("memory_bound_device_time.json"), dev);
  calibrate::read_measurements(h100_data("memory_bound.json"), events);
  REQUIRE(dev.memory_bound.size() == events.memory_bound.size());
  int compiled = 0;
  for (size_t i = 0; i < dev.memory_bound.size(); ++i) {
    const auto& d = dev.memory_bound[i];
    INFO(d.op << " " << d.variant);
    if (d.variant != "compiled") continue;
    ++compiled;
    // The same kernels two days apart: the device time is the shorter for every fused kernel.
    CHECK(d.time_us < events.memory_bound[i].time_us);
  }
  CHECK(compiled == 8);
  // The fitted rate moves from about 2.0 to about 3.0 TB/s (README: the H200's elementwise_GBps
  // is from CUDA events, and biased low alike until it is measured again).
  const auto median_rate = [](const calibrate::MeasurementSet& s) {
    std::vector<double> r;
    for (const auto& c : s.memory_bound)
      if (calibrate::fitted_case(c)) r.push_back(c.bytes / c.time_us);
    std::sort(r.begin(), r.end());
    return (r[r.size() / 2 - 1] + r[r.size() / 2]) / 2;
  };
  CHECK(median_rate(dev) > 1.3 * median_rate(events));
}

TEST_CASE("memory forms: carried on, a measured form keeps its own source, and HBM carries at least the forms' traffic", "[calibrate][profile]") {
  const hw::GpuProfile& h100 = *hw::find_profile("h100");
  double top = 0;
  for (double r : h100.kernels.form_GBps) top = std::max(top, r);
  CHECK(h100.memory.hbm_GBps >= top);
  // A ceiling below the fastest form measured is raised to it, which is then its source.
  hw::GpuProfile low = h100;
  low.memory.hbm_GBps = 0.9 * top;
  calibrate::MeasurementSet forms;
  calibrate::read_measurements(h100_data("memory_bound_forms.json"), forms);
  calibrate::apply_measured_memory_forms(forms, *hw::find_gpu("h100"), low);
  CHECK(low.memory.hbm_GBps == Approx(top));
  CHECK(low.memory_params.at("hbm_GBps").origin == "measured");
  CHECK_THAT(low.memory_params.at("hbm_GBps").source, Catch::Matchers::Contains("memory_bound_forms.json"));
  const hw::GpuProfile h800 = calibrate::carry_profile(h100, *hw::find_gpu("h100"), *hw::find_gpu("h800"));
  const hw::ProfileParam& copy = h800.kernel_params.at("layout_copy_GBps");
  CHECK(copy.origin == "carried");
  CHECK_THAT(copy.source, Catch::Matchers::StartsWith("the h100 measurement x HBM 3350 / 3350 GB/s"));
  CHECK_THAT(copy.source, Catch::Matchers::Contains("there: bytes / kernels' device time"));
}

TEST_CASE("memory forms: a launch gap of 0 is refused as data, since a profile holds none", "[calibrate][data]") {
  std::string text = test::read_file(h100_data("memory_bound_forms.json"));
  const size_t at = text.find("\"gap_us_median\":");
  REQUIRE(at != std::string::npos);
  const size_t end = text.find_first_of(",}", at);
  text.replace(at, end - at, "\"gap_us_median\":0");
  test::TempDir tmp;
  test::write_file(tmp.file("forms.json"), text);
  calibrate::MeasurementSet set;
  CHECK_THROWS_WITH(calibrate::read_measurements(tmp.file("forms.json"), set),
                    Catch::Matchers::Contains("gap_us_median must be positive"));
}

TEST_CASE("calibrate carry --measured takes the forms of the target's chip and HBM, and refuses another HBM's", "[calibrate][cli]") {
  test::TempDir tmp;
  const test::RunOutput ok = test::run_clustersim({"calibrate", "carry", "h200", "--to", "h100", "--measured",
                                                   h100_data("memory_bound_forms.json"), "-o", tmp.file("h100.yaml")});
  REQUIRE(ok.exit_code == 0);
  const hw::GpuProfile p = hw::load_profile(tmp.file("h100.yaml"));
  CHECK(p.kernel_params.at("layout_copy_GBps").origin == "measured");
  CHECK(p.kernel_params.at("elementwise_GBps").origin == "carried");
  CHECK(p.kernels.launch_gap_us > 0);
  // The H800 is the H100's chip with the H100's HBM: the H100's forms are its own, and say so.
  const test::RunOutput h800 = test::run_clustersim({"calibrate", "carry", "h200", "--to", "h800", "--measured",
                                                     h100_data("memory_bound_forms.json"), "-o", tmp.file("h800.yaml")});
  REQUIRE(h800.exit_code == 0);
  const hw::GpuProfile carried = hw::load_profile(tmp.file("h800.yaml"));
  const hw::ProfileParam& copy = carried.kernel_params.at("layout_copy_GBps");
  CHECK(copy.origin == "measured");
  CHECK(copy.value == Approx(p.kernels.form_GBps[static_cast<size_t>(F::kLayoutCopy)]));
  CHECK_THAT(copy.source, Catch::Matchers::Contains("NVIDIA H100 SXM5 80GB has the chip and HBM bandwidth of NVIDIA H800"));
  // The H200's HBM is not the H800's.
  const test::RunOutput bad =
      test::run_clustersim({"calibrate", "carry", "h200", "--to", "h800", "--measured",
                            test::source_dir() + "/calibrate/data/h200/memory_bound_forms.json", "-o", tmp.file("bad.yaml")});
  CHECK(bad.exit_code == 2);
  CHECK_THAT(bad.err, Catch::Matchers::Contains("measured on 'NVIDIA H200'"));
  CHECK_THAT(bad.err, Catch::Matchers::Contains("of a GPU of its chip and HBM bandwidth"));
  CHECK(!std::ifstream(tmp.file("bad.yaml")).good());
  // A file with no forms in it would change nothing: refused, not silently accepted.
  const test::RunOutput none = test::run_clustersim({"calibrate", "carry", "h200", "--to", "h100", "--measured",
                                                     h100_data("pipeline_step.json"), "-o", tmp.file("none.yaml")});
  CHECK(none.exit_code == 2);
  CHECK_THAT(none.err, Catch::Matchers::Contains("no memory-bound kernel forms"));
  CHECK(!std::ifstream(tmp.file("none.yaml")).good());
}

TEST_CASE("calibrate fit takes the same GPU's forms: rates, gap, fitted_from and a raised HBM ceiling", "[calibrate][cli]") {
  // A forms file of the H200 (synthetic: the bench's format, one SwiGLU forward at 5000 GB/s, above
  // the 4229 GB/s the H200's copies measured, and a launch gap), fitted with the H200's real data.
  test::TempDir tmp;
  const json forms = {
      {"schema_version", 1},
      {"provenance", {{"program", "kernels/torch/memory_bound_forms.py"}, {"date_utc", "2026-11-26T00:00:00Z"},
                      {"git_commit", "test"}, {"gpu", {{"name", "NVIDIA H200"}}}}},
      {"cases", json::array({{{"op", "swiglu_chunked_fwd_14336"}, {"variant", "compiled"}, {"bytes", 5e8},
                              {"kernel_us_per_call", 100.0}},
                             {{"op", "launch_gap"}, {"variant", "eager"}, {"gap_us_median", 1.1}}})}};
  test::write_file(tmp.file("forms.json"), forms.dump());
  const std::string d = test::source_dir() + "/calibrate/data/h200/";
  const test::RunOutput ok = test::run_clustersim({"calibrate", "fit", d + "fp8_gemm.json", d + "all_to_all.json",
                                                   d + "attention.json", d + "memory_bound.json", tmp.file("forms.json"),
                                                   "-o", tmp.file("h200.yaml")});
  REQUIRE(ok.exit_code == 0);
  const hw::GpuProfile p = hw::load_profile(tmp.file("h200.yaml"));
  CHECK(p.kernels.memory_GBps(F::kActivation) == Approx(5000));
  CHECK(p.kernels.launch_gap_us == Approx(1.1));
  CHECK(p.memory.hbm_GBps == Approx(5000));
  CHECK_THAT(p.memory_params.at("hbm_GBps").source, Catch::Matchers::Contains("activation_fwd"));
  CHECK(std::count_if(p.fitted_from.begin(), p.fitted_from.end(),
                      [&](const std::string& f) { return f.find("forms.json") != std::string::npos; }) == 1);
  // Without attention and memory_bound.py's data there is no kernels section to hold them: refused.
  const test::RunOutput bare = test::run_clustersim({"calibrate", "fit", d + "fp8_gemm.json", d + "all_to_all.json",
                                                     tmp.file("forms.json"), "-o", tmp.file("bare.yaml")});
  CHECK(bare.exit_code == 2);
  CHECK_THAT(bare.err, Catch::Matchers::Contains("need a profile with a kernels section"));
  CHECK(!std::ifstream(tmp.file("bare.yaml")).good());
}

}  // namespace CS_TEST_FILE
