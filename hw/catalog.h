// The rest of the hardware catalog: NICs, switches, node types and cluster presets, from
// hw/{nics,switches,nodes,presets}/*.yaml compiled into the program. Every figure keeps its source.
#pragma once

#include <map>
#include <string>
#include <vector>

namespace cs::hw {

struct NicSpec {
  std::string name, model;
  double bw_GBps_per_direction = 0;
  std::map<std::string, std::string> sources;
};

struct SwitchSpec {
  std::string name, model;
  int ports = 0;
  double port_bw_GBps_per_direction = 0;
  double hop_lat_ns = 0, base_lat_ns = 0;
  std::map<std::string, std::string> sources;
};

struct NodeSpec {
  std::string name, model;
  int gpus = 0, nvswitch_chips = 0, nics = 0;
  double pcie_bw_GBps_per_direction = 0;
  std::map<std::string, std::string> sources;
};

// A named cluster: the same keys a scenario's `cluster` section takes (see scenarios/README.md).
struct PresetSpec {
  std::string name, description, source;
  std::string gpu, node, nic, switch_name;
  int nodes = 0;
  std::string fabric_kind;  // multi_plane_fat_tree, multi_rail_fat_tree, three_layer_fat_tree
  int oversubscription = 1;
  std::string pxn;          // none, source, destination
};

const std::vector<NicSpec>& nic_catalog();
const std::vector<SwitchSpec>& switch_catalog();
const std::vector<NodeSpec>& node_catalog();
const std::vector<PresetSpec>& preset_catalog();

// nullptr when unknown.
const NicSpec* find_nic(const std::string& name);
const SwitchSpec* find_switch(const std::string& name);
const NodeSpec* find_node(const std::string& name);
const PresetSpec* find_preset(const std::string& name);

// Names, sorted, for messages and suggestions.
std::vector<std::string> nic_names();
std::vector<std::string> switch_names();
std::vector<std::string> node_names();
std::vector<std::string> preset_names();
std::vector<std::string> fabric_kind_names();
std::vector<std::string> pxn_names();

}  // namespace cs::hw
