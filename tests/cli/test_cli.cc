// End-to-end tests of the clustersim program: exit codes, output streams, JSON results, atomic
// output files, traces and determinism. Each test runs the built binary in a separate process.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fcntl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <map>
#include <nlohmann/json.hpp>
#include <regex>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "test_support.h"

namespace CS_TEST_FILE {  // unique per file: the tests build in unity batches

using cs::test::read_file;
using cs::test::run_clustersim;
using cs::test::RunOutput;
using cs::test::TempDir;
using cs::test::write_file;
using nlohmann::json;

namespace {

std::string scenario() { return cs::test::source_dir() + "/scenarios/gemm-a2a-overlap-h800.yaml"; }

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

// A copy of the sample scenario with the first occurrence of `from` replaced by `to`.
std::string edited_copy(const TempDir& dir, const std::string& from, const std::string& to,
                        const std::string& name = "broken.yaml") {
  std::string text = read_file(scenario());
  const auto at = text.find(from);
  REQUIRE(at != std::string::npos);
  text.replace(at, from.size(), to);
  const std::string path = dir.file(name);
  write_file(path, text);
  return path;
}

// Broken at load time (validation of the cluster section).
std::string load_broken(const TempDir& dir) { return edited_copy(dir, "gpus: 8", "gpus: 0"); }

// Loads fine but fails while building the op graph, i.e. after the output files were opened.
std::string graph_broken(const TempDir& dir) {
  return edited_copy(dir, "          repeat: 12", "          repeat: 12\n          after: [no_such_op]",
                     "graph-broken.yaml");
}

std::vector<std::string> sorted_entries(const TempDir& dir) {
  auto e = dir.entries();
  std::sort(e.begin(), e.end());
  return e;
}

// Exact picoseconds from a microsecond value written with six decimals.
int64_t to_ps(const json& us) { return std::llround(us.get<double>() * 1e6); }

const std::string kExisting = "previous content, must survive\n";

// Like run_clustersim, but with stdout sent to `stdout_path` (e.g. /dev/full); returns the exit code.
int run_with_stdout(const std::vector<std::string>& args, const std::string& stdout_path) {
  const pid_t pid = fork();
  if (pid == 0) {
    const int o = open(stdout_path.c_str(), O_WRONLY);
    const int e = open("/dev/null", O_WRONLY);
    if (o < 0 || e < 0) _exit(126);
    dup2(o, 1);
    dup2(e, 2);
    std::vector<std::string> copy = args;
    std::string bin = cs::test::clustersim_binary();
    std::vector<char*> argv{bin.data()};
    for (auto& a : copy) argv.push_back(a.data());
    argv.push_back(nullptr);
    execv(bin.c_str(), argv.data());
    _exit(127);
  }
  int status = 0;
  waitpid(pid, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

// Permission bits in octal, e.g. "644".
std::string file_mode(const std::string& path) {
  struct stat st {};
  REQUIRE(stat(path.c_str(), &st) == 0);
  char buf[8];
  std::snprintf(buf, sizeof buf, "%o", static_cast<unsigned>(st.st_mode & 07777));
  return buf;
}

}  // namespace

// Compares a file's bytes without dumping megabytes of trace into a failure message.
#define CHECK_FILE_HOLDS(path, expected)                                                        \
  do {                                                                                          \
    const std::string got_ = read_file(path);                                                   \
    INFO((path) << " holds " << got_.size() << " bytes, starting: " << got_.substr(0, 60));     \
    CHECK((got_ == (expected)));                                                                \
  } while (0)

// A JSON result less what echoes the command that wrote it (its command line and the scenario
// file's text, kept in `report` for the HTML report's footer), to compare runs of different
// command lines.
std::string without_echo(const std::string& json_text) {
  json j = json::parse(json_text);
  j.at("report").erase("command_line");
  j.at("report").erase("scenario_text");
  return j.dump(2);
}

// ---------------------------------------------------------------- exit codes and help

TEST_CASE("run of the sample scenario exits 0 and prints a result", "[cli][exit]") {
  const RunOutput r = run_clustersim({"run", scenario()});
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  CHECK(contains(r.out, "makespan"));
  CHECK(contains(r.out, "gemm-a2a-overlap-h800"));
}

TEST_CASE("the --version flag exits 0 and prints 'clustersim <version>'", "[cli][exit]") {
  const RunOutput r = run_clustersim({"--version"});
  REQUIRE(r.exit_code == 0);
  INFO(r.out);
  CHECK(std::regex_search(r.out, std::regex("^clustersim [0-9]+\\.[0-9]+\\.[0-9]+")));
  CHECK(r.err.empty());
}

TEST_CASE("the --help of the app exits 0 with examples and subcommands", "[cli][exit][help]") {
  const RunOutput r = run_clustersim({"--help"});
  REQUIRE(r.exit_code == 0);
  CHECK(contains(r.out, "Example"));
  CHECK(contains(r.out, "run"));
  CHECK(contains(r.out, "check"));
}

TEST_CASE("run --help exits 0 with an example and the flags", "[cli][exit][help]") {
  const RunOutput r = run_clustersim({"run", "--help"});
  REQUIRE(r.exit_code == 0);
  CHECK(contains(r.out, "Example"));
  CHECK(contains(r.out, "--format"));
  CHECK(contains(r.out, "--out"));
  CHECK(contains(r.out, "--trace"));
}

TEST_CASE("check --help exits 0 with an example", "[cli][exit][help]") {
  const RunOutput r = run_clustersim({"check", "--help"});
  REQUIRE(r.exit_code == 0);
  CHECK(contains(r.out, "Example"));
  CHECK(contains(r.out, "check"));
}

TEST_CASE("no subcommand exits 2 with a hint on stderr", "[cli][exit]") {
  const RunOutput r = run_clustersim({});
  CHECK(r.exit_code == 2);
  CHECK(r.out.empty());
  CHECK(contains(r.err, "--help"));
}

TEST_CASE("an unknown subcommand exits 2", "[cli][exit]") {
  const RunOutput r = run_clustersim({"simulate", scenario()});
  CHECK(r.exit_code == 2);
  CHECK(r.out.empty());
  CHECK_FALSE(r.err.empty());
}

TEST_CASE("an unknown flag exits 2", "[cli][exit]") {
  const RunOutput r = run_clustersim({"run", scenario(), "--frobnicate"});
  CHECK(r.exit_code == 2);
  CHECK(r.out.empty());
  CHECK(contains(r.err, "frobnicate"));
}

TEST_CASE("a bad --format value exits 2 and runs nothing", "[cli][exit]") {
  const RunOutput r = run_clustersim({"run", scenario(), "--format", "xml"});
  CHECK(r.exit_code == 2);
  CHECK(r.out.empty());
  CHECK(contains(r.err, "xml"));
  CHECK_FALSE(contains(r.err, "running"));
}

TEST_CASE("run, check and sweep --graph-limit refuse a scenario beyond it at its stream, and a limit below 1",
          "[cli][exit]") {
  // The sample scenario's streams expand to a few dozen ops: a limit of 10 refuses it where the
  // default accepts it.
  const RunOutput small = run_clustersim({"run", scenario(), "--graph-limit", "10"});
  CHECK(small.exit_code == 2);
  CHECK(small.out.empty());
  CHECK(contains(small.err, "gemm-a2a-overlap-h800.yaml:"));
  CHECK(contains(small.err, "expands to more than 10 ops"));
  const RunOutput zero = run_clustersim({"run", scenario(), "--graph-limit", "0"});
  CHECK(zero.exit_code == 2);
  CHECK(contains(zero.err, "--graph-limit"));
  CHECK(run_clustersim({"run", scenario(), "--graph-limit", "100000"}).exit_code == 0);
  // check and sweep take the same limit.
  const RunOutput check = run_clustersim({"check", scenario(), "--graph-limit", "10"});
  CHECK(check.exit_code == 2);
  CHECK(contains(check.err, "expands to more than 10 ops"));
  CHECK(run_clustersim({"check", scenario(), "--graph-limit", "100000"}).exit_code == 0);
  const RunOutput sweep = run_clustersim({"sweep", scenario(), "--comm-sms", "8,16", "--list", "--graph-limit", "10"});
  CHECK(sweep.exit_code == 2);
  CHECK(contains(sweep.err, "expands to more than 10 ops"));
  CHECK(run_clustersim({"sweep", scenario(), "--comm-sms", "8,16", "--list", "--graph-limit", "100000"}).exit_code ==
        0);
}

TEST_CASE("run without FILE exits 2", "[cli][exit]") {
  const RunOutput r = run_clustersim({"run"});
  CHECK(r.exit_code == 2);
  CHECK(r.out.empty());
  CHECK(contains(r.err, "FILE"));
}

TEST_CASE("check without FILE exits 2", "[cli][exit]") {
  const RunOutput r = run_clustersim({"check"});
  CHECK(r.exit_code == 2);
  CHECK(r.out.empty());
}

TEST_CASE("a nonexistent scenario file exits 2 with '<path>: cannot open'", "[cli][exit]") {
  TempDir dir;
  const std::string missing = dir.file("no-such.yaml");
  const RunOutput r = run_clustersim({"run", missing});
  CHECK(r.exit_code == 2);
  CHECK(r.out.empty());
  CHECK(r.err.rfind(missing + ": cannot open", 0) == 0);
}

TEST_CASE("a broken scenario exits 2 with FILE:LINE:COL on stderr", "[cli][exit]") {
  TempDir dir;
  const std::string bad = load_broken(dir);
  const RunOutput r = run_clustersim({"run", bad});
  CHECK(r.exit_code == 2);
  CHECK(r.out.empty());
  CHECK(r.err.rfind(bad + ":10:", 0) == 0);  // `gpus: 0` is on line 10 of the sample
}

TEST_CASE("check of a nonexistent file exits 2 with '<path>: cannot open'", "[cli][check]") {
  TempDir dir;
  const std::string missing = dir.file("no-such.yaml");
  const RunOutput r = run_clustersim({"check", missing});
  CHECK(r.exit_code == 2);
  CHECK(r.out.empty());
  CHECK(r.err.rfind(missing + ": cannot open", 0) == 0);
}

TEST_CASE("a directory given as the scenario exits 2 with a message that says so", "[cli][exit]") {
  TempDir dir;
  const RunOutput r = run_clustersim({"run", dir.path()});
  CHECK(r.exit_code == 2);
  CHECK(r.out.empty());
  CHECK(r.err.rfind(dir.path() + ":", 0) == 0);
  CHECK(contains(r.err, "directory"));
}

TEST_CASE("an empty scenario file exits 2 and says it is empty", "[cli][exit]") {
  TempDir dir;
  write_file(dir.file("empty.yaml"), "");
  const RunOutput r = run_clustersim({"run", dir.file("empty.yaml")});
  CHECK(r.exit_code == 2);
  CHECK(r.out.empty());
  CHECK(r.err.rfind(dir.file("empty.yaml") + ":", 0) == 0);
  CHECK(contains(r.err, "empty"));
}

TEST_CASE("check of a good file exits 0 and says ok on stdout", "[cli][check]") {
  const RunOutput r = run_clustersim({"check", scenario()});
  INFO(r.err);
  CHECK(r.exit_code == 0);
  CHECK(contains(r.out, scenario() + ": ok"));
  CHECK(r.err.empty());
}

TEST_CASE("check of good and bad files exits 2 and reports only the bad one", "[cli][check]") {
  TempDir dir;
  const std::string bad = load_broken(dir);
  const RunOutput r = run_clustersim({"check", scenario(), bad});
  CHECK(r.exit_code == 2);
  CHECK(contains(r.out, scenario() + ": ok"));
  CHECK_FALSE(contains(r.out, bad));
  CHECK(contains(r.err, bad + ":"));
  CHECK_FALSE(contains(r.err, scenario()));
}

TEST_CASE("check finds errors that only building the op graph reveals", "[cli][check]") {
  TempDir dir;
  const std::string bad = graph_broken(dir);
  const RunOutput r = run_clustersim({"check", bad});
  CHECK(r.exit_code == 2);
  CHECK(r.out.empty());
  CHECK(contains(r.err, bad + ":"));
  CHECK(contains(r.err, "no_such_op"));
}

// ---------------------------------------------------------------- output streams

TEST_CASE("results go to stdout, context to stderr", "[cli][streams]") {
  const RunOutput r = run_clustersim({"run", scenario()});
  REQUIRE(r.exit_code == 0);
  CHECK(contains(r.out, "makespan"));
  CHECK_FALSE(contains(r.out, "running"));
  CHECK_FALSE(contains(r.out, "warning"));
  CHECK(contains(r.err, "running 'gemm-a2a-overlap-h800'"));
  CHECK(contains(r.err, "uncalibrated"));
  CHECK_FALSE(contains(r.err, "makespan"));
}

TEST_CASE("with --out stdout is empty and the file holds the result", "[cli][streams]") {
  TempDir dir;
  const std::string out = dir.file("result.txt");
  const RunOutput with_out = run_clustersim({"run", scenario(), "--out", out});
  REQUIRE(with_out.exit_code == 0);
  CHECK(with_out.out.empty());
  CHECK(contains(with_out.err, "wrote " + out));
  const RunOutput plain = run_clustersim({"run", scenario()});
  REQUIRE(plain.exit_code == 0);
  CHECK_FILE_HOLDS(out, plain.out);
  CHECK(sorted_entries(dir) == std::vector<std::string>{"result.txt"});
}

TEST_CASE("json to --out is the same as json to stdout", "[cli][streams][json]") {
  TempDir dir;
  const std::string out = dir.file("result.json");
  const RunOutput a = run_clustersim({"run", scenario(), "--format", "json", "--out", out});
  const RunOutput b = run_clustersim({"run", scenario(), "--format", "json"});
  REQUIRE(a.exit_code == 0);
  REQUIRE(b.exit_code == 0);
  CHECK(a.out.empty());
  CHECK(without_echo(read_file(out)) == without_echo(b.out));
  CHECK(json::parse(read_file(out))["report"]["command_line"].back() == out);
}

TEST_CASE("a result that cannot be written to stdout (disk full) is an error, not exit 0", "[cli][streams]") {
  // The whole result is lost: the exit code must say so.
  CHECK(run_with_stdout({"run", scenario()}, "/dev/full") != 0);
  CHECK(run_with_stdout({"run", scenario(), "--format", "json"}, "/dev/full") != 0);
  CHECK(run_with_stdout({"check", scenario()}, "/dev/full") != 0);
}

// ---------------------------------------------------------------- JSON

TEST_CASE("run with --format json prints one object with schema_version 2 and the result", "[cli][json]") {
  const RunOutput r = run_clustersim({"run", scenario(), "--format", "json"});
  REQUIRE(r.exit_code == 0);
  json j;
  REQUIRE_NOTHROW(j = json::parse(r.out));  // parse() rejects trailing garbage: one value only
  REQUIRE(j.is_object());
  CHECK(j.at("schema_version") == 3);
  CHECK(j.at("report").at("capture").at("roles").size() == 8);  // what `clustersim report` renders
  CHECK(j.at("makespan_us").get<double>() > 0);
  CHECK(j.at("makespan_ps").get<int64_t>() == to_ps(j.at("makespan_us")));
  CHECK(j.at("cost_model").at("calibrated") == false);
  CHECK(j.at("cluster").at("gpus") == 8);
  std::set<std::string> names;
  for (const auto& s : j.at("streams")) names.insert(s.at("name").get<std::string>());
  CHECK(names == std::set<std::string>{"gemm", "all_to_all"});
}

TEST_CASE("a pipeline run gives the step breakdown by phase and by chunk kind, each summing to the step", "[cli][json]") {
  const std::string file = cs::test::source_dir() + "/scenarios/pipeline-dualpipe-h200x2.yaml";
  const RunOutput r = run_clustersim({"run", file, "--format", "json"});
  REQUIRE(r.exit_code == 0);
  const json step = json::parse(r.out).at("step");
  const double step_ms = step.at("step_ms").get<double>();
  const json& by_chunk = step.at("by_chunk");
  REQUIRE(by_chunk.at("ranks").size() == step.at("ranks").size());
  for (const json& t : by_chunk.at("ranks")) {
    double sum = 0;
    for (const char* k : {"forward_ms", "backward_ms", "weight_ms", "forward_backward_ms", "optimizer_ms", "bubble_ms"})
      sum += t.at(k).get<double>();
    CHECK(sum == Approx(step_ms).epsilon(1e-9));
    CHECK(t.at("forward_backward_ms").get<double>() > 0);  // DualPipe's overlapped pairs
  }
  CHECK(by_chunk.at("mean").at("weight_ms").get<double>() == Approx(step.at("mean").at("weight_backward_ms").get<double>()));
  const RunOutput console = run_clustersim({"run", file});
  REQUIRE(console.exit_code == 0);
  CHECK_THAT(console.out, Catch::Contains("the same step by what each task runs"));
  CHECK_THAT(console.out, Catch::Contains("fwd_and_bwd"));
}

TEST_CASE("json streams are consistent with the scenario and the makespan", "[cli][json]") {
  const RunOutput r = run_clustersim({"run", scenario(), "--format", "json"});
  REQUIRE(r.exit_code == 0);
  const json j = json::parse(r.out);
  const double makespan = j.at("makespan_us").get<double>();
  std::map<std::string, json> by_name;
  for (const auto& s : j.at("streams")) by_name[s.at("name").get<std::string>()] = s;
  REQUIRE(by_name.count("gemm") == 1);
  REQUIRE(by_name.count("all_to_all") == 1);
  CHECK(by_name["gemm"].at("ops_per_gpu") == 40);
  CHECK(by_name["all_to_all"].at("ops_per_gpu") == 12);
  CHECK(by_name["gemm"].at("partition") == "compute");
  CHECK(by_name["all_to_all"].at("partition") == "comm");
  CHECK(by_name["gemm"].at("mover") == "sms");  // kernels on the partition's SMs, not the copy engine
  CHECK(by_name["all_to_all"].at("mover") == "sms");
  double latest_end = 0;
  for (const auto& [name, s] : by_name) {
    INFO(name);
    CHECK(s.at("gpus") == 8);
    CHECK(s.at("busy_mean_us").get<double>() > 0);
    CHECK(s.at("busy_mean_us").get<double>() <= s.at("busy_max_us").get<double>() + 1e-6);
    CHECK(s.at("busy_max_us").get<double>() <= s.at("end_us").get<double>() + 1e-6);
    latest_end = std::max(latest_end, s.at("end_us").get<double>());
  }
  CHECK(latest_end == Approx(makespan));
}

TEST_CASE("the console output is not JSON but names both streams", "[cli][json]") {
  const RunOutput r = run_clustersim({"run", scenario(), "--format", "console"});
  REQUIRE(r.exit_code == 0);
  CHECK_THROWS(json::parse(r.out));
  CHECK(contains(r.out, "gemm"));
  CHECK(contains(r.out, "all_to_all"));
  CHECK(contains(r.out, "UNCALIBRATED"));
}

// ---------------------------------------------------------------- atomic outputs

TEST_CASE("an --out under a regular file (ENOTDIR) exits 2 and leaves nothing", "[cli][atomic]") {
  TempDir dir;
  write_file(dir.file("plain"), "x");
  const RunOutput r = run_clustersim({"run", scenario(), "--out", dir.file("plain") + "/result.txt"});
  CHECK(r.exit_code == 2);
  CHECK(r.out.empty());
  CHECK(contains(r.err, dir.file("plain") + "/result.txt"));
  CHECK_FALSE(contains(r.err, "running"));  // fails before any work is done
  CHECK(sorted_entries(dir) == std::vector<std::string>{"plain"});
  CHECK(read_file(dir.file("plain")) == "x");
}

TEST_CASE("an --out in a nonexistent directory exits 2 and creates nothing", "[cli][atomic]") {
  TempDir dir;
  const RunOutput r = run_clustersim({"run", scenario(), "--out", dir.file("no/such/dir/result.txt")});
  CHECK(r.exit_code == 2);
  CHECK(r.out.empty());
  CHECK(dir.entries().empty());
}

TEST_CASE("an --out under /proc exits 2", "[cli][atomic]") {
  const RunOutput r = run_clustersim({"run", scenario(), "--out", "/proc/clustersim-result.txt"});
  CHECK(r.exit_code == 2);
  CHECK(r.out.empty());
  CHECK_FALSE(std::filesystem::exists("/proc/clustersim-result.txt"));
}

TEST_CASE("a --trace to an unwritable path exits 2 and leaves nothing", "[cli][atomic]") {
  TempDir dir;
  write_file(dir.file("plain"), "x");
  const RunOutput r = run_clustersim({"run", scenario(), "--trace", dir.file("plain") + "/t.json"});
  CHECK(r.exit_code == 2);
  CHECK(r.out.empty());
  CHECK(sorted_entries(dir) == std::vector<std::string>{"plain"});
}

TEST_CASE("a broken scenario leaves an existing --out file byte-identical", "[cli][atomic]") {
  TempDir dir;
  const std::string bad = load_broken(dir);
  const std::string out = dir.file("result.json");
  write_file(out, kExisting);
  const RunOutput r = run_clustersim({"run", bad, "--format", "json", "--out", out});
  CHECK(r.exit_code == 2);
  CHECK_FILE_HOLDS(out, kExisting);
  CHECK(sorted_entries(dir) == std::vector<std::string>{"broken.yaml", "result.json"});
}

TEST_CASE("a failure after the outputs were opened leaves --out and --trace untouched", "[cli][atomic]") {
  TempDir dir;
  const std::string bad = graph_broken(dir);
  const std::string out = dir.file("result.json"), trace = dir.file("trace.json");
  write_file(out, kExisting);
  write_file(trace, kExisting + "trace");
  const RunOutput r = run_clustersim({"run", bad, "--format", "json", "--out", out, "--trace", trace});
  CHECK(r.exit_code == 2);
  CHECK(r.out.empty());
  CHECK(contains(r.err, "no_such_op"));
  CHECK_FILE_HOLDS(out, kExisting);
  CHECK_FILE_HOLDS(trace, kExisting + "trace");
  CHECK(sorted_entries(dir) == std::vector<std::string>{"graph-broken.yaml", "result.json", "trace.json"});
}

TEST_CASE("a broken scenario leaves an existing --trace file byte-identical", "[cli][atomic]") {
  TempDir dir;
  const std::string bad = load_broken(dir);
  const std::string trace = dir.file("trace.json");
  write_file(trace, kExisting);
  const RunOutput r = run_clustersim({"run", bad, "--trace", trace});
  CHECK(r.exit_code == 2);
  CHECK_FILE_HOLDS(trace, kExisting);
  CHECK(sorted_entries(dir) == std::vector<std::string>{"broken.yaml", "trace.json"});
}

TEST_CASE("an unwritable --trace leaves an existing --out untouched and no temp file", "[cli][atomic]") {
  TempDir dir;
  write_file(dir.file("plain"), "x");
  const std::string out = dir.file("result.txt");
  write_file(out, kExisting);
  const RunOutput r =
      run_clustersim({"run", scenario(), "--out", out, "--trace", dir.file("plain") + "/trace.json"});
  CHECK(r.exit_code == 2);
  CHECK_FILE_HOLDS(out, kExisting);
  CHECK(sorted_entries(dir) == std::vector<std::string>{"plain", "result.txt"});
}

TEST_CASE("an --out naming a directory exits 2 and leaves an existing --trace untouched", "[cli][atomic]") {
  // The output's rename fails only at the end, after the simulation: the trace of a failed
  // command must not have replaced the old one either.
  TempDir dir;
  std::filesystem::create_directory(dir.file("outdir"));
  const std::string trace = dir.file("trace.json");
  write_file(trace, kExisting);
  const RunOutput r = run_clustersim({"run", scenario(), "--out", dir.file("outdir"), "--trace", trace});
  CHECK(r.exit_code == 2);
  CHECK(r.out.empty());
  CHECK(std::filesystem::is_directory(dir.file("outdir")));
  CHECK(sorted_entries(dir) == std::vector<std::string>{"outdir", "trace.json"});
  CHECK_FILE_HOLDS(trace, kExisting);
}

TEST_CASE("a successful --out replaces an existing longer file fully", "[cli][atomic]") {
  TempDir dir;
  const std::string out = dir.file("result.json");
  write_file(out, std::string(1 << 20, 'Z'));  // longer than any result: no stale tail may remain
  const RunOutput r = run_clustersim({"run", scenario(), "--format", "json", "--out", out});
  REQUIRE(r.exit_code == 0);
  const std::string text = read_file(out);
  CHECK(text.find("ZZZZZZZZZZZZZZZZ") == std::string::npos);
  CHECK_NOTHROW(json::parse(text));
  CHECK(sorted_entries(dir) == std::vector<std::string>{"result.json"});
}

TEST_CASE("a successful --trace replaces an existing file fully", "[cli][atomic]") {
  TempDir dir;
  const std::string trace = dir.file("trace.json");
  write_file(trace, std::string(8 << 20, 'Z'));
  const RunOutput r = run_clustersim({"run", scenario(), "--trace", trace});
  REQUIRE(r.exit_code == 0);
  const std::string text = read_file(trace);
  CHECK(text.find('Z') == std::string::npos);
  CHECK_NOTHROW(json::parse(text));
  CHECK(sorted_entries(dir) == std::vector<std::string>{"trace.json"});
}

TEST_CASE("new --out and --trace files get the usual permissions (0666 & ~umask)", "[cli][atomic]") {
  // Results are shared files: they must be as readable as any file the user creates, not 0600.
  TempDir dir;
  write_file(dir.file("reference"), "");
  const std::string expected = file_mode(dir.file("reference"));
  const RunOutput r =
      run_clustersim({"run", scenario(), "--out", dir.file("result.txt"), "--trace", dir.file("t.json")});
  REQUIRE(r.exit_code == 0);
  CHECK(file_mode(dir.file("result.txt")) == expected);
  CHECK(file_mode(dir.file("t.json")) == expected);
}

// ---------------------------------------------------------------- special output targets

namespace {

// The file type of `path` itself (a link is not followed): S_IFREG, S_IFLNK, S_IFIFO, ...
unsigned file_type(const std::string& path) {
  struct stat st {};
  REQUIRE(lstat(path.c_str(), &st) == 0);
  return st.st_mode & S_IFMT;
}

// Everything waiting in a non-blocking read end.
std::string drain(int fd) {
  std::string data;
  char buf[4096];
  for (ssize_t n; (n = read(fd, buf, sizeof buf)) > 0;) data.append(buf, static_cast<size_t>(n));
  return data;
}

// A FIFO in `dir` with a reader already attached (so a writer's open does not block), or -1.
int fifo_with_reader(const std::string& path) {
  REQUIRE(mkfifo(path.c_str(), 0644) == 0);
  return open(path.c_str(), O_RDONLY | O_NONBLOCK);
}

std::string console_result() {
  const RunOutput plain = run_clustersim({"run", scenario()});
  REQUIRE(plain.exit_code == 0);
  return plain.out;
}

}  // namespace

TEST_CASE("an --out through a chain of symbolic links keeps the links and replaces their target",
          "[cli][atomic][special]") {
  TempDir dir;
  write_file(dir.file("real.txt"), kExisting);
  std::filesystem::create_symlink("real.txt", dir.file("link"));
  std::filesystem::create_symlink(dir.file("link"), dir.file("link2"));  // absolute, to the relative one
  write_file(dir.file("trace.json"), kExisting);
  std::filesystem::create_symlink("trace.json", dir.file("trace-link"));
  const RunOutput r =
      run_clustersim({"run", scenario(), "--out", dir.file("link2"), "--trace", dir.file("trace-link")});
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  CHECK(file_type(dir.file("link")) == S_IFLNK);
  CHECK(file_type(dir.file("link2")) == S_IFLNK);
  CHECK(file_type(dir.file("trace-link")) == S_IFLNK);
  CHECK(std::filesystem::read_symlink(dir.file("link")) == "real.txt");
  CHECK(std::filesystem::read_symlink(dir.file("link2")) == dir.file("link"));
  CHECK_FILE_HOLDS(dir.file("real.txt"), console_result());
  CHECK_NOTHROW(json::parse(read_file(dir.file("trace.json"))));
  CHECK(sorted_entries(dir) == std::vector<std::string>{"link", "link2", "real.txt", "trace-link", "trace.json"});
}

TEST_CASE("an --out through a dangling symbolic link creates the file it names", "[cli][atomic][special]") {
  TempDir dir;
  std::filesystem::create_symlink("new.txt", dir.file("link"));
  const RunOutput r = run_clustersim({"run", scenario(), "--out", dir.file("link")});
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  CHECK(file_type(dir.file("link")) == S_IFLNK);
  CHECK(file_type(dir.file("new.txt")) == S_IFREG);
  CHECK_FILE_HOLDS(dir.file("new.txt"), console_result());
  CHECK(sorted_entries(dir) == std::vector<std::string>{"link", "new.txt"});
}

TEST_CASE("an --out to a FIFO writes the result into it and leaves the FIFO", "[cli][atomic][special]") {
  TempDir dir;
  const std::string fifo = dir.file("fifo");
  const int reader = fifo_with_reader(fifo);
  REQUIRE(reader >= 0);
  const RunOutput r = run_clustersim({"run", scenario(), "--out", fifo});
  const std::string got = drain(reader);
  close(reader);
  INFO(r.err);
  CHECK(r.exit_code == 0);
  CHECK(r.out.empty());
  CHECK(file_type(fifo) == S_IFIFO);
  CHECK(got == console_result());
  CHECK(sorted_entries(dir) == std::vector<std::string>{"fifo"});
}

TEST_CASE("an --out or --trace to a character device (a null device) exits 0 and leaves the device",
          "[cli][atomic][special]") {
  TempDir dir;
  const std::string null = dir.file("null");
  REQUIRE(mknod(null.c_str(), S_IFCHR | 0666, makedev(1, 3)) == 0);  // as /dev/null (tests run as root)
  for (const std::string flag : {"--out", "--trace"}) {
    INFO(flag);
    const RunOutput r = run_clustersim({"run", scenario(), flag, null});
    INFO(r.err);
    CHECK(r.exit_code == 0);
    CHECK(file_type(null) == S_IFCHR);
    struct stat st {};
    REQUIRE(stat(null.c_str(), &st) == 0);
    CHECK(st.st_rdev == makedev(1, 3));
    CHECK(sorted_entries(dir) == std::vector<std::string>{"null"});
  }
}

TEST_CASE("an --out naming standard output through /proc/self/fd/1 (as /dev/stdout) writes it there",
          "[cli][atomic][special]") {
  // A link of our own to /proc/self/fd/1 stands for /dev/stdout, so that a broken build replaces
  // nothing outside the test folder.
  TempDir dir;
  std::filesystem::create_symlink("/proc/self/fd/1", dir.file("stdout"));
  const std::string expected = console_result();
  // Standard output a regular file (the test harness), then a pipe.
  const RunOutput r = run_clustersim({"run", scenario(), "--out", dir.file("stdout")});
  INFO(r.err);
  CHECK(r.exit_code == 0);
  CHECK(r.out == expected);
  const int reader = fifo_with_reader(dir.file("pipe"));
  REQUIRE(reader >= 0);
  const int code = run_with_stdout({"run", scenario(), "--out", dir.file("stdout")}, dir.file("pipe"));
  const std::string got = drain(reader);
  close(reader);
  CHECK(code == 0);
  CHECK(got == expected);
  CHECK(file_type(dir.file("stdout")) == S_IFLNK);
  CHECK(sorted_entries(dir) == std::vector<std::string>{"pipe", "stdout"});
}

TEST_CASE("an --out to a socket exits 2 and leaves the socket", "[cli][atomic][special]") {
  TempDir dir;
  const std::string path = dir.file("sock");
  const int fd = socket(AF_UNIX, SOCK_STREAM, 0);
  REQUIRE(fd >= 0);
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  REQUIRE(path.size() < sizeof addr.sun_path);
  std::copy(path.begin(), path.end(), addr.sun_path);
  REQUIRE(bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0);
  const RunOutput r = run_clustersim({"run", scenario(), "--out", path});
  close(fd);
  CHECK(r.exit_code == 2);
  CHECK(r.out.empty());
  CHECK(r.err.rfind(path + ": cannot write", 0) == 0);
  CHECK(file_type(path) == S_IFSOCK);
  CHECK(sorted_entries(dir) == std::vector<std::string>{"sock"});
}

TEST_CASE("one file named by both --out and --trace: exit 2 and nothing written", "[cli][atomic]") {
  TempDir dir;
  const std::string out = dir.file("result.json");
  write_file(out, kExisting);
  std::filesystem::create_symlink("result.json", dir.file("link"));
  const std::vector<std::string> same = {out, dir.path() + "/./result.json", dir.file("link")};
  for (const std::string& trace : same) {
    INFO(trace);
    const RunOutput r = run_clustersim({"run", scenario(), "--out", out, "--trace", trace});
    CHECK(r.exit_code == 2);
    CHECK(r.out.empty());
    CHECK(r.err == out + ": --out and --trace name the same file\n");
    CHECK_FILE_HOLDS(out, kExisting);
    CHECK(sorted_entries(dir) == std::vector<std::string>{"link", "result.json"});
  }
  // A new file too: nothing is created.
  const RunOutput r =
      run_clustersim({"run", scenario(), "--out", dir.file("new.json"), "--trace", dir.path() + "//new.json"});
  CHECK(r.exit_code == 2);
  CHECK(contains(r.err, "--out and --trace name the same file"));
  CHECK(sorted_entries(dir) == std::vector<std::string>{"link", "result.json"});
}

// ---------------------------------------------------------------- line ends

TEST_CASE("a scenario with CRLF line ends runs like its LF twin, with or without a final line end",
          "[cli][crlf]") {
  TempDir dir;
  const std::string lf = read_file(scenario());
  REQUIRE(lf.back() == '\n');
  std::string crlf;
  for (char c : lf) crlf += c == '\n' ? std::string("\r\n") : std::string(1, c);
  const std::vector<std::pair<std::string, std::string>> files = {
      {"lf.yaml", lf},
      {"crlf.yaml", crlf},
      {"crlf-no-final.yaml", crlf.substr(0, crlf.size() - 2)},
      {"crlf-cut.yaml", crlf.substr(0, crlf.size() - 1)}};  // the final "\n" cut, its '\r' left
  std::string reference;
  for (const auto& [name, text] : files) {
    INFO(name);
    const std::string path = dir.file(name);
    write_file(path, text);
    const RunOutput r = run_clustersim({"run", path, "--format", "json"});
    INFO(r.err);
    REQUIRE(r.exit_code == 0);
    std::string result = without_echo(r.out);  // the echo holds the file's own line ends
    const size_t at = result.find(path);
    REQUIRE(at != std::string::npos);  // the result names its scenario file
    result.replace(at, path.size(), "SCENARIO");
    if (reference.empty()) reference = result;
    CHECK((result == reference));
  }
}

// ---------------------------------------------------------------- trace

namespace {

json run_trace(const TempDir& dir) {
  const std::string trace = dir.file("t.json");
  const RunOutput r = run_clustersim({"run", scenario(), "--trace", trace});
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  CHECK(contains(r.err, "wrote trace " + trace));
  json j;
  REQUIRE_NOTHROW(j = json::parse(read_file(trace)));
  REQUIRE(j.is_object());
  REQUIRE(j.contains("traceEvents"));
  REQUIRE(j.at("traceEvents").is_array());
  return j;
}

}  // namespace

TEST_CASE("the trace names a process for each of GPU 0..7", "[cli][trace]") {
  TempDir dir;
  const json j = run_trace(dir);
  std::map<int, std::string> names;
  for (const auto& e : j.at("traceEvents"))
    if (e.at("ph") == "M" && e.at("name") == "process_name")
      names[e.at("pid").get<int>()] = e.at("args").at("name").get<std::string>();
  for (int g = 0; g < 8; ++g) {
    INFO("GPU " << g);
    REQUIRE(names.count(g) == 1);
    CHECK(names[g] == "GPU " + std::to_string(g));
  }
}

TEST_CASE("the trace has op slices on every GPU and counters", "[cli][trace]") {
  TempDir dir;
  const json j = run_trace(dir);
  std::map<int, int> gemm_slices, a2a_slices;
  std::map<std::pair<int, int>, std::string> thread_names;
  int counters = 0;
  for (const auto& e : j.at("traceEvents"))
    if (e.at("ph") == "M" && e.at("name") == "thread_name")
      thread_names[{e.at("pid").get<int>(), e.at("tid").get<int>()}] = e.at("args").at("name").get<std::string>();
  for (const auto& e : j.at("traceEvents")) {
    if (e.at("ph") == "C") {
      ++counters;
      CHECK(e.at("args").at("util").get<double>() >= 0);
      CHECK(e.at("args").at("util").get<double>() <= 1.0 + 1e-9);
    }
    if (e.at("ph") != "X") continue;
    CHECK(e.at("dur").get<double>() >= 0);
    const int pid = e.at("pid").get<int>();
    const auto track = thread_names.find({pid, e.at("tid").get<int>()});
    REQUIRE(track != thread_names.end());  // every slice lies on a named track
    if (track->second == "gemm") ++gemm_slices[pid];
    if (track->second == "all_to_all") ++a2a_slices[pid];
  }
  CHECK(counters > 0);
  for (int g = 0; g < 8; ++g) {
    INFO("GPU " << g);
    CHECK(gemm_slices[g] == 40);
    CHECK(a2a_slices[g] == 12);
  }
}

TEST_CASE("slices on each trace track never overlap", "[cli][trace]") {
  TempDir dir;
  const json j = run_trace(dir);
  std::map<std::pair<int, int>, std::vector<std::pair<int64_t, int64_t>>> tracks;  // [start, end) ps
  for (const auto& e : j.at("traceEvents")) {
    if (e.at("ph") != "X") continue;
    const int64_t ts = to_ps(e.at("ts")), dur = to_ps(e.at("dur"));
    tracks[{e.at("pid").get<int>(), e.at("tid").get<int>()}].push_back({ts, ts + dur});
  }
  REQUIRE(tracks.size() >= 16);  // two streams on each of 8 GPUs
  for (auto& [track, slices] : tracks) {
    std::sort(slices.begin(), slices.end());
    for (size_t i = 1; i < slices.size(); ++i) {
      INFO("pid " << track.first << " tid " << track.second << " slice " << i << " starts at " << slices[i].first
                  << " ps, the previous ends at " << slices[i - 1].second << " ps");
      CHECK(slices[i].first >= slices[i - 1].second);
    }
  }
}

TEST_CASE("the trace ends where the JSON result says the run ends", "[cli][trace]") {
  TempDir dir;
  const std::string trace = dir.file("t.json");
  const RunOutput r = run_clustersim({"run", scenario(), "--format", "json", "--trace", trace});
  REQUIRE(r.exit_code == 0);
  const json result = json::parse(r.out);
  const json t = json::parse(read_file(trace));
  int64_t last_end = 0;
  for (const auto& e : t.at("traceEvents"))
    if (e.at("ph") == "X") last_end = std::max(last_end, to_ps(e.at("ts")) + to_ps(e.at("dur")));
  CHECK(last_end == result.at("makespan_ps").get<int64_t>());
}

TEST_CASE("stream names with quotes, backslashes and tabs stay valid JSON", "[cli][trace][json]") {
  TempDir dir;
  const std::string sc = edited_copy(dir, "- name: gemm", R"(- name: "ge\"mm \\ \t x")", "quoted.yaml");
  const std::string trace = dir.file("t.json");
  const RunOutput r = run_clustersim({"run", sc, "--format", "json", "--trace", trace});
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  const std::string expected = "ge\"mm \\ \t x";
  json result, t;
  REQUIRE_NOTHROW(result = json::parse(r.out));
  REQUIRE_NOTHROW(t = json::parse(read_file(trace)));
  CHECK(result.at("streams").at(0).at("name") == expected);
  int named = 0;
  for (const auto& e : t.at("traceEvents"))
    if (e.at("name") == "thread_name" && e.at("args").at("name") == expected) ++named;
  CHECK(named == 8);
}

// ---------------------------------------------------------------- determinism

TEST_CASE("two runs give byte-identical JSON and traces", "[cli][determinism]") {
  TempDir dir;
  const std::string t1 = dir.file("t1.json"), t2 = dir.file("t2.json");
  const RunOutput a = run_clustersim({"run", scenario(), "--format", "json", "--trace", t1});
  const RunOutput b = run_clustersim({"run", scenario(), "--format", "json", "--trace", t2});
  REQUIRE(a.exit_code == 0);
  REQUIRE(b.exit_code == 0);
  CHECK_FALSE(a.out.empty());
  CHECK((without_echo(a.out) == without_echo(b.out)));  // the command lines name t1 and t2
  const std::string trace1 = read_file(t1), trace2 = read_file(t2);
  CHECK_FALSE(trace1.empty());
  CHECK((trace1 == trace2));
  // The same command line: the same bytes, echo included.
  const RunOutput c = run_clustersim({"run", scenario(), "--format", "json"});
  const RunOutput d = run_clustersim({"run", scenario(), "--format", "json"});
  CHECK_FALSE(c.out.empty());
  CHECK((c.out == d.out));
}

TEST_CASE("two console runs give byte-identical stdout", "[cli][determinism]") {
  const RunOutput a = run_clustersim({"run", scenario()});
  const RunOutput b = run_clustersim({"run", scenario()});
  REQUIRE(a.exit_code == 0);
  REQUIRE(b.exit_code == 0);
  CHECK((a.out == b.out));
}

}  // namespace CS_TEST_FILE
