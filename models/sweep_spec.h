// A sweep: a scenario run at many points, each point the scenario with some keys set to other
// values (scenarios/README.md, "Sweeps"). The `sweep:` section of a scenario file names a grid of
// axes and/or a list of points, keys derived from them, constraints that skip impossible points,
// and the objective the answers rank by.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "hw/yaml_reader.h"
#include "models/scenario.h"
#include "models/sweep_expr.h"

namespace cs::models {

// A value to put in the scenario: a scalar (plain, or quoted so it stays a string) or a list or
// map of them. Plain data, so worker threads read it without sharing yaml-cpp nodes.
struct YamlValue {
  enum Kind { kScalar, kSeq, kMap } kind = kScalar;
  std::string scalar;
  bool plain = true;
  // A list's items or a map's values, and (maps) their keys: two vectors, since a vector may hold
  // an incomplete type and a std::pair may not.
  std::vector<YamlValue> items;
  std::vector<std::string> keys;

  static YamlValue of(const hw::YamlNode& n);
  static YamlValue of(const SweepValue& v);
  std::string text() const;  // flow-style YAML, as the results show it
};

// The pseudo-key of the SM split: the communication partition's SMs, the rest of the pair's SMs
// going to the compute partition (models/sm_sweep.h; 0: no reserved partition).
inline constexpr const char* kCommSmsKey = "comm_sms";

enum class SweepObjective { kStepTime, kGpuHours, kDays, kCost, kTokensPerGpu };
const char* objective_name(SweepObjective o);
bool objective_needs_training(SweepObjective o);

struct SweepAxis {
  std::vector<std::string> keys;
  std::vector<std::vector<YamlValue>> values;  // per value: one per key
  SourcePos pos;
};

struct SweepDerive {
  std::string key;
  SweepExpr expr;
};

struct SweepConstraint {
  SweepExpr expr;
  std::string reason;
};

struct SweepSpec {
  std::string file;       // the sweep file (or the scenario, for `--comm-sms` alone)
  std::string name;
  std::string base_file;  // the scenario swept: this file, or `sweep.base`
  std::string base_text;  // its text, the `sweep:` section still in it (the loader ignores it)
  std::vector<SweepAxis> axes;  // the grid: every combination, the last axis fastest
  std::vector<std::vector<std::pair<std::string, YamlValue>>> points;  // `points:`, after the grid
  std::vector<SweepDerive> derive;
  std::vector<SweepConstraint> constraints;
  SweepObjective objective = SweepObjective::kStepTime;
  bool objective_set = false;
  bool training = true;                    // predict each point's training run where it has one
  std::vector<std::string> phases;         // the base's training phases each point runs, by name; empty: all
  std::string comm_partition, compute_partition;  // for comm_sms; empty: the model's own
  std::vector<std::string> columns;        // the keys the points set, in order: axes, points, derived
  GraphLimits limits;                      // the base's and every point's (`clustersim sweep --graph-limit`)
};

// One point: the keys it sets (in order) and, when a constraint or derivation rules it out, why.
struct SweepPoint {
  int index = 0;
  std::vector<std::pair<std::string, YamlValue>> set;
  std::string skip;
};

// Reads FILE's `sweep:` section (UserError at FILE:LINE:COL). A file without one is a sweep of no
// axes; the caller adds axes (`--comm-sms`) or refuses.
SweepSpec load_sweep_file(const std::string& path);

// Puts comm_sms over `sizes` first in the grid (`--comm-sms`); UserError when the file sweeps it.
void add_comm_sms_axis(SweepSpec& spec, const std::vector<int>& sizes);

// The grid's and list's points, derived keys evaluated and constraints applied, in order.
// UserError when there are more than kMaxSweepPoints.
std::vector<SweepPoint> expand_sweep(const SweepSpec& spec);
inline constexpr int64_t kMaxSweepPoints = 100000;

// A fingerprint of what decides the results (the sweep, its base, this build's version): results
// on file for another fingerprint are not reused.
std::string sweep_fingerprint(const SweepSpec& spec, const std::vector<SweepPoint>& points, const std::string& version);

}  // namespace cs::models
