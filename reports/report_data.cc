#include "reports/report_data.h"

#include <algorithm>

namespace cs::reports {

namespace {

nlohmann::json cluster_json(const models::ClusterConfig& cl) {
  nlohmann::json parts = nlohmann::json::array();
  for (const auto& p : cl.partitions) parts.push_back({{"name", p.name}, {"sms", p.sms}});
  nlohmann::json j = {{"preset", cl.preset},
                      {"gpu", cl.gpu.name},
                      {"gpu_model", cl.gpu.model},
                      {"gpus", cl.gpus},
                      {"sms", cl.gpu.sms},
                      {"sm_partitions", parts},
                      {"hbm_gb", cl.gpu.hbm_gb},
                      {"hbm_bw_GBps", cl.figures.hbm_bw_GBps},
                      {"bf16_dense_tflops", cl.gpu.bf16_dense_tflops},
                      {"fp8_dense_tflops", cl.gpu.fp8_dense_tflops},
                      {"fabric_kind", cl.fabric.kind}};
  if (cl.fabric.kind == "switch") {
    j["switch_bw_GBps"] = cl.fabric.link_bw_GBps;
    j["switch_lat_ns"] = cl.fabric.link_lat_ns;
  } else {
    j["nodes"] = cl.nodes;
    j["node"] = cl.node.name;
    j["gpus_per_node"] = cl.node.gpus;
    j["nics_per_node"] = cl.node.nics;
    j["nvlink_bw_GBps"] = cl.figures.nvlink_bw_GBps;
    j["pcie_bw_GBps"] = cl.figures.pcie_bw_GBps;
    j["nic"] = cl.nic.name;
    j["nic_bw_GBps"] = cl.figures.nic_bw_GBps;
    j["switch"] = cl.switch_spec.name;
    j["switch_ports"] = cl.figures.switch_ports;
    j["oversubscription"] = cl.fabric.oversubscription;
    j["pxn"] = cl.fabric.pxn;
    j["ib_base_lat_ns"] = cl.figures.ib_base_lat_ns;
    j["ib_hop_lat_ns"] = cl.figures.ib_hop_lat_ns;
  }
  return j;
}

nlohmann::json profile_json(const hw::GpuProfile& p) {
  nlohmann::json params = nlohmann::json::array(), ranges = nlohmann::json::array();
  const auto add = [&](const char* group, const std::map<std::string, hw::ProfileParam>& m) {
    for (const auto& [name, prm] : m)
      params.push_back({{"group", group}, {"name", name}, {"value", prm.value}, {"origin", prm.origin}, {"source", prm.source}});
  };
  // Every section the cost model reads, so that the report names each figure the prediction used.
  add("gemm", p.gemm_params);
  add("gemm_bf16", p.gemm_bf16_params);
  add("gemm_fp8_tiles", p.gemm_fp8_tiles_params);
  add("comm", p.comm_params);
  add("deepep", p.deepep_params);
  add("kernels", p.kernel_params);
  add("attention_fa2", p.attention_fa2_params);
  add("clocks", p.clock_params);
  add("memory", p.memory_params);
  add("power", p.power_params);
  add("kernel_clock", p.kernel_clock_params);
  const auto add_range = [&](const char* group, const std::map<std::string, hw::ProfileRange>& m) {
    for (const auto& [name, r] : m) ranges.push_back({{"group", group}, {"name", name}, {"lo", r.lo}, {"hi", r.hi}});
  };
  add_range("gemm", p.gemm_range);
  add_range("comm", p.comm_range);
  return {{"gpu", p.gpu}, {"file", p.file}, {"note", p.note}, {"fitted_from", p.fitted_from}, {"params", params},
          {"ranges", ranges}};
}

}  // namespace

nlohmann::json report_json(const models::Scenario& sc, const models::RunResult& r, nlohmann::json capture,
                           const ReportContext& ctx) {
  nlohmann::json cal = {{"kind", sc.cost.kind}};
  if (sc.cost.kind == "roofline") cal["comm_bw_per_sm_GBps"] = sc.cost.comm_bw_per_sm_GBps;
  if (sc.cost.profile) cal["profile"] = profile_json(*sc.cost.profile);
  std::vector<std::string> argv = ctx.argv;
  if (!argv.empty()) {
    const auto slash = argv[0].find_last_of('/');
    if (slash != std::string::npos) argv[0] = argv[0].substr(slash + 1);
  }
  // The busiest links, as the console shows them; the result's `links` holds them all.
  std::vector<const models::LinkResult*> top;
  for (const auto& l : r.links) top.push_back(&l);
  std::stable_sort(top.begin(), top.end(), [](auto* a, auto* b) { return a->bytes > b->bytes; });
  if (top.size() > 10) top.resize(10);
  nlohmann::json links = nlohmann::json::array();
  for (const auto* l : top)
    links.push_back({{"name", l->name}, {"capacity_GBps", l->capacity_GBps}, {"bytes", l->bytes}, {"busy_us", l->busy.to_us()}});
  return {{"scenario_description", sc.description},
          {"cluster", cluster_json(sc.cluster)},
          {"links_busiest", links},
          {"links_used", r.links.size()},
          {"calibration", cal},
          {"capture", std::move(capture)},
          {"command_line", argv},
          {"scenario_text", ctx.scenario_text}};
}

}  // namespace cs::reports
