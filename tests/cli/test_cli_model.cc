#include <catch2/catch.hpp>

#include <nlohmann/json.hpp>

#include "test_support.h"

namespace CS_TEST_FILE {  // unique per file: the tests build in unity batches

using cs::test::run_clustersim;

TEST_CASE("model list prints every zoo model with its size", "[cli][model]") {
  const auto r = run_clustersim({"model", "list"});
  CHECK(r.exit_code == 0);
  for (const char* name : {"deepseek-v3", "deepseek-v2", "llama3-70b", "llama3-405b", "gpt3-175b"})
    CHECK_THAT(r.out, Catch::Contains(name));
  CHECK_THAT(r.out, Catch::Contains("671.0"));
}

TEST_CASE("model show prints parameters, FLOPs per token and op tables", "[cli][model]") {
  const auto r = run_clustersim({"model", "show", "deepseek-v3", "--ep", "64"});
  CHECK(r.exit_code == 0);
  CHECK_THAT(r.out, Catch::Contains("671.03 B total, 36.63 B activated per token"));
  CHECK_THAT(r.out, Catch::Contains("250.46 GFLOP with causal attention"));
  CHECK_THAT(r.out, Catch::Contains("4 x 8192x4096x7168 fp8"));  // EP64: 4 local experts, 8 x 4096 rows
  // The weight gradients scale both operands in 1x128 tiles (priced apart from the other GEMMs).
  CHECK_THAT(r.out, Catch::Contains("4 x 7168x4096x8192 fp8 (1x128 both)"));
  CHECK_THAT(r.out, Catch::Contains("MTP module"));
  CHECK_THAT(r.out, Catch::Contains("attn.q_up.recompute"));
}

TEST_CASE("model show --format json is versioned and has the op tables", "[cli][model]") {
  const auto r = run_clustersim({"model", "show", "llama3-70b", "--tp", "8", "--format", "json"});
  REQUIRE(r.exit_code == 0);
  const auto j = nlohmann::json::parse(r.out);
  CHECK(j["schema_version"] == 1);
  CHECK(j["parameters"]["total"].get<int64_t>() > 70'000'000'000);
  bool all_reduce = false;
  for (const auto& t : j["op_tables"])
    for (const auto& op : t["ops"])
      if (op.contains("comm") && op["comm"] == "all_reduce") all_reduce = true;
  CHECK(all_reduce);

  // FP8 GEMMs say their scaling; BF16 ones (llama3-70b --bf16) have none.
  const auto v3 = nlohmann::json::parse(run_clustersim({"model", "show", "deepseek-v3", "--format", "json"}).out);
  int tiles = 0, blocks = 0;
  for (const auto& t : v3["op_tables"])
    for (const auto& op : t["ops"])
      if (op.contains("gemm") && op["gemm"]["dtype"] == "fp8")
        (op["gemm"]["fp8_scaling"] == "1x128x1x128" ? tiles : blocks) += 1;
  CHECK(tiles > 0);
  CHECK(blocks > 2 * tiles);  // forward and input gradient against the weight gradient
  const auto bf = nlohmann::json::parse(run_clustersim({"model", "show", "llama3-70b", "--bf16", "--format", "json"}).out);
  for (const auto& t : bf["op_tables"])
    for (const auto& op : t["ops"])
      if (op.contains("gemm")) CHECK_FALSE(op["gemm"].contains("fp8_scaling"));
}

TEST_CASE("model show refuses unknown models and impossible degrees with exit 2", "[cli][model]") {
  const auto unknown = run_clustersim({"model", "show", "deepsek-v3"});
  CHECK(unknown.exit_code == 2);
  CHECK(unknown.out.empty());
  CHECK_THAT(unknown.err, Catch::Contains("did you mean 'deepseek-v3'?"));
  const auto ep = run_clustersim({"model", "show", "deepseek-v3", "--ep", "48"});
  CHECK(ep.exit_code == 2);
  CHECK_THAT(ep.err, Catch::Contains("--ep 48 must divide the 256 routed experts"));
  CHECK(run_clustersim({"model", "show", "llama3-70b", "--ep", "2"}).exit_code == 2);
  CHECK(run_clustersim({"model", "show", "llama3-70b", "--tp", "3"}).exit_code == 2);
  const auto missing = run_clustersim({"model", "show", "no/such/model.yaml"});
  CHECK(missing.exit_code == 2);
}

}  // namespace CS_TEST_FILE
