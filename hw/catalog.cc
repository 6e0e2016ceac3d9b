#include "hw/catalog.h"


#include "hw/catalog_parse.h"
#include "hw/gpu_catalog.h"
#include "hw/yaml_reader.h"

namespace cs::hw {

namespace {

template <typename T>
const T* find_in(const std::vector<T>& v, const std::string& name) {
  for (const T& x : v)
    if (x.name == name) return &x;
  return nullptr;
}

template <typename T>
std::vector<std::string> names_of(const std::vector<T>& v) {
  std::vector<std::string> out;
  for (const T& x : v) out.push_back(x.name);
  return out;
}

}  // namespace

const std::vector<NicSpec>& nic_catalog() {
  static const auto v = load_catalog_folder<NicSpec>("hw/nics/", [](const YamlNode& root) {
    const YamlMap m(root, {"name", "model", "bw_GBps_per_direction"});
    NicSpec n;
    n.name = m.required("name").as_string();
    n.model = m.required("model").as_string();
    n.bw_GBps_per_direction = catalog_figure(m, "bw_GBps_per_direction", n.sources);
    return n;
  });
  return v;
}

const std::vector<SwitchSpec>& switch_catalog() {
  static const auto v = load_catalog_folder<SwitchSpec>("hw/switches/", [](const YamlNode& root) {
    const YamlMap m(root, {"name", "model", "ports", "port_bw_GBps_per_direction", "hop_lat_ns", "base_lat_ns"});
    SwitchSpec s;
    s.name = m.required("name").as_string();
    s.model = m.required("model").as_string();
    s.ports = static_cast<int>(catalog_figure(m, "ports", s.sources));
    s.port_bw_GBps_per_direction = catalog_figure(m, "port_bw_GBps_per_direction", s.sources);
    s.hop_lat_ns = catalog_figure(m, "hop_lat_ns", s.sources);
    s.base_lat_ns = catalog_figure(m, "base_lat_ns", s.sources);
    return s;
  });
  return v;
}

const std::vector<NodeSpec>& node_catalog() {
  static const auto v = load_catalog_folder<NodeSpec>("hw/nodes/", [](const YamlNode& root) {
    const YamlMap m(root, {"name", "model", "gpus", "nvswitch_chips", "nics", "pcie_bw_GBps_per_direction"});
    NodeSpec n;
    n.name = m.required("name").as_string();
    n.model = m.required("model").as_string();
    n.gpus = static_cast<int>(catalog_figure(m, "gpus", n.sources));
    n.nvswitch_chips = static_cast<int>(catalog_figure(m, "nvswitch_chips", n.sources));
    n.nics = static_cast<int>(catalog_figure(m, "nics", n.sources));
    n.pcie_bw_GBps_per_direction = catalog_figure(m, "pcie_bw_GBps_per_direction", n.sources);
    return n;
  });
  return v;
}

const std::vector<PresetSpec>& preset_catalog() {
  static const auto v = load_catalog_folder<PresetSpec>("hw/presets/", [](const YamlNode& root) {
    const YamlMap m(root, {"name", "description", "source", "gpu", "node", "nodes", "nic", "switch", "fabric"});
    PresetSpec p;
    p.name = m.required("name").as_string();
    p.description = m.required("description").as_string();
    p.source = m.required("source").as_string();
    p.gpu = m.required("gpu").as_enum(gpu_names());
    p.node = m.required("node").as_enum(node_names());
    p.nodes = static_cast<int>(m.required("nodes").as_int(1, 1 << 20));
    p.nic = m.required("nic").as_enum(nic_names());
    p.switch_name = m.required("switch").as_enum(switch_names());
    const YamlMap f(m.required("fabric"), {"kind", "oversubscription", "pxn"});
    p.fabric_kind = f.required("kind").as_enum(fabric_kind_names());
    p.oversubscription = static_cast<int>(f.required("oversubscription").as_int(1, 4));
    p.pxn = f.required("pxn").as_enum(pxn_names());
    return p;
  });
  return v;
}

const NicSpec* find_nic(const std::string& name) { return find_in(nic_catalog(), name); }
const SwitchSpec* find_switch(const std::string& name) { return find_in(switch_catalog(), name); }
const NodeSpec* find_node(const std::string& name) { return find_in(node_catalog(), name); }
const PresetSpec* find_preset(const std::string& name) { return find_in(preset_catalog(), name); }
std::vector<std::string> nic_names() { return names_of(nic_catalog()); }
std::vector<std::string> switch_names() { return names_of(switch_catalog()); }
std::vector<std::string> node_names() { return names_of(node_catalog()); }
std::vector<std::string> preset_names() { return names_of(preset_catalog()); }
std::vector<std::string> fabric_kind_names() {
  return {"switch", "multi_plane_fat_tree", "multi_rail_fat_tree", "three_layer_fat_tree"};
}
std::vector<std::string> pxn_names() { return {"none", "source", "destination"}; }

}  // namespace cs::hw
