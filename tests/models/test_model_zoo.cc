// The model zoo: parameter counts against the published sizes and against counts written out by
// hand, FLOPs per token, and strict reading of users' model files.
#include <catch2/catch.hpp>

#include <cmath>
#include <string>

#include "hw/user_error.h"
#include "models/model_flops.h"
#include "models/model_params.h"
#include "models/model_zoo.h"
#include "test_support.h"

namespace CS_TEST_FILE {  // unique per file: the tests build in unity batches

using namespace cs::models;

namespace {

const ModelSpec& zoo(const std::string& name) {
  const ModelSpec* m = find_zoo_model(name);
  REQUIRE(m != nullptr);
  return *m;
}

double rel(double got, double want) { return std::abs(got / want - 1); }

ModelSpec parse(const std::string& text) { return parse_model(cs::hw::parse_yaml(text, "model.yaml")); }

std::string error_of(const std::string& text) {
  try {
    parse(text);
  } catch (const cs::hw::UserError& e) {
    return e.what();
  }
  return "";
}

const char* kTiny = R"(name: tiny
source: test
layers: 2
hidden: 64
vocab: 100
attention: {kind: gqa, heads: 4, kv_heads: 2, head_dim: 16}
ffn: {activation: swiglu, hidden: 96}
)";

}  // namespace

TEST_CASE("model zoo: every built-in model loads and is listed by name", "[zoo]") {
  const std::vector<std::string> names = zoo_model_names();
  CHECK(names == std::vector<std::string>{"deepseek-v2", "deepseek-v3", "gpt3-175b", "llama3-405b", "llama3-70b"});
}

TEST_CASE("model zoo: DeepSeek-V3 has 671B parameters and 37B activated per token", "[zoo]") {
  const ModelSpec& m = zoo("deepseek-v3");
  const ParamCounts p = param_counts(m);
  CHECK(rel(p.total(), 671e9) < 0.01);
  // Published "37B" is rounded to two figures: the count must round to it.
  CHECK(p.activated() >= 36.5e9);
  CHECK(p.activated() < 37.5e9);
  // Written out from config_671B.json: MLA 187,107,328 per layer; an expert 3*7168*2048; the
  // gate 256*7168 + 256 bias; two norms per layer; embedding and head 129280*7168.
  const int64_t mla = 7168LL * 1536 + 1536 + 1536LL * 128 * 192 + 7168LL * 576 + 512 + 512LL * 128 * 256 +
                      128LL * 128 * 7168;
  CHECK(mla == 187107328);
  const int64_t expert = 3LL * 7168 * 2048, gate = 256LL * 7168 + 256, norms = 2 * 7168;
  const int64_t dense_layer = mla + norms + 3LL * 7168 * 18432;
  const int64_t moe_layer = mla + norms + 257 * expert + gate;
  const int64_t table = 129280LL * 7168;
  CHECK(p.total() == 3 * dense_layer + 58 * moe_layer + 2 * table + 7168);
  CHECK(p.activated() == 3 * dense_layer + 58 * (mla + norms + 9 * expert + gate) + table + 7168);
  // MTP: 11.5B extra parameters (REFERENCE.md); its own: 3 norms, the 2h x h projection, one MoE layer.
  CHECK(p.mtp_total == 3 * 7168 + 2LL * 7168 * 7168 + moe_layer);
  CHECK(rel(p.mtp_total, 11.5e9) < 0.02);
}

TEST_CASE("model zoo: DeepSeek-V2 and the dense models match their published sizes within 1%", "[zoo]") {
  CHECK(rel(param_counts(zoo("deepseek-v2")).total(), 236e9) < 0.01);
  CHECK(rel(param_counts(zoo("deepseek-v2")).activated(), 21e9) < 0.01);
  CHECK(rel(param_counts(zoo("llama3-70b")).total(), 70.6e9) < 0.01);  // HF card: 70.6B
  CHECK(rel(param_counts(zoo("llama3-405b")).total(), 405e9) < 0.01);
  CHECK(rel(param_counts(zoo("gpt3-175b")).total(), 175e9) < 0.01);
  // Llama 3 70B by hand: q and o 8192^2, k and v 8192*1024, FFN 3*8192*28672, two norms.
  const int64_t layer = 2 * 8192LL * 8192 + 2 * 8192LL * 1024 + 3 * 8192LL * 28672 + 2 * 8192;
  CHECK(param_counts(zoo("llama3-70b")).total() == 80 * layer + 2 * 128256LL * 8192 + 8192);
  // GPT-3: tied embeddings, biases, LayerNorm (weight and bias), learned positions.
  const int64_t g = 12288, gl = 4 * g * g + 4 * g + 2 * g * 4 * g + 4 * g + g + 2 * 2 * g;
  CHECK(param_counts(zoo("gpt3-175b")).total() == 96 * gl + 50257 * g + 2048 * g + 2 * g);
}

