// The clock-sampled H100 measurements under calibrate/data/h100/ (cs_fp8_gemm and cs_overlap with
// --sample-clocks: NVML's SM clock every ms over each case's timed runs or each window). What they
// show about the power cap is checked here, so that a re-measurement that changes it is noticed.
#include <catch2/catch.hpp>

#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>

#include "test_support.h"

namespace CS_TEST_FILE {  // unique per file: the tests build in unity batches

using nlohmann::json;

namespace {

json data(const std::string& file) {
  return json::parse(cs::test::read_file(cs::test::source_dir() + "/calibrate/data/h100/" + file));
}

// Per (shape, k > 0): the GEMM-alone and the together windows' median clocks, and the GEMM and
// copy streams' spans in the together window.
struct OverlapClocks {
  double gemm_alone_MHz = 0, together_MHz = 0, gemm_span_ms = 0, copy_span_ms = 0;
};
std::map<std::pair<std::string, int>, OverlapClocks> overlap_clocks(const json& d) {
  std::map<std::pair<std::string, int>, OverlapClocks> out;
  for (const json& c : d.at("cases")) {
    if (c.at("k").get<int>() == 0) continue;
    OverlapClocks o;
    o.gemm_alone_MHz = c.at("clocks").at("gemm_alone").at("sm_mhz_median").get<double>();
    o.together_MHz = c.at("clocks").at("together").at("sm_mhz_median").get<double>();
    o.gemm_span_ms = c.at("per_gpu").at(0).at("gemm_span_us").get<double>() / 1e3;
    o.copy_span_ms = c.at("per_gpu").at(0).at("a2a_span_us").get<double>() / 1e3;
    out[{c.at("shape").get<std::string>(), c.at("k").get<int>()}] = o;
  }
  return out;
}

constexpr const char* kShapes[] = {"grouped.4x8192x4096x7168", "dense.8192x4096x7168"};

}  // namespace

TEST_CASE("every clock-sampled H100 file says where it came from and sampled every case", "[data]") {
  for (const char* f : {"fp8_gemm_clocks_falling.json", "fp8_gemm_clocks_rising.json", "overlap_clocks_30ms.json",
                        "overlap_clocks_100ms.json"}) {
    const json d = data(f);
    CAPTURE(f);
    CHECK(d.at("provenance").at("gpus").at(0).at("name").get<std::string>().find("H100") != std::string::npos);
    CHECK(d.at("provenance").at("gpus").at(0).at("power_limit_w").get<double>() == 700);
    const bool gemm_sweep = std::string(f).find("gemm") != std::string::npos;
    for (const json& c : d.at("cases")) {
      const json& clocks = c.at("clocks");
      for (const char* window : {"", "gemm_alone", "a2a_alone", "together"}) {
        if (*window == 0 ? !gemm_sweep : gemm_sweep || !clocks.contains(window)) continue;
        const json& s = *window == 0 ? clocks : clocks.at(window);
        CAPTURE(window);
        CHECK(s.at("samples").get<int>() > 0);
        CHECK(s.at("sm_mhz_min").get<double>() <= s.at("sm_mhz_median").get<double>());
        CHECK(s.at("sm_mhz_median").get<double>() <= s.at("sm_mhz_max").get<double>());
        CHECK(s.at("sm_mhz_max").get<double>() <= 1980);  // the H100's maximum SM clock
      }
    }
  }
}

TEST_CASE("under the power cap the clock beside the copy rises as the copy takes SMs from the GEMMs", "[data]") {
  // cs_overlap, 30 ms windows in rotating order: the GEMMs on 124 SMs beside a 4-SM copy hold
  // about 1760-1780 MHz, on 84 SMs beside a 48-SM copy 1950-1965: fewer tensor-core SMs draw less
  // power. The profile's one sustained clock (1769 MHz) is the low end of this range.
  const auto clocks = overlap_clocks(data("overlap_clocks_30ms.json"));
  for (const char* shape : kShapes) {
    CAPTURE(shape);
    CHECK(clocks.at({shape, 4}).together_MHz < 1800);
    CHECK(clocks.at({shape, 48}).together_MHz > 1900);
    CHECK(clocks.at({shape, 48}).together_MHz - clocks.at({shape, 4}).together_MHz > 150);
  }
}

TEST_CASE("a window's clock follows the load inside it: a copy outlasting the GEMMs lifts it", "[data]") {
  // cs_overlap, 100 ms windows: at k = 4 and 8 the copy stream outlasts the GEMMs (the GEMMs are
  // at most 150 operations), so the together window ends on the copy alone, a light load, and its
  // median clock sits 100-230 MHz above the GEMM-alone windows'. One clock per window therefore
  // does not describe the kernels in it; `calibrate validate` keeps overlap cases at the sustained
  // clock.
  const auto clocks = overlap_clocks(data("overlap_clocks_100ms.json"));
  for (const char* shape : kShapes) {
    for (int k : {4, 8}) {
      CAPTURE(shape, k);
      const OverlapClocks& o = clocks.at({shape, k});
      CHECK(o.copy_span_ms > o.gemm_span_ms);
      CHECK(o.together_MHz - o.gemm_alone_MHz > 80);
    }
  }
}

}  // namespace CS_TEST_FILE
