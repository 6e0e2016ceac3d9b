// clustersim run --report and clustersim report: the same page either way, the same bytes on every
// run, and clear errors (exit 2, nothing written) for what a user can get wrong.
#include <catch2/catch.hpp>

#include <filesystem>
#include <string>

#include <nlohmann/json.hpp>

#include "test_support.h"

namespace CS_TEST_FILE {  // unique per file: the tests build in unity batches

using cs::test::read_file;
using cs::test::run_clustersim;
using cs::test::TempDir;
using cs::test::write_file;

namespace {

std::string scenario() { return cs::test::source_dir() + "/scenarios/gemm-a2a-overlap-h800.yaml"; }

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

// The page less its command line (the one part that names the outputs of the command that wrote it).
std::string without_command(std::string html) {
  const auto at = html.find("<tr><th>command</th>");
  REQUIRE(at != std::string::npos);
  html.erase(at, html.find("</tr>", at) - at);
  return html;
}

}  // namespace

TEST_CASE("run --report and report of the saved JSON write the same page") {
  TempDir dir;
  const auto a = run_clustersim({"run", scenario(), "--format", "json", "--out", dir.file("r.json"), "--report",
                                 dir.file("a.html")});
  REQUIRE(a.exit_code == 0);
  CHECK(contains(a.err, "wrote report"));
  const auto b = run_clustersim({"report", dir.file("r.json"), "-o", dir.file("b.html")});
  REQUIRE(b.exit_code == 0);
  const std::string html = read_file(dir.file("a.html"));
  CHECK(html == read_file(dir.file("b.html")));
  CHECK(contains(html, "<!DOCTYPE html>"));
  CHECK(contains(html, "--report " + dir.file("a.html")));  // the real command line
  const nlohmann::json doc = nlohmann::json::parse(read_file(dir.file("r.json")));
  CHECK(doc["schema_version"] == 3);
  CHECK(doc["report"]["command_line"][0] == "clustersim");  // argv[0] without its folder

  // Separate commands: the same page but for the command line each records.
  REQUIRE(run_clustersim({"run", scenario(), "--report", dir.file("c.html")}).exit_code == 0);
  REQUIRE(run_clustersim({"run", scenario(), "--format", "json", "--out", dir.file("s.json")}).exit_code == 0);
  REQUIRE(run_clustersim({"report", dir.file("s.json"), "-o", dir.file("d.html")}).exit_code == 0);
  CHECK(without_command(read_file(dir.file("c.html"))) == without_command(read_file(dir.file("d.html"))));
  CHECK(without_command(read_file(dir.file("c.html"))) == without_command(html));
}

TEST_CASE("the report is deterministic: the same command writes the same bytes") {
  TempDir dir;
  const std::vector<std::string> args = {"run", scenario(), "--report", dir.file("x.html")};
  REQUIRE(run_clustersim(args).exit_code == 0);
  const std::string first = read_file(dir.file("x.html"));
  REQUIRE(run_clustersim(args).exit_code == 0);
  CHECK(read_file(dir.file("x.html")) == first);
}

TEST_CASE("report errors: exit 2, a clear message, no file written") {
  TempDir dir;
  const std::string out = dir.file("out.html");
  SECTION("a missing result file") {
    const auto r = run_clustersim({"report", dir.file("none.json"), "-o", out});
    CHECK(r.exit_code == 2);
    CHECK(contains(r.err, "none.json: cannot open the result file"));
  }
  SECTION("a directory") {
    const auto r = run_clustersim({"report", dir.path(), "-o", out});
    CHECK(r.exit_code == 2);
    CHECK(contains(r.err, "cannot read the result file"));
  }
  SECTION("not JSON") {
    write_file(dir.file("bad.json"), "{ not json");
    const auto r = run_clustersim({"report", dir.file("bad.json"), "-o", out});
    CHECK(r.exit_code == 2);
    CHECK(contains(r.err, "not a clustersim result"));
  }
  SECTION("an older schema version") {
    write_file(dir.file("old.json"), R"({"schema_version": 2, "scenario": {"name": "x"}})");
    const auto r = run_clustersim({"report", dir.file("old.json"), "-o", out});
    CHECK(r.exit_code == 2);
    CHECK(contains(r.err, "result schema_version 2; this clustersim reads 3"));
  }
  SECTION("a result without its report object") {
    write_file(dir.file("bare.json"), R"({"schema_version": 3})");
    const auto r = run_clustersim({"report", dir.file("bare.json"), "-o", out});
    CHECK(r.exit_code == 2);
    CHECK(contains(r.err, "no `report` object"));
  }
  SECTION("a result whose report object lacks what the page needs") {
    write_file(dir.file("thin.json"), R"({"schema_version": 3, "report": {"capture": {}}})");
    const auto r = run_clustersim({"report", dir.file("thin.json"), "-o", out});
    CHECK(r.exit_code == 2);
    CHECK(contains(r.err, "thin.json: a malformed result: "));
  }
  SECTION("an unwritable output") {
    REQUIRE(run_clustersim({"run", scenario(), "--format", "json", "--out", dir.file("r.json")}).exit_code == 0);
    const auto r = run_clustersim({"report", dir.file("r.json"), "-o", dir.file("no/such/dir/out.html")});
    CHECK(r.exit_code == 2);
    CHECK_FALSE(std::filesystem::exists(dir.file("no")));
  }
  SECTION("run --report into an unwritable path fails before the run, writing nothing") {
    const auto r = run_clustersim({"run", scenario(), "--format", "json", "--out", dir.file("r2.json"), "--report",
                                   dir.file("no/such/dir/out.html")});
    CHECK(r.exit_code == 2);
    CHECK_FALSE(std::filesystem::exists(dir.file("r2.json")));
  }
  SECTION("-o naming the result file itself") {
    REQUIRE(run_clustersim({"run", scenario(), "--format", "json", "--out", dir.file("r.json")}).exit_code == 0);
    const std::string before = read_file(dir.file("r.json"));
    const auto r = run_clustersim({"report", dir.file("r.json"), "-o", dir.path() + "/./r.json"});
    CHECK(r.exit_code == 2);
    CHECK(contains(r.err, "-o names the result file itself"));
    CHECK(read_file(dir.file("r.json")) == before);
  }
  SECTION("--report and --out naming one file") {
    const auto r = run_clustersim({"run", scenario(), "--out", dir.file("same"), "--report", dir.file("same")});
    CHECK(r.exit_code == 2);
    CHECK(contains(r.err, "--report names the same file"));
  }
  CHECK_FALSE(std::filesystem::exists(out));
  // Nothing but the inputs the sections wrote: no output, no temporary file left behind.
  for (const auto& e : dir.entries()) {
    CHECK(e.find(".tmp") == std::string::npos);
    CHECK(e.size() > 5);
    CHECK(e.substr(e.size() - 5) == ".json");
  }
}

TEST_CASE("a calibrated run's report shows its profile, and predicted against measured where the data is found") {
  TempDir dir;
  const std::string stage = cs::test::source_dir() + "/scenarios/deepseek-v3-stage-h800.yaml";
  REQUIRE(run_clustersim({"run", stage, "--report", dir.file("stage.html")}).exit_code == 0);
  const std::string html = read_file(dir.file("stage.html"));
  CHECK(contains(html, "<span class=\"origin origin-carried\">carried</span>"));
  CHECK(contains(html, "Predicted against measured: profile h200 on its own data"));
  // The held-out errors the README gives for the bundled H200 data.
  CHECK(contains(html, "<td>FP8 GEMM, held out</td><td>224</td><td>1.4%</td><td>6.9%</td>"));
  CHECK(contains(html, "<td>all-to-all, held out</td><td>48</td><td>3.1%</td><td>11.6%</td>"));
  CHECK_FALSE(contains(html, "UNCALIBRATED"));

  // Away from the repository the measurements are not found: the page says what the profile records.
  write_file(dir.file("away.yaml"), read_file(stage));
  REQUIRE(run_clustersim({"run", dir.file("away.yaml"), "--report", dir.file("away.html")}).exit_code == 0);
  const std::string away = read_file(dir.file("away.html"));
  CHECK_FALSE(contains(away, "Predicted against measured: profile"));
  CHECK(contains(away, "the fit-quality figures the profile records"));
}

}  // namespace CS_TEST_FILE
