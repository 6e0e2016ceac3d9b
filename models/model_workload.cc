#include "models/model_workload.h"

#include <algorithm>

#include "hw/fabric/fabric_graph.h"
#include "models/cluster.h"
#include "models/model_zoo.h"
#include "models/moe_routing.h"
#include "models/rank_split.h"
#include "models/scenario_loader.h"
#include "models/scenario_runner.h"

namespace cs::models {

namespace {

using hw::YamlMap;
using hw::YamlNode;

SourcePos pos_of(const YamlNode& n) { return SourcePos{n.line(), n.col()}; }

ModelSpec parse_model_ref(const YamlNode& n) {
  if (n.is_map()) return parse_model(n);
  const std::string name = n.as_string();
  try {
    return load_model(name);
  } catch (const hw::UserError& e) {
    if (e.line() > 0) throw;  // an error inside the model file keeps its own position
    n.fail(e.message());
  }
}

ParallelLayout parse_layout(const YamlNode& n) {
  const YamlMap m(n, {"tp", "cp", "dp", "pp", "ep", "zero_stage", "tp_comm", "layers_per_stage"});
  ParallelLayout l;
  const auto deg = [&](const char* key, int& out) {
    if (const auto v = m.optional(key)) out = static_cast<int>(v->as_int(1, 1 << 20));
  };
  deg("tp", l.tp);
  deg("cp", l.cp);
  deg("dp", l.dp);
  deg("pp", l.pp);
  deg("ep", l.ep);
  if (const auto v = m.optional("zero_stage")) l.zero_stage = static_cast<int>(v->as_int(0, 1));
  if (const auto v = m.optional("tp_comm"))
    l.tp_comm = v->as_enum({"all_reduce", "reduce_scatter"}) == "all_reduce" ? TpComm::kAllReduce : TpComm::kReduceScatter;
  if (const auto v = m.optional("layers_per_stage"))
    for (const YamlNode& item : v->items()) l.layers_per_stage.push_back(static_cast<int>(item.as_int(0, 100000)));
  return l;
}

// `pipeline:` for a layout of `pp` ranks. The layout's pp is always the ranks (devices); the
// schedules count in model stages: interleaved 1F1B runs pp x v of them, DualPipeV 2 x pp.
// How its stage boundaries move (`p2p`) goes to `p2p`.
const std::vector<std::string> kPipelineKeys = {"schedule", "micro_batches", "virtual_stages", "p2p"};

ScheduleParams parse_pipeline(const YamlNode& n, int pp, sim::Mover& p2p) {
  const YamlMap p(n, kPipelineKeys);
  if (const auto v = p.optional("p2p"))
    p2p = v->as_enum({"sms", "copy_engine"}) == "copy_engine" ? sim::Mover::kCopyEngine : sim::Mover::kSms;
  const YamlNode kind = p.required("schedule");
  ScheduleParams sp;
  const std::optional<ScheduleKind> k = schedule_kind_from_name(kind.as_string());
  // Not a known spelling: as_enum fails, listing the names (and the nearest one).
  sp.kind = k ? *k : *schedule_kind_from_name(kind.as_enum({"1f1b", "interleaved", "zb1p", "dualpipe", "dualpipev"}));
  sp.stages = sp.kind == ScheduleKind::kDualPipeV ? 2 * pp : pp;
  sp.micro_batches = static_cast<int>(p.required("micro_batches").as_int(1, 100000));
  if (sp.kind == ScheduleKind::kInterleaved1f1b) sp.virtual_stages = 2;
  if (const auto v = p.optional("virtual_stages")) {
    if (sp.kind != ScheduleKind::kInterleaved1f1b)
      v->fail(std::string("virtual_stages applies to the interleaved schedule only; ") + schedule_kind_name(sp.kind) +
              " holds " + (sp.kind == ScheduleKind::kDualPipeV ? "its two stages" : "one stage") + " per rank");
    sp.virtual_stages = static_cast<int>(v->as_int(2, 26));
  }
  std::string bad = schedule_problem(sp);
  if (!bad.empty() && sp.kind == ScheduleKind::kDualPipeV)
    bad += " (DualPipeV's stages: 2 per rank, " + std::to_string(sp.stages) + " on pp " + std::to_string(pp) + ")";
  if (!bad.empty()) n.fail(bad);
  return sp;
}

// A copy engine moves data between GPUs of one node (peer copies over NVLink), so every stage
// boundary must stay within one. Every schedule sends between neighbouring ranks (interleaved 1F1B
// also from the last to the first), so each pipeline (one TP and replica rank over the pp ranks)
// must sit on one node. Empty when it does.
std::string copy_engine_problem(const ParallelLayout& l, int gpus_per_node) {
  for (int dp = 0; dp < l.replicas(); ++dp)
    for (int tp = 0; tp < l.tp; ++tp)
      for (int r = 1; r < l.pp; ++r) {
        const int a = gpu_of(l, tp, dp, r - 1), b = gpu_of(l, tp, dp, r);
        if (a / gpus_per_node != b / gpus_per_node)
          return "copy_engine sends stage boundaries between GPUs of one node (peer copies over NVLink), but pipeline "
                 "ranks " + std::to_string(r - 1) + " and " + std::to_string(r) + " sit on GPUs " + std::to_string(a) +
                 " and " + std::to_string(b) + " of different nodes (" + std::to_string(gpus_per_node) +
                 " GPUs each); use p2p: sms";
      }
  return "";
}

int partition_index(const ClusterConfig& c, const YamlNode& n) {
  std::vector<std::string> names;
  for (const auto& p : c.partitions) names.push_back(p.name);
  const std::string name = n.as_enum(names);
  return static_cast<int>(std::find(names.begin(), names.end(), name) - names.begin());
}

}  // namespace

int gpus_per_node(const ClusterConfig& c) { return c.fabric.kind == "switch" ? c.gpus : c.node.gpus; }

std::vector<int> stand_in_gpus(const ModelWorkload& mw, const ClusterConfig& c) {
  const int simulated = mw.simulated_dp();
  if (simulated == mw.layout.replicas()) return {};
  std::vector<int> out(c.gpus);  // the layout fills the cluster (layout_problem)
  const int gpn = gpus_per_node(c);
  for (int g = 0; g < c.gpus; ++g) {
    const RankCoords rc = rank_coords(mw.layout, g, gpn);
    out[g] = gpu_of(mw.layout, rc.tp, rc.dp % simulated, rc.pp);
  }
  return out;
}

std::vector<int> workload_stage_layers(const ModelWorkload& mw) {
  if (!mw.stage_split.empty()) return mw.stage_split;
  ParallelLayout l = mw.layout;
  // PipelineSchedule::model_stages, without generating the schedule.
  if (mw.pipeline) l.pp = mw.pipeline->stages * mw.pipeline->virtual_stages;
  return stage_layers(l, mw.model, mw.seq_len);
}

namespace {

// memory_inputs with the layers per model stage given.
MemoryInputs memory_inputs_split(const ModelWorkload& mw, int pp_rank, const std::vector<int>& split) {
  MemoryInputs in;
  in.model = mw.model;
  in.layout = mw.layout;
  in.layout.layers_per_stage = split;
  in.pp_rank = pp_rank;
  in.micro_batch_seqs = static_cast<int>(mw.micro_batch);
  in.seq_len = mw.seq_len;
  in.schedule = mw.schedule == "dualpipe" ? ScheduleMemory::kDualPipe : ScheduleMemory::k1f1b;
  in.recompute.rms_norm = mw.recompute_norm;
  in.recompute.mla_up_proj = mw.recompute_mla_up;
  in.precision = mw.precision == "deepseek_fp8" ? PrecisionRecipe::deepseek_fp8() : PrecisionRecipe::bf16_mixed();
  // The schedule that runs says what is in flight when, stage by stage: interleaved 1F1B and
  // DualPipeV have no closed form, and few micro-batches keep fewer in flight than one says.
  if (mw.pipeline) use_schedule_memory(in, make_schedule(*mw.pipeline));
  return in;
}

}  // namespace

MemoryInputs memory_inputs(const ModelWorkload& mw, const ClusterConfig&, int pp_rank) {
  return memory_inputs_split(mw, pp_rank, workload_stage_layers(mw));
}

void choose_stage_split(ModelWorkload& mw, const ClusterConfig& c) {
  mw.stage_split.clear();
  mw.split_balances_ranks = false;
  const std::vector<int> plain = workload_stage_layers(mw);
  if (!mw.layout.layers_per_stage.empty() || !mw.pipeline) {
    mw.stage_split = plain;
    return;
  }
  const PipelineSchedule sched = make_schedule(*mw.pipeline);
  std::vector<std::vector<int>> held(sched.ranks);
  bool several = false;
  for (int r = 0; r < sched.ranks; ++r) {
    for (const StageRef& h : sched.rank_stages(r)) held[r].push_back(h.stage);
    several = several || held[r].size() > 1;
  }
  if (!several) {
    mw.stage_split = plain;
    return;
  }
  MemoryInputs in = memory_inputs_split(mw, 0, plain);
  const MemoryBreakdown before = worst_rank_memory(in, c.gpu);
  const double limit = std::max(before.available_bytes, before.total_bytes());
  const auto fits = [&](const std::vector<int>& split) {
    in.layout.layers_per_stage = split;
    return worst_rank_memory(in, c.gpu).total_bytes() <= limit;
  };
  mw.stage_split = balance_rank_loads(plain, held, forward_layer_costs(mw.model, mw.seq_len), fits);
  mw.split_balances_ranks = mw.stage_split != plain;
}

ModelWorkload parse_model_workload(const YamlMap& w, const ClusterConfig& cluster, const GraphLimits& limits) {
  ModelWorkload mw;
  mw.pos = pos_of(w.node());
  const YamlNode model_node = w.required("model");
  mw.model = parse_model_ref(model_node);
  const YamlNode layout_node = w.required("layout");
  mw.layout = parse_layout(layout_node);
  mw.layout_pos = pos_of(layout_node);
  const int gpn = gpus_per_node(cluster);
  if (const auto v = w.optional("seq_len")) mw.seq_len = v->as_int(1, 1 << 24);
  if (const int cp = mw.layout.cp; cp > 1 && mw.seq_len % (2 * cp) != 0)
    w.optional("seq_len").value_or(layout_node).fail(
        "context parallelism over cp = " + std::to_string(cp) + " ranks cuts each sequence into 2 x cp = " +
        std::to_string(2 * cp) + " equal chunks; seq_len " + std::to_string(mw.seq_len) + " does not divide");
  if (const auto v = w.optional("micro_batch")) mw.micro_batch = v->as_int(1, 1 << 16);
  if (const auto v = w.optional("micro_batches")) mw.micro_batches = v->as_int(1, 100000);
  if (const auto v = w.optional("stage")) {
    mw.stage = static_cast<int>(v->as_int(0, INT32_MAX));
    if (mw.stage >= mw.layout.pp) v->fail("stage " + std::to_string(mw.stage) + " does not exist: pp is " + std::to_string(mw.layout.pp));
  }
  if (const auto v = w.optional("backward")) mw.backward = v->as_bool();
  const std::optional<YamlNode> pipeline_node = w.optional("pipeline");
  if (pipeline_node) {
    for (const char* key : {"stage", "micro_batches", "backward", "schedule"})
      if (w.has(key))
        w.required(key).fail(std::string("'") + key + "' does not apply when 'pipeline' runs the whole step");
    mw.pipeline = parse_pipeline(*pipeline_node, mw.layout.pp, mw.pipeline_p2p);
    // The memory shape's name in the result; 1F1B and ZB1P share one, DualPipe has its own.
    const ScheduleKind k = mw.pipeline->kind;
    mw.schedule = k == ScheduleKind::kZb1p ? "1f1b" : schedule_kind_name(k);
  }
  // The layers are split over the model stages, which interleaved 1F1B and DualPipeV make more
  // of than ranks; a split only they break is the pipeline's to report.
  const int model_stages = mw.pipeline ? mw.pipeline->stages * mw.pipeline->virtual_stages : mw.layout.pp;
  if (const std::string problem = layout_problem(mw.layout, mw.model, cluster.gpus, gpn, model_stages); !problem.empty()) {
    const bool pipeline_fault = model_stages != mw.layout.pp && layout_problem(mw.layout, mw.model, cluster.gpus, gpn).empty();
    (pipeline_fault ? *pipeline_node : layout_node).fail(problem);
  }
  if (mw.pipeline_p2p == sim::Mover::kCopyEngine)
    if (const std::string far = copy_engine_problem(mw.layout, gpn); !far.empty())
      YamlMap(*pipeline_node, kPipelineKeys).required("p2p").fail(far);
  const std::optional<YamlNode> fidelity_node = w.optional("fidelity");
  if (fidelity_node) {
    const std::string f = fidelity_node->as_enum({"full", "folded", "mirrored"});
    mw.fidelity = f == "folded"     ? ModelWorkload::Fidelity::kFolded
                  : f == "mirrored" ? ModelWorkload::Fidelity::kMirrored
                                    : ModelWorkload::Fidelity::kFull;
  }
  // Folded runs one EP group; with context parallelism it must also hold whole CP groups (or one
  // CP group whole EP groups), since a CP all-gather needs every rank of its group.
  if (mw.fidelity == ModelWorkload::Fidelity::kFolded && mw.layout.cp > 1) {
    const int e = mw.model.moe ? mw.layout.ep : 1, cp = mw.layout.cp;
    if (e % cp != 0 && cp % e != 0)
      fidelity_node->fail("folded fidelity simulates one EP group of " + std::to_string(e) +
                          " ranks, which must hold whole CP groups of " + std::to_string(cp) +
                          " (or the reverse); use full or mirrored");
  }
  if (const auto v = w.optional("precision")) mw.precision = v->as_enum({"deepseek_fp8", "bf16_mixed"});
  mw.fp8 = mw.precision == "deepseek_fp8";
  if (const auto v = w.optional("recompute")) {
    const YamlMap r(*v, {"rms_norm", "mla_up_proj"});
    if (const auto x = r.optional("rms_norm")) mw.recompute_norm = x->as_bool();
    if (const auto x = r.optional("mla_up_proj")) mw.recompute_mla_up = x->as_bool();
  }
  if (const auto v = w.optional("implementation")) {
    // How the framework lays out kernels where the model has a choice (the measured bench's PyTorch
    // implementation against fused production kernels).
    const YamlMap r(*v, {"attention_layout_copies"});
    if (const auto x = r.optional("attention_layout_copies")) {
      mw.attention_layout_copies = x->as_bool();
      if (mw.attention_layout_copies && mw.model.attention.kind != AttentionKind::kGqa)
        x->fail("attention_layout_copies is SDPA's layout around GQA attention; " + mw.model.name + " uses MLA");
      // With context parallelism K and V come from the CP group's all-gather, in whatever layout
      // that implementation gathers them: the copies measured are those of one GPU's whole sequence.
      if (mw.attention_layout_copies && mw.layout.cp > 1)
        x->fail("attention_layout_copies is SDPA's layout of one GPU's whole sequences; with cp " +
                std::to_string(mw.layout.cp) + " it is not modelled");
    }
  }
  if (const auto v = w.optional("routing")) {
    const YamlMap r(*v, {"zipf_exponent"});
    if (const auto x = r.optional("zipf_exponent")) mw.zipf_exponent = x->as_double(0, 10);
    if (!mw.model.moe) v->fail("routing applies to MoE models only; " + mw.model.name + " is dense");
  }
  if (const auto v = w.optional("schedule")) {
    mw.schedule = v->as_enum({"1f1b", "dualpipe"});
    if (mw.schedule == "dualpipe" && mw.layout.pp % 2 != 0) v->fail("DualPipe needs an even pp, not " + std::to_string(mw.layout.pp));
  }
  if (cluster.partitions.size() < 2 && !w.has("partitions"))
    w.node().fail("a model workload runs compute and communication on two SM partitions; the cluster has " +
                  std::to_string(cluster.partitions.size()));
  mw.compute_partition = 0;
  mw.comm_partition = cluster.partitions.size() > 1 ? 1 : 0;
  if (const auto v = w.optional("partitions")) {
    const YamlMap p(*v, {"compute", "comm"});
    mw.compute_partition = partition_index(cluster, p.required("compute"));
    mw.comm_partition = partition_index(cluster, p.required("comm"));
    if (mw.compute_partition == mw.comm_partition)
      p.required("comm").fail("compute and communication need different SM partitions");
  }
  // The communication partition may hold 0 SMs (its kernels then share the compute partition's:
  // comm_kernel_partition); the compute partition may not.
  if (const int p = mw.compute_partition; cluster.partitions[p].sms == 0) {
    const SourcePos at = static_cast<size_t>(p) < cluster.partition_pos.size() ? cluster.partition_pos[p] : mw.pos;
    throw hw::UserError(w.node().file(), at.line, at.col,
                        "the compute partition '" + cluster.partitions[p].name + "' has 0 SMs: give it SMs");
  }
  // Mirrored stands one GPU in for its EP group, which only balanced routing makes exact: with
  // skew the EP ranks compute and receive different volumes and each all-to-all waits for the
  // busiest, which no single GPU's own side shows.
  if (mw.mirrored() && mw.zipf_exponent > 0)
    fidelity_node->fail("mirrored fidelity needs balanced routing: it simulates one GPU of each EP group as a stand-in "
                        "for all, but with routing.zipf_exponent > 0 the EP ranks carry different loads and each "
                        "all-to-all waits for the busiest; use folded, which simulates the whole EP group");
  const WorkloadSize size = model_workload_size(mw);
  if (size.ops > static_cast<uint64_t>(limits.ops) || size.transfers > static_cast<uint64_t>(limits.transfers))
    w.optional("micro_batches")
        .value_or(w.node())
        .fail("the stage's graph would hold " + std::to_string(size.ops) + " ops and dependencies and " +
              std::to_string(size.transfers) + " transfers, beyond the limits of " + std::to_string(limits.ops) +
              " and " + std::to_string(limits.transfers) +
              ": run fewer micro_batches or a smaller layout (--graph-limit of clustersim run, sweep and check raises "
              "the limits)");
  choose_stage_split(mw, cluster);
  // Every pipeline rank must fit; the worst one is reported with its bytes by category.
  const MemoryBreakdown worst = worst_rank_memory(memory_inputs(mw, cluster, 0), cluster.gpu);
  if (!worst.fits()) layout_node.fail(does_not_fit_message(worst) + " on " + cluster.gpu.model);
  return mw;
}

namespace {

const char* fidelity_name(ModelWorkload::Fidelity f) {
  using F = ModelWorkload::Fidelity;
  return f == F::kMirrored ? "mirrored" : f == F::kFolded ? "folded" : "full";
}

// Where the GPUs that one simulated GPU stands in for may not all meet alike uplinks, what the tree
// is; else empty. A partial tree (integer division leaves some uplinks dark: five leaves per plane
// over three spines) has leaves whose uplinks differ. An oversubscribed one, whose uplinks bind,
// has them alike where each leaf holds the same part of every stage: a stage's nodes a multiple or
// a divisor of a leaf's. A tree of one leaf per plane has no uplink.
std::string uneven_uplinks(const ModelWorkload& mw, const ClusterConfig& c) {
  if (c.fabric.kind == "switch") return "";
  const hw::FabricSpec spec = fabric_spec(c);
  const hw::FabricCounts n = hw::fabric_counts(spec);
  const int leaf_nodes = spec.switch_radix / 2;  // NICs per leaf (one per node), and leaves per pod
  if (n.leaves_per_tree <= 1) return "";
  // Two layers: a leaf's cables to the spines, short of its R/2 / oversubscription uplinks. Three: a
  // pod's aggregation switch always has its uplinks (hw/fabric/fabric_graph.cc, three_shape), so
  // only the cables up to the cores can fall short of its R/2 leaves.
  const bool partial =
      spec.kind != hw::FabricKind::kThreeLayer
          ? n.switch_links / (static_cast<int64_t>(n.trees) * n.leaves_per_tree) < leaf_nodes / spec.oversubscription
          : n.pods >= 2 && n.cores_per_group * n.links_per_agg_core < leaf_nodes;
  if (partial) return "a partial " + c.fabric.kind + " (uplinks left dark)";
  const int stage_nodes = std::max(1, mw.layout.tp * mw.layout.replicas() / gpus_per_node(c));
  if (spec.oversubscription == 1 || stage_nodes % leaf_nodes == 0 || leaf_nodes % stage_nodes == 0) return "";
  return "a " + std::to_string(spec.oversubscription) + ":1 oversubscribed " + c.fabric.kind + " whose leaves (" +
         std::to_string(leaf_nodes) + " nodes) hold unlike parts of its stages (" + std::to_string(stage_nodes) +
         " nodes each)";
}

}  // namespace

std::vector<FidelityWarning> fidelity_warnings(const ModelWorkload& mw, const ClusterConfig& c) {
  // Only where some GPU stands in for another, as stand_in_gpus decides (never at full fidelity).
  // The stand-ins' flows load the switch links with the transfers they stand for (their images,
  // models/stand_in_images.h), which is exact where those transfers run alike: on whole trees at
  // 1:1, 2:1 and 4:1 folded and mirrored gave full's step to the picosecond (README, "Fidelity").
  // The tiny MoE model on 160 nodes (five leaves per plane, stages of 80 nodes) did not: 0.09%
  // short of full at 1:1, 0.015% at 4:1.
  if (mw.simulated_dp() == mw.layout.replicas()) return {};
  const std::string tree = uneven_uplinks(mw, c);
  if (tree.empty()) return {};
  const std::string fidelity = fidelity_name(mw.fidelity);
  return {{"approximate: " + fidelity + " fidelity, uneven uplinks",
           fidelity + " fidelity on " + tree +
               ": the GPUs that one simulated GPU stands in for do not all meet alike uplinks, so they do not "
               "all run alike and the step is approximate; `fidelity: full` runs every GPU"}};
}

ModelRunSummary summarize_model_workload(const ModelWorkload& mw, const ClusterConfig& c) {
  const ParallelLayout& l = mw.layout;
  ModelRunSummary s;
  s.model = mw.model.name;
  s.layout = layout_text(l);
  s.stage = mw.stage;
  s.stage_gpus = l.tp * l.replicas();
  s.simulated_gpus = l.tp * mw.simulated_dp();
  if (mw.pipeline) s.simulated_gpus *= l.pp;  // every rank of the pipeline runs
  s.fidelity = fidelity_name(mw.fidelity);
  s.fidelity_warnings = fidelity_warnings(mw, c);
  s.micro_batches = mw.pipeline ? mw.pipeline->micro_batches : mw.micro_batches;
  if (mw.pipeline) s.pipeline = schedule_kind_name(mw.pipeline->kind);
  s.tokens_per_micro_batch = mw.tokens_per_gpu();
  s.precision = mw.precision;
  s.schedule = mw.schedule;
  s.placement = explain_placement(l, mw.model, gpus_per_node(c), workload_stage_layers(mw), mw.split_balances_ranks);
  const MemoryBreakdown m = worst_rank_memory(memory_inputs(mw, c, 0), c.gpu);
  s.worst_pp_rank = m.pp_rank;
  const std::pair<MemoryCategory, const char*> cats[] = {{MemoryCategory::kWeights, "weights"},
                                                         {MemoryCategory::kGradients, "gradients"},
                                                         {MemoryCategory::kOptimizer, "optimizer"},
                                                         {MemoryCategory::kActivations, "activations"},
                                                         {MemoryCategory::kBuffers, "buffers"}};
  for (const auto& [cat, name] : cats) s.memory_bytes.emplace_back(name, m.category_bytes(cat));
  s.memory_available_bytes = m.available_bytes;
  if (mw.model.moe && l.ep > 1) {
    const MoeSpec& e = *mw.model.moe;
    MoeRoutingSetup setup{e.routed_experts, e.top_k, e.groups, e.groups_per_token, l.ep, gpus_per_node(c), {}};
    if (mw.zipf_exponent > 0) setup.expert_weight = zipf_expert_weights(e.routed_experts, mw.zipf_exponent);
    const RoutingStats st = routing_stats(setup);
    s.nodes_per_token = st.nodes_per_token;
    s.gpus_per_token = st.gpus_per_token;
  }
  return s;
}

}  // namespace cs::models
