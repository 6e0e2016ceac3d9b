// The HTML report rendered in-process from a run of the default scenario: its sections, its
// escaping of the scenario's strings, and the sweep section only where the result holds a sweep.
#include <catch2/catch.hpp>

#include <set>
#include <string>

#include "models/op_workload.h"
#include "models/scenario_loader.h"
#include "models/scenario_runner.h"
#include "models/tiny_moe_scenario.h"
#include "reports/html_escape.h"
#include "reports/html_report.h"
#include "reports/report_data.h"
#include "reports/run_report.h"
#include "reports/step_capture.h"
#include "test_support.h"

namespace CS_TEST_FILE {  // unique per file: the tests build in unity batches

using nlohmann::json;

namespace {

std::string default_scenario_text() {
  return cs::test::read_file(cs::test::source_dir() + "/scenarios/gemm-a2a-overlap-h800.yaml");
}

// The result document of a scenario, as clustersim run --format json writes it.
json result_of(const std::string& text, const std::string& file = "scenarios/x.yaml") {
  const cs::models::Scenario sc = cs::models::load_scenario_text(text, file);
  cs::models::RunOptions options;
  json capture;
  options.inspect = [&](const cs::models::OpWorkload& w, const cs::sim::ExecResult& ex) {
    capture = cs::reports::capture_step(w, ex);
  };
  const cs::models::RunResult r = cs::models::run_scenario(sc, options);
  return cs::reports::result_json(r, "test", cs::reports::report_json(sc, r, capture, {{"clustersim", "run", file}, text}));
}

bool contains(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

}  // namespace

TEST_CASE("the report of the default scenario has every section, with the run's figures") {
  const json doc = result_of(default_scenario_text());
  CHECK(doc["schema_version"] == cs::reports::kResultSchemaVersion);
  const json& cap = doc["report"]["capture"];
  REQUIRE(cap["roles"].size() == 8);  // one per GPU
  for (const auto& r : cap["roles"]) {
    int64_t sum = r["compute_ns"].get<int64_t>() + r["optimizer_ns"].get<int64_t>() + r["bubble_ns"].get<int64_t>() +
                  r["idle_ns"].get<int64_t>();
    for (const auto& [k, v] : r["exposed_ns"].items()) sum += v.get<int64_t>();
    CHECK(std::abs(sum - cap["step_ns"].get<int64_t>()) <= 8);  // rounding to ns, part by part
    CHECK(r["compute_ns"].get<int64_t>() == cap["step_ns"].get<int64_t>());  // GEMMs run throughout
  }
  REQUIRE(cap["collectives"].size() == 1);
  CHECK(cap["collectives"][0]["kind"] == "all-to-all");
  CHECK(cap["collectives"][0]["count"] == 12);
  CHECK(cap["collectives"][0]["exposed_ns"] == 0);  // hidden behind the GEMMs, all 12 on every GPU
  CHECK(std::abs(cap["collectives"][0]["overlapped_ns"].get<int64_t>() - 12 * cap["collectives"][0]["time_ns"].get<int64_t>()) <= 12);

  const std::string html = cs::reports::render_html(doc);
  for (const char* id : {"verdict", "breakdown", "timeline", "memory", "communication", "calibration", "topology",
                         "footer"})
    CHECK(contains(html, std::string("id=\"") + id + "\""));
  CHECK_FALSE(contains(html, "id=\"sweep\""));
  CHECK_FALSE(contains(html, ">fidelity<"));  // an ops workload runs every GPU it names
  CHECK(contains(html, "UNCALIBRATED"));
  CHECK(contains(html, "Compute-bound"));
  CHECK(contains(html, "<code>clustersim run scenarios/x.yaml</code>"));
  CHECK_FALSE(contains(html, "<script"));
  std::string no_ns = html;  // nothing is fetched: no address but the SVG namespace
  for (size_t at; (at = no_ns.find("xmlns=\"http://www.w3.org/2000/svg\"")) != std::string::npos;) no_ns.erase(at, 34);
  CHECK_FALSE(contains(no_ns, "://"));
  CHECK(cs::reports::render_html(json::parse(doc.dump(2))) == html);  // from the saved JSON, the same bytes
}

TEST_CASE("the report escapes the scenario's strings everywhere") {
  std::string text = default_scenario_text();
  const std::string evil = "<script>alert(1)</script>";
  text.replace(text.find("name: gemm-a2a-overlap-h800"), 27, "name: '" + evil + "'");
  const std::string html = cs::reports::render_html(result_of(text, "dir/<b>'x'.yaml"));
  CHECK_FALSE(contains(html, "<script"));
  CHECK(contains(html, "<h1>&lt;script&gt;alert(1)&lt;/script&gt;</h1>"));
  CHECK(contains(html, "dir/&lt;b&gt;&#39;x&#39;.yaml"));
}

TEST_CASE("the sweep section shows only where the result holds a sweep") {
  json doc = result_of(default_scenario_text());
  CHECK_FALSE(contains(cs::reports::render_html(doc), "id=\"sweep\""));
  doc["report"]["sweep"] = {{"title", "comm SMs"},
                            {"x_label", "SMs"},
                            {"y_label", "step (ms)"},
                            {"points", {{{"x", 8}, {"predicted", 14.0}, {"measured", 14.7}}, {{"x", 20}, {"predicted", 12.0}}}}};
  const std::string html = cs::reports::render_html(doc);
  CHECK(contains(html, "id=\"sweep\""));
  CHECK(contains(html, "<svg class=\"chart lines\""));
  CHECK(contains(html, "-4.8%"));  // 14.0 against 14.7 measured
}

TEST_CASE("a mirrored run on a partial tree says on every output that its step is approximate") {
  // 160 nodes: five leaves per plane over three spines, two uplinks of each leaf left dark.
  std::string text = cs::test::tiny_moe_on_fat_tree(160, "{pp: 2, dp: 640, ep: 8}", "mirrored", 1024,
                                                    "  pipeline: {schedule: dualpipe, micro_batches: 4}\n");
  const cs::models::Scenario sc = cs::models::load_scenario_text(text, "t.yaml");
  const cs::models::RunResult r = cs::models::run_scenario(sc);
  REQUIRE(r.model);
  REQUIRE(r.model->fidelity_warnings.size() == 1);
  const std::string& w = r.model->fidelity_warnings[0].text;
  CHECK(contains(cs::reports::result_console(r), "warning: " + w));
  const json doc = result_of(text);
  REQUIRE(doc["model"]["fidelity_warnings"] == json::array({w}));
  const std::string html = cs::reports::render_html(doc);
  CHECK(contains(html, "<strong>Fidelity.</strong> " + cs::reports::html_escape(w)));
  // The header names the fidelity and how many GPUs stood in for the cluster's: one per stage.
  CHECK(doc["model"]["simulated_gpus"] == 2);
  CHECK(contains(html, "<div class=\"k\">fidelity</div><div class=\"v\">mirrored <span class=\"note\">2 of 1280 GPUs "
                       "simulated</span>"));
  // On a whole tree (64 nodes, two leaves per plane) the stand-ins are exact, and nothing is said.
  text.replace(text.find("nodes: 160"), 10, "nodes: 64");
  text.replace(text.find("dp: 640"), 7, "dp: 256");
  const json exact = result_of(text);
  CHECK(exact["model"]["fidelity_warnings"].empty());
  CHECK_FALSE(contains(cs::reports::render_html(exact), "Fidelity.</strong>"));
}

TEST_CASE("a document without a report object is refused") {
  json doc = result_of(default_scenario_text());
  doc.erase("report");
  CHECK_THROWS_AS(cs::reports::render_html(doc), std::invalid_argument);
}

TEST_CASE("a calibrated run's report names every profile parameter the cost model read, by section") {
  const json doc = result_of(cs::test::read_file(cs::test::source_dir() + "/scenarios/deepseek-v3-layers-h100.yaml"));
  const json& prof = doc["report"]["calibration"]["profile"];
  std::set<std::string> groups;
  for (const json& p : prof["params"]) {
    groups.insert(p["group"].get<std::string>());
    CHECK_FALSE(p["origin"].get<std::string>().empty());
    CHECK_FALSE(p["source"].get<std::string>().empty());
  }
  // As many as the profile file has parameters: each is written as "name: {value: ...}".
  const std::string yaml = cs::test::read_file(cs::test::source_dir() + "/hw/profiles/h100.yaml");
  size_t in_file = 0;
  for (size_t at = 0; (at = yaml.find("{value: ", at)) != std::string::npos; ++at) ++in_file;
  CHECK(prof["params"].size() == in_file);
  for (const char* g :
       {"gemm", "gemm_bf16", "gemm_fp8_tiles", "comm", "kernels", "attention_fa2", "clocks", "memory", "power"}) {
    INFO(g);
    CHECK(groups.count(g) == 1);
  }
  CHECK(contains(cs::reports::render_html(doc), "mma_slowdown"));
}

}  // namespace CS_TEST_FILE
