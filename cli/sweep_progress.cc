#include "cli/sweep_progress.h"

#include <cmath>
#include <iostream>

#include <fmt/format.h>

namespace cs::cli {

std::string duration_text(double s) {
  if (!std::isfinite(s) || s < 0) return "?";
  const auto t = static_cast<long long>(std::llround(s));
  if (t < 60) return fmt::format("{}s", t);
  if (t < 3600) return fmt::format("{}m{:02}s", t / 60, t % 60);
  return fmt::format("{}h{:02}m", t / 3600, t / 60 % 60);
}

SweepProgress::SweepProgress(int to_run, int already, int total, bool terminal)
    : to_run_(to_run), already_(already), total_(total), terminal_(terminal),
      start_(std::chrono::steady_clock::now()), last_(start_) {
  draw(true);
}

void SweepProgress::point_done() {
  ++done_;
  draw(done_ == to_run_);
}

void SweepProgress::draw(bool force) {
  const auto now = std::chrono::steady_clock::now();
  const double elapsed = std::chrono::duration<double>(now - start_).count();
  const double rate = done_ > 0 && elapsed > 0 ? done_ / elapsed : 0;
  const double left = rate > 0 ? (to_run_ - done_) / rate : NAN;
  const int finished = already_ + done_;
  const std::string figures = fmt::format("{}/{} points, {:.2f} points/s, {} elapsed, {} left", finished, total_, rate,
                                          duration_text(elapsed), done_ == to_run_ ? "0s" : duration_text(left));
  if (terminal_) {
    if (!force && now - last_ < std::chrono::milliseconds(200)) return;
    constexpr int kWidth = 30;
    const int filled = total_ > 0 ? kWidth * finished / total_ : kWidth;
    std::cerr << "\r[" << std::string(static_cast<size_t>(filled), '#') << std::string(static_cast<size_t>(kWidth - filled), '.')
              << "] " << figures << "   " << std::flush;
  } else {
    const int decile = to_run_ > 0 ? 10 * done_ / to_run_ : 10;
    if (!force && decile == last_decile_ && now - last_ < std::chrono::minutes(1)) return;
    last_decile_ = decile;
    std::cerr << "clustersim: sweep: " << figures << "\n";
  }
  last_ = now;
}

void SweepProgress::finish() {
  if (terminal_) std::cerr << "\n";
}

}  // namespace cs::cli
