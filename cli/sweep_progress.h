// A sweep's progress on stderr: on a terminal a bar redrawn in place, with the rate and the time
// left; otherwise (a log, CI) a plain line every tenth of the points or every minute.
#pragma once

#include <chrono>
#include <cstdio>
#include <string>

namespace cs::cli {

class SweepProgress {
 public:
  // `to_run` points will run now; `already` were done before (results on file).
  SweepProgress(int to_run, int already, int total, bool terminal);
  void point_done();  // one more finished
  void finish();      // ends the bar's line

 private:
  void draw(bool force);
  int to_run_, done_ = 0, already_, total_;
  bool terminal_;
  std::chrono::steady_clock::time_point start_, last_;
  int last_decile_ = 0;
};

// "1m05s", "2h03m", "12s"
std::string duration_text(double seconds);

}  // namespace cs::cli
