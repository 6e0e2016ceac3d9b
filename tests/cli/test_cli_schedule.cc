// clustersim schedule show: the grid, the bubble line, the trace, and exit 2 on impossible sizes.
#include <catch2/catch.hpp>

#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <string>

#include "test_support.h"

namespace CS_TEST_FILE {  // unique per file: the tests build in unity batches

using cs::test::run_clustersim;
using cs::test::TempDir;

TEST_CASE("schedule show prints DualPipe's grid and its bubble beside the formula", "[cli][schedule]") {
  const auto r = run_clustersim({"schedule", "show", "dualpipe", "--stages", "8", "--microbatches", "20"});
  REQUIRE(r.exit_code == 0);
  // Rank 0 of the README example, with F 1, B 2 (I 1 + W 1), F&B 2 us: a pair spans two columns.
  CHECK_THAT(r.out, Catch::Contains("rank 0 F0  F1  F2  F3  F4  F5  F6  F0' I0' W0' F1' I1' W1' F2' I2' W2' F3' "
                                    "F7B3'-- .   F4'B0-- F8B4'--"));
  CHECK_THAT(r.out, Catch::Contains("rank 7 F0' F1' F2' F3' F4' F5' F6' F0  I0  W0  F1"));
  CHECK_THAT(r.out, Catch::Contains("simulated largest 3 us (ranks 2, 3, 4, 5); published (PP/2-1)(F&B+B-3W) = 3 us"));
  CHECK_THAT(r.out, Catch::Contains("0     0, 7'                     51           1            9"));
  CHECK(r.err.empty());
}

TEST_CASE("schedule show runs every kind, with times and virtual stages", "[cli][schedule]") {
  const auto one = run_clustersim({"schedule", "show", "1f1b", "--stages", "4", "--microbatches", "8"});
  REQUIRE(one.exit_code == 0);
  CHECK_THAT(one.out, Catch::Contains("rank 3 .  .  .  F0 B0--- F1 B1---"));
  CHECK_THAT(one.out, Catch::Contains("simulated largest 9 us (every rank); published (PP-1)(F+B) = 9 us"));
  const auto zb = run_clustersim({"schedule", "show", "zb1p", "--stages", "4", "--microbatches", "8", "--times", "2,4,3,6"});
  REQUIRE(zb.exit_code == 0);
  CHECK_THAT(zb.out, Catch::Contains("the formula holds when W <= F and W <= B-W: not so here"));
  const auto il = run_clustersim({"schedule", "show", "interleaved", "--stages", "2", "--microbatches", "4"});
  REQUIRE(il.exit_code == 0);
  CHECK_THAT(il.out, Catch::Contains("(2 virtual stages per rank)"));
  CHECK_THAT(il.out, Catch::Contains("rank 1 .   F0a F1a F0b B0b----"));
  const auto v = run_clustersim({"schedule", "show", "DualPipeV", "--stages", "8", "--microbatches", "10"});
  REQUIRE(v.exit_code == 0);
  CHECK_THAT(v.out, Catch::Contains("8 stages on 4 ranks"));
}

TEST_CASE("schedule show --trace writes a Perfetto trace with one slice per chunk", "[cli][schedule]") {
  TempDir dir;
  const std::string trace = dir.file("dualpipe.json");
  const auto r = run_clustersim({"schedule", "show", "dualpipe", "--stages", "4", "--microbatches", "8", "--trace", trace});
  REQUIRE(r.exit_code == 0);
  CHECK_THAT(r.err, Catch::Contains("wrote trace"));
  const auto j = nlohmann::json::parse(cs::test::read_file(trace));
  std::set<std::string> names;
  int slices = 0;
  for (const auto& e : j["traceEvents"])
    if (e["ph"] == "X") {
      ++slices;
      names.insert(e["name"].get<std::string>());
    }
  CHECK(names.count("F0") == 1);
  CHECK(names.count("F2'B0") == 1);
  CHECK(names.count("W3'") == 1);
  // 4 ranks; per direction 4 micro-batches: each rank's tasks, counted from the grid's rows.
  const auto grid = run_clustersim({"schedule", "show", "dualpipe", "--stages", "4", "--microbatches", "8"});
  int tokens = 0;
  std::istringstream in(grid.out);
  for (std::string line; std::getline(in, line);)
    if (line.rfind("rank ", 0) == 0 && line.find("stages held") == std::string::npos) {
      std::istringstream words(line.substr(7));
      for (std::string w; words >> w;)
        if (w != ".") ++tokens;
    }
  CHECK(slices == tokens);
}

TEST_CASE("schedule show refuses impossible sizes with exit 2 and writes nothing", "[cli][schedule]") {
  TempDir dir;
  const std::string trace = dir.file("t.json");
  const auto odd = run_clustersim({"schedule", "show", "dualpipe", "--stages", "7", "--microbatches", "20", "--trace", trace});
  CHECK(odd.exit_code == 2);
  CHECK(odd.out.empty());
  CHECK_THAT(odd.err, Catch::Contains("clustersim schedule show: DualPipe needs an even number of stages, not 7"));
  CHECK(dir.entries().empty());
  const auto few = run_clustersim({"schedule", "show", "dualpipe", "--stages", "8", "--microbatches", "10"});
  CHECK(few.exit_code == 2);
  CHECK_THAT(few.err, Catch::Contains("at least twice as many micro-batches as stages"));
  const auto il = run_clustersim({"schedule", "show", "interleaved", "--stages", "4", "--microbatches", "6"});
  CHECK(il.exit_code == 2);
  CHECK_THAT(il.err, Catch::Contains("multiple of the stages"));
  const auto virt = run_clustersim({"schedule", "show", "1f1b", "--virtual", "2"});
  CHECK(virt.exit_code == 2);
  CHECK_THAT(virt.err, Catch::Contains("interleaved schedule only"));
  const auto kind = run_clustersim({"schedule", "show", "gpipe"});
  CHECK(kind.exit_code == 2);
  CHECK_THAT(kind.err, Catch::Contains("unknown schedule 'gpipe'; the kinds are 1f1b, interleaved, zb1p, dualpipe, dualpipev"));
  const auto times = run_clustersim({"schedule", "show", "zb1p", "--times", "1,2,2,3"});
  CHECK(times.exit_code == 2);
  CHECK_THAT(times.err, Catch::Contains("1 <= W < B"));
  const auto unwritable = run_clustersim({"schedule", "show", "1f1b", "--trace", dir.file("no/such/dir/t.json")});
  CHECK(unwritable.exit_code == 2);
  CHECK(unwritable.out.empty());
  CHECK(dir.entries().empty());
}

}  // namespace CS_TEST_FILE
