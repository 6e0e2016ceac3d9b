#include "models/sweep_point.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <memory>

#include "hw/user_error.h"
#include "models/scenario_loader.h"
#include "models/sm_sweep.h"

namespace cs::models {

namespace {

std::vector<std::string> segments(const std::string& key) {
  std::vector<std::string> out;
  size_t start = 0;
  for (size_t dot; (dot = key.find('.', start)) != std::string::npos; start = dot + 1) out.push_back(key.substr(start, dot - start));
  out.push_back(key.substr(start));
  return out;
}

std::optional<size_t> index_of(const std::string& seg) {
  size_t i = 0;
  const auto r = std::from_chars(seg.data(), seg.data() + seg.size(), i);
  if (r.ec != std::errc() || r.ptr != seg.data() + seg.size()) return std::nullopt;
  return i;
}

std::optional<SweepValue> scalar_of(const YamlValue& v) {
  if (v.kind != YamlValue::kScalar) return std::nullopt;
  if (!v.plain) return SweepValue(v.scalar);
  return sweep_value_of(v.scalar);
}

// `v` below `segs[from..]`: a list item by its index, a map entry by its key.
std::optional<SweepValue> descend(const YamlValue& v, const std::vector<std::string>& segs, size_t from) {
  if (from == segs.size()) return scalar_of(v);
  if (v.kind == YamlValue::kMap) {
    for (size_t i = 0; i < v.keys.size(); ++i)
      if (v.keys[i] == segs[from]) return descend(v.items[i], segs, from + 1);
  } else if (v.kind == YamlValue::kSeq) {
    if (const auto i = index_of(segs[from]); i && *i < v.items.size()) return descend(v.items[*i], segs, from + 1);
  }
  return std::nullopt;
}

YAML::Node node_of(const YamlValue& v) {
  if (v.kind == YamlValue::kScalar) {
    YAML::Node n(v.scalar);
    n.SetTag(v.plain ? "?" : "!");  // the loader reads numbers and booleans from plain scalars only
    return n;
  }
  YAML::Node n(v.kind == YamlValue::kSeq ? YAML::NodeType::Sequence : YAML::NodeType::Map);
  for (size_t i = 0; i < v.items.size(); ++i) {
    if (v.kind == YamlValue::kSeq) n.push_back(node_of(v.items[i]));
    else n[v.keys[i]] = node_of(v.items[i]);
  }
  return n;
}

// Puts `value` at `segs[i..]` under `n`, making the maps on the way that the scenario lacks.
void set_at(YAML::Node n, const std::vector<std::string>& segs, size_t i, const YAML::Node& value,
            const std::string& key, const std::string& file) {
  const std::string& seg = segs[i];
  const bool last = i + 1 == segs.size();
  if (n.IsSequence()) {
    const auto idx = index_of(seg);
    if (!idx || *idx >= n.size())
      throw hw::UserError(file, 0, 0, "'" + key + "': the scenario's list has no item " + seg);
    if (last) n[*idx] = value;
    else set_at(n[*idx], segs, i + 1, value, key, file);
    return;
  }
  if (!n.IsMap()) throw hw::UserError(file, 0, 0, "'" + key + "': the scenario holds a value where the key needs a map");
  if (last) {
    n[seg] = value;
    return;
  }
  if (!n[seg] || n[seg].IsNull()) n[seg] = YAML::Node(YAML::NodeType::Map);
  set_at(n[seg], segs, i + 1, value, key, file);
}

// The base scenario's scalar at `segs[i..]` under `n`. Node handles are only ever copied, never
// assigned: assigning a yaml-cpp handle rewrites the node it refers to.
std::optional<SweepValue> base_value(const YAML::Node& n, const std::vector<std::string>& segs, size_t i) {
  if (i == segs.size()) {
    if (!n.IsScalar()) return std::nullopt;
    if (n.Tag() != "?") return SweepValue(n.Scalar());
    return sweep_value_of(n.Scalar());
  }
  if (n.IsMap()) {
    const YAML::Node child = n[segs[i]];  // const access: never inserts
    if (!child) return std::nullopt;
    return base_value(child, segs, i + 1);
  }
  if (n.IsSequence()) {
    const auto idx = index_of(segs[i]);
    if (!idx || *idx >= n.size()) return std::nullopt;
    return base_value(n[*idx], segs, i + 1);
  }
  return std::nullopt;
}

}  // namespace

PointBase::PointBase(const SweepSpec& spec) : root_(YAML::Load(spec.base_text)) {}

SweepExpr::Lookup PointBase::lookup(const SweepPoint& p) const {
  return [this, &p](const std::string& key) -> std::optional<SweepValue> {
    const auto segs = segments(key);
    for (auto it = p.set.rbegin(); it != p.set.rend(); ++it) {
      if (it->first == key) return scalar_of(it->second);
      if (key.size() > it->first.size() && key.compare(0, it->first.size() + 1, it->first + ".") == 0)
        return descend(it->second, segs, segments(it->first).size());
      if (it->first.size() > key.size() && it->first.compare(0, key.size() + 1, key + ".") == 0) return std::nullopt;
    }
    if (key == kCommSmsKey) return std::nullopt;
    return base_value(root_, segs, 0);
  };
}

Scenario load_sweep_point(const SweepSpec& spec, const SweepPoint& p) {
  YAML::Node doc = YAML::Load(spec.base_text);
  for (const auto& [key, value] : p.set)
    if (key != kCommSmsKey) set_at(doc, segments(key), 0, node_of(value), key, spec.base_file);
  if (!spec.phases.empty() && doc["training"].IsMap() && doc["training"]["phases"].IsSequence()) {
    // Keys index the base's phase list, so the phases are picked after they are set.
    YAML::Node kept(YAML::NodeType::Sequence);
    for (const YAML::Node& ph : doc["training"]["phases"]) {
      const bool named = ph.IsMap() && ph["name"] && ph["name"].IsScalar();
      if (named && std::find(spec.phases.begin(), spec.phases.end(), ph["name"].Scalar()) != spec.phases.end())
        kept.push_back(ph);
    }
    doc["training"]["phases"] = kept;
  }
  auto src = std::make_shared<hw::YamlSource>(hw::YamlSource{spec.base_file, spec.base_text});
  return load_scenario_node(hw::YamlNode(doc, src, "", 0), spec.limits);
}

Scenario sweep_point_scenario(const SweepSpec& spec, const SweepPoint& p) {
  Scenario sc = load_sweep_point(spec, p);
  const auto n = point_comm_sms(p, spec.base_file);
  if (!n) return sc;
  const auto [comm, compute] = sm_split_partitions(sc, spec.comm_partition, spec.compute_partition);
  return with_comm_sms(sc, comm, compute, *n);
}

std::optional<int> point_comm_sms(const SweepPoint& p, const std::string& file) {
  std::optional<int> out;
  for (const auto& [key, value] : p.set) {
    if (key != kCommSmsKey) continue;
    const auto v = scalar_of(value);
    const double* d = v ? std::get_if<double>(&*v) : nullptr;
    if (!d || !(*d >= 0 && *d <= 1e6) || *d != std::floor(*d))
      throw hw::UserError(file, 0, 0, "comm_sms must be a whole number >= 0, found " + value.text());
    out = static_cast<int>(*d);
  }
  return out;
}

}  // namespace cs::models
