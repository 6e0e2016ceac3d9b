// A GPU's draw (PowerLoad) averaged over a sliding window, the way its power controller sees it.
// The window is kBlocks blocks; each controller tick closes one and the clock is set from the
// average over the last kBlocks. Eight blocks are the model's resolution, not a measured figure:
// the measured window (hw/power_model.h, window_ms) is tens of milliseconds, and GEMM times on
// H100 move from the full to the capped clock within two 4 ms calls.
#pragma once

#include <array>

#include "sim/cost_model.h"
#include "sim/time.h"

namespace cs::sim {

class PowerWindow {
 public:
  static constexpr int kBlocks = 8;
  PowerWindow() = default;
  explicit PowerWindow(Time window)
      : block_(Time::ps(window.ps_count() / kBlocks)), window_s_(block_.to_seconds() * kBlocks) {}
  Time block() const { return block_; }
  // The draw is `load` from `now` on.
  void set(Time now, const PowerLoad& load) {
    accrue(now);
    now_ = load;
  }
  const PowerLoad& now() const { return now_; }
  // Energy drawn in the open block besides the draw (joules per component).
  void add_energy(const PowerLoad& joules) { open_ += joules; }
  // Closes the block that ends at `now` and gives the average draw over the last kBlocks blocks.
  PowerLoad close_block(Time now) {
    accrue(now);
    blocks_[next_] = open_;
    next_ = (next_ + 1) % kBlocks;
    open_ = {};
    PowerLoad sum;
    for (const PowerLoad& b : blocks_) sum += b;
    return sum.scaled(1.0 / window_s_);
  }
  // Nothing is drawn now and nothing was over the window.
  bool idle() const {
    if (now_.any() || open_.any()) return false;
    for (const PowerLoad& b : blocks_)
      if (b.any()) return false;
    return true;
  }

 private:
  void accrue(Time now) {
    open_ += now_.scaled((now - last_).to_seconds());
    last_ = now;
  }
  Time block_;
  double window_s_ = 1;
  Time last_;
  PowerLoad now_, open_;  // open_: joules of the block not yet closed
  std::array<PowerLoad, kBlocks> blocks_{};
  int next_ = 0;
};

}  // namespace cs::sim
