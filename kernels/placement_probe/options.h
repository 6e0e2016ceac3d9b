// cs_placement_probe's command line and its data sets. Included by placement_probe.cu alone.
#pragma once

#include <algorithm>
#include <cstdio>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "common/args.h"
#include "placement_probe/device.cuh"

namespace cs::kernels::placement_probe {

inline constexpr const char* kProgram = "cs_placement_probe";

struct Options {
  std::vector<int> sms = {16, 32, 48, 64, 80, 96, 112, 128};
  std::vector<int> grids = {16, 32, 64};
  std::vector<int> clusters = {4, 1};
  std::vector<std::string> kernels = {"ld", "bulk", "fma"};
  std::vector<std::string> data = {"l2", "hbm", "hbm_cold"};
  int runs = 25;
  int warmup = 3;
  int sweeps = 2;
  int fma_iters = 4096;
  bool smsets = true;
  std::vector<std::pair<std::string, std::vector<int>>> custom_sets;  // --smset NAME=SM,SM,...
  bool compact = false;
  std::string json_path;
};

struct DataSet {
  std::string name;
  std::size_t offset = 0;  // bytes into the buffer
  std::size_t bytes = 0;   // read per pass, all CTAs together
  int passes = 1;
  bool flush = false;      // write the flush buffer before each run
};

inline const std::vector<DataSet>& data_sets() {
  static const std::vector<DataSet> d = {
      {"l2", 0, 24 * kMiB, 16, false},
      {"hbm", 0, 1024 * kMiB, 1, false},
      {"hbm_cold", 512 * kMiB, 32 * kMiB, 1, true},
  };
  return d;
}

constexpr std::size_t kBufBytes = 1024 * kMiB;
constexpr std::size_t kFlushBytes = 256 * kMiB;


int parse_args(int argc, char** argv, Options& opt) {
  auto int_list = [](const std::string& s, long lo, long hi, const char* what) {
    std::vector<int> v;
    for (const auto& x : cs::kernels::split_commas(s)) {
      int i = 0;
      if (!cs::kernels::parse_int(x, lo, hi, i)) throw std::runtime_error(std::string("bad ") + what + " '" + x + "'");
      v.push_back(i);
    }
    return v;
  };
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto next = [&]() -> std::string {
      if (i + 1 >= argc) throw std::runtime_error(a + " needs a value");
      return argv[++i];
    };
    if (a == "--json") {
      opt.json_path = next();
    } else if (a == "--sms") {
      opt.sms = int_list(next(), 8, 1023, "--sms");
    } else if (a == "--grids") {
      opt.grids = int_list(next(), 1, 1024, "--grids");
      // Every data set (24 MiB, 1 GiB, 32 MiB) split into whole 64 KiB slices (kThreads x kUnroll
      // 16-byte loads) over the grid, which also fills whole 4x1 clusters: 4, 8, 16, 32, 64 or 128.
      for (int g : opt.grids)
        for (std::size_t bytes : {24 * kMiB, 1024 * kMiB, 32 * kMiB})
          if (g % 4 != 0 || bytes % g != 0 || (bytes / g) % (kThreads * kUnroll * 16) != 0)
            throw std::runtime_error("--grids: each grid must split every data set into whole 64 KiB slices (4, 8, 16, 32, 64 or 128)");
    } else if (a == "--clusters") {
      opt.clusters = int_list(next(), 1, 8, "--clusters");
    } else if (a == "--kernels") {
      opt.kernels = cs::kernels::split_commas(next());
    } else if (a == "--data") {
      opt.data = cs::kernels::split_commas(next());
    } else if (a == "--runs") {
      if (!cs::kernels::parse_int(next(), 20, 1000, opt.runs)) throw std::runtime_error("bad --runs (>= 20)");
    } else if (a == "--warmup") {
      if (!cs::kernels::parse_int(next(), 1, 100, opt.warmup)) throw std::runtime_error("bad --warmup");
    } else if (a == "--sweeps") {
      if (!cs::kernels::parse_int(next(), 1, 10, opt.sweeps)) throw std::runtime_error("bad --sweeps");
    } else if (a == "--fma-iters") {
      if (!cs::kernels::parse_int(next(), 1, 1 << 20, opt.fma_iters)) throw std::runtime_error("bad --fma-iters");
    } else if (a == "--smset") {
      const std::string v = next();
      const std::size_t eq = v.find('=');
      if (eq == std::string::npos || eq == 0) throw std::runtime_error("--smset wants NAME=SM,SM,...");
      std::vector<int> sms = int_list(v.substr(eq + 1), 0, kMaxSm - 1, "--smset SM");
      std::sort(sms.begin(), sms.end());
      if (std::adjacent_find(sms.begin(), sms.end()) != sms.end()) throw std::runtime_error("--smset: an SM twice");
      opt.custom_sets.push_back({v.substr(0, eq), sms});
    } else if (a == "--no-smsets") {
      opt.smsets = false;
    } else if (a == "--compact") {
      opt.compact = true;
    } else if (a == "--help" || a == "-h") {
      std::printf(
          "usage: %s [--json PATH] [--sms 16,32,...,128] [--grids 16,32,64] [--clusters 4,1] [--kernels ld,bulk,fma]\n"
          "       [--data l2,hbm,hbm_cold] [--runs 25] [--warmup 3] [--sweeps 2] [--fma-iters 4096] [--no-smsets]\n"
          "       [--smset NAME=SM,SM,...]... [--compact]\n"
          "Fixed-grid streaming and FMA kernels on green contexts of k SMs and on chosen SM sets, with the GPCs\n"
          "and TPCs their CTAs used.\n",
          kProgram);
      return 0;
    } else {
      throw std::runtime_error("unknown argument '" + a + "' (try --help)");
    }
  }
  return -1;
}

}  // namespace cs::kernels::placement_probe
