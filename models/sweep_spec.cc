#include "models/sweep_spec.h"

#include <algorithm>
#include <filesystem>
#include <map>
#include <set>
#include <fstream>
#include <sstream>

#include <fmt/format.h>

#include "hw/embedded_catalog.h"
#include "models/sweep_point.h"

namespace cs::models {

using hw::YamlMap;
using hw::YamlNode;

YamlValue YamlValue::of(const YamlNode& n) {
  YamlValue v;
  if (n.is_map()) {
    v.kind = kMap;
    const YamlMap m = YamlMap::with_any_keys(n, "keys and values");
    for (const std::string& k : m.keys()) {
      v.keys.push_back(k);
      v.items.push_back(of(m.required(k)));
    }
  } else if (n.is_seq()) {
    v.kind = kSeq;
    for (const YamlNode& item : n.items()) v.items.push_back(of(item));
  } else if (n.is_null()) {
    n.fail("a sweep value cannot be empty");
  } else {
    v.scalar = n.as_string();
    v.plain = n.is_plain();
  }
  return v;
}

YamlValue YamlValue::of(const SweepValue& sv) {
  YamlValue v;
  v.scalar = sweep_value_text(sv);
  // A computed string stays a string even where it reads as a number or a boolean.
  v.plain = std::holds_alternative<double>(sv);
  return v;
}

std::string YamlValue::text() const {
  if (kind == kScalar) return plain ? scalar : "'" + scalar + "'";
  std::string out = kind == kSeq ? "[" : "{";
  for (size_t i = 0; i < items.size(); ++i) {
    if (i) out += ", ";
    if (kind == kMap) out += keys[i] + ": ";
    out += items[i].text();
  }
  return out + (kind == kSeq ? "]" : "}");
}

const char* objective_name(SweepObjective o) {
  switch (o) {
    case SweepObjective::kStepTime: return "step_time";
    case SweepObjective::kGpuHours: return "gpu_hours";
    case SweepObjective::kDays: return "days";
    case SweepObjective::kCost: return "cost";
    case SweepObjective::kTokensPerGpu: return "tokens_per_s_per_gpu";
  }
  return "";
}

bool objective_needs_training(SweepObjective o) {
  return o == SweepObjective::kGpuHours || o == SweepObjective::kDays || o == SweepObjective::kCost;
}

namespace {

std::string read_text(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw hw::UserError(path, 0, 0, "cannot read the file");
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

// The base scenario's nodes that YAML aliases share (an anchor and its `*name` uses are one node in
// yaml-cpp, at one position): setting a key through one would change every place that uses it.
class SharedNodes {
 public:
  explicit SharedNodes(const std::string& text) : root_(YAML::Load(text)) {
    std::map<std::pair<int, int>, int> seen;
    visit(root_, seen, 0);
    for (const auto& [pos, n] : seen)
      if (n > 1) shared_.insert(pos);
  }
  // The position of the first shared node on `key`'s path, if any.
  std::optional<std::pair<int, int>> on_path(const std::string& key) const { return walk(root_, key, 0); }

 private:
  static std::pair<int, int> pos_of(const YAML::Node& n) { return {n.Mark().line + 1, n.Mark().column + 1}; }
  void visit(const YAML::Node& n, std::map<std::pair<int, int>, int>& seen, int depth) {
    if (!n.IsDefined() || n.Mark().is_null() || depth > hw::kMaxYamlDepth) return;
    if (++seen[pos_of(n)] > 1) return;  // an alias: its insides were counted at the anchor
    if (n.IsMap())
      for (const auto& kv : n) visit(kv.second, seen, depth + 1);
    else if (n.IsSequence())
      for (const auto& item : n) visit(item, seen, depth + 1);
  }
  std::optional<std::pair<int, int>> walk(const YAML::Node& n, const std::string& key, size_t from) const {
    if (!n.IsDefined() || n.Mark().is_null()) return std::nullopt;
    if (shared_.count(pos_of(n))) return pos_of(n);
    if (from >= key.size()) return std::nullopt;
    const size_t dot = std::min(key.find('.', from), key.size());
    const std::string seg = key.substr(from, dot - from);
    if (n.IsMap()) return walk(n[seg], key, dot + 1);
    if (n.IsSequence() && !seg.empty() && seg.find_first_not_of("0123456789") == std::string::npos &&
        seg.size() < 9 && std::stoul(seg) < n.size())
      return walk(n[std::stoul(seg)], key, dot + 1);
    return std::nullopt;
  }
  const YAML::Node root_;
  std::set<std::pair<int, int>> shared_;
};

// A key: dotted segments of letters, digits and '_' (a list index is a segment of digits).
void check_key(const YamlNode& n, const std::string& key, const SharedNodes& shared) {
  bool ok = !key.empty() && key.size() < 256 && key.front() != '.' && key.back() != '.' &&
            key.find("..") == std::string::npos;
  for (char c : key) ok = ok && (std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.');
  if (!ok) n.fail("'" + key + "' is not a scenario key (write a dotted path such as workload.layout.pp)");
  if (key.rfind("sweep", 0) == 0 && (key.size() == 5 || key[5] == '.')) n.fail("a sweep cannot set its own keys");
  if (key.rfind("schema_version", 0) == 0) n.fail("a sweep cannot change the schema version");
  if (const auto at = shared.on_path(key))
    n.fail("'" + key + "' runs through a YAML anchor that other places of the base scenario use (line " +
           std::to_string(at->first) + ", column " + std::to_string(at->second) +
           "): setting it would change them all; write that part out in the base");
}

void parse_axis(const YamlNode& n, SweepSpec& spec, const SharedNodes& shared) {
  const YamlMap m(n, {"key", "keys", "values", "range"});
  SweepAxis axis;
  axis.pos = SourcePos{n.line(), n.col()};
  if (m.exactly_one_of({"key", "keys"}) == "key") {
    axis.keys.push_back(m.required("key").as_string());
    check_key(m.required("key"), axis.keys.back(), shared);
  } else {
    for (const YamlNode& k : m.required("keys").items()) {
      axis.keys.push_back(k.as_string());
      check_key(k, axis.keys.back(), shared);
    }
    if (axis.keys.size() < 2) m.required("keys").fail("'keys' names two keys or more (one key: write 'key')");
  }
  const bool single = m.has("key");
  if (m.exactly_one_of({"values", "range"}) == "range") {
    if (!single) m.required("range").fail("a range sets one key; give 'values' for several keys");
    const YamlMap r(m.required("range"), {"from", "to", "step"});
    const double from = r.required("from").as_double(-1e15, 1e15), to = r.required("to").as_double(-1e15, 1e15);
    const double step = r.required("step").as_double(0, 1e15, true);
    if (to < from) r.required("to").fail("'to' must not be below 'from'");
    if ((to - from) / step >= static_cast<double>(kMaxSweepPoints)) r.node().fail("the range has too many values");
    for (int64_t i = 0; from + static_cast<double>(i) * step <= to * (1 + 1e-12) + 1e-12; ++i)
      axis.values.push_back({YamlValue::of(SweepValue(from + static_cast<double>(i) * step))});
  } else {
    for (const YamlNode& v : m.required("values").items()) {
      if (single) {
        axis.values.push_back({YamlValue::of(v)});
        continue;
      }
      const auto parts = v.is_seq() ? v.items() : std::vector<YamlNode>{};
      if (parts.size() != axis.keys.size())
        v.fail(fmt::format("each value of this axis is a list of {} values, one per key", axis.keys.size()));
      std::vector<YamlValue> row;
      for (const YamlNode& p : parts) row.push_back(YamlValue::of(p));
      axis.values.push_back(std::move(row));
    }
  }
  if (axis.values.empty()) n.fail("the axis has no value");
  for (const auto& k : axis.keys)
    for (const auto& c : spec.columns)
      if (k == c) n.fail("'" + k + "' is already swept by another axis");
  spec.columns.insert(spec.columns.end(), axis.keys.begin(), axis.keys.end());
  spec.axes.push_back(std::move(axis));
}

void add_column(SweepSpec& spec, const std::string& key) {
  for (const auto& c : spec.columns)
    if (c == key) return;
  spec.columns.push_back(key);
}

void parse_sweep_section(const YamlNode& node, SweepSpec& spec) {
  const SharedNodes shared(spec.base_text);
  const YamlMap m(node,
                  {"base", "objective", "training", "phases", "grid", "points", "derive", "constraints", "partitions"});
  if (auto o = m.optional("objective")) {
    const std::string s = o->as_enum({"step_time", "gpu_hours", "days", "cost", "tokens_per_s_per_gpu"});
    for (auto k : {SweepObjective::kStepTime, SweepObjective::kGpuHours, SweepObjective::kDays, SweepObjective::kCost,
                   SweepObjective::kTokensPerGpu})
      if (s == objective_name(k)) spec.objective = k;
    spec.objective_set = true;
  }
  if (auto t = m.optional("training")) spec.training = t->as_bool();
  if (auto ph = m.optional("phases")) {
    // Names of the base's training phases, e.g. a layout sweep of pretraining alone while the
    // base's context-extension phases keep layouts of their own.
    std::vector<std::string> names;
    const YAML::Node base = YAML::Load(spec.base_text);
    if (base.IsMap() && base["training"] && base["training"]["phases"] && base["training"]["phases"].IsSequence())
      for (const YAML::Node& p : base["training"]["phases"])
        if (p.IsMap() && p["name"] && p["name"].IsScalar()) names.push_back(p["name"].Scalar());
    if (names.empty()) ph->fail("'phases' picks training phases, but the base scenario has none");
    for (const YamlNode& item : ph->items()) {
      const std::string name = item.as_enum(names);
      if (std::find(spec.phases.begin(), spec.phases.end(), name) != spec.phases.end())
        item.fail("phase '" + name + "' is listed twice");
      spec.phases.push_back(name);
    }
    if (spec.phases.empty()) ph->fail("'phases' lists no phase");
  }
  if (auto p = m.optional("partitions")) {
    const YamlMap pm(*p, {"comm", "compute"});
    if (auto c = pm.optional("comm")) spec.comm_partition = c->as_string();
    if (auto c = pm.optional("compute")) spec.compute_partition = c->as_string();
  }
  if (auto g = m.optional("grid"))
    for (const YamlNode& a : g->items()) parse_axis(a, spec, shared);
  if (auto pts = m.optional("points")) {
    for (const YamlNode& p : pts->items()) {
      const YamlMap pm = YamlMap::with_any_keys(p, "scenario keys and their values");
      std::vector<std::pair<std::string, YamlValue>> set;
      for (const std::string& k : pm.keys()) {
        check_key(pm.required(k), k, shared);
        for (const auto& a : spec.axes)
          for (const auto& ak : a.keys)
            if (ak == k) pm.required(k).fail("'" + k + "' is swept by the grid; a point cannot set it too");
        set.emplace_back(k, YamlValue::of(pm.required(k)));
      }
      if (set.empty()) p.fail("a point sets no key");
      spec.points.push_back(std::move(set));
    }
    for (const auto& p : spec.points)
      for (const auto& kv : p) add_column(spec, kv.first);
  }
  if (auto d = m.optional("derive")) {
    const YamlMap dm = YamlMap::with_any_keys(*d, "scenario keys and the expressions that give them");
    for (const std::string& k : dm.keys()) {
      check_key(dm.required(k), k, shared);
      if (k == kCommSmsKey) dm.required(k).fail("comm_sms is swept, not derived");
      for (const auto& c : spec.columns)
        if (c == k) dm.required(k).fail("'" + k + "' is already set by the grid or the points");
      spec.derive.push_back({k, SweepExpr::parse(dm.required(k))});
      spec.columns.push_back(k);
    }
  }
  if (auto c = m.optional("constraints")) {
    for (const YamlNode& item : c->items()) {
      const YamlMap cm(item, {"require", "reason"});
      SweepConstraint con{SweepExpr::parse(cm.required("require")), ""};
      con.reason = cm.optional("reason") ? cm.required("reason").as_string() : "fails " + con.expr.text();
      spec.constraints.push_back(std::move(con));
    }
  }
}

}  // namespace

SweepSpec load_sweep_file(const std::string& path) {
  SweepSpec spec;
  spec.file = path;
  spec.base_file = path;
  spec.base_text = read_text(path);
  const YamlNode root = hw::parse_yaml(spec.base_text, path);
  if (!root.is_map()) root.fail("a scenario or sweep file is a map of keys");
  const YamlMap top = YamlMap::with_any_keys(root, "scenario keys");
  if (auto n = top.optional("name")) spec.name = n->as_string();
  const auto sweep = top.optional("sweep");
  if (!sweep) return spec;
  const YamlMap sm = YamlMap::with_any_keys(*sweep, "sweep keys");
  if (auto b = sm.optional("base")) {
    // The file is a sweep over another scenario: it holds nothing of a scenario itself.
    for (const std::string& k : top.keys())
      if (k != "schema_version" && k != "name" && k != "description" && k != "sweep")
        top.required(k).fail("a sweep with a 'base' scenario holds no scenario keys ('" + k + "' belongs in " +
                             b->as_string() + ")");
    spec.base_file = (std::filesystem::path(path).parent_path() / b->as_string()).lexically_normal().string();
    try {
      spec.base_text = read_text(spec.base_file);
    } catch (const hw::UserError&) {
      b->fail("cannot read the base scenario " + spec.base_file);
    }
    if (hw::parse_yaml(spec.base_text, spec.base_file).is_map() &&
        YamlMap::with_any_keys(hw::parse_yaml(spec.base_text, spec.base_file), "scenario keys").has("sweep"))
      b->fail("the base scenario " + spec.base_file + " is itself a sweep");
  }
  parse_sweep_section(*sweep, spec);
  if (spec.name.empty()) spec.name = std::filesystem::path(path).stem().string();
  return spec;
}

void add_comm_sms_axis(SweepSpec& spec, const std::vector<int>& sizes) {
  if (std::find(spec.columns.begin(), spec.columns.end(), kCommSmsKey) != spec.columns.end())
    throw hw::UserError("--comm-sms", 0, 0, spec.file + " already sweeps comm_sms");
  SweepAxis axis;
  axis.keys = {kCommSmsKey};
  for (int n : sizes) axis.values.push_back({YamlValue::of(SweepValue(static_cast<double>(n)))});
  spec.axes.insert(spec.axes.begin(), std::move(axis));
  spec.columns.insert(spec.columns.begin(), kCommSmsKey);
}

std::vector<SweepPoint> expand_sweep(const SweepSpec& spec) {
  const PointBase base(spec);
  int64_t grid = spec.axes.empty() ? (spec.points.empty() ? 1 : 0) : 1;
  for (const auto& a : spec.axes) {
    grid *= static_cast<int64_t>(a.values.size());
    if (grid > kMaxSweepPoints) break;
  }
  if (grid + static_cast<int64_t>(spec.points.size()) > kMaxSweepPoints)
    throw hw::UserError(spec.file, spec.axes.empty() ? 0 : spec.axes.front().pos.line,
                        spec.axes.empty() ? 0 : spec.axes.front().pos.col,
                        fmt::format("the sweep has more than {} points", kMaxSweepPoints));
  std::vector<SweepPoint> out;
  auto finish = [&](SweepPoint p) {
    p.index = static_cast<int>(out.size());
    try {
      for (const SweepDerive& d : spec.derive)
        p.set.emplace_back(d.key, YamlValue::of(d.expr.eval(base.lookup(p))));
      for (const SweepConstraint& c : spec.constraints) {
        const SweepValue v = c.expr.eval(base.lookup(p));
        const auto* d = std::get_if<double>(&v);
        if (!d) throw SweepEvalError("the constraint '" + c.expr.text() + "' gives a string, not a truth value");
        if (*d == 0) {
          p.skip = c.reason;
          break;
        }
      }
    } catch (const SweepEvalError& e) {
      p.skip = e.what();
    }
    out.push_back(std::move(p));
  };
  for (int64_t i = 0; i < grid; ++i) {
    SweepPoint p;
    int64_t rest = i;
    std::vector<size_t> pick(spec.axes.size());
    for (size_t a = spec.axes.size(); a-- > 0;) {
      pick[a] = static_cast<size_t>(rest % static_cast<int64_t>(spec.axes[a].values.size()));
      rest /= static_cast<int64_t>(spec.axes[a].values.size());
    }
    for (size_t a = 0; a < spec.axes.size(); ++a)
      for (size_t k = 0; k < spec.axes[a].keys.size(); ++k)
        p.set.emplace_back(spec.axes[a].keys[k], spec.axes[a].values[pick[a]][k]);
    finish(std::move(p));
  }
  for (const auto& set : spec.points) {
    SweepPoint p;
    p.set = set;
    finish(std::move(p));
  }
  return out;
}

std::string sweep_fingerprint(const SweepSpec& spec, const std::vector<SweepPoint>& points, const std::string& version) {
  // FNV-1a over everything that decides a point's result. The catalog and the bundled profiles are
  // compiled in, and the version string is stamped only when the build is configured: a profile
  // refitted and rebuilt keeps the version, so their text goes in too, or a resumed sweep would
  // keep points of the old profile.
  uint64_t h = 1469598103934665603ull;
  auto mix = [&](std::string_view s) {
    for (unsigned char c : s) h = (h ^ c) * 1099511628211ull;
    h = (h ^ 0xff) * 1099511628211ull;
  };
  mix(version);
  for (const hw::EmbeddedFile& f : hw::embedded_catalog_files()) {
    mix(f.path);
    mix(f.text);
  }
  mix(spec.base_text);
  mix(spec.training ? "training" : "step");
  for (const std::string& p : spec.phases) mix("phase " + p);
  mix(spec.comm_partition);
  mix(spec.compute_partition);
  for (const SweepPoint& p : points) {
    for (const auto& kv : p.set) mix(kv.first + "=" + kv.second.text());
    mix(p.skip);
  }
  return fmt::format("{:016x}", h);
}

}  // namespace cs::models
