#include "models/cluster.h"

#include <stdexcept>

#include "hw/catalog.h"
#include "hw/gpu_catalog.h"

namespace cs::models {

using hw::YamlMap;
using hw::YamlNode;

namespace {

hw::FabricKind kind_of(const std::string& name) {
  for (auto k : {hw::FabricKind::kMultiPlane, hw::FabricKind::kMultiRail, hw::FabricKind::kThreeLayer})
    if (name == hw::fabric_kind_name(k)) return k;
  throw std::logic_error("no fabric kind named '" + name + "'");  // names are validated when read
}

std::vector<std::string> fabric_kinds() { return hw::fabric_kind_names(); }

// A catalog name from the scenario, else the preset's, else `fallback` (empty: required).
std::string pick(const YamlMap& m, const std::string& key, const std::vector<std::string>& names,
                 const std::string& preset_value, const std::string& fallback) {
  if (auto v = m.optional(key)) return v->as_enum(names);
  if (!preset_value.empty()) return preset_value;
  if (fallback.empty()) m.required(key);  // reports the missing key at the map
  return fallback;
}

void parse_partitions(const YamlNode& parts, ClusterConfig& c) {
  const YamlMap pm = YamlMap::with_any_keys(parts, "partition names and SM counts, e.g. {compute: 112, comm: 20}");
  int total = 0;
  for (const std::string& name : pm.keys()) {
    const YamlNode v = pm.required(name);
    // 0 SMs: none reserved. An ops stream may not run there (scenario_loader.cc); a model
    // workload's communication kernels then share its compute partition (comm_kernel_partition).
    const int sms = static_cast<int>(v.as_int(0, c.gpu.sms));
    total += sms;
    if (total > c.gpu.sms)
      v.fail("SM partitions add up to " + std::to_string(total) + " SMs, more than the " +
             std::to_string(c.gpu.sms) + " SMs of the GPU (" + c.gpu.name + ")");
    c.partitions.push_back(sim::PartitionSpec{name, sms});
    c.partition_pos.push_back(SourcePos{v.line(), v.col()});
  }
  if (c.partitions.empty()) parts.fail("'cluster.sm_partitions' names no partition");
}

// Sets the figures the scenario overrides, and which of the NVLink and HBM bandwidths it did.
void parse_overrides(const YamlNode& node, ClusterConfig& c) {
  ClusterFigures& f = c.figures;
  const YamlMap m(node, {"hbm_bw_GBps", "nvlink_bw_GBps", "nvlink_lat_ns", "pcie_bw_GBps", "nic_bw_GBps",
                         "ib_base_lat_ns", "ib_hop_lat_ns", "switch_ports"});
  const auto bw = [&](const char* key, double& out) {
    if (auto v = m.optional(key)) out = v->as_double(0, 1e6, true);
  };
  const auto lat = [&](const char* key, double& out) {
    if (auto v = m.optional(key)) out = v->as_double(0, 1e9);
  };
  bw("hbm_bw_GBps", f.hbm_bw_GBps);
  bw("nvlink_bw_GBps", f.nvlink_bw_GBps);
  lat("nvlink_lat_ns", f.nvlink_lat_ns);
  bw("pcie_bw_GBps", f.pcie_bw_GBps);
  bw("nic_bw_GBps", f.nic_bw_GBps);
  lat("ib_base_lat_ns", f.ib_base_lat_ns);
  lat("ib_hop_lat_ns", f.ib_hop_lat_ns);
  if (auto v = m.optional("switch_ports")) {
    f.switch_ports = static_cast<int>(v->as_int(4, 1024));
    if (f.switch_ports % 2) v->fail("'cluster.overrides.switch_ports' must be even");
  }
  c.nvlink_bw_overridden = m.has("nvlink_bw_GBps");
  c.hbm_bw_overridden = m.has("hbm_bw_GBps");
}

// The figures a cluster starts from: those of its catalog parts.
ClusterFigures catalog_figures(const ClusterConfig& c) {
  ClusterFigures f;
  f.hbm_bw_GBps = c.gpu.hbm_bw_GBps;
  f.nvlink_bw_GBps = c.gpu.nvlink_bw_GBps_per_direction;
  f.nvlink_lat_ns = c.gpu.nvlink_lat_ns;
  f.pcie_bw_GBps = c.node.pcie_bw_GBps_per_direction;
  f.nic_bw_GBps = c.nic.bw_GBps_per_direction;
  f.ib_base_lat_ns = c.switch_spec.base_lat_ns;
  f.ib_hop_lat_ns = c.switch_spec.hop_lat_ns;
  f.switch_ports = c.switch_spec.ports;
  return f;
}

}  // namespace

ClusterConfig preset_cluster(const hw::PresetSpec& p) {
  ClusterConfig c;
  c.preset = p.name;
  c.gpu = *hw::find_gpu(p.gpu);
  c.node = *hw::find_node(p.node);
  c.nic = *hw::find_nic(p.nic);
  c.switch_spec = *hw::find_switch(p.switch_name);
  c.nodes = p.nodes;
  c.gpus = p.nodes * c.node.gpus;
  c.fabric.kind = p.fabric_kind;
  c.fabric.oversubscription = p.oversubscription;
  c.fabric.pxn = p.pxn;
  c.figures = catalog_figures(c);
  return c;
}

ClusterConfig parse_cluster(const YamlNode& node) {
  const YamlMap m(node, {"preset", "gpu", "gpus", "node", "nodes", "nic", "switch", "sm_partitions", "fabric",
                         "overrides"});
  ClusterConfig c;
  hw::PresetSpec p;
  if (auto v = m.optional("preset")) {
    c.preset = v->as_enum(hw::preset_names());
    p = *hw::find_preset(c.preset);
  }
  c.gpu = *hw::find_gpu(pick(m, "gpu", hw::gpu_names(), p.gpu, ""));
  c.node = *hw::find_node(pick(m, "node", hw::node_names(), p.node, "hgx-8gpu"));
  c.nic = *hw::find_nic(pick(m, "nic", hw::nic_names(), p.nic, "cx7-400g"));
  c.switch_spec = *hw::find_switch(pick(m, "switch", hw::switch_names(), p.switch_name, "ib-64x400g"));

  c.fabric.kind = p.fabric_kind.empty() ? "switch" : p.fabric_kind;
  c.fabric.oversubscription = p.fabric_kind.empty() ? 1 : p.oversubscription;
  if (!p.pxn.empty()) c.fabric.pxn = p.pxn;
  std::optional<YamlMap> fm;
  if (auto f = m.optional("fabric")) {
    fm.emplace(*f, std::vector<std::string>{"kind", "oversubscription", "pxn", "link_bw_GBps", "link_lat_ns"});
    if (auto k = fm->optional("kind")) c.fabric.kind = k->as_enum(fabric_kinds());
    const bool tree = c.fabric.kind != "switch";
    for (const char* key : {"oversubscription", "pxn"})
      if (auto v = fm->optional(key); v && !tree)
        v->fail(std::string("'") + key + "' applies to the fat-tree fabrics, not to 'switch'");
    for (const char* key : {"link_bw_GBps", "link_lat_ns"})
      if (auto v = fm->optional(key); v && tree)
        v->fail(std::string("'") + key + "' applies to the 'switch' fabric; a fat-tree takes its figures from "
                "the node, NIC and switch (change them under 'cluster.overrides')");
    if (auto v = fm->optional("oversubscription")) {
      c.fabric.oversubscription = static_cast<int>(v->as_int(1, 4));
      if (c.fabric.oversubscription == 3) v->fail("'cluster.fabric.oversubscription' must be 1, 2 or 4");
    }
    if (auto v = fm->optional("pxn")) c.fabric.pxn = v->as_enum(hw::pxn_names());
  }

  ClusterFigures& f = c.figures;
  f = catalog_figures(c);
  if (auto o = m.optional("overrides")) parse_overrides(*o, c);

  if (c.fabric.kind == "switch") {
    if (auto v = m.optional("nodes")) v->fail("'nodes' applies to the fat-tree fabrics; a 'switch' cluster takes 'gpus'");
    c.gpus = static_cast<int>(m.required("gpus").as_int(1, 65536));
    c.fabric.link_bw_GBps = f.nvlink_bw_GBps;
    c.fabric.link_lat_ns = f.nvlink_lat_ns;
    if (fm) {
      if (auto v = fm->optional("link_bw_GBps")) {
        c.fabric.link_bw_GBps = v->as_double(0, 1e6, true);
        c.nvlink_bw_overridden = true;
      }
      if (auto v = fm->optional("link_lat_ns")) c.fabric.link_lat_ns = v->as_double(0, 1e9);
    }
  } else {
    if (auto v = m.optional("gpus"))
      v->fail("'gpus' follows from 'nodes' on a fat-tree fabric (" + std::to_string(c.node.gpus) + " per " + c.node.name + " node)");
    const auto nodes_key = m.optional("nodes");
    c.nodes = nodes_key ? static_cast<int>(nodes_key->as_int(1, 1 << 20)) : p.nodes;
    if (c.nodes == 0) m.required("nodes");
    c.gpus = c.nodes * c.node.gpus;
    try {
      hw::fabric_counts(fabric_spec(c));
    } catch (const std::invalid_argument& e) {
      (nodes_key ? *nodes_key : m.node()).fail(std::string("this fabric cannot be built: ") + e.what());
    }
  }
  parse_partitions(m.required("sm_partitions"), c);
  return c;
}

hw::FabricSpec fabric_spec(const ClusterConfig& c) {
  hw::FabricSpec s;
  s.kind = kind_of(c.fabric.kind);
  s.nodes = c.nodes;
  s.gpus_per_node = c.node.gpus;
  s.switch_radix = c.figures.switch_ports;
  s.oversubscription = c.fabric.oversubscription;
  s.nvlink_GBps = c.figures.nvlink_bw_GBps;
  s.pcie_GBps = c.figures.pcie_bw_GBps;
  s.nic_GBps = c.figures.nic_bw_GBps;
  s.hbm_GBps = c.figures.hbm_bw_GBps;
  s.nvlink_lat_ns = c.figures.nvlink_lat_ns;
  s.ib_base_lat_ns = c.figures.ib_base_lat_ns;
  s.ib_hop_lat_ns = c.figures.ib_hop_lat_ns;
  return s;
}

}  // namespace cs::models