TEST_CASE("model zoo: DeepSeek-V3 trains at 250 GFLOP per token at sequence 4096 with causal attention", "[zoo]") {
  const ModelSpec& m = zoo("deepseek-v3");
  const FlopsPerToken causal = model_flops_per_token(m, 4096, true);
  CHECK(rel(causal.total(), 250e9) < 0.02);
  // The linear part is 6 x the activated matmul parameters (norms and the gate bias are not matmuls).
  const ParamCounts p = param_counts(m);
  const double norm_params = 61 * (2 * 7168 + 1536 + 512) + 7168, gate_bias = 58 * 256;
  CHECK(causal.linear == Approx(6 * (p.activated() - norm_params - gate_bias)).epsilon(1e-12));
  // Attention: 61 layers x 3 passes x 2 x 128 heads x (192 + 128) x 4097/2 pairs per token.
  CHECK(causal.attention == Approx(61 * 3 * 2.0 * 128 * 320 * 4097 / 2).epsilon(1e-12));
  // Full attention doubles (s^2 instead of s(s+1)/2) the attention part: ISCA'25's 432 vs 385 TFLOPS.
  const FlopsPerToken full = model_flops_per_token(m, 4096, false);
  CHECK(full.attention == Approx(causal.attention * 2 * 4096 / 4097).epsilon(1e-12));
  CHECK(rel(full.total() / causal.total(), 432.0 / 385.0) < 0.01);
}

TEST_CASE("model zoo: a user's model file is read strictly, with positions", "[zoo]") {
  const ModelSpec t = parse(kTiny);
  CHECK(t.layers == 2);
  CHECK(param_counts(t).total() == 2 * (64 * 64 + 2 * 64 * 32 + 64 * 64 + 3 * 64 * 96 + 2 * 64) + 2 * 100 * 64 + 64);
  CHECK(error_of(std::string(kTiny) + "hiden: 3\n") == "model.yaml:8:1: unknown key 'hiden' in the top level; did you mean 'hidden'?");
  std::string bad = kTiny;
  bad.replace(bad.find("kv_heads: 2"), 11, "kv_heads: 3");
  CHECK(error_of(bad).find("model.yaml:6:") == 0);
  CHECK(error_of(bad).find("multiple of kv_heads") != std::string::npos);
  const std::string moe = std::string(kTiny) +
                          "moe: {routed_experts: 8, expert_hidden: 16, top_k: 5, groups: 4, groups_per_token: 2, "
                          "gating: softmax}\n";
  CHECK(error_of(moe).find("top_k (5) exceeds the 4 experts a token can reach") != std::string::npos);
  CHECK(error_of(std::string(kTiny) + "moe: {routed_experts: 8, expert_hidden: 16, top_k: 2, first_dense_layers: 2, "
                                      "gating: softmax}\n")
            .find("at least one MoE layer") != std::string::npos);
}

TEST_CASE("model zoo: an unknown name suggests the nearest model", "[zoo]") {
  try {
    load_model("deepsek-v3");
    FAIL("no error");
  } catch (const cs::hw::UserError& e) {
    CHECK(std::string(e.what()).find("did you mean 'deepseek-v3'") != std::string::npos);
  }
  cs::test::TempDir dir;
  cs::test::write_file(dir.file("tiny.yaml"), kTiny);
  CHECK(load_model(dir.file("tiny.yaml")).name == "tiny");
}

}  // namespace CS_TEST_FILE
