// The `cost_model` section of a scenario, and the cost model it names: the datasheet roofline, or
// a calibrated profile (bundled by GPU name, or a file fitted by `clustersim calibrate fit`).
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "hw/yaml_reader.h"
#include "models/scenario.h"
#include "sim/cost_model.h"
#include "sim/op_graph.h"

namespace cs::models {

// Reads `cost_model` (absent: the roofline). A calibrated profile must be of the cluster's GPU; a
// relative profile path is taken from the scenario file's folder. Unless the scenario overrides
// NVLink, the profile's measured NVLink bandwidth replaces the catalog's in `cluster`.
CostModelConfig parse_cost(const std::optional<hw::YamlNode>& node, ClusterConfig& cluster);
// A calibrated profile as parse_cost applies it: the cost model takes `prof`, and the cluster's HBM
// and NVLink figures become the profile's measured ones unless the scenario overrode them.
void use_profile(CostModelConfig& cost, ClusterConfig& cluster, hw::GpuProfile prof);

std::unique_ptr<sim::CostModel> make_cost_model(const CostModelConfig& cost, const hw::GpuSpec& gpu);

// Where the run leaves the ranges the profile was measured on (GEMM dimensions and SMs, the
// communication partition's SMs; under FlashAttention-2, a head dim whose kernel was not measured):
// one line per quantity, empty for the roofline.
std::vector<std::string> profile_range_warnings(const CostModelConfig& cost, const sim::OpGraph& graph,
                                                const std::vector<sim::PartitionSpec>& partitions);

}  // namespace cs::models
