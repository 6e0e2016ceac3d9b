// A sweep point made into a scenario: the base scenario's YAML with the point's keys set, loaded
// by the ordinary loader (so a point is checked exactly as a file would be), then given its SM
// split when it sets comm_sms.
#pragma once

#include <optional>
#include <string>

#include <yaml-cpp/yaml.h>

#include "models/scenario.h"
#include "models/sweep_spec.h"

namespace cs::models {

// The base scenario's YAML, read once, answering the expressions' key lookups for any point.
class PointBase {
 public:
  explicit PointBase(const SweepSpec& spec);
  // A lookup for `p`: its own keys first (the last set wins; a key under a map it sets is read
  // from that map), then the base scenario's. Nothing for keys neither sets, or that are not scalars.
  SweepExpr::Lookup lookup(const SweepPoint& p) const;

 private:
  YAML::Node root_;
};

// The point's scenario (hw::UserError when the loader refuses it). Its file is the base scenario's;
// errors in a value the point set carry no line, as that value has no place in the base file.
Scenario load_sweep_point(const SweepSpec& spec, const SweepPoint& p);

// The point's scenario with its SM split applied: what the point runs.
Scenario sweep_point_scenario(const SweepSpec& spec, const SweepPoint& p);

// The point's comm_sms, if it sets it (UserError in `file` when it is not a whole number >= 0).
std::optional<int> point_comm_sms(const SweepPoint& p, const std::string& file);

}  // namespace cs::models
