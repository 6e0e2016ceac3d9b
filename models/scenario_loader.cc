#include "models/scenario_loader.h"

#include <algorithm>
#include <set>

#include "sim/collective_plan.h"
#include "hw/yaml_reader.h"
#include "models/cluster.h"
#include "models/cost_config.h"
#include "models/model_workload.h"
#include "models/training_run.h"

namespace cs::models {

using hw::YamlMap;
using hw::YamlNode;

namespace {

SourcePos pos_of(const YamlNode& n) { return SourcePos{n.line(), n.col()}; }

constexpr int64_t kMaxDim = int64_t{1} << 31;  // GEMM dimensions
constexpr double kMaxBytes = 1e15;             // one transfer or collective buffer (1 PB)

const std::vector<std::string> kOpKinds = {"gemm",           "compute",    "all_to_all",
                                           "all_reduce",     "reduce_scatter", "all_gather",
                                           "send"};

sim::DType parse_dtype(const YamlNode& n) {
  const std::string s = n.as_enum({"fp8", "bf16", "fp16", "fp32"});
  if (s == "fp8") return sim::DType::kFp8;
  if (s == "fp16") return sim::DType::kFp16;
  if (s == "fp32") return sim::DType::kFp32;
  return sim::DType::kBf16;
}

double parse_size(const YamlMap& m) {
  const std::string key = m.exactly_one_of({"size_MiB", "size_bytes"});
  const YamlNode v = m.required(key);
  if (key == "size_MiB") return v.as_double(0, kMaxBytes / (1 << 20)) * (1 << 20);
  return static_cast<double>(v.as_int(0, static_cast<int64_t>(kMaxBytes)));
}

void parse_op_body(const YamlNode& body, OpSpec& op, const StreamSpec& stream, int gpu_count) {
  if (op.kind_name == "gemm") {
    const YamlMap m(body, {"m", "n", "k", "dtype", "groups"});
    op.type = OpType::kGemm;
    op.gemm.m = m.required("m").as_int(1, kMaxDim);
    op.gemm.n = m.required("n").as_int(1, kMaxDim);
    op.gemm.k = m.required("k").as_int(1, kMaxDim);
    if (auto d = m.optional("dtype")) op.gemm.dtype = parse_dtype(*d);
    if (auto g = m.optional("groups")) op.gemm.groups = static_cast<int>(g->as_int(1, 4096));
  } else if (op.kind_name == "compute") {
    const YamlMap m(body, {"gflop", "hbm_MiB", "dtype"});
    op.type = OpType::kCompute;
    op.compute.flops = m.required("gflop").as_double(0, 1e9) * 1e9;
    if (auto b = m.optional("hbm_MiB")) op.compute.bytes = b->as_double(0, kMaxBytes / (1 << 20)) * (1 << 20);
    if (auto d = m.optional("dtype")) op.compute.dtype = parse_dtype(*d);
    if (op.compute.flops == 0 && op.compute.bytes == 0)
      body.fail("a compute op needs gflop or hbm_MiB above zero");
  } else if (op.kind_name == "send") {
    const YamlMap m(body, {"to", "peer_offset", "size_MiB", "size_bytes"});
    op.type = OpType::kSend;
    op.size_bytes = parse_size(m);
    const std::string which = m.exactly_one_of({"to", "peer_offset"});
    const YamlNode v = m.required(which);
    if (which == "to") {
      op.send_to = static_cast<int>(v.as_int(0, gpu_count - 1));
      if (std::find(stream.gpus.begin(), stream.gpus.end(), op.send_to) != stream.gpus.end())
        v.fail("GPU " + std::to_string(op.send_to) + " runs this stream and cannot send to itself");
    } else {
      const auto n = static_cast<int64_t>(stream.gpus.size());
      op.send_peer_offset = static_cast<int>(v.as_int(-(n - 1), n - 1));
      if (op.send_peer_offset == 0) v.fail("peer_offset 0 would send to the same GPU");
    }
  } else {
    const YamlMap m(body, {"size_MiB", "size_bytes"});
    op.type = OpType::kCollective;
    op.size_bytes = parse_size(m);
    if (op.kind_name == "all_to_all") op.collective = sim::CollectiveKind::kAllToAll;
    else if (op.kind_name == "all_reduce") op.collective = sim::CollectiveKind::kAllReduce;
    else if (op.kind_name == "reduce_scatter") op.collective = sim::CollectiveKind::kReduceScatter;
    else op.collective = sim::CollectiveKind::kAllGather;
  }
}

OpSpec parse_op(const YamlNode& node, const StreamSpec& stream, int gpu_count) {
  std::vector<std::string> allowed = kOpKinds;
  allowed.insert(allowed.end(), {"repeat", "id", "after", "label"});
  const YamlMap m(node, allowed);
  OpSpec op;
  op.pos = pos_of(node);
  op.kind_name = m.exactly_one_of(kOpKinds);
  parse_op_body(m.required(op.kind_name), op, stream, gpu_count);
  if (auto r = m.optional("repeat")) op.repeat = r->as_int(1, kMaxExpandedOps);
  if (auto id = m.optional("id")) {
    op.id = id->as_string();
    if (op.id.empty() || op.id.find_first_of(" \t@") != std::string::npos)
      id->fail("an op id must be a non-empty name without spaces or '@'");
  }
  op.label = op.id.empty() ? op.kind_name : op.id;
  if (auto l = m.optional("label")) op.label = l->as_string();
  if (auto after = m.optional("after")) {
    for (const YamlNode& item : after->items()) {
      DepRef ref;
      ref.pos = pos_of(item);
      if (item.is_map()) {
        const YamlMap d(item, {"op", "gpu"});
        ref.op = d.required("op").as_string();
        ref.gpu = static_cast<int>(d.required("gpu").as_int(0, gpu_count - 1));
      } else {
        ref.op = item.as_string();
      }
      op.after.push_back(std::move(ref));
    }
  }
  return op;
}

std::vector<int> parse_gpu_list(const YamlNode& n, int gpu_count) {
  std::vector<int> gpus;
  if (n.is_scalar() && n.as_string() == "all") {
    for (int g = 0; g < gpu_count; ++g) gpus.push_back(g);
    return gpus;
  }
  if (n.is_scalar()) {
    // A range "first-last", both included.
    const std::string r = n.as_string();
    const size_t dash = r.find('-');
    const bool digits = dash != std::string::npos && dash > 0 && dash + 1 < r.size() && r.size() < 16 &&
                        r.find_first_not_of("0123456789-") == std::string::npos && r.find('-', dash + 1) == std::string::npos;
    if (!digits) n.fail("'" + n.path() + "' must be \"all\", a range such as \"0-63\", or a list of GPU indices");
    const long first = std::stol(r.substr(0, dash)), last = std::stol(r.substr(dash + 1));
    if (first > last || last >= gpu_count)
      n.fail("'" + n.path() + "' range " + r + " must run upwards within GPUs 0 to " + std::to_string(gpu_count - 1));
    for (long g = first; g <= last; ++g) gpus.push_back(static_cast<int>(g));
    return gpus;
  }
  if (!n.is_seq()) n.fail("'" + n.path() + "' must be \"all\", a range such as \"0-63\", or a list of GPU indices");
  std::set<int> seen;
  for (const YamlNode& item : n.items()) {
    const int g = static_cast<int>(item.as_int(0, gpu_count - 1));
    if (!seen.insert(g).second) item.fail("GPU " + std::to_string(g) + " is listed twice");
    gpus.push_back(g);
  }
  if (gpus.empty()) n.fail("'" + n.path() + "' lists no GPU");
  return gpus;
}

StreamSpec parse_stream(const YamlNode& node, const ClusterConfig& cluster) {
  const YamlMap m(node, {"name", "gpus", "partition", "ops"});
  StreamSpec s;
  s.pos = pos_of(node);
  s.name = m.required("name").as_string();
  if (s.name.empty()) m.required("name").fail("a stream name cannot be empty");
  s.gpus = parse_gpu_list(m.required("gpus"), cluster.gpus);
  const YamlNode part = m.required("partition");
  std::vector<std::string> names;
  for (const auto& p : cluster.partitions) names.push_back(p.name);
  s.partition = part.as_enum(names);
  s.partition_index = static_cast<int>(std::find(names.begin(), names.end(), s.partition) - names.begin());
  if (cluster.partitions[s.partition_index].sms == 0)
    part.fail("partition '" + s.partition + "' has 0 SMs (cluster.sm_partitions): the kernels of stream '" + s.name +
              "' would never run");
  const YamlNode ops = m.required("ops");
  for (const YamlNode& op : ops.items()) s.ops.push_back(parse_op(op, s, cluster.gpus));
  if (s.ops.empty()) ops.fail("stream '" + s.name + "' has no ops");
  return s;
}

Scenario parse_scenario(const YamlNode& root, const GraphLimits& limits) {
  if (root.is_null()) root.fail("the file is empty; a scenario needs schema_version, name, cluster and workload");
  // `sweep:` belongs to `clustersim sweep` (models/sweep_spec.h); a run is of the scenario as written.
  const YamlMap m(root, {"schema_version", "name", "description", "cluster", "cost_model", "workload", "training",
                         "sweep"});
  Scenario sc;
  sc.file = root.file();
  const YamlNode version = m.required("schema_version");
  if (version.as_int(0, INT32_MAX) != kSchemaVersion)
    version.fail("schema_version " + version.as_string() + " is not supported; this clustersim reads version " +
                 std::to_string(kSchemaVersion));
  sc.name = m.required("name").as_string();
  if (auto d = m.optional("description")) sc.description = d->as_string();
  sc.cluster = parse_cluster(m.required("cluster"));
  sc.cost = parse_cost(m.optional("cost_model"), sc.cluster);

  const std::vector<std::string> model_keys = {"kind", "model", "layout", "seq_len", "micro_batch", "micro_batches",
                                                "stage", "backward", "precision", "recompute", "routing", "schedule",
                                                "partitions", "fidelity", "pipeline", "implementation"};
  std::vector<std::string> any_keys = model_keys;
  any_keys.push_back("streams");
  const YamlNode wn = m.required("workload");
  const std::string kind = YamlMap(wn, any_keys).required("kind").as_enum({"ops", "model"});
  if (kind == "model") {
    if (const auto t = m.optional("training")) {
      sc.training = parse_training(*t, wn, model_keys, sc.cluster, limits);
      sc.model = sc.training->phases.front().workload;  // `run` runs the first phase's full-batch step
      return sc;
    }
    sc.model = std::make_shared<const ModelWorkload>(parse_model_workload(YamlMap(wn, model_keys), sc.cluster, limits));
    return sc;
  }
  if (const auto t = m.optional("training")) t->fail("a training run needs a workload of kind 'model'");
  const YamlMap w(wn, {"kind", "streams"});
  const YamlNode streams = w.required("streams");
  std::set<std::string> names;
  int64_t expanded = 0;
  uint64_t transfers = 0;
  for (const YamlNode& sn : streams.items()) {
    StreamSpec s = parse_stream(sn, sc.cluster);
    if (!names.insert(s.name).second) sn.fail("a stream named '" + s.name + "' is already defined");
    for (const OpSpec& op : s.ops) {
      // Dependencies are edges the graph must hold too: one per `after` entry on each GPU.
      const auto per_gpu = op.repeat + static_cast<int64_t>(op.after.size());
      expanded += per_gpu * static_cast<int64_t>(s.gpus.size());
      if (expanded > limits.ops)
        sn.fail("the workload expands to more than " + std::to_string(limits.ops) +
                " ops and dependencies (GPUs x (repeat + after)); --graph-limit of clustersim run, sweep and check "
                "raises the limit");
      const uint64_t n = s.gpus.size();
      if (op.type == OpType::kCollective) transfers += sim::collective_transfers(op.collective, n) * op.repeat;
      if (op.type == OpType::kSend) transfers += n * op.repeat;
      if (transfers > static_cast<uint64_t>(limits.transfers))
        sn.fail("the collectives expand to more than " + std::to_string(limits.transfers) +
                " point-to-point transfers (an all-to-all over n GPUs makes n(n-1), a ring all-reduce 2n(n-1)); "
                "--graph-limit of clustersim run, sweep and check raises the limit");
    }
    sc.streams.push_back(std::move(s));
  }
  if (sc.streams.empty()) streams.fail("'workload.streams' lists no stream");
  return sc;
}

}  // namespace

Scenario load_scenario_file(const std::string& path, const GraphLimits& limits) {
  return parse_scenario(hw::load_yaml_file(path), limits);
}

Scenario load_scenario_node(const hw::YamlNode& root, const GraphLimits& limits) {
  return parse_scenario(root, limits);
}

Scenario load_scenario_text(std::string_view text, const std::string& file, const GraphLimits& limits) {
  return parse_scenario(hw::parse_yaml(text, file), limits);
}

}  // namespace cs::models
