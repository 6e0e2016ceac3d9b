// Pieces shared by the report's sections (reports/html_report.cc, reports/html_sections.cc).
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace cs::reports::html {

// A value of `j` at `key`, or `fallback` when absent or of another type.
double num(const nlohmann::json& j, const char* key, double fallback = 0);
std::string str(const nlohmann::json& j, const char* key);
// `v` with `decimals` decimals and thousands separators ("1,735,000.0").
std::string fixed(double v, int decimals);
// 1536 -> "1.5 KiB"; bytes in binary units as nccl-tests sizes are given.
std::string bytes_iec(double bytes);
// A time in nanoseconds in the unit that suits `scale_ns` (s, ms or us), with that unit.
struct TimeUnit {
  double per_ns;
  std::string name;
};
TimeUnit time_unit(double scale_ns);
// <table> with escaped header cells; `rows` are already HTML (cells escaped by the caller).
std::string table(const std::vector<std::string>& header, const std::vector<std::vector<std::string>>& rows,
                  const std::string& cls = "");
std::string section(const std::string& id, const std::string& title, const std::string& body);
std::string note(const std::string& html);  // a muted paragraph

// The sections, each a <section id=...>.
std::string breakdown_section(const nlohmann::json& result);
std::string timeline_section(const nlohmann::json& result);
std::string sweep_section(const nlohmann::json& result);  // empty without a sweep
std::string memory_section(const nlohmann::json& result);
std::string communication_section(const nlohmann::json& result);
std::string calibration_section(const nlohmann::json& result);
std::string topology_section(const nlohmann::json& result);

}  // namespace cs::reports::html
