#include <catch2/catch.hpp>

#include <filesystem>

#include "test_support.h"

namespace CS_TEST_FILE {  // unique per file: the tests build in unity batches

using cs::test::run_clustersim;
using cs::test::TempDir;

namespace {
std::string data(const char* f) { return cs::test::source_dir() + "/calibrate/data/h200/" + f; }
}  // namespace

TEST_CASE("calibrate fit writes a profile that validate reads, and both report held-out errors", "[cli][calibrate]") {
  TempDir tmp;
  const std::string out = tmp.file("h200.yaml");
  const auto fit = run_clustersim({"calibrate", "fit", data("fp8_gemm.json"), data("all_to_all.json"), "-o", out});
  REQUIRE(fit.exit_code == 0);
  CHECK_THAT(fit.out, Catch::Contains("FP8 GEMM, held out"));
  CHECK_THAT(fit.out, Catch::Contains("R^2(log)"));
  const auto val = run_clustersim({"calibrate", "validate", out, data("all_to_all.json")});
  REQUIRE(val.exit_code == 0);
  CHECK_THAT(val.out, Catch::Contains("held out"));
  CHECK_THAT(val.out, Catch::Contains("predicted_us"));
  // The same input gives the same profile.
  const std::string again = tmp.file("again.yaml");
  REQUIRE(run_clustersim({"calibrate", "fit", data("fp8_gemm.json"), data("all_to_all.json"), "-o", again}).exit_code == 0);
  CHECK(cs::test::read_file(again).size() == cs::test::read_file(out).size());
}

TEST_CASE("calibrate fit refuses input that is no kernel result, writing nothing", "[cli][calibrate]") {
  TempDir tmp;
  const std::string bad = tmp.file("bad.json"), out = tmp.file("p.yaml");
  cs::test::write_file(bad, "{\"schema_version\": 1,\n \"provenance\": {\"program\": \"cs_other\", \"gpus\": []}}");
  const auto r = run_clustersim({"calibrate", "fit", bad, "-o", out});
  CHECK(r.exit_code == 2);
  CHECK_THAT(r.err, Catch::Contains("is not one calibrate reads"));
  CHECK(!std::filesystem::exists(out));
  cs::test::write_file(bad, "{\"schema_version\": 1,\n  oops}");
  const auto j = run_clustersim({"calibrate", "fit", bad, "-o", out});
  CHECK(j.exit_code == 2);
  CHECK_THAT(j.err, Catch::Contains(bad + ":2:"));
  CHECK(!std::filesystem::exists(out));
  // GEMM data alone cannot give the communication model.
  CHECK(run_clustersim({"calibrate", "fit", data("fp8_gemm.json"), "-o", out}).exit_code == 2);
  CHECK(!std::filesystem::exists(out));
}

TEST_CASE("calibrate validate refuses another GPU's measurements, carry an unknown GPU", "[cli][calibrate]") {
  const auto v = run_clustersim({"calibrate", "validate", "h800", data("all_to_all.json")});
  CHECK(v.exit_code == 2);
  CHECK_THAT(v.err, Catch::Contains("against its own GPU's measurements"));
  TempDir tmp;
  const auto c = run_clustersim({"calibrate", "carry", "h200", "--to", "nope", "-o", tmp.file("x.yaml")});
  CHECK(c.exit_code == 2);
}

TEST_CASE("calibrate published prints each table's rows and summary, for H800 profiles only", "[cli][calibrate]") {
  const auto r = run_clustersim({"calibrate", "published", "h800"});
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  CHECK_THAT(r.out, Catch::Contains("DeepGEMM dense     m 4096 n 4096 k 7168"));
  CHECK_THAT(r.out, Catch::Contains("DeepEP intranode   EP8 dispatch (FP8)"));
  CHECK_THAT(r.out, Catch::Contains("  DeepGEMM dense                 18 cases  median"));
  const auto h200 = run_clustersim({"calibrate", "published", "h200"});
  CHECK(h200.exit_code == 2);
  CHECK_THAT(h200.err, Catch::Contains("the published tables (DeepGEMM, DeepEP) are of the H800"));
}

}  // namespace CS_TEST_FILE
