#include "models/model_zoo.h"

#include <algorithm>
#include <stdexcept>

#include "models/embedded_zoo.h"

namespace cs::models {

namespace {

using hw::YamlMap;
using hw::YamlNode;

constexpr int64_t kMaxDim = int64_t{1} << 24;  // 16M: far beyond any published model dimension

int dim(const YamlMap& m, const char* key, int64_t min = 1) {
  return static_cast<int>(m.required(key).as_int(min, kMaxDim));
}
int opt_dim(const YamlMap& m, const char* key, int fallback, int64_t min = 0) {
  const auto n = m.optional(key);
  return n ? static_cast<int>(n->as_int(min, kMaxDim)) : fallback;
}

AttentionSpec parse_attention(const YamlNode& node) {
  const YamlMap kind_only(node, {"kind", "heads", "kv_heads", "head_dim", "q_lora_rank", "kv_lora_rank",
                                 "qk_nope_head_dim", "qk_rope_head_dim", "v_head_dim"});
  AttentionSpec a;
  const std::string kind = kind_only.required("kind").as_enum({"mla", "gqa", "mha"});
  if (kind == "mla") {
    const YamlMap m(node, {"kind", "heads", "q_lora_rank", "kv_lora_rank", "qk_nope_head_dim",
                           "qk_rope_head_dim", "v_head_dim"});
    a.kind = AttentionKind::kMla;
    a.heads = dim(m, "heads");
    a.q_lora_rank = opt_dim(m, "q_lora_rank", 0);
    a.kv_lora_rank = dim(m, "kv_lora_rank");
    a.qk_nope_head_dim = dim(m, "qk_nope_head_dim");
    a.qk_rope_head_dim = dim(m, "qk_rope_head_dim");
    a.v_head_dim = dim(m, "v_head_dim");
    return a;
  }
  const YamlMap m(node, kind == "gqa" ? std::vector<std::string>{"kind", "heads", "kv_heads", "head_dim"}
                                      : std::vector<std::string>{"kind", "heads", "head_dim"});
  a.kind = AttentionKind::kGqa;
  a.heads = dim(m, "heads");
  a.head_dim = dim(m, "head_dim");
  a.kv_heads = kind == "mha" ? a.heads : dim(m, "kv_heads");
  if (a.heads % a.kv_heads != 0)
    m.required("kv_heads").fail("heads (" + std::to_string(a.heads) + ") must be a multiple of kv_heads (" +
                                std::to_string(a.kv_heads) + ")");
  return a;
}

MoeSpec parse_moe(const YamlNode& node, int layers) {
  const YamlMap m(node, {"first_dense_layers", "routed_experts", "shared_experts", "expert_hidden", "top_k",
                         "groups", "groups_per_token", "gating"});
  MoeSpec e;
  e.first_dense_layers = opt_dim(m, "first_dense_layers", 0);
  if (e.first_dense_layers >= layers)
    m.required("first_dense_layers")
        .fail("first_dense_layers must leave at least one MoE layer (the model has " + std::to_string(layers) +
              " layers)");
  e.routed_experts = dim(m, "routed_experts");
  e.shared_experts = opt_dim(m, "shared_experts", 0);
  e.expert_hidden = dim(m, "expert_hidden");
  e.top_k = dim(m, "top_k");
  e.groups = opt_dim(m, "groups", 1, 1);
  e.groups_per_token = opt_dim(m, "groups_per_token", e.groups, 1);
  e.gating = m.required("gating").as_enum({"softmax", "sigmoid"}) == "sigmoid" ? Gating::kSigmoid : Gating::kSoftmax;
  if (e.routed_experts % e.groups != 0)
    m.required("groups").fail("routed_experts (" + std::to_string(e.routed_experts) +
                              ") must divide into groups (" + std::to_string(e.groups) + ") evenly");
  if (e.groups_per_token > e.groups)
    m.required("groups_per_token").fail("groups_per_token cannot exceed groups (" + std::to_string(e.groups) + ")");
  const int reachable = e.routed_experts / e.groups * e.groups_per_token;
  if (e.top_k > reachable)
    m.required("top_k").fail("top_k (" + std::to_string(e.top_k) + ") exceeds the " + std::to_string(reachable) +
                             " experts a token can reach in groups_per_token groups");
  return e;
}

}  // namespace

ModelSpec parse_model(const YamlNode& node) {
  const YamlMap m(node, {"name", "description", "source", "layers", "hidden", "vocab", "norm", "tied_embeddings",
                         "linear_bias", "learned_positions", "attention", "ffn", "moe", "mtp_depth"});
  ModelSpec s;
  s.name = m.required("name").as_string();
  if (s.name.empty()) m.required("name").fail("a model's name cannot be empty");
  if (const auto d = m.optional("description")) s.description = d->as_string();
  s.source = m.required("source").as_string();
  if (s.source.empty()) m.required("source").fail("say where the model's configuration comes from");
  s.layers = static_cast<int>(m.required("layers").as_int(1, 4096));
  s.hidden = dim(m, "hidden");
  s.vocab = dim(m, "vocab");
  if (const auto n = m.optional("norm"))
    s.norm = n->as_enum({"rmsnorm", "layernorm"}) == "layernorm" ? NormKind::kLayerNorm : NormKind::kRmsNorm;
  if (const auto n = m.optional("tied_embeddings")) s.tied_embeddings = n->as_bool();
  if (const auto n = m.optional("linear_bias")) s.linear_bias = n->as_bool();
  s.learned_positions = opt_dim(m, "learned_positions", 0);
  s.attention = parse_attention(m.required("attention"));
  {
    const YamlMap f(m.required("ffn"), {"activation", "hidden"});
    s.ffn.activation = f.required("activation").as_enum({"swiglu", "gelu"}) == "gelu" ? FfnActivation::kGelu
                                                                                      : FfnActivation::kSwiglu;
    s.ffn.hidden = dim(f, "hidden");
  }
  if (const auto n = m.optional("moe")) s.moe = parse_moe(*n, s.layers);
  if (const auto n = m.optional("mtp_depth")) s.mtp_depth = static_cast<int>(n->as_int(0, 16));
  return s;
}

const std::vector<ModelSpec>& zoo_models() {
  static const std::vector<ModelSpec> zoo = [] {
    std::vector<ModelSpec> out;
    try {
      for (const hw::EmbeddedFile& f : embedded_zoo_files())
        out.push_back(parse_model(hw::parse_yaml(f.text, std::string(f.path))));
    } catch (const hw::UserError& e) {
      throw std::logic_error(std::string("built-in model zoo is malformed: ") + e.what());
    }
    std::sort(out.begin(), out.end(), [](const ModelSpec& a, const ModelSpec& b) { return a.name < b.name; });
    return out;
  }();
  return zoo;
}

const ModelSpec* find_zoo_model(const std::string& name) {
  for (const ModelSpec& m : zoo_models())
    if (m.name == name) return &m;
  return nullptr;
}

std::vector<std::string> zoo_model_names() {
  std::vector<std::string> out;
  for (const ModelSpec& m : zoo_models()) out.push_back(m.name);
  return out;
}

ModelSpec load_model(const std::string& name_or_path) {
  const auto ends_with = [&](const char* suffix) {
    const std::string s(suffix);
    return name_or_path.size() >= s.size() && name_or_path.compare(name_or_path.size() - s.size(), s.size(), s) == 0;
  };
  if (name_or_path.find('/') != std::string::npos || ends_with(".yaml") || ends_with(".yml"))
    return parse_model(hw::load_yaml_file(name_or_path));
  if (const ModelSpec* m = find_zoo_model(name_or_path)) return *m;
  std::string msg = "unknown model '" + name_or_path + "'";
  const std::string near = hw::nearest(name_or_path, zoo_model_names());
  if (!near.empty()) msg += " (did you mean '" + near + "'?)";
  msg += "; built-in models:";
  for (const std::string& n : zoo_model_names()) msg += " " + n;
  msg += "; or give a path to a model file";
  throw hw::UserError(name_or_path, 0, 0, msg);
}

}  // namespace cs::models
