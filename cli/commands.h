// The subcommands. Each returns the process exit code: 0 success, 2 user error, 1 internal error.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "calibrate/profile_build.h"
#include "calibrate/validate.h"
#include "models/scenario.h"

namespace cs::cli {

struct RunArgs {
  std::string file;
  std::string format = "console";
  std::string out;    // empty: stdout
  std::string trace;  // empty: no trace
  std::string report;  // empty: no HTML report
  std::vector<std::string> argv;  // the command line, echoed in the report
  int64_t graph_limit = 0;        // ops (and transfers) the scenario may expand to; 0: the loader's default
};

int cmd_run(const RunArgs& args);

struct SweepArgs {
  std::string file;
  std::string comm_sms;           // FROM:TO:STEP or a list; empty: none (a file without a sweep: 0:48:4)
  std::string comm_partition;     // empty: the sweep's, else the workload's, else "comm"
  std::string compute_partition;  // empty: the sweep's, else the workload's, else "compute"
  std::string format;             // console | csv | json; empty: console, or the -o file's extension
  std::string out;                // the results file (CSV or JSON), written as points finish
  std::string objective;          // empty: the sweep's, else gpu_hours with a training run, else step_time
  std::string shard;              // "I/N": only every N-th point from the I-th
  std::vector<std::string> merge;  // results files of the same sweep (shards) taken as done
  bool list = false;              // print the points and why any are skipped; run nothing
  int jobs = 0;                   // 0: one per hardware thread
  bool no_training = false;
  std::string report;             // empty: no HTML report
  std::vector<std::string> argv;  // the command line, echoed in the report
  int64_t graph_limit = 0;        // as RunArgs'
};

int cmd_sweep(const SweepArgs& args);
// Renders a saved result (clustersim run --format json) as the HTML report.
int cmd_report(const std::string& result_file, const std::string& out);
// `graph_limit`: as RunArgs'.
int cmd_check(const std::vector<std::string>& files, int64_t graph_limit = 0);

// The loader's limits for a `--graph-limit` value (0: the defaults).
models::GraphLimits graph_limits(int64_t graph_limit);

struct ModelShowArgs {
  std::string name;  // zoo name or model file
  int64_t seq_len = 4096;
  int64_t micro_batch = 1;
  int tp = 1;
  int ep = 1;
  bool bf16 = false;
  std::string format = "console";
};

struct ScheduleShowArgs {
  std::string kind;  // 1f1b | interleaved | zb1p | dualpipe | dualpipev
  int stages = 4;
  int micro_batches = 8;
  int virtual_stages = 0;  // 0: the kind's default (interleaved 2, else 1)
  std::vector<int64_t> times = {1, 2, 1, 2};  // F, B (full), W, F&B in microseconds
  std::string trace;  // empty: no trace
  std::string json;   // empty: no JSON (reports/schedule_json.h)
};

struct CalibrateArgs {
  std::vector<std::string> data;  // kernel JSON files
  std::string profile;            // validate, carry: a bundled name or a file
  std::string out;                // fit, carry: the profile written
  std::string gpu;                // fit: catalog GPU (default: the measurements'); carry: the target
  int holdout_every = calibrate::kBundledHoldoutEvery;  // every N-th shape or grid cell is held out of the fit
  calibrate::ClockLogs clocks;    // fit: clock logs for the profile's clocks section
};

int cmd_calibrate_fit(const CalibrateArgs& args);
int cmd_calibrate_validate(const CalibrateArgs& args);
int cmd_calibrate_carry(const CalibrateArgs& args);
int cmd_calibrate_published(const CalibrateArgs& args);
int cmd_calibrate_deepgemm(const CalibrateArgs& args);
int cmd_calibrate_deepep(const CalibrateArgs& args);
struct CompareArgs {
  std::string scenario;
  std::string measured;  // a Kineto trace or cs_overlap JSON
  std::string format = "console";
};
int cmd_compare(const CompareArgs& args);
int cmd_hw_list();
int cmd_hw_show(const std::string& name);
int cmd_model_list();
int cmd_model_show(const ModelShowArgs& args);
int cmd_schedule_show(const ScheduleShowArgs& args);
const char* version();
// Whether two paths name one file (through `..`, `.` or symbolic links): writing one would replace
// the other.
bool same_file(const std::string& a, const std::string& b);
// Throws hw::UserError when standard output could not take what was written.
void check_stdout();

}  // namespace cs::cli
