#include "calibrate/power_fit.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <sstream>

#include "calibrate/fit_stats.h"
#include "hw/calibrated_cost.h"
#include "hw/user_error.h"
#include "sim/power_window.h"

namespace cs::calibrate {

using nlohmann::json;

namespace {

const json& need(const json& j, const char* key, const std::string& file, const std::string& where) {
  if (!j.is_object() || !j.contains(key)) throw hw::UserError(file, 0, 0, where + ": no '" + key + "'");
  return j[key];
}

// "580.159.04, 1980 MHz, 700.00 W" (nvidia-smi's driver, maximum SM clock and power limit).
void driver_limits(const std::string& line, const std::string& file, double* max_MHz, double* limit_W) {
  const std::string first = line.substr(0, line.find('\n'));
  const size_t a = first.find(", "), b = first.find(", ", a == std::string::npos ? 0 : a + 2);
  if (a == std::string::npos || b == std::string::npos ||
      std::sscanf(first.c_str() + a + 2, "%lf MHz", max_MHz) != 1 || std::sscanf(first.c_str() + b + 2, "%lf W", limit_W) != 1)
    throw hw::UserError(file, 0, 0, "provenance.nvidia_smi_driver_maxsmclock_powerlimit: expected 'DRIVER, MHZ MHz, W W', got '" +
                                        first + "'");
}

// A phase's draw while its load runs, at the maximum clock (its first calls' time).
sim::PowerLoad phase_load(const hw::PowerModel& m, const PowerPhase& p) {
  if (p.kind == "copy") return {0, 0, p.work_per_call * m.hbm_pJ_per_byte * 1e-12 / p.steady_call_s};
  const double pJ = p.kind == "fp8_gemm" ? m.fp8_pJ_per_flop : m.bf16_pJ_per_flop;
  // Its HBM draw at the maximum clock's rate. (In a simulation a GEMM's bytes move at its
  // stretched rate; the controller then solves for the clock taking the window's bytes as they
  // came, a draw it does not re-scale with the clock.)
  return {p.work_per_call * pJ * 1e-12 / p.first_call_s, 0, p.hbm_bytes_per_call * m.hbm_pJ_per_byte * 1e-12 / p.first_call_s};
}

// The first second of a GEMM phase with the clock simulated as the executor does: the load drawn
// in its bursts, the window's blocks closed every window / kBlocks from the phase's start (the GPU
// idle before it), each call's time its reference time stretched at the clock of its midpoint.
// A call counts when the one before it ended in the same burst (its start is then known).
struct Onset {
  std::vector<double> measured_s, predicted_s;
};

Onset simulate_onset(const hw::PowerModel& m, const PowerPhase& p, double ref_call_s, double window_ms) {
  constexpr double kSpan_s = 1.0;
  const sim::PowerLoad on = phase_load(m, p);
  sim::PowerWindow w(sim::Time::from_seconds_ceil(window_ms * 1e-3));
  const double block_s = w.block().to_seconds();
  // The clock over each block: clocks[k] for [k, k + 1) blocks after the start.
  std::vector<double> clocks{m.max_MHz};
  size_t next = 0;  // the next burst edge: 2 per burst
  const auto edge_s = [&](size_t e) { return (e % 2 ? p.bursts_s[e / 2].second : p.bursts_s[e / 2].first) - p.start_s; };
  for (int k = 1; k * block_s <= kSpan_s + block_s; ++k) {
    const double t = k * block_s;
    for (; next < 2 * p.bursts_s.size() && edge_s(next) < t; ++next)
      w.set(sim::Time::from_seconds_ceil(std::max(0.0, edge_s(next))), next % 2 ? sim::PowerLoad{} : on);
    clocks.push_back(hw::capped_clock_MHz(m, m.max_MHz, w.close_block(sim::Time::from_seconds_ceil(t))));
  }
  Onset o;
  const auto& e = p.call_ends_s;
  size_t b = 0;
  for (size_t i = 1; i < e.size() && e[i] - p.start_s <= kSpan_s; ++i) {
    while (b < p.bursts_s.size() && p.bursts_s[b].second < e[i - 1]) ++b;
    if (b == p.bursts_s.size() || e[i - 1] < p.bursts_s[b].first || e[i] > p.bursts_s[b].second + 1e-3) continue;
    const double mid = 0.5 * (e[i - 1] + e[i]) - p.start_s;
    const double f = clocks[std::min(clocks.size() - 1, static_cast<size_t>(mid / block_s))];
    o.measured_s.push_back(e[i] - e[i - 1]);
    o.predicted_s.push_back(ref_call_s * hw::clock_stretch(m, f, m.max_MHz));
  }
  return o;
}

// The steady phase a duty cycle repeats (same kind and SMs): its first calls are the reference.
const PowerPhase* steady_twin(const PowerResponse& r, const PowerPhase& p) {
  for (const PowerPhase& q : r.phases)
    if (q.steady && q.kind == p.kind && q.sms == p.sms) return &q;
  return nullptr;
}

// Mean squared relative error of every GEMM call of the phases' first seconds, at `window_ms`;
// each phase's row appended to `rows` when given.
double onset_sse(const hw::PowerModel& m, const PowerResponse& r, double window_ms, std::vector<PowerOnsetRow>* rows) {
  double sum = 0;
  int n = 0;
  for (const PowerPhase& p : r.phases) {
    if (p.kind != "bf16_gemm" && p.kind != "fp8_gemm") continue;
    const PowerPhase* twin = steady_twin(r, p);
    if (!twin) throw hw::UserError(r.file, 0, 0, "phase " + p.name + ": no steady phase of the same kind and SMs");
    const Onset o = simulate_onset(m, p, twin->first_call_s, window_ms);
    PowerOnsetRow row{p.name, static_cast<int>(o.measured_s.size())};
    double rel2 = 0;
    for (size_t i = 0; i < o.measured_s.size(); ++i) {
      const double e = o.predicted_s[i] / o.measured_s[i] - 1;
      rel2 += e * e;
      row.measured_mean_call_s += o.measured_s[i] / o.measured_s.size();
      row.predicted_mean_call_s += o.predicted_s[i] / o.measured_s.size();
    }
    row.rms_call_error = o.measured_s.empty() ? 0 : std::sqrt(rel2 / o.measured_s.size());
    sum += rel2, n += row.calls;
    if (rows) rows->push_back(row);
  }
  return n ? sum / n : 0.0;
}

void fit_window(const PowerResponse& r, PowerFit& f) {
  std::vector<PowerOnsetRow> rows;
  onset_sse(f.model, r, 50, &rows);
  int calls = 0;
  for (const PowerOnsetRow& row : rows) calls += row.calls;
  if (calls == 0) throw hw::UserError(r.file, 0, 0, "no GEMM call within a burst in any phase's first second: no window");
  double best = -1, best_ms = 0;
  for (int ms = 4; ms <= 200; ++ms)
    if (const double e = onset_sse(f.model, r, ms, nullptr); best < 0 || e < best) best = e, best_ms = ms;
  f.model.window_ms = best_ms;
}

}  // namespace

PowerResponse read_power_response(const json& d, const std::string& file) {
  PowerResponse r;
  r.file = file;
  const json& prov = need(d, "provenance", file, "the file");
  r.gpu = need(need(prov, "gpu", file, "provenance"), "name", file, "provenance.gpu").get<std::string>();
  r.date_utc = prov.value("date_utc", "");
  driver_limits(need(prov, "nvidia_smi_driver_maxsmclock_powerlimit", file, "provenance").get<std::string>(), file,
                &r.max_MHz, &r.limit_W);
  const json& cols = need(d, "sample_columns", file, "the file");
  const auto col = [&](const char* name) {
    for (size_t i = 0; i < cols.size(); ++i)
      if (cols[i] == name) return i;
    throw hw::UserError(file, 0, 0, std::string("sample_columns: no '") + name + "'");
  };
  const size_t c_t = col("t_s"), c_mhz = col("sm_mhz"), c_inst = col("power_instant_w"), c_use = col("power_usage_w"),
               c_temp = col("temp_c"), c_why = col("clock_event_reasons");
  const json& samples = need(d, "samples", file, "the file");
  for (const json& p : need(d, "phases", file, "the file")) {
    PowerPhase ph;
    ph.name = need(p, "name", file, "a phase").get<std::string>();
    const std::string where = "phase " + ph.name;
    ph.kind = need(p, "kind", file, where).get<std::string>();
    ph.steady = !p.contains("bursts_s");
    if (ph.kind != "idle" && ph.kind != "bf16_gemm" && ph.kind != "fp8_gemm" && ph.kind != "copy")
      throw hw::UserError(file, 0, 0, where + ": kind '" + ph.kind + "' is not idle, bf16_gemm, fp8_gemm or copy");
    ph.sms = need(p, "sms", file, where).get<int>();
    const double t0 = need(p, "start_s", file, where).get<double>(), t1 = need(p, "end_s", file, where).get<double>();
    ph.start_s = t0;
    if (!ph.steady) {
      if (ph.kind != "bf16_gemm" && ph.kind != "fp8_gemm") throw hw::UserError(file, 0, 0, where + ": bursts of a load that is not a GEMM");
      for (const json& b : p["bursts_s"]) {
        if (!b.is_array() || b.size() != 2) throw hw::UserError(file, 0, 0, where + ": a burst is not [start, end]");
        ph.bursts_s.emplace_back(b[0].get<double>(), b[1].get<double>());
      }
    } else if (ph.kind != "idle") {
      ph.bursts_s.emplace_back(t0, t1);
    }
    const double from = ph.kind == "idle" ? t0 : 0.5 * (t0 + t1);
    std::vector<double> mhz, watts, temp;
    int capped = 0;
    for (const json& s : samples) {
      const double t = s[c_t].get<double>();
      if (!s[c_mhz].is_null()) r.clock_step_MHz = std::gcd(static_cast<long>(r.clock_step_MHz), std::lround(s[c_mhz].get<double>()));
      if (t < from || t > t1) continue;
      if (!s[c_mhz].is_null()) mhz.push_back(s[c_mhz].get<double>());
      const json& w = s[c_inst].is_null() ? s[c_use] : s[c_inst];
      if (!w.is_null()) watts.push_back(w.get<double>());
      if (!s[c_temp].is_null()) temp.push_back(s[c_temp].get<double>());
      capped += !s[c_why].is_null() && (s[c_why].get<uint64_t>() & 0x4) != 0;
    }
    if (mhz.empty() || watts.empty()) throw hw::UserError(file, 0, 0, where + ": no NVML samples in its second half");
    ph.sm_MHz = median(mhz);
    ph.power_W = median(watts);
    ph.temp_C = median(temp);
    ph.capped_share = static_cast<double>(capped) / mhz.size();
    if (ph.kind != "idle") {
      ph.work_per_call = need(p, "work_per_call", file, where).get<double>();
      const std::vector<double> ends = need(p, "call_ends_s", file, where).get<std::vector<double>>();
      ph.call_ends_s = ends;
      if (ph.kind != "copy") {
        const std::vector<double> mnk = need(p, "shape", file, where).get<std::vector<double>>();
        if (mnk.size() != 3) throw hw::UserError(file, 0, 0, where + ": shape is not [m, n, k]");
        // Operands in BF16 or FP8 (e4m3), the output in BF16 either way (torch._scaled_mm's out_dtype).
        const double in = ph.kind == "fp8_gemm" ? 1 : 2;
        ph.hbm_bytes_per_call = (mnk[0] * mnk[2] + mnk[2] * mnk[1]) * in + mnk[0] * mnk[1] * 2;
        ph.shape = {static_cast<int64_t>(mnk[0]), static_cast<int64_t>(mnk[1]), static_cast<int64_t>(mnk[2]),
                    ph.kind == "fp8_gemm" ? sim::DType::kFp8 : sim::DType::kBf16, 1};
      }
      if (ends.size() < 8 || !(ph.work_per_call > 0)) throw hw::UserError(file, 0, 0, where + ": needs 8 calls or more and their work");
      std::vector<double> steady;
      double first_end = 0, last_end = 0;
      int n = 0;
      for (size_t i = 1; i < ends.size(); ++i) {
        if (ends[i] < from) continue;
        steady.push_back(ends[i] - ends[i - 1]);
        if (n++ == 0) first_end = ends[i];
        last_end = ends[i];
      }
      if (n < 3) throw hw::UserError(file, 0, 0, where + ": fewer than 3 calls in its second half");
      ph.work_per_s = (n - 1) * ph.work_per_call / (last_end - first_end);
      ph.steady_call_s = median(steady);
      ph.first_call_s = median({ends[2] - ends[1], ends[3] - ends[2], ends[4] - ends[3]});
    }
    r.phases.push_back(ph);
  }
  const auto has = [&](const char* kind) {
    return std::any_of(r.phases.begin(), r.phases.end(), [&](const PowerPhase& p) { return p.steady && p.kind == kind; });
  };
  for (const char* kind : {"idle", "bf16_gemm", "fp8_gemm", "copy"})
    if (!has(kind)) throw hw::UserError(file, 0, 0, std::string("no steady ") + kind + " phase");
  if (!(r.clock_step_MHz > 0)) throw hw::UserError(file, 0, 0, "no SM clock reported");
  // The steady phases first (the fit's), then the duty cycles, each in the file's order.
  std::stable_partition(r.phases.begin(), r.phases.end(), [](const PowerPhase& p) { return p.steady; });
  return r;
}

void use_gemm_traffic(PowerResponse& r, const hw::GpuProfile& p, const hw::GpuSpec& gpu) {
  const hw::CalibratedCost cost(gpu, p, hw::ClockLoad::kFit);
  for (PowerPhase& ph : r.phases) {
    if (ph.kind != "bf16_gemm" && ph.kind != "fp8_gemm") continue;
    // As the executor asks: the GEMM's traffic on the SMs it runs on, nothing else on the GPU.
    if (cost.gemm_cost(0, ph.shape).hbm_bytes > 0) ph.hbm_bytes_per_call = cost.gemm_hbm_bytes(0, ph.shape, ph.sms, 0.0);
  }
}

PowerFit fit_power(const PowerResponse& r) {
  PowerFit f;
  hw::PowerModel& m = f.model;
  m.limit_W = r.limit_W;
  m.max_MHz = r.max_MHz;
  m.clock_step_MHz = r.clock_step_MHz;
  for (const PowerPhase& p : r.phases)
    if (p.kind == "idle") m.static_W = p.power_W;
  for (const PowerPhase& p : r.phases)
    if (p.kind == "copy") m.hbm_pJ_per_byte = (p.power_W - m.static_W) / p.work_per_s * 1e12;
  // A GEMM's HBM traffic (its operands read once, its output written: the least it moves) draws at
  // the copy's energy per byte, as every byte the simulator moves over HBM does; the rest of its
  // power is its MMAs'. ln((P - static - HBM) / rate) = a + b x, x = ln(f / max), over the BF16 phases.
  const auto mma_W = [&](const PowerPhase& p) {
    return p.power_W - m.static_W - p.hbm_bytes_per_call * p.work_per_s / p.work_per_call * m.hbm_pJ_per_byte * 1e-12;
  };
  if (!(m.hbm_pJ_per_byte > 0)) throw hw::UserError(r.file, 0, 0, "the copy phase draws no more than idle: no HBM energy");
  for (const PowerPhase& p : r.phases)
    if (p.steady && (p.kind == "bf16_gemm" || p.kind == "fp8_gemm") && !(mma_W(p) > 0))
      throw hw::UserError(r.file, 0, 0, "phase " + p.name + " draws no more than idle and its HBM traffic: no MMA energy");
  double sx = 0, sy = 0, sxx = 0, sxy = 0;
  int n = 0;
  for (const PowerPhase& p : r.phases) {
    if (p.kind != "bf16_gemm" || !p.steady) continue;
    const double x = std::log(p.sm_MHz / m.max_MHz), y = std::log(mma_W(p) / p.work_per_s);
    sx += x, sy += y, sxx += x * x, sxy += x * y, ++n;
  }
  const double det = n * sxx - sx * sx;
  if (n < 2 || !(std::abs(det) > 1e-12))
    throw hw::UserError(r.file, 0, 0, "the BF16 phases need two clocks or more to fit the voltage exponent");
  m.voltage_exponent = (n * sxy - sx * sy) / det;
  m.bf16_pJ_per_flop = std::exp((sy - m.voltage_exponent * sx) / n) * 1e12;
  std::vector<double> stretch;
  for (const PowerPhase& p : r.phases) {
    if (!p.steady) continue;
    const double volt = std::pow(p.sm_MHz / m.max_MHz, m.voltage_exponent);
    if (p.kind == "fp8_gemm") m.fp8_pJ_per_flop = mma_W(p) / (p.work_per_s * volt) * 1e12;
    const bool gemm = p.kind == "bf16_gemm" || p.kind == "fp8_gemm";
    if (gemm && p.sm_MHz < 0.97 * m.max_MHz)
      stretch.push_back((p.steady_call_s / p.first_call_s - 1) / (m.max_MHz / p.sm_MHz - 1));
  }
  if (stretch.empty()) throw hw::UserError(r.file, 0, 0, "no GEMM phase ran below 97% of the maximum clock: no clock_stretch");
  m.clock_stretch = std::clamp(median(stretch), 0.0, 1.0);
  if (!(m.fp8_pJ_per_flop > 0) || !(m.hbm_pJ_per_byte > 0) || !(m.bf16_pJ_per_flop > 0) || !(m.static_W < m.limit_W) ||
      !(m.voltage_exponent > 0) || !(m.clock_stretch > 0))
    throw hw::UserError(r.file, 0, 0, "the phases give a power model that is not physical (an energy, the voltage exponent or the clock's share of a GEMM's time not above 0)");
  fit_window(r, f);
  static_cast<PowerPrediction&>(f) = predict_power(m, r);
  return f;
}

PowerPrediction predict_power(const hw::PowerModel& m, const PowerResponse& r) {
  PowerPrediction f;
  // Each steady phase: its power at the measured clock and rate, the clock the limit leaves
  // for its load (its first calls' time at the maximum clock), and its calls' time at that clock.
  for (const PowerPhase& p : r.phases) {
    if (p.kind == "idle" || !p.steady) continue;
    const bool gemm = p.kind != "copy";
    const double pJ = p.kind == "fp8_gemm" ? m.fp8_pJ_per_flop : m.bf16_pJ_per_flop;
    const double volt = std::pow(p.sm_MHz / m.max_MHz, m.voltage_exponent);
    const double hbm_W = (gemm ? p.hbm_bytes_per_call * p.work_per_s / p.work_per_call : p.work_per_s) * m.hbm_pJ_per_byte * 1e-12;
    PowerFitRow row{p.name, p.power_W, m.static_W + hbm_W + (gemm ? volt * pJ * 1e-12 * p.work_per_s : 0.0), p.sm_MHz, 0,
                    p.steady_call_s, 0};
    row.predicted_MHz = hw::capped_clock_MHz(m, m.max_MHz, phase_load(m, p));
    row.predicted_call_s = gemm ? p.first_call_s * hw::clock_stretch(m, row.predicted_MHz, m.max_MHz) : p.steady_call_s;
    f.worst_power_error = std::max(f.worst_power_error, std::abs(row.predicted_W / row.measured_W - 1));
    f.worst_clock_error = std::max(f.worst_clock_error, std::abs(row.predicted_MHz / row.measured_MHz - 1));
    f.worst_call_error = std::max(f.worst_call_error, std::abs(row.predicted_call_s / row.measured_call_s - 1));
    f.rows.push_back(row);
  }
  f.rms_onset_error = std::sqrt(onset_sse(m, r, m.window_ms, &f.onsets));
  return f;
}

}  // namespace cs::calibrate
