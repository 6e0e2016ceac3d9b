#include <filesystem>
#include <iostream>
#include <memory>
#include <optional>

#include "cli/commands.h"
#include "clustersim/version.h"
#include "hw/user_error.h"
#include "models/op_workload.h"
#include "models/scenario_loader.h"
#include "models/scenario_runner.h"
#include "models/training_run.h"
#include "reports/atomic_file.h"
#include "reports/run_report.h"

namespace cs::cli {

const char* version() { return CLUSTERSIM_VERSION_STRING; }

// Standard output that cannot take the result (a full disk, a closed pipe) must not exit 0.
void check_stdout() {
  std::cout.flush();
  if (!std::cout) throw hw::UserError("<stdout>", 0, 0, "cannot write the result (disk full or closed pipe?)");
}

namespace {

// Whether two output paths name one file (through `..`, `.` or symbolic links): each output would
// replace the other.
bool same_file(const std::string& a, const std::string& b) {
  namespace fs = std::filesystem;
  std::error_code ec_a, ec_b;
  const fs::path ca = fs::weakly_canonical(a, ec_a), cb = fs::weakly_canonical(b, ec_b);
  if (!ec_a && !ec_b) return ca == cb;
  return fs::absolute(a, ec_a).lexically_normal() == fs::absolute(b, ec_b).lexically_normal();
}

}  // namespace

int cmd_run(const RunArgs& args) {
  if (!args.out.empty() && !args.trace.empty() && same_file(args.out, args.trace))
    throw hw::UserError(args.out, 0, 0, "--out and --trace name the same file");
  const models::Scenario sc = models::load_scenario_file(args.file);
  const models::OpWorkload work = models::build_op_workload(sc);
  // Open the outputs before the run so that an unwritable path fails at once, and write them by
  // rename only after everything succeeded.
  std::optional<reports::AtomicFile> out, trace;
  if (!args.out.empty()) out.emplace(args.out);
  if (!args.trace.empty()) trace.emplace(args.trace);

  std::cerr << "clustersim: running '" << sc.name << "' (" << sc.cluster.gpus << " x " << sc.cluster.gpu.name
            << ", " << work.stream_names.size() << " streams, " << work.graph.ops().size() << " ops)\n";
  models::RunOptions options;
  if (trace) options.trace = &trace->stream();
  models::RunResult r = models::run_scenario(sc, work, options);
  if (sc.training) {
    std::cerr << "clustersim: simulating the other representative steps of the training run\n";
    r.training = models::predict_training(sc, r);
  }
  if (!r.calibrated)
    std::cerr << "clustersim: warning: costs are uncalibrated (" << r.cost_model << ")\n";
  for (const std::string& w : r.cost_warnings) std::cerr << "clustersim: warning: " << w << "\n";

  const std::string text = args.format == "json" ? reports::result_json(r, version()).dump(2) + "\n"
                                                 : reports::result_console(r);
  if (out) out->stream() << text;
  // Every output is fully written before any is renamed into place.
  if (out) out->finish_writing();
  if (trace) trace->finish_writing();
  if (!out) {
    std::cout << text;
    check_stdout();
  }
  if (out) out->commit();
  if (trace) trace->commit();
  if (out) std::cerr << "clustersim: wrote " << args.out << "\n";
  if (trace) std::cerr << "clustersim: wrote trace " << args.trace << " (open it in ui.perfetto.dev)\n";
  return 0;
}

}  // namespace cs::cli
