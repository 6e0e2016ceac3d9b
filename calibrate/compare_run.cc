#include "calibrate/compare_run.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <iomanip>
#include <limits>
#include <sstream>

#include "calibrate/measurements.h"
#include "hw/user_error.h"
#include "models/op_workload.h"
#include "models/scenario_runner.h"

namespace cs::calibrate {

using json = nlohmann::json;

double Tally::error_pct() const {
  if (measured_ms <= 0) return std::numeric_limits<double>::quiet_NaN();
  return (simulated_ms - measured_ms) / measured_ms * 100.0;
}

namespace {

KernelClass class_of(const sim::OpGraph& g, const sim::Op& o) {
  const std::string& label = g.label(o);
  switch (o.kind) {
    case sim::OpKind::kGemm: return KernelClass::kGemm;
    case sim::OpKind::kCompute:
      return label.find("attn.core") != std::string::npos || label.find("attention") != std::string::npos
                 ? KernelClass::kAttention
                 : KernelClass::kOther;
    case sim::OpKind::kComm: {
      const sim::Collective& c = g.collectives()[o.payload];
      if (label.find("dispatch") != std::string::npos) return KernelClass::kDispatch;
      if (label.find("combine") != std::string::npos) return KernelClass::kCombine;
      switch (c.kind) {
        case sim::CollectiveKind::kAllToAll:
        case sim::CollectiveKind::kAllToAllV: return KernelClass::kAllToAll;
        case sim::CollectiveKind::kSend: return KernelClass::kSendRecv;
        default: return KernelClass::kCollective;
      }
    }
  }
  return KernelClass::kOther;
}

struct Interval {
  double a, b;
};

// Total length of the union of intervals.
std::vector<Interval> merged(std::vector<Interval> v) {
  std::sort(v.begin(), v.end(), [](const Interval& x, const Interval& y) { return x.a < y.a; });
  std::vector<Interval> out;
  for (const Interval& i : v) {
    if (!out.empty() && i.a <= out.back().b) out.back().b = std::max(out.back().b, i.b);
    else out.push_back(i);
  }
  return out;
}
double length(const std::vector<Interval>& m) {
  double s = 0;
  for (const Interval& i : m) s += i.b - i.a;
  return s;
}
double intersection(const std::vector<Interval>& x, const std::vector<Interval>& y) {
  double s = 0;
  size_t i = 0, j = 0;
  while (i < x.size() && j < y.size()) {
    s += std::max(0.0, std::min(x[i].b, y[j].b) - std::max(x[i].a, y[j].a));
    if (x[i].b < y[j].b) ++i; else ++j;
  }
  return s;
}

struct Timeline {
  double span_us = 0, busy_us = 0, overlap_us = 0;
};
template <typename T>
Timeline timeline(const std::vector<T>& ops) {
  std::vector<Interval> all, gemm, comm;
  double lo = 1e300, hi = -1e300;
  for (const T& o : ops) {
    const Interval i{o.start_us, o.start_us + o.dur_us};
    all.push_back(i);
    lo = std::min(lo, i.a);
    hi = std::max(hi, i.b);
    if (o.cls == KernelClass::kGemm) gemm.push_back(i);
    if (is_communication(o.cls)) comm.push_back(i);
  }
  Timeline t;
  if (ops.empty()) return t;
  t.span_us = hi - lo;
  t.busy_us = length(merged(all));
  t.overlap_us = intersection(merged(gemm), merged(comm));
  return t;
}

std::string lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

// cs_overlap: the case of the scenario's GEMM shape and SM split, as a timeline of each stream's
// ops back to back at the measured median per-op times (together when both ran, else alone).
std::vector<MeasuredKernel> overlap_timeline(const std::string& path, const std::vector<SimulatedOp>& sim,
                                             const models::Scenario& sc, CompareReport& r) {
  MeasurementSet set;
  read_measurements(path, set);
  r.measured_gpu = set.sources.empty() ? "" : set.sources[0].gpu;
  const SimulatedOp* g = nullptr;
  const SimulatedOp* c = nullptr;
  int gemms = 0, comms = 0;
  for (const SimulatedOp& o : sim) {
    if (o.cls == KernelClass::kGemm) { if (!g) g = &o; ++gemms; }
    else if (is_communication(o.cls)) { if (!c) c = &o; ++comms; }
    else throw hw::UserError(sc.file, 0, 0, "cs_overlap measures GEMMs beside all-to-alls only; the scenario also runs '" + o.label + "'");
  }
  if (!g) throw hw::UserError(sc.file, 0, 0, "the scenario runs no GEMM, which cs_overlap output is about");
  const int comm_sms = c ? c->partition_sms : 0;
  const OverlapCase* best = nullptr;
  std::string have;
  for (const OverlapCase& oc : set.overlaps) {
    have += "\n  " + oc.shape_name + " on " + std::to_string(oc.compute_sms) + " + " + std::to_string(oc.comm_sms) +
            " SMs (" + std::to_string(oc.ctas) + " CTAs)";
    if (oc.shape.m != g->gemm.m || oc.shape.n != g->gemm.n || oc.shape.k != g->gemm.k || oc.shape.groups != g->gemm.groups)
      continue;
    if (oc.compute_sms != g->partition_sms || oc.comm_sms != comm_sms) continue;
    if (c && std::abs(oc.a2a_bytes - c->bytes) > 0.01 * oc.a2a_bytes) continue;
    if (!best || std::abs(oc.ctas - comm_sms) < std::abs(best->ctas - comm_sms)) best = &oc;
  }
  if (!best) {
    std::ostringstream s;
    s << "no case of " << path << " matches the scenario (GEMM " << g->gemm.m << "x" << g->gemm.n << "x" << g->gemm.k
      << " x" << g->gemm.groups << " on " << g->partition_sms << " SMs, communication on " << comm_sms << " SMs";
    if (c) s << ", " << c->bytes << " bytes per GPU";
    s << "); it has:" << have;
    throw hw::UserError(sc.file, 0, 0, s.str());
  }
  const bool together = c != nullptr && best->ctas > 0;
  r.notes.push_back("cs_overlap case " + best->shape_name + ", " + std::to_string(best->ctas) + " CTAs on " +
                    std::to_string(best->comm_sms) + " comm SMs: a timeline of the scenario's op counts, each stream's ops "
                    "back to back at the measured median per-op time (" + (together ? "together" : "alone") + ")");
  std::vector<MeasuredKernel> out;
  double t = 0;
  const double g_us = together ? best->gemm_together_us : best->gemm_alone_us;
  for (int i = 0; i < gemms; ++i, t += g_us) out.push_back({"gemm", KernelClass::kGemm, sim::MemoryForm::kAny, t, g_us, 0});
  t = 0;
  const double a_us = together ? best->a2a_together_us : best->a2a_alone_us;
  for (int i = 0; i < comms; ++i, t += a_us) out.push_back({"all_to_all", KernelClass::kAllToAll, sim::MemoryForm::kAny, t, a_us, 1});
  return out;
}

}  // namespace

std::vector<SimulatedOp> simulate_ops(const models::Scenario& sc, int gpu, double& makespan_us) {
  const models::OpWorkload work = models::build_op_workload(sc);
  const sim::OpGraph& g = work.graph;
  std::vector<SimulatedOp> ops;
  // The run's own op timings (no trace written and read back): every op of `gpu`.
  models::RunOptions options;
  options.inspect = [&](const models::OpWorkload&, const sim::ExecResult& ex) {
    for (size_t i = 0; i < g.ops().size(); ++i) {
      const sim::Op& o = g.ops()[i];
      const sim::Stream& s = g.streams()[o.stream];
      if (s.gpu != gpu || !ex.ops[i].done()) continue;
      SimulatedOp op;
      op.label = g.label(o);
      op.cls = class_of(g, o);
      if (o.kind == sim::OpKind::kCompute) op.form = g.computes()[o.payload].form;
      op.start_us = ex.ops[i].start.to_us();
      op.dur_us = (ex.ops[i].end - ex.ops[i].start).to_us();
      op.stream = static_cast<int>(o.stream);
      op.partition_sms = g.by_copy_engine(o) ? 0 : sc.cluster.partitions.at(static_cast<size_t>(s.partition)).sms;
      if (o.kind == sim::OpKind::kGemm) op.gemm = g.gemms()[o.payload];
      if (o.kind == sim::OpKind::kComm) op.bytes = g.collectives()[o.payload].bytes;
      ops.push_back(std::move(op));
    }
  };
  const models::RunResult result = models::run_scenario(sc, work, options);
  makespan_us = result.makespan.to_us();
  std::stable_sort(ops.begin(), ops.end(), [](const SimulatedOp& a, const SimulatedOp& b) { return a.start_us < b.start_us; });
  return ops;
}

CompareReport compare_runs(const std::vector<MeasuredKernel>& measured, const std::vector<SimulatedOp>& simulated) {
  CompareReport r;
  std::vector<ClassRow> rows(kKernelClasses);
  for (int i = 0; i < kKernelClasses; ++i) rows[static_cast<size_t>(i)].cls = static_cast<KernelClass>(i);
  // Class other by memory-bound form too, where the model's op forms meet the kernels' names.
  std::vector<FormRow> forms(sim::kMemoryForms);
  for (int i = 0; i < sim::kMemoryForms; ++i) forms[static_cast<size_t>(i)].form = static_cast<sim::MemoryForm>(i);
  for (const MeasuredKernel& k : measured) {
    rows[static_cast<size_t>(k.cls)].add_measured(k.dur_us);
    if (k.cls == KernelClass::kOther) forms[static_cast<size_t>(k.form)].add_measured(k.dur_us);
  }
  for (const SimulatedOp& o : simulated) {
    rows[static_cast<size_t>(o.cls)].add_simulated(o.dur_us);
    if (o.cls == KernelClass::kOther) forms[static_cast<size_t>(o.form)].add_simulated(o.dur_us);
  }
  for (const ClassRow& row : rows) {
    if (row.empty()) continue;
    r.classes.push_back(row);
    const double diff = row.simulated_ms - row.measured_ms;
    if (r.largest_error_class.empty() || std::abs(diff) > std::abs(r.largest_error_ms)) {
      r.largest_error_class = class_name(row.cls);
      r.largest_error_ms = diff;
    }
  }
  for (size_t i = 1; i <= forms.size(); ++i) {  // kAny (unmatched) last
    const FormRow& row = forms[i % forms.size()];
    if (!row.empty()) r.other_forms.push_back(row);
  }
  if (forms[0].simulated_count > 0)
    r.notes.push_back("other's unmatched row: measured kernels no form's name matched (sorts, fills, scans), and "
                      "simulated ops of no memory-bound form (the optimizer step's generic kernels)");
  const Timeline m = timeline(measured), s = timeline(simulated);
  r.measured_makespan_ms = m.span_us / 1000.0;
  r.simulated_makespan_ms = s.span_us / 1000.0;
  r.measured_busy_ms = m.busy_us / 1000.0;
  r.simulated_busy_ms = s.busy_us / 1000.0;
  r.measured_overlap_ms = m.overlap_us / 1000.0;
  r.simulated_overlap_ms = s.overlap_us / 1000.0;
  return r;
}

CompareReport compare_scenario(const models::Scenario& sc, const std::string& measured_path) {
  const std::string format = measured_format(measured_path);
  const int gpu = 0;
  double makespan_us = 0;
  MeasuredRun kineto;
  if (format == "kineto") kineto = read_kineto_trace(measured_path);
  const std::vector<SimulatedOp> sim = simulate_ops(sc, gpu, makespan_us);
  CompareReport tmp;
  std::vector<MeasuredKernel> measured;
  if (format == "kineto") {
    measured = kineto.kernels;
    tmp.measured_gpu = kineto.gpu;
  } else {
    measured = overlap_timeline(measured_path, sim, sc, tmp);
  }
  // The same GPU model: the catalog key ("h200") inside the name the file gives ("NVIDIA H200").
  if (tmp.measured_gpu.empty()) {
    tmp.notes.push_back("the measured file names no GPU: not checked against the scenario's");
  } else {
    require_scenario_gpu(sc, tmp.measured_gpu, measured_path);
  }
  CompareReport r = compare_runs(measured, sim);
  r.scenario = sc.name;
  r.scenario_gpu = sc.cluster.gpu.model;
  r.measured_file = measured_path;
  r.measured_format = format;
  r.measured_gpu = tmp.measured_gpu;
  r.measured_range = kineto.range;
  r.simulated_gpu = gpu;
  r.notes = tmp.notes;
  for (const std::string& n : kineto.notes) r.notes.push_back(n);
  if (kineto.memsets > 0) {
    std::ostringstream s;
    s << kineto.memsets << " memset/memcpy activities (" << std::fixed << std::setprecision(3) << kineto.memset_us / 1000.0
      << " ms) not compared: the model has no such ops";
    r.notes.push_back(s.str());
  }
  if (sc.cluster.gpus > 1) r.notes.push_back("the scenario's GPU 0 is compared with the measured device");
  return r;
}

void require_scenario_gpu(const models::Scenario& sc, const std::string& measured_gpu, const std::string& measured_path) {
  if (measured_gpu.empty() || lower(measured_gpu).find(lower(sc.cluster.gpu.name)) != std::string::npos) return;
  throw hw::UserError(measured_path, 0, 0, "measured on " + measured_gpu + ", but scenario '" + sc.name + "' runs on " +
                                               sc.cluster.gpu.model + " (" + sc.cluster.gpu.name +
                                               "): compare runs of the same GPU");
}

std::string table_fixed(double v, int digits) {
  if (!std::isfinite(v)) return "-";
  std::ostringstream s;
  s << std::fixed << std::setprecision(digits) << v;
  return s.str();
}

std::string table_error_pct(double measured, double simulated) {
  if (measured <= 0) return "-";
  return table_fixed((simulated - measured) / measured * 100.0, 1);
}

namespace {
// A form's row name: its profile name, "unmatched" for kernels no form matched.
std::string form_label(sim::MemoryForm f) { return f == sim::MemoryForm::kAny ? "unmatched" : sim::memory_form_name(f); }
}  // namespace

std::string compare_console(const CompareReport& r) {
  std::ostringstream o;
  o << "scenario   " << r.scenario << " (" << r.scenario_gpu << ", GPU " << r.simulated_gpu << ")\n";
  o << "measured   " << r.measured_file << " (" << r.measured_format;
  if (!r.measured_gpu.empty()) o << ", " << r.measured_gpu;
  if (!r.measured_range.empty()) o << ", range '" << r.measured_range << "'";
  o << ")\n\n";
  o << std::left << std::setw(12) << "class" << std::right << std::setw(8) << "meas_n" << std::setw(8) << "sim_n"
    << std::setw(12) << "meas_ms" << std::setw(12) << "sim_ms" << std::setw(9) << "err%" << "\n";
  const auto tally_row = [&](int width, const std::string& name, const Tally& t) {
    o << std::left << std::setw(width) << name << std::right << std::setw(8) << t.measured_count << std::setw(8)
      << t.simulated_count << std::setw(12) << table_fixed(t.measured_ms, 3) << std::setw(12)
      << table_fixed(t.simulated_ms, 3) << std::setw(9) << table_error_pct(t.measured_ms, t.simulated_ms) << "\n";
  };
  for (const ClassRow& c : r.classes) tally_row(12, class_name(c.cls), c);
  if (!r.other_forms.empty()) {
    o << "\n" << std::left << std::setw(18) << "other, by form" << std::right << std::setw(8) << "meas_n" << std::setw(8)
      << "sim_n" << std::setw(12) << "meas_ms" << std::setw(12) << "sim_ms" << std::setw(9) << "err%" << "\n";
    for (const FormRow& f : r.other_forms) tally_row(18, form_label(f.form), f);
  }
  o << "\n" << std::left << std::setw(12) << "" << std::right << std::setw(12) << "meas_ms" << std::setw(12) << "sim_ms"
    << std::setw(9) << "err%" << "\n";
  const auto line = [&](const char* name, double m, double s) {
    o << std::left << std::setw(12) << name << std::right << std::setw(12) << table_fixed(m, 3) << std::setw(12)
      << table_fixed(s, 3) << std::setw(9) << table_error_pct(m, s) << "\n";
  };
  line("makespan", r.measured_makespan_ms, r.simulated_makespan_ms);
  line("gpu_busy", r.measured_busy_ms, r.simulated_busy_ms);
  line("overlap", r.measured_overlap_ms, r.simulated_overlap_ms);
  o << "\nlargest error: " << r.largest_error_class << " (" << (r.largest_error_ms >= 0 ? "+" : "")
    << table_fixed(r.largest_error_ms, 3) << " ms simulated vs measured)\n";
  for (const std::string& n : r.notes) o << "note: " << n << "\n";
  return o.str();
}

namespace {
json tally_json(const char* key, const std::string& name, const Tally& t) {
  const double e = t.error_pct();
  return {{key, name},
          {"measured_count", t.measured_count},
          {"simulated_count", t.simulated_count},
          {"measured_ms", t.measured_ms},
          {"simulated_ms", t.simulated_ms},
          {"error_pct", std::isfinite(e) ? json(e) : json(nullptr)}};
}
}  // namespace

json compare_json(const CompareReport& r) {
  json j;
  j["schema_version"] = 1;
  j["scenario"] = r.scenario;
  j["scenario_gpu"] = r.scenario_gpu;
  j["simulated_gpu"] = r.simulated_gpu;
  j["measured"] = {{"file", r.measured_file}, {"format", r.measured_format}, {"gpu", r.measured_gpu},
                   {"range", r.measured_range}};
  j["classes"] = json::array();
  for (const ClassRow& c : r.classes) j["classes"].push_back(tally_json("class", class_name(c.cls), c));
  j["other_by_form"] = json::array();
  for (const FormRow& f : r.other_forms) j["other_by_form"].push_back(tally_json("form", form_label(f.form), f));
  j["makespan_ms"] = {{"measured", r.measured_makespan_ms}, {"simulated", r.simulated_makespan_ms}};
  j["gpu_busy_ms"] = {{"measured", r.measured_busy_ms}, {"simulated", r.simulated_busy_ms}};
  j["overlap_ms"] = {{"measured", r.measured_overlap_ms}, {"simulated", r.simulated_overlap_ms}};
  j["largest_error"] = {{"class", r.largest_error_class}, {"simulated_minus_measured_ms", r.largest_error_ms}};
  j["notes"] = r.notes;
  return j;
}

}  // namespace cs::calibrate
