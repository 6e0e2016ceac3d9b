// The measurements of a host of four H200s (calibrate/data/h200/*4gpu*, all_to_all_3gpu.json and
// all_to_all_2gpu_x4host.json, 2026-11-28): our all-to-all and NCCL's over four, three and two of its
// GPUs, and pipeline steps over four ranks. The H200 profile was fitted on two GPUs of another host;
// here every case is held out, and the tests hold what README.md ("On four H200s") says of them:
// where the model agrees, and where the measurement or the model falls short.
#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include <catch2/catch.hpp>

#include <nlohmann/json.hpp>

#include "calibrate/compare_pipeline.h"
#include "calibrate/compare_run.h"
#include "calibrate/measurements.h"
#include "calibrate/validate.h"
#include "hw/gpu_catalog.h"
#include "hw/gpu_profile.h"
#include "models/scenario_loader.h"
#include "test_support.h"

namespace CS_TEST_FILE {  // unique per file: the tests build in unity batches

using namespace cs;
using nlohmann::json;

namespace {

std::string h200_data(const std::string& file) { return test::source_dir() + "/calibrate/data/h200/" + file; }
json read_json(const std::string& file) { return json::parse(test::read_file(h200_data(file))); }

// An all-to-all validation label: "dispatch_fp8 1048576 B on 4 GPUs, 20 SMs".
struct A2aLabel {
  std::string mode;
  int64_t size_bytes = 0;
  int gpus = 0, sms = 0;
};
A2aLabel parse_label(const std::string& label) {
  A2aLabel l;
  std::istringstream in(label);
  std::string b, on, gpus_word;
  in >> l.mode >> l.size_bytes >> b >> on >> l.gpus >> gpus_word >> l.sms;
  return l;
}

calibrate::Validation validate(const std::string& file) {
  calibrate::MeasurementSet set;
  calibrate::read_measurements(h200_data(file), set);
  return calibrate::validate_profile(*hw::find_profile("h200"), *hw::find_gpu("h200"), set, 4);
}

}  // namespace

TEST_CASE("the four-H200 all-to-all data says where it came from and covers the sweep", "[data]") {
  const json d = read_json("all_to_all_4gpu.json");
  CHECK(d["provenance"]["gpus"].size() == 4u);
  CHECK(d["bench"]["gpus"] == 4);
  std::set<std::tuple<std::string, std::string, int, int64_t>> seen;
  std::map<std::tuple<std::string, int, int64_t>, double> ours, nccl;
  for (const json& r : d["records"]) {
    INFO(r.dump());
    CHECK(r["check_passed"] == true);
    const std::string impl = r["impl"];
    const auto key = std::make_tuple(r["mode"].get<std::string>(), r["k"].get<int>(), r["size_bytes"].get<int64_t>());
    CHECK(seen.insert(std::tuple_cat(std::make_tuple(impl), key)).second);
    // busbw = algbw x (n-1)/n with n = 4.
    CHECK(r["busbw_gbps"].get<double>() == Approx(r["algbw_gbps"].get<double>() * 3 / 4).epsilon(1e-6));
    (impl == "ours" ? ours : nccl)[key] = r["busbw_gbps"].get<double>();
  }
  CHECK(seen.size() == 2u * 2 * 9 * 11);  // {ours, nccl} x {dispatch, combine} x 9 CTA counts x 1 MiB..1 GiB
  // Issue 8's bar, on four GPUs too: ours within 10% of NCCL at equal CTAs (94.4% at worst).
  REQUIRE(ours.size() == nccl.size());
  for (const auto& [key, bw] : ours) {
    INFO(std::get<0>(key) << " k " << std::get<1>(key) << " size " << std::get<2>(key));
    CHECK(bw >= 0.9 * nccl.at(key));
  }
}

TEST_CASE("our all-to-all on four H200s: a fixed cost that grows with the peers and a lower NVLink ceiling", "[data]") {
  std::map<std::tuple<int, int, int64_t>, double> us, busbw;  // (gpus, k, size) of ours, dispatch
  for (const char* file : {"all_to_all.json", "all_to_all_4gpu.json"}) {
    const json d = read_json(file);
    const int gpus = d["bench"]["gpus"];
    for (const json& r : d["records"])
      if (r["impl"] == "ours" && r["mode"] == "dispatch_fp8") {
        const auto key = std::make_tuple(gpus, r["k"].get<int>(), r["size_bytes"].get<int64_t>());
        us[key] = r["time_us"];
        busbw[key] = r["busbw_gbps"];
      }
  }
  const int64_t mib = int64_t{1} << 20, gib = int64_t{1} << 30;
  // 1 MiB, where the fixed cost dominates: about 10 us on two GPUs, 16-19 on four, from 16 CTAs on.
  for (int k : {16, 20, 24, 32, 48}) {
    INFO("k " << k);
    CHECK(us.at({4, k, mib}) > 1.5 * us.at({2, k, mib}));
  }
  // 1 GiB on 48 CTAs: 365 GB/s per GPU to one peer, 342 to three (NCCL 348 and 330).
  CHECK(busbw.at({4, 48, gib}) < 0.95 * busbw.at({2, 48, gib}));
  CHECK(busbw.at({4, 48, gib}) > 0.85 * busbw.at({2, 48, gib}));
  // Copy-bound on 2 CTAs, the per-SM rate is the same with three peers as with one.
  CHECK(busbw.at({4, 2, gib}) / 3 * 4 == Approx(busbw.at({2, 2, gib}) * 2).epsilon(0.05));
}

TEST_CASE("our all-to-all on two, three and four GPUs of the four-GPU host: the sweep repeats, the fixed cost grows",
          "[data]") {
  // (gpus, impl, k, size) -> time; the three-GPU sizes are cut to a multiple of three slices.
  std::map<std::tuple<std::string, std::string, int, int64_t>, double> x2host, same_host;
  std::map<std::pair<int, int>, double> mib_us;  // (gpus, k) -> ours, dispatch, 1 MiB, on this host
  for (const auto& [file, gpus] : std::vector<std::pair<std::string, int>>{{"all_to_all.json", 0},
                                                                           {"all_to_all_2gpu_x4host.json", 2},
                                                                           {"all_to_all_3gpu.json", 3},
                                                                           {"all_to_all_4gpu.json", 4}}) {
    const json d = read_json(file);
    CHECK(d["bench"]["gpus"] == (gpus == 0 ? 2 : gpus));
    for (const json& r : d["records"]) {
      INFO(file << ": " << r.dump());
      CHECK(r["check_passed"] == true);
      const auto key = std::make_tuple(r["impl"].get<std::string>(), r["mode"].get<std::string>(), r["k"].get<int>(),
                                       r["size_bytes"].get<int64_t>());
      if (gpus == 0) x2host[key] = r["time_us"];
      if (gpus == 2) same_host[key] = r["time_us"];
      if (gpus != 0 && r["impl"] == "ours" && r["mode"] == "dispatch_fp8" &&
          r["size_bytes"].get<int64_t>() < (int64_t{2} << 20))
        mib_us[{gpus, r["k"].get<int>()}] = r["time_us"];
    }
  }
  // Our kernel on two GPUs of the four-GPU host, five days later: within 2.1% of the two-GPU host.
  REQUIRE(same_host.size() == x2host.size());
  for (const auto& [key, us] : same_host)
    if (std::get<0>(key) == "ours") {
      INFO(std::get<1>(key) << " k " << std::get<2>(key) << " size " << std::get<3>(key));
      CHECK(us == Approx(x2host.at(key)).epsilon(0.03));
    }
  // 1 MiB from 12 CTAs on: about 10 us to one peer, 15 to two, 16-19 to three.
  for (int k : {12, 16, 20, 24, 32, 48}) {
    INFO("k " << k);
    CHECK(mib_us.at({3, k}) > 1.4 * mib_us.at({2, k}));
    CHECK(mib_us.at({4, k}) > mib_us.at({3, k}));
  }
}

TEST_CASE("fitted on two H200s, the profile predicts four: copy-bound sizes close, the NVLink-bound ones fast",
          "[calibrate][data]") {
  const calibrate::Validation v = validate("all_to_all_4gpu.json");
  int copy_bound = 0, link_bound = 0, crossover = 0, small = 0;
  for (const calibrate::CaseCheck& c : v.cases) {
    REQUIRE(c.kind == "all_to_all");
    const A2aLabel l = parse_label(c.label);
    REQUIRE(l.gpus == 4);
    INFO(c.label << ": measured " << c.measured_us << " us, predicted " << c.predicted_us);
    if (l.size_bytes >= (int64_t{64} << 20) && l.sms <= 8) {
      CHECK(std::abs(c.error()) < 0.04);  // the per-SM copy rate carries: -2.7% to +3.2%
      ++copy_bound;
    } else if (l.size_bytes >= (int64_t{256} << 20) && l.sms >= 32) {
      // NVLink-bound: 5-8% fast, the ceiling with three peers below the one fitted with one.
      CHECK(c.error() < -0.03);
      CHECK(c.error() > -0.10);
      ++link_bound;
    } else if (l.size_bytes >= (int64_t{64} << 20) && l.sms >= 12 && l.sms <= 24) {
      // Where neither bound alone holds (the model takes the larger), 10-17% fast.
      CHECK(c.error() < -0.08);
      CHECK(c.error() > -0.20);
      ++crossover;
    } else if (l.size_bytes == (int64_t{1} << 20) && l.sms >= 12) {
      CHECK(c.error() < -0.25);  // a fixed cost growing with the peers, not modelled: 27-40% fast
      ++small;
    }
  }
  CHECK(copy_bound == 2 * 3 * 5);  // 2 modes x k 2, 4, 8 x 64 MiB..1 GiB
  CHECK(link_bound == 2 * 2 * 3);
  CHECK(crossover == 2 * 4 * 5);
  CHECK(small == 2 * 6);
}

TEST_CASE("four-rank pipeline steps on one process: kernels as modelled, the step host-bound", "[calibrate][data]") {
  // The same five schedules at micro-batch 4, issued from one thread; every case's gradients and
  // losses matched the unpipelined model's (the reader refuses a case that failed its check).
  const json d = read_json("pipeline_step_4gpu_mb4.json");
  CHECK(d["bench"]["micro_batch"] == 4);
  CHECK(d["provenance"]["gpus"] == 4);
  for (const json& c : d["cases"]) {
    INFO(c["name"].get<std::string>());
    // The GPUs never wait for the next task to be issued: under 1 ms between tasks on every rank.
    for (const json& idle : c["idle_between_tasks_ms_median"]) CHECK(idle.get<double>() < 1.0);
  }
  const calibrate::Validation v = validate("pipeline_step_4gpu_mb4.json");
  REQUIRE(v.cases.size() == 5);
  for (const calibrate::CaseCheck& c : v.cases) {
    INFO(c.label << ": measured " << c.measured_us << " us, predicted " << c.predicted_us);
    // Every step 7-20% longer than simulated: waiting inside tasks that the one issuing thread
    // causes (README.md, "On four H200s"); the model runs each rank as its own process would.
    CHECK(c.error() < -0.05);
    CHECK(c.error() > -0.25);
  }
  // Rank 0's kernels of the DualPipe step, as the profiler saw them: GEMMs and attention within 2%,
  // the memory-bound kernels within 2% once the simulated optimizer (which the bench does not run,
  // the unmatched row) is set apart.
  const calibrate::CompareReport r = calibrate::compare_scenario(
      models::load_scenario_file(test::source_dir() + "/scenarios/pipeline-dualpipe-h200x4.yaml"),
      h200_data("kineto_pipeline_4gpu_dualpipe_m08.json"));
  std::map<calibrate::KernelClass, calibrate::ClassRow> cls;
  for (const calibrate::ClassRow& c : r.classes) cls[c.cls] = c;
  CHECK(cls.at(calibrate::KernelClass::kGemm).measured_count == 396);
  CHECK(cls.at(calibrate::KernelClass::kGemm).simulated_count == 396);
  CHECK(std::abs(cls.at(calibrate::KernelClass::kGemm).error_pct()) < 2);
  CHECK(std::abs(cls.at(calibrate::KernelClass::kAttention).error_pct()) < 2);
  double measured_other = 0, simulated_other = 0;
  for (const calibrate::FormRow& f : r.other_forms)
    if (f.form != sim::MemoryForm::kAny) measured_other += f.measured_ms, simulated_other += f.simulated_ms;
  CHECK(simulated_other == Approx(measured_other).epsilon(0.04));
  // The GPU is busy for 78% of the measured step and the simulated one alike; the rest differs.
  CHECK(r.measured_busy_ms < 0.8 * r.measured_makespan_ms);
  CHECK(r.simulated_makespan_ms < 0.85 * r.measured_makespan_ms);
  // The case lines up with the scenario task by task: the same tasks on both sides.
  const calibrate::PipelineCompare p = calibrate::compare_pipeline(
      models::load_scenario_file(test::source_dir() + "/scenarios/pipeline-dualpipe-h200x4.yaml"),
      h200_data("pipeline_step_4gpu_mb4.json"));
  CHECK(p.case_name == "dualpipe_pp4_m08");
  for (const calibrate::PipelineTaskRow& t : p.tasks) CHECK(t.measured_count == t.simulated_count);
}

}  // namespace CS_TEST_FILE
