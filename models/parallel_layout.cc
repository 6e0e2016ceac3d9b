#include "models/parallel_layout.h"

#include <algorithm>
#include <stdexcept>
#include <utility>

#include "models/layer_ops.h"

namespace cs::models {

namespace {

std::string range(int first, int count) {
  return count == 1 ? std::to_string(first) : std::to_string(first) + "-" + std::to_string(first + count - 1);
}

}  // namespace

std::string layout_problem(const ParallelLayout& l, const ModelSpec& m, int cluster_gpus, int gpus_per_node,
                           int model_stages) {
  const auto s = [](int v) { return std::to_string(v); };
  if (l.tp < 1 || l.dp < 1 || l.pp < 1 || l.ep < 1 || l.cp < 1) return "tp, cp, dp, pp and ep must be at least 1";
  if (l.zero_stage != 0 && l.zero_stage != 1) return "zero_stage must be 0 or 1 (ZeRO-1 shards optimizer states)";
  // Each degree at most the GPUs before they are multiplied: four of up to 2^20 overflow 64 bits.
  for (const auto& [name, v] : {std::pair{"tp", l.tp}, std::pair{"cp", l.cp}, std::pair{"dp", l.dp}, std::pair{"pp", l.pp}})
    if (v > cluster_gpus) return std::string(name) + " (" + s(v) + ") exceeds the cluster's " + s(cluster_gpus) + " GPUs";
  const long long gpus = static_cast<long long>(l.tp) * l.cp * l.dp * l.pp;
  if (gpus != cluster_gpus)
    return (l.cp > 1 ? "tp x cp x dp x pp = " + s(l.tp) + " x " + s(l.cp) + " x " : "tp x dp x pp = " + s(l.tp) + " x ") +
           s(l.dp) + " x " + s(l.pp) + " = " + std::to_string(gpus) + " GPUs, but the cluster has " + s(cluster_gpus);
  if (l.tp > gpus_per_node || gpus_per_node % l.tp != 0)
    return "tp (" + s(l.tp) + ") must divide the " + s(gpus_per_node) +
           " GPUs of a node: tensor-parallel traffic is modelled on NVLink only";
  if (m.attention.heads % l.tp != 0) return "tp (" + s(l.tp) + ") must divide the " + s(m.attention.heads) + " heads";
  if (m.attention.kind == AttentionKind::kGqa && m.attention.kv_heads % l.tp != 0 && l.tp % m.attention.kv_heads != 0)
    return "tp (" + s(l.tp) + ") and the " + s(m.attention.kv_heads) + " KV heads must divide one another";
  if (m.ffn.hidden % l.tp != 0) return "tp (" + s(l.tp) + ") must divide the FFN width " + std::to_string(m.ffn.hidden);
  if (const int group = l.cp * l.tp; l.cp > 1 && group % gpus_per_node != 0 && gpus_per_node % group != 0)
    return "a CP group of " + s(l.cp) + " ranks (" + s(group) + " GPUs with tp " + s(l.tp) + ") must fill whole nodes of " +
           s(gpus_per_node) + " GPUs or divide one: its ring is modelled on whole nodes";
  if (l.replicas() % l.ep != 0)
    return "ep (" + s(l.ep) + ") must divide " + (l.cp > 1 ? "cp x dp (" + s(l.replicas()) + ")" : "dp (" + s(l.dp) + ")") +
           ": expert parallelism is carved out of data parallelism";
  if (m.moe) {
    if (l.tp > 1) return "tp > 1 with MoE layers is not modelled; use ep for the experts and tp = 1 (as DeepSeek does)";
    if (m.moe->routed_experts % l.ep != 0)
      return "ep (" + s(l.ep) + ") must divide the " + s(m.moe->routed_experts) + " routed experts";
    const int nodes_per_group = std::max(1, l.ep * l.tp / gpus_per_node);
    if (l.ep * l.tp > gpus_per_node && (l.ep * l.tp) % gpus_per_node != 0)
      return "an EP group of " + s(l.ep) + " ranks must fill whole nodes of " + s(gpus_per_node) + " GPUs";
    if (m.moe->groups_per_token < m.moe->groups && nodes_per_group > 1 && m.moe->groups % nodes_per_group != 0)
      return "node-limited routing needs the " + s(m.moe->groups) + " expert groups to map onto the " +
             s(nodes_per_group) + " nodes of an EP group";
  } else if (l.ep != 1) {
    return "ep must be 1 for a dense model";
  }
  const int stages = model_stages > 0 ? model_stages : l.pp;
  const std::string stages_are = stages == l.pp ? "pp is " + s(l.pp)
                                                : "the pipeline has " + s(stages) + " model stages on its " + s(l.pp) + " ranks";
  if (!l.layers_per_stage.empty()) {
    if (static_cast<int>(l.layers_per_stage.size()) != stages)
      return "layers_per_stage lists " + s(static_cast<int>(l.layers_per_stage.size())) + " stages, but " + stages_are;
    int sum = 0;
    for (int n : l.layers_per_stage) {
      if (n < 0) return "layers_per_stage cannot hold a negative count";
      sum += n;
    }
    if (sum != m.layers) return "layers_per_stage adds up to " + s(sum) + " layers, but the model has " + s(m.layers);
  } else if (stages == l.pp && l.pp > m.layers) {
    return "pp (" + s(l.pp) + ") exceeds the model's " + s(m.layers) + " layers";
  } else if (stages > m.layers) {
    return stages_are + ", more than the model's " + s(m.layers) + " layers: every model stage needs at least one";
  }
  return "";
}

RankCoords rank_coords(const ParallelLayout& l, int gpu, int gpus_per_node) {
  RankCoords c;
  c.tp = gpu % l.tp;
  c.dp = (gpu / l.tp) % l.replicas();
  c.cp = c.dp % l.cp;
  c.pp = gpu / (l.tp * l.replicas());
  c.ep = c.dp % l.ep;
  c.edp = c.dp / l.ep;
  c.node = gpu / gpus_per_node;
  c.local = gpu % gpus_per_node;
  return c;
}

int gpu_of(const ParallelLayout& l, int tp, int dp, int pp) { return (pp * l.replicas() + dp) * l.tp + tp; }

LayerCosts forward_layer_costs(const ModelSpec& m, int64_t seq_len) {
  // Forward model FLOPs of one sequence: per layer (dense and MoE layers each cost the same as
  // their kind), and the head plus MTP modules.
  LayerContext c;
  c.tokens = c.seq_len = seq_len;
  const auto forward = [](const std::vector<LayerOp>& ops) {
    double f = 0;
    for (const LayerOp& o : ops)
      if (o.pass == Pass::kForward) f += o.model_flops;
    return f;
  };
  const double dense = forward(layer_ops(m, 0, c));
  const double moe = m.moe ? forward(layer_ops(m, m.layers - 1, c)) : dense;
  LayerCosts out;
  out.tail = forward(head_ops(m, c));
  for (int d = 0; d < m.mtp_depth; ++d) out.tail += forward(mtp_ops(m, c));
  out.layer.resize(m.layers);
  for (int i = 0; i < m.layers; ++i) out.layer[i] = m.is_moe_layer(i) ? moe : dense;
  return out;
}

std::vector<double> stage_loads(const std::vector<int>& split, const LayerCosts& costs) {
  std::vector<double> load(split.size(), 0.0);
  int layer = 0;
  for (size_t s = 0; s < split.size(); ++s)
    for (int i = 0; i < split[s] && layer < static_cast<int>(costs.layer.size()); ++i) load[s] += costs.layer[layer++];
  if (!load.empty()) load.back() += costs.tail;
  return load;
}

std::vector<int> stage_layers(const ParallelLayout& l, const ModelSpec& m, int64_t seq_len) {
  if (!l.layers_per_stage.empty()) return l.layers_per_stage;
  const LayerCosts costs = forward_layer_costs(m, seq_len);
  const std::vector<double>& cost = costs.layer;
  const double tail = costs.tail;
  const int n = m.layers, pp = l.pp;
  // Stages needed when no stage may exceed `cap`: filled greedily from the last stage (which also
  // carries the head and MTP) towards the first, each with at least one layer; 0 if impossible.
  // Any count up to pp can then be reached by splitting stages, which never raises the largest.
  const double eps = 1e-9;
  const auto fill = [&](double cap, std::vector<int>* split) {
    int stages = 0, i = n;
    double load = tail;
    int taken = 0;
    if (split) split->clear();
    while (i > 0) {
      if (taken > 0 && load + cost[i - 1] > cap * (1 + eps)) {
        if (split) split->insert(split->begin(), taken);
        ++stages;
        load = 0;
        taken = 0;
        continue;
      }
      if (taken == 0 && load + cost[i - 1] > cap * (1 + eps)) return 0;
      load += cost[i - 1];
      ++taken;
      --i;
    }
    if (split) split->insert(split->begin(), taken);
    return stages + 1;
  };
  double lo = 0, hi = tail;
  for (double layer : cost) hi += layer;
  for (int it = 0; it < 200 && hi - lo > hi * 1e-12; ++it) {
    const double mid = (lo + hi) / 2;
    const int k = fill(mid, nullptr);
    (k > 0 && k <= pp ? hi : lo) = mid;
  }
  std::vector<int> out;
  fill(hi, &out);
  // Fewer stages than pp: split the front stages, one layer off at a time, so the stages with
  // the embedding and the first layers get the fewest.
  while (static_cast<int>(out.size()) < pp) {
    const auto it = std::find_if(out.begin(), out.end(), [](int v) { return v > 1; });
    if (it == out.end()) throw std::invalid_argument("stage_layers: more stages than layers (layout_problem says so)");
    --*it;
    out.insert(out.begin(), 1);
  }
  return out;
}

int first_layer_of_stage(const std::vector<int>& split, int stage) {
  int first = 0;
  for (int i = 0; i < stage; ++i) first += split[i];
  return first;
}

std::string layout_text(const ParallelLayout& l) {
  const auto s = [](int v) { return std::to_string(v); };
  return "tp " + s(l.tp) + (l.cp > 1 ? ", cp " + s(l.cp) : std::string()) + ", dp " + s(l.dp) + ", pp " + s(l.pp) +
         ", ep " + s(l.ep) + (l.zero_stage == 1 ? ", ZeRO-1" : ", no ZeRO");
}

std::vector<std::string> explain_placement(const ParallelLayout& l, const ModelSpec& m, int gpus_per_node,
                                           const std::vector<int>& given_split, bool over_ranks) {
  const auto s = [](int v) { return std::to_string(v); };
  const auto nodes = [&](int gpus) { return std::max(1, gpus / gpus_per_node); };
  std::vector<std::string> out;
  if (l.cp > 1)
    out.push_back("ranks: tp " + s(l.tp) + " x cp " + s(l.cp) + " x dp " + s(l.dp) + " x pp " + s(l.pp) + " = " +
                  s(l.gpus()) + " GPUs, numbered tp fastest, then cp, then dp, then pp");
  else
    out.push_back("ranks: tp " + s(l.tp) + " x dp " + s(l.dp) + " x pp " + s(l.pp) + " = " + s(l.gpus()) +
                  " GPUs, numbered tp fastest, then dp, then pp");
  if (l.tp > 1)
    out.push_back("TP group: " + s(l.tp) + " consecutive GPUs inside one node (GPUs " + range(0, l.tp) +
                  " for the first), " + (l.tp_comm == TpComm::kAllReduce ? "all-reduce" : "reduce-scatter + all-gather") +
                  " over NVLink");
  if (l.cp > 1) {
    const int group = l.cp * l.tp;
    out.push_back("CP group: " + s(l.cp) + " ranks = " + s(group) + " GPUs on " + s(nodes(group)) + " node(s) (GPUs " +
                  range(0, group) + " for the first) share each sequence, cut into " + s(2 * l.cp) +
                  " chunks of which each rank takes one from each end (the causal mask's work balanced); the MLA " +
                  "latent (K and V without MLA) is all-gathered over " + (group > gpus_per_node ? "InfiniBand" : "NVLink"));
  }
  const int stage_gpus = l.tp * l.replicas();
  out.push_back("pipeline stage: " + s(stage_gpus) + " GPUs on " + s(nodes(stage_gpus)) + " node(s) (stage 0: GPUs " +
                range(0, stage_gpus) + ", stage " + s(l.pp - 1) + ": GPUs " + range((l.pp - 1) * stage_gpus, stage_gpus) +
                "); stage boundaries send activations over " + (stage_gpus >= gpus_per_node ? "InfiniBand" : "NVLink"));
  if (m.moe) {
    const int group_gpus = l.ep * l.tp;
    out.push_back("EP group: " + s(l.ep) + " ranks = " + s(group_gpus) + " GPUs on " + s(nodes(group_gpus)) +
                  " node(s) (GPUs " + range(0, group_gpus) + " for the first), " + s(m.moe->routed_experts / l.ep) +
                  " routed experts per GPU per MoE layer; " + s(l.expert_dp()) + " EP group(s) per stage replicate the experts");
  }
  const std::vector<int> split = given_split.empty() ? stage_layers(l, m) : given_split;
  // Where the schedule makes more model stages than ranks (interleaved 1F1B, DualPipeV), the line
  // numbers model stages, apart from the ranks' "pipeline stage" above.
  const std::string stage = static_cast<int>(split.size()) == l.pp ? "stage" : "model stage";
  std::string layers = "layers per " + stage +
                       (!l.layers_per_stage.empty() ? ":"
                        : over_ranks                ? " (forward FLOPs balanced over each rank's stages):"
                                                    : " (forward FLOPs balanced):");
  for (int n : split) layers.append(" ").append(s(n));  // append: g++ 12 warns falsely on " " + s(n)
  layers +=
      " (embedding on " + stage + " 0; final norm, head" + std::string(m.mtp_depth > 0 ? " and MTP" : "") + " on " +
      stage + " " + s(static_cast<int>(split.size()) - 1) +
      (stage == "stage" ? std::string() : ", of " + s(static_cast<int>(split.size())) + " over " + s(l.pp) + " ranks") +
      ")";
  out.push_back(layers);
  out.push_back("data parallel: " + s(l.replicas()) + " replicas of the dense parameters" +
                (l.cp > 1 ? " (" + s(l.dp) + " batch shards x " + s(l.cp) + " CP ranks)" : std::string()) +
                (l.zero_stage == 1 ? ", optimizer states sharded over them (ZeRO-1)" : std::string(", no ZeRO sharding")));
  return out;
}

}  // namespace cs::models
