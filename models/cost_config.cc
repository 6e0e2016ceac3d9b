#include "models/cost_config.h"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <iomanip>
#include <map>
#include <sstream>

#include "hw/calibrated_cost.h"
#include "hw/roofline_cost.h"

namespace cs::models {

using hw::YamlMap;
using hw::YamlNode;

namespace {

// A relative profile path is taken from the scenario's folder, so a scenario and its profile can
// move together.
hw::GpuProfile read_profile(const YamlNode& v) {
  const std::string name = v.as_string();
  if (!hw::is_profile_path(name)) return hw::load_profile(name, &v);
  namespace fs = std::filesystem;
  fs::path p(name);
  if (p.is_relative()) p = fs::path(v.file()).parent_path() / p;
  std::error_code ec;
  if (!fs::is_regular_file(p, ec)) v.fail("no profile file '" + p.string() + "' (relative paths start at the scenario's folder)");
  return hw::load_profile(p.string(), &v);
}

// One quantity against its measured range: "k from 256 to 129280 (measured 512 to 18432) in
// 22560 of 235920 GEMM ops".
struct RangeCheck {
  std::string what;
  hw::ProfileRange measured;
  bool bytes = false;  // written in KiB, MiB or GiB
  double lo = INFINITY, hi = -INFINITY;
  int64_t outside = 0, total = 0;

