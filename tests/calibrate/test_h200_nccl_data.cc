// NCCL's ring collectives on two H200s of one host (calibrate/data/h200/nccl_collectives.json,
// kernels/torch/measure_nccl.sh; over four of another host, nccl_collectives_4gpu.json):
// reduce-scatter and all-reduce of FP32, all-gather and all-reduce of BF16, 1 MiB to 4 GiB, with
// NCCL's own channel count and with it pinned (2 to 32 on two GPUs, 20 on four). CI checks
// the data and what the README draws from it: a ring channel moves 13-21 GB/s, so where channels
// bind NCCL runs well below our copy kernel's rate per SM, and with enough of them it reaches the
// NVLink rate the profile fitted; at the H800's NVLink rate the optimizer's rings are NVLink-bound.
#include <map>
#include <string>
#include <utility>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "hw/gpu_profile.h"
#include "test_support.h"

namespace CS_TEST_FILE {  // unique per file: the tests build in unity batches

using nlohmann::json;

namespace {

json data() {
  return json::parse(cs::test::read_file(cs::test::source_dir() + "/calibrate/data/h200/nccl_collectives.json"));
}

// busbw (GB/s) of a run's case: kind, dtype, size in MiB.
double busbw(const json& run, const std::string& kind, const std::string& dtype, int64_t mib) {
  for (const json& c : run["cases"])
    if (c["kind"] == kind && c["dtype"] == dtype && c["size_bytes"].get<int64_t>() == (mib << 20))
      return c["busbw_GBps"].get<double>();
  FAIL("no case " << kind << " " << dtype << " " << mib << " MiB in " << run["run"]);
  return 0;
}

// The run with the channel count pinned to `channels` (0: NCCL's own).
const json& run_with(const json& d, int channels) {
  const std::string name = channels == 0 ? "nccl_2gpu_default" : "nccl_2gpu_ch" + std::to_string(channels);
  for (const json& r : d["runs"])
    if (r["run"] == name) return r;
  FAIL("no run " << name);
  return d;
}

}  // namespace

TEST_CASE("the H200 NCCL data says where it came from and holds every case", "[data]") {
  const json d = data();
  REQUIRE(d["runs"].size() == 7u);
  for (const json& r : d["runs"]) {
    INFO(r["run"]);
    CHECK(r["gpus"] == 2);
    CHECK(r["provenance"]["gpu"]["name"] == "NVIDIA H200");
    CHECK(!r["provenance"]["git_commit"].get<std::string>().empty());
    CHECK(!r["nccl_version"].get<std::string>().empty());
    CHECK(r["nccl_env"]["NCCL_NVLS_ENABLE"] == "0");
    CHECK(r["cases"].size() == 4u * 7);  // 4 collectives x 1 MiB to 4 GiB
    for (const json& c : r["cases"]) {
      // Each GPU sends over one NVLink port of 450 GB/s a direction (the H200 datasheet).
      CHECK(c["busbw_GBps"].get<double>() > 0);
      CHECK(c["busbw_GBps"].get<double>() < 450);
      CHECK(c["min_ms"].get<double>() <= c["median_ms"].get<double>());
    }
  }
  // NCCL's own choice on this host: 24 channels (its init line, kept beside the data).
  const std::string channels = cs::test::read_file(cs::test::source_dir() + "/calibrate/data/h200/nccl_channels.txt");
  const size_t at = channels.find("== nccl_2gpu_default");
  REQUIRE(at != std::string::npos);
  CHECK(channels.find("24 coll channels", at) < channels.find("== nccl_2gpu_ch2", at));
}

TEST_CASE("a ring channel of NCCL moves 13-21 GB/s, a fraction of our copy kernel's SM", "[data]") {
  const json d = data();
  const double sm_copy = cs::hw::find_profile("h200")->comm.sm_copy_GBps;  // our kernel, per SM
  // Where channels bind (2, 4 and 8 of them, 4 GiB), busbw grows with them, per channel about
  // 17-18 GB/s reducing FP32, 14-15 gathering BF16 and 20-21 all-reducing.
  const std::pair<std::string, std::string> kinds[] = {
      {"reduce_scatter", "float32"}, {"all_gather", "bfloat16"}, {"all_reduce", "float32"}};
  const std::map<std::string, std::pair<double, double>> per_channel = {
      {"reduce_scatter", {16, 19}}, {"all_gather", {14, 16}}, {"all_reduce", {19.5, 21.5}}};
  for (const auto& [kind, dtype] : kinds)
    for (const int ch : {2, 4, 8}) {
      INFO(kind << " on " << ch << " channels");
      const double rate = busbw(run_with(d, ch), kind, dtype, 4096) / ch;
      CHECK(rate >= per_channel.at(kind).first);
      CHECK(rate <= per_channel.at(kind).second);
      CHECK(rate < 0.5 * sm_copy);
    }
}

TEST_CASE("with enough channels NCCL reaches the NVLink rate of the profile, not with its own 24", "[data]") {
  const json d = data();
  const double nvlink = cs::hw::find_profile("h200")->comm.nvlink_GBps;  // fitted to our kernel
  // 32 channels all-reducing 4 GiB: within 5% of it.
  CHECK(busbw(run_with(d, 32), "all_reduce", "float32", 4096) >= 0.95 * nvlink);
  CHECK(busbw(run_with(d, 32), "all_reduce", "bfloat16", 4096) >= 0.94 * nvlink);
  // NCCL's 24 reduce-scatter and all-gather at 76-80% of it: those channels still bind.
  for (const auto& [kind, dtype] : {std::pair{"reduce_scatter", "float32"}, std::pair{"all_gather", "bfloat16"}}) {
    const double b = busbw(run_with(d, 0), kind, dtype, 4096);
    CHECK(b > 0.75 * nvlink);
    CHECK(b < 0.82 * nvlink);
  }
}

TEST_CASE("at the H800's NVLink rate the optimizer's rings are NVLink-bound on 20 channels", "[data]") {
  // DeepSeek-V3's ZeRO-1 reduce-scatter (FP32) and all-gather (BF16) move gigabytes per GPU; 20
  // NCCL channels (the communication SMs) carry more than the H800's NVLink, so the profile's
  // carried nvlink_GBps, not NCCL's kernels, times them (README.md, under the step's breakdown).
  const json d = data();
  const double h800_nvlink = cs::hw::find_profile("h800")->comm.nvlink_GBps;
  for (const auto& [kind, dtype] : {std::pair{"reduce_scatter", "float32"}, std::pair{"all_gather", "bfloat16"}})
    for (const int64_t mib : {1024, 4096}) CHECK(busbw(run_with(d, 20), kind, dtype, mib) > 1.4 * h800_nvlink);
}

TEST_CASE("over four H200s NCCL's rings run closer to the NVLink fit, and 20 channels still outrun the H800's NVLink",
          "[data]") {
  const json d =
      json::parse(cs::test::read_file(cs::test::source_dir() + "/calibrate/data/h200/nccl_collectives_4gpu.json"));
  REQUIRE(d["runs"].size() == 3u);
  std::map<std::string, const json*> runs;
  for (const json& r : d["runs"]) {
    INFO(r["run"]);
    CHECK(r["nccl_env"]["NCCL_NVLS_ENABLE"] == "0");
    CHECK(r["cases"].size() == 4u * 7);
    runs[r["run"].get<std::string>()] = &r;
  }
  REQUIRE(runs.count("nccl_4gpu_default") + runs.count("nccl_4gpu_ch20") + runs.count("nccl_2gpu_default") == 3);
  CHECK((*runs["nccl_4gpu_default"])["gpus"] == 4);
  CHECK((*runs["nccl_2gpu_default"])["gpus"] == 2);
  const double nvlink = cs::hw::find_profile("h200")->comm.nvlink_GBps;
  const double h800_nvlink = cs::hw::find_profile("h800")->comm.nvlink_GBps;
  for (const auto& [kind, dtype] : {std::pair{"reduce_scatter", "float32"}, std::pair{"all_gather", "bfloat16"}}) {
    INFO(kind);
    // NCCL's own 24 channels at 91-92% of the fit over four GPUs, 77% over two of them.
    CHECK(busbw(*runs["nccl_4gpu_default"], kind, dtype, 4096) > 0.88 * nvlink);
    CHECK(busbw(*runs["nccl_2gpu_default"], kind, dtype, 4096) < 0.82 * nvlink);
    // 20 channels: 319-330 GB/s, twice the H800's NVLink rate the optimizer's rings move at.
    for (const int64_t mib : {1024, 4096}) CHECK(busbw(*runs["nccl_4gpu_ch20"], kind, dtype, mib) > 1.7 * h800_nvlink);
  }
  // The two-GPU run repeats the other host's within 3.3% from 1 GiB up.
  const json two = data();
  for (const auto& [kind, dtype] : {std::pair{"reduce_scatter", "float32"}, std::pair{"all_gather", "bfloat16"},
                                    std::pair{"all_reduce", "float32"}, std::pair{"all_reduce", "bfloat16"}})
    for (const int64_t mib : {1024, 4096}) {
      INFO(kind << " " << dtype << " " << mib << " MiB");
      CHECK(busbw(*runs["nccl_2gpu_default"], kind, dtype, mib) ==
            Approx(busbw(run_with(two, 0), kind, dtype, mib)).epsilon(0.04));
    }
  // NCCL chose 24 channels on this host too.
  const std::string channels =
      cs::test::read_file(cs::test::source_dir() + "/calibrate/data/h200/nccl_channels_4gpu.txt");
  const size_t at = channels.find("== nccl_4gpu_default");
  REQUIRE(at != std::string::npos);
  CHECK(channels.find("24 coll channels", at) < channels.find("== nccl_4gpu_ch20", at));
}

}  // namespace CS_TEST_FILE
