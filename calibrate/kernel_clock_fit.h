// The shares of attention's and the memory-bound kernels' time that follow the SM clock, and the
// clocks the kernels section's times stand for (hw::KernelClockModel), from
// kernels/torch/kernel_clock.py: each kernel timed right after BF16 GEMMs (the power limit holds
// the clock low) and right after copies (the clock near its maximum), alternating, its clock read
// by its own probes. With t(f) = t_high x ((1 - s) + s x f_high / f), the two times give s exactly:
//   s = (t_low / t_high - 1) / (f_high / f_low - 1), held to [0, 1].
// A kind's share is the median of its cases'. memory_fit_MHz is the median clock after the copies:
// the memory-bound benches ran under that light load (the H100 profile's SwiGLU backward, 229 us,
// against 235 measured here at 1940 MHz). attention_fit_MHz is the median over the attention cases
// of the clock at which the profile's attention model gives their time,
//   f_ref = s f_high / (t_model / t_high - (1 - s)),
// because the attention bench ran its calls back to back, where the power limit acts: the
// pipeline's attention shape stands for about 1700-1750 MHz there, the clock the same calls back
// to back ran at by this file's own probes. A case whose f_ref lies above the GPU's maximum clock
// is one the attention model misses (no clock gives its time), not a reference, and is left out:
// MLA's backward (2084 MHz; it ran at about 1530 back to back). The profile holds each share at
// its reference clock: the same curve t = A + B / f, whose clock-bound part B / f is a larger
// share at a lower clock.
#pragma once

#include <string>
#include <vector>

#include "calibrate/measurements.h"
#include "hw/gpu_profile.h"

namespace cs::calibrate {

struct KernelClockShare {
  std::string name;  // the case's
  int index = 0;     // the case's index in the fit's input
  double share = 0;  // held to [0, 1]
  double ratio = 0;  // t_low / t_high measured
  double reference_MHz = 0;  // attention: the clock its modelled time stands for (0: none)
  bool above_max = false;    // attention: that clock is above the GPU's maximum, and left out
};

struct KernelClockFit {
  hw::KernelClockModel model;
  std::vector<KernelClockShare> attention_fwd, attention_bwd;
  std::vector<std::vector<KernelClockShare>> forms;  // by sim::MemoryForm
  std::vector<KernelClockShare> gemm;  // GEMMs timed alike: a check on the power section's clock_stretch
  // Each case's ratio from its kind's share against the measured: median and worst relative error.
  double median_error = 0, worst_error = 0;
};

// The share of one case (unclamped).
double kernel_clock_share(const KernelClockCase& c);
// The attention model's time of an attention case (kind attention_fwd or attention_bwd), us.
double attention_model_us(const hw::KernelModel& k, const KernelClockCase& c);
// `kernels`: the profile's attention model, for attention_fit_MHz (references above `max_MHz` left
// out); without one (absent or not present) attention takes memory_fit_MHz. UserError when
// attention (either way) or a plain copy (form "any") is missing, a case comes twice, or no
// attention case gives a reference clock.
KernelClockFit fit_kernel_clock(const std::vector<KernelClockCase>& cases, const hw::KernelModel& kernels, double max_MHz);

}  // namespace cs::calibrate
