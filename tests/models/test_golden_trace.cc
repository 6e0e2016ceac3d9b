// The bundled overlap scenario's trace, committed under tests/golden/, must come out byte for byte:
// any change in event order, timing or trace layout shows here. After an intended change of the
// model, run scripts/update-golden and review the diff.
#include <catch2/catch.hpp>

#include <sstream>

#include "models/scenario_loader.h"
#include "models/scenario_runner.h"
#include "test_support.h"

namespace CS_TEST_FILE {  // unique per file: the tests build in unity batches

TEST_CASE("the overlap scenario reproduces its golden trace byte for byte", "[golden]") {
  const std::string name = "gemm-a2a-overlap-h800";
  const auto sc = cs::models::load_scenario_file(cs::test::source_dir() + "/scenarios/" + name + ".yaml");
  std::ostringstream trace;
  cs::models::RunOptions options;
  options.trace = &trace;
  const auto r = cs::models::run_scenario(sc, options);
  const std::string golden = cs::test::read_file(cs::test::source_dir() + "/tests/golden/" + name + ".trace.json");
  REQUIRE(!golden.empty());
  CHECK(trace.str().size() == golden.size());
  CHECK((trace.str() == golden));  // not expanded: the files are large
  CHECK(r.makespan == cs::sim::Time::ps(11906652040));
}

}  // namespace CS_TEST_FILE
