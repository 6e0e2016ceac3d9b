#include "reports/html_report.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <stdexcept>

#include <fmt/format.h>

#include "reports/html_escape.h"
#include "reports/html_parts.h"

namespace cs::reports {

namespace html {

double num(const nlohmann::json& j, const char* key, double fallback) {
  if (!j.is_object()) return fallback;
  const auto it = j.find(key);
  return it != j.end() && it->is_number() ? it->get<double>() : fallback;
}

std::string str(const nlohmann::json& j, const char* key) {
  if (!j.is_object()) return "";
  const auto it = j.find(key);
  return it != j.end() && it->is_string() ? it->get<std::string>() : "";
}

std::string fixed(double v, int decimals) {
  if (!std::isfinite(v)) return "n/a";
  std::string s = fmt::format("{:.{}f}", std::abs(v), decimals);
  const size_t dot = s.find('.');
  for (size_t i = dot == std::string::npos ? s.size() : dot; i > 3; i -= 3) s.insert(i - 3, ",");
  return (v < 0 && s.find_first_not_of("0.,") != std::string::npos ? "-" : "") + s;
}

std::string bytes_iec(double b) {
  static const char* const kUnits[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  int u = 0;
  while (b >= 1024 && u < 4) b /= 1024, ++u;
  return u == 0 ? fmt::format("{:.0f} B", b) : fmt::format("{:.{}f} {}", b, b < 10 ? 2 : 1, kUnits[u]);
}

TimeUnit time_unit(double scale_ns) {
  if (scale_ns >= 2e9) return {1e-9, "s"};
  if (scale_ns >= 2e6) return {1e-6, "ms"};
  return {1e-3, "\xC2\xB5s"};
}

std::string table(const std::vector<std::string>& header, const std::vector<std::vector<std::string>>& rows,
                  const std::string& cls) {
  std::string out = "<div class=\"scroll\"><table" + (cls.empty() ? std::string() : " class=\"" + cls + "\"") + "><thead><tr>";
  for (const auto& h : header) out += "<th>" + html_escape(h) + "</th>";
  out += "</tr></thead><tbody>";
  for (const auto& row : rows) {
    out += "<tr>";
    for (const auto& cell : row) out += "<td>" + cell + "</td>";
    out += "</tr>";
  }
  return out + "</tbody></table></div>";
}

std::string section(const std::string& id, const std::string& title, const std::string& body) {
  return "<section id=\"" + id + "\"><h2>" + html_escape(title) + "</h2>" + body + "</section>\n";
}

std::string note(const std::string& html) { return "<p class=\"note\">" + html + "</p>"; }

}  // namespace html

namespace {

using nlohmann::json;
using namespace html;

constexpr const char* kStyle = R"(
:root{--ink:#1b1f24;--muted:#5b6470;--line:#d7dce2;--bg:#fff;--warn:#9a3412;--ok:#166534}
*{box-sizing:border-box}
body{font:14px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,"DejaVu Sans",sans-serif;color:var(--ink);
 background:var(--bg);margin:0 auto;max-width:1100px;padding:16px 24px}
h1{font-size:22px;margin:4px 0 2px} h2{font-size:17px;margin:0 0 8px;border-bottom:1px solid var(--line);padding-bottom:4px}
h3{font-size:14px;margin:12px 0 4px}
section{margin:18px 0 26px}
.subtitle{color:var(--muted);margin:0 0 10px}
.kpis{display:grid;grid-template-columns:repeat(auto-fill,minmax(160px,1fr));gap:8px;margin:10px 0}
.kpi{border:1px solid var(--line);border-radius:6px;padding:6px 10px}
.kpi .k{color:var(--muted);font-size:12px}.kpi .v{font-size:18px;font-weight:600}
.bottleneck{border-left:4px solid #E69F00;background:#fff8ec;padding:8px 12px;margin:8px 0}
.warn{color:var(--warn)} .ok{color:var(--ok)}
.banner{border:1px solid #f0b37e;background:#fff4e8;padding:6px 10px;border-radius:4px}
table{border-collapse:collapse;margin:6px 0;font-variant-numeric:tabular-nums}
th,td{border-bottom:1px solid var(--line);padding:3px 8px;text-align:right;vertical-align:top;white-space:nowrap}
table.left td,th{white-space:normal}
.scroll{overflow-x:auto}
th{font-weight:600;background:#f4f6f8}
td:first-child,th:first-child{text-align:left}
table.left td,table.left th{text-align:left}
td.src{text-align:left;color:var(--muted);font-size:12px;max-width:520px}
.note{color:var(--muted);font-size:12.5px;margin:4px 0}
.origin{display:inline-block;border-radius:3px;padding:0 5px;font-size:12px;border:1px solid var(--line)}
.origin-measured{background:#e7f5ec}.origin-carried{background:#eaf1fb}.origin-published{background:#f6eefa}
.origin-datasheet{background:#f3f3f3}
svg.chart{width:100%;height:auto;display:block;margin:6px 0}
svg.chart text{font:11px system-ui,"DejaVu Sans",sans-serif;fill:var(--ink)}
svg.chart .grid{stroke:#e6e9ed;stroke-width:1} svg.chart .baseline{stroke:#7a828c;stroke-width:1}
svg.chart .limit{stroke:#b91c1c;stroke-width:2;stroke-dasharray:5 3} svg.chart .limit-label{fill:#b91c1c}
svg.chart rect:hover,svg.chart circle:hover{stroke:#000;stroke-width:1}
pre{background:#f6f8fa;border:1px solid var(--line);padding:8px;overflow-x:auto;font-size:12px;white-space:pre-wrap}
code{font-size:12.5px}
footer{border-top:1px solid var(--line);margin-top:24px;padding-top:8px;color:var(--muted)}
@media print{body{max-width:none;padding:0}section{break-inside:avoid-page}details{display:block}
 .kpi{break-inside:avoid}}
)";

// The one sentence that says where the step's time goes, from the capture's mean over its roles.
std::string bottleneck(const json& result) {
  const json& cap = result.at("report").at("capture");
  const json& roles = cap.at("roles");
  if (!roles.is_array() || roles.empty()) return "The run recorded no ops.";
  const double step = num(cap, "step_ns");
  std::map<std::string, double> mean;
  const double n = static_cast<double>(roles.size());
  double compute = 0;
  for (const auto& r : roles) {
    compute += num(r, "compute_ns") / n;
    mean["the optimizer step"] += num(r, "optimizer_ns") / n;
    mean["pipeline bubbles (waiting for neighbouring stages)"] += num(r, "bubble_ns") / n;
    mean["idle time after the GPU's last op"] += num(r, "idle_ns") / n;
    for (const auto& [kind, v] : r.at("exposed_ns").items()) mean["exposed " + kind + " communication"] += v.get<double>() / n;
  }
  std::string worst;
  double worst_ns = -1;
  for (const auto& [name, v] : mean)
    if (v > worst_ns) worst = name, worst_ns = v;
  const TimeUnit u = time_unit(step);
  const std::string who = roles.size() > 1 ? fmt::format(" (mean over {} {}s)", roles.size(), str(cap, "role_kind")) : "";
  if (step <= 0) return "The run took no time.";
  if (worst_ns <= 0.02 * step)
    return fmt::format("Compute-bound: computing fills {:.1f}% of the {} {} step{}; nothing else takes over 2%.",
                       100 * compute / step, fixed(step * u.per_ns, 3), u.name, who);
  return fmt::format("The largest loss is {}: {} {} of the {} {} step ({:.1f}%){}, while computing fills {:.1f}%.", worst,
                     fixed(worst_ns * u.per_ns, 3), u.name, fixed(step * u.per_ns, 3), u.name, 100 * worst_ns / step,
                     who, 100 * compute / step);
}

std::string kpi(const std::string& key, const std::string& value_html, const std::string& cls = "") {
  return "<div class=\"kpi\"><div class=\"k\">" + html_escape(key) + "</div><div class=\"v" +
         (cls.empty() ? "" : " " + cls) + "\">" + value_html + "</div></div>";
}

std::string verdict(const json& result) {
  const json& rep = result.at("report");
  const json& cl = result.at("cluster");
  std::string parts;
  for (const auto& p : cl.at("sm_partitions")) parts += (parts.empty() ? "" : ", ") + str(p, "name") + " " + std::to_string(p.value("sms", 0));
  std::string out = "<header id=\"verdict\"><h1>" + html_escape(str(result.at("scenario"), "name")) + "</h1>";
  out += "<p class=\"subtitle\">" + html_escape(fmt::format("{} x {} (SMs: {}); {}", cl.value("gpus", 0), str(cl, "gpu"), parts,
                                                          str(cl, "fabric")));
  if (!str(rep, "scenario_description").empty()) out += "<br>" + html_escape(str(rep, "scenario_description"));
  out += "</p><div class=\"kpis\">";
  const json& tr = result.contains("training") ? result.at("training") : json();
  if (tr.is_object()) {
    out += kpi("GPU-hours", html_escape(fixed(num(tr, "gpu_hours") * 1e-3, 1) + " K"));
    out += kpi("days", html_escape(fixed(num(tr, "days"), 2)));
    out += kpi("cost", num(tr, "cost_usd") > 0 ? html_escape("$" + fixed(num(tr, "cost_usd") * 1e-6, 3) + " M")
                                               : "n/a <span class=\"note\">(no price given)</span>");
    // The phase that trains the most tokens stands for the run's rate.
    const json* main = nullptr;
    for (const auto& p : tr.at("phases"))
      if (!main || num(p, "tokens") > num(*main, "tokens")) main = &p;
    if (main) {
      out += kpi("tokens/s/GPU", html_escape(fixed(num(*main, "tokens_per_s_per_gpu"), 1)));
      out += kpi("MFU (BF16, causal)", html_escape(fixed(100 * num((*main).at("mfu_bf16"), "causal"), 1) + "%"));
      out += kpi("step", html_escape(fixed(num(*main, "step_s"), 3) + " s"));
    }
  } else {
    out += kpi("GPU-hours, days, cost", "n/a <span class=\"note\">(no <code>training:</code> in the scenario)</span>");
    out += kpi("tokens/s/GPU, MFU", "n/a");
  }
  const double makespan_ns = num(result, "makespan_ps") * 1e-3;
  const TimeUnit u = time_unit(makespan_ns);
  out += kpi("simulated makespan", html_escape(fixed(makespan_ns * u.per_ns, 3) + " " + u.name));
  if (result.contains("model")) {
    const json& mem = result.at("model").at("memory_worst_rank");
    double used = 0;
    for (const auto& [k, v] : mem.items())
      if (k.size() > 6 && k.ends_with("_bytes") && k != "available_bytes") used += v.get<double>();
    const double avail = num(mem, "available_bytes");
    const bool fits = used <= avail;
    out += kpi("fits in memory", fmt::format("{} <span class=\"note\">{:.1f} of {:.1f} GiB</span>", fits ? "yes" : "NO",
                                             used / (1 << 30), avail / (1 << 30)),
               fits ? "ok" : "warn");
  } else {
    out += kpi("fits in memory", "n/a <span class=\"note\">(ops workload: no memory model)</span>");
  }
  if (result.contains("model")) {  // which GPUs ran: every one, or stand-ins for their replicas
    const json& m = result.at("model");
    out += kpi("fidelity", html_escape(m.value("fidelity", "")) +
                               fmt::format(" <span class=\"note\">{} of {} GPUs simulated</span>",
                                           m.value("simulated_gpus", 0), result.at("cluster").value("gpus", 0)));
  }
  const json& cost = result.at("cost_model");
  out += kpi("costs", cost.value("calibrated", false) ? "calibrated" : "UNCALIBRATED",
             cost.value("calibrated", false) ? "ok" : "warn");
  out += "</div><p class=\"bottleneck\"><strong>Bottleneck.</strong> " + html_escape(bottleneck(result)) + "</p>";
  if (result.contains("model") && result.at("model").contains("fidelity_warnings"))
    for (const auto& w : result.at("model").at("fidelity_warnings"))
      out += "<p class=\"warn\"><strong>Fidelity.</strong> " + html_escape(w.get<std::string>()) + "</p>";
  out += "</header>\n";
  return out;
}

// argv as one shell line, quoting what a shell would split or expand.
std::string shell_line(const json& argv) {
  std::string out;
  for (const auto& a : argv) {
    const std::string s = a.is_string() ? a.get<std::string>() : "";
    const bool plain = !s.empty() && s.find_first_not_of("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
                                                         "0123456789_./=:,+-@%") == std::string::npos;
    std::string q = "'";
    for (char ch : s) q += ch == '\'' ? std::string("'\\''") : std::string(1, ch);
    out += (out.empty() ? "" : " ") + (plain ? s : q + "'");
  }
  return out;
}

std::string footer(const json& result) {
  const json& rep = result.at("report");
  std::string out = "<footer id=\"footer\"><h2>Reproduce</h2><table class=\"left\"><tbody>";
  out += "<tr><th>clustersim</th><td>" + html_escape(str(result, "clustersim_version")) + "</td></tr>";
  out += "<tr><th>command</th><td><code>" + html_escape(shell_line(rep.at("command_line"))) + "</code></td></tr>";
  out += "<tr><th>scenario file</th><td><code>" + html_escape(str(result.at("scenario"), "file")) + "</code></td></tr>";
  out += "<tr><th>result schema</th><td>" + std::to_string(result.value("schema_version", 0)) + "</td></tr>";
  out += "</tbody></table><details open><summary>The scenario as run</summary><pre>" +
         html_escape(str(rep, "scenario_text")) + "</pre></details></footer>\n";
  return out;
}

}  // namespace

std::string render_html(const json& result) {
  if (!result.is_object() || !result.contains("report") || !result.at("report").is_object() ||
      !result.at("report").contains("capture"))
    throw std::invalid_argument("the result has no `report` object (write it with clustersim run --format json)");
  const std::string name = str(result.at("scenario"), "name");
  std::string out =
      "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
      "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">"
      // Nothing is fetched and no script runs, whatever a scenario's strings hold.
      "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'; "
      "img-src data:\">"
      "<title>" + html_escape("clustersim: " + name) + "</title><style>" + kStyle + "</style></head><body>\n";
  out += verdict(result);
  out += breakdown_section(result);
  out += timeline_section(result);
  out += sweep_section(result);
  out += memory_section(result);
  out += communication_section(result);
  out += calibration_section(result);
  out += topology_section(result);
  out += footer(result);
  out += "</body></html>\n";
  return out;
}

}  // namespace cs::reports
