// `clustersim sweep` end to end: the table, the JSON, the output file and the errors.
#include <catch2/catch.hpp>

#include <algorithm>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>

#include "test_support.h"

using cs::test::run_clustersim;
using cs::test::RunOutput;
using cs::test::TempDir;
using nlohmann::json;

namespace {
std::string scenario() { return cs::test::source_dir() + "/scenarios/gemm-a2a-overlap-h800.yaml"; }
bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }
}  // namespace

TEST_CASE("sweep prints one row per size and marks the best", "[cli][sweep]") {
  const RunOutput r = run_clustersim({"sweep", scenario(), "--comm-sms", "0,8,20,48", "-j", "2"});
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  CHECK(contains(r.out, "sweep      SMs of 'comm' (taken from 'compute', 132 SMs between them)"));
  CHECK(contains(r.out, " 0 shared          132"));
  CHECK(contains(r.out, "       20          112         11.907     0.0%  <- best"));
  CHECK(contains(r.err, "over 4 communication partition sizes (2 at once)"));
}

TEST_CASE("sweep --format json gives every point and the best, the same with any -j", "[cli][sweep][json]") {
  TempDir dir;
  const std::string out = dir.file("sweep.json");
  const RunOutput r = run_clustersim({"sweep", scenario(), "--comm-sms", "8:48:8", "--format", "json", "--out", out, "-j", "3"});
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  CHECK(r.out.empty());
  const json j = json::parse(cs::test::read_file(out));
  CHECK(j["schema_version"] == 1);
  CHECK(j["kind"] == "sm_partition_sweep");
  REQUIRE(j["points"].size() == 6);
  CHECK(j["points"][0]["comm_sms"] == 8);
  CHECK(j["points"][0]["compute_sms"] == 124);
  CHECK(j["best"]["comm_sms"] == 24);
  double best = 1e300;
  for (const json& p : j["points"]) best = std::min(best, p["makespan_ms"].get<double>());
  CHECK(j["best"]["makespan_ms"].get<double>() == best);
  const RunOutput serial = run_clustersim({"sweep", scenario(), "--comm-sms", "8:48:8", "--format", "json", "-j", "1"});
  REQUIRE(serial.exit_code == 0);
  CHECK(json::parse(serial.out) == j);
}

TEST_CASE("sweep refuses sizes it cannot use with exit 2 and writes nothing", "[cli][sweep][exit]") {
  TempDir dir;
  const std::string out = dir.file("sweep.json");
  RunOutput r = run_clustersim({"sweep", scenario(), "--comm-sms", "0:200:50", "--out", out});
  CHECK(r.exit_code == 2);
  CHECK(contains(r.err, "cannot give partition 'comm' 150 SMs"));
  CHECK_FALSE(std::filesystem::exists(out));
  r = run_clustersim({"sweep", scenario(), "--comm-sms", "4-8"});
  CHECK(r.exit_code == 2);
  CHECK(contains(r.err, "--comm-sms: '4-8' is not a list of whole numbers >= 0"));
}

TEST_CASE("sweep --report writes the scenario's own split with the sweep's chart", "[cli][sweep][report]") {
  TempDir dir;
  const std::string page = dir.file("sweep.html");
  const RunOutput r = run_clustersim({"sweep", scenario(), "--comm-sms", "8,20,32", "--report", page});
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  CHECK(contains(r.out, "<- best"));
  const std::string html = cs::test::read_file(page);
  CHECK(contains(html, "id=\"sweep\""));
  CHECK(contains(html, "Step time against the SMs of &#39;comm&#39;"));
  CHECK(contains(html, "11.907 ms"));  // the page's run is the scenario's own 20-SM split
  const RunOutput same = run_clustersim({"sweep", scenario(), "--comm-sms", "8,20,32", "--report", page, "--out", page});
  CHECK(same.exit_code == 2);
  CHECK(contains(same.err, "--report names the same file as --out"));
}
