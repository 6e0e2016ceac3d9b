// The FP8 GEMM measurements committed under calibrate/data/h200/ (kernels/fp8_gemm.cu on one H200,
// cuBLASLt with DeepSeek's block scaling): CI has no GPU, so it checks the data the GPU produced.
#include <catch2/catch.hpp>

#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <tuple>

#include "test_support.h"

namespace CS_TEST_FILE {  // unique per file: the tests build in unity batches

using nlohmann::json;

namespace {

json load(const std::string& name) {
  return json::parse(cs::test::read_file(cs::test::source_dir() + "/calibrate/data/h200/" + name));
}

using Key = std::tuple<std::string, int64_t, int64_t, int64_t, int64_t, int64_t, std::string>;
Key key_of(const json& c) {
  return {c["name"], c["m"], c["n"], c["k"], c["groups"], c["sm_limit"], c["method"]};
}

}  // namespace

TEST_CASE("the H200 FP8 GEMM data says where it came from", "[data]") {
  const json d = load("fp8_gemm.json");
  CHECK(d["schema_version"] == 1);
  const json& p = d["provenance"];
  CHECK(!p["git_commit"].get<std::string>().empty());
  CHECK(!p["date_utc"].get<std::string>().empty());
  REQUIRE(p["gpus"].size() >= 1);
  CHECK(p["gpus"][0]["name"] == "NVIDIA H200");
  CHECK(p["gpus"][0]["sm_count"] == 132);
  CHECK(p["gpus"][0]["compute_capability"] == "9.0");
}

TEST_CASE("every H200 FP8 GEMM case was checked and its figures are consistent", "[data]") {
  const json d = load("fp8_gemm.json");
  CHECK(d["skipped"].empty());
  std::set<Key> keys;
  std::map<std::string, int> per_method;
  for (const json& c : d["cases"]) {
    INFO(c.dump());
    CHECK(keys.insert(key_of(c)).second);  // each case once
    ++per_method[c["method"]];
    CHECK(c["checked"] == true);
    CHECK(c["check"]["rel_l2_error"].get<double>() <= 0.01);
    CHECK(c["check"]["worst_error_over_tolerance"].get<double>() <= 1.0);
    CHECK(c["runs"].get<int>() >= 20);
    CHECK(c["scaling"] == "block_1x128_128x128");
    const double med = c["median_us"], p10 = c["p10_us"], p90 = c["p90_us"];
    CHECK(c["min_us"].get<double>() <= p10);
    CHECK(p10 <= med);
    CHECK(med <= p90);
    CHECK(p90 <= c["max_us"].get<double>());
    const double flops = 2.0 * c["m"].get<double>() * c["n"].get<double>() * c["k"].get<double>() * c["groups"].get<double>();
    CHECK(c["tflops"].get<double>() == Approx(flops / (med * 1e-6) * 1e-12).epsilon(1e-9));
    // Never above the dense FP8 peak of the SMs it had (1979 TFLOPS for 132).
    CHECK(c["tflops"].get<double>() <= 1979.0 * c["sm_obtained"].get<double>() / 132);
    CHECK(c["gbps"].get<double>() <= 4800.0);
    if (c["method"] == "green") CHECK(c["sm_obtained"] == c["sm_limit"]);
  }
  CHECK(d["cases"].size() == 644u);
  CHECK(per_method["green"] == 28 * 8);
  CHECK(per_method["sm_target"] == 28 * 8);
  CHECK(per_method["green_sm_target"] == 28 * 7);
}

TEST_CASE("large H200 FP8 GEMMs slow down on fewer SMs (green contexts)", "[data]") {
  const json d = load("fp8_gemm.json");
  std::map<std::tuple<std::string, int64_t, int64_t, int64_t, int64_t>, std::map<int, double>> med;
  for (const json& c : d["cases"])
    if (c["method"] == "green" && c["m"].get<int64_t>() >= 4096)
      med[{c["name"], c["m"], c["n"], c["k"], c["groups"]}][c["sm_limit"]] = c["median_us"];
  REQUIRE(!med.empty());
  for (const auto& [shape, by_sms] : med) {
    REQUIRE(by_sms.count(16));
    REQUIRE(by_sms.count(132));
    CHECK(by_sms.at(16) > 4.0 * by_sms.at(132));
  }
}

TEST_CASE("the per-tensor sweep and the repeat run agree with the main sweep's shape", "[data]") {
  const json pt = load("fp8_gemm_per_tensor.json");
  CHECK(pt["cases"].size() == 448u);
  for (const json& c : pt["cases"]) CHECK(c["scaling"] == "per_tensor");
  const json main = load("fp8_gemm.json");
  const json rep = load("fp8_gemm_repeat.json");
  std::map<Key, double> first;
  for (const json& c : main["cases"]) first[key_of(c)] = c["median_us"];
  REQUIRE(rep["cases"].size() == main["cases"].size());
  for (const json& c : rep["cases"]) {
    const auto it = first.find(key_of(c));
    REQUIRE(it != first.end());
    const double ratio = c["median_us"].get<double>() / it->second;
    CHECK(ratio >= 0.8);
    CHECK(ratio <= 1.25);
  }
}

}  // namespace CS_TEST_FILE
