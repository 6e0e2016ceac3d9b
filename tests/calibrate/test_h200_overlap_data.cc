// The GEMM / all-to-all overlap measurements committed under calibrate/data/h200/ (kernels/overlap.cu:
// FP8 GEMMs on a green context of 132 - k SMs beside our all-to-all kernel on the other k SMs). The
// 2 x H200 machine was not lent when they were taken: this run is one H200, where the all-to-all
// is its local chunk alone (an HBM copy, no NVLink); bench.a2a_scope says so. CI checks the data.
#include <catch2/catch.hpp>

#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <utility>

#include "test_support.h"

namespace CS_TEST_FILE {  // unique per file: the tests build in unity batches

using nlohmann::json;

namespace {
json data() {
  return json::parse(cs::test::read_file(cs::test::source_dir() + "/calibrate/data/h200/overlap.json"));
}
const std::set<int> kSweep = {0, 4, 8, 12, 16, 20, 24, 32, 48};
}  // namespace

TEST_CASE("the H200 overlap data says where it came from", "[data]") {
  const json d = data();
  CHECK(d["schema_version"] == 1);
  CHECK(d["provenance"]["program"] == "cs_overlap");
  CHECK(!d["provenance"]["git_commit"].get<std::string>().empty());
  CHECK(!d["provenance"]["date_utc"].get<std::string>().empty());
  REQUIRE(!d["provenance"]["gpus"].empty());
  CHECK(d["provenance"]["gpus"][0]["name"] == "NVIDIA H200");
  CHECK(d["provenance"]["gpus"][0]["sm_count"] == 132);
  CHECK(d["bench"]["gpus"] == d["provenance"]["gpus"].size());
  CHECK(d["bench"]["sm_count"] == 132);
  CHECK(d["bench"]["a2a_scope"] == (d["bench"]["gpus"] == 1 ? "local_copy_only" : "nvlink_all_to_all"));
  CHECK(d["bench"]["a2a_bytes_per_gpu"] == int64_t{256} << 20);
  CHECK(!d["bench"]["cublaslt_version"].get<std::string>().empty());
}

TEST_CASE("every overlap case was checked and the sweep covers k and both shapes", "[data]") {
  const json d = data();
  const int granularity = d["bench"]["green_ctx_granularity"].get<int>();
  std::set<std::pair<std::string, int>> seen;
  std::map<std::string, std::set<int>> ks;
  for (const json& c : d["cases"]) {
    INFO(c.dump());
    const int k = c["k"].get<int>();
    CHECK(seen.insert({c["shape"].get<std::string>(), k}).second);
    ks[c["shape"].get<std::string>()].insert(k);
    CHECK(c["gemm_checked"] == true);
    CHECK(c["per_gpu"].size() == d["bench"]["gpus"].get<std::size_t>());
    for (const json& g : c["per_gpu"]) {
      CHECK(g["check_rel_l2"].get<double>() <= 1e-2);
      CHECK(g["check_worst_ratio"].get<double>() <= 1.0);
    }
    // The two partitions come from one split: disjoint, the all-to-all's rounded up to whole granules.
    CHECK(c["comm_sms"].get<int>() + c["compute_sms"].get<int>() == 132);
    if (k == 0) {
      CHECK(c["comm_sms"] == 0);
      CHECK(c["sm_count_target"] == 0);
      continue;
    }
    CHECK(c["gemm_checked_after_overlap"] == true);
    CHECK(c["a2a_checked"] == true);
    CHECK(c["a2a_checked_after_overlap"] == true);
    CHECK(c["comm_sms"].get<int>() >= k);
    CHECK(c["comm_sms"].get<int>() < k + granularity);
    CHECK(c["comm_sms"].get<int>() % granularity == 0);
    CHECK(c["sm_count_target"] == c["compute_sms"]);
    for (const json& g : c["per_gpu"]) {
      CHECK(g["gemm_ops_inside"].get<int>() > 0);
      CHECK(g["a2a_ops_inside"].get<int>() > 0);
    }
  }
  CHECK(ks.size() == 2u);
  for (const auto& [shape, got] : ks) {
    INFO(shape);
    CHECK(got == kSweep);
  }
}

TEST_CASE("the overlap numbers are physically sensible", "[data]") {
  const json d = data();
  const double peak_tflops = 1979;  // dense FP8 on H100/H200 SXM
  // HBM3e: 4.8 TB/s; a local copy reads and writes each byte, so at most half of that each way.
  const double copy_ceiling_gbps = 2400;
  std::map<std::string, std::map<int, json>> by;
  for (const json& c : d["cases"]) by[c["shape"].get<std::string>()][c["k"].get<int>()] = c;
  for (const auto& [shape, cases] : by) {
    for (const auto& [k, c] : cases) {
      INFO(shape << " k=" << k);
      const double flops = 2.0 * c["groups"].get<double>() * c["m"].get<double>() * c["n"].get<double>() *
                           c["k_dim"].get<double>();
      CHECK(c["gemm_alone_tflops"].get<double>() == Approx(flops / (c["gemm_alone_us"].get<double>() * 1e6)));
      CHECK(c["gemm_alone_tflops"].get<double>() < peak_tflops);
      if (k == 0) continue;
      CHECK(c["gemm_together_tflops"].get<double>() < peak_tflops);
      CHECK(c["a2a_alone_busbw_gbps"].get<double>() < copy_ceiling_gbps);
      // Sharing HBM and L2 never speeds the copy up; the GEMM is within clock noise of alone or slower
      // (SW power cap: the SM clock moved between 1515 and 1965 MHz within the run, hence 0.9).
      CHECK(c["a2a_slowdown"].get<double>() >= 1.0);
      CHECK(c["a2a_slowdown"].get<double>() < 1.6);
      CHECK(c["gemm_slowdown"].get<double>() > 0.9);
      CHECK(c["gemm_slowdown"].get<double>() < 1.6);
      // Overlapping beats running one after the other, and cannot beat the longer stream alone by
      // more than the clock noise.
      CHECK(c["makespan_us"].get<double>() < 0.8 * c["serial_us"].get<double>());
      CHECK(c["makespan_us"].get<double>() > 0.9 * c["ideal_overlap_us"].get<double>());
      CHECK(c["serial_us"].get<double>() == Approx(c["gemm_count"].get<double>() * c["gemm_alone_us"].get<double>() +
                                                   c["a2a_count"].get<double>() * c["a2a_alone_us"].get<double>()));
    }
    // More SMs for the copy: it gets faster and the GEMM, left fewer, slower.
    CHECK(cases.at(48)["a2a_alone_us"].get<double>() < 0.2 * cases.at(4)["a2a_alone_us"].get<double>());
    CHECK(cases.at(8)["a2a_alone_us"].get<double>() < cases.at(4)["a2a_alone_us"].get<double>());
    CHECK(cases.at(48)["gemm_alone_us"].get<double>() > 1.3 * cases.at(0)["gemm_alone_us"].get<double>());
    CHECK(cases.at(48)["gemm_alone_us"].get<double>() > cases.at(16)["gemm_alone_us"].get<double>());
    // With 84 SMs left, the GEMM is the one hurt by the copy's HBM traffic most.
    CHECK(cases.at(48)["gemm_slowdown"].get<double>() > 1.2);
  }
}

}  // namespace CS_TEST_FILE
