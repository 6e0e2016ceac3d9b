#include "calibrate/load_fit.h"

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <sstream>

#include "hw/user_error.h"

namespace cs::calibrate {

namespace {
// "2026/11/23 11:23:38.561, 1905 MHz, 3201 MHz, 615.42 W, ..."
bool parse_csv_line(const std::string& line, ClockSample& s, std::string& stamp) {
  double sm = 0, mem = 0, w = 0;
  int y, mo, d, h, mi, sec;
  if (std::sscanf(line.c_str(), "%d/%d/%d %d:%d:%d.%*d, %lf MHz, %lf MHz, %lf W", &y, &mo, &d, &h, &mi, &sec, &sm, &mem,
                  &w) != 9)
    return false;
  s = {sm, w};
  char buf[32];
  std::snprintf(buf, sizeof buf, "%04d-%02d-%02dT%02d:%02d:%02dZ", y, mo, d, h, mi, sec);
  stamp = buf;
  return true;
}
// "    0    491     59     48   3201   1635" (gpu pwr gtemp mtemp mclk pclk)
bool parse_dmon_line(const std::string& line, ClockSample& s) {
  if (line.empty() || line[0] == '#') return false;
  std::istringstream in(line);
  double gpu, pwr, gtemp, mtemp, mclk, pclk;
  std::string rest;
  if (!(in >> gpu >> pwr >> gtemp >> mtemp >> mclk >> pclk) || (in >> rest)) return false;
  s = {pclk, pwr};
  return true;
}
}  // namespace

std::vector<ClockSample> read_clock_log(const std::string& path, std::string* date_utc) {
  std::ifstream in(path);
  if (!in) throw hw::UserError(path, 0, 0, "cannot read the clock log");
  std::vector<ClockSample> out;
  std::string line;
  while (std::getline(in, line)) {
    ClockSample s;
    std::string stamp;
    if (parse_csv_line(line, s, stamp)) {
      if (date_utc && date_utc->empty()) *date_utc = stamp;
      out.push_back(s);
    } else if (parse_dmon_line(line, s)) {
      out.push_back(s);
    }
  }
  if (out.empty())
    throw hw::UserError(path, 0, 0, "no clock samples (nvidia-smi --query-gpu CSV with clocks.sm and power.draw, or nvidia-smi dmon)");
  return out;
}

double loaded_mean_MHz(const std::vector<ClockSample>& samples, int* used) {
  double lowest = 1e300;
  for (const ClockSample& s : samples) lowest = std::min(lowest, s.power_W);
  double sum = 0;
  int n = 0;
  for (const ClockSample& s : samples)
    if (s.power_W > 2 * lowest) {
      sum += s.sm_MHz;
      ++n;
    }
  if (used) *used = n;
  return n > 0 ? sum / n : 0.0;
}

HbmCeiling fit_hbm_ceiling(const std::vector<OverlapCase>& overlaps, const std::vector<MemoryBoundCase>& memory_bound) {
  HbmCeiling h;
  char buf[160];
  for (const OverlapCase& c : overlaps) {
    if (!c.local_copy_only || c.ctas <= 0 || c.a2a_alone_us <= 0) continue;
    ++h.cases;
    const double GBps = 2 * c.a2a_bytes / (c.a2a_alone_us * 1e3);
    if (GBps <= h.GBps) continue;
    h.GBps = GBps;
    std::snprintf(buf, sizeof buf, "cs_overlap's local copy alone on %d SMs", c.ctas);
    h.what = buf;
  }
  for (const MemoryBoundCase& c : memory_bound) {
    if (c.op != "copy" || c.time_us <= 0) continue;
    ++h.cases;
    const double GBps = c.bytes / (c.time_us * 1e3);
    if (GBps <= h.GBps) continue;
    h.GBps = GBps;
    std::snprintf(buf, sizeof buf, "PyTorch's %s copy of %.2f GB on every SM", c.variant.c_str(), c.bytes * 1e-9);
    h.what = buf;
  }
  return h;
}

}  // namespace cs::calibrate
