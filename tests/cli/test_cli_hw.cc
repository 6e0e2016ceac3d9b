#include <catch2/catch.hpp>

#include "test_support.h"

namespace CS_TEST_FILE {  // unique per file: the tests build in unity batches

using cs::test::run_clustersim;

TEST_CASE("hw list prints every catalog table and exits 0", "[cli][hw]") {
  const auto r = run_clustersim({"hw", "list"});
  CHECK(r.exit_code == 0);
  for (const char* name : {"h800", "h100", "h200", "cx7-400g", "ib-64x400g", "hgx-8gpu", "h800-2048", "h100-dgx-superpod", "h200x8"})
    CHECK_THAT(r.out, Catch::Contains(name));
}

TEST_CASE("hw show of DeepSeek's preset gives its switches and bisection", "[cli][hw]") {
  const auto r = run_clustersim({"hw", "show", "h800-2048"});
  CHECK(r.exit_code == 0);
  CHECK_THAT(r.out, Catch::Contains("96 x 64-port"));
  CHECK_THAT(r.out, Catch::Contains("8 tree(s) of 8 leaves + 4 spines"));
  CHECK_THAT(r.out, Catch::Contains("51.2 TB/s"));
}

TEST_CASE("hw show of a GPU lists every figure's source", "[cli][hw]") {
  const auto r = run_clustersim({"hw", "show", "h800"});
  CHECK(r.exit_code == 0);
  CHECK_THAT(r.out, Catch::Contains("sources"));
  CHECK_THAT(r.out, Catch::Contains("REFERENCE.md"));
}

TEST_CASE("hw show of an unknown name exits 2 with a suggestion", "[cli][hw]") {
  const auto r = run_clustersim({"hw", "show", "h80"});
  CHECK(r.exit_code == 2);
  CHECK(r.out.empty());
  CHECK_THAT(r.err, Catch::Contains("did you mean 'h800'?"));
}

TEST_CASE("hw without a subcommand exits 2, hw --help exits 0 with an example", "[cli][hw]") {
  CHECK(run_clustersim({"hw"}).exit_code == 2);
  const auto h = run_clustersim({"hw", "--help"});
  CHECK(h.exit_code == 0);
  CHECK_THAT(h.out, Catch::Contains("Example"));
}

}  // namespace CS_TEST_FILE
