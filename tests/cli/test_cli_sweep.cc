// `clustersim sweep` end to end: the table, the results files, threads, shards, resuming, errors.
// (Killing a running sweep and mpirun: tests/cli/sweep_kill_mpi.sh.)
#include <catch2/catch.hpp>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>
#include <string>

#include "test_support.h"

namespace CS_TEST_FILE {  // unique per file: the tests build in unity batches

using cs::test::read_file;
using cs::test::run_clustersim;
using cs::test::RunOutput;
using cs::test::TempDir;
using nlohmann::json;

namespace {
std::string overlap() { return cs::test::source_dir() + "/scenarios/gemm-a2a-overlap-h800.yaml"; }
std::string tiny() { return cs::test::source_dir() + "/tests/cli/data/tiny-sweep.yaml"; }
bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

RunOutput sweep(std::vector<std::string> args) {
  args.insert(args.begin(), "sweep");
  RunOutput r = run_clustersim(args);
  INFO(r.err);
  return r;
}

// The data rows of a CSV results file (after the comment and the header).
std::vector<std::string> rows_of(const std::string& csv) {
  std::vector<std::string> rows;
  size_t start = 0;
  for (int line = 0; start < csv.size(); ++line) {
    const size_t nl = csv.find('\n', start);
    if (line >= 2) rows.push_back(csv.substr(start, nl - start));
    start = nl == std::string::npos ? csv.size() : nl + 1;
  }
  return rows;
}
}  // namespace

TEST_CASE("sweep says which points are approximate, the best among them", "[cli][sweep]") {
  // Mirrored on a partial tree, then on one whose leaves hold unlike parts of a stage: at every
  // point the GPUs one simulated GPU stands in for meet unlike uplinks.
  const RunOutput r = sweep({cs::test::source_dir() + "/tests/cli/data/tiny-moe-uneven-uplinks.yaml"});
  REQUIRE(r.exit_code == 0);
  CHECK(contains(r.out, "<- best; approximate: mirrored fidelity, uneven uplinks"));
  CHECK(contains(r.out, "approximate: mirrored fidelity, uneven uplinks\n"));  // the other point's note
  CHECK(contains(r.out, "on 1280 GPUs (approximate: mirrored fidelity, uneven uplinks)"));
}

TEST_CASE("sweep prints one row per point, the best, and the best SM split", "[cli][sweep]") {
  const RunOutput r = sweep({overlap(), "--comm-sms", "0,8,20,48", "-j", "2"});
  REQUIRE(r.exit_code == 0);
  CHECK(contains(r.out, "    2 ok             20      11.907"));
  CHECK(contains(r.out, "<- best"));
  CHECK(contains(r.out, "4 points: 4 ran, 0 skipped by constraints, 0 failed"));
  CHECK(contains(r.out, "best by step_time: #2 (comm_sms=20): step 11.907 ms on 8 GPUs"));
  CHECK(contains(r.out, "best SM split: 20 communication SMs (#2, step 11.907 ms on 8 GPUs; 4 points)"));
  CHECK(contains(r.err, "4 points; 4 to run (2 at once)"));
  // A plain scenario without --comm-sms sweeps its SM split over 0:48:4.
  const RunOutput plain = sweep({overlap(), "--list"});
  CHECK(contains(plain.out, "13 points of sweep 'gemm-a2a-overlap-h800'"));
  CHECK(contains(plain.err, "has no sweep section; sweeping its communication SMs over 0:48:4"));
}

TEST_CASE("sweep -o results.json holds every point in order and the answers", "[cli][sweep][json]") {
  TempDir dir;
  const std::string out = dir.file("r.json");
  const RunOutput r = sweep({tiny(), "-o", out, "-j", "3"});
  REQUIRE(r.exit_code == 0);
  CHECK(contains(r.out, "18 points: 6 ran, 6 skipped by constraints, 6 failed"));
  const json j = json::parse(read_file(out));
  CHECK(j["kind"] == "clustersim_sweep");
  CHECK(j["schema_version"] == 1);
  REQUIRE(j["points"].size() == 18);
  for (int i = 0; i < 18; ++i) CHECK(j["points"][i]["index"] == i);
  CHECK(j["points"][0]["set"]["workload.pipeline.schedule"] == "1f1b");
  CHECK(j["points"][0]["set"]["workload.layout.dp"] == 2);
  CHECK(j["points"][4]["status"] == "skipped");
  CHECK(j["points"][4]["message"] == "the pipeline stages must divide the GPUs");
  CHECK(j["points"][12]["status"] == "failed");
  const json& a = j["answers"];
  CHECK(a["objective"] == "days");
  CHECK(a["best"]["index"] == 1);
  // The best has the fewest days of all that ran; the Pareto front runs from 8 to 16 GPUs.
  for (const json& p : j["points"])
    if (p["status"] == "ok") CHECK(p["metrics"]["days"].get<double>() >= a["best"]["metrics"]["days"].get<double>());
  REQUIRE(a["pareto"]["points"].size() == 2);
  CHECK(a["pareto"]["points"][0]["metrics"]["gpus"] == 8);
  CHECK(a["pareto"]["points"][1]["metrics"]["gpus"] == 16);
  CHECK(a["comm_sms_optimum"].size() == 6);
  // Any -j gives the same bytes.
  const std::string serial = dir.file("s.json");
  REQUIRE(sweep({tiny(), "-o", serial, "-j", "1"}).exit_code == 0);
  CHECK(read_file(serial) == read_file(out));
}

TEST_CASE("sweep shards merged give the serial results, byte for byte", "[cli][sweep][shard]") {
  TempDir dir;
  const std::string serial = dir.file("serial.csv"), s0 = dir.file("s0.csv"), s1 = dir.file("s1.csv"),
                    s2 = dir.file("s2.csv"), all = dir.file("all.csv");
  REQUIRE(sweep({tiny(), "-o", serial, "-j", "1"}).exit_code == 0);
  REQUIRE(sweep({tiny(), "--shard", "0/3", "-o", s0}).exit_code == 0);
  REQUIRE(sweep({tiny(), "--shard", "1/3", "-o", s1}).exit_code == 0);
  REQUIRE(sweep({tiny(), "--shard", "2/3", "-o", s2}).exit_code == 0);
  CHECK(rows_of(read_file(s0)).size() == 6);
  CHECK(contains(read_file(s1), ", shard 1/3\n"));
  const RunOutput merged = sweep({tiny(), "--merge", s0, s1, s2, "-o", all});
  REQUIRE(merged.exit_code == 0);
  CHECK(contains(merged.err, "0 to run"));
  CHECK(read_file(all) == read_file(serial));
}

TEST_CASE("sweep resumes a killed run: every point once, the same bytes as an unbroken run", "[cli][sweep][resume]") {
  TempDir dir;
  for (const std::string ext : {".csv", ".json"}) {
    INFO(ext);
    const std::string serial = dir.file("serial" + ext), out = dir.file("killed" + ext);
    REQUIRE(sweep({tiny(), "-o", serial}).exit_code == 0);
    // What a kill leaves: the journal's header, the points done so far (in the order they
    // finished), and a line cut short.
    std::string journal;
    if (ext == ".csv") {
      const std::string full = read_file(serial);
      const auto rows = rows_of(full);
      journal = full.substr(0, full.find('\n', full.find('\n') + 1) + 1) + rows[7] + "\n" + rows[2] + "\n" + rows[3].substr(0, 9);
    } else {
      const json j = json::parse(read_file(serial));
      journal = json{{"clustersim_sweep_journal", 1}, {"name", j["name"]}, {"fingerprint", j["fingerprint"]},
                     {"points", 18}, {"shard", ""}, {"columns", j["columns"]}}.dump() + "\n" +
                j["points"][7].dump() + "\n" + j["points"][2].dump() + "\n" + j["points"][3].dump().substr(0, 20);
    }
    std::ofstream(out) << journal;
    const RunOutput r = sweep({tiny(), "-o", out, "-j", "2"});
    REQUIRE(r.exit_code == 0);
    CHECK(contains(r.err, "18 points; 10 to run (2 at once), the rest on file"));
    CHECK(read_file(out) == read_file(serial));
    // Run again: nothing left to do, nothing changes.
    const RunOutput again = sweep({tiny(), "-o", out});
    CHECK(contains(again.err, "0 to run"));
    CHECK(read_file(out) == read_file(serial));
  }
  const std::string csv = read_file(dir.file("killed.csv"));
  std::set<std::string> indices;
  for (const auto& row : rows_of(csv)) CHECK(indices.insert(row.substr(0, row.find(','))).second);
  CHECK(indices.size() == 18);
}

TEST_CASE("sweep results read back from JSON give the same answers and CSV as fresh ones", "[cli][sweep][resume]") {
  TempDir dir;
  const std::string serial = dir.file("serial.csv"), j0 = dir.file("s0.json"), j1 = dir.file("s1.json"),
                    all = dir.file("all.csv");
  const RunOutput fresh = sweep({tiny(), "-o", serial});
  REQUIRE(fresh.exit_code == 0);
  REQUIRE(sweep({tiny(), "--shard", "0/2", "-o", j0}).exit_code == 0);
  REQUIRE(sweep({tiny(), "--shard", "1/2", "-o", j1}).exit_code == 0);
  const RunOutput merged = sweep({tiny(), "--merge", j0, j1, "-o", all});
  REQUIRE(merged.exit_code == 0);
  CHECK(read_file(all) == read_file(serial));  // figures such as 12.300 keep their decimals
  CHECK(merged.out == fresh.out);
}

TEST_CASE("sweep refuses another sweep's results file and leaves it as it was", "[cli][sweep][exit]") {
  TempDir dir;
  const std::string out = dir.file("r.csv");
  REQUIRE(sweep({overlap(), "--comm-sms", "8,20", "-o", out}).exit_code == 0);
  const std::string before = read_file(out);
  const RunOutput r = sweep({overlap(), "--comm-sms", "8,24", "-o", out});
  CHECK(r.exit_code == 2);
  CHECK(contains(r.err, out + ":1:1: holds the results of another sweep (fingerprint "));
  CHECK(read_file(out) == before);
  std::ofstream(dir.file("notes.csv")) << "a,b\n1,2\n";
  const RunOutput foreign = sweep({overlap(), "--comm-sms", "8", "-o", dir.file("notes.csv")});
  CHECK(foreign.exit_code == 2);
  CHECK(contains(foreign.err, "is not a clustersim sweep's CSV results file"));
}

TEST_CASE("sweep refuses what it cannot do with exit 2 and writes nothing", "[cli][sweep][exit]") {
  TempDir dir;
  const std::string out = dir.file("r.json");
  RunOutput r = sweep({overlap(), "--comm-sms", "4-8", "-o", out});
  CHECK(r.exit_code == 2);
  CHECK(contains(r.err, "--comm-sms: '4-8' is not a list of whole numbers >= 0"));
  r = sweep({tiny(), "--shard", "3/3"});
  CHECK(r.exit_code == 2);
  CHECK(contains(r.err, "--shard: '3/3' is not I/N with 0 <= I < N"));
  r = sweep({overlap(), "--objective", "gpu_hours", "-o", out});
  CHECK(r.exit_code == 2);
  CHECK(contains(r.err, "the objective gpu_hours needs a training run, and the scenario has none"));
  r = sweep({overlap(), "-o", dir.file("r.txt")});
  CHECK(r.exit_code == 2);
  CHECK(contains(r.err, "name the results file .csv or .json, or give --format csv|json"));
  CHECK_FALSE(std::filesystem::exists(out));
  // Every point failing is an error too, though each is on file with its reason.
  r = sweep({overlap(), "--comm-sms", "140,150", "-o", out});
  CHECK(r.exit_code == 2);
  CHECK(contains(r.err, "every point failed; the first: "));
  CHECK(json::parse(read_file(out))["answers"]["failed"] == 2);
}

TEST_CASE("sweep --report shows the best point's run with the sweep's curve and answers", "[cli][sweep][report]") {
  TempDir dir;
  const std::string page = dir.file("sweep.html");
  const RunOutput r = sweep({overlap(), "--comm-sms", "8,20,32", "--report", page});
  REQUIRE(r.exit_code == 0);
  const std::string html = read_file(page);
  CHECK(contains(html, "id=\"sweep\""));
  CHECK(contains(html, "step_ms against the communication SMs"));
  CHECK(contains(html, "best by step_time: #1 (comm_sms=20)"));
  CHECK(contains(html, "11.907 ms"));  // the page's run is the best point's
  // A listed point that keeps the base's split can be the best: the chart then plots every point.
  std::ofstream(dir.file("listed.yaml")) << read_file(overlap()) << "sweep:\n  points:\n    - {workload.streams.0.ops.0.repeat: 1}\n";
  const RunOutput listed = sweep({dir.file("listed.yaml"), "--comm-sms", "8,32", "--report", page});
  REQUIRE(listed.exit_code == 0);
  CHECK(contains(listed.out, "best by step_time: #2 (workload.streams.0.ops.0.repeat=1)"));
  CHECK(contains(read_file(page), "step_ms of every point"));
  const RunOutput same = sweep({overlap(), "--comm-sms", "8,20", "--report", page, "--out", page});
  CHECK(same.exit_code == 2);
  CHECK(contains(same.err, "--report names the same file as --out"));
}

}  // namespace CS_TEST_FILE
