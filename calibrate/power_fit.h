// The profile's power section (hw/power_model.h) from kernels/torch/power_response.py: loads held
// back to back on one GPU, each after idle time, with NVML's clock, power and temperature every
// 2 ms and each kernel's end on the same axis.
//
// Each phase is summarised over its second half, once the power limit's controller has settled
// (it acts within about 40 ms; the temperature drifts a few degrees more over 10 s and is left
// to the fit). From them: static_W is the idle phase's power; the BF16 phases on 32 to 132 SMs
// give the energy per FLOP at the maximum clock and the voltage exponent by least squares on
//   ln((P - static_W - HBM_W) / FLOP rate) = ln(pJ per FLOP) + exponent * ln(f / max_MHz),
// HBM_W the GEMM's least HBM traffic at the copy's energy per byte; the FP8 phase its energy per
// FLOP at that exponent; the copy (uncapped) the energy per HBM byte, read plus written.
// clock_stretch: on each phase the limit clocked down, how much longer its GEMMs took than its
// first ones (still at the idle clock) against how much the clock fell, the median over them.
// window_ms: the controller's averaging window (sim/power_window.h), by a grid search of 1 ms
// steps over 4 to 200 ms for the least squares of the relative error of every GEMM call's time in
// the first second of each GEMM phase, the duty cycles (10, 50 and 200 ms bursts) included, with
// the clock simulated from the loads as the executor does.
// The limit and the maximum clock are the ones the driver reported in the file's provenance; the
// clock step is the greatest common divisor of the clocks NVML reported.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "hw/gpu_catalog.h"
#include "hw/gpu_profile.h"
#include "sim/op_graph.h"

namespace cs::calibrate {

struct PowerPhase {
  std::string name, kind;  // kind: idle | bf16_gemm | fp8_gemm | copy
  int sms = 0;
  double sm_MHz = 0, power_W = 0, temp_C = 0;  // medians over the second half
  double work_per_s = 0;                       // FLOP/s (GEMMs) or bytes/s (copy), second half
  double work_per_call = 0;
  sim::GemmShape shape;            // GEMMs
  double hbm_bytes_per_call = 0;  // GEMMs: operands read once and the output written, unless
                                  // use_gemm_traffic set the profile's traffic model's bytes
  double first_call_s = 0;   // median duration of the 3rd to 5th calls (the clock not yet lowered)
  double steady_call_s = 0;  // median call duration over the second half
  double capped_share = 0;   // share of second-half samples with NVML's "SW power cap" reason
  bool steady = true;        // false: a duty cycle (bursts), used for window_ms only
  double start_s = 0;
  std::vector<double> call_ends_s;
  std::vector<std::pair<double, double>> bursts_s;  // when the load was on; the whole phase if steady
};

struct PowerResponse {
  std::string file, gpu, date_utc;
  double limit_W = 0, max_MHz = 0;
  double clock_step_MHz = 0;         // the greatest common divisor of the clocks NVML reported
  std::vector<PowerPhase> phases;    // the steady phases, then the duty cycles
};

// UserError (file, what is missing) on a file that is not power_response.py's or lacks a phase.
PowerResponse read_power_response(const nlohmann::json& d, const std::string& file);
// Each GEMM phase's HBM bytes per call as the simulator counts them (the profile's GEMM traffic
// model on the phase's SMs, the GEMM alone), so that the fit takes off the GEMM's MMA energy the
// very HBM energy a simulation charges it.
void use_gemm_traffic(PowerResponse& r, const hw::GpuProfile& p, const hw::GpuSpec& gpu);

struct PowerFitRow {
  std::string phase;  // a steady phase; duty cycles and the first second of each phase are below
  double measured_W = 0, predicted_W = 0;      // at the measured clock and rate
  double measured_MHz = 0, predicted_MHz = 0;  // the limit's clock for the phase's load
  double measured_call_s = 0, predicted_call_s = 0;
};

// Each GEMM phase's first second (duty cycles: over their bursts), with the clock simulated.
struct PowerOnsetRow {
  std::string phase;
  int calls = 0;
  double measured_mean_call_s = 0, predicted_mean_call_s = 0;
  double rms_call_error = 0;  // relative, call by call
};

// A power model's predictions of a response's phases.
struct PowerPrediction {
  std::vector<PowerFitRow> rows;
  std::vector<PowerOnsetRow> onsets;
  double worst_power_error = 0, worst_clock_error = 0, worst_call_error = 0;  // relative, over rows
  double rms_onset_error = 0;  // over every call of the onsets, at window_ms
};

struct PowerFit : PowerPrediction {
  hw::PowerModel model;
};

PowerFit fit_power(const PowerResponse& r);
// Each phase of `r` predicted by `m` (fitted from it, or carried from another GPU's response).
PowerPrediction predict_power(const hw::PowerModel& m, const PowerResponse& r);

}  // namespace cs::calibrate
