// The report's sections after the verdict; each renders from the result document alone.
#include <algorithm>
#include <cmath>
#include <initializer_list>
#include <set>

#include <fmt/format.h>

#include "reports/html_escape.h"
#include "reports/html_parts.h"
#include "reports/svg_charts.h"

namespace cs::reports::html {

namespace {

using nlohmann::json;

const json& capture(const json& result) { return result.at("report").at("capture"); }

// nccl-tests' bus bandwidth factor: what each rank's links carry relative to the buffer.
double busbw_factor(const std::string& kind, double ranks) {
  if (ranks <= 1) return 1;
  if (kind == "all-reduce") return 2 * (ranks - 1) / ranks;
  if (kind == "send") return 1;
  return (ranks - 1) / ranks;  // all-to-all(-v), reduce-scatter, all-gather
}

std::string origin_badge(const std::string& origin) {
  return "<span class=\"origin origin-" + html_escape(origin) + "\">" + html_escape(origin) + "</span>";
}

}  // namespace

std::string breakdown_section(const json& result) {
  const json& cap = capture(result);
  const TimeUnit u = time_unit(num(cap, "step_ns"));
  StackedBars ch;
  ch.title = "Step time per " + str(cap, "role_kind");
  ch.unit = u.name;
  std::vector<std::string> kinds;  // exposed communication kinds present anywhere
  for (const auto& r : cap.at("roles"))
    for (const auto& [k, v] : r.at("exposed_ns").items())
      if (std::find(kinds.begin(), kinds.end(), k) == kinds.end()) kinds.push_back(k);
  std::sort(kinds.begin(), kinds.end());
  ch.categories = {"compute"};
  for (const auto& k : kinds) ch.categories.push_back("exposed " + k);
  for (const char* c : {"optimizer", "bubble", "idle"}) ch.categories.push_back(c);
  std::vector<std::vector<std::string>> rows;
  for (const auto& r : cap.at("roles")) {
    std::vector<double> v = {num(r, "compute_ns") * u.per_ns};
    for (const auto& k : kinds) v.push_back(num(r.at("exposed_ns"), k.c_str()) * u.per_ns);
    for (const char* c : {"optimizer_ns", "bubble_ns", "idle_ns"}) v.push_back(num(r, c) * u.per_ns);
    ch.rows.push_back(str(cap, "role_kind") == "GPU" ? str(r, "label")
                                                      : str(r, "label") + " (GPU " + std::to_string(r.value("gpu", 0)) + ")");
    std::vector<std::string> cells = {html_escape(ch.rows.back())};
    for (double x : v) cells.push_back(fixed(x, 3));
    rows.push_back(cells);
    ch.values.push_back(std::move(v));
  }
  std::string body = svg_stacked_bars(ch);
  body += note("Per " + html_escape(str(cap, "role_kind")) +
               ": computing (any compute kernel running), then communication while no compute kernel runs (exposed), "
               "the optimizer step, bubbles (nothing running before the GPU's last pipeline op ends) and idle time "
               "(nothing running after it). The parts sum to the step. Hover a bar for its figure.");
  std::vector<std::string> header = {str(cap, "role_kind")};
  for (const auto& c : ch.categories) header.push_back(c + " (" + u.name + ")");
  body += "<details><summary>As a table</summary>" + table(header, rows) + "</details>";
  if (result.contains("step")) {
    const json& st = result.at("step");
    // One row per rank and the mean, the given keys' values in ms.
    const auto rank_rows = [&](const json& part, std::initializer_list<const char*> keys) {
      std::vector<std::vector<std::string>> by_rank;
      const auto row = [&](const std::string& name, const json& t) {
        std::vector<std::string> cells = {html_escape(name)};
        for (const char* k : keys) cells.push_back(fixed(num(t, k), 1));
        by_rank.push_back(cells);
      };
      for (const auto& t : part.at("ranks")) row(std::to_string(t.value("rank", 0)), t);
      row("mean", part.at("mean"));
      return by_rank;
    };
    body += "<h3>" + html_escape(fmt::format("{} schedule, DeepSeek's step breakdown ({} ms per step)", str(st, "schedule"),
                                             fixed(num(st, "step_ms"), 1))) + "</h3>";
    body += table({"rank", "warm-up fwd (ms)", "steady (ms)", "input bwd (ms)", "weight bwd (ms)", "optimizer (ms)",
                   "bubble (ms)"},
                  rank_rows(st, {"warmup_forward_ms", "steady_ms", "input_backward_ms", "weight_backward_ms",
                                 "optimizer_ms", "bubble_ms"}));
    body += note("By phase of the schedule (the categories of DeepSeek's ISCA'25 Table 4 read as phases): they sum to "
                 "the step.");
    if (st.contains("by_chunk")) {
      body += table({"rank", "forward (ms)", "backward (ms)", "weight (ms)", "forward & backward (ms)", "optimizer (ms)",
                     "bubble (ms)"},
                    rank_rows(st.at("by_chunk"), {"forward_ms", "backward_ms", "weight_ms", "forward_backward_ms",
                                                  "optimizer_ms", "bubble_ms"}));
      body += note("The same step by what each task runs, wherever it runs: lone forwards, lone (full or input) "
                   "backwards, weight chunks and overlapped forward-and-backward pairs (Table 4's 1F, 1B, 1W and 1F1B "
                   "read as time per chunk kind). Optimizer and bubble as above.");
    }
  }
  std::vector<std::vector<std::string>> streams;
  const double makespan_us = num(result, "makespan_us");
  for (const auto& s : result.at("streams")) {
    // Copy-engine sends sit on a partition but hold none of its SMs.
    const std::string partition =
        str(s, "partition") + (str(s, "mover") == "copy_engine" ? " (copy engine, no SM)" : "");
    streams.push_back({html_escape(str(s, "name")), html_escape(partition), std::to_string(s.value("gpus", 0)),
                       std::to_string(s.value("ops_per_gpu", int64_t{0})), fixed(num(s, "busy_mean_us") * 1e-3, 3),
                       fixed(num(s, "end_us") * 1e-3, 3),
                       fixed(makespan_us > 0 ? 100 * num(s, "busy_mean_us") / makespan_us : 0, 1)});
  }
  body += "<h3>Streams</h3>" +
          table({"stream", "partition", "GPUs", "ops/GPU", "busy mean (ms)", "end (ms)", "busy %"}, streams);
  return section("breakdown", "Step-time breakdown", body);
}

std::string timeline_section(const json& result) {
  const json& tl = capture(result).at("timeline");
  const TimeUnit u = time_unit(num(tl, "end_ns"));
  Gantt g;
  g.title = "One step, compute and communication tracks";
  g.unit = u.name;
  g.end = num(tl, "end_ns") * u.per_ns;
  std::set<int> used;
  for (const auto& row : tl.at("rows"))
    for (const auto& b : row.at("bars")) used.insert(b.at(2).get<int>());
  // Only the categories that occur, renumbered so that their colours follow the legend.
  std::vector<int> remap(tl.at("categories").size(), 0);
  for (int c : used)
    if (c >= 0 && c < static_cast<int>(remap.size())) {
      remap[c] = static_cast<int>(g.categories.size());
      g.categories.push_back(tl.at("categories").at(c).get<std::string>());
    }
  size_t bars = 0;
  for (const auto& row : tl.at("rows")) {
    GanttRow gr{str(row, "label"), {}};
    for (const auto& b : row.at("bars")) {
      const int c = b.at(2).get<int>();
      if (c < 0 || c >= static_cast<int>(remap.size())) continue;
      const double s = b.at(0).get<double>() * u.per_ns, e = b.at(1).get<double>() * u.per_ns;
      const int64_t ops = b.at(3).get<int64_t>();
      gr.bars.push_back({s, e, remap[c],
                         fmt::format("{}: {}, {} kernel{}, {}\xE2\x80\x93{} {}", gr.label, g.categories[remap[c]], ops,
                                     ops == 1 ? "" : "s", fixed(s, 3), fixed(e, 3), u.name)});
      ++bars;
    }
    g.rows.push_back(std::move(gr));
  }
  std::string body = svg_gantt(g);
  body += note(html_escape(fmt::format("{} bars; kernels of one kind closer than 1/1500 of the step are drawn as one bar "
                                       "(hover for the count). The full timeline is in the Perfetto trace "
                                       "(clustersim run --trace).", bars)));
  return section("timeline", "Pipeline timeline", body);
}

std::string sweep_section(const json& result) {
  const json& rep = result.at("report");
  if (!rep.contains("sweep") || !rep.at("sweep").is_object()) return "";
  const json& sw = rep.at("sweep");
  LineChart ch;
  ch.title = str(sw, "title");
  ch.x_label = str(sw, "x_label");
  ch.y_label = str(sw, "y_label");
  LineSeries pred{"predicted", {}, false}, meas{"measured", {}, true};
  std::vector<std::vector<std::string>> rows;
  for (const auto& p : sw.at("points")) {
    const double x = num(p, "x"), y = num(p, "predicted", NAN), m = num(p, "measured", NAN);
    pred.points.emplace_back(x, y);
    if (std::isfinite(m)) meas.points.emplace_back(x, m);
    rows.push_back({fmt::format("{:.6g}", x), fmt::format("{:.6g}", y), std::isfinite(m) ? fmt::format("{:.6g}", m) : "",
                    std::isfinite(m) && m != 0 ? fmt::format("{:+.1f}%", 100 * (y / m - 1)) : ""});
  }
  ch.series.push_back(std::move(pred));
  if (!meas.points.empty()) ch.series.push_back(std::move(meas));
  std::string body = svg_line_chart(ch);
  if (sw.contains("notes") && sw.at("notes").is_array())
    for (const auto& n : sw.at("notes"))
      if (n.is_string()) body += note(html_escape(n.get<std::string>()));
  body += "<details><summary>As a table</summary>" +
          table({ch.x_label, "predicted " + ch.y_label, "measured", "error"}, rows) + "</details>";
  return section("sweep", "Sweep: " + ch.title, body);
}

std::string memory_section(const json& result) {
  if (!result.contains("model"))
    return section("memory", "Memory per GPU",
                   note("An <code>ops</code> workload has no memory model: only <code>model</code> workloads account "
                        "for weights, optimizer state and activations."));
  const json& mem = result.at("model").at("memory_worst_rank");
  const double gib = 1024.0 * 1024 * 1024;
  StackedBars ch;
  ch.title = "Memory of the fullest pipeline rank";
  ch.unit = "GiB";
  std::vector<double> values;
  std::vector<std::vector<std::string>> rows;
  double used = 0;
  for (const auto& [k, v] : mem.items()) {
    if (!k.ends_with("_bytes") || k == "available_bytes") continue;
    ch.categories.push_back(k.substr(0, k.size() - 6));
    values.push_back(v.get<double>() / gib);
    used += v.get<double>();
    rows.push_back({html_escape(ch.categories.back()), fixed(v.get<double>() / gib, 2)});
  }
  // The catalog's "80 GB" is 80 GiB, as the memory model reads it (models/memory_model.cc).
  const double avail = num(mem, "available_bytes"), hbm = num(result.at("report").at("cluster"), "hbm_gb") * gib;
  ch.rows = {"pipeline rank " + std::to_string(mem.value("pp_rank", 0))};
  ch.values = {values};
  ch.limit = avail / gib;
  ch.limit_label = fmt::format("available {:.1f} GiB", avail / gib);
  rows.push_back({"<strong>total</strong>", "<strong>" + fixed(used / gib, 2) + "</strong>"});
  rows.push_back({"available (what the driver reports)", fixed(avail / gib, 2)});
  if (hbm > 0) rows.push_back({"HBM (datasheet, as GiB)", fixed(hbm / gib, 2)});
  std::string body = svg_stacked_bars(ch) + table({"category", "GiB"}, rows);
  body += note(html_escape(fmt::format("The pipeline rank with the most memory, under the {} schedule's activation shape: "
                                       "{} the memory available.", str(mem, "schedule"),
                                       used <= avail ? "it fits" : "it does NOT fit")));
  return section("memory", "Memory per GPU", body);
}

std::string communication_section(const json& result) {
  const json& cap = capture(result);
  std::vector<std::vector<std::string>> rows;
  for (const auto& c : cap.at("collectives")) {
    const std::string kind = str(c, "kind");
    const double ranks = num(c, "ranks"), bytes = num(c, "bytes"), t_ns = num(c, "time_ns");
    const double algbw = t_ns > 0 ? bytes / t_ns : 0;  // bytes per ns = GB/s
    const double exposed = num(c, "exposed_ns"), hidden = num(c, "overlapped_ns");
    rows.push_back({html_escape(kind), fixed(ranks, 0),
                    "<span title=\"" + fixed(bytes, 0) + " bytes\">" + html_escape(bytes_iec(bytes)) + "</span>",
                    fixed(num(c, "count"), 0), fixed(t_ns * 1e-3, 1), fixed(algbw, 1),
                    fixed(algbw * busbw_factor(kind, ranks), 1), fixed(exposed * 1e-6, 3), fixed(hidden * 1e-6, 3),
                    exposed + hidden > 0 ? fixed(100 * hidden / (exposed + hidden), 1) : ""});
  }
  std::string body =
      rows.empty() ? note("The run has no communication.")
                   : table({"collective", "ranks", "size", "count", "time (\xC2\xB5s)", "algbw (GB/s)",
                            "busbw (GB/s)", "exposed (ms/GPU)", "overlapped (ms/GPU)", "hidden %"},
                           rows);
  if (num(cap, "collectives_omitted") > 0)
    body += note(html_escape(fmt::format("{} smaller groups left out.", fixed(num(cap, "collectives_omitted"), 0))));
  body += note("In nccl-tests terms: size is the per-GPU buffer (all-to-all: what each GPU sends in all; all-to-all-v: "
               "the most any rank sends; hover for the bytes), time the mean kernel time, algbw = size / time, busbw = algbw "
               "\xC3\x97 2(n-1)/n for all-reduce, (n-1)/n for all-to-all, reduce-scatter and all-gather, 1 for send. "
               "Exposed: kernel time while no compute kernel ran on the GPU; overlapped: hidden behind computation; both "
               "summed over the step, per GPU that ran the kernels. Grouped by kind, ranks and size, the busiest first.");
  return section("communication", "Communication", body);
}

std::string calibration_section(const json& result) {
  const json& cal = result.at("report").at("calibration");
  const json& cost = result.at("cost_model");
  std::string body = "<p><strong>Cost model:</strong> " + html_escape(str(cost, "description")) + "</p>";
  if (!cost.value("calibrated", false))
    body += "<p class=\"banner warn\">UNCALIBRATED: every time comes from the datasheet roofline and an assumed copy rate "
            "per communication SM, not from measurements. Use <code>cost_model: {kind: calibrated, profile: ...}</code> "
            "for a calibrated run.</p>";
  if (cal.contains("profile")) {
    const json& p = cal.at("profile");
    body += "<p>Profile <strong>" + html_escape(str(p, "gpu")) + "</strong> (<code>" + html_escape(str(p, "file")) +
            "</code>): " + html_escape(str(p, "note")) + "</p>";
    if (!p.at("fitted_from").empty()) {
      body += "<p>Fitted from:</p><ul>";
      for (const auto& f : p.at("fitted_from")) body += "<li><code>" + html_escape(f.get<std::string>()) + "</code></li>";
      body += "</ul>";
    }
    std::vector<std::vector<std::string>> rows;
    for (const auto& prm : p.at("params"))
      rows.push_back({html_escape(str(prm, "group") + "." + str(prm, "name")), fmt::format("{:.6g}", num(prm, "value")),
                      origin_badge(str(prm, "origin")), "<span class=\"src\">" + html_escape(str(prm, "source")) + "</span>"});
    body += "<h3>Parameters, their origin and source</h3>" + table({"parameter", "value", "origin", "source"}, rows, "left");
    std::vector<std::vector<std::string>> ranges;
    for (const auto& r : p.at("ranges"))
      ranges.push_back({html_escape(str(r, "group") + "." + str(r, "name")), fmt::format("{:.6g}", num(r, "lo")),
                        fmt::format("{:.6g}", num(r, "hi"))});
    body += "<h3>Measured range</h3>" + table({"quantity", "from", "to"}, ranges);
  }
  const json& warnings = cost.at("range_warnings");
  if (warnings.is_array() && !warnings.empty()) {
    body += "<h3>Where this run leaves the measured range</h3><ul>";
    for (const auto& w : warnings) body += "<li class=\"warn\">" + html_escape(w.get<std::string>()) + "</li>";
    body += "</ul>";
  } else if (cost.value("calibrated", false)) {
    body += note("The run stays inside the profile's measured range.");
  }
  const json& rep = result.at("report");
  if (rep.contains("validation") && rep.at("validation").is_object()) {
    const json& v = rep.at("validation");
    std::vector<std::vector<std::string>> sum;
    for (const auto& s : v.at("summary"))
      sum.push_back({html_escape(str(s, "what")), fixed(num(s, "cases"), 0), fixed(100 * num(s, "median"), 1) + "%",
                     fixed(100 * num(s, "worst"), 1) + "%"});
    body += "<h3>" + html_escape("Predicted against measured: profile " + str(v, "profile") + " on its own data") + "</h3>";
    body += table({"cases", "count", "median |error|", "worst |error|"}, sum);
    std::vector<std::vector<std::string>> cases;
    for (const auto& c : v.at("cases"))
      cases.push_back({html_escape(str(c, "kind")), html_escape(str(c, "label")), fixed(num(c, "measured_us"), 1),
                       fixed(num(c, "predicted_us"), 1),
                       fmt::format("{:+.1f}%", 100 * (num(c, "predicted_us") / num(c, "measured_us", 1) - 1)),
                       c.value("held_out", false) ? "held out" : "fitted"});
    body += "<p>The worst cases:</p>" +
            table({"kind", "case", "measured (\xC2\xB5s)", "predicted (\xC2\xB5s)", "error", "in fit"}, cases);
    body += note(html_escape(str(v, "note")));
  } else if (cost.value("calibrated", false)) {
    body += note("Predicted against measured: the fit-quality figures the profile records are in its parameters' "
                 "sources above (<code>clustersim calibrate validate</code> recomputes them case by case).");
  }
  return section("calibration", "Calibration", body);
}

std::string topology_section(const json& result) {
  const json& cl = result.at("report").at("cluster");
  std::vector<std::vector<std::string>> rows;
  const auto add = [&](const std::string& k, const std::string& v) { rows.push_back({html_escape(k), html_escape(v)}); };
  add("GPUs", fmt::format("{} x {} ({} SMs, {} GB HBM at {} GB/s, {} BF16 / {} FP8 dense TFLOPS)", cl.value("gpus", 0),
                          str(cl, "gpu_model"), cl.value("sms", 0), fixed(num(cl, "hbm_gb"), 0),
                          fixed(num(cl, "hbm_bw_GBps"), 0), fixed(num(cl, "bf16_dense_tflops"), 0),
                          fixed(num(cl, "fp8_dense_tflops"), 0)));
  std::string parts;
  for (const auto& p : cl.at("sm_partitions")) parts += (parts.empty() ? "" : ", ") + str(p, "name") + " " + std::to_string(p.value("sms", 0));
  add("SM partitions", parts);
  if (!str(cl, "preset").empty()) add("preset", str(cl, "preset"));
  if (str(cl, "fabric_kind") == "switch") {
    add("fabric", fmt::format("one non-blocking switch, {} GB/s per GPU and direction, {} ns", fixed(num(cl, "switch_bw_GBps"), 1),
                              fixed(num(cl, "switch_lat_ns"), 0)));
  } else {
    add("nodes", fmt::format("{} x {} ({} GPUs, {} NICs each)", cl.value("nodes", 0), str(cl, "node"),
                             cl.value("gpus_per_node", 0), cl.value("nics_per_node", 0)));
    add("NVLink", fmt::format("{} GB/s per GPU and direction", fixed(num(cl, "nvlink_bw_GBps"), 1)));
    add("PCIe", fmt::format("{} GB/s per direction", fixed(num(cl, "pcie_bw_GBps"), 1)));
    add("NICs", fmt::format("{}, {} GB/s per direction", str(cl, "nic"), fixed(num(cl, "nic_bw_GBps"), 1)));
    add("switches", fmt::format("{}, {} ports", str(cl, "switch"), cl.value("switch_ports", 0)));
    add("fabric", fmt::format("{}, oversubscription 1:{}, PXN {}", str(cl, "fabric_kind"), cl.value("oversubscription", 1),
                              str(cl, "pxn")));
    add("InfiniBand latency", fmt::format("{} ns base, {} ns per hop", fixed(num(cl, "ib_base_lat_ns"), 0),
                                          fixed(num(cl, "ib_hop_lat_ns"), 0)));
  }
  add("as run", str(result.at("cluster"), "fabric"));
  std::string body = table({"", ""}, rows, "left");
  std::vector<std::vector<std::string>> links;
  for (const auto& l : result.at("report").at("links_busiest")) {
    const double busy_s = num(l, "busy_us") * 1e-6;
    links.push_back({html_escape(str(l, "name")), fixed(num(l, "capacity_GBps"), 1), fixed(num(l, "bytes") * 1e-9, 3),
                     fixed(busy_s * 1e3, 3), fixed(busy_s > 0 ? num(l, "bytes") / busy_s * 1e-9 : 0, 1)});
  }
  body += "<h3>" + html_escape(fmt::format("The busiest links (of {} that carried traffic)",
                                           result.at("report").value("links_used", 0))) + "</h3>";
  body += table({"link", "capacity (GB/s)", "GB", "busy (ms)", "GB/s while busy"}, links);
  return section("topology", "Topology", body);
}

}  // namespace cs::reports::html
