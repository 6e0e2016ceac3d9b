// The `cluster` section of a scenario: a preset, or GPU + node type + node count + fabric, with
// any catalog figure overridable. See scenarios/README.md for the keys.
#pragma once

#include "hw/fabric/fabric_graph.h"
#include "hw/yaml_reader.h"
#include "models/scenario.h"

namespace cs::models {

// Throws hw::UserError at the offending key.
ClusterConfig parse_cluster(const hw::YamlNode& node);

// A preset's cluster with the catalog's figures, before any scenario key (no SM partitions).
ClusterConfig preset_cluster(const hw::PresetSpec& preset);

// The fabric builder's spec for a fat-tree cluster (kind != "switch").
hw::FabricSpec fabric_spec(const ClusterConfig& c);

}  // namespace cs::models
