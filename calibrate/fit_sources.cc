#include "calibrate/fit_sources.h"

#include <vector>

#include "calibrate/load_fit.h"
#include "hw/user_error.h"

namespace cs::calibrate {

namespace {
std::string named(const Provenance& p) { return p.file + " (" + p.gpu + ", " + p.date_utc + ")"; }
}  // namespace

std::string sources_of(const MeasurementSet& set, const std::string& program) {
  std::string out;
  for (const Provenance& p : set.sources) {
    if (p.program != program) continue;
    if (!out.empty()) out += ", ";
    out += named(p);
  }
  return out;
}

std::string attention_sources_of(const MeasurementSet& set, bool (*use)(const AttentionCase&)) {
  std::vector<bool> has(set.sources.size(), false);
  for (const AttentionCase& c : set.attentions)  // a set built in code may name no file
    if (use(c) && static_cast<size_t>(c.source) < has.size()) has[static_cast<size_t>(c.source)] = true;
  std::string out;
  for (size_t i = 0; i < set.sources.size(); ++i)
    if (has[i]) out += (out.empty() ? "" : ", ") + named(set.sources[i]);
  return out;
}

std::string loaded_clock_source(const std::string& file, const hw::GpuSpec& gpu, double* MHz) {
  int used = 0;
  std::string date;
  const std::vector<ClockSample> samples = read_clock_log(file, &date);
  *MHz = loaded_mean_MHz(samples, &used);
  if (used == 0) throw hw::UserError(file, 0, 0, "no sample of the clock log draws more than twice the idle power");
  return "mean SM clock of the " + std::to_string(used) + " of " + std::to_string(samples.size()) +
         " samples drawing over twice the lowest power: " + file + " (" + gpu.model + ", " +
         (date.empty() ? std::string("no timestamps") : date) + ")";
}

}  // namespace cs::calibrate