  void add(double v) {
    ++total;
    lo = std::min(lo, v);
    hi = std::max(hi, v);
    if (!measured.contains(v)) ++outside;
  }
  void report(const std::string& of, std::vector<std::string>& out) const {
    if (outside == 0) return;
    const auto v = [&](double x) {
      std::ostringstream t;
      if (!bytes) t << x;
      else if (x >= 0x1p30) t << std::fixed << std::setprecision(2) << x / 0x1p30 << " GiB";
      else if (x >= 0x1p20) t << std::fixed << std::setprecision(1) << x / 0x1p20 << " MiB";
      else t << std::fixed << std::setprecision(1) << x / 0x1p10 << " KiB";
      return t.str();
    };
    std::ostringstream s;
    s << what << " from " << v(lo) << " to " << v(hi) << " (measured " << v(measured.lo) << " to " << v(measured.hi)
      << ") in " << outside << " of " << total << " " << of;
    out.push_back(s.str());
  }
};

}  // namespace

CostModelConfig parse_cost(const std::optional<YamlNode>& node, ClusterConfig& cluster) {
  CostModelConfig c;
  c.comm_bw_per_sm_GBps = hw::RooflineParams{}.comm_bw_per_sm_GBps;
  if (!node) return c;
  const YamlMap m(*node, {"kind", "comm_bw_per_sm_GBps", "profile", "attention_kernel"});
  c.kind = m.required("kind").as_enum({"roofline", "calibrated"});
  if (c.kind == "roofline") {
    if (auto v = m.optional("profile")) v->fail("'profile' applies to kind 'calibrated'");
    if (auto v = m.optional("attention_kernel"))
      v->fail("'attention_kernel' applies to kind 'calibrated': the roofline times no kernel of its own");
    if (auto v = m.optional("comm_bw_per_sm_GBps")) c.comm_bw_per_sm_GBps = v->as_double(0, 1e5, true);
    return c;
  }
  if (auto v = m.optional("comm_bw_per_sm_GBps"))
    v->fail("'comm_bw_per_sm_GBps' applies to kind 'roofline'; a calibrated profile has its own measured copy rate");
  c.comm_bw_per_sm_GBps = 0;
  const auto p = m.optional("profile");
  hw::GpuProfile prof;
  if (p) {
    prof = read_profile(*p);
  } else if (const hw::GpuProfile* bundled = hw::find_profile(cluster.gpu.name)) {
    prof = *bundled;
  } else {
    m.node().fail("no bundled calibrated profile for " + cluster.gpu.name + " (bundled: " + hw::bundled_profile_names() + "): give 'profile' "
                  "(a file from `clustersim calibrate fit` or `calibrate carry`), or use kind 'roofline'");
  }
  if (prof.gpu != cluster.gpu.name)
    (p ? *p : m.node()).fail("profile '" + prof.file + "' is calibrated for " + prof.gpu + ", but the cluster's GPUs are " +
                             cluster.gpu.name + " (carry it over with `clustersim calibrate carry PROFILE --to " +
                             cluster.gpu.name + " -o FILE`)");
  if (const auto v = m.optional("attention_kernel"); v && v->as_enum({"sdpa", "fa2"}) == "fa2") {
    if (!prof.attention_fa2.present())
      v->fail("profile '" + prof.file +
              "' has no FlashAttention-2 rates (its 'attention_fa2' section: `clustersim calibrate fit` "
              "writes it from attention_bench.py's flash-backend calls)");
    c.attention_kernel = hw::AttentionKernel::kFa2;
  }
  use_profile(c, cluster, std::move(prof));
  return c;
}

void use_profile(CostModelConfig& cost, ClusterConfig& cluster, hw::GpuProfile prof) {
  // HBM shared by every kernel of a GPU carries what the profile measured, not the datasheet peak.
  if (!cluster.hbm_bw_overridden && prof.memory.present()) cluster.figures.hbm_bw_GBps = prof.memory.hbm_GBps;
  if (!cluster.nvlink_bw_overridden) {
    cluster.figures.nvlink_bw_GBps = prof.comm.nvlink_GBps;
    if (cluster.fabric.kind == "switch") cluster.fabric.link_bw_GBps = prof.comm.nvlink_GBps;
  }
  cost.kind = "calibrated";
  cost.comm_bw_per_sm_GBps = 0;
  cost.profile = std::make_shared<const hw::GpuProfile>(std::move(prof));
}

std::unique_ptr<sim::CostModel> make_cost_model(const CostModelConfig& cost, const hw::GpuSpec& gpu) {
  // A training step runs each GPU at the clock its power limit leaves, where the profile says how.
  if (cost.kind == "calibrated") {
    auto c = std::make_unique<hw::CalibratedCost>(
        gpu, *cost.profile, cost.fit_clocks ? hw::ClockLoad::kFit : hw::training_clock_load(*cost.profile));
    c->set_attention_kernel(cost.attention_kernel);
    return c;
  }
  hw::RooflineParams params;
  params.comm_bw_per_sm_GBps = cost.comm_bw_per_sm_GBps;
  return std::make_unique<hw::RooflineCost>(gpu, params);
}

std::vector<std::string> profile_range_warnings(const CostModelConfig& cost, const sim::OpGraph& graph,
                                                const std::vector<sim::PartitionSpec>& partitions) {
  std::vector<std::string> out;
  if (!cost.profile) return out;
  const hw::GpuProfile& p = *cost.profile;
  const auto range = [](const std::map<std::string, hw::ProfileRange>& r, const std::string& k) {
    const auto it = r.find(k);
    return it == r.end() ? hw::ProfileRange{-INFINITY, INFINITY} : it->second;
  };
  RangeCheck m{"m", range(p.gemm_range, "m")}, n{"n", range(p.gemm_range, "n")}, k{"k", range(p.gemm_range, "k")},
      sms{"SMs", range(p.gemm_range, "sms")}, ctas{"SMs", range(p.comm_range, "ctas")},
      size{"bytes per GPU", range(p.comm_range, "size_bytes"), true};
  // FlashAttention-2 compiles a kernel per head dim; one not measured takes the nearest measured
  // kernel's rates (hw::AttentionFa2Model::rates_for). Ops by the kernel they run.
  std::map<int, int> fa2_unmeasured;  // kHeadDims index -> attention ops
  const hw::AttentionFa2Model& fa2 = p.attention_fa2;
  for (const sim::Op& op : graph.ops()) {
    if (cost.attention_kernel == hw::AttentionKernel::kFa2 && op.kind == sim::OpKind::kCompute) {
      const sim::GenericCompute& c = graph.computes()[op.payload];
      if (c.kind == sim::ComputeKind::kAttentionForward || c.kind == sim::ComputeKind::kAttentionBackward) {
        const int own =
            hw::AttentionFa2Model::kernel_of(hw::AttentionFa2Model::run_head_dim(c.head_dim_qk, c.head_dim_v));
        if (!fa2.kernels[own].present()) ++fa2_unmeasured[own];
      }
    }
    // A copy-engine send runs no kernel the profile fitted.
    if (graph.by_copy_engine(op)) continue;
    const int part_sms = partitions[graph.streams()[op.stream].partition].sms;
    if (op.kind == sim::OpKind::kGemm) {
      const sim::GemmShape& g = graph.gemms()[op.payload];
      m.add(static_cast<double>(g.m));
      n.add(static_cast<double>(g.n));
      k.add(static_cast<double>(g.k));
      sms.add(part_sms);
    } else if (op.kind == sim::OpKind::kComm) {
      ctas.add(part_sms);
      size.add(graph.collectives()[op.payload].bytes);
    }
  }
  for (const RangeCheck* r : {&m, &n, &k, &sms}) r->report("GEMM ops", out);
  for (const RangeCheck* r : {&ctas, &size}) r->report("communication ops", out);
  for (const auto& [own, ops] : fa2_unmeasured) {
    const int dim = hw::AttentionFa2Model::kHeadDims[own];
    const int used = hw::AttentionFa2Model::kHeadDims[fa2.measured_kernel_for(dim)];
    out.push_back("FlashAttention-2's head-dim-" + std::to_string(dim) + " kernel, which " + std::to_string(ops) +
                  (ops == 1 ? " attention op runs" : " attention ops run") + ", was not measured: " +
                  (ops == 1 ? "it takes" : "they take") + " the head-dim-" + std::to_string(used) + " kernel's rates");
  }
  for (std::string& s : out) s = "profile " + p.gpu + ": " + s + "; the model extrapolates there";
  return out;
}

}  // namespace cs::models
